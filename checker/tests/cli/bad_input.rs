//! Bad input meets a one-line error and exit 2, before any work and without a panic: unknown
//! names, bad bounds and domains, damaged or hostile files, special files, output paths in
//! the way, locked or miscounted checkpoints. Nothing is half-written or written over.

use super::*;

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
    // A budget of no time is refused before any preset is checked.
    let out = memtx(&["suite", "--quick", "--simulate", "0s"], &dir);
    assert_user_error(&out, "--simulate \"0s\" is no time at all");
    assert!(out.stdout.is_empty(), "the suite must not run");
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
