//! What one commit decides, judged record by record: I10 evidence, I11 validity and I13 sound
//! lineage for what commits; the truth of every reason given; and the pipeline's order
//! (docs/protocol.md §6, §9).

use super::{authority, contradict, ghost_ancestors, in_force, may_see};
use crate::config::Config;
use crate::lifecycle::Life;
use crate::ops::Op;
use crate::record::{Kind, Reason, Record, RecordId, RecordSet};
use crate::state::State;

/// The spec's thresholds of the evidence rule (§6 check 1), restated for I10's judge.
pub(super) const GHOST_CONFIDENCE_THRESHOLD: f32 = 0.6;
pub(super) const GHOST_AUTHORITY_THRESHOLD: f32 = 0.9;

/// The records a Commit or `Resolve(keep)` step committed, in the order the step committed
/// them (ascending ids): for a Commit, the records of the transaction that left `Tentative`
/// for Committed or ActionSafe, or for Superseded (a record is superseded only once
/// committed, so a later record of the same commit won against it); for `Resolve(keep)`, the
/// kept record if it is in force after the step.
pub(super) fn committed_in_step(pre: &State, op: &Op, post: &State) -> RecordSet {
    match *op {
        Op::Commit { agent } => pre
            .ids()
            .filter(|&id| {
                let before = pre.record(id);
                before.writer == Some(agent)
                    && before.life() == Life::Tentative
                    && matches!(
                        post.record(id).life(),
                        Life::Committed | Life::ActionSafe | Life::Superseded
                    )
            })
            .collect(),
        Op::Resolve { record, keep: true } if in_force(post.record(record).life()) => {
            RecordSet::single(record)
        }
        _ => RecordSet::EMPTY,
    }
}

/// I10, I11 and I13 on every commit (by Commit or `Resolve(keep)`): the evidence rule, the
/// validity rule and sound lineage, each restated here, held for each record committed.
///
/// Lineage is judged as it stood when the record committed: an ancestor is unsound if it
/// was inactive or pending revocation before the step, or is Revoked or Quarantined after it
/// (a retraction during the step before the record was judged, or one after it that would
/// have repaired the record too), or was superseded in the step by a record committed before
/// this one (records of a commit are judged in id order).
pub(super) fn judge_commits(cfg: &Config, pre: &State, committed: RecordSet, post: &mut State) {
    for id in committed.iter() {
        let r = *post.record(id);
        if r.kind == Kind::Belief && !meets_evidence(cfg, &r) {
            post.ghost.violate(10);
        }
        if !(r.validity.from <= pre.clock && pre.clock < r.validity.until) {
            post.ghost.violate(11);
        }
        let unsound = ghost_ancestors(post, id).iter().any(|a| {
            let (before, after) = (pre.record(a), post.record(a));
            let inactive =
                |l: Life| matches!(l, Life::Revoked | Life::Superseded | Life::Quarantined);
            // Superseded by a record committed earlier in this step that was entitled to
            // win against it (a higher authority, or its own source, judged after it).
            let entitled = |w: RecordId| {
                let winner = post.record(w);
                // `a` was in force when `w` was judged: committed before the step, or
                // earlier in it.
                let a_in_force_then = !committed.contains(a) || a < w;
                a_in_force_then
                    && contradict(winner, after)
                    && (authority(cfg, winner) > authority(cfg, after)
                        || winner.source == after.source)
            };
            let superseded_earlier = after.life() == Life::Superseded
                && before.life() != Life::Superseded
                && committed.iter().any(|w| w < id && w != a && entitled(w));
            (inactive(before.life()) && before.life() != Life::Tentative)
                || before.pending_revocation
                || matches!(after.life(), Life::Revoked | Life::Quarantined)
                || superseded_earlier
        });
        // Revision 3: lineage over committed parents. A declared parent passes only if it was
        // committed before the step, or earlier in this one (a lower id of this commit).
        let uncommitted_parent = r.parents.iter().any(|p| {
            let before = pre.record(p).life();
            !(in_force(before) || committed.contains(p) && p < id)
        });
        if unsound || uncommitted_parent {
            post.ghost.violate(13);
        }
    }
}

/// Does belief `r` meet the evidence rule, in the ghost's own words (§6 check 1)?
pub(super) fn meets_evidence(cfg: &Config, r: &Record) -> bool {
    r.confidence.value() >= GHOST_CONFIDENCE_THRESHOLD
        || cfg.bounds.sources[r.source as usize].value() >= GHOST_AUTHORITY_THRESHOLD
}

