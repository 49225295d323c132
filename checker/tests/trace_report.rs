//! Run reports (JSON and Markdown), the ablation matrix and the manifest of pinned counts.

mod binary_support;
mod trace_support;

use memtx_checker::error::ErrorKind;
use memtx_checker::report::{
    Coverage, Drift, Manifest, ManifestEntry, Matrix, PropertyOutcome, RunReport, Verdict,
};
use memtx_checker::trace::{replay_command, tool_id, trace_path, PropertyKind};
use memtx_model::properties::PROPERTIES;
use memtx_model::Variant;
use trace_support::*;

/// A report as a check of `quick` under `variant` that broke `broken` (with traces of length 6).
fn report(variant: Variant, broken: &[&str]) -> RunReport {
    let cfg = quick(variant);
    let dir = std::path::Path::new("traces");
    let properties = PROPERTIES
        .iter()
        .map(|p| {
            let kind = PropertyKind::of(p);
            let found = match kind {
                PropertyKind::Always => broken.contains(&p.key),
                PropertyKind::Sometimes => true,
            };
            let outcome = PropertyOutcome::new(p, Verdict::from_discovery(kind, found));
            if found {
                let file = trace_path(dir, variant, p.key);
                outcome.with_trace(
                    6,
                    Some(file.display().to_string()),
                    Some(replay_command(&file)),
                )
            } else {
                outcome
            }
        })
        .collect();
    RunReport {
        tool: tool_id(),
        command: format!("memtx check --preset quick --variant {}", variant.name()),
        engine: "fast".into(),
        config: cfg,
        variant,
        unique_states: 12_345,
        total_states: 67_890,
        max_depth: 9,
        states_per_depth: vec![1, 4, 20],
        seconds: 1.5,
        states_per_second: 8230.0,
        peak_memory_bytes: Some(64 << 20),
        collision_probability: Some(1.2e-12),
        symmetry: false,
        threads: 2,
        exact: false,
        symmetry_group: None,
        samples: Vec::new(),
        visited_bytes_per_state: Some(16.0),
        parent_log_bytes_per_state: Some(12.0),
        coverage: Coverage::Exhaustive,
        rules: None,
        properties,
        result: memtx_checker::report::Outcome::Incomplete,
        complete: true,
        resumed_from_level: None,
        cluster: None,
    }
    .with_outcome()
}

#[test]
fn json_roundtrip_and_markdown() {
    let mut r = report(Variant::NoCascade, &["I2"]);
    assert!(!r.passed());
    assert_eq!(r.property("i2").map(|p| p.verdict), Some(Verdict::Violated));
    let dir = temp_dir("report");
    // The check ran elsewhere: its traces are named by absolute paths under `dir`. The
    // report files in `dir` name them relative to themselves.
    for p in &mut r.properties {
        if let Some(t) = &p.trace {
            p.trace = Some(dir.join(t).display().to_string());
        }
    }
    let json = dir.join("quick-no-cascade.json");
    r.write_json(&json).expect("write json");
    let back = RunReport::read_json(&json).expect("read back");
    assert_eq!(
        back.property("I2").and_then(|p| p.trace.as_deref()),
        Some("traces/no-cascade-I2.trace.json")
    );
    assert_eq!(back, r.relocated(&json));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("read")).expect("JSON");
    assert_eq!(v["coverage"]["status"], "exhaustive");
    assert_eq!(v["properties"][1]["verdict"], "violated");
    assert_eq!(
        v["properties"][1]["replay_command"],
        "memtx replay traces/no-cascade-I2.trace.json"
    );

    let md_path = dir.join("quick-no-cascade.md");
    r.write_markdown(&md_path).expect("write md");
    let md = std::fs::read_to_string(&md_path).expect("read");
    for needle in [
        "Exhaustive within these bounds",
        "| unique states | 12,345 |",
        "| symmetry reduction | off |",
        "| tiers | medium, external-action |",
        "| write shapes (source confidence scope) | src0 high shared, src2 high shared, src1 high private |",
        "| sources (authority) | src0 mid, src1 mid, src2 high |",
        "**violated (len 6)**",
        "`memtx replay traces/no-cascade-I2.trace.json`",
        "| 2 | 20 |",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in\n{md}");
    }

    let mut early = r.clone();
    early.coverage = Coverage::StoppedEarly {
        reason: "stopped early: max states".into(),
    };
    assert_eq!(early.coverage.to_string(), "stopped early: max states");
    assert!(early.to_markdown().contains("Stopped early: max states"));
    assert!(ManifestEntry::from_report(&early).is_none());
}

