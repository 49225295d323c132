//! The state machine: which operations to try in a state, and one step with its ghost update.
//!
//! The protocol's rules live in `ops`, `pipeline`, `gate` and `cascade`; this module only
//! enumerates the operations the configuration's [`crate::Domain`] asks for, in a fixed order
//! (so exploration and counterexamples are deterministic), and wraps each step with the ghost
//! observer. [`MemTx`] implements `stateright::Model`.

use crate::config::{Config, Enumeration};
use crate::evidence::Confidence;
use crate::ghost::observe_step;
use crate::lifecycle::Life;
use crate::ops::{apply, Families, Family, Op, Refusal};
use crate::properties::{PropertyDef, PROPERTIES};
use crate::record::{Kind, Reason, RecordSet, Validity};
use crate::state::State;
use crate::symmetry::Symmetry;
use crate::txn::{visible, Isolation, Tier};
use stateright::{Model, Property};

/// The MemTX protocol as a `stateright` model over one configuration.
#[derive(Clone, Debug)]
pub struct MemTx {
    /// Bounds, domains and variant.
    pub cfg: Config,
    /// The properties this check judges (default: all of [`PROPERTIES`]).
    pub selected: Vec<&'static PropertyDef>,
    /// The renamings symmetry reduction may apply (default: every one the configuration
    /// allows, [`Symmetry::of`]).
    pub symmetry: Symmetry,
    /// A projection: when set, only these operations are proposed (what the configuration
    /// proposes, kept if it is one of them). Every path of the projection is a path of the
    /// model; the checker searches one to shorten a counterexample over its own operations.
    pub only: Option<std::sync::Arc<[Op]>>,
}

impl MemTx {
    /// A model judging every property.
    pub fn new(cfg: Config) -> Self {
        MemTx::with_properties(cfg, PROPERTIES.iter().collect())
    }
    /// A model judging only `selected`.
    pub fn with_properties(cfg: Config, selected: Vec<&'static PropertyDef>) -> Self {
        let symmetry = Symmetry::of(&cfg);
        MemTx {
            cfg,
            selected,
            symmetry,
            only: None,
        }
    }

    /// This model proposing only `ops` (see [`MemTx::only`]), without symmetry reduction (a
    /// renaming of an operation may not be among them).
    pub fn projected(&self, ops: &[Op]) -> MemTx {
        let mut distinct: Vec<Op> = Vec::with_capacity(ops.len());
        for op in ops {
            if !distinct.contains(op) {
                distinct.push(op.clone());
            }
        }
        MemTx {
            symmetry: Symmetry::none(),
            only: Some(distinct.into()),
            ..self.clone()
        }
    }
    /// The canonical representative of `state` under [`MemTx::symmetry`] (symmetry
    /// reduction): see [`crate::symmetry`].
    pub fn representative(&self, state: &State) -> State {
        self.symmetry.canonical(state)
    }
}

/// One step: apply `op` to a copy of `pre` and let the ghost observer judge it.
///
/// An attempted illegal lifecycle move is not hidden: the step yields the unchanged state with
/// I4 marked violated, so the checker reports it with a trace.
pub fn step(cfg: &Config, pre: &State, op: &Op) -> Result<State, Refusal> {
    let mut post = pre.clone();
    step_into(cfg, pre, op, &mut post)?;
    Ok(post)
}

/// [`step`] into `post`, which must start as a copy of `pre` (saves moving the state around on
/// the explorer's hot path). On `Err` the operation is refused and `post` must be discarded.
pub fn step_into(cfg: &Config, pre: &State, op: &Op, post: &mut State) -> Result<(), Refusal> {
    match apply(cfg, post, op) {
        Ok(()) => {
            observe_step(cfg, pre, op, post);
            Ok(())
        }
        Err(Refusal::Illegal(_)) => {
            post.clone_from(pre);
            post.ghost.violate(4);
            Ok(())
        }
        Err(refusal) => Err(refusal),
    }
}

