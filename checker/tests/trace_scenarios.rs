//! Scenario files (hand-written traces, docs/traces.md): the twelve scripted cases of
//! `regressions/scenarios/` replay as they say, through the library and the `memtx` binary; a
//! wrong expectation fails naming its step; `--write-states` completes a scenario; each trap
//! fails once the defence it exercises is removed; `step_rows` renders a trace's step table.

mod binary_support;
use binary_support::*;

mod trace_support;

use memtx_checker::trace::replay::replay;
use memtx_checker::trace::{step_rows, Trace};
use memtx_model::Variant;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../regressions/scenarios")
}

fn scenario(name: &str) -> PathBuf {
    scenario_dir().join(format!("{name}.json"))
}

fn scenarios() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .expect("regressions/scenarios exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The six families of §12, each with a trap and a control.
const FAMILIES: &[&str] = &[
    "pollution",
    "stale-write",
    "dirty-read",
    "semantic-conflict",
    "laundering",
    "cascade",
];

#[test]
fn every_scenario_replays_as_it_says() {
    let files = scenarios();
    assert_eq!(files.len(), 12, "{files:?}");
    for family in FAMILIES {
        for kind in ["trap", "control"] {
            let f = scenario(&format!("{family}-{kind}"));
            assert!(files.contains(&f), "{} is missing", f.display());
        }
    }
    for f in files {
        let trace = Trace::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let description = trace.description.clone().unwrap_or_default();
        assert!(
            description.len() > 40,
            "{}: no description saying what it shows",
            f.display()
        );
        assert!(
            !trace.has_states(),
            "{}: scenarios are written without states",
            f.display()
        );
        assert!(
            trace.steps.iter().any(|s| s.expect.is_some()),
            "{}: a scenario without a step expectation makes no point",
            f.display()
        );
        let report = replay(&trace, None).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(
            report.expectation_met(),
            "{}: {}",
            f.display(),
            report.verdict_line()
        );
        let out = memtx(
            &["replay", f.to_str().expect("utf-8 path")],
            &scenario_dir(),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            f.display(),
            text(&out)
        );
        assert!(text(&out).contains("expectation met"), "{}", text(&out));
    }
}

#[test]
fn a_trap_fails_once_its_defence_is_removed() {
    let defences = [
        ("pollution", Variant::NoCascade),
        ("stale-write", Variant::NoConflictCheck),
        ("dirty-read", Variant::NoActionGate),
        ("semantic-conflict", Variant::NoConflictCheck),
        ("laundering", Variant::NoPermissionInheritance),
        ("cascade", Variant::NoCascade),
    ];
    for (family, variant) in defences {
        let mut trace = Trace::read(&scenario(&format!("{family}-trap"))).expect("readable");
        trace.config.variant = variant;
        let passes = replay(&trace, None).is_ok_and(|r| r.expectation_met());
        assert!(
            !passes,
            "the {family} trap still passes under {}",
            variant.name()
        );
    }
}

/// Copies `name` into `dir` with `edit` applied to its JSON, and replays the copy.
fn replay_edited(dir: &Path, name: &str, edit: impl Fn(&mut Value)) -> Output {
    let text = std::fs::read_to_string(scenario(name)).expect("readable");
    let mut v: Value = serde_json::from_str(&text).expect("JSON");
    edit(&mut v);
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(&v).expect("JSON")).expect("written");
    memtx(&["replay", file.to_str().expect("utf-8 path")], dir)
}

