//! The fast explorer on two-phase commit: counts against stateright's BFS, thread-count
//! independence, exact mode and symmetry reduction.

use memtx_checker::explore::{explore, ExploreOptions, ExploreReport};
use memtx_checker::two_phase_commit::{canonicalize, TwoPhaseAction, TwoPhaseState, TwoPhaseSys};
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
                    .symmetry(canonicalize),
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
    let reduced = run(5, ExploreOptions::new().threads(2).symmetry(canonicalize));
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
