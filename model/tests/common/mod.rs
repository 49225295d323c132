//! Shared helpers for the `memtx-model` integration tests.
//!
//! * configurations wider than the exhaustive presets ([`wide`]), with named sources
//!   ([`MID_A`], [`MID_B`], [`HIGH`], [`LOW`]);
//! * operation builders that read like docs/protocol.md §5 (`begin`, `belief(..).parents(..)`,
//!   `commit`, `irreversible`, ...);
//! * invariant helpers over `properties::PROPERTIES`;
//! * a small scenario DSL: a named list of steps, each an operation with its expected outcome
//!   (accepted, refused, blocked by the gate) followed by assertions on the resulting state.
//!   Every accepted step is checked against every `always` property (unless the scenario runs a
//!   defective variant and opts out).

#![allow(dead_code)]

use memtx_model::config::{all_writes, Bounds, Config, Domain, ValidityShape, Variant};
use memtx_model::display::op_line;
use memtx_model::evidence::{Authority, Confidence};
use memtx_model::gate::GateBlock;
use memtx_model::machine::{candidate_ops, step, MemTx};
use memtx_model::ops::{apply, Op, Refusal};
use memtx_model::properties::PROPERTIES;
use memtx_model::record::{Kind, Reason, RecordId, RecordSet, Scope, Validity, FOREVER};
use memtx_model::state::State;
use memtx_model::txn::{Isolation, Tier};
use memtx_model::Life;

/// Source 0: mid authority (0.8).
pub const MID_A: u8 = 0;
/// Source 1: mid authority (0.8), a different source of the same authority as [`MID_A`].
pub const MID_B: u8 = 1;
/// Source 2: high authority (0.95): passes the evidence check on its own.
pub const HIGH: u8 = 2;
/// Source 3: low authority (0.5).
pub const LOW: u8 = 3;

/// A configuration wider than every exhaustive preset: 4 agents, 16 records, ticks 0..=3,
/// 2 slots, 2 values, sources [mid, mid, high, low], every write shape, tier and isolation.
pub fn wide(variant: Variant) -> Config {
    let scopes = [Scope::Private, Scope::Shared, Scope::Public];
    Config {
        preset: "tests-wide".into(),
        bounds: Bounds {
            agents: 4,
            records: 16,
            ticks: 3,
            slots: 2,
            values: 2,
            sources: vec![
                Authority::Mid,
                Authority::Mid,
                Authority::High,
                Authority::Low,
            ],
        },
        domain: Domain {
            tiers: vec![Tier::Low, Tier::Medium, Tier::ExternalAction],
            isolations: vec![
                Isolation::RawRead,
                Isolation::TentativeRead,
                Isolation::ValidatedRead,
                Isolation::CommittedRead,
                Isolation::ActionSafeRead,
            ],
            stage_kinds: vec![Kind::Belief, Kind::Summary, Kind::Profile],
            writes: all_writes(4, &[Confidence::Low, Confidence::High], &scopes),
            view_scopes: scopes.to_vec(),
            validities: vec![
                ValidityShape::Open,
                ValidityShape::OneTick,
                ValidityShape::FromNextTick,
            ],
            belief_parents: 2,
            view_parents: 2,
            support: 2,
            observe: true,
            reversible_calls: true,
            revocations: true,
            reviews: true,
            reads: true,
            sessions: true,
            enumeration: memtx_model::config::Enumeration::Filtered,
        },
        variant,
    }
}

/// A record set from a list of ids.
pub fn set(ids: &[RecordId]) -> RecordSet {
    ids.iter().copied().collect()
}

// ---------------------------------------------------------------------------------------------
// Operation builders (docs/protocol.md §5)
// ---------------------------------------------------------------------------------------------

/// `Tick`.
pub fn tick() -> Op {
    Op::Tick
}

/// `Begin(agent, tier, isolation)`.
pub fn begin(agent: u8, tier: Tier, isolation: Isolation) -> Op {
    Op::Begin {
        agent,
        tier,
        isolation,
    }
}

/// `Begin` of a medium-tier transaction reading at committed-read.
pub fn begin_medium(agent: u8) -> Op {
    begin(agent, Tier::Medium, Isolation::CommittedRead)
}