#[test]
fn a_changed_expectation_fails_naming_the_step_the_record_and_the_difference() {
    let dir = scratch("changed");
    // Step 13 of the cascade trap: the profile r2 is quarantined, not committed.
    let out = replay_edited(&dir, "cascade-trap", |v| {
        v["steps"][12]["expect"]["records"]["r2"]["life"] = json!("Committed");
    });
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("step 13: r2: expected life Committed, got Quarantined"),
        "{t}"
    );
    // A refusal expected for another reason than the model's.
    let out = replay_edited(&dir, "dirty-read-trap", |v| {
        v["steps"][2]["expect"]["refused"] = json!("gate.block.support-not-in-force");
    });
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("step 3: expected it refused for gate.block.support-not-in-force, got refused for gate.block.in-flight"),
        "{t}"
    );
    // A refusal expected of a step the model performs.
    let out = replay_edited(&dir, "dirty-read-control", |v| {
        v["steps"][4]["expect"] = json!({"refused": "gate.block.in-flight"});
    });
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out)
        .contains("step 5: expected it refused for gate.block.in-flight, but it was performed"));
    // A reason the record does not have.
    let out = replay_edited(&dir, "stale-write-trap", |v| {
        v["steps"][5]["expect"]["records"]["r0"]["reason"] = json!("outranked");
    });
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("step 6: r0: expected reason outranked, got stale-write"),
        "{}",
        text(&out)
    );
    // An invariant expected to fail that holds.
    let out = replay_edited(&dir, "laundering-control", |v| {
        v["steps"][4]["expect"]["violates"] = json!(["I3"]);
    });
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("step 5: expected I3 to be violated, but it holds"));
}

#[test]
fn a_malformed_expectation_is_one_line_and_exit_2() {
    let dir = scratch("malformed");
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"refused": "gate.block.nowhere"}),
            "step 3: expect.refused",
        ),
        (
            json!({"records": {"r9": {"life": "Committed"}}}),
            "step 3: expect.records.r9",
        ),
        (json!({"records": {"r0": {"life": "Comitted"}}}), "life"),
        (
            json!({"records": {"r0": {"colour": "red"}}}),
            "unknown field",
        ),
        (json!({"violates": ["E1"]}), "example"),
        (json!({"refusd": "x"}), "unknown field"),
        (json!("refused"), "expected an object"),
    ];
    for (expect, mentions) in cases {
        let out = replay_edited(&dir, "dirty-read-trap", |v| {
            v["steps"][2]["expect"] = expect.clone();
        });
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{expect}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(stderr.contains(mentions), "'{mentions}' not in {stderr}");
    }
}

#[test]
fn write_states_completes_a_scenario_and_the_completed_file_replays() {
    let dir = scratch("states");
    let src = scenario("cascade-trap");
    let out = memtx(
        &[
            "replay",
            src.to_str().expect("utf-8 path"),
            "--write-states",
            "done.trace.json",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let done = Trace::read(&dir.join("done.trace.json")).expect("a trace");
    assert!(done.has_states(), "states filled in");
    assert_eq!(done.steps.len(), 13);
    assert_eq!(done.steps[0].label, "a0 Begin Medium CommittedRead");
    assert!(done.steps[12].expect.is_some(), "the expectations are kept");
    let report = replay(&done, None).expect("replays");
    let last = done.final_state().expect("a final state");
    assert_eq!(&report.steps[13].state, last);
    let again = memtx(&["replay", "done.trace.json"], &dir);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    // A completed state that is then edited is compared, and refused.
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("done.trace.json")).expect("file"))
            .expect("JSON");
    v["steps"][2]["state"]["next_seq"] = json!(9);
    std::fs::write(dir.join("edited.json"), v.to_string()).expect("written");
    let out = memtx(&["replay", "edited.json"], &dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("step 3"), "{}", text(&out));
    // Under another variant the states would not be the trace's: refused.
    let out = memtx(
        &[
            "replay",
            src.to_str().expect("utf-8 path"),
            "--variant",
            "no-cascade",
            "--write-states",
            "x.json",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!dir.join("x.json").exists());
}

#[test]
fn no_property_means_every_invariant_holds_unless_a_step_says_it_is_violated() {
    // The missed-cascade regression, as a scenario: no states, no property, no expectation.
    let saved = Trace::read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../regressions/quick/missed-cascade-I2.trace.json"),
    )
    .expect("the regression trace");
    let n = saved.steps.len();
    let mut v = serde_json::to_value(&saved).expect("JSON");
    let obj = v.as_object_mut().expect("object");
    for k in [
        "property",
        "expectation",
        "initial_state",
        "tool",
        "command",
    ] {
        obj.remove(k);
    }
    for s in v["steps"].as_array_mut().expect("steps") {
        let s = s.as_object_mut().expect("a step");
        s.remove("state");
        s.remove("label");
    }
    let plain = Trace::from_json_value(v.clone(), "s.json").expect("a scenario");
    let report = replay(&plain, None).expect("replays");
    assert!(!report.expectation_met(), "I2 fails: all-hold is not met");
    assert!(report
        .verdict_line()
        .contains(&format!("I2 fails at step {n}")));
    v["steps"][n - 1]["expect"] = json!({"violates": ["I2"]});
    let excused = Trace::from_json_value(v.clone(), "s.json").expect("a scenario");
    let report = replay(&excused, None).expect("replays");
    assert!(report.expectation_met(), "{}", report.verdict_line());
    // Said of the step before, where I2 still holds: a mismatch naming that step.
    v["steps"][n - 1]
        .as_object_mut()
        .expect("step")
        .remove("expect");
    v["steps"][n - 2]["expect"] = json!({"violates": ["I2"]});
    let early = Trace::from_json_value(v, "s.json").expect("a scenario");
    let report = replay(&early, None).expect("replays");
    assert!(!report.expectation_met());
    assert_eq!(report.mismatches[0].step, n - 1);
}

