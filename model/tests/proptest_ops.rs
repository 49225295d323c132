//! Random operation sequences (proptest) at bounds beyond the exhaustive presets: 4 agents,
//! 12 records, ticks 0..=3, 2 slots, 2 values, four sources (mid, mid, high, low), every write
//! shape (both confidences, Private/Shared/Public), every tier and isolation level, raw
//! observations, reversible calls, revocations and reviews.
//!
//! * `every_always_property_holds_after_every_step`: a sequence of choices; at each step the
//!   enabled operations are enumerated (`machine::candidate_ops`), the choice picks an operation
//!   kind among those present and then one operation of that kind (so every sequence is
//!   meaningful and shrinks to a minimal one), or, now and then, an arbitrary operation outside
//!   the enumerated domain (any parents, validity, scope, ids out of range). Each accepted step is
//!   applied with `machine::step` and every `always` property is asserted; a failure names the
//!   property and prints the trace and the state. A refused candidate must be refused for a
//!   reason the enumeration leaves to `step` (a gate block; Revalidate/Rebuild/Resolve
//!   conditions).
//! * `refused_steps_change_nothing`: along such walks, many operations are probed at each state;
//!   every refused one yields no successor (`next_state` is `None`) and, applied in place with
//!   `ops::apply`, leaves the state exactly as it was (docs/protocol.md §5: a disabled operation is not
//!   an action; a blocked call changes nothing).
//!
//! Cases default to a modest number (a few seconds in release); `PROPTEST_CASES` raises it.

mod common;

use common::{trace_text, violated_invariants, wide};
use memtx_model::config::Config;
use memtx_model::evidence::Confidence;
use memtx_model::machine::{candidate_ops, step, MemTx};
use memtx_model::ops::{apply, Op, Refusal};
use memtx_model::properties::PROPERTIES;
use memtx_model::record::{Kind, RecordSet, Scope, Validity, FOREVER};
use memtx_model::txn::{Isolation, Tier};
use memtx_model::{State, Variant};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use stateright::Model;
use std::collections::BTreeSet;

/// The configuration of the random runs (beliefs take at most one parent, views two, so that
/// the enumeration at each step stays in the tens of thousands).
fn cfg() -> Config {
    let mut cfg = wide(Variant::Memtx);
    cfg.preset = "tests-proptest".into();
    cfg.bounds.records = 12;
    cfg.domain.belief_parents = 1;
    cfg
}

