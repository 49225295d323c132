//! The operations of docs/protocol.md §5: the model's actions.
//!
//! [`Op`] is a serialisable enum with stable field names (traces are actions replayed). [`apply`]
//! checks an operation's enabling condition and performs its effect; a disabled operation is
//! refused with a [`Refusal`] that says why, and changes nothing.

use crate::cascade::retract;
use crate::config::{Config, Variant};
use crate::evidence::Confidence;
use crate::gate::{self, GateBlock};
use crate::lifecycle::{IllegalMove, Life};
use crate::pipeline::{self, CommitContext, Verdict};
use crate::provenance;
use crate::record::{Effect, Kind, Reason, Record, RecordId, RecordSet, Scope, Validity, FOREVER};
use crate::rules::{fire, Rule};
use crate::state::State;
use crate::txn::{capture_snapshot, in_view, snapshot_seq, visible, Isolation, Tier, Txn};
use serde::{Deserialize, Serialize};

/// One protocol operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Op {
    /// Advance the logical clock.
    Tick,
    /// A raw tool result, recorded outside any transaction.
    Observe {
        /// Source id.
        source: u8,
        /// Slot.
        slot: u8,
        /// Value.
        value: u8,
        /// Confidence attached to the observation.
        confidence: Confidence,
        /// Scope.
        scope: Scope,
        /// Owning agent.
        owner: u8,
    },
    /// Open a transaction and capture its snapshot.
    Begin {
        /// Agent.
        agent: u8,
        /// Tier (harness configuration).
        tier: Tier,
        /// Isolation (ignored for external-action, which reads action-safe).
        isolation: Isolation,
    },
    /// Stage a new Tentative record in the agent's transaction.
    Stage {
        /// Agent.
        agent: u8,
        /// Belief, Summary or Profile.
        kind: Kind,
        /// Slot.
        slot: u8,
        /// Value.
        value: u8,
        /// Source id.
        source: u8,
        /// Writer confidence.
        confidence: Confidence,
        /// Scope.
        scope: Scope,
        /// Declared parents (must be visible).
        parents: RecordSet,
        /// Validity interval.
        validity: Validity,
    },
    /// Stage's second form: adopt a visible Raw record into the agent's transaction.
    Adopt {
        /// Agent.
        agent: u8,
        /// The Raw record.
        record: RecordId,
    },
    /// Run the commit pipeline over the transaction's staged records and close it.
    Commit {
        /// Agent.
        agent: u8,
    },
    /// Retract every staged record (with cascade) and close the transaction.
    Abort {
        /// Agent.
        agent: u8,
    },
    /// Call a tool; irreversible calls pass the action gate first.
    CallTool {
        /// Agent.
        agent: u8,
        /// Reversible (no gate) or irreversible (gated).
        reversible: bool,
        /// Declared support records (must be visible); they become the action's parents.
        support: RecordSet,
    },
    /// An external correction asks to revoke a committed record.
    RequestRevocation {
        /// The record.
        record: RecordId,
    },
    /// Apply a pending revocation: revoke and cascade.
    ApplyRevocation {
        /// The record.
        record: RecordId,
    },
    /// Send a quarantined belief back through the pipeline in its owner's transaction.
    Revalidate {
        /// The record.
        record: RecordId,
    },
    /// Rebuild a quarantined view from its surviving parents in its owner's transaction.
    Rebuild {
        /// The view.
        view: RecordId,
    },
    /// Serve a visible record to the agent (revision 3): it joins the transaction's read set
    /// and the agent's context.
    Read {
        /// Agent.
        agent: u8,
        /// The record.
        record: RecordId,
    },
    /// End the agent's session (revision 3): its context is cleared.
    EndSession {
        /// Agent.
        agent: u8,
    },
    /// The reviewer's verdict on an equal-authority conflict, or on a scope review.
    Resolve {
        /// The record quarantined for review or scope review.
        record: RecordId,
        /// Keep it (it commits, its rivals are Superseded) or reject it (Revoked, cascaded).
        keep: bool,
    },
}

