//! The fast explorer on two-phase commit: counts against stateright's BFS, thread-count
//! independence, exact mode and symmetry reduction.

use memtx_checker::bench::two_phase_commit::{
    self, canonicalize, TwoPhaseAction, TwoPhaseState, TwoPhaseSys,
};
use memtx_checker::explore::{explore, ExploreOptions, ExploreReport, Locality, PackedState};
use stateright::{Checker, Model};

type Report = ExploreReport<TwoPhaseState, TwoPhaseAction>;

fn model(rms: usize) -> TwoPhaseSys {
    TwoPhaseSys::new(rms).expect("supported RM count")
}

fn run(rms: usize, options: ExploreOptions<'_, TwoPhaseSys>) -> Report {
    explore(&model(rms), &options).expect("2PC has no eventually property")
}

/// Verdict summary: property name and whether it has a discovery.
fn verdicts(report: &Report) -> Vec<(&'static str, bool)> {
    report
        .properties
        .iter()
        .map(|p| (p.name, p.discovery.is_some()))
        .collect()
}

fn check_against_stateright(rms: usize, expected_unique: u64) {
    let checker = model(rms).checker().spawn_bfs().join();
    let stateright = (
        checker.unique_state_count() as u64,
        checker.state_count() as u64,
        checker.max_depth(),
    );
    assert_eq!(stateright.0, expected_unique);
    let mut first: Option<Report> = None;
    for threads in [1, 2, 4] {
        let report = run(rms, ExploreOptions::new().threads(threads));
        assert!(report.is_complete(), "{rms} RMs, {threads} threads");
        assert_eq!(
            (report.unique_states, report.total_states, report.max_depth),
            stateright,
            "{rms} RMs, {threads} threads: (unique, total, max depth) differ from stateright BFS"
        );
        assert_eq!(report.states_per_depth.iter().sum::<u64>(), expected_unique);
        assert_eq!(report.states_per_depth.len(), report.max_depth);
        assert_eq!(
            verdicts(&report),
            vec![
                ("abort agreement", true),
                ("commit agreement", true),
                ("consistent", false),
            ]
        );
        match &first {
            None => first = Some(report),
            Some(first) => {
                assert_eq!(first.states_per_depth, report.states_per_depth);
                assert_eq!(first.properties, report.properties, "{threads} threads");
            }
        }
    }
}

#[test]
fn explorer_2pc_3_rms_matches_stateright_bfs() {
    check_against_stateright(3, 288);
}

#[test]
fn explorer_2pc_5_rms_matches_stateright_bfs() {
    check_against_stateright(5, 8_832);
}

#[test]
fn explorer_2pc_exact_mode_gives_same_counts() {
    for threads in [1, 3] {
        let fingerprints = run(5, ExploreOptions::new().threads(threads));
        let exact = run(5, ExploreOptions::new().threads(threads).exact(true));
        assert_eq!(exact.unique_states, fingerprints.unique_states);
        assert_eq!(exact.total_states, fingerprints.total_states);
        assert_eq!(exact.max_depth, fingerprints.max_depth);
        assert_eq!(exact.states_per_depth, fingerprints.states_per_depth);
        assert_eq!(exact.properties, fingerprints.properties);
        assert_eq!(exact.collision_probability, 0.0);
        assert_eq!(exact.fingerprint_collisions, 0);
        assert!(fingerprints.collision_probability > 0.0);
        assert!(exact.memory.visited_bytes > fingerprints.memory.visited_bytes);
    }
}

