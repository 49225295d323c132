//! I4 lifecycle legality: the spec's table of moves restated, and how a record enters the
//! lifecycle (docs/protocol.md §3, §9).

use super::in_force;
use crate::lifecycle::Life;
use crate::ops::Op;
use crate::record::{Kind, RecordId, RecordSet};
use crate::state::{Ghost, State};
use crate::txn::Tier;

/// The lifecycle table of docs/protocol.md §3, restated as the list of its rows (I4's judge).
pub(super) const SPEC_MOVES: &[(Life, Life)] = {
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

/// I4, entry (revision 3): a record comes into being Raw only by `Observe`, Tentative only by
/// `Stage`, and in force (Committed or ActionSafe) only as an executed tool action; one
/// record per step, and no step removes one. (Which of Committed and ActionSafe an action
/// enters as is [`judge_entry_state`]'s.)
pub(super) fn judge_created(pre: &State, op: &Op, post: &mut State) {
    let legal = post.len() == pre.len() + 1 && {
        let r = post.record(pre.len() as RecordId);
        match op {
            Op::Observe { .. } => r.life() == Life::Raw && r.kind == Kind::Belief,
            Op::Stage { .. } => r.life() == Life::Tentative && !r.kind.is_action(),
            Op::CallTool { .. } => in_force(r.life()) && r.kind.is_action(),
            _ => false,
        }
    };
    if !legal {
        post.ghost.violate(4);
    }
}

/// I4: records every lifecycle move; a move that is not a row of the spec's table is a violation.
pub fn observe_move(ghost: &mut Ghost, from: Life, to: Life) {
    if !SPEC_MOVES.contains(&(from, to)) {
        ghost.violate(4);
    }
}

/// I4, when a record enters the lifecycle in force: a commit inside an external-action
/// transaction makes its records ActionSafe, any other commit (and `Resolve(keep)`) makes them
/// Committed, and an executed tool action enters as ActionSafe exactly in an external-action
/// transaction (§3, §8). (A protocol that swapped the two passes every other property: the
/// strong gate and I1 judge against whatever is ActionSafe.)
pub(super) fn judge_entry_state(pre: &State, op: &Op, committed: RecordSet, post: &mut State) {
    let tier_of = |agent: u8| pre.txns()[agent as usize].map(|t| t.tier);
    let (expected, ids) = match *op {
        Op::Commit { agent } => (tier_of(agent), committed),
        Op::Resolve { .. } => (Some(Tier::Medium), committed),
        Op::CallTool { agent, .. } if post.len() > pre.len() => {
            (tier_of(agent), RecordSet::single(pre.len() as RecordId))
        }
        _ => return,
    };
    let Some(tier) = expected else { return };
    let want = if tier == Tier::ExternalAction {
        Life::ActionSafe
    } else {
        Life::Committed
    };
    let wrong = ids.iter().any(|id| {
        let life = post.record(id).life();
        in_force(life) && life != want
    });
    if wrong {
        post.ghost.violate(4);
    }
}