/// Why an operation was not performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refusal {
    /// Its enabling condition does not hold (the reason says which part).
    Disabled(&'static str),
    /// The action gate blocked an irreversible call.
    Blocked(GateBlock),
    /// The protocol attempted a lifecycle move outside the table ([memtx internal bug]).
    Illegal(IllegalMove),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Disabled(why) => write!(f, "not enabled: {why}"),
            Refusal::Blocked(block) => write!(f, "{block}"),
            Refusal::Illegal(m) => write!(f, "[memtx internal bug] {m}"),
        }
    }
}

impl From<IllegalMove> for Refusal {
    fn from(m: IllegalMove) -> Self {
        Refusal::Illegal(m)
    }
}

type Applied = Result<(), Refusal>;

/// One part of an enabling condition: `Ok` when `cond` holds, else a refusal that fires
/// `rule` (an `enable.*` rule of [`crate::rules`]) and gives its statement as the reason.
fn require(cond: bool, rule: Rule) -> Applied {
    if cond {
        Ok(())
    } else {
        fire(rule);
        Err(Refusal::Disabled(rule.statement()))
    }
}

/// A malformed operation (an id outside the configuration's bounds): not a rule of the
/// protocol but a guard against user input (a hand-written trace), so it fires nothing.
fn guard(cond: bool, why: &'static str) -> Applied {
    if cond {
        Ok(())
    } else {
        Err(Refusal::Disabled(why))
    }
}

/// Checks `op`'s enabling condition in `state` and, if it holds, performs it.
/// On `Err`, `state` may be partly changed and must be discarded (callers apply to a clone).
pub fn apply(cfg: &Config, state: &mut State, op: &Op) -> Applied {
    match *op {
        Op::Tick => tick(cfg, state),
        Op::Observe {
            source,
            slot,
            value,
            confidence,
            scope,
            owner,
        } => observe(cfg, state, source, slot, value, confidence, scope, owner),
        Op::Begin {
            agent,
            tier,
            isolation,
        } => begin(cfg, state, agent, tier, isolation),
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
        } => {
            let record = Record {
                kind,
                slot,
                value,
                source,
                confidence,
                owner: agent,
                scope,
                parents,
                validity,
                life: Life::Tentative,
                writer: Some(agent),
                ..Record::default()
            };
            stage(cfg, state, agent, record)
        }
        Op::Adopt { agent, record } => adopt(cfg, state, agent, record),
        Op::Commit { agent } => commit(cfg, state, agent),
        Op::Abort { agent } => abort(cfg, state, agent),
        Op::CallTool {
            agent,
            reversible,
            support,
        } => call_tool(cfg, state, agent, reversible, support),
        Op::RequestRevocation { record } => request_revocation(state, record),
        Op::ApplyRevocation { record } => apply_revocation(cfg, state, record),
        Op::Revalidate { record } => revalidate(state, record),
        Op::Rebuild { view } => rebuild(state, view),
        Op::Resolve { record, keep } => resolve(cfg, state, record, keep),
        Op::Read { agent, record } => read(cfg, state, agent, record),
        Op::EndSession { agent } => end_session(cfg, state, agent),
    }
}

fn tick(cfg: &Config, state: &mut State) -> Applied {
    require(state.clock < cfg.bounds.ticks, Rule::EnTickBound)?;
    state.clock += 1;
    fire(Rule::OpTick);
    Ok(())
}

/// A free record id (`rule` names the operation that needs one).
fn free_record(cfg: &Config, state: &State, rule: Rule) -> Applied {
    require(state.len() < cfg.bounds.records as usize, rule)
}

fn agent_ok(cfg: &Config, agent: u8) -> Applied {
    guard(agent < cfg.bounds.agents, "no such agent")
}

/// The agent's open transaction (`rule` names the operation that needs one).
fn open_txn(cfg: &Config, state: &State, agent: u8, rule: Rule) -> Result<Txn, Refusal> {
    agent_ok(cfg, agent)?;
    let tx = state.txn(agent).copied();
    require(tx.is_some(), rule)?;
    tx.ok_or(Refusal::Disabled(rule.statement()))
}

