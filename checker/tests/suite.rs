//! The suite (issue: exhaustive must mean the whole protocol): `memtx suite --quick` runs in
//! `cargo test`; its presets together exercise every rule of the protocol, each is exhaustive
//! and holds every invariant, and each preset's counts match `reports/manifest.json`. Rule
//! coverage is a property of the model: the same on any number of threads.

mod binary_support;

use memtx_checker::cli::SuiteArgs;
use memtx_checker::cmd::suite::run_suite;
use memtx_checker::engine::{run, Engine, RunOptions};
use memtx_checker::report::{Manifest, RuleCoverage};
use memtx_model::presets::{preset, SUITE};
use memtx_model::rules::RULES;
use memtx_model::{MemTx, Variant};
use std::path::Path;

fn manifest() -> Manifest {
    Manifest::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/manifest.json"))
        .expect("reports/manifest.json")
}

#[test]
fn the_quick_suite_exercises_every_rule_and_matches_the_manifest() {
    let scratch = binary_support::scratch("traces");
    let traces = scratch.to_path_buf();
    let args = SuiteArgs {
        quick: true,
        json: true,
        report: None,
        threads: 2,
        traces,
        simulate: None,
    };
    let suite = run_suite(&args, "memtx suite --quick").expect("the suite runs");
    assert!(suite.passed(), "{}", suite.render_text());
    assert_eq!(suite.union.total, RULES.len());
    assert_eq!(
        suite.union.exercised,
        RULES.len(),
        "{}",
        suite.union.summary_line()
    );
    let expected: Vec<&str> = SUITE.iter().filter(|e| e.quick).map(|e| e.name).collect();
    let ran: Vec<&str> = suite
        .presets
        .iter()
        .map(|r| r.config.preset.as_str())
        .collect();
    assert_eq!(ran, expected);
    let pinned = manifest();
    for r in &suite.presets {
        assert!(
            r.coverage.is_exhaustive(),
            "{} stopped early",
            r.config.preset
        );
        let e = pinned
            .get(&r.config.preset, Variant::Memtx, false)
            .unwrap_or_else(|| panic!("{} × memtx is pinned in the manifest", r.config.preset));
        assert_eq!(
            (r.unique_states, r.total_states, r.max_depth),
            (e.unique, e.total, e.depth),
            "{} drifted from reports/manifest.json",
            r.config.preset
        );
        // No single focused preset covers everything: the suite is needed.
        let own = r
            .rules
            .as_ref()
            .expect("the fast engine collects rule coverage");
        assert!(
            own.exercised < own.total,
            "{} alone covers every rule",
            r.config.preset
        );
    }
}

fn coverage(name: &str, threads: usize) -> RuleCoverage {
    let cfg = preset(name, Variant::Memtx).expect("a preset");
    let out = run(&MemTx::new(cfg), &RunOptions::fast(threads), None).expect("runs");
    RuleCoverage::from_tallies(out.rule_tallies.as_deref().expect("tallies"))
}

#[test]
fn rule_coverage_is_the_same_on_any_number_of_threads() {
    for name in ["lineage", "observations"] {
        let one = coverage(name, 1);
        assert!(one.exercised > 40, "{name}: {}", one.summary_line());
        assert_eq!(one, coverage(name, 2), "{name}: 1 and 2 threads differ");
        assert_eq!(one, coverage(name, 3), "{name}: 1 and 3 threads differ");
    }
}

#[test]
fn the_stateright_engine_says_it_collects_no_coverage() {
    let cfg = preset("scopes", Variant::Memtx).expect("a preset");
    let opts = RunOptions {
        engine: Engine::Stateright,
        ..RunOptions::fast(1)
    };
    let out = run(&MemTx::new(cfg), &opts, None).expect("runs");
    assert!(out.rule_tallies.is_none());
    // Every invariant holds, so its search runs to the end: exhaustive.
    assert_eq!(out.stopped_early, None);
}

#[test]
fn the_stateright_engine_stopped_at_its_only_discovery_is_not_exhaustive() {
    // stateright's BFS ends once every property has a discovery: with one violated property
    // selected, that is at the violation, with states left unexplored.
    let cfg = preset("quick", Variant::NoCascade).expect("a preset");
    let i2 = memtx_model::properties::PropertyDef::find("I2").expect("I2");
    let opts = RunOptions {
        engine: Engine::Stateright,
        ..RunOptions::fast(1)
    };
    let out = run(&MemTx::with_properties(cfg.clone(), vec![i2]), &opts, None).expect("runs");
    let reason = out.stopped_early.expect("not exhaustive");
    assert!(
        reason.contains("every selected property has a discovery"),
        "{reason}"
    );
    let whole = run(&MemTx::new(cfg), &RunOptions::fast(1), None).expect("runs");
    assert!(
        out.unique < whole.unique,
        "{} of {}",
        out.unique,
        whole.unique
    );
}

