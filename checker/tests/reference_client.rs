//! The reference client (`conformance/reference`, an implementation of MemTX that shares no code
//! with the model) judged by `memtx validate-log`: its logs conform on the scripted scenarios
//! and on random operation sequences over the whole protocol it implements; each of its
//! switchable defects is reported as a divergence at the first event where it shows (the first
//! event whose outcome differs from the correct client's).

use memtx_checker::log::emit::emit_run;
use memtx_checker::log::names::{event_name, LogOptions};
use memtx_checker::simulate::swarm::Rng;
use memtx_model::machine::{candidate_ops, step};
use memtx_model::{Config, Op, State, Variant};
use memtx_reference::{run_script, Defect};
use std::path::{Path, PathBuf};

mod binary_support;

/// The operations the reference client implements.
const SUPPORTED: [&str; 10] = [
    "tick",
    "begin",
    "stage",
    "commit",
    "abort",
    "call-tool",
    "request-revocation",
    "apply-revocation",
    "read",
    "end-session",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `full` without what the client leaves out (observations, reviews).
fn domain() -> Config {
    let mut cfg = memtx_model::presets::preset("full", Variant::Memtx).expect("full");
    cfg.domain.observe = false;
    cfg.domain.reviews = false;
    cfg
}

/// Random walks over `cfg` through the supported operations (refused ones kept).
fn walks(cfg: &Config, n: u64, seed: u64) -> Vec<Vec<Op>> {
    let mut out = Vec::new();
    let mut candidates = Vec::new();
    for w in 0..n {
        let mut rng = Rng::for_walk(seed, w);
        let mut state = State::initial();
        let mut ops = Vec::new();
        for _ in 0..(8 + rng.below(16)) {
            candidates.clear();
            candidate_ops(cfg, &state, &mut candidates);
            candidates.retain(|op| SUPPORTED.contains(&event_name(op)));
            if candidates.is_empty() {
                break;
            }
            let op = candidates.swap_remove(rng.below(candidates.len() as u64) as usize);
            if let Ok(post) = step(cfg, &state, &op) {
                state = post;
            }
            ops.push(op);
        }
        out.push(ops);
    }
    out
}

/// Validates `log` (one run) under `memtx`: the run's divergence, if any.
fn judge(dir: &Path, log: &str) -> Option<memtx_checker::log::validate::Divergence> {
    let path = dir.join("client.jsonl");
    std::fs::write(&path, log).expect("written");
    let mut out = None;
    memtx_checker::log::validate_log(&path, &LogOptions::complete(Variant::Memtx), |run| {
        out = run.result.divergence.clone();
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}\n{log}"));
    out
}

fn script(cfg: &Config, ops: &[Op], name: &str) -> String {
    emit_run(name, cfg, ops).join("\n") + "\n"
}

#[test]
fn the_correct_client_conforms_on_random_sequences() {
    let dir = binary_support::scratch("random");
    let cfg = domain();
    let mut events = 0;
    for (i, ops) in walks(&cfg, 1500, 1).iter().enumerate() {
        let log = run_script(&script(&cfg, ops, &format!("walk-{i}")), &[]).expect("runs");
        if let Some(d) = judge(&dir, &log) {
            panic!(
                "walk {i}: event {}: {} ({})\n{log}",
                d.event, d.what, d.action
            );
        }
        events += ops.len();
    }
    assert!(events > 15_000, "{events} events");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_correct_client_conforms_on_the_scripted_scenarios() {
    let dir = binary_support::scratch("scenarios");
    let mut run = 0;
    for entry in std::fs::read_dir(root().join("regressions/scenarios")).expect("scenarios") {
        let path = entry.expect("entry").path();
        let trace = memtx_checker::trace::Trace::read(&path).expect("scenario");
        let ops: Vec<Op> = trace.steps.iter().map(|s| s.action.clone()).collect();
        if !ops.iter().all(|op| SUPPORTED.contains(&event_name(op))) {
            continue;
        }
        let mut cfg = trace.config.clone();
        cfg.variant = Variant::Memtx;
        let log = run_script(&script(&cfg, &ops, "scenario"), &[]).expect("runs");
        assert_eq!(judge(&dir, &log), None, "{}\n{log}", path.display());
        run += 1;
    }
    assert!(run >= 6, "{run} scenarios within the client's scope");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_defect_is_a_divergence_at_the_first_event_where_it_shows() {
    let dir = binary_support::scratch("defects");
    let cfg = domain();
    let scripts: Vec<String> = walks(&cfg, 3000, 2)
        .iter()
        .enumerate()
        .map(|(i, ops)| script(&cfg, ops, &format!("walk-{i}")))
        .collect();
    for defect in Defect::ALL {
        let mut caught = 0;
        for s in &scripts {
            let good = run_script(s, &[]).expect("runs");
            let bad = run_script(s, &[defect]).expect("runs");
            if good == bad {
                continue;
            }
            // The first event whose line differs (line 0 is the header).
            let first = good
                .lines()
                .zip(bad.lines())
                .position(|(a, b)| a != b)
                .expect("a differing line");
            let d = judge(&dir, &bad)
                .unwrap_or_else(|| panic!("{}: the defective log conforms\n{bad}", defect.name()));
            assert_eq!(d.event, first, "{}: {}\n{bad}", defect.name(), d.what);
            caught += 1;
            if caught == 5 {
                break;
            }
        }
        assert!(
            caught > 0,
            "{} never shows in {} walks",
            defect.name(),
            scripts.len()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