fn record_ok(state: &State, id: RecordId) -> Applied {
    guard(state.exists(id), "no such record")
}

fn evidence_ok(cfg: &Config, source: u8, slot: u8, value: u8) -> Applied {
    guard(
        (source as usize) < cfg.bounds.sources.len(),
        "no such source",
    )?;
    guard(slot < cfg.bounds.slots, "no such slot")?;
    guard(value < cfg.bounds.values, "no such value")
}

#[allow(clippy::too_many_arguments)]
fn observe(
    cfg: &Config,
    state: &mut State,
    source: u8,
    slot: u8,
    value: u8,
    confidence: Confidence,
    scope: Scope,
    owner: u8,
) -> Applied {
    agent_ok(cfg, owner)?;
    evidence_ok(cfg, source, slot, value)?;
    free_record(cfg, state, Rule::EnObserveFree)?;
    state.push_record(Record {
        kind: Kind::Belief,
        slot,
        value,
        source,
        confidence,
        owner,
        scope,
        validity: Validity::open(state.clock),
        life: Life::Raw,
        ..Record::default()
    });
    fire(Rule::OpObserve);
    Ok(())
}

/// The level a transaction of `tier` that asks for `requested` reads at (§4): an
/// external-action transaction always reads at the strictest level, whatever it asks.
pub fn begin_isolation(tier: Tier, requested: Isolation) -> Isolation {
    if tier == Tier::ExternalAction {
        Isolation::ActionSafeRead
    } else {
        requested
    }
}

fn begin(cfg: &Config, state: &mut State, agent: u8, tier: Tier, isolation: Isolation) -> Applied {
    agent_ok(cfg, agent)?;
    require(state.txn(agent).is_none(), Rule::EnBeginOpen)?;
    let requested = isolation;
    let isolation = begin_isolation(tier, requested);
    if isolation != requested {
        fire(Rule::OpBeginForcedIsolation);
    }
    let snapshot = capture_snapshot(state, isolation);
    if provenance::forgets_at_begin(cfg) {
        // txn-provenance: the context narrowed to the transaction's read set.
        state.set_context(agent, RecordSet::EMPTY);
    }
    state.set_txn(
        agent,
        Some(Txn {
            tier,
            isolation,
            snapshot,
            snapshot_seq: state.next_seq,
        }),
    );
    fire(Rule::OpBegin);
    Ok(())
}

/// The declared parents of a staged record are readable: visible to the transaction
/// (§4), not Revoked (a branch state is never visible; Superseded and Quarantined parents
/// of the snapshot are left to the lineage check, model/README.md), and not tool actions
/// (nothing is derived from an effect).
fn parents_readable(cfg: &Config, state: &State, agent: u8, parents: RecordSet) -> Applied {
    for p in parents.iter() {
        record_ok(state, p)?;
    }
    let all = |ok: &dyn Fn(RecordId) -> bool| parents.iter().all(ok);
    let visible_all = all(&|p| visible(cfg, state, agent, p));
    let none_revoked = all(&|p| state.record(p).life() != Life::Revoked);
    let none_action = all(&|p| !state.record(p).kind.is_action());
    // Every failing part fires its rule; the first one is the reason given.
    let parts = [
        (visible_all, Rule::EnStageParentVisible),
        (none_revoked, Rule::EnStageParentRevoked),
        (none_action, Rule::EnStageParentAction),
    ];
    all_parts(&parts)
}

/// Fires the rule of every part that fails and refuses with the first; `Ok` if all hold.
fn all_parts(parts: &[(bool, Rule)]) -> Applied {
    let mut first = Ok(());
    for &(holds, rule) in parts {
        let refused = require(holds, rule);
        if first.is_ok() {
            first = refused;
        }
    }
    first
}

