//! What a run prints: `--json` verdicts, symmetry, the replay command of a violation, `list`,
//! rule coverage, domain files, the suite's matrix, a run stopped early (never a pass), depth,
//! size and work bounds, and what a run says it will cover.

use super::*;

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

/// `check` and `simulate` print every property's verdict in one column, the longest
/// statement included, and each property's key once.
#[test]
fn the_verdicts_of_check_and_simulate_line_up() {
    let dir = scratch("columns");
    for args in [
        &["check", "--preset", "quick"][..],
        &["simulate", "--preset", "quick", "--walks", "64"],
    ] {
        let out = memtx(args, &dir);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut columns = Vec::new();
        for def in memtx_model::properties::PROPERTIES {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("  {} ", def.name)))
                .unwrap_or_else(|| panic!("{args:?}: no line for {}:\n{text}", def.key));
            let rest = &line[2 + def.name.len()..];
            let verdict = rest.trim_start();
            assert!(rest.len() - verdict.len() >= 2, "{args:?}: {line}");
            assert!(!verdict.is_empty(), "{args:?}: {line}");
            columns.push(line.len() - verdict.len());
        }
        assert!(
            columns.windows(2).all(|w| w[0] == w[1]),
            "{args:?}: verdicts start at columns {columns:?}:\n{text}"
        );
    }
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
    // The rules never exercised follow, grouped by prefix, each line within 100 columns.
    assert!(summary.contains("; never exercised ("), "{summary}");
    let after: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("rules exercised "))
        .skip(1)
        .take_while(|l| l.starts_with("  ") && !l.starts_with("  I"))
        .collect();
    assert!(
        after.iter().any(|l| l.starts_with("  pipe ")),
        "a pipe group: {text}"
    );
    assert!(after.iter().all(|l| l.chars().count() <= 100), "{text}");
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

/// `--until-decided` ends a counterexample hunt with the level of its shortest counterexample:
/// the same counterexample as the whole search, from fewer states, and the coverage says
/// why the run ended. A run whose properties all hold is still the whole search.
#[test]
fn until_decided_ends_a_hunt_at_its_counterexample_and_changes_nothing_that_holds() {
    let dir = scratch("until-decided");
    let run = |args: &[&str], traces: &str| -> serde_json::Value {
        let mut all = vec!["check", "--json", "--traces", traces];
        all.extend_from_slice(args);
        let out = memtx(&all, &dir);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{all:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(
            out.status.code(),
            Some(if v["result"] == "fail" { 1 } else { 0 }),
            "{all:?}"
        );
        // The preamble (on stderr beside --json) names the limit before the run starts.
        let preamble = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            preamble.contains("  limits: until decided"),
            args.contains(&"--until-decided"),
            "{all:?}: {preamble}"
        );
        v
    };
    let hunt = [
        "--preset",
        "quick",
        "--variant",
        "no-cascade",
        "--property",
        "I2",
    ];
    let whole = run(&hunt, "whole");
    let mut early_args = hunt.to_vec();
    early_args.push("--until-decided");
    let early = run(&early_args, "early");
    for v in [&whole, &early] {
        assert_eq!(v["result"], "fail");
        assert_eq!(v["properties"][0]["verdict"], "violated");
    }
    assert_eq!(whole["coverage"]["status"], "exhaustive");
    assert_eq!(early["coverage"]["status"], "stopped-early");
    let reason = early["coverage"]["reason"].as_str().unwrap();
    assert!(reason.starts_with("--until-decided: "), "{reason}");
    let (w, e) = (
        whole["unique_states"].as_u64().unwrap(),
        early["unique_states"].as_u64().unwrap(),
    );
    assert!(e * 4 < w, "{e} states until decided against {w} in all");
    assert_eq!(
        early["properties"][0]["trace_len"],
        whole["properties"][0]["trace_len"]
    );
    let steps = |v: &serde_json::Value| v["properties"][0]["counterexample"].clone();
    assert_eq!(
        steps(&early),
        steps(&whole),
        "the same shortest counterexample"
    );
    // Nothing to decide early: every invariant of `scopes` holds.
    let holds = run(&["--preset", "scopes"], "holds");
    let holds_early = run(&["--preset", "scopes", "--until-decided"], "holds-early");
    assert_eq!(holds_early["coverage"]["status"], "exhaustive");
    assert_eq!(holds_early["result"], "pass");
    assert_eq!(holds_early["unique_states"], holds["unique_states"]);
}

/// A run that ends early answers what it was asked when every property it checked is an
/// example it found: each is a path to a state, which no unvisited state can undo. One
/// invariant left open, or one example not yet found, keeps it INCOMPLETE.
#[test]
fn a_run_stopped_early_passes_only_when_it_checked_examples_alone_and_found_each() {
    let dir = scratch("examples-early");
    let run = |args: &[&str]| {
        let mut all = vec!["check", "--preset", "quick"];
        all.extend_from_slice(args);
        let out = memtx(&all, &dir);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, json) = run(&[
        "--property",
        "E2",
        "--property",
        "E4",
        "--until-decided",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(code, Some(0), "{json}");
    assert_eq!(v["result"], "pass");
    assert_eq!(v["coverage"]["status"], "stopped-early");
    let (code, text) = run(&["--property", "E2", "--until-decided"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("result: PASS (every property checked is an example, and each was found; the run visited "),
        "{text}"
    );
    // An invariant beside the example: open until the whole search.
    let (code, text) = run(&[
        "--property",
        "E1",
        "--property",
        "I1",
        "--max-states",
        "2000",
    ]);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("result: INCOMPLETE"), "{text}");
    // An example not reached within the limit (E3 lies 10 steps deep).
    let (code, text) = run(&[
        "--property",
        "E1",
        "--property",
        "E3",
        "--max-states",
        "200",
    ]);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("not reached yet"), "{text}");
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
