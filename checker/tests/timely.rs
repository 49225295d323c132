//! The explorer over timely workers: the same counts, levels, verdicts, coverage and
//! counterexamples as one thread of the threaded engine, in one process (library level)
//! and over local processes (through the binary).

use memtx_checker::explore::{explore, explore_timely, Cluster, ExploreOptions, ExploreReport};
use memtx_checker::two_phase_commit::{
    self, canonicalize, TwoPhaseAction, TwoPhaseState, TwoPhaseSys,
};

type Report = ExploreReport<TwoPhaseState, TwoPhaseAction>;

fn model(rms: usize) -> TwoPhaseSys {
    TwoPhaseSys::new(rms).expect("supported RM count")
}

/// Everything that must not depend on the engine or the worker count.
fn assert_same(a: &Report, b: &Report, what: &str) {
    assert_eq!(a.unique_states, b.unique_states, "{what}: unique");
    assert_eq!(a.total_states, b.total_states, "{what}: total");
    assert_eq!(a.max_depth, b.max_depth, "{what}: max depth");
    assert_eq!(a.states_per_depth, b.states_per_depth, "{what}: per depth");
    assert_eq!(a.stopped_early, b.stopped_early, "{what}: stop");
    assert_eq!(a.properties, b.properties, "{what}: discoveries and paths");
}

#[test]
fn two_phase_commit_on_2_and_3_timely_workers_matches_one_thread() {
    for rms in [3, 5] {
        let m = model(rms);
        let one = explore(&m, &ExploreOptions::new().threads(1)).expect("no eventually");
        for workers in [1, 2, 3] {
            let report = explore_timely(&m, &ExploreOptions::new(), &Cluster::InProcess(workers))
                .expect("no eventually")
                .expect("worker 0 is in this process");
            assert_same(&one, &report, &format!("{rms} RMs, {workers} workers"));
            let cluster = report.cluster.as_ref().expect("a cluster report");
            assert_eq!(cluster.threads_per_process, workers);
            assert_eq!(report.states_per_worker.len(), workers);
            if workers > 1 {
                assert!(cluster.bytes_to_other_workers > 0);
            }
        }
    }
}

#[test]
fn two_phase_commit_with_symmetry_locality_and_a_depth_bound_matches_one_thread() {
    let m = model(4);
    let options = || {
        ExploreOptions::new()
            .symmetry(|_, s| canonicalize(s))
            .locality(two_phase_commit::locality)
            .target_max_depth(7)
    };
    let one = explore(&m, &options().threads(1)).expect("no eventually");
    for workers in [2, 3] {
        let report = explore_timely(&m, &options(), &Cluster::InProcess(workers))
            .expect("no eventually")
            .expect("worker 0 is in this process");
        assert_same(&one, &report, &format!("{workers} workers"));
    }
}
