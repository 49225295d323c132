//! Semantic conflict, judged over history: I7 no stale override (Commit and `Resolve(keep)`),
//! I12 adjudication, and I17's pipeline parts: no record superseded by a narrower one, a
//! narrower hidden rival sent to scope review only under a wider winner (docs/protocol.md §6
//! check 3, §9).

use super::{contradict, in_force, may_see};
use crate::config::Config;
use crate::lifecycle::Life;
use crate::ops::Op;
use crate::record::{Kind, Reason, Record, RecordId, RecordSet};
use crate::state::State;

/// I12 adjudication: a record that was in force and is Superseded after the step lost to a
/// winner of this step that may supersede it: a record of higher authority or a newer one of
/// the same source committed by Commit, or the record kept by review of equal or higher
/// authority; and the reason it is given names that entitlement (superseded by authority, by
/// correction, by review). And a Commit never commits a belief over an equal-authority rival
/// of another source (that conflict goes to review) or a higher-authority one.
pub(super) fn judge_supersessions(
    cfg: &Config,
    pre: &State,
    op: &Op,
    winners: RecordSet,
    superseded: RecordSet,
    post: &mut State,
) {
    let authority = |r: &Record| cfg.bounds.sources[r.source as usize];
    let mut bad = false;
    let mut narrower = false;
    for x in superseded.iter() {
        let loser = pre.record(x);
        let legit = |w: RecordId| {
            if w == x {
                return false;
            }
            let winner = post.record(w);
            if !contradict(winner, loser) {
                return false;
            }
            match *op {
                // "Newer" is the record committing now: a correction from the same source.
                Op::Commit { .. } => {
                    authority(winner) > authority(loser) || winner.source == loser.source
                }
                Op::Resolve {
                    record, keep: true, ..
                } => record == w && authority(winner) >= authority(loser),
                _ => false,
            }
        };
        // Lost to an entitled winner, and the reason the log gives names that entitlement: a
        // higher authority, a correction from the loser's own source, or review's verdict.
        let named = |entitled: &dyn Fn(&Record) -> bool| {
            winners.iter().any(|w| legit(w) && entitled(post.record(w)))
        };
        bad |= !match post.record(x).reason {
            Some(Reason::SupersededByAuthority) => {
                matches!(op, Op::Commit { .. }) && named(&|w| authority(w) > authority(loser))
            }
            Some(Reason::SupersededByCorrection) => {
                matches!(op, Op::Commit { .. }) && named(&|w| w.source == loser.source)
            }
            Some(Reason::SupersededByReview) => {
                matches!(op, Op::Resolve { keep: true, .. }) && named(&|_| true)
            }
            _ => false,
        };
        // I17: no record is superseded by a narrower one (scope non-interference (b)).
        narrower |= winners.iter().any(legit)
            && winners
                .iter()
                .filter(|&w| legit(w))
                .all(|w| post.record(w).scope < loser.scope);
    }
    if let Op::Commit { agent } = *op {
        for w in winners.iter().filter(|&w| in_force(post.record(w).life())) {
            let winner = post.record(w);
            bad |= pre.ids().any(|x| {
                let rival = pre.record(x);
                // Still in force when `w` was judged: not retracted in the step, and not
                // superseded (or sent to scope review) by a record of this commit judged
                // before `w`.
                let displaced_earlier =
                    matches!(post.record(x).life(), Life::Superseded | Life::Quarantined)
                        && winners
                            .iter()
                            .any(|v| v < w && contradict(post.record(v), rival));
                // Revision 3 (a): only a rival the winner's writer may see is its rival.
                in_force(rival.life())
                    && may_see(agent, rival)
                    && post.record(x).life() != Life::Revoked
                    && !displaced_earlier
                    && contradict(winner, rival)
                    && (authority(rival) > authority(winner)
                        || (authority(rival) == authority(winner) && rival.source != winner.source))
            });
        }
    }
    if bad {
        post.ghost.violate(12);
    }
    if narrower {
        post.ghost.violate(17);
    }
}

/// Scope non-interference (c), judged: a record in force before the step and quarantined for
/// scope review after it lies under a wider record committed in this step whose writer may not
/// see it (another agent's Private record under a Shared or Public truth). Any other such move
/// takes a truth out of force without a winner entitled to it (I12). The ghost remembers the
/// record's own commit as the snapshot its review is judged against (I7 on a later keep).
pub(super) fn judge_scope_reviews(
    op: &Op,
    winners: RecordSet,
    reviewed: RecordSet,
    post: &mut State,
) {
    for x in reviewed.iter() {
        let narrower = *post.record(x);
        let entitled = winners.iter().any(|w| {
            let winner = post.record(w);
            // The winner's writer: the committing agent (an adopted record may be owned by
            // another), or the kept record's owner.
            let writer = match *op {
                Op::Commit { agent } => agent,
                _ => winner.owner,
            };
            // (The winner may itself have lost later in the same commit.)
            w != x
                && contradict(winner, &narrower)
                && winner.scope > narrower.scope
                && !may_see(writer, &narrower)
        });
        if !entitled {
            post.ghost.violate(12);
        }
        post.record_mut(x).ghost_review_seq = narrower.seq;
    }
}

/// Remembers, for each record of the committing transaction left quarantined for review, the
/// ghost snapshot's sequence number (I7 judges a later `Resolve(keep)` against it).
pub(super) fn remember_review_snapshots(pre: &State, agent: u8, post: &mut State) {
    let Some(tx) = pre.ghost.txns[agent as usize] else {
        return;
    };
    for id in pre.ids() {
        let staged_here = pre.record(id).writer == Some(agent);
        let r = post.record_mut(id);
        let reviewed = matches!(r.reason, Some(Reason::Review | Reason::ScopeReview));
        if staged_here && r.life() == Life::Quarantined && reviewed {
            r.ghost_review_seq = Some(tx.seq);
        }
    }
}

/// I7 on `Resolve(keep)`: the kept record must not stand over a rival committed after the
/// snapshot of the transaction that staged it.
pub(super) fn judge_review_keep(pre: &State, id: RecordId, post: &mut State) {
    let kept = pre.record(id);
    if !in_force(post.record(id).life()) {
        return;
    }
    let Some(staged_from) = kept.ghost_review_seq else {
        return;
    };
    let stale = pre.ids().any(|x| {
        let o = pre.record(x);
        x != id
            && in_force(o.life())
            && contradict(kept, o)
            && may_see(kept.owner, o)
            && o.seq.is_some_and(|s| s >= staged_from)
    });
    if stale {
        post.ghost.violate(7);
    }
}

/// I7: a belief committed by this step must not stand over a rival that was committed after the
/// transaction's snapshot (the ghost's copy) was taken (it should have been aborted as a stale
/// late write).
pub(super) fn judge_commit(pre: &State, agent: u8, post: &mut State) {
    let Some(tx) = pre.ghost.txns[agent as usize] else {
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
            in_force(o.life())
                && contradict(before, o)
                // Revision 3.2: a rival its writer may see (scope non-interference (a)
                // ignores the others by design).
                && may_see(agent, o)
                && o.seq.is_some_and(|s| s >= tx.seq)
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
