//! A real trace survives writing, reading and replaying; its expectation is met.

mod binary_support;
mod trace_support;

use memtx_checker::trace::replay::replay;
use memtx_checker::trace::{
    itf_path_for, replay_command, trace_path, Expectation, ExpectationKind, Trace, TRACE_FORMAT,
    TRACE_VERSION,
};
use memtx_model::{State, Variant};
use std::path::Path;
use trace_support::*;

#[test]
fn scripted_trace_roundtrips_and_replays() {
    let trace = scripted_trace();
    assert_eq!(trace.len(), 4);
    assert_eq!(trace.steps[0].label, "a0 Begin Medium CommittedRead");
    let dir = temp_dir("scripted");
    let file = dir.join("scripted.trace.json");
    trace.write(&file).expect("write");
    let back = Trace::read(&file).expect("read");
    assert_eq!(back, trace);
    let report = replay(&back, None).expect("replays");
    assert!(report.expectation_met(), "{}", report.render_text());
    assert_eq!(report.steps.len(), 5);
    assert!(report.steps[1]
        .changes
        .iter()
        .any(|c| c.starts_with("a0 opened")));
    assert!(report.steps[2]
        .changes
        .iter()
        .any(|c| c.starts_with("added r0")));
    assert!(report.steps[3]
        .changes
        .iter()
        .any(|c| c.contains("Tentative→Committed")));
    assert!(report.steps[3].changes.iter().any(|c| c == "a0 closed"));
    assert!(report.steps[4]
        .changes
        .iter()
        .any(|c| c.contains("revocation requested")));
}

#[test]
fn discovered_violation_roundtrips_and_its_expectation_is_met() {
    let trace = missed_cascade_trace();
    assert_eq!(trace.format, TRACE_FORMAT);
    assert_eq!(trace.version, TRACE_VERSION);
    assert!(trace.tool.starts_with("memtx "));
    assert_eq!(trace.expectation.kind, ExpectationKind::Violation);
    assert_eq!(trace.expectation.step, Some(trace.len()));
    assert_eq!(trace.property_key(), "I2");

    let text = trace.to_json_string();
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["format"], "memtx-trace");
    assert_eq!(v["config"]["variant"], "missed-cascade");
    assert_eq!(v["property"]["kind"], "always");
    assert_eq!(v["expectation"]["kind"], "violation");
    assert!(v["steps"][0]["action"]["op"].is_string());
    assert!(v["initial_state"]["records"].is_array());

    let dir = temp_dir("roundtrip");
    let file = trace_path(&dir, trace.config.variant, trace.property_key());
    assert_eq!(file, dir.join("missed-cascade-I2.trace.json"));
    trace.write(&file).expect("write");
    let back = Trace::read(&file).expect("read back");
    assert_eq!(back, trace);

    let report = replay(&back, None).expect("replays");
    assert!(report.expectation_met(), "{}", report.render_text());
    assert_eq!(report.first_failure("I2"), Some(trace.len()));
    let text = report.render_text();
    assert!(text.contains("FAILS: I2"), "{text}");
    assert!(text.contains("expectation met"), "{text}");
    let json = report.to_json();
    assert_eq!(json["expectation_met"], true);
    assert_eq!(
        json["steps"].as_array().map(Vec::len),
        Some(trace.len() + 1)
    );

    // Not met when the recorded step is off by one.
    assert!(!report.meets(&Expectation::violation("I2", trace.len() - 1)));
    assert!(!report.meets(&Expectation::all_hold()));
}

#[test]
fn defect_trace_under_the_fixed_protocol() {
    // docs/protocol.md §10: the missed-cascade trace replayed against the fixed protocol shows no
    // violation (when its actions are all enabled there).
    let trace = missed_cascade_trace();
    match replay(&trace, Some(Variant::Memtx)) {
        Ok(report) => {
            assert!(report.overridden);
            assert!(
                report.meets(&Expectation::all_hold()),
                "{}",
                report.render_text()
            );
            assert!(!report.expectation_met());
        }
        Err(e) => panic!("the defect trace does not replay under memtx: {e}"),
    }
    // Overriding with the recorded variant is not an override: states are compared.
    let same = replay(&trace, Some(Variant::MissedCascade)).expect("replays");
    assert!(!same.overridden);
    assert!(same.expectation_met());
}

#[test]
fn example_trace_expectation() {
    let (cfg, def, path) = discovery(Variant::Memtx, "E4");
    let trace = Trace::from_path(&cfg, def, &path, "memtx check --preset quick").expect("trace");
    assert_eq!(trace.expectation, Expectation::example("E4", trace.len()));
    let report = replay(&trace, None).expect("replays");
    assert!(report.expectation_met(), "{}", report.render_text());
    assert!(report
        .steps
        .last()
        .is_some_and(|s| s.examples.contains(&"E4".to_string())));
}

#[test]
fn file_names() {
    let p = Path::new("out/no-cascade-I2.trace.json");
    assert_eq!(itf_path_for(p), Path::new("out/no-cascade-I2.itf.json"));
    assert_eq!(
        itf_path_for(Path::new("x.json")),
        Path::new("x.json.itf.json")
    );
    assert_eq!(
        replay_command(p),
        "memtx replay out/no-cascade-I2.trace.json"
    );
    assert_eq!(
        replay_command(Path::new("my dir/t.json")),
        "memtx replay 'my dir/t.json'"
    );
}

#[test]
fn from_path_rejects_malformed_paths_as_internal_bugs() {
    let cfg = quick(Variant::Memtx);
    let def = memtx_model::properties::PropertyDef::find("I1").expect("I1");
    let e = Trace::from_path(&cfg, def, &[], "x").expect_err("empty path");
    assert!(e.to_string().starts_with("[memtx internal bug]"));
    let s = State::initial();
    let e = Trace::from_path(&cfg, def, &[(s.clone(), None), (s, None)], "x").expect_err("gap");
    assert!(e.to_string().starts_with("[memtx internal bug]"));
}