fn stage(cfg: &Config, state: &mut State, agent: u8, record: Record) -> Applied {
    guard(
        !record.kind.is_action(),
        "tool actions are created by CallTool, not staged",
    )?;
    evidence_ok(cfg, record.source, record.slot, record.value)?;
    guard(
        record.validity.from < record.validity.until,
        "empty validity interval",
    )?;
    let tx = open_txn(cfg, state, agent, Rule::EnStageNoTxn)?;
    free_record(cfg, state, Rule::EnStageFree)?;
    require(
        !record.kind.is_view() || !record.parents.is_empty(),
        Rule::EnStageViewParent,
    )?;
    parents_readable(cfg, state, agent, record.parents)?;
    // The middleware labels the record with what its writer holds (revision 3, §4).
    let id = state.push_record(Record {
        implicit: state.context(agent),
        transcribed: provenance::transcribed(state, agent, &record),
        ..record
    });
    let observed = provenance::observation(state, id, snapshot_seq(cfg, state, &tx));
    state.record_mut(id).observed = observed;
    provenance::serve(state, agent, record.parents.union(RecordSet::single(id)));
    fire(Rule::OpStage);
    Ok(())
}

fn adopt(cfg: &Config, state: &mut State, agent: u8, id: RecordId) -> Applied {
    let tx = open_txn(cfg, state, agent, Rule::EnAdoptNoTxn)?;
    record_ok(state, id)?;
    require(state.record(id).life() == Life::Raw, Rule::EnAdoptNotRaw)?;
    require(visible(cfg, state, agent, id), Rule::EnAdoptNotVisible)?;
    state.move_record(id, Life::Tentative)?;
    // Its content is itself (what the tool returned), observed at the adopting snapshot.
    let observed = snapshot_seq(cfg, state, &tx);
    let r = state.record_mut(id);
    r.writer = Some(agent);
    r.observed = Some(observed);
    forget_in_snapshots(state, id);
    provenance::serve(state, agent, RecordSet::single(id));
    fire(Rule::OpAdopt);
    Ok(())
}

/// A record that re-enters the lifecycle as `Tentative` (adopted, revalidated, rebuilt) is a new,
/// uncommitted version that no open snapshot captured: it leaves every snapshot, so it is read
/// only by the transaction that stages it, and it is "in flight outside the snapshot" for the
/// action gate (the caller's own staging included, docs/protocol.md §4, §7).
fn forget_in_snapshots(state: &mut State, id: RecordId) {
    for agent in 0..state.txns().len() as u8 {
        if let Some(mut tx) = state.txn(agent).copied() {
            tx.snapshot.remove(id);
            state.set_txn(agent, Some(tx));
        }
    }
}

fn commit(cfg: &Config, state: &mut State, agent: u8) -> Applied {
    let tx = open_txn(cfg, state, agent, Rule::EnCommitNoTxn)?;
    let ctx = CommitContext {
        now: state.clock,
        snapshot_seq: snapshot_seq(cfg, state, &tx),
        commit_start: state.next_seq,
    };
    for id in state.staged_by(agent).iter() {
        // A cascade earlier in this commit may already have repaired it.
        if state.record(id).life() != Life::Tentative {
            continue;
        }
        match pipeline::run(cfg, state, id, ctx) {
            Verdict::Pass {
                outranked,
                corrected,
            } => {
                let narrower = pipeline::hidden_narrower_rivals(cfg, state, id);
                supersede(state, outranked, Reason::SupersededByAuthority)?;
                supersede(state, corrected, Reason::SupersededByCorrection)?;
                promote(state, id, tx.tier)?;
                send_to_scope_review(state, narrower)?;
                fire(if tx.tier == Tier::ExternalAction {
                    Rule::PipePassActionSafe
                } else {
                    Rule::PipePassCommitted
                });
            }
            Verdict::Quarantine(reason) => {
                state.move_record(id, Life::Quarantined)?;
                let r = state.record_mut(id);
                r.reason = Some(reason);
                // The reviewer judges the record against the snapshot it was staged from.
                if matches!(reason, Reason::Review | Reason::ScopeReview) {
                    r.review_seq = Some(ctx.snapshot_seq);
                }
            }
            Verdict::Abort(reason) => retract(cfg, state, id, reason)?,
        }
    }
    close(state, agent);
    fire(Rule::OpCommit);
    Ok(())
}