#[test]
fn a_failing_preset_names_its_counterexample_file_and_replay_command() {
    let scratch = binary_support::scratch("fail");
    let traces = scratch.to_path_buf();
    let args = memtx_checker::cmd::reference::reference_args("quick", "no-cascade", traces.clone());
    let report =
        memtx_checker::cmd::check::check(&args, "memtx check --preset quick --variant no-cascade")
            .expect("runs");
    let suite =
        memtx_checker::cmd::suite::SuiteReport::from_reports(vec![report], None, true, "test");
    let text = suite.render_text();
    assert!(!suite.passed());
    let line = text
        .lines()
        .find(|l| l.starts_with("quick I2 violated: counterexample of "))
        .unwrap_or_else(|| panic!("no counterexample line in\n{text}"));
    let saved = line.rsplit("saved to ").next().expect("a path");
    assert!(Path::new(saved).is_file(), "{saved} not written");
    assert!(
        text.contains(&format!("  replay: memtx replay {saved}")),
        "{text}"
    );
}

#[test]
fn the_suites_simulation_finds_each_defect_under_its_variant_and_none_under_the_protocol() {
    use memtx_checker::cmd::suite::{simulate_all, simulation_plan, Budget, SuiteReport};
    let scratch = binary_support::scratch("sim");
    let traces = scratch.to_path_buf();
    // The plan runs the protocol once and every variant once per property it must break.
    let plan = simulation_plan();
    assert_eq!(plan.first(), Some(&("memtx", None)));
    for v in memtx_model::config::VARIANTS.iter().skip(1) {
        for key in v.expected_to_break {
            assert!(plan.contains(&(v.name, Some(*key))), "{} {key}", v.name);
        }
    }
    // Walks, not time: the same walks on any machine. Seed 1 finds each of these within
    // 8,500 walks (paper-provenance's I16 at walk 8,447).
    let some = [
        ("memtx", None),
        ("no-cascade", Some("I2")),
        ("paper-provenance", Some("I15")),
        ("paper-provenance", Some("I16")),
    ];
    let sim = simulate_all(&Budget::Walks(10_000), &some, 2, &traces, false).expect("runs");
    assert_eq!(sim.runs.len(), some.len());
    for run in &sim.runs {
        assert!(
            run.as_expected(),
            "{} {:?}: {}",
            run.variant,
            run.property,
            run.outcome()
        );
        assert_eq!(
            run.replays,
            run.violation.as_ref().map(|_| true),
            "the suite replayed it"
        );
        if let Some(v) = &run.violation {
            assert!(v.steps <= v.walk_steps, "{}", run.outcome());
            let trace = memtx_checker::trace::Trace::read(std::path::Path::new(&v.trace))
                .expect("the trace is saved");
            let replayed = memtx_checker::trace::replay::replay(&trace, None).expect("replays");
            assert!(replayed.expectation_met(), "{}", replayed.verdict_line());
        }
    }
    assert_eq!(sim.runs[0].walks, 10_000, "memtx ran every walk");
    // A defect not found within the budget fails the suite, and says how to go on.
    let short = simulate_all(
        &Budget::Walks(64),
        &[("paper-gate", Some("I9"))],
        2,
        &traces,
        false,
    )
    .expect("runs");
    let run = &short.runs[0];
    assert!(!run.as_expected());
    // A trace that does not replay fails the run even when its property was violated.
    let mut broken = sim.runs[1].clone();
    assert!(broken.as_expected());
    broken.replays = Some(false);
    assert!(!broken.as_expected());
    assert!(
        broken.outcome().contains("does NOT replay"),
        "{}",
        broken.outcome()
    );
    assert!(
        run.outcome().contains("I9 NOT FOUND in 64 walks"),
        "{}",
        run.outcome()
    );
    assert!(
        run.outcome().contains("--walks 64 --seed 1"),
        "{}",
        run.outcome()
    );
    let suite = SuiteReport::from_reports(Vec::new(), Some(short), true, "test");
    assert!(
        suite
            .failures
            .iter()
            .any(|f| f.starts_with("simulation of full under paper-gate: I9 NOT FOUND")),
        "{:?}",
        suite.failures
    );
}