/// The outcome every check's exit code follows (0 PASS, 1 FAIL, 3 INCOMPLETE), as a table:
/// a violation fails a run however it ended; a complete run fails on an example never
/// reached; a run that ended early passes only when every property it checked is an
/// example it found, and is incomplete otherwise.
#[test]
fn the_outcome_of_a_run_never_claims_more_than_it_visited() {
    use memtx_checker::report::Outcome::{self, Fail, Incomplete, Pass};
    use Verdict::{ExampleFound, ExampleNotFound, Holds, NotChecked, Violated};
    let early = Coverage::StoppedEarly {
        reason: "stopped early: max states: 100".into(),
    };
    // (what, exhaustive, verdict of I2, of E2, outcome); every other property not checked.
    let rows = [
        ("all decided", true, Holds, ExampleFound, Pass),
        (
            "an example never reached",
            true,
            Holds,
            ExampleNotFound,
            Fail,
        ),
        ("a violation", true, Violated, ExampleFound, Fail),
        ("nothing checked", true, NotChecked, NotChecked, Pass),
        (
            "early: a violation is real",
            false,
            Violated,
            ExampleNotFound,
            Fail,
        ),
        (
            "early: an invariant open",
            false,
            Holds,
            ExampleFound,
            Incomplete,
        ),
        (
            "early: an example not reached yet",
            false,
            NotChecked,
            ExampleNotFound,
            Incomplete,
        ),
        (
            "early: only examples, each found",
            false,
            NotChecked,
            ExampleFound,
            Pass,
        ),
        (
            "early: nothing checked",
            false,
            NotChecked,
            NotChecked,
            Incomplete,
        ),
    ];
    for (what, exhaustive, i2, e2, want) in rows {
        let mut r = report(Variant::Memtx, &[]);
        if !exhaustive {
            r.coverage = early.clone();
        }
        for p in &mut r.properties {
            p.verdict = match p.key.as_str() {
                "I2" => i2,
                "E2" => e2,
                _ => NotChecked,
            };
        }
        assert_eq!(r.outcome(), want, "{what}");
        assert_eq!(r.passed(), want == Pass, "{what}");
        // Each verdict in words, honest about a run that ended early.
        let cell = |key: &str| r.cell(r.property(key).unwrap());
        let (held, missing) = if exhaustive {
            ("holds", "example not found")
        } else {
            ("holds so far (to depth 9)", "not reached yet")
        };
        for (key, verdict) in [("I2", i2), ("E2", e2)] {
            let words = match verdict {
                Holds => held,
                ExampleNotFound => missing,
                Violated => "violated",
                ExampleFound => "example found (len 6)",
                NotChecked => "not checked",
            };
            assert_eq!(cell(key), words, "{what}: {key}");
        }
        let line = r.result_line();
        let word = match want {
            Pass => "result: PASS (",
            Fail => "result: FAIL (",
            Incomplete => "result: INCOMPLETE (stopped by max states: 100; ",
        };
        assert!(line.starts_with(word), "{what}: {line}");
        if want == Pass && !exhaustive {
            assert!(line.contains("visited 12345 states"), "{what}: {line}");
        }
        if want == Pass && exhaustive {
            assert_eq!(
                line, "result: PASS (every invariant holds, every example found)",
                "{what}"
            );
        }
        if want == Fail {
            let named = if i2 == Violated {
                "I2 violated"
            } else {
                "E2 not reached"
            };
            assert!(line.contains(named), "{what}: {line}");
        }
    }
    assert_eq!([Pass, Fail, Incomplete].map(Outcome::exit_code), [0, 1, 3]);
}

#[test]
fn reading_a_bad_report_is_a_user_error() {
    let dir = temp_dir("bad-report");
    let p = dir.join("r.json");
    std::fs::write(&p, "{}").expect("write");
    let e = RunReport::read_json(&p).expect_err("not a report");
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert!(!e.to_string().contains('\n'));
}