/// (Tentative or Quarantined) → Validated → Committed (→ ActionSafe inside an external-action
/// transaction), taking the next commit sequence number.
fn promote(state: &mut State, id: RecordId, tier: Tier) -> Applied {
    state.move_record(id, Life::Validated)?;
    state.move_record(id, Life::Committed)?;
    if tier == Tier::ExternalAction {
        state.move_record(id, Life::ActionSafe)?;
    }
    let seq = state.next_seq;
    state.next_seq += 1;
    let r = state.record_mut(id);
    r.seq = Some(seq);
    r.reason = None;
    r.review_seq = None;
    Ok(())
}

/// Scope non-interference (c): each record of `narrower` (another agent's Private record under a
/// wider record just committed) leaves force for its owner's review. The reviewer judges it
/// against the records committed since it committed (its own sequence number).
fn send_to_scope_review(state: &mut State, narrower: RecordSet) -> Applied {
    for x in narrower.iter() {
        state.move_record(x, Life::Quarantined)?;
        let r = state.record_mut(x);
        r.reason = Some(Reason::ScopeReview);
        r.review_seq = r.seq;
    }
    if !narrower.is_empty() {
        fire(Rule::PipeConflictNarrowerReview);
    }
    Ok(())
}

fn supersede(state: &mut State, rivals: RecordSet, reason: Reason) -> Applied {
    for x in rivals.iter() {
        state.move_record(x, Life::Superseded)?;
        state.record_mut(x).reason = Some(reason);
    }
    Ok(())
}

/// Closes `agent`'s transaction: its records are no longer staged.
fn close(state: &mut State, agent: u8) {
    for id in state.staged_by(agent).iter() {
        state.record_mut(id).writer = None;
    }
    state.set_txn(agent, None);
}

fn abort(cfg: &Config, state: &mut State, agent: u8) -> Applied {
    open_txn(cfg, state, agent, Rule::EnAbortNoTxn)?;
    for id in state.staged_by(agent).iter() {
        if state.record(id).life() != Life::Revoked {
            retract(cfg, state, id, Reason::Aborted)?;
        }
    }
    close(state, agent);
    fire(Rule::OpAbort);
    Ok(())
}

fn call_tool(
    cfg: &Config,
    state: &mut State,
    agent: u8,
    reversible: bool,
    support: RecordSet,
) -> Applied {
    let tx = open_txn(cfg, state, agent, Rule::EnCallNoTxn)?;
    free_record(cfg, state, Rule::EnCallFree)?;
    for s in support.iter() {
        record_ok(state, s)?;
    }
    all_parts(&[
        (
            support.iter().all(|s| visible(cfg, state, agent, s)),
            Rule::EnCallSupportVisible,
        ),
        (
            support.iter().all(|s| !state.record(s).kind.is_action()),
            Rule::EnCallSupportAction,
        ),
    ])?;
    if reversible {
        // A reversible call has no gate: on support not in force it is not enabled (a
        // cascade cannot repair an action created after it ran, model/README.md).
        require(
            support
                .iter()
                .all(|s| state.record(s).life().is_committed()),
            Rule::EnCallReversibleNotInForce,
        )?;
    } else {
        // The gate is the one place that answers an irreversible call (§7, revision 2).
        gate::check(cfg, state, agent, support).map_err(Refusal::Blocked)?;
    }
    // An executed action enters the lifecycle as Committed (ActionSafe in an external-action txn).
    let life = if tx.tier == Tier::ExternalAction {
        Life::ActionSafe
    } else {
        Life::Committed
    };
    state.push_record(Record {
        kind: if reversible {
            Kind::ReversibleAction
        } else {
            Kind::IrreversibleAction
        },
        owner: agent,
        scope: Scope::Private,
        parents: support,
        validity: Validity {
            from: state.clock,
            until: FOREVER,
        },
        life,
        effect: Some(Effect::Executed),
        ..Record::default()
    });
    // An executed call was served its support; a blocked one served nothing (revision 3.2).
    provenance::serve(state, agent, support);
    fire(if reversible {
        Rule::OpCallReversible
    } else {
        Rule::OpCallIrreversible
    });
    Ok(())
}

