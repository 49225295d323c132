//! Typed cascading repair and the rollback log (docs/protocol.md §8).
//!
//! Each repair type: a descendant belief is Revoked; a derived view is Quarantined for rebuild and
//! the walk continues below it; a reversible action is compensated; an irreversible one leaks and
//! the leak is recorded. The walk reaches staged records of other open transactions; an abort
//! cascades like a revocation. The variant `missed-cascade` stops at the view (I2 tells), and
//! `no-cascade` repairs nothing (I2 tells). Every repair step is checked in the rollback log
//! (record, repair kind, cause).

mod common;

use common::*;
use memtx_model::cascade::repair_for;
use memtx_model::record::{Effect, Kind, Reason};
use memtx_model::state::Repair;
use memtx_model::txn::{Isolation, Tier};
use memtx_model::{Life, State, Variant};

fn logged(s: &State, id: u8) -> Vec<Repair> {
    s.audit(id).repairs().collect()
}

#[test]
fn repair_by_kind_is_the_table_of_section_8() {
    assert_eq!(repair_for(Kind::Belief), Repair::Revoked);
    assert_eq!(repair_for(Kind::Summary), Repair::Quarantined);
    assert_eq!(repair_for(Kind::Profile), Repair::Quarantined);
    assert_eq!(repair_for(Kind::ReversibleAction), Repair::Compensated);
    assert_eq!(repair_for(Kind::IrreversibleAction), Repair::Leaked);
}

#[test]
fn a_descendant_belief_is_revoked() {
    scenario("belief revoked")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(belief(0, 1, 0).parents(&[0]))
        .step(commit(0))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(0, Life::Revoked, Some(Reason::Revocation))
        .expect_record(1, Life::Revoked, Some(Reason::Cascade))
        .expect(|s| {
            assert_eq!(logged(s, 0), vec![Repair::Retracted]);
            assert_eq!(s.audit(0).cause, Some(0), "the root is its own cause");
            assert_eq!(logged(s, 1), vec![Repair::Revoked]);
            assert_eq!(s.audit(1).cause, Some(0));
        })
        .finish();
}

#[test]
fn a_view_is_quarantined_and_the_walk_continues_below_it() {
    // r0 → r1 (summary) → r2 (belief) → r3 (profile)
    scenario("view quarantined, walk continues")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(summary(0, &[0]))
        .step(belief(0, 1, 0).parents(&[1]))
        .step(profile(0, &[2]))
        .step(commit(0))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Rebuild))
        .expect_record(2, Life::Revoked, Some(Reason::Cascade))
        .expect_record(3, Life::Quarantined, Some(Reason::Rebuild))
        .expect(|s| {
            assert_eq!(logged(s, 1), vec![Repair::Quarantined]);
            assert_eq!(logged(s, 2), vec![Repair::Revoked]);
            assert_eq!(logged(s, 3), vec![Repair::Quarantined]);
            assert!((1..=3).all(|id| s.audit(id).cause == Some(0)));
            let model = memtx_model::MemTx::new(wide(Variant::Memtx));
            assert!(
                memtx_model::properties::example_deep_cascade(&model, s),
                "E2: a repair two edges away from its cause"
            );
        })
        .finish();
}

#[test]
fn a_reversible_action_is_compensated() {
    scenario("reversible compensated")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(begin_medium(0))
        .step(reversible(0, &[0]))
        .expect(|s| assert_eq!(s.record(1).effect, Some(Effect::Executed)))
        .step(commit(0))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(1, Life::Revoked, Some(Reason::Cascade))
        .expect(|s| {
            assert_eq!(s.record(1).effect, Some(Effect::Compensated));
            assert_eq!(logged(s, 1), vec![Repair::Compensated]);
            assert_eq!(s.audit(1).cause, Some(0));
        })
        .finish();
}