/// The reasons a commit gives must be true (the other direction of I3, I7, I10–I13): a record
/// quarantined *for evidence* did not meet the evidence rule, one quarantined *as expired* was
/// not valid at the commit's clock, one aborted as a *stale* write had a rival committed after
/// the snapshot, one aborted as *outranked* had a higher-authority rival, one sent to *review*
/// had an equal-authority rival from another source, one sent to *scope review* had a wider
/// rival it would have displaced, each among the rivals its writer may see (a conflict outcome
/// that only a hidden rival explains violates I17), one quarantined for an *inactive parent*,
/// an *unstable dependency* or *permission* had an inactive ancestor, an ancestor pending
/// revocation or a narrower ancestor. A reason that is not true is a check that refuses too
/// much: without this, a protocol that quarantined every record would satisfy every invariant,
/// and only the examples would notice.
pub(super) fn judge_quarantine_reasons(cfg: &Config, pre: &State, agent: u8, post: &mut State) {
    let seq = pre.ghost.txns[agent as usize].map_or(0, |t| t.seq);
    for id in pre.ids() {
        let before = pre.record(id);
        if before.writer != Some(agent) || before.life() != Life::Tentative {
            continue;
        }
        let r = *post.record(id);
        let Some(reason) = r.reason else { continue };
        // Rivals the record was judged against: in force before the step, or committed by
        // this commit before it (records are judged in id order).
        let rival = |x: RecordId, p: &dyn Fn(&Record) -> bool| {
            let (was, now) = (pre.record(x), post.record(x));
            x != id
                && contradict(&r, now)
                && (in_force(was.life())
                    || (x < id
                        && was.writer == Some(agent)
                        && matches!(
                            now.life(),
                            Life::Committed | Life::ActionSafe | Life::Superseded
                        )))
                && p(now)
        };
        // The reason of a conflict outcome, judged over the rivals `seen` admits.
        let conflict_truth = |seen: &dyn Fn(&Record) -> bool| {
            let any_rival =
                |p: &dyn Fn(&Record) -> bool| pre.ids().any(|x| rival(x, &|o| seen(o) && p(o)));
            let stale = stale_rival(pre, &r, id, seq, seen);
            let theirs = |o: &Record| authority(cfg, o);
            let mine = authority(cfg, &r);
            match reason {
                // Stale: a rival committed after the snapshot and before this commit began
                // (one committed by this very commit is judged by authority, not as stale).
                Reason::StaleWrite => Some(stale),
                // Revision 3 (§6 (iii)): a rival committed after the record's observation,
                // before this commit began.
                Reason::StaleContent => Some(r.ghost_observed.is_some_and(|observed| {
                    pre.ids().any(|x| {
                        rival(x, seen)
                            && pre
                                .record(x)
                                .seq
                                .is_some_and(|s| s >= observed && s < pre.next_seq)
                    })
                })),
                // The outcomes rank (revision 2): stale before higher before review. A record
                // outranked or sent to review while a stale rival stood, or sent to review
                // while a higher one stood, was decided by the wrong rival (revision 1's
                // first-rival-decides).
                Reason::Outranked => Some(any_rival(&|o| theirs(o) > mine) && !stale),
                Reason::Review => Some(
                    any_rival(&|o| theirs(o) == mine && o.source != r.source)
                        && !any_rival(&|o| theirs(o) > mine)
                        && !stale,
                ),
                // Scope non-interference (b): a rival wider than the record that it would
                // have displaced (lower authority, or a correction of its own source).
                Reason::ScopeReview => Some(
                    any_rival(&|o| {
                        o.scope > r.scope
                            && (theirs(o) < mine || (theirs(o) == mine && o.source == r.source))
                    }) && !any_rival(&|o| {
                        theirs(o) > mine || (theirs(o) == mine && o.source != r.source)
                    }) && !stale,
                ),
                _ => None,
            }
        };
        // Scope non-interference (revision 3, I17): a conflict outcome must follow from the
        // rivals the writer may see. One that only a rival hidden from the writer explains
        // reveals that rival; one that no rival explains is the conflict check's own error.
        if let Some(seen_truth) = conflict_truth(&|o| may_see(agent, o)) {
            if !seen_truth {
                let any_truth = conflict_truth(&|_| true) == Some(true);
                let property = match reason {
                    Reason::StaleWrite => 7,
                    Reason::StaleContent => 16,
                    _ => 12,
                };
                post.ghost.violate(if any_truth { 17 } else { property });
            }
        }
        let ancestors = ghost_ancestors(post, id);
        // Lineage reasons may name a record the belief transcribed (§6 (ii)).
        let lineage = super::content::lineage(post, id);
        let any_ancestor = |p: &dyn Fn(&Record) -> bool| {
            ancestors
                .iter()
                .any(|a| p(post.record(a)) || p(pre.record(a)))
        };
        let any_lineage = |p: &dyn Fn(&Record) -> bool| {
            lineage
                .iter()
                .any(|a| p(post.record(a)) || p(pre.record(a)))
        };
        let (truthful, property) = match (r.life(), reason) {
            (Life::Quarantined, Reason::Evidence) => (!meets_evidence(cfg, &r), 10),
            (Life::Quarantined, Reason::Expired) => (
                !(r.validity.from <= pre.clock && pre.clock < r.validity.until),
                11,
            ),
            (Life::Quarantined, Reason::InactiveParent) => (
                any_lineage(&|a| {
                    matches!(
                        a.life(),
                        Life::Revoked | Life::Superseded | Life::Quarantined
                    )
                }),
                13,
            ),
            (Life::Revoked, Reason::RevokedParent) => {
                (any_lineage(&|a| a.life() == Life::Revoked), 13)
            }
            (Life::Quarantined, Reason::UnstableDependency) => {
                (any_lineage(&|a| a.pending_revocation), 13)
            }
            (Life::Quarantined, Reason::Permission) => (any_ancestor(&|a| a.scope < r.scope), 3),
            (Life::Quarantined, Reason::ContentPermission) => {
                (!super::content::content_in_scope(post, id), 15)
            }
            _ => (true, 0),
        };
        if !truthful {
            post.ghost.violate(property);
        }
        if let Some(skipped) = earlier_check_failed(cfg, pre, agent, id, reason, seq, post) {
            post.ghost.violate(skipped);
        }
    }
}

