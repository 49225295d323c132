//! The `memtx` binary as a user meets it: exit codes, one-line errors for bad input (exit 2, no
//! panic, nothing half-written), `--json` output, and the replay command a violation prints.

mod binary_support;
use binary_support::*;

use std::path::{Path, PathBuf};
use std::process::Output;

/// Exit code 2, exactly one line on stderr starting with `memtx:`, no panic, nothing on stdout.
fn assert_user_error(out: &Output, mentions: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit code for bad input; stderr: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "one line on stderr, got: {stderr}"
    );
    assert!(stderr.starts_with("memtx:"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.to_lowercase().contains(&mentions.to_lowercase()),
        "'{mentions}' not in: {stderr}"
    );
}

fn sample_trace(dir: &Path) -> PathBuf {
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--variant",
            "no-cascade",
            "--property",
            "I2",
        ],
        dir,
    );
    assert_eq!(out.status.code(), Some(1));
    dir.join("traces/quick/no-cascade-I2.trace.json")
}

#[test]
fn quick_check_json_parses_with_a_verdict_per_property() {
    let dir = scratch("json");
    let out = memtx(&["check", "--preset", "quick", "--json"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    let props = v["properties"].as_array().unwrap();
    assert_eq!(props.len(), memtx_model::properties::PROPERTIES.len());
    assert!(props.iter().all(|p| p["verdict"].is_string()));
    assert_eq!(v["coverage"]["status"], "exhaustive");
    assert!(v["unique_states"].as_u64().unwrap() > 100_000);
    assert_eq!(v["config"]["variant"], "memtx");
}

#[test]
fn large_reduces_by_symmetry_unless_told_not_to() {
    let dir = scratch("symmetry");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--preset",
            "large",
            "--max-states",
            "2000",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = memtx(&args, &dir);
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
        (
            v["symmetry"].as_bool().unwrap(),
            v["states_per_depth"].clone(),
        )
    };
    let (default, reduced) = run(&[]);
    let (off, unreduced) = run(&["--no-symmetry"]);
    let (on, _) = run(&["--no-symmetry", "--symmetry"]);
    assert!(default && on && !off);
    // Same depths, fewer states per depth once two agents can be swapped.
    assert_ne!(reduced, unreduced);
    // The default preset (paper) stays unreduced unless asked.
    let out = memtx(&["check", "--max-states", "1000", "--json"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["config"]["preset"], "paper");
    assert_eq!(v["symmetry"], false);
}

#[test]
fn a_violation_prints_a_replay_command_that_reproduces_it() {
    let dir = scratch("replay");
    let out = memtx(
        &["check", "--preset", "quick", "--variant", "no-cascade"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("replay: memtx replay"))
        .expect("a replay command");
    let args: Vec<&str> = line
        .trim_start()
        .trim_start_matches("replay: memtx ")
        .split_whitespace()
        .collect();
    let replayed = memtx(&args, &dir);
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replayed.stdout)
    );
    assert!(String::from_utf8_lossy(&replayed.stdout).contains("FAILS: I2"));
    // The same steps under the fixed protocol hold every invariant: exit 0, and says so.
    let mut fixed = args.clone();
    fixed.extend(["--variant", "memtx"]);
    let out = memtx(&fixed, &dir);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("every invariant holds at every step"));
}

#[test]
fn unknown_variant_property_preset_and_bad_bounds_are_one_line_errors() {
    let dir = scratch("flags");
    assert_user_error(
        &memtx(&["check", "--variant", "no-such"], &dir),
        "unknown variant",
    );
    assert_user_error(
        &memtx(&["check", "--property", "I99"], &dir),
        "unknown property",
    );
    assert_user_error(
        &memtx(&["check", "--preset", "huge"], &dir),
        "unknown preset",
    );
    assert_user_error(&memtx(&["check", "--records", "99"], &dir), "--records");
    assert_user_error(&memtx(&["check", "--agents", "300"], &dir), "--agents");
    assert_user_error(&memtx(&["check", "--no-such-flag"], &dir), "--no-such-flag");
    assert_user_error(&memtx(&["frobnicate"], &dir), "frobnicate");
    assert_user_error(&memtx(&["check", "--agents", "0"], &dir), "--agents");
    assert_user_error(
        &memtx(&["check", "--max-memory", "100000G"], &dir),
        "more than this machine",
    );
    assert_user_error(
        &memtx(&["check", "--max-memory", "lots"], &dir),
        "not a size",
    );
    assert_user_error(
        &memtx(&["check", "--engine", "stateright", "--symmetry"], &dir),
        "fast engine",
    );
    assert_user_error(
        &memtx(&["replay", "x.json", "--variant", "nope"], &dir),
        "no such file",
    );
}