#[test]
fn ablation_matrix() {
    let reports = vec![
        report(Variant::Memtx, &[]),
        report(Variant::NoCascade, &["I2"]),
        report(Variant::NoVisibilityScoping, &["I5"]),
    ];
    let m = Matrix::from_reports(&reports);
    let invariants: Vec<&str> = memtx_model::properties::PROPERTIES
        .iter()
        .filter(|p| p.is_invariant())
        .map(|p| p.key)
        .collect();
    assert_eq!(m.properties, invariants);
    assert_eq!(m.rows.len(), 3);
    assert_eq!(m.rows[1].cells[1].text(), "violated (len 6)");
    assert_eq!(m.rows[0].cells[1].text(), "holds");
    let md = m.to_markdown();
    assert!(
        md.contains("| `no-cascade` | holds | violated (len 6)* | holds |"),
        "{md}"
    );
    // no-visibility-scoping is expected to break I5 and I1: I1 held.
    assert_eq!(
        m.deviations(),
        vec!["no-visibility-scoping was expected to break I1 but it holds"]
    );
    assert!(
        md.contains("- no-visibility-scoping was expected to break I1 but it holds"),
        "{md}"
    );
    let all_good = Matrix::from_reports(&reports[..2]);
    assert!(all_good.to_markdown().contains("Every cell agrees"));
    // A variant whose harm only a focused preset shows (rev2-lineage) is not expected to
    // break anything on quick.
    assert!(!memtx_model::config::Variant::Rev2Lineage
        .info()
        .shown_by
        .contains(&"quick"));
    let elsewhere = Matrix::from_reports(&[report(Variant::Rev2Lineage, &[])]);
    assert!(
        elsewhere.deviations().is_empty(),
        "{:?}",
        elsewhere.deviations()
    );
}

#[test]
fn manifest_save_load_compare() {
    let dir = temp_dir("manifest");
    let path = dir.join("manifest.json");
    let mut pinned = Manifest::new();
    pinned.upsert(
        ManifestEntry::from_report(&report(Variant::NoCascade, &["I2"])).expect("exhaustive"),
    );
    pinned.upsert(ManifestEntry::from_report(&report(Variant::Memtx, &[])).expect("exhaustive"));
    pinned.save(&path).expect("save");
    let loaded = Manifest::load(&path).expect("load");
    assert_eq!(
        loaded.entries[0].variant,
        Variant::Memtx,
        "entries are sorted"
    );
    assert_eq!(loaded.entries.len(), 2);
    assert!(loaded.compare(&loaded).is_empty());

    let mut now = loaded.clone();
    now.entries[0].unique += 1;
    now.entries.remove(1);
    now.upsert(ManifestEntry {
        preset: "paper".into(),
        variant: Variant::Memtx,
        symmetry: true,
        unique: 1,
        total: 2,
        depth: 3,
        violated: Vec::new(),
    });
    let drifts = loaded.compare(&now);
    assert_eq!(drifts.len(), 3, "{drifts:?}");
    assert!(matches!(drifts[0], Drift::Changed { .. }));
    assert_eq!(drifts[0].to_string(), "quick / memtx: unique 12345 → 12346");
    assert!(drifts[0].is_failure());
    assert!(matches!(drifts[1], Drift::NotPinned(_)) && !drifts[1].is_failure());
    assert!(matches!(drifts[2], Drift::NotRun(_)) && !drifts[2].is_failure());

    std::fs::write(&path, "{\"format\": \"other\", \"entries\": []}").expect("write");
    assert_eq!(
        Manifest::load(&path).expect_err("wrong format").kind(),
        ErrorKind::WrongFormat
    );
    std::fs::write(&path, "{\"version\": 9, \"entries\": []}").expect("write");
    assert_eq!(
        Manifest::load(&path).expect_err("version").kind(),
        ErrorKind::UnknownVersion
    );
    std::fs::write(&path, "not json").expect("write");
    assert_eq!(
        Manifest::load(&path).expect_err("not json").kind(),
        ErrorKind::NotJson
    );
    assert_eq!(
        Manifest::load(&dir.join("absent.json"))
            .expect_err("absent")
            .kind(),
        ErrorKind::Io
    );
}
