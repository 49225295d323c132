//! Early stops (max states, target depth, memory, all discovered), errors, progress
//! reporting and panics in model code.

use memtx_checker::bench::two_phase_commit::{TwoPhaseAction, TwoPhaseState, TwoPhaseSys};
use memtx_checker::explore::{explore, ExploreError, ExploreOptions, PackedState, StopReason};
use stateright::{Checker, Model, Property};
use std::sync::Mutex;
use std::time::Duration;

fn two_phase(rms: usize) -> TwoPhaseSys {
    TwoPhaseSys::new(rms).expect("supported RM count")
}

/// `max_states` is checked between chunks of expanded states, not only when a level ends:
/// the run stops within about one chunk's successors of the limit, mid-level, however large
/// the level (with 7 RMs the last levels hold tens of thousands of states). Such a count
/// depends on timing, so only its bounds are asserted.
#[test]
fn explorer_max_states_stops_within_a_batch_of_the_limit() {
    let full = explore(&two_phase(7), &ExploreOptions::new().threads(2))
        .expect("no eventually property")
        .unique_states;
    for threads in [1, 2, 4] {
        let report = explore(
            &two_phase(7),
            &ExploreOptions::new().threads(threads).max_states(10_000),
        )
        .expect("no eventually property");
        assert_eq!(report.stopped_early, Some(StopReason::MaxStates));
        assert!(
            (10_000..10_000 + 20_000).contains(&report.unique_states),
            "{threads} threads: {} states for a limit of 10,000 ({full} in all)",
            report.unique_states
        );
        assert!(report.unique_states < full / 4, "{full}");
    }
}

#[test]
fn explorer_target_max_depth_matches_stateright() {
    for depth in [1, 2, 5, 9] {
        let stateright = two_phase(4)
            .checker()
            .target_max_depth(depth)
            .spawn_bfs()
            .join();
        for threads in [1, 3] {
            let report = explore(
                &two_phase(4),
                &ExploreOptions::new()
                    .threads(threads)
                    .target_max_depth(depth),
            )
            .expect("no eventually property");
            assert_eq!(report.stopped_early, Some(StopReason::MaxDepth));
            assert_eq!(
                (report.unique_states, report.total_states, report.max_depth),
                (
                    stateright.unique_state_count() as u64,
                    stateright.state_count() as u64,
                    stateright.max_depth()
                ),
                "depth {depth}, {threads} threads"
            );
        }
    }
    // A bound deeper than the state space is no early stop; 0 means no bound.
    for depth in [0, 100] {
        let report = explore(
            &two_phase(3),
            &ExploreOptions::new().target_max_depth(depth),
        )
        .expect("no eventually property");
        assert_eq!(report.stopped_early, None);
        assert_eq!(report.unique_states, 288);
    }
}

#[test]
fn explorer_memory_budget_stops_gracefully() {
    for threads in [1, 2] {
        let report = explore(
            &two_phase(5),
            &ExploreOptions::new().threads(threads).max_memory_bytes(1),
        )
        .expect("no eventually property");
        assert_eq!(report.stopped_early, Some(StopReason::Memory));
        assert!(report.unique_states < 8_832);
        assert_eq!(
            StopReason::Memory.to_string(),
            "stopped early: memory",
            "the report's wording"
        );
    }
    // A budget that lets the tables grow a little, then refuses.
    let report = explore(
        &two_phase(6),
        &ExploreOptions::new().threads(2).max_memory_bytes(400_000),
    )
    .expect("no eventually property");
    assert_eq!(report.stopped_early, Some(StopReason::Memory));
    assert!(report.unique_states > 1);
    // Enough memory: complete, and the accounting stays under the budget.
    let report = explore(
        &two_phase(5),
        &ExploreOptions::new().max_memory_bytes(1 << 30),
    )
    .expect("no eventually property");
    assert_eq!(report.stopped_early, None);
    assert!(report.memory.peak_estimate_bytes < 1 << 30);
    // The visited set keeps at most 16 bytes per state (8-byte keys at a load of at least
    // 7/12 once past its initial size), the parent log 12 plus a few bytes per level.
    let memory = &report.memory;
    assert!(memory.visited_bytes_per_state > 8.0 && memory.visited_bytes_per_state <= 16.0);
    assert!(memory.parent_log_bytes_per_state >= 12.0);
    assert!(memory.parent_log_bytes_per_state < 12.5);
    let sum = memory.visited_bytes_per_state + memory.parent_log_bytes_per_state;
    assert!((memory.stored_bytes_per_state - sum).abs() < 1e-9);
    assert!(memory.level_scratch_bytes > 0);
    assert!(memory.peak_estimate_bytes >= memory.visited_bytes + memory.parent_log_bytes);
}