#[test]
fn an_unwritable_report_directory_is_refused_before_the_check_runs() {
    let dir = scratch("report");
    std::fs::write(dir.join("blocker"), "a file, not a directory").unwrap();
    let out = memtx(&["check", "--report", "blocker/sub"], &dir);
    assert_user_error(&out, "blocker");
    assert!(out.stdout.is_empty(), "the check must not run");
}

#[test]
fn bad_trace_files_are_one_line_errors() {
    let dir = scratch("traces");
    let good = sample_trace(&dir);
    let text = std::fs::read_to_string(&good).unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    let cases: Vec<(PathBuf, &str)> = vec![
        (write("notjson.json", "{ this is not json"), "json"),
        (
            write(
                "version.json",
                &text.replacen("\"version\": 1", "\"version\": 99", 1),
            ),
            "version",
        ),
        (
            write(
                "format.json",
                &text.replacen("memtx-trace", "something-else", 1),
            ),
            "format",
        ),
        (
            write(
                "variant.json",
                &text.replacen("\"variant\": \"no-cascade\"", "\"variant\": \"made-up\"", 1),
            ),
            "variant",
        ),
        (
            write(
                "config.json",
                &text.replacen("\"records\": 3", "\"records\": 1", 1),
            ),
            "step",
        ),
        (dir.join("missing.trace.json"), "missing.trace.json"),
    ];
    for (path, mentions) in cases {
        let out = memtx(&["replay", path.to_str().unwrap()], &dir);
        assert_user_error(&out, mentions);
    }
    // A trace from another configuration than the one the user insists on.
    let out = memtx(
        &["replay", good.to_str().unwrap(), "--preset", "paper"],
        &dir,
    );
    assert_user_error(&out, "different configuration");
    let same = memtx(
        &["replay", good.to_str().unwrap(), "--preset", "quick"],
        &dir,
    );
    assert_eq!(same.status.code(), Some(0));
    // A step that is not enabled: drop the first step (the Begin), so the Stage has no transaction.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["steps"].as_array_mut().unwrap().remove(0);
    let n = v["steps"].as_array().unwrap().len();
    v["expectation"]["step"] = n.into();
    let p = write("notenabled.json", &v.to_string());
    assert_user_error(&memtx(&["replay", p.to_str().unwrap()], &dir), "step 1");
}

#[test]
fn list_names_every_property_variant_and_preset() {
    let dir = scratch("list");
    let out = memtx(&["list", "--json"], &dir);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let properties = v["properties"].as_array().unwrap();
    assert_eq!(properties.len(), memtx_model::properties::PROPERTIES.len());
    let variants = v["variants"].as_array().unwrap();
    assert_eq!(variants.len(), memtx_model::config::VARIANTS.len());
    // Revision 3 step 2's property and variant are listed (issue 32).
    assert!(properties.iter().any(|p| p.to_string().contains("I18")));
    assert!(variants.iter().any(|x| x["name"] == "rev2-lineage"));
    // Revision 3 step 4's properties and variants (issue 34).
    for key in ["I15", "I16"] {
        assert!(properties.iter().any(|p| p.to_string().contains(key)));
    }
    for name in ["paper-provenance", "txn-provenance"] {
        assert!(variants.iter().any(|x| x["name"] == name));
    }
    let presets: Vec<&str> = v["presets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        presets,
        [
            "quick",
            "paper",
            "large",
            "full",
            "expiry",
            "evidence",
            "lineage",
            "observations",
            "isolation",
            "scopes",
            "interference",
            "provenance",
            "content"
        ]
    );
    // Every preset of the suite can be named.
    for entry in memtx_model::presets::SUITE {
        assert!(
            presets.contains(&entry.name),
            "{} is not listed",
            entry.name
        );
    }
}

