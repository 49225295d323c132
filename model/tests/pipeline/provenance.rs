//! Revision 3 step 4: provenance follows content.

use super::*;

// ---- revision 3 step 4: provenance follows content -------------------------------------------

#[test]
fn transcribing_a_tentative_belief_counts_it_as_a_parent() {
    // a1 reads a0's staged r0 at tentative-read and writes the same value as its own r1,
    // declaring nothing (§6 (ii)): under provenance follows content r0 is r1's parent for
    // lineage, and r1 waits for it; the paper's protocol commits r1 over a belief that never
    // validated.
    let path = |variant| {
        scenario("transcribed tentative belief")
            .variant(variant)
            .step(begin_medium(0))
            .step(belief(0, 0, 1))
            .step(begin(1, Tier::Medium, Isolation::TentativeRead))
            .step(read(1, 0))
            .step(belief(1, 0, 1).source(HIGH))
            .step(commit(1))
    };
    path(Variant::Memtx)
        .expect_record(1, Life::Quarantined, Some(Reason::UncommittedParent))
        .expect(|s| assert_eq!(s.record(1).transcribed, set(&[0])))
        .finish();
    path(Variant::PaperProvenance)
        .expect_record(1, Life::Committed, None)
        .finish();
}

#[test]
fn provenance_follows_content_across_transactions_of_one_session() {
    // a0 reads its own Private r0 in one transaction and writes a Shared r1 of another value in
    // the next: r1 carries r0 (content-permission) until a0 ends its session.
    let path = |end: bool| {
        let s = scenario("content across transactions")
            .step(begin_medium(0))
            .step(belief(0, 0, 0).private())
            .step(commit(0))
            .step(begin_medium(0))
            .step(read(0, 0))
            .step(commit(0));
        let s = if end { s.step(end_session(0)) } else { s };
        s.step(begin_medium(0))
            .step(belief(0, 0, 1).source(HIGH))
            .step(commit(0))
    };
    path(false)
        .expect_record(1, Life::Quarantined, Some(Reason::ContentPermission))
        .finish();
    path(true).expect_record(1, Life::Committed, None).finish();
}

#[test]
fn a_record_is_visible_only_with_its_whole_content_permitted() {
    // a0's Tentative Shared r1 carries its Private r0: a1 may not read it, even at raw-read.
    scenario("content visibility")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).private())
        .step(belief(0, 0, 0).source(MID_B))
        .step(begin(1, Tier::Medium, Isolation::RawRead))
        .disabled(read(1, 1))
        .finish();
}