#[test]
fn explorer_finish_when_all_discovered() {
    let mut first = None;
    for threads in [1, 2, 4] {
        let report = explore(
            &two_phase(5),
            &ExploreOptions::new()
                .threads(threads)
                .finish_when_all_discovered(true),
        )
        .expect("no eventually property");
        // "consistent" is never violated, so not every property gets a discovery.
        assert_eq!(report.stopped_early, None);
        assert_eq!(report.unique_states, 8_832);
        assert_eq!(
            *first.get_or_insert(report.total_states),
            report.total_states
        );
    }
    let report = explore(
        &OnlySometimes(two_phase(5)),
        &ExploreOptions::new()
            .threads(2)
            .finish_when_all_discovered(true),
    )
    .expect("no eventually property");
    assert_eq!(report.stopped_early, Some(StopReason::AllDiscovered));
    assert!(report.unique_states < 8_832);
    let steps = report
        .discovery("abort agreement")
        .map(|d| d.steps())
        .expect("found");
    // Every RM chooses to abort; the search stopped right after that level.
    assert_eq!(steps, 5);
    assert_eq!(report.max_depth, steps + 1);
    assert_eq!(report.states_per_depth.len(), steps + 2);
}

/// Two-phase commit with only its Sometimes properties.
struct OnlySometimes(TwoPhaseSys);

impl Model for OnlySometimes {
    type State = TwoPhaseState;
    type Action = TwoPhaseAction;
    fn init_states(&self) -> Vec<TwoPhaseState> {
        self.0.init_states()
    }
    fn actions(&self, state: &TwoPhaseState, actions: &mut Vec<TwoPhaseAction>) {
        self.0.actions(state, actions)
    }
    fn next_state(&self, state: &TwoPhaseState, action: TwoPhaseAction) -> Option<TwoPhaseState> {
        self.0.next_state(state, action)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::<Self>::sometimes("abort agreement", |m, s| {
                (0..m.0.rm_count()).all(|rm| {
                    s.rm_state(rm) == memtx_checker::bench::two_phase_commit::RmState::Aborted
                })
            }),
            Property::<Self>::sometimes("TM aborted", |_, s| s.has_abort_msg()),
        ]
    }
}

/// A counter with configurable misbehaviour.
struct Counter {
    eventually: bool,
    panic_at: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Count(u32);

impl PackedState for Count {
    fn pack(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
    }
    fn unpack(bytes: &[u8]) -> Option<Self> {
        Some(Count(u32::from_le_bytes(bytes.try_into().ok()?)))
    }
}

/// Packs to the wrong value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct BadCount(u32);

impl PackedState for BadCount {
    fn pack(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.0 + 1).to_le_bytes());
    }
    fn unpack(bytes: &[u8]) -> Option<Self> {
        Some(BadCount(u32::from_le_bytes(bytes.try_into().ok()?)))
    }
}

impl Model for Counter {
    type State = Count;
    type Action = u32;
    fn init_states(&self) -> Vec<Count> {
        vec![Count(0)]
    }
    fn actions(&self, _: &Count, actions: &mut Vec<u32>) {
        actions.extend([1, 2]);
    }
    fn next_state(&self, state: &Count, step: u32) -> Option<Count> {
        if self.panic_at == Some(state.0) {
            panic!("model bug at {}", state.0);
        }
        (state.0 < 10_000).then(|| Count(state.0 + step))
    }
    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = vec![Property::<Self>::always("small", |_, s| s.0 < 100_000)];
        if self.eventually {
            properties.push(Property::<Self>::eventually("big", |_, s| s.0 > 5));
        }
        properties
    }
}

