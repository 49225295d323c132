//! Check 3's lineage (a revoked or inactive parent) and permission inheritance.

use super::*;

// ---- check 3: lineage -----------------------------------------------------------------------------

#[test]
fn revoked_parent_aborts_and_cascades() {
    // a1's snapshot still holds r0 when r0 is revoked, but a Revoked record is not readable
    // (§4: branch states are never visible): a1 may not declare it. Its view r1, quarantined
    // by the cascade, is still in the snapshot and may be declared (the lineage check decides
    // at commit): r2 staged below it has a revoked grand-ancestor, so the pipeline aborts r2
    // and the cascade quarantines r3, a view staged below r2.
    scenario("revoked parent")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(summary(0, &[0]))
        .step(commit(0))
        .step(begin_medium(1))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(0, Life::Revoked, Some(Reason::Revocation))
        .expect_record(1, Life::Quarantined, Some(Reason::Rebuild))
        .refused(
            belief(1, 1, 0).parents(&[0]),
            memtx_model::ops::Refusal::Disabled(
                memtx_model::rules::Rule::EnStageParentRevoked.statement(),
            ),
        )
        .step(belief(1, 1, 0).parents(&[1]))
        .step(summary(1, &[2]))
        .step(commit(1))
        .expect_record(2, Life::Revoked, Some(Reason::RevokedParent))
        .expect_record(3, Life::Quarantined, Some(Reason::Rebuild))
        .expect(|s| {
            assert!(s.audit(2).has(Repair::Retracted));
            assert_eq!(s.audit(3).cause, Some(2));
        })
        .finish();
}

#[test]
fn superseded_parent_quarantines_as_inactive_parent() {
    scenario("superseded parent")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(commit(0))
        .step(begin_medium(1))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(HIGH))
        .step(commit(0))
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByAuthority))
        .step(belief(1, 1, 0).parents(&[0]))
        .step(commit(1))
        .expect_record(2, Life::Quarantined, Some(Reason::InactiveParent))
        .finish();
}

#[test]
fn quarantined_parent_quarantines_as_inactive_parent() {
    // a1 reads at tentative-read, so a0's staged r0 is in its snapshot; r0 then fails the
    // evidence check.
    scenario("quarantined parent")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).low_confidence())
        .step(begin(1, Tier::Medium, Isolation::TentativeRead))
        .step(summary(1, &[0]))
        .step(commit(0))
        .expect_record(0, Life::Quarantined, Some(Reason::Evidence))
        .step(commit(1))
        .expect_record(1, Life::Quarantined, Some(Reason::InactiveParent))
        .finish();
}

#[test]
fn a_parent_staged_in_the_same_transaction_is_decided_first() {
    // Id order: r0 fails evidence before r1 (its view) is judged, so r1 sees an inactive parent.
    scenario("id order")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).low_confidence())
        .step(summary(0, &[0]))
        .step(commit(0))
        .expect_record(0, Life::Quarantined, Some(Reason::Evidence))
        .expect_record(1, Life::Quarantined, Some(Reason::InactiveParent))
        .finish();
}

// ---- check 3: permission inheritance ------------------------------------------------------------

#[test]
fn permission_laundering_is_quarantined() {
    // Private → Shared, and Shared → Public, judged on declared parents (the paper's rule, on
    // under every variant; under `memtx` the Shared r1 staged beside the Private r0 already
    // carries it: provenance_follows_content_* below).
    scenario("permission laundering")
        .variant(Variant::PaperProvenance)
        .step(begin_medium(0))
        .step(belief(0, 0, 0).private())
        .step(belief(0, 1, 0))
        .step(commit(0))
        .step(begin_medium(0))
        .step(summary(0, &[0]))
        .step(summary(0, &[1]).public())
        .step(commit(0))
        .expect_record(2, Life::Quarantined, Some(Reason::Permission))
        .expect_record(3, Life::Quarantined, Some(Reason::Permission))
        .finish();
}

#[test]
fn permission_equal_or_narrower_scope_commits() {
    // Declared parents only (under `memtx` the Public r1 staged beside the Private r0 carries
    // it in its content).
    scenario("permission narrowing")
        .variant(Variant::PaperProvenance)
        .step(begin_medium(0))
        .step(belief(0, 0, 0).private())
        .step(belief(0, 1, 0).public())
        .step(commit(0))
        .step(begin_medium(0))
        .step(summary(0, &[0]).private()) // Private from Private
        .step(summary(0, &[1])) // Shared from Public
        .step(summary(0, &[0, 1]).private()) // the narrowest parent decides
        .step(commit(0))
        .expect_record(2, Life::Committed, None)
        .expect_record(3, Life::Committed, None)
        .expect_record(4, Life::Committed, None)
        .finish();
}

#[test]
fn permission_is_checked_before_dependency_stability() {
    scenario("permission before stability")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).private())
        .step(commit(0))
        .step(begin_medium(0))
        .step(request_revocation(0))
        .step(summary(0, &[0]))
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Permission))
        .finish();
}