fn request_revocation(state: &mut State, id: RecordId) -> Applied {
    record_ok(state, id)?;
    let r = state.record(id);
    require(!r.kind.is_action(), Rule::EnRequestAction)?;
    require(r.life().is_committed(), Rule::EnRequestNotCommitted)?;
    require(!r.pending_revocation, Rule::EnRequestPending)?;
    state.record_mut(id).pending_revocation = true;
    fire(Rule::OpRequestRevocation);
    Ok(())
}

fn apply_revocation(cfg: &Config, state: &mut State, id: RecordId) -> Applied {
    record_ok(state, id)?;
    require(state.record(id).pending_revocation, Rule::EnApplyNotPending)?;
    retract(cfg, state, id, Reason::Revocation)?;
    fire(Rule::OpApplyRevocation);
    Ok(())
}

/// Stages quarantined record `id` back as Tentative in its owner's open transaction
/// (`rule` names the operation that needs one).
fn restage(state: &mut State, id: RecordId, rule: Rule) -> Applied {
    let owner = state.record(id).owner;
    require(state.txn(owner).is_some(), rule)?;
    state.move_record(id, Life::Tentative)?;
    let r = state.record_mut(id);
    r.writer = Some(owner);
    r.reason = None;
    r.review_seq = None;
    forget_in_snapshots(state, id);
    // It is the owner's staging again (it keeps its labels: content and observation).
    provenance::serve(state, owner, RecordSet::single(id));
    Ok(())
}

fn revalidate(state: &mut State, id: RecordId) -> Applied {
    record_ok(state, id)?;
    let r = state.record(id);
    require(r.kind == Kind::Belief, Rule::EnRevalidateNotBelief)?;
    require(
        r.life() == Life::Quarantined,
        Rule::EnRevalidateNotQuarantined,
    )?;
    require(
        state
            .ancestors(id)
            .iter()
            .all(|a| state.record(a).life().is_active()),
        Rule::EnRevalidateAncestor,
    )?;
    restage(state, id, Rule::EnRevalidateNoTxn)?;
    fire(Rule::OpRevalidate);
    Ok(())
}

fn rebuild(state: &mut State, view: RecordId) -> Applied {
    record_ok(state, view)?;
    let v = state.record(view);
    require(v.kind.is_view(), Rule::EnRebuildNotView)?;
    require(v.life() == Life::Quarantined, Rule::EnRebuildNotQuarantined)?;
    let surviving: RecordSet = v
        .parents
        .iter()
        .filter(|&p| state.record(p).life().is_active())
        .collect();
    require(!surviving.is_empty(), Rule::EnRebuildNoParent)?;
    let dropped = RecordSet(v.parents.0 & !surviving.0);
    restage(state, view, Rule::EnRebuildNoTxn)?;
    // A rebuilt view keeps the content it had (revision 3.2, §4): what it dropped as parents
    // it still carries as implicit provenance.
    let v = state.record_mut(view);
    v.parents = surviving;
    v.implicit = v.implicit.union(dropped);
    fire(Rule::OpRebuild);
    Ok(())
}

fn read(cfg: &Config, state: &mut State, agent: u8, id: RecordId) -> Applied {
    open_txn(cfg, state, agent, Rule::EnReadNoTxn)?;
    record_ok(state, id)?;
    // The content is judged of a record in view only: what the transaction cannot see at all
    // is refused for that alone.
    let in_view = in_view(cfg, state, agent, id);
    all_parts(&[
        (in_view, Rule::EnReadNotVisible),
        (
            !in_view || provenance::content_permitted(cfg, state, agent, id),
            Rule::EnReadContentNotPermitted,
        ),
        (!state.record(id).kind.is_action(), Rule::EnReadAction),
    ])?;
    provenance::serve(state, agent, RecordSet::single(id));
    fire(Rule::OpRead);
    Ok(())
}