#[test]
fn a_preset_config_takes_overrides_and_refuses_unknown_fields() {
    let base = |config: Value| json!({"format": "memtx-trace", "version": 1, "config": config, "steps": [{"action": {"op": "tick"}}]});
    let t = Trace::from_json_value(
        base(json!({"preset": "lineage", "bounds": {"records": 5}, "domain": {"observe": true}})),
        "c.json",
    )
    .expect("overrides");
    assert_eq!(t.config.bounds.records, 5);
    assert!(t.config.domain.observe);
    assert_eq!(t.config.variant, Variant::Memtx);
    assert_eq!(
        t.config.domain.belief_parents, 1,
        "the rest is the preset's"
    );
    let e = Trace::from_json_value(
        base(json!({"preset": "quick", "domain": {"obsrve": true}})),
        "c.json",
    )
    .expect_err("unknown domain field");
    assert!(e.to_string().contains("obsrve"), "{e}");
    let e = Trace::from_json_value(base(json!({"preset": "quick", "colour": 1})), "c.json")
        .expect_err("unknown config field");
    assert!(e.to_string().contains("config.colour"), "{e}");
    let e = Trace::from_json_value(base(json!({"preset": "tiny"})), "c.json")
        .expect_err("unknown preset");
    assert!(e.to_string().contains(": config:"), "{e}");
    let e = Trace::from_json_value(
        base(json!({"preset": "quick", "bounds": {"agents": 9}})),
        "c.json",
    )
    .expect_err("invalid bounds");
    assert!(e.to_string().contains("agents"), "{e}");
}

#[test]
fn step_rows_give_action_changes_and_failing_invariants() {
    let cascade = Trace::read(&scenario("cascade-trap")).expect("readable");
    let rows = step_rows(&cascade).expect("replays");
    assert_eq!(rows.len(), 13);
    assert_eq!(rows[0].step, 1);
    assert_eq!(rows[0].action, "a0 Begin Medium CommittedRead");
    assert_eq!(rows[0].changed, "—");
    assert_eq!(rows[1].changed, "r0 added (Tentative)");
    assert_eq!(rows[2].changed, "r0 Tentative→Committed");
    let last = &rows[12].changed;
    for part in [
        "r0 Committed→Revoked (revocation)",
        "r1 Committed→Quarantined (rebuild)",
        "r2 Committed→Quarantined (rebuild)",
        "r3 Committed→Revoked (cascade) effect executed→leaked",
        "r4 Committed→Revoked (cascade) effect executed→compensated",
    ] {
        assert!(last.contains(part), "{part} not in {last}");
    }
    assert!(rows.iter().all(|r| r.failing.is_empty()));
    let dirty = Trace::read(&scenario("dirty-read-trap")).expect("readable");
    let rows = step_rows(&dirty).expect("replays");
    assert_eq!(rows[2].changed, "refused: gate.block.in-flight");
    let missed = trace_support::missed_cascade_trace();
    let rows = step_rows(&missed).expect("replays");
    let last = rows.last().expect("a row");
    assert_eq!(last.failing, ["I2"]);
    assert!(rows[..rows.len() - 1].iter().all(|r| r.failing.is_empty()));
}
