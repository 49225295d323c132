//! Discoveries of the fast explorer: shortest, deterministic across thread counts and
//! runs, and replayable; plus counts against stateright on a model with a boundary and
//! actions that do not change the state.

use memtx_checker::bench::two_phase_commit::{RmState, TwoPhaseAction, TwoPhaseState, TwoPhaseSys};
use memtx_checker::explore::{check_path, explore, ExploreOptions, PackedState};
use stateright::{Checker, Model, Property};

/// Two-phase commit with a deliberately wrong invariant: "no RM ever commits".
#[derive(Clone)]
struct NeverCommit(TwoPhaseSys);

impl Model for NeverCommit {
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
        vec![Property::<Self>::always("no RM commits", |m, s| {
            (0..m.0.rm_count()).all(|rm| s.rm_state(rm) != RmState::Committed)
        })]
    }
}

fn never_commit(rms: usize) -> NeverCommit {
    NeverCommit(TwoPhaseSys::new(rms).expect("supported RM count"))
}

#[test]
fn explorer_counterexample_is_shortest_deterministic_and_replays() {
    for rms in [2, 3, 4] {
        let model = never_commit(rms);
        let stateright = model.clone().checker().spawn_bfs().join();
        let expected = stateright
            .discovery("no RM commits")
            .expect("stateright finds the violation")
            .into_actions()
            .len();
        // Prepare, the TM receives every Prepared message, commits, one RM receives Commit.
        assert_eq!(expected, 2 * rms + 2);

        let mut first = None;
        for threads in [1, 2, 3, 4, 1, 4] {
            let report = explore(&model, &ExploreOptions::new().threads(threads))
                .expect("no eventually property");
            let discovery = report
                .discovery("no RM commits")
                .expect("the fast engine finds the violation");
            assert!(report
                .property("no RM commits")
                .is_some_and(|p| p.is_failure()));
            assert_eq!(discovery.steps(), expected, "{rms} RMs, {threads} threads");
            assert_eq!(check_path(&model, &discovery.path), Ok(()));
            assert_eq!(
                discovery
                    .last_state()
                    .map(|s| s.rm_state(0) == RmState::Committed
                        || (0..rms).any(|rm| s.rm_state(rm) == RmState::Committed)),
                Some(true)
            );
            match &first {
                None => first = Some(discovery.clone()),
                Some(first) => assert_eq!(first, discovery, "{rms} RMs, {threads} threads"),
            }
        }
    }
}

/// A point on a grid that may leave the boundary, with an action that changes nothing
/// (`next_state` returns `None`) and a reset that closes cycles.
#[derive(Clone)]
struct Grid {
    max: u8,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    IncX,
    IncY,
    Swap,
    Reset,
    Nothing,
}

impl Model for Grid {
    type State = (u8, u8);
    type Action = Step;

    fn init_states(&self) -> Vec<(u8, u8)> {
        // A duplicate and a state outside the boundary.
        vec![(0, 0), (self.max + 1, 0), (0, 0)]
    }

    fn actions(&self, _: &(u8, u8), actions: &mut Vec<Step>) {
        actions.extend([
            Step::IncX,
            Step::IncY,
            Step::Swap,
            Step::Reset,
            Step::Nothing,
        ]);
    }

    fn next_state(&self, &(x, y): &(u8, u8), step: Step) -> Option<(u8, u8)> {
        match step {
            Step::IncX => Some((x.saturating_add(1), y)),
            Step::IncY => Some((x, y.saturating_add(2))),
            Step::Swap => Some((y, x)),
            Step::Reset if x > 3 => Some((1, 0)),
            Step::Reset | Step::Nothing => None,
        }
    }

    fn within_boundary(&self, &(x, y): &(u8, u8)) -> bool {
        x <= self.max && y <= self.max
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::<Self>::always("in bounds", |m, &(x, y)| x <= m.max && y <= m.max),
            Property::<Self>::sometimes("far corner", |m, &(x, y)| x == m.max && y >= m.max - 1),
        ]
    }
}

#[test]
fn explorer_counts_match_stateright_with_boundary_and_no_op_actions() {
    let model = Grid { max: 40 };
    let stateright = model.clone().checker().spawn_bfs().join();
    let mut first = None;
    for threads in [1, 2, 3] {
        let report = explore(&model, &ExploreOptions::new().threads(threads))
            .expect("no eventually property");
        assert!(report.is_complete());
        assert_eq!(report.unique_states, stateright.unique_state_count() as u64);
        assert_eq!(report.max_depth, stateright.max_depth());
        // Stateright expands the duplicate initial state twice; this engine once. The
        // difference is the successors of (0, 0) within the boundary: IncX, IncY, Swap.
        assert_eq!(report.total_states + 3, stateright.state_count() as u64);
        let discovery = report.discovery("far corner").expect("reachable");
        assert_eq!(check_path(&model, &discovery.path), Ok(()));
        assert!(report.discovery("in bounds").is_none());
        match &first {
            None => first = Some(report),
            Some(first) => {
                assert_eq!(first.properties, report.properties);
                assert_eq!(first.states_per_depth, report.states_per_depth);
            }
        }
    }
}

#[test]
fn explorer_two_phase_state_packs_canonically() {
    let model = TwoPhaseSys::new(3).expect("supported RM count");
    let report = explore(&model, &ExploreOptions::new()).expect("no eventually property");
    let path = &report
        .discovery("commit agreement")
        .expect("reachable")
        .path;
    for (state, _) in path {
        let mut bytes = Vec::new();
        state.pack(&mut bytes);
        assert_eq!(TwoPhaseState::unpack(&bytes), Some(*state));
    }
}