/// The pipeline's order (revision 3: I10–I13 judge the order): the checks of §6 in order,
/// each with the property that judges it: evidence (I10), validity (I11), semantic conflict
/// (I12; a wider rival it would displace, I17), lineage (I13), permission inheritance (I3),
/// dependency stability. A record given the
/// reason of one check passed every earlier one; this returns the property of the first
/// earlier check that record `id` surely failed, if any.
///
/// "Surely": the ghost judges from the states before and after the commit step, so it counts
/// only what held when the record was judged whatever the order inside the step: a rival in
/// force before the step and untouched by it, or committed earlier in the step and still in
/// force; an ancestor already inactive before the step.
pub(super) fn earlier_check_failed(
    cfg: &Config,
    pre: &State,
    agent: u8,
    id: RecordId,
    reason: Reason,
    seq: u8,
    post: &State,
) -> Option<u8> {
    // The reason's position in the order; reasons no check gives are not judged here.
    let position = match reason {
        Reason::Evidence => 1,
        Reason::Expired => 2,
        Reason::StaleWrite
        | Reason::StaleContent
        | Reason::Outranked
        | Reason::Review
        | Reason::ScopeReview => 3,
        Reason::RevokedParent | Reason::InactiveParent | Reason::UncommittedParent => 4,
        Reason::Permission | Reason::ContentPermission => 5,
        Reason::UnstableDependency => 6,
        _ => return None,
    };
    let r = post.record(id);
    let conflict_failed = || {
        pre.ids().any(|x| {
            let (was, now) = (pre.record(x), post.record(x));
            let rival_then = (in_force(was.life()) && was.life() == now.life())
                || (x < id && was.writer == Some(agent) && in_force(now.life()));
            let stale = in_force(was.life()) && was.seq.is_some_and(|s| s >= seq);
            x != id
                && rival_then
                && contradict(r, now)
                && may_see(agent, now)
                && (stale
                    || authority(cfg, now) > authority(cfg, r)
                    || (authority(cfg, now) == authority(cfg, r) && now.source != r.source))
        })
    };
    let ancestors = ghost_ancestors(post, id);
    // Scope non-interference (b): a wider rival the record would displace (lower authority,
    // or its own source) sends it to scope review; the conflict check failed then too.
    let displaced_wider = || {
        pre.ids().any(|x| {
            let (was, now) = (pre.record(x), post.record(x));
            let (theirs, mine) = (authority(cfg, now), authority(cfg, r));
            x != id
                && in_force(was.life())
                && was.life() == now.life()
                && contradict(r, now)
                && may_see(agent, now)
                && now.scope > r.scope
                && (theirs < mine || (theirs == mine && now.source == r.source))
        })
    };
    // (position of the check, property that judges it, did it surely fail)
    let checks: [(usize, u8, &dyn Fn() -> bool); 6] = [
        (1, 10, &|| !meets_evidence(cfg, r)),
        (2, 11, &|| {
            !(r.validity.from <= pre.clock && pre.clock < r.validity.until)
        }),
        (3, 12, &conflict_failed),
        (3, 17, &displaced_wider),
        (4, 13, &|| {
            ancestors.iter().any(|a| {
                matches!(
                    pre.record(a).life(),
                    Life::Revoked | Life::Superseded | Life::Quarantined
                )
            })
        }),
        (5, 3, &|| {
            ancestors.iter().any(|a| post.record(a).scope < r.scope)
        }),
    ];
    checks
        .iter()
        .filter(|(at, _, _)| *at < position)
        .find(|(_, _, failed)| failed())
        .map(|(_, property, _)| *property)
}

/// Is there a rival of `r` (record `id`) that `seen` admits, committed after the snapshot
/// (sequence `seq`) and before this commit began?
fn stale_rival(
    pre: &State,
    r: &Record,
    id: RecordId,
    seq: u8,
    seen: &dyn Fn(&Record) -> bool,
) -> bool {
    pre.ids().any(|x| {
        let o = pre.record(x);
        x != id
            && in_force(o.life())
            && contradict(r, o)
            && o.seq.is_some_and(|s| s >= seq)
            && seen(o)
    })
}
