//! `memtx conformance`: the suite generated from the model covers every rule, each of its
//! files replays with `memtx replay` and each of its logs conforms; the same version writes
//! the same suite byte for byte; and the repository's reference client (`conformance/reference`,
//! no code shared with the model) passes every case in its correct mode while each of its
//! defects fails at least one.

mod binary_support;

use binary_support::{memtx, scratch};
use memtx_checker::log::names::LogOptions;
use memtx_checker::trace::replay::replay;
use memtx_checker::trace::Trace;
use memtx_model::Variant;
use memtx_reference::{run_script, Defect};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file under `dir`, relative, with its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .expect("under")
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).expect("bytes"));
            }
        }
    }
    out
}

/// The divergence of a log (one run) under `memtx`, if any.
fn judge(path: &Path) -> Option<String> {
    let mut out = None;
    memtx_checker::log::validate_log(path, &LogOptions::complete(Variant::Memtx), |run| {
        out = run
            .result
            .divergence
            .as_ref()
            .map(|d| format!("event {}: {}", d.event, d.what));
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

/// The check of the index (`checks`) that a defect of the reference client leaves out.
fn check_of(defect: Defect) -> &'static str {
    match defect {
        Defect::NoEvidenceCheck => "evidence (§6.1)",
        Defect::NoValidityCheck => "validity (§6.2)",
        Defect::NoStaleWriteCheck => "stale write (§6.3)",
        Defect::NoLineageCheck => "lineage (§6.3)",
        Defect::NoPermissionCheck => "permission inheritance (§6.3)",
        Defect::NoStabilityCheck => "dependency stability (§6.4)",
        Defect::GateIgnoresInFlight => "action gate, condition 1: nothing in flight (§7.1)",
        Defect::NoCascade => "cascade (§8)",
    }
}

#[test]
fn the_suite_covers_every_rule_replays_and_judges_the_reference_client() {
    let dir = scratch("suite");
    let out = dir.join("suite");
    let regressions = root().join("regressions");
    let args = [
        "conformance",
        "--out",
        &out.to_string_lossy(),
        "--regressions",
        &regressions.to_string_lossy(),
    ];
    let run = memtx(&args, &dir);
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let total = memtx_model::rules::RULES.len();
    let bounds = memtx_checker::conformance::MODEL_BOUNDS.len();
    let witnessed = format!(
        "Rules witnessed: {total} of {total} ({bounds} of them, {}, refusals of the bounded model",
        memtx_checker::conformance::MODEL_BOUNDS.join(", ")
    );
    assert!(text.contains(&witnessed), "{text}");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("index.json")).expect("index"))
            .expect("JSON");
    assert_eq!(index["unreached"], serde_json::json!([]));
    // Every rule names at least one file, the first being its shortest witness.
    let files = index["files"].as_object().expect("files");
    for def in memtx_model::rules::RULES {
        let named = index["rules"][def.id].as_array().expect("a rule's files");
        let first = named
            .first()
            .and_then(|f| f.as_str())
            .unwrap_or_else(|| panic!("{}", def.id));
        assert!(files[first]["witness_of"]
            .as_array()
            .expect("list")
            .iter()
            .any(|r| r == def.id));
    }
    // The six corruption families, a trap and a control each, and the harms of I15-I18.
    for family in [
        "pollution",
        "stale-write",
        "dirty-read",
        "semantic-conflict",
        "laundering",
        "cascade",
    ] {
        for kind in ["trap", "control"] {
            let f = format!("families/{family}-{kind}.json");
            assert_eq!(files[&f]["kind"], kind, "{f}");
        }
    }
    for key in ["I15", "I16", "I17", "I18"] {
        assert!(
            files
                .values()
                .any(|f| f["kind"] == "harm" && f["family"] == key),
            "a harm of {key}"
        );
    }
    // Small and readable: a few hundred short cases.
    assert!(
        files.len() >= 100 && files.len() <= 400,
        "{} cases",
        files.len()
    );
    assert!(files
        .values()
        .all(|f| f["length"].as_u64().unwrap_or(99) <= 30));

    // Each file replays with memtx replay (its expectations met), each log conforms.
    let mut logs = Vec::new();
    for name in files.keys() {
        let trace = Trace::read(&out.join(name)).expect("a scenario");
        let report = replay(&trace, None).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(
            report.mismatches.is_empty(),
            "{name}: {:?}",
            report.mismatches
        );
        let log = out.join(files[name]["log"].as_str().expect("log"));
        assert_eq!(judge(&log), None, "{name}");
        logs.push((name.clone(), std::fs::read_to_string(&log).expect("log")));
    }

    // The reference client: its correct mode passes every case; each defect fails some.
    let client_log = dir.join("client.jsonl");
    let mut failing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (name, script) in &logs {
        // The bounded model's own refusals: an implementation without bounds skips them.
        if files[name]["kind"] == "bound" {
            continue;
        }
        let good = run_script(script, &[]).expect("runs");
        std::fs::write(&client_log, &good).expect("written");
        assert_eq!(judge(&client_log), None, "the correct client on {name}");
        for defect in Defect::ALL {
            let bad = run_script(script, &[defect]).expect("runs");
            std::fs::write(&client_log, &bad).expect("written");
            if judge(&client_log).is_some() {
                failing.entry(defect.name()).or_default().push(name.clone());
            }
        }
    }
    let checks = &index["checks"];
    for defect in Defect::ALL {
        let cases = failing.get(defect.name()).cloned().unwrap_or_default();
        let check = check_of(defect);
        let listed: Vec<String> = checks[check]["cases"]
            .as_array()
            .unwrap_or_else(|| panic!("the index has no check '{check}'"))
            .iter()
            .map(|f| f.as_str().expect("a file").to_string())
            .collect();
        let missed: Vec<&String> = listed.iter().filter(|f| !cases.contains(f)).collect();
        eprintln!(
            "{}: fails {} cases, {} of the {} the index lists under '{check}'; passes {missed:?}",
            defect.name(),
            cases.len(),
            listed.len() - missed.len(),
            listed.len(),
        );
        assert!(
            missed.len() < listed.len(),
            "{} passes every case the index lists under '{check}'",
            defect.name()
        );
        // The index names which: every case a defect fails is one in which its check acts.
        for f in &cases {
            assert!(
                listed.contains(f),
                "{f} fails {} but the index does not list it under '{check}'",
                defect.name()
            );
        }
    }

    // Stable: the same version writes the same suite byte for byte.
    let again = dir.join("again");
    let args2 = [
        "conformance",
        "--out",
        &again.to_string_lossy(),
        "--regressions",
        &regressions.to_string_lossy(),
    ];
    assert_eq!(memtx(&args2, &dir).status.code(), Some(0));
    assert!(contents(&out) == contents(&again), "two runs differ");
}

