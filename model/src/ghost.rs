//! Ghost (history) variables for the history properties I1, I4, I5, I7 and I9 (PROTOCOL.md §9).
//!
//! Each predicate here is written **independently** of the protocol code it judges: it reads raw
//! state fields and re-states the spec's condition in its own words, never calling the gate, the
//! pipeline or the lifecycle table. (A property that called the gate to judge the gate could never
//! fail.) The transition code ([`crate::machine::step`]) calls [`observe_step`] with the state
//! before and after each operation; [`observe_move`] sees every lifecycle move as it happens.

use crate::config::Config;
use crate::lifecycle::Life;
use crate::ops::Op;
use crate::record::{Kind, RecordId, RecordSet};
use crate::state::{Ghost, State};
use crate::txn::{Tier, Txn};

/// The lifecycle table of PROTOCOL.md §3, restated as the list of its rows (I4's judge).
const SPEC_MOVES: &[(Life, Life)] = {
    use Life::*;
    &[
        (Raw, Tentative),
        (Tentative, Validated),
        (Validated, Committed),
        (Committed, ActionSafe),
        (Tentative, Quarantined),
        (Validated, Quarantined),
        (Quarantined, Tentative),
        (Quarantined, Validated),
        (Committed, Superseded),
        (ActionSafe, Superseded),
        (Raw, Revoked),
        (Tentative, Revoked),
        (Validated, Revoked),
        (Committed, Revoked),
        (ActionSafe, Revoked),
        (Quarantined, Revoked),
        (Superseded, Revoked),
        (Committed, Quarantined),
        (ActionSafe, Quarantined),
        (Quarantined, Quarantined),
    ]
};

/// I4: records every lifecycle move; a move that is not a row of the spec's table is a violation.
pub fn observe_move(ghost: &mut Ghost, from: Life, to: Life) {
    if !SPEC_MOVES.contains(&(from, to)) {
        ghost.violate(4);
    }
}

/// Main-path rank for the ghost's own isolation judgement: Raw 0 … ActionSafe 4.
fn rank(life: Life) -> Option<u8> {
    [
        Life::Raw,
        Life::Tentative,
        Life::Validated,
        Life::Committed,
        Life::ActionSafe,
    ]
    .iter()
    .position(|l| *l == life)
    .map(|p| p as u8)
}

/// Judges one step: `pre` is the state before `op`, `post` the state after (to be annotated).
pub fn observe_step(_cfg: &Config, pre: &State, op: &Op, post: &mut State) {
    match *op {
        Op::Stage { agent, parents, .. } => judge_reads(pre, agent, parents, &mut post.ghost),
        Op::CallTool {
            agent,
            reversible,
            support,
        } => {
            judge_reads(pre, agent, support, &mut post.ghost);
            if !reversible {
                judge_irreversible_call(pre, agent, support, post);
            }
        }
        Op::Commit { agent } => judge_commit(pre, agent, post),
        _ => {}
    }
}

/// I5: a record read (declared parent or gate support) by a transaction must not sit below the
/// transaction's isolation level on the main path, unless the transaction staged it itself.
fn judge_reads(pre: &State, agent: u8, read: RecordSet, ghost: &mut Ghost) {
    let Some(tx) = pre.txns()[agent as usize] else {
        return;
    };
    let level = tx.isolation as u8;
    for id in read.iter() {
        let r = pre.record(id);
        if r.writer == Some(agent) {
            continue;
        }
        if rank(r.life()).is_some_and(|rk| rk < level) {
            ghost.violate(5);
        }
    }
}

/// I1 and I9, at the moment an irreversible call executes.
fn judge_irreversible_call(pre: &State, agent: u8, support: RecordSet, post: &mut State) {
    let Some(tx) = pre.txns()[agent as usize] else {
        return;
    };
    if !safe_to_act(pre, &tx, support) {
        post.ghost.violate(1);
    }
    // I9: remember which of its basis was already in doubt (a revocation requested).
    if tx.tier == Tier::ExternalAction {
        let mut basis = support;
        for s in support.iter() {
            basis = basis.union(pre.ancestors(s));
        }
        let doubted: RecordSet = basis
            .iter()
            .filter(|&b| pre.record(b).pending_revocation)
            .collect();
        let id = pre.len() as RecordId;
        post.record_mut(id).doubted_at_execution = doubted;
    }
}

/// I1's condition in the spec's words: no Tentative record outside the snapshot in flight, and for
/// an external-action transaction a snapshot holding some ActionSafe record and support that is
/// all ActionSafe and valid now.
fn safe_to_act(pre: &State, tx: &Txn, support: RecordSet) -> bool {
    let in_flight = pre
        .ids()
        .any(|id| pre.record(id).life() == Life::Tentative && !tx.snapshot.contains(id));
    if in_flight {
        return false;
    }
    if tx.tier != Tier::ExternalAction {
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

/// I7: a belief committed by this step must not stand over a rival that was committed after the
/// transaction's snapshot was taken (it should have been aborted as a stale late write).
fn judge_commit(pre: &State, agent: u8, post: &mut State) {
    let Some(tx) = pre.txns()[agent as usize] else {
        return;
    };
    for id in pre.ids() {
        let before = pre.record(id);
        let now_committed = post.record(id).life().is_committed();
        if before.writer != Some(agent) || before.life() != Life::Tentative || !now_committed {
            continue;
        }
        if before.kind != Kind::Belief {
            continue;
        }
        let stale_rival = pre.ids().any(|x| {
            let o = pre.record(x);
            o.kind == Kind::Belief
                && matches!(o.life(), Life::Committed | Life::ActionSafe)
                && o.slot == before.slot
                && o.value != before.value
                && o.validity.from < before.validity.until
                && before.validity.from < o.validity.until
                && o.seq.is_some_and(|s| s >= tx.snapshot_seq)
                // A rival that this same commit retracted (a descendant, read at a tentative
                // level, of a record of this transaction aborted earlier in the commit) was no
                // longer in force when the record was judged: nothing was committed over it.
                && post.record(x).life() != Life::Revoked
        });
        if stale_rival {
            post.ghost.violate(7);
        }
    }
}