/// `Begin` of an external-action transaction (it reads action-safe).
pub fn begin_external(agent: u8) -> Op {
    begin(agent, Tier::ExternalAction, Isolation::ActionSafeRead)
}

/// `Commit(agent)`.
pub fn commit(agent: u8) -> Op {
    Op::Commit { agent }
}

/// `Abort(agent)`.
pub fn abort(agent: u8) -> Op {
    Op::Abort { agent }
}

/// An irreversible `CallTool` declaring `support`.
pub fn irreversible(agent: u8, support: &[RecordId]) -> Op {
    Op::CallTool {
        agent,
        reversible: false,
        support: set(support),
    }
}

/// A reversible `CallTool` declaring `support`.
pub fn reversible(agent: u8, support: &[RecordId]) -> Op {
    Op::CallTool {
        agent,
        reversible: true,
        support: set(support),
    }
}

/// `RequestRevocation(record)`: an external correction arrives.
pub fn request_revocation(record: RecordId) -> Op {
    Op::RequestRevocation { record }
}

/// `ApplyRevocation(record)`.
pub fn apply_revocation(record: RecordId) -> Op {
    Op::ApplyRevocation { record }
}

/// `Revalidate(record)`.
pub fn revalidate(record: RecordId) -> Op {
    Op::Revalidate { record }
}

/// `Rebuild(view)`.
pub fn rebuild(view: RecordId) -> Op {
    Op::Rebuild { view }
}

/// `Resolve(record, keep)`.
pub fn resolve(record: RecordId, keep: bool) -> Op {
    Op::Resolve { record, keep }
}

/// `Adopt(agent, record)`: stage a visible Raw record into the agent's transaction.
/// `Read(agent, record)`: serve a visible record to the agent (revision 3).
pub fn read(agent: u8, record: RecordId) -> Op {
    Op::Read { agent, record }
}

/// `EndSession(agent)`: clear the agent's context (revision 3).
pub fn end_session(agent: u8) -> Op {
    Op::EndSession { agent }
}

pub fn adopt(agent: u8, record: RecordId) -> Op {
    Op::Adopt { agent, record }
}

/// `Observe(source, slot, value, scope, owner)` with high confidence: a raw tool result.
pub fn observe(source: u8, slot: u8, value: u8, scope: Scope, owner: u8) -> Op {
    Op::Observe {
        source,
        slot,
        value,
        confidence: Confidence::High,
        scope,
        owner,
    }
}

/// A `Stage` under construction. Defaults: a Shared belief from [`MID_A`] with high confidence,
/// no parents, valid `[0, ∞)`.
#[derive(Clone, Copy, Debug)]
pub struct Stage {
    agent: u8,
    kind: Kind,
    slot: u8,
    value: u8,
    source: u8,
    confidence: Confidence,
    scope: Scope,
    parents: RecordSet,
    validity: Validity,
}

/// `Stage(agent, Belief, slot, value, ...)`: see [`Stage`] for the defaults.
pub fn belief(agent: u8, slot: u8, value: u8) -> Stage {
    Stage {
        agent,
        kind: Kind::Belief,
        slot,
        value,
        source: MID_A,
        confidence: Confidence::High,
        scope: Scope::Shared,
        parents: RecordSet::EMPTY,
        validity: Validity::open(0),
    }
}

/// `Stage(agent, Summary, ...)` derived from `parents`.
pub fn summary(agent: u8, parents: &[RecordId]) -> Stage {
    Stage {
        kind: Kind::Summary,
        ..belief(agent, 0, 0).parents(parents)
    }
}

/// `Stage(agent, Profile, ...)` derived from `parents`.
pub fn profile(agent: u8, parents: &[RecordId]) -> Stage {
    Stage {
        kind: Kind::Profile,
        ..belief(agent, 0, 0).parents(parents)
    }
}

