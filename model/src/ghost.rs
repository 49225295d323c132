//! Ghost (history) variables for the history properties I1, I2 (the retracting step), I4, I5,
//! I7, I9, I10, I11, I12 and I13 (docs/protocol.md §9).
//!
//! Each predicate here is written **independently** of the protocol code it judges: it reads raw
//! state fields and re-states the spec's condition in its own words, never calling the gate, the
//! pipeline or the lifecycle table. (A property that called the gate to judge the gate could never
//! fail.) The transition code ([`crate::machine::step`]) calls [`observe_step`] with the state
//! before and after each operation; [`observe_move`] sees every lifecycle move as it happens.

use crate::config::Config;
use crate::lifecycle::Life;
use crate::ops::Op;
use crate::record::{Effect, Kind, Reason, Record, RecordId, RecordSet, Scope};
use crate::state::{Ghost, GhostTxn, State};
use crate::txn::{Isolation, Tier};

/// The lifecycle table of docs/protocol.md §3, restated as the list of its rows (I4's judge).
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

/// I4, entry (revision 3): a record comes into being Raw only by `Observe`, Tentative only by
/// `Stage`, and in force (Committed or ActionSafe) only as an executed tool action; one
/// record per step, and no step removes one. (Which of Committed and ActionSafe an action
/// enters as is [`judge_entry_state`]'s.)
fn judge_created(pre: &State, op: &Op, post: &mut State) {
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

/// The spec's thresholds of the evidence rule (§6 check 1), restated for I10's judge.
const GHOST_CONFIDENCE_THRESHOLD: f32 = 0.6;
const GHOST_AUTHORITY_THRESHOLD: f32 = 0.9;

/// Judges one step: `pre` is the state before `op`, `post` the state after (to be annotated).
pub fn observe_step(cfg: &Config, pre: &State, op: &Op, post: &mut State) {
    if post.len() != pre.len() {
        judge_created(pre, op, post);
    }
    match *op {
        Op::Begin {
            agent,
            tier,
            isolation,
        } => begin_ghost_txn(pre, agent, tier, isolation, post),
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
        Op::Commit { agent } => {
            judge_commit(pre, agent, post);
            remember_review_snapshots(pre, agent, post);
            post.ghost.txns[agent as usize] = None;
        }
        Op::Abort { agent } => post.ghost.txns[agent as usize] = None,
        Op::Adopt { agent, record } => {
            judge_reads(pre, agent, RecordSet::single(record), &mut post.ghost);
            forget_restaged(record, post);
        }
        Op::Revalidate { record } => forget_restaged(record, post),
        Op::Rebuild { view } => forget_restaged(view, post),
        Op::Resolve { record, keep: true } => judge_review_keep(pre, record, post),
        _ => {}
    }
    // One pass over the records: which moved to Revoked or Superseded in this step. Most
    // steps move nothing, and then only the judges of commits can have work to do.
    let (mut retracted, mut superseded) = (RecordSet::EMPTY, RecordSet::EMPTY);
    for (id, (before, after)) in pre
        .records()
        .iter()
        .zip(post.records_mut_ghost())
        .enumerate()
    {
        if before.life() != after.life() {
            match after.life() {
                Life::Revoked => retracted.insert(id as RecordId),
                Life::Superseded => superseded.insert(id as RecordId),
                _ => {}
            }
        }
        if after.ghost_review_seq.is_some() && after.life() != Life::Quarantined {
            after.ghost_review_seq = None;
        }
    }
    let commits = matches!(op, Op::Commit { .. } | Op::Resolve { keep: true, .. });
    if let Op::Commit { agent } = *op {
        judge_quarantine_reasons(cfg, pre, agent, post);
    }
    if let Op::CallTool { .. } = op {
        judge_entry_state(pre, op, RecordSet::EMPTY, post);
    }
    if commits || !superseded.is_empty() {
        let committed = committed_in_step(pre, op, post);
        judge_entry_state(pre, op, committed, post);
        judge_commits(cfg, pre, committed, post);
        judge_supersessions(cfg, pre, op, committed, superseded, post);
    }
    if !retracted.is_empty() {
        judge_retractions(retracted, post);
    }
}

/// The ghost's copy of a new transaction: the level the spec assigns (an external-action
/// transaction reads action-safe, §4) and the records on the main path at or above it.
fn begin_ghost_txn(pre: &State, agent: u8, tier: Tier, isolation: Isolation, post: &mut State) {
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
fn forget_restaged(id: RecordId, post: &mut State) {
    for tx in post.ghost.txns.iter_mut().flatten() {
        tx.snapshot.remove(id);
    }
}

/// The transitive ancestors of `id`, by the ghost's own walk over the parent sets.
fn ghost_ancestors(s: &State, id: RecordId) -> RecordSet {
    let mut out = RecordSet::EMPTY;
    let mut frontier = s.record(id).parents;
    while !frontier.is_empty() {
        let mut next = RecordSet::EMPTY;
        for p in frontier.iter() {
            if !out.contains(p) {
                out.insert(p);
                next = next.union(s.record(p).parents);
            }
        }
        frontier = next;
    }
    out
}

/// Do beliefs `a` and `b` contradict: same slot, different value, overlapping validity?
fn contradict(a: &Record, b: &Record) -> bool {
    a.kind == Kind::Belief
        && b.kind == Kind::Belief
        && a.slot == b.slot
        && a.value != b.value
        && a.validity.from < b.validity.until
        && b.validity.from < a.validity.until
}

fn authority(cfg: &Config, r: &Record) -> crate::evidence::Authority {
    cfg.bounds.sources[r.source as usize]
}

fn in_force(life: Life) -> bool {
    matches!(life, Life::Committed | Life::ActionSafe)
}

/// The records a Commit or `Resolve(keep)` step committed, in the order the step committed
/// them (ascending ids): for a Commit, the records of the transaction that left `Tentative`
/// for Committed or ActionSafe, or for Superseded (a record is superseded only once
/// committed, so a later record of the same commit won against it); for `Resolve(keep)`, the
/// kept record if it is in force after the step.
fn committed_in_step(pre: &State, op: &Op, post: &State) -> RecordSet {
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
fn judge_commits(cfg: &Config, pre: &State, committed: RecordSet, post: &mut State) {
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
fn meets_evidence(cfg: &Config, r: &Record) -> bool {
    r.confidence.value() >= GHOST_CONFIDENCE_THRESHOLD
        || cfg.bounds.sources[r.source as usize].value() >= GHOST_AUTHORITY_THRESHOLD
}

/// The reasons a commit gives must be true (the other direction of I3, I7, I10–I13): a record
/// quarantined *for evidence* did not meet the evidence rule, one quarantined *as expired* was
/// not valid at the commit's clock, one aborted as a *stale* write had a rival committed after
/// the snapshot, one aborted as *outranked* had a higher-authority rival, one sent to *review*
/// had an equal-authority rival from another source, one quarantined for an *inactive parent*,
/// an *unstable dependency* or *permission* had an inactive ancestor, an ancestor pending
/// revocation or a narrower ancestor. A reason that is not true is a check that refuses too
/// much: without this, a protocol that quarantined every record would satisfy every invariant,
/// and only the examples would notice.
fn judge_quarantine_reasons(cfg: &Config, pre: &State, agent: u8, post: &mut State) {
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
        let any_rival = |p: &dyn Fn(&Record) -> bool| pre.ids().any(|x| rival(x, p));
        let ancestors = ghost_ancestors(post, id);
        let any_ancestor = |p: &dyn Fn(&Record) -> bool| {
            ancestors
                .iter()
                .any(|a| p(post.record(a)) || p(pre.record(a)))
        };
        let theirs = |o: &Record| authority(cfg, o);
        let mine = authority(cfg, &r);
        let (truthful, property) = match (r.life(), reason) {
            (Life::Quarantined, Reason::Evidence) => (!meets_evidence(cfg, &r), 10),
            (Life::Quarantined, Reason::Expired) => (
                !(r.validity.from <= pre.clock && pre.clock < r.validity.until),
                11,
            ),
            // Stale: a rival committed after the snapshot and before this commit began (one
            // committed by this very commit is judged by authority, not as stale).
            (Life::Revoked, Reason::StaleWrite) => (stale_rival(pre, &r, id, seq), 7),
            // The outcomes rank (revision 2): stale before higher before review. A record
            // outranked or sent to review while a stale rival stood, or sent to review while a
            // higher one stood, was decided by the wrong rival (revision 1's first-rival-decides).
            (Life::Revoked, Reason::Outranked) => (
                any_rival(&|o| theirs(o) > mine) && !stale_rival(pre, &r, id, seq),
                12,
            ),
            (Life::Quarantined, Reason::Review) => (
                any_rival(&|o| theirs(o) == mine && o.source != r.source)
                    && !any_rival(&|o| theirs(o) > mine)
                    && !stale_rival(pre, &r, id, seq),
                12,
            ),
            (Life::Quarantined, Reason::InactiveParent) => (
                any_ancestor(&|a| {
                    matches!(
                        a.life(),
                        Life::Revoked | Life::Superseded | Life::Quarantined
                    )
                }),
                13,
            ),
            (Life::Revoked, Reason::RevokedParent) => {
                (any_ancestor(&|a| a.life() == Life::Revoked), 13)
            }
            (Life::Quarantined, Reason::UnstableDependency) => {
                (any_ancestor(&|a| a.pending_revocation), 13)
            }
            (Life::Quarantined, Reason::Permission) => (any_ancestor(&|a| a.scope < r.scope), 3),
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
/// (I12), lineage (I13), permission inheritance (I3), dependency stability. A record given the
/// reason of one check passed every earlier one; this returns the property of the first
/// earlier check that record `id` surely failed, if any.
///
/// "Surely": the ghost judges from the states before and after the commit step, so it counts
/// only what held when the record was judged whatever the order inside the step: a rival in
/// force before the step and untouched by it, or committed earlier in the step and still in
/// force; an ancestor already inactive before the step.
fn earlier_check_failed(
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
        Reason::StaleWrite | Reason::Outranked | Reason::Review => 3,
        Reason::RevokedParent | Reason::InactiveParent | Reason::UncommittedParent => 4,
        Reason::Permission => 5,
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
                && (stale
                    || authority(cfg, now) > authority(cfg, r)
                    || (authority(cfg, now) == authority(cfg, r) && now.source != r.source))
        })
    };
    let ancestors = ghost_ancestors(post, id);
    let checks: [(u8, &dyn Fn() -> bool); 5] = [
        (10, &|| !meets_evidence(cfg, r)),
        (11, &|| {
            !(r.validity.from <= pre.clock && pre.clock < r.validity.until)
        }),
        (12, &conflict_failed),
        (13, &|| {
            ancestors.iter().any(|a| {
                matches!(
                    pre.record(a).life(),
                    Life::Revoked | Life::Superseded | Life::Quarantined
                )
            })
        }),
        (3, &|| {
            ancestors.iter().any(|a| post.record(a).scope < r.scope)
        }),
    ];
    checks
        .iter()
        .take(position - 1)
        .find(|(_, failed)| failed())
        .map(|(property, _)| *property)
}

/// Is there a rival of `r` (record `id`) committed after the snapshot (sequence `seq`) and
/// before this commit began?
fn stale_rival(pre: &State, r: &Record, id: RecordId, seq: u8) -> bool {
    pre.ids().any(|x| {
        let o = pre.record(x);
        x != id && in_force(o.life()) && contradict(r, o) && o.seq.is_some_and(|s| s >= seq)
    })
}

/// I4, when a record enters the lifecycle in force: a commit inside an external-action
/// transaction makes its records ActionSafe, any other commit (and `Resolve(keep)`) makes them
/// Committed, and an executed tool action enters as ActionSafe exactly in an external-action
/// transaction (§3, §8). (A protocol that swapped the two passes every other property: the
/// strong gate and I1 judge against whatever is ActionSafe.)
fn judge_entry_state(pre: &State, op: &Op, committed: RecordSet, post: &mut State) {
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

/// I12 adjudication: a record that was in force and is Superseded after the step lost to a
/// winner of this step that may supersede it: a record of higher authority or a newer one of
/// the same source committed by Commit, or the record kept by review of equal or higher
/// authority. And a Commit never commits a belief over an equal-authority rival of another
/// source (that conflict goes to review) or a higher-authority one.
fn judge_supersessions(
    cfg: &Config,
    pre: &State,
    op: &Op,
    winners: RecordSet,
    superseded: RecordSet,
    post: &mut State,
) {
    let authority = |r: &Record| cfg.bounds.sources[r.source as usize];
    let mut bad = false;
    for x in superseded.iter() {
        let loser = pre.record(x);
        let legit = winners.iter().any(|w| {
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
        });
        bad |= !legit;
    }
    if let Op::Commit { .. } = op {
        for w in winners.iter().filter(|&w| in_force(post.record(w).life())) {
            let winner = post.record(w);
            bad |= pre.ids().any(|x| {
                let rival = pre.record(x);
                // Still in force when `w` was judged: not retracted in the step, and not
                // superseded by a record of this commit judged before `w`.
                let displaced_earlier = post.record(x).life() == Life::Superseded
                    && winners
                        .iter()
                        .any(|v| v < w && contradict(post.record(v), rival));
                in_force(rival.life())
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
}

/// I2, strengthened: the step that retracts a record leaves every transitive descendant of it
/// repaired by type, the staged records of other open transactions included: a belief Revoked,
/// a view Quarantined (or already Revoked), a reversible action compensated, an irreversible
/// one recorded as leaked.
fn judge_retractions(retracted: RecordSet, post: &mut State) {
    let unrepaired = post.ids().any(|d| {
        if ghost_ancestors(post, d).intersection(retracted).is_empty() {
            return false;
        }
        let r = post.record(d);
        match r.kind {
            Kind::Belief => r.life() != Life::Revoked,
            Kind::Summary | Kind::Profile => !matches!(r.life(), Life::Quarantined | Life::Revoked),
            Kind::ReversibleAction => r.effect != Some(Effect::Compensated),
            Kind::IrreversibleAction => r.effect != Some(Effect::Leaked),
        }
    });
    if unrepaired {
        post.ghost.violate(2);
    }
}

/// Remembers, for each record of the committing transaction left quarantined for review, the
/// ghost snapshot's sequence number (I7 judges a later `Resolve(keep)` against it).
fn remember_review_snapshots(pre: &State, agent: u8, post: &mut State) {
    let Some(tx) = pre.ghost.txns[agent as usize] else {
        return;
    };
    for id in pre.ids() {
        let staged_here = pre.record(id).writer == Some(agent);
        let r = post.record_mut(id);
        if staged_here && r.life() == Life::Quarantined && r.reason == Some(Reason::Review) {
            r.ghost_review_seq = Some(tx.seq);
        }
    }
}

/// I7 on `Resolve(keep)`: the kept record must not stand over a rival committed after the
/// snapshot of the transaction that staged it.
fn judge_review_keep(pre: &State, id: RecordId, post: &mut State) {
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
            && o.seq.is_some_and(|s| s >= staged_from)
    });
    if stale {
        post.ghost.violate(7);
    }
}

/// I5 (revision 3: every read): a record read by a transaction (declared parent, gate
/// support, adopted record) is in the ghost's snapshot of it, taken at `Begin` from the
/// records at or above its level then, or was staged by the transaction itself. A snapshot
/// record that left the main path since stays readable (§4, reads are repeatable); what it
/// may be used for is the pipeline's and the gate's business.
fn judge_reads(pre: &State, agent: u8, read: RecordSet, ghost: &mut Ghost) {
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

/// I1, I9, I17 and I18, at the moment an irreversible call executes.
fn judge_irreversible_call(pre: &State, agent: u8, support: RecordSet, post: &mut State) {
    let (Some(tx), Some(gtx)) = (pre.txns()[agent as usize], pre.ghost.txns[agent as usize]) else {
        return;
    };
    if !safe_to_act(pre, &gtx, tx.tier, support) {
        post.ghost.violate(1);
    }
    // I9, in every tier (revision 3): remember which of its basis was already in doubt (a
    // revocation requested).
    let mut basis = support;
    for s in support.iter() {
        basis = basis.union(ghost_ancestors(pre, s));
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
fn harmless(pre: &State, agent: u8, tx: &GhostTxn, closure: RecordSet) -> bool {
    let in_force_now =
        |r: &Record| in_force(r.life()) && !r.pending_revocation && r.validity.contains(pre.clock);
    let closure_ok = closure.iter().all(|id| {
        let r = pre.record(id);
        in_force_now(r) && may_see(agent, r)
    });
    closure_ok && !tentative_in_flight(pre, tx)
}

/// The permission rule in the ghost's words (§4): a Private record is for its owner only;
/// Shared and Public ones for every agent.
fn may_see(agent: u8, r: &Record) -> bool {
    r.scope != Scope::Private || r.owner == agent
}

/// Is a Tentative record outside the ghost snapshot `tx` in flight (the gate's condition 1, as
/// I1 and I18 restate it)?
fn tentative_in_flight(pre: &State, tx: &GhostTxn) -> bool {
    pre.ids()
        .any(|id| pre.record(id).life() == Life::Tentative && !tx.snapshot.contains(id))
}

/// I1's condition in the spec's words, against the ghost's snapshot: no Tentative record
/// outside the snapshot in flight; every support record in force (Committed or ActionSafe);
/// and for an external-action transaction a snapshot holding some ActionSafe record and
/// support that is all ActionSafe and valid now.
fn safe_to_act(pre: &State, tx: &GhostTxn, tier: Tier, support: RecordSet) -> bool {
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

/// I7: a belief committed by this step must not stand over a rival that was committed after the
/// transaction's snapshot (the ghost's copy) was taken (it should have been aborted as a stale
/// late write).
fn judge_commit(pre: &State, agent: u8, post: &mut State) {
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