#[test]
fn explorer_2pc_symmetry_reduces_states_with_same_verdicts() {
    for rms in [3, 5] {
        let full = run(rms, ExploreOptions::new());
        let stateright_sym = model(rms)
            .checker()
            .symmetry_fn(canonicalize)
            .spawn_dfs()
            .join()
            .unique_state_count() as u64;
        let mut reduced_first: Option<Report> = None;
        for threads in [1, 2, 4] {
            let reduced = run(
                rms,
                ExploreOptions::new()
                    .threads(threads)
                    .symmetry(|_, s| canonicalize(s)),
            );
            let factor = full.unique_states as f64 / reduced.unique_states as f64;
            assert!(
                reduced.unique_states < full.unique_states,
                "{rms} RMs: symmetry gives {} states vs {} (reduction factor {factor:.2})",
                reduced.unique_states,
                full.unique_states
            );
            assert_eq!(
                reduced.unique_states, stateright_sym,
                "{rms} RMs: fast symmetric count vs stateright DFS with the same canonicalizer \
                 (reduction factor {factor:.2})"
            );
            assert_eq!(
                verdicts(&reduced),
                verdicts(&full),
                "reduction factor {factor:.2}"
            );
            // Shortest discoveries are equally short with and without symmetry.
            for (r, f) in reduced.properties.iter().zip(&full.properties) {
                assert_eq!(
                    r.discovery.as_ref().map(|d| d.steps()),
                    f.discovery.as_ref().map(|d| d.steps())
                );
            }
            match &reduced_first {
                None => reduced_first = Some(reduced),
                Some(first) => {
                    assert_eq!(first.total_states, reduced.total_states);
                    assert_eq!(first.properties, reduced.properties);
                }
            }
        }
    }
    // Symmetric discovery paths are real executions of the model.
    let m = model(5);
    let reduced = run(
        5,
        ExploreOptions::new()
            .threads(2)
            .symmetry(|_, s| canonicalize(s)),
    );
    for p in &reduced.properties {
        if let Some(d) = &p.discovery {
            for pair in d.path.windows(2) {
                let (state, action) = &pair[0];
                let action = action.expect("every step but the last has an action");
                assert_eq!(m.next_state(state, action), Some(pair[1].0));
            }
        }
    }
}

/// A coarse locality key for the tests below, read from a packed state: the TM's state and
/// how many RMs it knows prepared, so that only a handful of keys exist and the workers'
/// shares are uneven.
fn tm_and_prepared(bytes: &[u8]) -> u64 {
    let s = TwoPhaseState::unpack(bytes).expect("the explorer passes packed states");
    let prepared = (0..14).filter(|&rm| s.tm_prepared(rm)).count() as u64;
    (s.tm_state() as u64) << 8 | prepared
}

#[test]
fn explorer_2pc_locality_moves_work_not_results() {
    let rms = 5;
    let reference = run(rms, ExploreOptions::new());
    assert_eq!(reference.states_per_worker, vec![reference.unique_states]);
    let everything_to_one: Locality = |_| 7;
    for threads in [1, 2, 3] {
        let by_fingerprint = run(rms, ExploreOptions::new().threads(threads));
        for (name, key) in [
            ("coarse key", tm_and_prepared as Locality),
            (
                "tmPrepared, the benchmark's key",
                two_phase_commit::locality,
            ),
            ("constant key", everything_to_one),
        ] {
            let local = run(rms, ExploreOptions::new().threads(threads).locality(key));
            let context = format!("{name}, {threads} threads");
            assert_eq!(local.unique_states, reference.unique_states, "{context}");
            assert_eq!(local.total_states, reference.total_states, "{context}");
            assert_eq!(
                local.states_per_depth, reference.states_per_depth,
                "{context}"
            );
            // Same verdicts and the very same counterexamples (keys are still fingerprints).
            assert_eq!(local.properties, reference.properties, "{context}");
            assert_eq!(local.states_per_worker.len(), threads, "{context}");
            assert_eq!(
                local.states_per_worker.iter().sum::<u64>(),
                local.unique_states,
                "{context}"
            );
            if name == "constant key" {
                // Every state belongs to the one worker the constant names.
                let busy = local.states_per_worker.iter().filter(|&&n| n > 0).count();
                assert_eq!(busy, 1, "{context}: {:?}", local.states_per_worker);
            }
        }
        // By fingerprint every worker gets a fair share.
        let fair = reference.unique_states / threads as u64;
        for &n in &by_fingerprint.states_per_worker {
            assert!(
                n > fair * 8 / 10 && n < fair * 12 / 10,
                "{threads} threads: {:?}",
                by_fingerprint.states_per_worker
            );
        }
    }
}

#[test]
fn explorer_2pc_exact_mode_ignores_locality() {
    let everything_to_one: Locality = |_| 7;
    let plain = run(5, ExploreOptions::new().threads(3).exact(true));
    let with_key = run(
        5,
        ExploreOptions::new()
            .threads(3)
            .exact(true)
            .locality(everything_to_one),
    );
    assert_eq!(with_key.states_per_worker, plain.states_per_worker);
    assert!(with_key.states_per_worker.iter().all(|&n| n > 0));
    assert_eq!(with_key.properties, plain.properties);
}