#[test]
fn an_irreversible_action_leaks_and_the_leak_is_recorded() {
    scenario("irreversible leaked")
        .step(begin_external(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(begin_external(1))
        .step(irreversible(1, &[0]))
        .step(commit(1))
        // The correction arrives after the call executed: a realised harm, recorded (I9 holds).
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(1, Life::Revoked, Some(Reason::Cascade))
        .expect(|s| {
            assert_eq!(s.record(1).effect, Some(Effect::Leaked));
            assert_eq!(logged(s, 1), vec![Repair::Leaked]);
            assert_eq!(s.audit(1).cause, Some(0));
        })
        .finish();
}

#[test]
fn staged_records_of_other_open_transactions_are_reached() {
    // a1 stages r1 (belief) and r2 (summary) from r0 in its open transaction; r0 is revoked.
    scenario("staged descendants")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(begin_medium(1))
        .step(belief(1, 1, 0).parents(&[0]))
        .step(summary(1, &[0]))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(1, Life::Revoked, Some(Reason::Cascade))
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        .expect(|s| {
            assert_eq!(s.record(1).writer, Some(1), "still staged in a1");
            assert_eq!(logged(s, 1), vec![Repair::Revoked]);
            assert_eq!(logged(s, 2), vec![Repair::Quarantined]);
        })
        // The commit leaves both as they are and closes the transaction.
        .step(commit(1))
        .expect_record(1, Life::Revoked, Some(Reason::Cascade))
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        .expect(|s| {
            assert_eq!(s.next_seq, 1);
            assert!(s.records().iter().all(|r| r.writer.is_none()));
        })
        .finish();
}

#[test]
fn an_abort_retracts_every_staged_record_and_cascades_into_other_transactions() {
    // a1 reads a0's staged r0 at tentative-read and stages r1 from it; a0 aborts.
    scenario("abort cascades")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(belief(0, 1, 0).parents(&[0]))
        .step(begin(1, Tier::Medium, Isolation::TentativeRead))
        .step(summary(1, &[0]))
        .step(abort(0))
        .expect_record(0, Life::Revoked, Some(Reason::Aborted))
        .expect_record(1, Life::Revoked, Some(Reason::Cascade))
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        .expect(|s| {
            assert!(s.txn(0).is_none());
            assert_eq!(logged(s, 0), vec![Repair::Retracted]);
            assert_eq!(s.audit(1).cause, Some(0));
            assert_eq!(s.audit(2).cause, Some(0));
            assert_eq!(s.record(2).writer, Some(1));
        })
        .finish();
}

#[test]
fn a_view_repaired_twice_logs_the_latest_cause() {
    // r2 is a view of r0 and r1: each retraction quarantines it again (Quarantined → Quarantined
    // is a legal move: the cascade on a derived view).
    scenario("view repaired twice")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(belief(0, 1, 0))
        .step(summary(0, &[0, 1]))
        .step(commit(0))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect(|s| assert_eq!(s.audit(2).cause, Some(0)))
        .step(request_revocation(1))
        .step(apply_revocation(1))
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        .expect(|s| {
            assert_eq!(s.audit(2).cause, Some(1));
            assert_eq!(logged(s, 2), vec![Repair::Quarantined]);
        })
        .finish();
}

#[test]
fn records_outside_the_descendants_are_untouched() {
    scenario("unrelated records")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(belief(0, 1, 0))
        .step(summary(0, &[1]))
        .step(commit(0))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(1, Life::Committed, None)
        .expect_record(2, Life::Committed, None)
        .expect(|s| {
            assert_eq!(s.audit(1).cause, None);
            assert_eq!(s.audit(2).cause, None);
            assert!(logged(s, 2).is_empty());
        })
        .finish();
}

#[test]
fn a_rejected_review_and_a_pipeline_abort_are_logged_as_retractions() {
    scenario("retractions logged")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_B))
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Review))
        .step(resolve(1, false))
        .expect_record(1, Life::Revoked, Some(Reason::ReviewRejected))
        .expect(|s| assert_eq!(logged(s, 1), vec![Repair::Retracted]))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(LOW))
        .step(commit(0))
        .expect_record(2, Life::Revoked, Some(Reason::Outranked))
        .expect(|s| assert_eq!(logged(s, 2), vec![Repair::Retracted]))
        .finish();
}

// ---- variants -----------------------------------------------------------------------------------

/// r0 → r1 (summary) → r2 (belief) and r0 → r3 (reversible action), all committed.
fn chain(variant: Variant) -> Scenario {
    scenario(&format!("{} chain", variant.name()))
        .variant(variant)
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(summary(0, &[0]))
        .step(belief(0, 1, 0).parents(&[1]))
        .step(commit(0))
        .step(begin_medium(0))
        .step(reversible(0, &[0]))
        .step(commit(0))
        .step(request_revocation(0))
        .step(apply_revocation(0))
}

#[test]
fn memtx_cascade_repairs_the_whole_chain() {
    chain(Variant::Memtx)
        .expect_record(1, Life::Quarantined, Some(Reason::Rebuild))
        .expect_record(2, Life::Revoked, Some(Reason::Cascade))
        .expect(|s| assert_eq!(s.record(3).effect, Some(Effect::Compensated)))
        .finish();
}

#[test]
fn missed_cascade_stops_at_the_view_and_i2_tells() {
    let s = chain(Variant::MissedCascade)
        .expect_record(1, Life::Quarantined, Some(Reason::Rebuild))
        // The belief below the view is missed: still in force with a revoked ancestor.
        .expect_record(2, Life::Committed, None)
        // Direct children of the root are still repaired.
        .expect(|s| assert_eq!(s.record(3).effect, Some(Effect::Compensated)));
    assert_eq!(s.violations(), vec!["I2"]);
}

#[test]
fn no_cascade_repairs_nothing_and_i2_tells() {
    let s = chain(Variant::NoCascade)
        .expect_record(0, Life::Revoked, Some(Reason::Revocation))
        .expect_record(1, Life::Committed, None)
        .expect_record(2, Life::Committed, None)
        .expect(|s| {
            assert_eq!(s.record(3).effect, Some(Effect::Executed));
            assert_eq!(
                logged(s, 0),
                vec![Repair::Retracted],
                "the root is still logged"
            );
            assert!((1..=3).all(|id| s.audit(id).cause.is_none()));
        });
    assert_eq!(s.violations(), vec!["I2"]);
}
