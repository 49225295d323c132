//! Check 3, semantic conflict: stale late writes, higher and lower authority, equal authority
//! with a different or the same source, non-overlapping validity.

use super::*;

// ---- check 3: semantic conflict ------------------------------------------------------------------

#[test]
fn stale_late_write_is_aborted_and_cascaded() {
    // a0 opens before a1 commits slot 0 = 1; a0's write of slot 0 = 0 did not see it.
    scenario("stale late write")
        .step(begin_medium(0))
        .step(begin_medium(1))
        .step(belief(1, 0, 1))
        .step(commit(1))
        .expect_record(0, Life::Committed, None)
        .step(belief(0, 0, 0))
        .step(summary(0, &[1]))
        .step(commit(0))
        .expect_record(1, Life::Revoked, Some(Reason::StaleWrite))
        // Aborted *and cascaded*: its staged summary is quarantined for rebuild.
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        .expect_record(0, Life::Committed, None)
        .expect(|s| {
            assert!(s.audit(1).has(Repair::Retracted));
            assert!(s.audit(2).has(Repair::Quarantined));
            assert_eq!(s.audit(2).cause, Some(1));
        })
        .finish();
}

#[test]
fn stale_late_write_aborts_even_a_higher_authority_write() {
    // The stale check comes before adjudication by authority.
    scenario("stale beats authority")
        .step(begin_medium(0))
        .step(begin_medium(1))
        .step(belief(1, 0, 1).source(LOW))
        .step(commit(1))
        .step(belief(0, 0, 0).source(HIGH))
        .step(commit(0))
        .expect_record(1, Life::Revoked, Some(Reason::StaleWrite))
        .expect_record(0, Life::Committed, None)
        .finish();
}

#[test]
fn a_rival_already_in_the_snapshot_is_not_stale() {
    // Same rival, but committed before the snapshot: adjudicated by authority instead.
    scenario("rival before snapshot")
        .step(begin_medium(1))
        .step(belief(1, 0, 1).source(LOW))
        .step(commit(1))
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(HIGH))
        .step(commit(0))
        .expect_record(1, Life::Committed, None)
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByAuthority))
        .finish();
}

#[test]
fn higher_authority_write_supersedes_its_rival() {
    rival_committed("higher authority", MID_A)
        .step(belief(0, 0, 1).source(HIGH))
        .step(commit(0))
        .expect_record(1, Life::Committed, None)
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByAuthority))
        .expect(|s| assert_eq!(s.record(1).seq, Some(1)))
        .finish();
}

#[test]
fn lower_authority_write_is_aborted_as_outranked() {
    rival_committed("lower authority", HIGH)
        .step(belief(0, 0, 1).source(MID_A))
        .step(summary(0, &[1]))
        .step(commit(0))
        .expect_record(1, Life::Revoked, Some(Reason::Outranked))
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        .expect_record(0, Life::Committed, None)
        .finish();
}

#[test]
fn equal_authority_different_source_goes_to_review() {
    rival_committed("equal authority, other source", MID_A)
        .step(belief(0, 0, 1).source(MID_B))
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Review))
        .expect_record(0, Life::Committed, None)
        .finish();
}

#[test]
fn equal_authority_same_source_is_a_correction_that_supersedes() {
    rival_committed("correction", MID_A)
        .step(belief(0, 0, 1).source(MID_A))
        .step(commit(0))
        .expect_record(1, Life::Committed, None)
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByCorrection))
        .finish();
}

#[test]
fn non_overlapping_validity_coexists() {
    // r0 holds over [0, 1), r1 over [1, ∞): an equal-authority, other-source pair that would go
    // to review if the intervals overlapped.
    scenario("non-overlapping validity")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A).valid(0, 1))
        .step(commit(0))
        .step(tick())
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_B).valid_from(1))
        .step(commit(0))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Committed, None)
        .finish();
}

#[test]
fn same_value_or_other_slot_is_no_conflict() {
    rival_committed("no rival", HIGH)
        .step(belief(0, 0, 0).source(LOW))
        .step(belief(0, 1, 1).source(LOW))
        .step(commit(0))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Committed, None)
        .expect_record(2, Life::Committed, None)
        .finish();
}
