//! I5 isolation: the ghost's own snapshot, taken at `Begin`, and every read judged against it
//! (docs/protocol.md §4, §9).

use super::may_see;
use crate::lifecycle::Life;
use crate::record::{RecordId, RecordSet};
use crate::state::{Ghost, GhostTxn, State};
use crate::txn::{Isolation, Tier};

/// Main-path rank for the ghost's own isolation judgement: Raw 0 … ActionSafe 4.
pub(super) fn rank(life: Life) -> Option<u8> {
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

/// The ghost's copy of a new transaction: the level the spec assigns (an external-action
/// transaction reads action-safe, §4) and the records on the main path at or above it.
pub(super) fn begin_ghost_txn(
    pre: &State,
    agent: u8,
    tier: Tier,
    isolation: Isolation,
    post: &mut State,
) {
    let level = if tier == Tier::ExternalAction {
        Isolation::ActionSafeRead as u8
    } else {
        isolation as u8
    };
    let snapshot = pre
        .ids()
        .filter(|&id| rank(pre.record(id).life()).is_some_and(|rk| rk >= level))
        .collect();
    post.ghost.txns[agent as usize] = Some(GhostTxn {
        snapshot,
        seq: pre.next_seq,
        level,
    });
}

/// A record staged again (adopted, revalidated, rebuilt) is a new uncommitted version that
/// no snapshot captured (§4): it leaves every ghost snapshot.
pub(super) fn forget_restaged(id: RecordId, post: &mut State) {
    for tx in post.ghost.txns.iter_mut().flatten() {
        tx.snapshot.remove(id);
    }
}

/// I5 (revision 3: every read): a record read by a transaction (declared parent, gate
/// support, adopted record, `Read`) is in the ghost's snapshot of it, taken at `Begin` from the
/// records at or above its level then, or was staged by the transaction itself. A snapshot
/// record that left the main path since stays readable (§4, reads are repeatable); what it
/// may be used for is the pipeline's and the gate's business.
pub(super) fn judge_reads(pre: &State, agent: u8, read: RecordSet, ghost: &mut Ghost) {
    let Some(tx) = pre.ghost.txns[agent as usize] else {
        return;
    };
    for id in read.iter() {
        let r = pre.record(id);
        // I3: a Private record is read by its owner only (visible no wider than its scope).
        if !may_see(agent, r) {
            ghost.violate(3);
        }
        if r.writer != Some(agent) && !tx.snapshot.contains(id) {
            ghost.violate(5);
        }
    }
}