#[test]
fn bench_runs_each_measurement_in_its_own_process_and_compares_engines() {
    let dir = scratch("bench");
    let out = memtx(
        &[
            "bench",
            "--preset",
            "quick",
            "--two-phase",
            "3",
            "--threads",
            "1",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    let quick = pinned_quick_states();
    assert!(
        table.contains(&format!("| memtx fast | 1 | {quick} |")),
        "{table}"
    );
    assert!(
        table.contains(&format!("| stateright BFS | 1 | {quick} |")),
        "{table}"
    );
    assert!(table.contains("| memtx fast | 1 | 288 |"), "{table}");
    assert!(table.contains("| stateright BFS | 1 | 288 |"), "{table}");
    assert!(!table.contains("disagree"), "{table}");
    // One progress line per child process.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .matches("bench: ")
            .count(),
        4
    );
    // The internal child mode prints one JSON measurement.
    let one = memtx(
        &[
            "bench",
            "--two-phase",
            "3",
            "--threads",
            "2",
            "--run-one",
            "fast",
        ],
        &dir,
    );
    let run: serde_json::Value = serde_json::from_slice(&one.stdout).expect("one JSON object");
    assert_eq!(run["unique_states"], 288);
    assert_eq!(run["threads"], 2);
}

#[test]
fn bench_compares_against_a_baseline_binary_in_one_run() {
    let dir = scratch("bench-baseline");
    // This binary as its own baseline: both subjects count the same states, and the table
    // says per thread count how much slower per distinct state, against the 15 % target.
    let me = env!("CARGO_BIN_EXE_memtx");
    let out = memtx(
        &[
            "bench",
            "--preset",
            "evidence",
            "--threads",
            "1",
            "--skip-stateright",
            "--baseline-binary",
            me,
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("## Against the baseline binary"), "{table}");
    assert!(
        table.contains("MemTX, preset evidence, baseline binary"),
        "{table}"
    );
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("## Against the baseline binary"))
        .find(|l| l.starts_with("| 1 |"))
        .unwrap_or_else(|| panic!("no ratio row: {table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let slower: f64 = cells[4]
        .trim_end_matches(" %")
        .parse()
        .expect("a percentage");
    assert!(slower.abs() < 100.0, "{row}");
    // The same size: this binary stopped at the baseline's distinct states, a time per state
    // and a percentage against the baseline.
    let same_size: f64 = cells[6].parse().expect("µs per state");
    assert!(same_size > 0.0, "{row}");
    let same_slower: f64 = cells[7]
        .trim_end_matches(" %")
        .parse()
        .expect("a percentage");
    assert!(same_slower.abs() < 100.0, "{row}");
    assert!(
        row.ends_with("| not measured (--skip-stateright) |"),
        "{row}"
    );
    // Three children per round (this binary, the baseline, this binary stopped at the
    // baseline's count), the stopped one with the baseline's distinct states.
    assert_eq!(stderr.matches("bench: ").count(), 3, "{stderr}");
    let states = |label: &str| {
        stderr
            .lines()
            .find(|l| l.starts_with(&format!("bench: MemTX, preset evidence, {label}, ")))
            .and_then(|l| l.split(": ").nth(2))
            .and_then(|l| l.split(' ').next())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no {label} run: {stderr}"))
    };
    assert_eq!(
        states("stopped at the baseline's distinct states"),
        states("baseline binary"),
        "{stderr}"
    );
    // A baseline that is not there, or that fails, is the user's error.
    let missing = memtx(&["bench", "--baseline-binary", "no-such-memtx"], &dir);
    assert_user_error(&missing, "--baseline-binary no-such-memtx: no such file");
    let failing = memtx(
        &[
            "bench",
            "--skip-stateright",
            "--baseline-binary",
            "/bin/false",
        ],
        &dir,
    );
    assert_user_error(
        &failing,
        "--baseline-binary /bin/false: benchmark process failed",
    );
}

#[test]
fn bench_repeats_report_the_median_run_and_every_time() {
    let dir = scratch("bench-repeat");
    let args = [
        "bench",
        "--two-phase",
        "3",
        "--threads",
        "1",
        "--skip-stateright",
    ];
    let out = memtx(&[&args[..], &["--repeat", "3"]].concat(), &dir);
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("median time of 3 runs"), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("| memtx fast | 1 | 288 |"))
        .unwrap_or_else(|| panic!("no 2PC row: {table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let times: Vec<f64> = cells[13]
        .split(", ")
        .map(|t| t.parse().expect("a time"))
        .collect();
    assert_eq!(times.len(), 3, "{row}");
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median: f64 = cells[6].parse().expect("seconds");
    assert!((median - sorted[1]).abs() < 0.006, "{row}");
    for bad in ["0", "100"] {
        let out = memtx(&[&args[..], &["--repeat", bad]].concat(), &dir);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--repeat must be between 1 and 99"));
    }
}

#[test]
fn check_reports_rule_coverage_in_text_json_and_the_full_table() {
    let dir = scratch("coverage");
    let out = memtx(&["check", "--preset", "scopes", "--coverage"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let summary = text
        .lines()
        .find(|l| l.starts_with("rules exercised "))
        .expect("a summary line");
    assert!(summary.contains("; never: "), "{summary}");
    assert!(text.contains("pipe.permission.fail"), "{text}");
    assert!(
        text.contains("NEVER"),
        "the table marks rules never exercised"
    );
    let out = memtx(&["check", "--preset", "scopes", "--json"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rules = v["rules"]["rules"].as_array().expect("the coverage table");
    assert_eq!(rules.len(), memtx_model::rules::RULES.len());
    assert!(rules
        .iter()
        .any(|r| r["id"] == "pipe.permission.fail" && r["fired"].as_u64() > Some(0)));
}

#[test]
fn a_domain_file_in_the_form_reports_print_reproduces_its_preset() {
    let dir = scratch("domain");
    let out = memtx(&["check", "--preset", "scopes", "--json"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    std::fs::write(dir.join("scopes.json"), v["config"].to_string()).unwrap();
    let again = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--domain",
            "scopes.json",
            "--json",
            "--property",
            "I3",
        ],
        &dir,
    );
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let w: serde_json::Value = serde_json::from_slice(&again.stdout).expect("JSON");
    assert_eq!(w["unique_states"], v["unique_states"]);
    assert_eq!(w["config"]["domain"], v["config"]["domain"]);
    // A fourth source, of low authority, without recompiling.
    let mut four = v["config"].clone();
    four["bounds"]["sources"]
        .as_array_mut()
        .unwrap()
        .push("low".into());
    four["domain"]["writes"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"source": 3, "confidence": "low", "scope": "shared"}));
    std::fs::write(dir.join("four.json"), four.to_string()).unwrap();
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--domain",
            "four.json",
            "--json",
            "--property",
            "I10",
        ],
        &dir,
    );
    let f: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        f["config"]["bounds"]["sources"].as_array().unwrap().len(),
        4
    );
    assert!(f["unique_states"].as_u64() > v["unique_states"].as_u64());
    // Bad files: one line, exit 2.
    std::fs::write(dir.join("bad.json"), r#"{"domain": 3}"#).unwrap();
    assert_user_error(
        &memtx(&["check", "--domain", "bad.json"], &dir),
        "not a memtx domain",
    );
    let mut unknown = v["config"].clone();
    unknown["domain"]["writes"][0]["extra"] = 1.into();
    std::fs::write(dir.join("unknown.json"), unknown.to_string()).unwrap();
    assert_user_error(
        &memtx(&["check", "--domain", "unknown.json"], &dir),
        "unknown field",
    );
    let mut wrong = v["config"].clone();
    wrong["domain"]["writes"][0]["source"] = 7.into();
    std::fs::write(dir.join("wrong.json"), wrong.to_string()).unwrap();
    assert_user_error(
        &memtx(&["check", "--domain", "wrong.json"], &dir),
        "source 7",
    );
    assert_user_error(
        &memtx(&["check", "--domain", "missing.json"], &dir),
        "cannot read",
    );
}

#[test]
fn suite_quick_prints_the_matrix_and_union_coverage() {
    let dir = scratch("suite");
    let out = memtx(&["suite", "--quick", "--report", "rep"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let total = memtx_model::rules::RULES.len();
    assert!(
        text.contains(&format!("union: rules exercised {total}/{total}")),
        "{text}"
    );
    assert!(text.contains("result: PASS"), "{text}");
    for f in [
        "suite.md",
        "suite.json",
        "lineage-memtx.md",
        "quick-memtx.json",
        "quick-memtx.html",
        "index.html",
    ] {
        assert!(dir.join("rep").join(f).is_file(), "{f} written");
    }
    // The suite's index links each preset's page and shows the union coverage.
    let index = std::fs::read_to_string(dir.join("rep/index.html")).unwrap();
    assert!(index.contains("href=\"lineage-memtx.html\""), "{index}");
    assert!(index.contains(&format!("rules exercised {total}/{total}")));
}

#[test]
fn a_run_stopped_early_is_incomplete_never_a_pass() {
    let dir = scratch("incomplete");
    let out = memtx(
        &["check", "--preset", "quick", "--max-states", "1000"],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("result: INCOMPLETE (stopped by max states"),
        "{text}"
    );
    assert!(!text.contains("PASS"), "{text}");
    assert!(text.contains("holds so far (to depth"), "{text}");
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--max-states",
            "1000",
            "--json",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["result"], "incomplete");
    assert_eq!(v["complete"], false);
    // A violation found before the stop is a real counterexample: the run fails.
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--variant",
            "no-action-gate",
            "--max-states",
            "5000",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("result: FAIL (I1 violated"), "{text}");
    // A complete run that fails names what failed.
    let out = memtx(
        &["check", "--preset", "quick", "--variant", "no-cascade"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("result: FAIL (I2 violated; E2 not reached"),
        "{text}"
    );
}

/// Output paths are checked before the run, and `--name` cannot leave the report folder.
#[test]
fn output_paths_are_checked_before_exploring() {
    let dir = scratch("outputs");
    let out = memtx(
        &[
            "check", "--preset", "quick", "--name", "../x", "--report", "rep",
        ],
        &dir,
    );
    assert_user_error(&out, "--name");
    assert!(!dir.join("x.md").exists() && !dir.join("rep").exists());
    let out = memtx(&["check", "--preset", "quick", "--traces", "/proc/x"], &dir);
    assert_user_error(&out, "--traces");
    assert!(out.stdout.is_empty(), "the check must not run");
    let out = memtx(&["bench", "--out", "/proc/nope/bench.md"], &dir);
    assert_user_error(&out, "--out");
    std::fs::write(dir.join("afile"), "x").unwrap();
    let out = memtx(&["check", "--preset", "quick", "--report", "afile"], &dir);
    assert_user_error(&out, "not a directory");
    // Nothing was created by the refused runs.
    let mut left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, vec!["afile"]);
}

/// `--max-depth 0` checks the initial states only (it is not "unlimited"); a size such as
/// `1.5G` is a size.
#[test]
fn max_depth_zero_is_depth_zero_and_sizes_take_fractions() {
    let dir = scratch("depth0");
    let out = memtx(
        &["check", "--preset", "quick", "--max-depth", "0", "--json"],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["result"], "incomplete");
    // Depth 1 (the initial state) checked, depth 2 counted: one state and its successors.
    assert_eq!(v["max_depth"], 2);
    assert!(v["unique_states"].as_u64().unwrap() < 10, "{v}");
    assert!(v["coverage"]["reason"]
        .as_str()
        .unwrap()
        .contains("every state within 0 steps checked"));
    let out = memtx(
        &["check", "--preset", "quick", "--max-memory", "1.5G"],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = memtx(
        &["check", "--preset", "quick", "--max-memory", "1.5Q"],
        &dir,
    );
    assert_user_error(&out, "not a size");
}

/// The configuration, the domain and what "exhaustive" will mean come first, before any
/// result; the command recorded in reports is `memtx …`, not a local binary path.
#[test]
fn the_run_says_what_it_will_cover_before_it_starts() {
    let dir = scratch("preamble");
    let out = memtx(&["check", "--preset", "quick", "--report", "rep"], &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("memtx check: preset quick"), "{text}");
    assert!(lines[1].starts_with("  bounds:"), "{text}");
    assert!(lines[2].starts_with("  domain:"), "{text}");
    assert!(
        lines[3].starts_with("  domain size: 6 operations proposed in the initial state"),
        "{text}"
    );
    assert!(lines[5].starts_with("  exhaustive will mean"), "{text}");
    let unique = text.find("unique states").expect("a summary");
    assert!(unique > text.find("exhaustive will mean").unwrap());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rep/quick-memtx.json")).unwrap())
            .unwrap();
    assert_eq!(v["command"], "memtx check --preset quick --report rep");
}

/// `bench --processes 2`: both setups measured in one run, the same count, a ratio and the
/// bytes exchanged (speed itself is not asserted: it is a measurement, not a test).
#[test]
fn bench_compares_local_processes_with_threads_in_one_run() {
    let dir = scratch("bench-processes");
    let out = memtx(
        &[
            "bench",
            "--preset",
            "quick",
            "--processes",
            "2",
            "--out",
            "b.md",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let quick = pinned_quick_states();
    assert!(text.contains(&format!("{quick} distinct states")), "{text}");
    assert!(text.contains("| 1 process × 2 threads |"), "{text}");
    assert!(text.contains("| 2 local processes × 1 thread |"), "{text}");
    assert!(
        text.contains("processes' speed / threads' speed: **"),
        "{text}"
    );
    assert!(text.contains("per distinct state"), "{text}");
    assert_eq!(std::fs::read_to_string(dir.join("b.md")).unwrap(), text);
    let out = memtx(&["bench", "--processes", "1"], &dir);
    assert_user_error(&out, "--processes");
}

/// `bench --processes 2 --two-phase 3`: the preset and 2PC in one run, a table, a ratio and the
/// bytes per state for each; the internal cluster flags are refused outside a child.
#[test]
fn bench_compares_local_processes_with_threads_on_the_preset_and_2pc_in_one_run() {
    let dir = scratch("bench-processes-2pc");
    let out = memtx(
        &[
            "bench",
            "--processes",
            "2",
            "--two-phase",
            "3",
            "--preset",
            "quick",
            "--repeat",
            "1",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let preset = text
        .find("## MemTX, preset `quick`")
        .expect("the preset's table");
    let two_phase = text.find("## 2PC, 3 RMs").expect("2PC's table");
    assert!(preset < two_phase, "{text}");
    for section in [&text[preset..two_phase], &text[two_phase..]] {
        assert!(section.contains("| 1 process × 2 threads |"), "{text}");
        assert!(
            section.contains("| 2 local processes × 1 thread |"),
            "{text}"
        );
        assert_eq!(
            section
                .matches("processes' speed / threads' speed: **")
                .count(),
            1,
            "{text}"
        );
        assert!(section.contains("per distinct state"), "{text}");
    }
    let quick = pinned_quick_states();
    assert!(
        text[preset..].contains(&format!("{quick} distinct states")),
        "{text}"
    );
    // 2PC with 3 RMs: 288 distinct states (stateright's example).
    assert!(text[two_phase..].contains("288 distinct states"), "{text}");
    let out = memtx(
        &[
            "bench",
            "--processes",
            "2",
            "--process",
            "1",
            "--hostfile",
            "h",
        ],
        &dir,
    );
    assert_user_error(&out, "internal");
    std::fs::write(dir.join("h"), "127.0.0.1:1\n").expect("a hostfile");
    let out = memtx(
        &[
            "bench",
            "--run-one",
            "fast",
            "--processes",
            "2",
            "--process",
            "0",
            "--hostfile",
            "h",
        ],
        &dir,
    );
    assert_user_error(&out, "--hostfile");
    let out = memtx(
        &[
            "bench",
            "--run-one",
            "stateright",
            "--processes",
            "2",
            "--hostfile",
            "h",
        ],
        &dir,
    );
    assert_user_error(&out, "--run-one fast");
}

/// The distinct states of `quick` under `memtx`, as `reports/manifest.json` pins them.
fn pinned_quick_states() -> u64 {
    memtx_checker::report::Manifest::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/manifest.json"),
    )
    .expect("reports/manifest.json")
    .get("quick", memtx_model::Variant::Memtx, false)
    .expect("quick × memtx is pinned")
    .unique
}

/// Runs `memtx args` with standard output sent to `stdout`; its output (stdout empty).
fn memtx_to(args: &[&str], stdout: std::process::Stdio) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(args)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("memtx runs")
}

/// A pipe whose reader is gone before memtx writes (`memtx list | head -0`, deterministic):
/// the command ends quietly with 141, as a process SIGPIPE ended, not with a panic (101).
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let regression = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../regressions/quick/no-cascade-I2.trace.json")
        .display()
        .to_string();
    for args in [
        vec!["list"],
        vec!["list", "--json"],
        vec!["replay", regression.as_str()],
        vec!["check", "--preset", "quick", "--max-depth", "3"],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = memtx_to(&args, writer.into());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("memtx:"),
            "{args:?}: said nothing: {stderr}"
        );
    }
}

/// A full standard output (`memtx list > /dev/full`) is one line, exit 2, not a panic.
#[test]
fn a_full_stdout_is_one_line_and_exit_2() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this system");
        return;
    };
    let out = memtx_to(&["list"], full.into());
    assert_user_error(&out, "cannot write to standard output");
}

/// `replay T --html T` (or `--write-states T`) would destroy the trace: refused, exit 2, the
/// trace unchanged; so is a FIFO named as the page (it stays a FIFO).
#[test]
fn replay_never_writes_over_its_input_or_a_special_file() {
    let dir = scratch("replay-outputs");
    let trace = sample_trace(&dir);
    let before = std::fs::read(&trace).unwrap();
    let t = trace.display().to_string();
    for flag in ["--html", "--write-states"] {
        let out = memtx(&["replay", &t, flag, &t], &dir);
        assert_user_error(&out, "the trace being replayed");
        assert_eq!(std::fs::read(&trace).unwrap(), before, "{flag}");
    }
    let out = memtx(
        &["replay", &t, "--html", "p.html", "--write-states", "p.html"],
        &dir,
    );
    assert_user_error(&out, "both name");
    let fifo = dir.join("page.fifo");
    if mkfifo(&fifo) {
        let out = memtx(&["replay", &t, "--html", "page.fifo"], &dir);
        assert_user_error(&out, "a FIFO");
        assert_eq!(
            memtx_checker::fsutil::not_regular(&fifo),
            Some("a FIFO"),
            "left as it was"
        );
    }
}

/// A directory where a violation's trace would be saved is found before the run (it was found
/// after the whole exploration, and the verdict was never printed).
#[test]
fn a_directory_in_the_way_of_a_trace_is_refused_before_the_run() {
    let dir = scratch("trace-in-the-way");
    std::fs::create_dir_all(dir.join("traces/quick/no-cascade-I2.trace.json")).unwrap();
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--variant",
            "no-cascade",
            "--property",
            "I2",
        ],
        &dir,
    );
    assert_user_error(&out, "a directory");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("result:"),
        "refused before the run"
    );
}