fn proptest_config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default_cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Sequences drawn by `random_sequences_reach_every_example` (4,000 never reached E11, a keep
/// over a rival still in force; 20,000 do, in about 4 s).
const WALKS: usize = 20000;

/// Operation categories a choice picks among: the operations of `Op`, with staged views apart
/// from staged beliefs (far fewer of them are enumerated) and irreversible calls apart from
/// reversible ones.
const CATEGORIES: usize = 17;

/// How often each category is picked, relative to the others present: records are few, so
/// raw observations (each takes a record id) and ticks are rarer than transaction work.
const WEIGHTS: [u32; CATEGORIES] = [1, 1, 3, 4, 1, 3, 1, 1, 1, 1, 1, 2, 2, 3, 1, 2, 1];

fn category(op: &Op) -> usize {
    match op {
        Op::Tick => 0,
        Op::Observe { .. } => 1,
        Op::Begin { .. } => 2,
        Op::Stage { kind, .. } if kind.is_view() => 13,
        Op::Stage { .. } => 3,
        Op::Adopt { .. } => 4,
        Op::Commit { .. } => 5,
        Op::Abort { .. } => 6,
        Op::CallTool {
            reversible: false, ..
        } => 14,
        Op::CallTool { .. } => 7,
        Op::RequestRevocation { .. } => 8,
        Op::ApplyRevocation { .. } => 9,
        Op::Revalidate { .. } => 10,
        Op::Rebuild { .. } => 11,
        Op::Resolve { .. } => 12,
        Op::Read { .. } => 15,
        Op::EndSession { .. } => 16,
    }
}

/// One step of a random run.
#[derive(Clone, Debug)]
enum Choice {
    /// Among the enumerated operations: a category present (by weight), its `index`-th operation.
    Candidate { kind: u8, index: u16 },
    /// An arbitrary operation (often refused, sometimes outside the enumerated domain).
    Arbitrary(Op),
}

fn pick(ops: &[Op], kind: u8, index: u16) -> Option<Op> {
    let mut present = [false; CATEGORIES];
    for op in ops {
        present[category(op)] = true;
    }
    let total: u32 = (0..CATEGORIES)
        .filter(|&c| present[c])
        .map(|c| WEIGHTS[c])
        .sum();
    if total == 0 {
        return None;
    }
    let mut x = kind as u32 % total;
    let c = (0..CATEGORIES).filter(|&c| present[c]).find(|&c| {
        if x < WEIGHTS[c] {
            true
        } else {
            x -= WEIGHTS[c];
            false
        }
    })?;
    let of_category: Vec<&Op> = ops.iter().filter(|op| category(op) == c).collect();
    Some(of_category[index as usize % of_category.len()].clone())
}

fn arb_set() -> impl Strategy<Value = RecordSet> {
    prop::collection::vec(0u8..14, 0..4).prop_map(|ids| ids.into_iter().collect())
}

fn arb_scope() -> impl Strategy<Value = Scope> {
    prop_oneof![
        Just(Scope::Private),
        Just(Scope::Shared),
        Just(Scope::Public)
    ]
}

fn arb_confidence() -> impl Strategy<Value = Confidence> {
    prop_oneof![Just(Confidence::Low), Just(Confidence::High)]
}

/// Any operation, with ids and parameters slightly beyond the configuration's ranges.
fn arb_op() -> impl Strategy<Value = Op> {
    let agent = 0u8..5;
    let record = 0u8..14;
    let kind = prop_oneof![
        Just(Kind::Belief),
        Just(Kind::Summary),
        Just(Kind::Profile),
        Just(Kind::ReversibleAction),
        Just(Kind::IrreversibleAction),
    ];
    let tier = prop_oneof![
        Just(Tier::Low),
        Just(Tier::Medium),
        Just(Tier::ExternalAction)
    ];
    let isolation = prop_oneof![
        Just(Isolation::RawRead),
        Just(Isolation::TentativeRead),
        Just(Isolation::ValidatedRead),
        Just(Isolation::CommittedRead),
        Just(Isolation::ActionSafeRead),
    ];
    let validity = (0u8..5, prop_oneof![Just(FOREVER), 0u8..6])
        .prop_map(|(from, until)| Validity { from, until });
    prop_oneof![
        Just(Op::Tick),
        (
            0u8..5,
            0u8..3,
            0u8..3,
            arb_confidence(),
            arb_scope(),
            agent.clone()
        )
            .prop_map(
                |(source, slot, value, confidence, scope, owner)| Op::Observe {
                    source,
                    slot,
                    value,
                    confidence,
                    scope,
                    owner,
                }
            ),
        (agent.clone(), tier, isolation).prop_map(|(agent, tier, isolation)| Op::Begin {
            agent,
            tier,
            isolation,
        }),
        (
            agent.clone(),
            kind,
            (0u8..3, 0u8..3, 0u8..5),
            arb_confidence(),
            arb_scope(),
            arb_set(),
            validity,
        )
            .prop_map(
                |(agent, kind, (slot, value, source), confidence, scope, parents, validity)| {
                    Op::Stage {
                        agent,
                        kind,
                        slot,
                        value,
                        source,
                        confidence,
                        scope,
                        parents,
                        validity,
                    }
                }
            ),
        (agent.clone(), record.clone()).prop_map(|(agent, record)| Op::Adopt { agent, record }),
        agent.clone().prop_map(|agent| Op::Commit { agent }),
        agent.clone().prop_map(|agent| Op::Abort { agent }),
        (agent.clone(), any::<bool>(), arb_set()).prop_map(|(agent, reversible, support)| {
            Op::CallTool {
                agent,
                reversible,
                support,
            }
        }),
        record
            .clone()
            .prop_map(|record| Op::RequestRevocation { record }),
        record
            .clone()
            .prop_map(|record| Op::ApplyRevocation { record }),
        record.clone().prop_map(|record| Op::Revalidate { record }),
        record.clone().prop_map(|view| Op::Rebuild { view }),
        (record.clone(), any::<bool>()).prop_map(|(record, keep)| Op::Resolve { record, keep }),
        (agent.clone(), record).prop_map(|(agent, record)| Op::Read { agent, record }),
        agent.prop_map(|agent| Op::EndSession { agent }),
    ]
}

fn arb_choice() -> impl Strategy<Value = Choice> {
    prop_oneof![
        6 => (any::<u8>(), any::<u16>()).prop_map(|(kind, index)| Choice::Candidate { kind, index }),
        1 => arb_op().prop_map(Choice::Arbitrary),
    ]
}

/// May the enumeration offer `op` and `step` still refuse it with `refusal`?
fn refusal_left_to_step(op: &Op, refusal: &Refusal) -> bool {
    let gated_call = matches!(
        op,
        Op::CallTool {
            reversible: false,
            ..
        }
    );
    let checked_by_step = matches!(
        op,
        Op::Revalidate { .. } | Op::Rebuild { .. } | Op::Resolve { .. }
    );
    match refusal {
        Refusal::Blocked(_) => gated_call,
        Refusal::Disabled(_) => checked_by_step,
        Refusal::Illegal(_) => false,
    }
}

/// Applies a refused `op` in place and checks that nothing changed.
fn assert_refusal_changes_nothing(
    model: &MemTx,
    state: &State,
    op: &Op,
    refusal: &Refusal,
) -> Result<(), TestCaseError> {
    prop_assert!(
        model.next_state(state, op.clone()).is_none(),
        "a refused operation is a transition: {op:?}"
    );
    prop_assert!(
        !matches!(refusal, Refusal::Illegal(_)),
        "step returned an illegal move as a refusal: {refusal}"
    );
    let mut in_place = state.clone();
    let again = apply(&model.cfg, &mut in_place, op);
    prop_assert_eq!(again, Err(*refusal), "refusal is not deterministic");
    prop_assert!(
        in_place == *state,
        "refused {:?} ({}) changed the state:\nbefore\n{:?}after\n{:?}",
        op,
        refusal,
        state,
        in_place
    );
    Ok(())
}

/// Runs one random sequence, asserting the invariants after every accepted step; `visit` sees
/// every state reached.
fn run(choices: &[Choice], mut visit: impl FnMut(&MemTx, &State)) -> Result<(), TestCaseError> {
    let cfg = cfg();
    let model = MemTx::new(cfg.clone());
    let mut state = State::initial();
    let mut trace: Vec<Op> = Vec::new();
    let mut ops = Vec::new();
    for choice in choices {
        let (op, candidate) = match choice {
            Choice::Candidate { kind, index } => {
                ops.clear();
                candidate_ops(&cfg, &state, &mut ops);
                match pick(&ops, *kind, *index) {
                    Some(op) => (op, true),
                    None => continue,
                }
            }
            Choice::Arbitrary(op) => (op.clone(), false),
        };
        match step(&cfg, &state, &op) {
            Ok(next) => {
                trace.push(op);
                state = next;
                visit(&model, &state);
                for p in PROPERTIES.iter().filter(|p| p.is_invariant()) {
                    prop_assert!(
                        (p.holds)(&model, &state),
                        "property {} violated after\n{}in\n{:?}",
                        p.name,
                        trace_text(&trace),
                        state
                    );
                }
            }
            Err(refusal) => {
                prop_assert!(
                    !candidate || refusal_left_to_step(&op, &refusal),
                    "the enumeration offered {:?}, refused: {} after\n{}in\n{:?}",
                    op,
                    refusal,
                    trace_text(&trace),
                    state
                );
                assert_refusal_changes_nothing(&model, &state, &op, &refusal)?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config(2000))]

    #[test]
    fn every_always_property_holds_after_every_step(
        choices in prop::collection::vec(arb_choice(), 1..64)
    ) {
        run(&choices, |_, _| {})?;
    }
}

proptest! {
    #![proptest_config(proptest_config(128))]

    #[test]
    fn refused_steps_change_nothing(
        walk in prop::collection::vec((any::<u8>(), any::<u16>()), 1..40),
        probes in prop::collection::vec(arb_op(), 64),
    ) {
        let cfg = cfg();
        let model = MemTx::new(cfg.clone());
        let mut state = State::initial();
        let mut ops = Vec::new();
        let mut refused = 0usize;
        for &(kind, index) in &walk {
            ops.clear();
            candidate_ops(&cfg, &state, &mut ops);
            // Probe arbitrary operations and a spread of the enumerated ones.
            let stride = (ops.len() / 16).max(1);
            let sampled = ops.iter().step_by(stride).cloned();
            for op in probes.iter().cloned().chain(sampled) {
                if let Err(refusal) = step(&cfg, &state, &op) {
                    assert_refusal_changes_nothing(&model, &state, &op, &refusal)?;
                    refused += 1;
                }
            }
            let Some(op) = pick(&ops, kind, index) else { break };
            if let Ok(next) = step(&cfg, &state, &op) {
                prop_assert!(
                    violated_invariants(&model, &next).is_empty(),
                    "invariants {:?} violated by {:?} in\n{:?}",
                    violated_invariants(&model, &next),
                    op,
                    next
                );
                state = next;
            }
        }
        // Most arbitrary probes are refused: the test did test something.
        prop_assert!(refused > 0);
    }
}

#[test]
fn the_random_configuration_is_valid_and_wider_than_the_presets() {
    let cfg = cfg();
    cfg.validate().unwrap();
    let large = memtx_model::presets::preset("large", Variant::Memtx).unwrap();
    assert!(cfg.bounds.agents > large.bounds.agents);
    assert!(cfg.bounds.records > large.bounds.records);
    assert!(cfg.bounds.ticks > large.bounds.ticks);
    assert!(cfg.bounds.slots > large.bounds.slots);
    assert!(cfg.domain.writes.len() > large.domain.writes.len());
    assert!(cfg.domain.isolations.len() == 5 && cfg.domain.observe);
}

#[test]
fn random_sequences_reach_every_example() {
    // Non-vacuity of the random runs: a fixed set of sequences from the same strategy reaches
    // every `sometimes` example of PROPERTIES (an irreversible call, a deep cascade, a stale
    // write aborted, ...), so the invariants above are judged on states where they could fail.
    let mut runner = TestRunner::deterministic();
    let strategy = prop::collection::vec(arb_choice(), 1..64);
    let examples: Vec<_> = PROPERTIES.iter().filter(|p| !p.is_invariant()).collect();
    let mut reached = BTreeSet::new();
    for _ in 0..WALKS {
        let choices = strategy.new_tree(&mut runner).unwrap().current();
        run(&choices, |model, state| {
            for p in &examples {
                if (p.holds)(model, state) {
                    reached.insert(p.key);
                }
            }
        })
        .unwrap();
    }
    let missing: Vec<_> = examples
        .iter()
        .filter(|p| !reached.contains(p.key))
        .map(|p| p.name)
        .collect();
    assert!(missing.is_empty(), "never reached: {missing:?}");
}

proptest! {
    #![proptest_config(proptest_config(48))]

    /// The explorer's in-place paths (`MemTx::next_state_into`, `State::clone_from`,
    /// `State::unpack_into`) give exactly the values of their by-value counterparts, whatever
    /// the reused value held before: the walk's states are overwritten by longer and shorter
    /// ones, which is what the prefix copies (four slots, or all) must get right.
    #[test]
    fn in_place_steps_and_decoding_agree_with_fresh_values(
        walk in prop::collection::vec((any::<u8>(), any::<u16>()), 1..40),
    ) {
        let cfg = cfg();
        let model = MemTx::new(cfg.clone());
        let mut states = vec![State::initial()];
        let mut ops = Vec::new();
        for &(kind, index) in &walk {
            let state = states[states.len() - 1].clone();
            ops.clear();
            candidate_ops(&cfg, &state, &mut ops);
            let Some(op) = pick(&ops, kind, index) else { break };
            if let Ok(next) = step(&cfg, &state, &op) {
                states.push(next);
            }
        }
        let mut reused = states[states.len() - 1].clone();
        let mut bytes = Vec::new();
        let mut compared = 0usize;
        for (i, state) in states.iter().enumerate() {
            let mut copy = states[states.len() - 1 - i].clone();
            copy.clone_from(state);
            prop_assert_eq!(&copy, state);
            bytes.clear();
            state.pack(&mut bytes);
            prop_assert!(reused.unpack_into(&bytes));
            prop_assert_eq!(&reused, state);
            ops.clear();
            candidate_ops(&cfg, state, &mut ops);
            for op in ops.iter().step_by((ops.len() / 8).max(1)) {
                let fresh = model.next_state(state, op.clone());
                let stepped = model.next_state_into(state, op.clone(), &mut reused);
                prop_assert_eq!(fresh.is_some(), stepped, "{:?}", op);
                match fresh {
                    Some(fresh) => {
                        prop_assert_eq!(&fresh, &reused, "{:?}", op);
                        compared += 1;
                    }
                    // After a refusal the reused value is unspecified: refill it with another
                    // state of the walk.
                    None => reused = states[i / 2].clone(),
                }
            }
        }
        prop_assert!(compared > 0);
    }
}

proptest! {
    #![proptest_config(proptest_config(512))]

    /// Decoding is total and canonical: any bytes (here, real encodings with bytes nudged
    /// just past their valid values, cut or added) either decode to a state that packs back to exactly those bytes, or are
    /// refused, without a panic.
    #[test]
    fn decoding_accepts_exactly_the_encodings(
        walk in prop::collection::vec((any::<u8>(), any::<u16>()), 1..30),
        edits in prop::collection::vec((any::<u16>(), -3i8..=3), 0..4),
        cut in any::<u8>(),
        extra in prop::collection::vec(any::<u8>(), 0..3),
    ) {
        let cfg = cfg();
        let mut state = State::initial();
        let mut ops = Vec::new();
        for &(kind, index) in &walk {
            ops.clear();
            candidate_ops(&cfg, &state, &mut ops);
            let Some(op) = pick(&ops, kind, index) else { break };
            if let Ok(next) = step(&cfg, &state, &op) {
                state = next;
            }
        }
        let mut bytes = Vec::new();
        state.pack(&mut bytes);
        prop_assert_eq!(State::unpack(&bytes), Some(state.clone()));
        for &(at, delta) in &edits {
            let at = at as usize % bytes.len();
            bytes[at] = bytes[at].wrapping_add_signed(delta);
        }
        if cut % 4 == 0 {
            bytes.truncate(cut as usize % (bytes.len() + 1));
        }
        bytes.extend_from_slice(&extra);
        // Decoding into a value that held another state must give the same answer.
        let mut reused = state.clone();
        let accepted = reused.unpack_into(&bytes);
        prop_assert_eq!(accepted, State::unpack(&bytes).is_some());
        if accepted {
            let mut again = Vec::new();
            reused.pack(&mut again);
            prop_assert_eq!(again, bytes);
        }
    }
}

proptest! {
    #![proptest_config(proptest_config(48))]

    /// The locality key (`packed::locality`, the explorer's work split) changes exactly as
    /// its documentation says: always when an operation adds a record (Observe, Stage,
    /// CallTool), never except by those and Rebuild. A wrong claim would cost only speed, but
    /// the documentation promises it.
    #[test]
    fn the_locality_key_changes_only_when_records_are_added_or_rebuilt(
        walk in prop::collection::vec((any::<u8>(), any::<u16>()), 1..40),
    ) {
        let cfg = cfg();
        let mut state = State::initial();
        let mut ops = Vec::new();
        let (mut kept, mut changed) = (0usize, 0usize);
        for &(kind, index) in &walk {
            ops.clear();
            candidate_ops(&cfg, &state, &mut ops);
            for op in ops.iter().step_by((ops.len() / 16).max(1)) {
                let Ok(next) = step(&cfg, &state, op) else { continue };
                let adds = next.len() > state.len();
                let may_change = adds || matches!(op, Op::Rebuild { .. });
                if next.locality() == state.locality() {
                    prop_assert!(!adds, "{:?} added a record but kept the key", op);
                    kept += 1;
                } else {
                    prop_assert!(may_change, "{:?} changed the key", op);
                    changed += 1;
                }
            }
            let Some(op) = pick(&ops, kind, index) else { break };
            if let Ok(next) = step(&cfg, &state, &op) {
                state = next;
            }
        }
        prop_assert!(kept > 0);
        prop_assert!(changed > 0);
    }
}
