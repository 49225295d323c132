//! What each agent was served, and what each record carries: the ghost's own context per
//! agent, each record's content and observation, and the properties over them: I15 content
//! scope and I16 no stale content (docs/protocol.md §4, §6 (iii), §9, §11).
//!
//! The ghost keeps the *true* context (every record served to the agent since its last
//! `EndSession`, whatever the variant: `txn-provenance` forgets it at `Begin`, the ghost does
//! not) and labels every record it sees staged with it, from the operation itself and the
//! states around it, never from the protocol's labels.

use super::{contradict, may_see};
use crate::config::{Config, Variant};
use crate::lifecycle::Life;
use crate::ops::Op;
use crate::record::{Kind, Record, RecordId, RecordSet, Scope};
use crate::state::State;

/// Follows one step's serving: what the operation served to which agent, and the ghost's
/// labels on a record staged, adopted or rebuilt. Judges I15's reading half: no agent is served
/// a record whose content it may not see.
pub(super) fn follow_serving(pre: &State, op: &Op, post: &mut State) {
    let (agent, served) = match *op {
        Op::Read { agent, record } => (agent, RecordSet::single(record)),
        Op::Stage { agent, parents, .. } => {
            let id = pre.len() as RecordId;
            let implicit = pre.ghost.contexts[agent as usize];
            let seq = pre.ghost.txns[agent as usize].map_or(pre.next_seq, |t| t.seq);
            let transcribed = implicit
                .iter()
                .filter(|&x| {
                    let (o, r) = (pre.record(x), post.record(id));
                    o.writer != Some(agent)
                        && o.kind == Kind::Belief
                        && r.kind == Kind::Belief
                        && o.slot == r.slot
                        && o.value == r.value
                })
                .collect();
            let r = post.record_mut(id);
            r.ghost_implicit = implicit;
            r.ghost_transcribed = transcribed;
            let observed = observation(post, id, seq);
            post.record_mut(id).ghost_observed = observed;
            (agent, parents.union(RecordSet::single(id)))
        }
        Op::Adopt { agent, record } => {
            // What the tool returned is its content; the adopting transaction observes it.
            let seq = pre.ghost.txns[agent as usize].map_or(pre.next_seq, |t| t.seq);
            post.record_mut(record).ghost_observed = Some(seq);
            (agent, RecordSet::single(record))
        }
        // A call serves its support only when it executes (a blocked call is no step).
        Op::CallTool { agent, support, .. } if post.len() > pre.len() => (agent, support),
        Op::Revalidate { record } => (pre.record(record).owner, RecordSet::single(record)),
        Op::Rebuild { view } => {
            // A rebuilt view keeps the content it had.
            let dropped = RecordSet(pre.record(view).parents.0 & !post.record(view).parents.0);
            let v = post.record_mut(view);
            v.ghost_implicit = v.ghost_implicit.union(dropped);
            (v.owner, RecordSet::single(view))
        }
        Op::EndSession { agent } => {
            post.ghost.contexts[agent as usize] = RecordSet::EMPTY;
            return;
        }
        _ => return,
    };
    for x in served.iter() {
        if !content(post, x)
            .iter()
            .all(|c| may_see(agent, post.record(c)))
        {
            post.ghost.violate(15);
        }
    }
    let context = &mut post.ghost.contexts[agent as usize];
    *context = context.union(served);
}

/// Is provenance follows content on (§6, §9 I18: "under provenance follows content")? Every
/// variant but `paper-provenance`; restated here so that the properties scope themselves
/// without asking the protocol.
pub(super) fn follows_content(cfg: &Config) -> bool {
    cfg.variant != Variant::PaperProvenance
}

/// The ancestors lineage judges, in the ghost's words (§6 (ii)): the transitive declared
/// parents and the records each transcribed from its writer's context.
pub(super) fn lineage(s: &State, id: RecordId) -> RecordSet {
    let mut out = RecordSet::EMPTY;
    let r = s.record(id);
    let mut frontier = r.parents.union(r.ghost_transcribed);
    while !frontier.is_empty() {
        let mut next = RecordSet::EMPTY;
        for x in frontier.iter() {
            if x != id && !out.contains(x) {
                out.insert(x);
                let o = s.record(x);
                next = next.union(o.parents).union(o.ghost_transcribed);
            }
        }
        frontier = next;
    }
    out
}

