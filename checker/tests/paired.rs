//! The paired comparison of `reports/availability.md` (issue 35): one sequence of operations
//! under two protocols. Its shortest traces are replayed here through the model's own step
//! function, one protocol at a time, independently of the product that found them: the left
//! protocol must perform every operation, the right one every operation but the last call,
//! which it must refuse (and the other way round).

use memtx_checker::paired::{self, Outcome, PairedOutcome, Witness};
use memtx_model::machine::step;
use memtx_model::ops::Refusal;
use memtx_model::presets::preset;
use memtx_model::{Config, Op, State, Variant};

fn cfg(name: &str, variant: &str) -> Config {
    let v = Variant::from_name(variant).expect("a variant");
    preset(name, v).expect("a preset")
}

/// Plays `ops` under `cfg`: `Ok(())` if every operation is performed, else the index of the
/// first refused one and why.
fn play(cfg: &Config, ops: &[Op]) -> Result<(), (usize, Refusal)> {
    let mut s = State::initial();
    for (i, op) in ops.iter().enumerate() {
        s = step(cfg, &s, op).map_err(|why| (i, why))?;
    }
    Ok(())
}

/// The trace a paired run names for one direction: performed in full by `executes`, refused
/// at its last operation (an irreversible call) by `refuses`.
fn check_trace(w: &Witness, executes: &Config, refuses: &Config) {
    let ops = &w.ops[..];
    assert!(
        matches!(
            ops.last(),
            Some(Op::CallTool {
                reversible: false,
                ..
            })
        ),
        "the trace ends in an irreversible call: {ops:?}"
    );
    assert_eq!(play(executes, ops), Ok(()), "{ops:?}");
    match play(refuses, ops) {
        Err((i, why)) => {
            assert_eq!(i, ops.len() - 1, "refused before its last call: {ops:?}");
            assert_eq!(w.refusal, why.to_string());
        }
        Ok(()) => panic!("both protocols execute {ops:?}"),
    }
}

fn run(preset: &str, right: &str) -> (Config, Config, PairedOutcome) {
    let (l, r) = (cfg(preset, "memtx"), cfg(preset, right));
    let out = paired::run(l.clone(), r.clone(), 2, None).expect("an exhaustive paired run");
    (l, r, out)
}

#[test]
fn the_paper_protocol_executes_calls_revision_3_blocks_on_quick_and_each_trace_replays() {
    let (l, r, out) = run("quick", "paper-provenance");
    assert!(out.states > 0);
    let right_only =
        out.count(Outcome::RightOnlyGate).steps + out.count(Outcome::RightOnlyDisabled).steps;
    assert!(
        right_only > 0,
        "quick: paper-provenance executes something memtx refuses"
    );
    assert!(out.count(Outcome::BothExecute).steps > 0);
    let trace = out
        .right_only
        .as_ref()
        .expect("a shortest right-only trace");
    check_trace(trace, &r, &l);
    // The shortest trace is as long as the first step the outcome was counted at.
    let first = [Outcome::RightOnlyGate, Outcome::RightOnlyDisabled]
        .iter()
        .map(|&o| out.count(o))
        .filter(|c| c.steps > 0)
        .map(|c| c.first_step)
        .min();
    assert_eq!(first, Some(trace.ops.len()));
    if let Some(trace) = &out.left_only {
        check_trace(trace, &l, &r);
    }
}

#[test]
fn a_protocol_paired_with_itself_never_parts() {
    let (_, _, out) = run("evidence", "memtx");
    for o in [
        Outcome::LeftOnlyGate,
        Outcome::LeftOnlyDisabled,
        Outcome::RightOnlyGate,
        Outcome::RightOnlyDisabled,
        Outcome::OtherLeftOnly,
        Outcome::OtherRightOnly,
    ] {
        assert_eq!(out.count(o).steps, 0, "{o:?}");
    }
    assert!(out.left_only.is_none() && out.right_only.is_none());
    // In lockstep with itself the product is the protocol: the same distinct states as a
    // plain run.
    let plain = memtx_checker::engine::run(
        &memtx_model::MemTx::new(cfg("evidence", "memtx")),
        &memtx_checker::engine::RunOptions::fast(2),
        None,
    )
    .expect("a plain run");
    assert_eq!(out.states, plain.unique);
}

/// The paired row of `preset` with `variant` in `reports/availability.md`: its cells after the
/// variant's name (states, then one count per outcome).
fn paired_row_in_report(preset: &str, variant: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/availability.md");
    let report = std::fs::read_to_string(&path).expect("reports/availability.md");
    let heading = format!("## Preset `{preset}`");
    let section = report
        .split("\n## ")
        .find(|s| format!("## {s}").starts_with(&heading))
        .unwrap_or_else(|| panic!("no section {heading}"));
    let paired = section
        .split("Paired, on the same operations:")
        .nth(1)
        .unwrap_or_else(|| panic!("no paired table under {heading}"));
    let start = format!("| `{variant}` |");
    let line = paired
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no paired row for {variant} under {heading}"));
    line.trim_matches('|')
        .split('|')
        .skip(1)
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn the_reports_paired_rows_are_what_a_fresh_paired_run_finds() {
    for (preset, variant) in [("evidence", "paper-provenance"), ("scopes", "rev2-scopes")] {
        let (_, _, out) = run(preset, variant);
        let mut fresh = vec![out.states.to_string()];
        fresh.extend(Outcome::ALL.iter().map(|&o| out.count(o).steps.to_string()));
        assert_eq!(
            paired_row_in_report(preset, variant),
            fresh,
            "{preset} paired with {variant}: regenerate with `memtx reference --paper`"
        );
    }
}