#[test]
fn a_search_cut_short_says_which_rules_it_missed() {
    let dir = scratch("short");
    let out = dir.join("suite");
    let run = memtx(
        &[
            "conformance",
            "--out",
            &out.to_string_lossy(),
            "--preset",
            "scopes",
            "--regressions",
            "none",
        ],
        &dir,
    );
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(run.status.code(), Some(1), "{text}");
    assert!(
        text.contains("NOT reached by any preset searched: "),
        "{text}"
    );
    assert!(
        text.contains("no none folder: no scripted traps and controls, no harms"),
        "{text}"
    );
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("index.json")).expect("index"))
            .expect("JSON");
    let unreached = index["unreached"].as_array().expect("list");
    assert!(!unreached.is_empty());
    // A rule unreached names no file; one reached names its witness.
    assert_eq!(
        index["rules"][unreached[0].as_str().expect("id")],
        serde_json::json!([])
    );
    for bad in [
        vec!["conformance", "--out", "x", "--preset", "tiny"],
        vec!["conformance", "--out", "x", "--budget", "0"],
    ] {
        let run = memtx(&bad, &dir);
        assert_eq!(run.status.code(), Some(2), "{bad:?}");
        assert_eq!(String::from_utf8_lossy(&run.stderr).lines().count(), 1);
    }
}