struct BadCounter;

impl Model for BadCounter {
    type State = BadCount;
    type Action = ();
    fn init_states(&self) -> Vec<BadCount> {
        vec![BadCount(0)]
    }
    fn actions(&self, _: &BadCount, _: &mut Vec<()>) {}
    fn next_state(&self, _: &BadCount, _: ()) -> Option<BadCount> {
        None
    }
}

#[test]
fn explorer_rejects_eventually_and_bad_packing() {
    let counter = Counter {
        eventually: true,
        panic_at: None,
    };
    let error = explore(&counter, &ExploreOptions::new()).expect_err("eventually is rejected");
    assert_eq!(error, ExploreError::EventuallyUnsupported("big"));
    assert!(error
        .to_string()
        .contains("eventually properties are not supported by the fast engine"));
    let error = explore(&BadCounter, &ExploreOptions::new()).expect_err("bad packing");
    assert_eq!(error, ExploreError::PackRoundTrip);
}

#[test]
fn explorer_reports_progress() {
    let seen = Mutex::new(Vec::new());
    let callback = |p: &memtx_checker::explore::Progress| {
        seen.lock().expect("not poisoned").push(p.clone());
    };
    let counter = Counter {
        eventually: false,
        panic_at: None,
    };
    for threads in [1, 2] {
        seen.lock().expect("not poisoned").clear();
        let report = explore(
            &counter,
            &ExploreOptions::new()
                .threads(threads)
                .progress(&callback, Duration::ZERO),
        )
        .expect("no eventually property");
        assert_eq!(report.unique_states, 10_002);
        let seen = seen.lock().expect("not poisoned");
        assert!(!seen.is_empty());
        for pair in seen.windows(2) {
            assert!(pair[0].distinct <= pair[1].distinct);
            assert!(pair[0].depth <= pair[1].depth);
        }
        assert!(seen.iter().all(|p| p.distinct <= report.unique_states));
    }
}

#[test]
fn explorer_propagates_model_panics() {
    for threads in [1, 2, 3] {
        let counter = Counter {
            eventually: false,
            panic_at: Some(777),
        };
        let result =
            std::panic::catch_unwind(|| explore(&counter, &ExploreOptions::new().threads(threads)));
        let payload = result.expect_err("the model's panic reaches the caller");
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert_eq!(message, "model bug at 777", "{threads} threads");
    }
}

#[test]
fn explorer_handles_models_without_initial_states_or_properties() {
    struct Empty;
    impl Model for Empty {
        type State = u8;
        type Action = ();
        fn init_states(&self) -> Vec<u8> {
            Vec::new()
        }
        fn actions(&self, _: &u8, _: &mut Vec<()>) {}
        fn next_state(&self, _: &u8, _: ()) -> Option<u8> {
            None
        }
    }
    let report = explore(&Empty, &ExploreOptions::new().threads(2)).expect("fine");
    assert_eq!(
        (report.unique_states, report.total_states, report.max_depth),
        (0, 0, 0)
    );
    assert!(report.is_complete());

    // No properties: everything is explored (stateright would stop at the initial state).
    struct Cycle;
    impl Model for Cycle {
        type State = u8;
        type Action = ();
        fn init_states(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, _: &u8, actions: &mut Vec<()>) {
            actions.push(());
        }
        fn next_state(&self, s: &u8, _: ()) -> Option<u8> {
            Some(s.wrapping_add(1))
        }
    }
    let report = explore(
        &Cycle,
        &ExploreOptions::new()
            .threads(3)
            .finish_when_all_discovered(true),
    )
    .expect("fine");
    assert_eq!(
        (report.unique_states, report.total_states, report.max_depth),
        (256, 257, 256)
    );
}