/// The content of `id` in the ghost's words: itself, and transitively its declared parents and
/// the context its writer held when it was staged.
pub(super) fn content(s: &State, id: RecordId) -> RecordSet {
    let mut out = RecordSet::EMPTY;
    let mut frontier = RecordSet::single(id);
    while !frontier.is_empty() {
        let mut next = RecordSet::EMPTY;
        for x in frontier.iter() {
            if !out.contains(x) {
                out.insert(x);
                let r = s.record(x);
                next = next.union(r.parents).union(r.ghost_implicit);
            }
        }
        frontier = next;
    }
    out
}

/// The observation of belief `id` just staged by a transaction whose ghost snapshot was taken
/// at commit sequence `seq` (§6 (iii)): the freshest observation among the other records of its
/// content that assert its slot and value over a validity covering its own; `seq` when none.
fn observation(s: &State, id: RecordId, seq: u8) -> Option<u8> {
    let r = s.record(id);
    if r.kind != Kind::Belief {
        return None;
    }
    let covers = |x: &Record| {
        x.kind == Kind::Belief
            && x.slot == r.slot
            && x.value == r.value
            && x.validity.from <= r.validity.from
            && r.validity.until <= x.validity.until
    };
    let mut freshest: Option<u8> = None;
    for x in content(s, id).iter().filter(|&x| x != id) {
        let o = s.record(x);
        if covers(o) {
            if let Some(seen) = o.ghost_observed {
                freshest = Some(freshest.map_or(seen, |f: u8| f.max(seen)));
            }
        }
    }
    Some(freshest.unwrap_or(seq))
}

/// I15's committing half, in the spec's words (§9): every agent permitted to see record `id`
/// may see every record of its content. A Private record is seen by its owner only; a Shared or
/// Public one by every agent, so none of its content may be another's Private record, nor
/// even its owner's.
pub(super) fn content_in_scope(s: &State, id: RecordId) -> bool {
    let r = s.record(id);
    content(s, id).iter().all(|x| {
        let o = s.record(x);
        o.scope != Scope::Private || (r.scope == Scope::Private && o.owner == r.owner)
    })
}

/// Is there a rival of `r` (record `id`, judged for `writer`) that it may see, committed after
/// its observation and before the step began (sequence `before`), in force before the step?
pub(super) fn newer_than_observation(
    pre: &State,
    r: &Record,
    id: RecordId,
    writer: u8,
) -> RecordSet {
    let Some(observed) = r.ghost_observed else {
        return RecordSet::EMPTY;
    };
    pre.ids()
        .filter(|&x| {
            let o = pre.record(x);
            x != id
                && matches!(o.life(), Life::Committed | Life::ActionSafe)
                && contradict(r, o)
                && may_see(writer, o)
                && o.seq.is_some_and(|s| s >= observed && s < pre.next_seq)
        })
        .collect()
}

/// I15 and I16 on every record a step committed: its content is in scope, and no rival
/// committed after its observation stands beside it or was superseded by it.
pub(super) fn judge_committed_content(
    pre: &State,
    op: &Op,
    committed: RecordSet,
    post: &mut State,
) {
    for id in committed.iter() {
        if !content_in_scope(post, id) {
            post.ghost.violate(15);
        }
        let r = *post.record(id);
        let writer = match *op {
            Op::Commit { agent } => agent,
            _ => r.owner,
        };
        let stale = newer_than_observation(pre, &r, id, writer);
        if stale.iter().any(|x| {
            let (before, after) = (pre.record(x).life(), post.record(x).life());
            after.is_active()
                || (after == Life::Superseded && before != Life::Superseded && {
                    // Superseded by `id` itself: the commit passes its records in id order (§5),
                    // so the first of them that contradicts `x` is the one that displaced it.
                    // (Found by `memtx simulate` on `full`: a stale record committed beside a
                    // fresh one that had already superseded `x` in the same commit was blamed.)
                    let o = pre.record(x);
                    committed
                        .iter()
                        .find(|&c| super::contradict(post.record(c), o))
                        == Some(id)
                })
        }) {
            post.ghost.violate(16);
        }
    }
}