impl Stage {
    /// Of kind `kind` (tool-action kinds are refused by `Stage`).
    pub fn kind(self, kind: Kind) -> Self {
        Stage { kind, ..self }
    }
    /// From source `source`.
    pub fn source(self, source: u8) -> Self {
        Stage { source, ..self }
    }
    /// With writer confidence low (0.4).
    pub fn low_confidence(self) -> Self {
        Stage {
            confidence: Confidence::Low,
            ..self
        }
    }
    /// With scope `scope`.
    pub fn scope(self, scope: Scope) -> Self {
        Stage { scope, ..self }
    }
    /// Private to its owner.
    pub fn private(self) -> Self {
        self.scope(Scope::Private)
    }
    /// Public.
    pub fn public(self) -> Self {
        self.scope(Scope::Public)
    }
    /// Declared parents.
    pub fn parents(self, parents: &[RecordId]) -> Self {
        Stage {
            parents: set(parents),
            ..self
        }
    }
    /// Valid over `[from, until)`.
    pub fn valid(self, from: u8, until: u8) -> Self {
        Stage {
            validity: Validity { from, until },
            ..self
        }
    }
    /// Valid over `[from, ∞)`.
    pub fn valid_from(self, from: u8) -> Self {
        self.valid(from, FOREVER)
    }
}

