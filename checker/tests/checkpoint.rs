//! Checkpoint and resume: a run resumed from a checkpoint taken at any level boundary, on any
//! thread count, gives what the uninterrupted run gives (counts, levels, verdicts, the
//! discoveries' paths, coverage tallies). Library-level tests here; the `memtx` binary
//! (SIGKILL, `memtx resume`, damaged files) below them.

use memtx_checker::explore::{
    explore, load, CheckpointPlan, ExploreOptions, ExploreReport, PackedState, StopReason,
};
use memtx_checker::two_phase_commit::{canonicalize, locality, TwoPhaseSys};
use stateright::Model;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::hash::Hash;
use std::path::PathBuf;
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("memtx-ckpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Everything a resumed run must reproduce.
fn assert_same<S: PartialEq + Debug, A: PartialEq + Debug>(
    want: &ExploreReport<S, A>,
    got: &ExploreReport<S, A>,
    what: &str,
) {
    assert_eq!(got.unique_states, want.unique_states, "unique, {what}");
    assert_eq!(got.total_states, want.total_states, "total, {what}");
    assert_eq!(got.max_depth, want.max_depth, "depth, {what}");
    assert_eq!(
        got.states_per_depth, want.states_per_depth,
        "levels, {what}"
    );
    assert_eq!(got.stopped_early, want.stopped_early, "stop, {what}");
    assert_eq!(got.coverage, want.coverage, "coverage, {what}");
    assert_eq!(got.properties.len(), want.properties.len());
    for (g, w) in got.properties.iter().zip(&want.properties) {
        assert_eq!(g.discovery, w.discovery, "discovery of {}, {what}", w.name);
    }
}

/// Runs `model` uninterrupted, then, for each of `stops` (a state count), a run on
/// `save_threads` threads that checkpoints at every level boundary and is stopped by
/// `max_states` mid-level; resumes each checkpoint on 1, 2 and 3 threads and compares. Returns
/// the levels the checkpoints were taken at.
fn resume_everywhere<M>(
    model: &M,
    options: &dyn Fn(usize) -> ExploreOptions<'static, M>,
    stops: &[u64],
    save_threads: usize,
    name: &str,
) -> BTreeSet<usize>
where
    M: Model + Sync,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState + Debug,
    M::Action: Clone + Debug + PartialEq,
{
    let reference = explore(model, &options(1)).expect("explores");
    assert!(reference.is_complete());
    assert_eq!(reference.resumed_from_level, None);
    let mut levels = BTreeSet::new();
    for &stop in stops {
        let dir = scratch(&format!("{name}-{stop}"));
        let plan = CheckpointPlan {
            dir: dir.clone(),
            every: Duration::ZERO,
            run: serde_json::json!({"test": name}),
        };
        let cut = explore(
            model,
            &options(save_threads).max_states(stop).checkpoint(&plan),
        )
        .expect("explores");
        assert_eq!(
            cut.stopped_early,
            Some(StopReason::MaxStates),
            "{name} {stop}"
        );
        assert!(cut.checkpoints_written > 0, "{name} {stop}");
        assert_eq!(cut.checkpoint_error, None);
        let saved = load(&dir).expect("the checkpoint reads back");
        assert_eq!(saved.run(), &serde_json::json!({"test": name}));
        assert!(saved.unique_states() < reference.unique_states);
        assert_eq!(
            saved.states_per_depth(),
            &reference.states_per_depth[..saved.level() + 1],
            "levels saved, {name} {stop}"
        );
        levels.insert(saved.level());
        for threads in [1, 2, 3] {
            let resumed = explore(model, &options(threads).resume_from(&saved)).expect("resumes");
            assert_eq!(resumed.resumed_from_level, Some(saved.level()));
            assert_same(
                &reference,
                &resumed,
                &format!("{name}: stopped at {stop} on {save_threads}, resumed on {threads}"),
            );
        }
        // A resumed run checkpoints too, and a checkpoint of a resumed run resumes.
        let again = scratch(&format!("{name}-{stop}-again"));
        let plan2 = CheckpointPlan {
            dir: again.clone(),
            every: Duration::ZERO,
            run: serde_json::json!({"test": name}),
        };
        let second_stop = (saved.unique_states() + reference.unique_states) / 2;
        let cut2 = explore(
            model,
            &options(2)
                .resume_from(&saved)
                .checkpoint(&plan2)
                .max_states(second_stop),
        )
        .expect("resumes");
        if cut2.checkpoints_written > 0 {
            let saved2 = load(&again).expect("reads back");
            assert!(saved2.level() >= saved.level());
            let resumed = explore(model, &options(1).resume_from(&saved2)).expect("resumes");
            assert_same(&reference, &resumed, &format!("{name}: resumed twice"));
        }
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&again);
    }
    levels
}

#[test]
fn two_phase_commit_resumes_identically_from_every_level_on_any_thread_count() {
    let model = TwoPhaseSys::new(5).expect("5 RMs");
    let options = |threads: usize| ExploreOptions::new().threads(threads).locality(locality);
    let total = explore(&model, &options(1))
        .expect("explores")
        .unique_states;
    let stops: Vec<u64> = [5, 20, 40, 60, 80, 95]
        .iter()
        .map(|p| total * p / 100)
        .collect();
    let levels = resume_everywhere(&model, &options, &stops, 2, "2pc");
    assert!(
        levels.len() >= 4,
        "checkpoints at too few levels: {levels:?}"
    );
    // The same with symmetry, and saved on three threads without a locality key.
    let reduced = |threads: usize| {
        ExploreOptions::new()
            .threads(threads)
            .symmetry(canonicalize)
    };
    let total = explore(&model, &reduced(1))
        .expect("explores")
        .unique_states;
    let stops: Vec<u64> = [30, 70].iter().map(|p| total * p / 100).collect();
    resume_everywhere(&model, &reduced, &stops, 3, "2pc-sym");
}

#[test]
fn memtx_quick_with_a_violation_resumes_with_the_same_counterexample_and_coverage() {
    use memtx_checker::engine::memtx_hooks;
    use memtx_model::MemTx;
    let variant = memtx_checker::setup::variant("missed-cascade").expect("a variant");
    let cfg = memtx_checker::setup::config("quick", &Default::default(), variant).expect("quick");
    let model = MemTx::new(cfg);
    let hooks = memtx_hooks(&model, false);
    let options = move |threads: usize| {
        ExploreOptions::new()
            .threads(threads)
            .next_state_into(hooks.next_state_into)
            .locality(hooks.locality)
            .coverage(hooks.coverage)
    };
    let reference = explore(&model, &options(2)).expect("explores");
    assert!(
        reference.properties.iter().any(|p| p.discovery.is_some()),
        "missed-cascade has a counterexample on quick"
    );
    assert!(reference.coverage.as_ref().is_some_and(|c| !c.is_empty()));
    let total = reference.unique_states;
    let stops: Vec<u64> = [10, 50, 90].iter().map(|p| total * p / 100).collect();
    let levels = resume_everywhere(&model, &options, &stops, 2, "quick-mc");
    assert!(levels.len() >= 2, "{levels:?}");
}

#[test]
fn exact_mode_refuses_checkpoints() {
    let model = TwoPhaseSys::new(3).expect("3 RMs");
    let plan = CheckpointPlan {
        dir: scratch("exact"),
        every: Duration::ZERO,
        run: serde_json::Value::Null,
    };
    let err = explore(&model, &ExploreOptions::new().exact(true).checkpoint(&plan));
    assert!(err.is_err());
}