/// Subsets of `of` with `min..=k` elements, in increasing numeric order of their bit masks
/// (the empty set first when `min` is 0). Enumerates sub-masks directly: no allocation.
fn subsets(of: RecordSet, k: u8, min: u8) -> impl Iterator<Item = RecordSet> + Clone {
    let all = of.0;
    let mut next = Some(0u16);
    std::iter::from_fn(move || {
        let sub = next?;
        // The next sub-mask of `all` in increasing order; none after `all` itself.
        next = (sub != all).then(|| sub.wrapping_sub(all) & all);
        Some(sub)
    })
    .filter(move |sub| (min as u32..=k as u32).contains(&sub.count_ones()))
    .map(RecordSet)
}

/// The operations tried in `state`, in a fixed order. The protocol decides: an operation
/// is a transition only if [`step`] performs it (a blocked irreversible call, or any operation
/// whose enabling condition fails, is refused). With [`Enumeration::Filtered`] some
/// operations are not even proposed, by pre-filters that the enabling conditions of `ops`
/// imply (`model/tests/enumeration.rs` checks that every dropped operation is refused);
/// with [`Enumeration::Wide`] every operation of the domain is proposed in every state.
pub fn candidate_ops(cfg: &Config, state: &State, out: &mut Vec<Op>) {
    propose(cfg, state, Families::ALL, out);
}

/// The operations of `families` that [`candidate_ops`] tries in `state`, in its order: the
/// same list with every other family's operations left out (`model/tests/enumeration.rs`
/// checks it), for a caller that chooses a family before an operation.
pub fn candidate_ops_of(cfg: &Config, state: &State, families: Families, out: &mut Vec<Op>) {
    propose(cfg, state, families, out);
}

