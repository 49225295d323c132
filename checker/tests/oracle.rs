//! The mutation-testing oracle (`reports/mutants.md`): the protocol passes the quick suite.
//!
//! cargo-mutants seeds one defect at a time into the protocol's files and runs this test
//! alone (`.cargo/mutants.toml`). It judges only what the protocol promises, never how many
//! states there are: on every preset of the quick suite every invariant holds and every
//! example the preset must reach is reached, and together the presets exercise every rule of
//! the protocol. It checks the presets cheapest first and stops at the first violated
//! invariant, so that most caught mutants cost a fraction of a second; a mutant that breaks
//! no invariant but leaves an example unreached or a rule unexercised (a check that refuses
//! too much) is reported after every preset ran, as "caught only by non-vacuity". Then every
//! variant of §10 must still show a violation it is expected to show on `quick`, or on the
//! focused presets that show it, judging only those properties and only until they are
//! decided (variants are seeded defects: a mutant that disarms one is a broken promise too).
//! A mutant it lets through is either equivalent (nothing a property can observe changes) or
//! a missing property or domain, and `reports/mutants.md` says which.

mod binary_support;

use memtx_checker::cmd::check::check;
use memtx_checker::cmd::reference::reference_args;
use memtx_checker::report::{RuleCoverage, Verdict};
use memtx_model::config::VARIANTS;
use memtx_model::presets::SUITE;
use memtx_model::Variant;

#[test]
fn the_protocol_passes_the_quick_suite() {
    // Removed when the test passes: cargo-mutants runs it once per mutant.
    let scratch = binary_support::scratch("traces");
    let traces = scratch.to_path_buf();
    // Cheapest first (distinct states in reports/manifest.json).
    let order = [
        "scopes",
        "observations",
        "evidence",
        "lineage",
        "quick",
        "content",
        "provenance",
        "interference",
        "isolation",
        "expiry",
    ];
    assert_eq!(
        {
            let mut o = order.to_vec();
            o.sort_unstable();
            o
        },
        {
            let mut s: Vec<&str> = SUITE.iter().filter(|e| e.quick).map(|e| e.name).collect();
            s.sort_unstable();
            s
        },
        "the oracle runs exactly the quick suite"
    );
    // Invariants first, on every preset (a violation ends the test at once, naming it);
    // the non-vacuity failures (an example not reached, a rule never exercised) are reported
    // only if no invariant broke, so the message says which kind of promise a mutant broke.
    let mut coverages = Vec::new();
    let mut vacuous = Vec::new();
    for name in order {
        let mut args = reference_args(name, "memtx", traces.clone());
        args.threads = 1; // cargo-mutants runs two jobs on two cores
        let r = check(&args, "oracle").unwrap_or_else(|e| panic!("{name}: {}", e.message()));
        assert!(r.coverage.is_exhaustive(), "{name}: {}", r.coverage);
        let violated: Vec<&str> = r
            .properties
            .iter()
            .filter(|p| p.verdict == Verdict::Violated)
            .map(|p| p.key.as_str())
            .collect();
        assert!(
            violated.is_empty(),
            "caught by an invariant: {name}: {} violated",
            violated.join(", ")
        );
        vacuous.extend(
            r.properties
                .iter()
                .filter(|p| p.verdict == Verdict::ExampleNotFound)
                .map(|p| format!("{name}: {} not reached", p.key)),
        );
        coverages.push(r.rules.expect("the fast engine counts rules"));
    }
    let union = RuleCoverage::union(&coverages);
    if !union.never().is_empty() {
        vacuous.push(union.summary_line());
    }
    assert!(
        vacuous.is_empty(),
        "caught only by non-vacuity: {}",
        vacuous.join("; ")
    );
    for v in VARIANTS.iter().filter(|v| v.variant != Variant::Memtx) {
        // On quick, or on the focused presets that show what quick cannot (cheapest first,
        // stopping at the first that breaks).
        let presets: &[&str] = if v.shown_by.is_empty() {
            &["quick"]
        } else {
            v.shown_by
        };
        let broken = presets.iter().any(|preset| {
            let mut args = reference_args(preset, v.name, traces.clone());
            args.threads = 1;
            // Only the properties it must break, and only until they are decided: a
            // variant's counterexample lies a few levels deep (`--until-decided`).
            args.properties = v.expected_to_break.iter().map(|k| k.to_string()).collect();
            args.until_decided = true;
            let r =
                check(&args, "oracle").unwrap_or_else(|e| panic!("{}: {}", v.name, e.message()));
            v.expected_to_break.iter().any(|k| {
                r.property(k)
                    .is_some_and(|p| p.verdict == Verdict::Violated)
            })
        });
        assert!(
            broken,
            "caught by a variant: {} no longer breaks any of {:?} on {presets:?}",
            v.name, v.expected_to_break
        );
    }
}
