//! Regressions: tentative reads and the pipeline's transitive checks.

use super::*;

// ---- regressions: tentative reads and the pipeline's transitive checks ------------------------------

#[test]
fn laundering_through_a_tentative_parent_is_quarantined() {
    // Regression (I3): a0's Shared summary r1 of its Private r0 is still Tentative (it would fail
    // permission inheritance at a0's commit); a1 reads it at tentative-read and derives the Shared
    // r2 from it. Judged on parents only, r2 would commit visible to everyone while its ancestry
    // is Private. Revision 3 quarantines r2 first for its uncommitted parent (below), so the
    // transitive permission check is pinned under `rev2-lineage`, where a Tentative parent passes.
    // Under provenance follows content (revision 3.2, §4) a1 may not even see r1: its content
    // holds a0's Private r0.
    scenario("laundering through a tentative parent, content")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).private())
        .step(commit(0))
        .step(begin_medium(0))
        .step(summary(0, &[0]))
        .step(begin(1, Tier::Medium, Isolation::TentativeRead))
        .disabled(summary(1, &[1]))
        .disabled(read(1, 1))
        .finish();
    let path = |variant| {
        scenario("laundering through a tentative parent")
            .variant(variant)
            .step(begin_medium(0))
            .step(belief(0, 0, 0).private())
            .step(commit(0))
            .step(begin_medium(0))
            .step(summary(0, &[0]))
            .step(begin(1, Tier::Medium, Isolation::TentativeRead))
            .step(summary(1, &[1]))
            .step(commit(1))
    };
    path(Variant::PaperProvenance)
        .expect_record(2, Life::Quarantined, Some(Reason::UncommittedParent))
        .finish();
    // `rev2-lineage` follows content, so a1 may not see r1 there either: the transitive
    // permission check over a Tentative parent is now defence in depth, reached by no variant
    // that keeps both content visibility and lineage over committed parents.
    path(Variant::PaperProvenance)
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Permission))
        .finish();
}

#[test]
fn a_revoked_ancestor_behind_a_tentative_parent_aborts() {
    // Regression (I2): r2 is a view of r0 and r1; revoking r0 quarantines r2. a0's snapshot still
    // holds r2, so a0 stages r3 below it (after the cascade ran: nothing repairs r3 until a0's
    // commit). a1 reads r3 at tentative-read and derives r4 from it. Judged on direct parents
    // only, r4 would commit with the revoked r0 among its ancestors.
    scenario("revoked ancestor behind a tentative parent")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(belief(0, 1, 0))
        .step(summary(0, &[0, 1]))
        .step(commit(0))
        .step(begin_medium(0))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        .step(belief(0, 1, 0).parents(&[2]))
        .step(begin(1, Tier::Medium, Isolation::TentativeRead))
        .step(summary(1, &[3]))
        .step(commit(1))
        .expect_record(4, Life::Revoked, Some(Reason::RevokedParent))
        .step(commit(0))
        .expect_record(3, Life::Revoked, Some(Reason::RevokedParent))
        .finish();
}

#[test]
fn a_rival_retracted_earlier_in_the_same_commit_is_not_overridden() {
    // Regression (I7 judge): a3's r0 (slot 1 = 1) is read at tentative-read by a1, which derives
    // and commits r1 (slot 1 = 0) after a3's snapshot. At a3's commit r0 is a stale late write:
    // it is aborted, and its cascade revokes r1. r2 (slot 1 = 1, same transaction) is judged
    // next: r1 is no longer in force, so r2 commits, over nothing. Judged against the state
    // before the commit, I7 would call this a stale override. Pinned under `rev2-lineage`:
    // revision 3 quarantines r1 at once, its parent r0 being uncommitted.
    let path = |variant| {
        scenario("rival retracted in the same commit")
            .variant(variant)
            .step(begin_medium(3))
            .step(belief(3, 1, 1))
            .step(begin(1, Tier::Medium, Isolation::TentativeRead))
            .step(belief(1, 1, 0).parents(&[0]))
            .step(commit(1))
    };
    path(Variant::Memtx)
        .expect_record(1, Life::Quarantined, Some(Reason::UncommittedParent))
        .finish();
    path(Variant::Rev2Lineage)
        .expect_record(1, Life::Committed, None)
        .step(belief(3, 1, 1))
        .step(commit(3))
        .expect_record(0, Life::Revoked, Some(Reason::StaleWrite))
        .expect_record(1, Life::Revoked, Some(Reason::Cascade))
        .expect_record(2, Life::Committed, None)
        .finish();
}