fn end_session(cfg: &Config, state: &mut State, agent: u8) -> Applied {
    agent_ok(cfg, agent)?;
    all_parts(&[
        (state.txn(agent).is_none(), Rule::EnEndSessionTxnOpen),
        (!state.context(agent).is_empty(), Rule::EnEndSessionEmpty),
    ])?;
    state.set_context(agent, RecordSet::EMPTY);
    fire(Rule::OpEndSession);
    Ok(())
}

fn resolve(cfg: &Config, state: &mut State, id: RecordId, keep: bool) -> Applied {
    record_ok(state, id)?;
    let r = state.record(id);
    require(
        r.life() == Life::Quarantined
            && matches!(r.reason, Some(Reason::Review | Reason::ScopeReview)),
        Rule::EnResolveNotReview,
    )?;
    if !keep {
        retract(cfg, state, id, Reason::ReviewRejected)?;
        fire(Rule::OpResolveReject);
        return Ok(());
    }
    let parts = keep_refusals(cfg, state, id);
    if cfg.variant == Variant::Rev1Adjudication {
        // Revision 1 had no enabling condition for keep; revision 3's scope rule is not
        // adjudication, and the variant keeps it (it restores revision 1's adjudication only).
        let scope_rule = parts
            .iter()
            .filter(|&&(_, rule)| rule == Rule::EnKeepWiderRival);
        all_parts(&scope_rule.copied().collect::<Vec<_>>())?;
    } else {
        all_parts(&parts)?;
    }
    // The verdict stands in for the review outcomes of the conflict check only: the record
    // supersedes exactly the rivals it wins against, which (keep being enabled) are every
    // rival left, all of equal or lower authority and none wider than it; and, committing, it
    // sends the narrower rivals its owner may not see to their owners' review.
    let narrower = pipeline::hidden_narrower_rivals(cfg, state, id);
    supersede(
        state,
        pipeline::rivals(cfg, state, id),
        Reason::SupersededByReview,
    )?;
    // A reviewer's verdict is not an external-action commit: Committed, never ActionSafe.
    promote(state, id, Tier::Medium)?;
    send_to_scope_review(state, narrower)?;
    fire(Rule::OpResolveKeep);
    Ok(())
}

/// The enabling condition of `Resolve(keep)` (docs/protocol.md §5, revision 2): the record would
/// pass every check of the pipeline now but the review outcome of the conflict check, the
/// conflict check judged against the snapshot of the transaction that staged it, and (revision
/// 3, scope non-interference (b)) no rival wider than the record stands.
///
/// Evidence is not among the parts: it is fixed when the record is staged, and a record only
/// reaches review after passing the evidence check, so that part could never refuse.
fn keep_refusals(cfg: &Config, state: &State, id: RecordId) -> [(bool, Rule); 7] {
    let r = state.record(id);
    let lineage = provenance::lineage_ancestors(cfg, state, id);
    // Revision 3.2: under provenance follows content, against the record's observation.
    let staged_from = provenance::stale_from(cfg, r, r.review_seq.unwrap_or(0));
    let mine = cfg.authority(r.source);
    let rivals = pipeline::rivals(cfg, state, id);
    [
        (r.validity.contains(state.clock), Rule::EnKeepExpired),
        (
            lineage
                .iter()
                .all(|a| pipeline::ancestor_passes_lineage(cfg, state.record(a).life())),
            Rule::EnKeepLineage,
        ),
        (
            pipeline::check_permission_inheritance(cfg, state, id).is_ok(),
            Rule::EnKeepPermission,
        ),
        (
            lineage.iter().all(|a| !state.record(a).pending_revocation),
            Rule::EnKeepUnstable,
        ),
        // Named before staleness: a record in scope review is there because of the wider
        // rival, which (committed after it) is also newer than its snapshot.
        (
            !pipeline::displaces_wider(cfg, state, id, rivals),
            Rule::EnKeepWiderRival,
        ),
        (
            rivals
                .iter()
                .all(|x| !matches!(state.record(x).seq, Some(seq) if seq >= staged_from)),
            Rule::EnKeepStale,
        ),
        (
            rivals
                .iter()
                .all(|x| cfg.authority(state.record(x).source) <= mine),
            Rule::EnKeepOutranked,
        ),
    ]
}
