//! Replays every trace in `regressions/`: under its own variant it must reproduce the recorded
//! violation at the recorded step; under the fixed protocol the same steps must either be refused
//! at a named step or hold every invariant.

use memtx_checker::trace::replay::{replay, ReplayError};
use memtx_checker::trace::{Expectation, Trace};
use memtx_model::Variant;
use std::path::Path;

#[test]
fn every_regression_trace_replays_as_recorded_and_is_harmless_under_the_fixed_protocol() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.join("paper")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".trace.json"))
        .collect();
    files.sort();
    assert!(
        files
            .iter()
            .any(|f| f.to_string_lossy().contains("missed-cascade-I2")),
        "the missed-cascade regression is missing"
    );
    assert!(
        files.len() >= 8,
        "expected one trace per ablation variant, found {}",
        files.len()
    );
    for f in files {
        let trace = Trace::read(&f).unwrap();
        let own = replay(&trace, None).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(
            own.expectation_met(),
            "{}: {}",
            f.display(),
            own.verdict_line()
        );
        match replay(&trace, Some(Variant::Memtx)) {
            Ok(fixed) => assert!(
                fixed.meets(&Expectation::all_hold()),
                "{} violates an invariant under the fixed protocol",
                f.display()
            ),
            Err(ReplayError::NotEnabled { .. }) => {} // refused at a named step: the defect's path does not exist
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
}
