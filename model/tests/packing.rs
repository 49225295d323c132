//! The packed encoding's ghost trailer stays empty under a correct protocol.
//!
//! `State::pack` writes a record's ghost labels (review snapshot, implicit provenance,
//! observation, transcriptions) only where they differ from the protocol fields they mirror,
//! as a trailer of 9 bytes per difference. Under `memtx` they never differ, so every state pays
//! one byte for the trailer. A protocol field the ghost does not keep (a number the protocol
//! forgets to forget, such as a review snapshot kept after review) parts them in every state
//! that carries it: the trailer then costs 9 bytes and a slower path on a large share of the
//! states, and the dead number splits states that are the same protocol state (on `paper`,
//! 1.0 M of 56.2 M before the review snapshot was cleared on leaving review).

mod common;

use common::reachable;
use memtx_model::presets::{preset, SUITE};
use memtx_model::Variant;

#[test]
fn under_memtx_every_ghost_label_of_a_reachable_state_mirrors_its_protocol_field() {
    for name in SUITE.iter().map(|entry| entry.name) {
        let cfg = preset(name, Variant::Memtx).expect("a preset");
        let states = reachable(&cfg, 40_000);
        for s in &states {
            for (id, r) in s.records().iter().enumerate() {
                let labels = (r.review_seq, r.implicit, r.observed, r.transcribed);
                let ghost = (
                    r.ghost_review_seq,
                    r.ghost_implicit,
                    r.ghost_observed,
                    r.ghost_transcribed,
                );
                assert_eq!(
                    labels, ghost,
                    "{name}: record r{id} (review snapshot, implicit, observation, \
                     transcriptions) parts from the ghost's copy in {s:?}"
                );
            }
        }
    }
}

/// The same for the ghost's copy of each agent's transaction (its snapshot, the commit
/// sequence number it began at, its level) and of each agent's context. A ghost that forgot
/// to follow the protocol somewhere (an `Abort` that leaves the ghost's transaction open, a
/// restaged record left in the ghost's snapshot) shows here first, and its states would pay
/// the packed trailer (`model/src/packed.rs`).
#[test]
fn under_memtx_the_ghost_copies_of_transactions_and_contexts_mirror_the_protocol() {
    for name in SUITE.iter().map(|entry| entry.name) {
        let cfg = preset(name, Variant::Memtx).expect("a preset");
        for s in &reachable(&cfg, 40_000) {
            for (agent, (tx, ghost)) in s.txns().iter().zip(&s.ghost.txns).enumerate() {
                let mirrored = tx.map(|tx| (tx.snapshot, tx.snapshot_seq, tx.isolation as u8));
                let copy = ghost.map(|g| (g.snapshot, g.seq, g.level));
                assert_eq!(
                    copy, mirrored,
                    "{name}: the ghost's transaction of agent {agent} parts from the protocol's in {s:?}"
                );
            }
            assert_eq!(
                &s.ghost.contexts,
                s.contexts(),
                "{name}: the ghost's contexts part from the protocol's in {s:?}"
            );
        }
    }
}