/// Inputs that never end or never open: a named FIFO without a writer as `--domain` (blocked
/// in `open()`, past the first Ctrl-C) and `/dev/zero` as `--hostfile` or trace (read until
/// memory ran out). Each is refused at once in one line, exit 2.
#[test]
fn special_files_as_inputs_are_refused_at_once() {
    let dir = scratch("special-inputs");
    let fifo = dir.join("domain.fifo");
    let mut cases: Vec<(Vec<String>, &str)> = vec![
        (
            [
                "check",
                "--preset",
                "quick",
                "--processes",
                "2",
                "--process",
                "0",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain(["--hostfile".to_string(), "/dev/zero".to_string()])
            .collect(),
            "a character device",
        ),
        (
            vec!["replay".into(), "/dev/zero".into()],
            "a character device",
        ),
    ];
    if mkfifo(&fifo) {
        cases.push((
            ["check", "--preset", "quick", "--domain", "domain.fifo"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            "a FIFO",
        ));
    }
    for (args, kind) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = memtx_within(&args, &dir, std::time::Duration::from_secs(20), kind);
        assert_user_error(&out, kind);
    }
}

/// A checkpoint folder is written by one run at a time: while a check writes it, a resume (or
/// a second check) of the same folder is refused in one line naming the process; once that
/// run is killed (its lock left behind), the folder is taken over.
#[test]
fn a_checkpoint_folder_is_locked_while_a_run_writes_it() {
    let dir = scratch("ckpt-lock");
    let mut running = std::process::Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(["check", "--preset", "paper", "--threads", "1"])
        .args(["--checkpoint", "ck", "--checkpoint-every", "1h"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = dir.join("ck").join(memtx_checker::fsutil::LOCK_FILE);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !lock.exists() {
        assert!(std::time::Instant::now() < deadline, "no lock taken");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = running.id().to_string();
    let out = memtx(&["resume", "ck"], &dir);
    assert_user_error(&out, &format!("in use by process {pid}"));
    let out = memtx(&["check", "--preset", "quick", "--checkpoint", "ck"], &dir);
    assert_user_error(&out, "in use by process");
    running.kill().unwrap();
    running.wait().unwrap();
    assert!(lock.exists(), "a killed run leaves its lock");
    let out = memtx(&["resume", "ck"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("in use"),
        "the stale lock is taken over: {stderr}"
    );
    assert!(!lock.exists(), "and released when the resume ends");
}

/// Part counts read from file names are not trusted: empty files claiming 2^64-1, 10^13 and
/// 10^8 parts made `resume` panic (capacity overflow), abort (a 240 TB allocation) and
/// allocate 2.4 GB. Now: one line, exit 2, nothing allocated by the claim.
#[test]
fn checkpoint_part_counts_in_file_names_are_not_trusted() {
    let dir = scratch("ckpt-parts");
    let ck = dir.join("ck");
    std::fs::create_dir_all(&ck).unwrap();
    for name in [
        "L0003-part-0000-of-18446744073709551615.memtx",
        "L0003-part-0000-of-10000000000000.memtx",
        "L0003-part-0001-of-100000000.memtx",
    ] {
        std::fs::write(ck.join(name), b"").unwrap();
    }
    let out = memtx(&["resume", "ck"], &dir);
    assert_user_error(&out, "incomplete checkpoint over processes");
}

/// A domain that lists an entry twice proposes every operation it names twice (the same
/// states, more transitions: 100,000 copies of one tier ran for ever under --max-states): each
/// list field refuses a repeat, naming the field and the entries.
#[test]
fn a_domain_listing_an_entry_twice_is_refused() {
    let dir = scratch("domain-duplicates");
    let list = memtx(&["list", "--json"], &dir);
    let all: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let quick = all["presets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "quick")
        .unwrap();
    for field in [
        "tiers",
        "isolations",
        "stage_kinds",
        "writes",
        "view_scopes",
        "validities",
    ] {
        let mut domain = quick["domain"].clone();
        let entries = domain[field].as_array_mut().unwrap();
        let first = entries[0].clone();
        entries.push(first);
        let file = dir.join(format!("{field}.json"));
        std::fs::write(&file, serde_json::json!({ "domain": domain }).to_string()).unwrap();
        let out = memtx(
            &[
                "check",
                "--preset",
                "quick",
                "--domain",
                &format!("{field}.json"),
            ],
            &dir,
        );
        assert_user_error(&out, &format!("\"{field}\" twice"));
    }
}

/// The small ones of issue 26: a report name the message does not allow (`' '`, `x.json`), an
/// unknown key inside a step's action (docs/traces.md says refused), a domain file naming
/// another variant than the run's (silently replaced before), control characters from a file
/// (escaped, not sent raw to the terminal), `suite --threads 0` (one line, before any preset).
#[test]
fn small_hostile_inputs_are_one_line_errors() {
    let dir = scratch("small-hostile");
    for name in [" ", "x.json", "a b"] {
        let out = memtx(
            &[
                "check", "--preset", "quick", "--report", "r", "--name", name,
            ],
            &dir,
        );
        assert_user_error(&out, "not a plain file name");
    }
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../regressions/scenarios/dirty-read-trap.json");
    let mut trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(scenario).unwrap()).unwrap();
    trace["steps"][0]["action"]["bogus\u{1b}[31m"] = 1.into();
    std::fs::write(dir.join("t.json"), trace.to_string()).unwrap();
    let out = memtx(&["replay", "t.json"], &dir);
    assert_user_error(&out, "unknown field");
    assert!(
        !out.stderr.contains(&0x1b),
        "the escape byte is not echoed raw"
    );
    let list = memtx(&["list", "--json"], &dir);
    let all: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let quick = &all["presets"][0];
    let file = serde_json::json!({"domain": quick["domain"], "variant": "no-cascade"});
    std::fs::write(dir.join("d.json"), file.to_string()).unwrap();
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--domain",
            "d.json",
            "--max-depth",
            "1",
        ],
        &dir,
    );
    assert_user_error(&out, "names variant \"no-cascade\"");
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--variant",
            "no-cascade",
            "--domain",
            "d.json",
            "--max-depth",
            "1",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(3), "the named variant is accepted");
    let out = memtx(&["suite", "--threads", "0"], &dir);
    assert_user_error(&out, "--threads 0");
}

/// `--max-transitions` bounds total work, however few of the successors are new (a domain
/// whose branching is high could run for ever under `--max-states`): the run stops within
/// about one batch of the limit, INCOMPLETE (exit 3), and says so. Fast engine only.
#[test]
fn max_transitions_bounds_total_work() {
    let dir = scratch("max-transitions");
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--max-transitions",
            "100000",
            "--json",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = v["total_states"].as_u64().unwrap();
    assert!((100_000..200_000).contains(&total), "{total}");
    assert!(
        v["coverage"]["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("max transitions"),
        "{}",
        v["coverage"]
    );
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--engine",
            "stateright",
            "--max-transitions",
            "10",
        ],
        &dir,
    );
    assert_user_error(&out, "--max-transitions");
    let out = memtx(
        &["check", "--preset", "quick", "--max-transitions", "0"],
        &dir,
    );
    assert_user_error(&out, "at least 1");
}

/// A full standard error loses its lines, not the run: `check --json 2>/dev/full` printed its
/// preamble there and panicked (exit 101); now the verdict and exit code are the run's.
#[test]
fn a_full_stderr_does_not_stop_the_run() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this system");
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(["check", "--preset", "quick", "--json"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "pass", "{}", v["result"]);
}

/// A FIFO where the checkpoint file goes is refused before the run and left as it was.
#[test]
fn a_checkpoint_file_that_is_a_fifo_is_refused() {
    let dir = scratch("ckpt-fifo");
    std::fs::create_dir_all(dir.join("ck")).unwrap();
    let fifo = dir.join("ck").join("checkpoint.memtx");
    if !mkfifo(&fifo) {
        eprintln!("skipped: no mkfifo");
        return;
    }
    let out = memtx(&["check", "--preset", "quick", "--checkpoint", "ck"], &dir);
    assert_user_error(&out, "a FIFO");
    assert_eq!(memtx_checker::fsutil::not_regular(&fifo), Some("a FIFO"));
}

#[test]
fn bench_simulate_refuses_what_it_does_not_measure_in_one_line() {
    let dir = scratch("bench-simulate");
    let cases: [(&[&str], &str); 4] = [
        (
            &["bench", "--simulate", "5s", "--two-phase", "3"],
            "--simulate measures the simulations alone: drop --two-phase",
        ),
        (
            &["bench", "--simulate", "5s", "--repeat", "3"],
            "--simulate measures the simulations alone: drop --repeat",
        ),
        (
            &["bench", "--simulate", "soon"],
            "--simulate \"soon\" is not a duration",
        ),
        (
            &["bench", "--seeds", "3"],
            "required arguments were not provided: --simulate <DURATION>",
        ),
    ];
    for (args, message) in cases {
        assert_user_error(&memtx(args, &dir), message);
    }
}
