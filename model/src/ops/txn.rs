//! Transactions (docs/protocol.md §5): `Begin` (the level a tier reads at), `Commit` (each
//! staged record through the pipeline, then promoted, quarantined or retracted) and `Abort`.

use super::{agent_ok, open_txn, require, Applied};
use crate::cascade::retract;
use crate::config::Config;
use crate::lifecycle::Life;
use crate::pipeline::{self, CommitContext, Verdict};
use crate::provenance;
use crate::record::{Reason, RecordId, RecordSet};
use crate::rules::{fire, Rule};
use crate::state::State;
use crate::txn::{capture_snapshot, snapshot_seq, Isolation, Tier, Txn};

/// The level a transaction of `tier` that asks for `requested` reads at (§4): an
/// external-action transaction always reads at the strictest level, whatever it asks.
pub fn begin_isolation(tier: Tier, requested: Isolation) -> Isolation {
    if tier == Tier::ExternalAction {
        Isolation::ActionSafeRead
    } else {
        requested
    }
}

pub(super) fn begin(
    cfg: &Config,
    state: &mut State,
    agent: u8,
    tier: Tier,
    isolation: Isolation,
) -> Applied {
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

pub(super) fn commit(cfg: &Config, state: &mut State, agent: u8) -> Applied {
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
pub(super) fn promote(state: &mut State, id: RecordId, tier: Tier) -> Applied {
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
pub(super) fn send_to_scope_review(state: &mut State, narrower: RecordSet) -> Applied {
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

pub(super) fn supersede(state: &mut State, rivals: RecordSet, reason: Reason) -> Applied {
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

pub(super) fn abort(cfg: &Config, state: &mut State, agent: u8) -> Applied {
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
