//! Ghost (history) variables for the history properties I1, I2 (the retracting step), I4, I5,
//! I7, I9, I10–I13, I15–I18 (docs/protocol.md §9).
//!
//! Each predicate here is written **independently** of the protocol code it judges: it reads raw
//! state fields and re-states the spec's condition in its own words, never calling the gate, the
//! pipeline or the lifecycle table. (A property that called the gate to judge the gate could never
//! fail.) The transition code ([`crate::machine::step`]) calls [`observe_step`] with the state
//! before and after each operation; [`observe_move`] sees every lifecycle move as it happens.
//!
//! One judge family per file: `entry.rs` (I4), `reads.rs` (I5 and the ghost snapshot), `commit.rs`
//! (I10, I11, I13, the truth of reasons and the pipeline's order), `conflict.rs` (I7, I12),
//! `action.rs` (I1, I9, I17's gate part, I18), `cascade.rs` (I2), `content.rs` (the ghost's
//! contexts, content and observations; I15, I16). This file holds the step
//! dispatcher and the words the judges share (ancestry, contradiction, authority, in force, the
//! permission rule).

mod action;
mod cascade;
mod commit;
mod conflict;
mod content;
mod entry;
mod reads;

pub use entry::observe_move;

use action::judge_irreversible_call;
use cascade::judge_retractions;
use commit::{committed_in_step, judge_commits, judge_quarantine_reasons};
use conflict::{
    judge_commit, judge_review_keep, judge_scope_reviews, judge_supersessions,
    remember_review_snapshots,
};
use content::{follow_serving, judge_committed_content};
use entry::{judge_created, judge_entry_state};
use reads::{begin_ghost_txn, forget_restaged, judge_reads};

use crate::config::Config;
use crate::lifecycle::Life;
use crate::ops::Op;
use crate::record::{Kind, Record, RecordId, RecordSet, Scope};
use crate::state::State;

/// Judges one step: `pre` is the state before `op`, `post` the state after (to be annotated).
pub fn observe_step(cfg: &Config, pre: &State, op: &Op, post: &mut State) {
    if post.len() != pre.len() {
        judge_created(pre, op, post);
    }
    follow_serving(pre, op, post);
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
                judge_irreversible_call(cfg, pre, agent, support, post);
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
        Op::Read { agent, record } => {
            judge_reads(pre, agent, RecordSet::single(record), &mut post.ghost)
        }
        Op::Revalidate { record } => forget_restaged(record, post),
        Op::Rebuild { view } => forget_restaged(view, post),
        Op::Resolve { record, keep: true } => judge_review_keep(pre, record, post),
        _ => {}
    }
    // One pass over the records: which moved to Revoked or Superseded in this step. Most
    // steps move nothing, and then only the judges of commits can have work to do.
    let (mut retracted, mut superseded) = (RecordSet::EMPTY, RecordSet::EMPTY);
    // Beliefs that left force for Quarantined: only scope review moves a belief so (a view
    // is quarantined by cascade; a belief by cascade is Revoked).
    let mut reviewed = RecordSet::EMPTY;
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
                Life::Quarantined if in_force(before.life()) && before.kind == Kind::Belief => {
                    reviewed.insert(id as RecordId)
                }
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
    if commits || !superseded.is_empty() || !reviewed.is_empty() {
        let committed = committed_in_step(pre, op, post);
        judge_entry_state(pre, op, committed, post);
        judge_commits(cfg, pre, committed, post);
        judge_committed_content(pre, op, committed, post);
        judge_supersessions(cfg, pre, op, committed, superseded, post);
        judge_scope_reviews(op, committed, reviewed, post);
    }
    if !retracted.is_empty() {
        judge_retractions(retracted, post);
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

/// The permission rule in the ghost's words (§4): a Private record is for its owner only;
/// Shared and Public ones for every agent.
fn may_see(agent: u8, r: &Record) -> bool {
    r.scope != Scope::Private || r.owner == agent
}

#[cfg(test)]
mod tests {
    use super::contradict;
    use crate::record::{Record, Validity};

    /// Validities are half-open, `[from, until)`: a belief that ends at tick 1 and a rival
    /// that begins at tick 1 never hold at once, so they do not contradict (the `expiry`
    /// preset's one-tick and from-next-tick writes meet so).
    #[test]
    fn beliefs_whose_validities_only_meet_do_not_contradict() {
        let belief = |value, from, until| Record {
            value,
            validity: Validity { from, until },
            ..Record::default()
        };
        let early = belief(0, 0, 1);
        assert!(contradict(&early, &belief(1, 0, 2)), "overlapping");
        assert!(!contradict(&early, &belief(1, 1, 3)), "meeting at 1");
        assert!(!contradict(&belief(1, 1, 3), &early), "meeting at 1");
        assert!(!contradict(&early, &belief(0, 0, 2)), "the same value");
    }
}
