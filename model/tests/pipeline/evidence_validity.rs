//! Checks 1 and 2: evidence, then validity.

use super::*;

// ---- check 1: evidence --------------------------------------------------------------------------

#[test]
fn evidence_low_confidence_from_a_mid_source_is_quarantined() {
    // 0.4 < 0.6 and 0.8 < 0.9: neither threshold is met.
    scenario("evidence")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A).low_confidence())
        .step(commit(0))
        .expect_record(0, Life::Quarantined, Some(Reason::Evidence))
        .expect(|s| {
            assert_eq!(s.record(0).seq, None, "a quarantined record takes no seq");
            assert_eq!(s.next_seq, 0);
            assert!(s.txn(0).is_none(), "commit closes the transaction");
            assert_eq!(s.record(0).writer, None, "no longer staged");
        })
        .finish();
}

#[test]
fn evidence_either_threshold_suffices() {
    // High authority alone (0.95 ≥ 0.9) passes with low confidence; high confidence (0.8 ≥ 0.6)
    // passes from a low-authority source.
    scenario("evidence thresholds")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(HIGH).low_confidence())
        .step(belief(0, 1, 0).source(LOW))
        .step(commit(0))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Committed, None)
        .finish();
}

#[test]
fn evidence_is_checked_before_validity() {
    // Both checks 1 and 2 fail: the first failing check decides the reason.
    scenario("evidence first")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).low_confidence().valid_from(1))
        .step(commit(0))
        .expect_record(0, Life::Quarantined, Some(Reason::Evidence))
        .finish();
}

// ---- check 2: validity --------------------------------------------------------------------------

#[test]
fn validity_not_yet_valid_is_quarantined_as_expired() {
    scenario("not yet valid")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).valid_from(1))
        .step(commit(0))
        .expect_record(0, Life::Quarantined, Some(Reason::Expired))
        .finish();
}

#[test]
fn validity_expired_before_commit_is_quarantined() {
    // Staged at tick 0 for [0, 1); the commit runs at tick 1: 1 ∉ [0, 1).
    scenario("expired")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).valid(0, 1))
        .step(tick())
        .step(commit(0))
        .expect_record(0, Life::Quarantined, Some(Reason::Expired))
        .finish();
}

#[test]
fn validity_is_checked_before_the_conflict_check() {
    // A stale late write that is also expired is quarantined (check 2), not aborted (check 3).
    scenario("validity before conflict")
        .step(begin_medium(0))
        .step(begin_medium(1))
        .step(belief(1, 0, 1))
        .step(commit(1))
        .step(belief(0, 0, 0).valid_from(2))
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Expired))
        .expect_record(0, Life::Committed, None)
        .finish();
}