/// The one enumeration behind both: inlined into each, so that [`candidate_ops`] (the
/// explorers' hot path) tests no family.
#[inline(always)]
fn propose(cfg: &Config, state: &State, families: Families, out: &mut Vec<Op>) {
    let d = &cfg.domain;
    let b = &cfg.bounds;
    let wide = d.enumeration == Enumeration::Wide;
    let free = wide || state.len() < b.records as usize;
    let has = |f: Family| families.contains(f);
    if has(Family::Tick) && (wide || state.clock < b.ticks) {
        out.push(Op::Tick);
    }
    if has(Family::Observe) && d.observe && free {
        for source in 0..b.sources.len() as u8 {
            for slot in 0..b.slots {
                for value in 0..b.values {
                    for w in &d.writes {
                        if w.source != source {
                            continue;
                        }
                        for owner in 0..b.agents {
                            out.push(Op::Observe {
                                source,
                                slot,
                                value,
                                confidence: w.confidence,
                                scope: w.scope,
                                owner,
                            });
                        }
                    }
                }
            }
        }
    }
    let every = state.ids().collect::<RecordSet>();
    // The families that need the records an agent may read, and those of its open
    // transaction.
    let needs_readable = [Family::Stage, Family::Adopt, Family::CallTool, Family::Read]
        .into_iter()
        .any(has);
    let in_txn = needs_readable || has(Family::Commit) || has(Family::Abort);
    for agent in 0..b.agents {
        let open = state.txn(agent).is_some();
        let ends = has(Family::EndSession) && d.sessions;
        if ends && (wide || (!open && !state.context(agent).is_empty())) {
            out.push(Op::EndSession { agent });
        }
        if wide || !open {
            // A harness (or a careless agent) may ask for any level: low and medium tiers
            // at the domain's levels (a bound on what they read), external-action at every
            // level, which the protocol forces to action-safe-read (§4; I14 judges that it
            // did). The requested level is not part of the state, so this adds transitions,
            // not states. Action-safe-read comes first, so a shortest trace shows the level
            // the protocol reads at.
            const ACTION_SAFE_FIRST: [Isolation; 5] = {
                let a = Isolation::ALL;
                [a[4], a[3], a[2], a[1], a[0]]
            };
            for &tier in d.tiers.iter().filter(|_| has(Family::Begin)) {
                let levels: &[Isolation] = if tier == Tier::ExternalAction {
                    &ACTION_SAFE_FIRST
                } else {
                    &d.isolations
                };
                for &isolation in levels {
                    out.push(Op::Begin {
                        agent,
                        tier,
                        isolation,
                    });
                }
            }
            if !wide {
                continue;
            }
        }
        if !in_txn {
            continue;
        }
        let readable: RecordSet = if wide || !needs_readable {
            every
        } else {
            state
                .ids()
                .filter(|&id| {
                    let r = state.record(id);
                    !r.kind.is_action()
                        && r.life() != Life::Revoked
                        && visible(cfg, state, agent, id)
                })
                .collect()
        };
        if free && has(Family::Stage) {
            stage_ops(cfg, state, agent, readable, out);
        }
        // Adopting takes no new record id (found by model/tests/enumeration.rs: proposing
        // it only when an id was free hid adoptions into a full state).
        if has(Family::Adopt) && (d.observe || wide) {
            for id in readable.iter() {
                if wide || state.record(id).life() == Life::Raw {
                    out.push(Op::Adopt { agent, record: id });
                }
            }
        }
        // A record already in the agent's context is not proposed again: serving it twice
        // changes nothing.
        if has(Family::Read) && d.reads {
            let context = state.context(agent);
            for id in state.ids() {
                // `readable` holds the visible records but tool actions and Revoked ones, so
                // visibility is judged again only for a Revoked record.
                let r = state.record(id);
                let new = wide
                    || (!context.contains(id)
                        && !r.kind.is_action()
                        && (readable.contains(id)
                            || (r.life() == Life::Revoked && visible(cfg, state, agent, id))));
                if new {
                    out.push(Op::Read { agent, record: id });
                }
            }
        }
        if has(Family::Commit) {
            out.push(Op::Commit { agent });
        }
        if has(Family::Abort) {
            out.push(Op::Abort { agent });
        }
        if free && has(Family::CallTool) {
            let in_force: RecordSet = if wide {
                every
            } else {
                readable
                    .iter()
                    .filter(|&id| state.record(id).life().is_committed())
                    .collect()
            };
            for reversible in [true, false] {
                if reversible && !d.reversible_calls {
                    continue;
                }
                for support in subsets(in_force, d.support, 0) {
                    out.push(Op::CallTool {
                        agent,
                        reversible,
                        support,
                    });
                }
            }
        }
    }
    let repairs = [
        Family::RequestRevocation,
        Family::ApplyRevocation,
        Family::Revalidate,
        Family::Rebuild,
        Family::Resolve,
    ];
    if !repairs.into_iter().any(has) {
        return;
    }
    for id in state.ids() {
        let r = state.record(id);
        let requestable = !r.kind.is_action() && r.life().is_committed() && !r.pending_revocation;
        if has(Family::RequestRevocation) && d.revocations && (wide || requestable) {
            out.push(Op::RequestRevocation { record: id });
        }
        if has(Family::ApplyRevocation) && (wide || r.pending_revocation) {
            out.push(Op::ApplyRevocation { record: id });
        }
        let restageable = r.life() == Life::Quarantined && state.txn(r.owner).is_some();
        if has(Family::Revalidate) && (wide || (restageable && r.kind == Kind::Belief)) {
            out.push(Op::Revalidate { record: id });
        }
        if has(Family::Rebuild) && (wide || (restageable && r.kind.is_view())) {
            out.push(Op::Rebuild { view: id });
        }
        let in_review = r.life() == Life::Quarantined
            && matches!(r.reason, Some(Reason::Review | Reason::ScopeReview));
        if has(Family::Resolve) && d.reviews && (wide || in_review) {
            out.push(Op::Resolve {
                record: id,
                keep: true,
            });
            out.push(Op::Resolve {
                record: id,
                keep: false,
            });
        }
    }
}