impl From<Stage> for Op {
    fn from(s: Stage) -> Op {
        Op::Stage {
            agent: s.agent,
            kind: s.kind,
            slot: s.slot,
            value: s.value,
            source: s.source,
            confidence: s.confidence,
            scope: s.scope,
            parents: s.parents,
            validity: s.validity,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------------

/// Keys of the `always` properties that `state` violates.
pub fn violated_invariants(model: &MemTx, state: &State) -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .filter(|p| p.is_invariant() && !(p.holds)(model, state))
        .map(|p| p.key)
        .collect()
}

/// Panics, naming the property and printing the state, if any `always` property fails.
pub fn assert_invariants(model: &MemTx, state: &State, context: &str) {
    for p in PROPERTIES.iter().filter(|p| p.is_invariant()) {
        assert!(
            (p.holds)(model, state),
            "{context}: property {} violated in\n{state:?}",
            p.name
        );
    }
}

/// Prints a trace, one operation a line.
pub fn trace_text(trace: &[Op]) -> String {
    trace
        .iter()
        .enumerate()
        .map(|(i, op)| format!("  {:>2}. {}\n", i + 1, op_line(op)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Scenario DSL
// ---------------------------------------------------------------------------------------------

/// A scripted run: a name, a configuration, and the state after the steps so far.
pub struct Scenario {
    name: String,
    model: MemTx,
    state: State,
    trace: Vec<Op>,
    invariants: bool,
}

/// Starts a scenario over the [`wide`] configuration of the fixed protocol.
pub fn scenario(name: &str) -> Scenario {
    Scenario::new(name, wide(Variant::Memtx))
}

impl Scenario {
    /// Starts a scenario over `cfg`, from the initial state.
    pub fn new(name: &str, cfg: Config) -> Self {
        cfg.validate().expect("test configuration is valid");
        let model = MemTx::new(cfg);
        let state = State::initial();
        assert_invariants(&model, &state, name);
        Scenario {
            name: name.into(),
            model,
            state,
            trace: Vec::new(),
            invariants: true,
        }
    }

    /// Runs under `variant` instead (same bounds and domain). A defective variant is expected to
    /// violate properties, so invariants are no longer asserted after each step.
    pub fn variant(mut self, variant: Variant) -> Self {
        self.model.cfg.variant = variant;
        self.invariants = variant == Variant::Memtx;
        self
    }

    /// Stops asserting invariants after each step (a test of a violation).
    pub fn without_invariants(mut self) -> Self {
        self.invariants = false;
        self
    }

    fn context(&self, what: &str) -> String {
        format!(
            "scenario `{}`, step {} ({what}); trace:\n{}",
            self.name,
            self.trace.len() + 1,
            trace_text(&self.trace)
        )
    }

    /// Applies `op`, which must be accepted; asserts every invariant on the new state.
    pub fn step(mut self, op: impl Into<Op>) -> Self {
        let op = op.into();
        let ctx = self.context(&op_line(&op));
        match step(&self.model.cfg, &self.state, &op) {
            Ok(next) => {
                self.state = next;
                self.trace.push(op);
            }
            Err(refusal) => panic!("{ctx}: refused ({refusal}) in\n{:?}", self.state),
        }
        if self.invariants {
            assert_invariants(&self.model, &self.state, &ctx);
        }
        self
    }

    /// `step` refused `op` with `refusal`: applying it in place must not have changed anything
    /// either (a disabled operation is not an action; a blocked call changes nothing).
    fn assert_unchanged_by(&self, op: &Op, refusal: Refusal, ctx: &str) {
        let mut in_place = self.state.clone();
        assert_eq!(
            apply(&self.model.cfg, &mut in_place, op),
            Err(refusal),
            "{ctx}"
        );
        assert!(
            in_place == self.state,
            "{ctx}: the refused operation changed the state"
        );
    }

    /// Applies `op`, which must be refused with exactly `expected`; asserts the state unchanged.
    pub fn refused(self, op: impl Into<Op>, expected: Refusal) -> Self {
        let op = op.into();
        let ctx = self.context(&op_line(&op));
        match step(&self.model.cfg, &self.state, &op) {
            Ok(next) => panic!("{ctx}: expected refusal {expected:?}, was accepted:\n{next:?}"),
            Err(refusal) => assert_eq!(refusal, expected, "{ctx}"),
        }
        self.assert_unchanged_by(&op, expected, &ctx);
        self
    }

    /// Applies `op`, which must be refused as not enabled (any reason); state unchanged.
    pub fn disabled(self, op: impl Into<Op>) -> Self {
        let op = op.into();
        let ctx = self.context(&op_line(&op));
        match step(&self.model.cfg, &self.state, &op) {
            Ok(next) => panic!("{ctx}: expected Disabled, was accepted:\n{next:?}"),
            Err(refusal) => {
                assert!(
                    matches!(refusal, Refusal::Disabled(_)),
                    "{ctx}: expected Disabled, got {refusal:?}"
                );
                self.assert_unchanged_by(&op, refusal, &ctx);
            }
        }
        self
    }

    /// Applies an irreversible call that the action gate must block with `block`.
    pub fn blocked(self, op: impl Into<Op>, block: GateBlock) -> Self {
        self.refused(op, Refusal::Blocked(block))
    }

    /// Asserts on the current state.
    pub fn expect(self, check: impl FnOnce(&State)) -> Self {
        check(&self.state);
        self
    }

    /// Asserts that record `id` is in lifecycle state `life` with reason code `reason`.
    pub fn expect_record(self, id: RecordId, life: Life, reason: Option<Reason>) -> Self {
        let ctx = self.context("expectation");
        let r = self.state.record(id);
        assert_eq!(
            (r.life(), r.reason),
            (life, reason),
            "{ctx}: r{id}\n{:?}",
            self.state
        );
        self
    }

    /// Asserts that record `id` is in lifecycle state `life` (whatever the reason code).
    pub fn expect_life(self, id: RecordId, life: Life) -> Self {
        let ctx = self.context("expectation");
        assert_eq!(
            self.state.record(id).life(),
            life,
            "{ctx}: r{id}\n{:?}",
            self.state
        );
        self
    }

    /// The current state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The model (configuration and properties).
    pub fn model(&self) -> &MemTx {
        &self.model
    }

    /// Keys of the invariants violated in the current state.
    pub fn violations(&self) -> Vec<&'static str> {
        violated_invariants(&self.model, &self.state)
    }

    /// Ends the scenario: asserts every invariant on the final state (fixed protocol only) and
    /// returns it.
    pub fn finish(self) -> State {
        if self.invariants {
            assert_invariants(&self.model, &self.state, &self.context("final state"));
        }
        self.state
    }
}

/// Breadth-first over `cfg`'s model from the initial state, up to `limit` distinct states.
pub fn reachable(cfg: &Config, limit: usize) -> Vec<State> {
    let mut seen = std::collections::HashSet::new();
    let mut queue = std::collections::VecDeque::from([State::initial()]);
    let mut out = Vec::new();
    let mut ops = Vec::new();
    while let Some(s) = queue.pop_front() {
        if out.len() >= limit {
            break;
        }
        if !seen.insert(s.clone()) {
            continue;
        }
        ops.clear();
        candidate_ops(cfg, &s, &mut ops);
        for op in &ops {
            if let Ok(next) = step(cfg, &s, op) {
                queue.push_back(next);
            }
        }
        out.push(s);
    }
    out
}
