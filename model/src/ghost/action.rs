//! The moment an irreversible call executes: I1 action-safety gating, I9 no harm from known
//! doubt, I17's gate part and I18 zero downstream harm (docs/protocol.md §7, §9).

use super::{ghost_ancestors, in_force, may_see};
use crate::config::Config;
use crate::lifecycle::Life;
use crate::record::{Record, RecordId, RecordSet};
use crate::state::{GhostTxn, State};
use crate::txn::Tier;

/// I1, I9, I17 and I18, at the moment an irreversible call executes.
pub(super) fn judge_irreversible_call(
    cfg: &Config,
    pre: &State,
    agent: u8,
    support: RecordSet,
    post: &mut State,
) {
    let (Some(tx), Some(gtx)) = (pre.txns()[agent as usize], pre.ghost.txns[agent as usize]) else {
        return;
    };
    if !safe_to_act(pre, &gtx, tx.tier, support) {
        post.ghost.violate(1);
    }
    // I9, in every tier (revision 3): remember which of its basis was already in doubt (a
    // revocation requested). The basis is the support closure of §7: the support and its
    // ancestors, and under provenance follows content what each transcribed (§6 (ii)), in the
    // ghost's words.
    let mut basis = support;
    for s in support.iter() {
        basis = basis.union(if super::content::follows_content(cfg) {
            super::content::lineage(pre, s)
        } else {
            ghost_ancestors(pre, s)
        });
    }
    let doubted: RecordSet = basis
        .iter()
        .filter(|&b| pre.record(b).pending_revocation)
        .collect();
    let id = pre.len() as RecordId;
    post.record_mut(id).doubted_at_execution = doubted;
    if !harmless(pre, agent, &gtx, basis) {
        post.ghost.violate(18);
    }
    // I17, condition 2's part: an external-action call passes on an ActionSafe record of its
    // snapshot that the caller may see, never on another agent's Private one alone.
    // (A snapshot with no ActionSafe record at all is I1's business.)
    let action_safe = |id: RecordId| pre.record(id).life() == Life::ActionSafe;
    if tx.tier == Tier::ExternalAction
        && gtx.snapshot.iter().any(action_safe)
        && !gtx
            .snapshot
            .iter()
            .any(|id| action_safe(id) && may_see(agent, pre.record(id)))
    {
        post.ghost.violate(17);
    }
}

/// I18 zero downstream harm, in the spec's words (§9, §7 "in force"): every record of the
/// support closure `closure` is Committed or ActionSafe, not pending revocation, valid now, and
/// one the caller may see (a Private record only by its owner); and no Tentative record is in
/// flight outside the caller's ghost snapshot.
pub(super) fn harmless(pre: &State, agent: u8, tx: &GhostTxn, closure: RecordSet) -> bool {
    let in_force_now =
        |r: &Record| in_force(r.life()) && !r.pending_revocation && r.validity.contains(pre.clock);
    let closure_ok = closure.iter().all(|id| {
        let r = pre.record(id);
        in_force_now(r) && may_see(agent, r)
    });
    closure_ok && !tentative_in_flight(pre, tx)
}

/// Is a Tentative record outside the ghost snapshot `tx` in flight (the gate's condition 1, as
/// I1 and I18 restate it)?
pub(super) fn tentative_in_flight(pre: &State, tx: &GhostTxn) -> bool {
    pre.ids()
        .any(|id| pre.record(id).life() == Life::Tentative && !tx.snapshot.contains(id))
}

/// I1's condition in the spec's words, against the ghost's snapshot: no Tentative record
/// outside the snapshot in flight; every support record in force (Committed or ActionSafe);
/// and for an external-action transaction a snapshot holding some ActionSafe record and
/// support that is all ActionSafe and valid now.
pub(super) fn safe_to_act(pre: &State, tx: &GhostTxn, tier: Tier, support: RecordSet) -> bool {
    if tentative_in_flight(pre, tx) {
        return false;
    }
    if !support.iter().all(|id| in_force(pre.record(id).life())) {
        return false;
    }
    if tier != Tier::ExternalAction {
        return true;
    }
    let snapshot_has_action_safe = tx
        .snapshot
        .iter()
        .any(|id| pre.record(id).life() == Life::ActionSafe);
    let support_ok = support.iter().all(|id| {
        let r = pre.record(id);
        r.life() == Life::ActionSafe && r.validity.contains(pre.clock)
    });
    snapshot_has_action_safe && support_ok
}