fn stage_ops(cfg: &Config, state: &State, agent: u8, readable: RecordSet, out: &mut Vec<Op>) {
    let d = &cfg.domain;
    let b = &cfg.bounds;
    let now = state.clock;
    for &kind in &d.stage_kinds {
        if kind.is_view() {
            let fewest = if d.enumeration == Enumeration::Wide {
                0
            } else {
                1
            };
            for &scope in &d.view_scopes {
                for parents in subsets(readable, d.view_parents, fewest) {
                    out.push(Op::Stage {
                        agent,
                        kind,
                        slot: 0,
                        value: 0,
                        source: 0,
                        confidence: Confidence::High,
                        scope,
                        parents,
                        validity: Validity::open(now),
                    });
                }
            }
            continue;
        }
        let sets = subsets(readable, d.belief_parents, 0);
        for slot in 0..b.slots {
            for value in 0..b.values {
                for w in &d.writes {
                    for &shape in &d.validities {
                        let validity = shape.at(now);
                        for parents in sets.clone() {
                            let (source, confidence, scope) = (w.source, w.confidence, w.scope);
                            out.push(Op::Stage {
                                agent,
                                kind,
                                slot,
                                value,
                                source,
                                confidence,
                                scope,
                                parents,
                                validity,
                            });
                        }
                    }
                }
            }
        }
    }
}

impl MemTx {
    /// The step `op` takes where the environment offers one step as several operations (the
    /// explorer's `repeats` hook): a `Begin` is keyed by its agent, tier and the level the
    /// protocol reads at ([`crate::ops::begin_isolation`]), so that an external-action `Begin`
    /// at each requested level repeats the one before it: the requested level is not state,
    /// and the ghost judges the level read, not the one asked. Its extra rule is
    /// `op.begin.forced-isolation` where its own request is overridden. `None` for every other
    /// operation.
    pub fn repeats(&self, _state: &State, op: &Op) -> Option<(u64, u128)> {
        let Op::Begin {
            agent,
            tier,
            isolation,
        } = *op
        else {
            return None;
        };
        let read = crate::ops::begin_isolation(tier, isolation);
        let key = u64::from_le_bytes([agent, tier as u8, read as u8, 0, 0, 0, 0, 0]);
        let forced = crate::rules::Rule::OpBeginForcedIsolation as u8;
        Some((key, u128::from(read != isolation) << forced))
    }

    /// [`Model::actions`] of `families` only ([`candidate_ops_of`]), in the same order.
    pub fn actions_of(&self, state: &State, families: Families, actions: &mut Vec<Op>) {
        candidate_ops_of(&self.cfg, state, families, actions);
        self.keep_only(actions);
    }

    /// Drops the operations a [projected](MemTx::projected) model does not take.
    fn keep_only(&self, actions: &mut Vec<Op>) {
        if let Some(only) = &self.only {
            actions.retain(|op| only.contains(op));
        }
    }

    /// [`Model::next_state`] into an existing state value: `out` becomes the successor of
    /// `state` by `op` and the result is `true`, or the operation is refused and the result is
    /// `false` (`out` is then unspecified). Explorers that reuse one successor value call this
    /// instead of `next_state`, saving a whole-state copy per generated state.
    pub fn next_state_into(&self, state: &State, op: Op, out: &mut State) -> bool {
        out.clone_from(state);
        step_into(&self.cfg, state, &op, out).is_ok()
    }
}

impl Model for MemTx {
    type State = State;
    type Action = Op;

    fn init_states(&self) -> Vec<State> {
        vec![State::initial()]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Op>) {
        candidate_ops(&self.cfg, state, actions);
        self.keep_only(actions);
    }

    #[inline]
    fn next_state(&self, state: &State, op: Op) -> Option<State> {
        let mut post = state.clone();
        step_into(&self.cfg, state, &op, &mut post).ok()?;
        Some(post)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        self.selected.iter().map(|p| p.to_stateright()).collect()
    }

    fn format_action(&self, op: &Op) -> String {
        crate::display::op_line(op)
    }
}
