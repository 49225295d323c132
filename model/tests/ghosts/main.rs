//! Each ghost judge of docs/protocol.md §9 (revision 2) breaks on a hand-made violating step.
//!
//! A ghost restates its rule without calling the code it judges, so it must catch a step that
//! the protocol code would never take. Each test builds the state before a step with the real
//! protocol (`machine::step`), then builds the state *after* the step by hand, as a defective
//! protocol would leave it, and hands both to the ghost observer (`ghost::observe_step`). The
//! property must fail on the defective step and hold on the correct one (the control), so a
//! judge that always or never fires fails its test.
//!
//! One test binary, one module per judge family of `model/src/ghost/`.

#[path = "../common/mod.rs"]
mod common;

mod action;
mod commit;
mod conflict;
mod content;
mod lifecycle;
mod reads;

use common::*;
use memtx_model::ghost::observe_step;
use memtx_model::machine::step;
use memtx_model::ops::Op;
use memtx_model::properties::{
    action_safety_gating, adjudication, cascade_repair_completeness, content_scope,
    evidence_at_commit, isolation, lifecycle_legality, no_harm_from_known_doubt, no_stale_content,
    no_stale_override, one_truth_per_slot, scope_non_interference, sound_lineage_at_commit,
    tier_isolation, validity_at_commit, zero_downstream_harm,
};
use memtx_model::record::{Reason, RecordId, Scope};
use memtx_model::txn::{Isolation, Tier};
use memtx_model::{Config, Life, MemTx, State, Variant};

fn cfg() -> Config {
    wide(Variant::Memtx)
}

/// The state after performing `ops` from the initial state with the real protocol.
fn run(ops: &[Op]) -> State {
    let cfg = cfg();
    ops.iter().fold(State::initial(), |s, op| {
        step(&cfg, &s, op).unwrap_or_else(|r| panic!("{op:?} refused: {r}"))
    })
}

/// `pre` → `post` by `op`, judged by the ghost; returns the judged post state.
fn judge(pre: &State, op: &Op, mut post: State) -> State {
    observe_step(&cfg(), pre, op, &mut post);
    post
}

/// Commits `ids` by hand (Tentative → Validated → Committed, next sequence numbers) and
/// closes `agent`'s transaction: a commit step that skipped every check.
fn hand_commit(pre: &State, agent: u8, ids: &[RecordId]) -> State {
    let mut post = pre.clone();
    for &id in ids {
        post.move_record(id, Life::Validated).unwrap();
        post.move_record(id, Life::Committed).unwrap();
        post.record_mut(id).seq = Some(post.next_seq);
        post.next_seq += 1;
    }
    for id in post.staged_by(agent).iter() {
        post.record_mut(id).writer = None;
    }
    post.set_txn(agent, None);
    post
}

/// `post` with record `id` refused by the commit step: moved to `life` (Quarantined or
/// Revoked), logged with `reason`, no longer its transaction's. Pass `pre` with the committing
/// transaction closed for a commit that refused `id` and committed nothing.
fn refuse(mut post: State, id: RecordId, life: Life, reason: Reason) -> State {
    if post.record(id).life() != life {
        post.move_record(id, life).unwrap();
    }
    post.record_mut(id).reason = Some(reason);
    post.record_mut(id).writer = None;
    post
}

/// `pre` with `agent`'s transaction closed: a commit step that committed nothing yet.
fn closed(pre: &State, agent: u8) -> State {
    let mut post = pre.clone();
    post.set_txn(agent, None);
    post
}

fn model() -> MemTx {
    MemTx::new(cfg())
}
