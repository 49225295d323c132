//! Check 4, dependency stability; the pass (Committed, or ActionSafe in an external-action
//! transaction); and the "Decided" rules: an adjudication's effect on a rival happens only if
//! the record commits.

use super::*;

// ---- check 4: dependency stability -------------------------------------------------------------

#[test]
fn pending_revocation_of_a_parent_is_an_unstable_dependency() {
    scenario("pending parent")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(begin_medium(1))
        .step(belief(1, 1, 0).parents(&[0]))
        .step(request_revocation(0))
        .step(commit(1))
        .expect_record(1, Life::Quarantined, Some(Reason::UnstableDependency))
        .finish();
}

#[test]
fn pending_revocation_of_a_transitive_ancestor_is_an_unstable_dependency() {
    scenario("pending ancestor")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(summary(0, &[0]))
        .step(commit(0))
        .step(begin_medium(1))
        .step(request_revocation(0))
        .step(belief(1, 1, 0).parents(&[1]))
        .step(commit(1))
        .expect_record(2, Life::Quarantined, Some(Reason::UnstableDependency))
        .expect(|s| {
            // Nothing was retracted: the revocation is only pending.
            assert!(s.record(0).pending_revocation);
            assert_eq!(s.record(0).life(), Life::Committed);
            assert_eq!(s.record(1).life(), Life::Committed);
        })
        .finish();
}

// ---- pass -----------------------------------------------------------------------------------------

#[test]
fn passing_records_commit_with_increasing_sequence_numbers() {
    scenario("pass")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(summary(0, &[0]))
        .step(commit(0))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Committed, None)
        .expect(|s| {
            assert_eq!(s.record(0).seq, Some(0));
            assert_eq!(s.record(1).seq, Some(1));
            assert_eq!(s.next_seq, 2);
            assert!(s.records().iter().all(|r| r.writer.is_none()));
            assert!(s.txn(0).is_none());
        })
        .finish();
}

#[test]
fn passing_records_of_an_external_action_transaction_become_action_safe() {
    scenario("pass, external action")
        .step(begin_external(0))
        .step(belief(0, 0, 0))
        .step(summary(0, &[0]))
        .step(commit(0))
        .expect_record(0, Life::ActionSafe, None)
        .expect_record(1, Life::ActionSafe, None)
        .step(begin(0, Tier::Low, Isolation::CommittedRead))
        .step(belief(0, 1, 0))
        .step(commit(0))
        .expect_record(2, Life::Committed, None)
        .finish();
}

// ---- Decided: the rival is superseded only if the record commits ---------------------------------

#[test]
fn a_rival_is_superseded_only_if_the_record_commits() {
    // r2 outranks r0 (high vs mid authority) but then fails permission inheritance (a Shared
    // belief derived from the Private r1): r0 must stay Committed.
    scenario("supersede only on commit")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(belief(0, 1, 0).private())
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(HIGH).parents(&[1]))
        .step(commit(0))
        .expect_record(2, Life::Quarantined, Some(Reason::Permission))
        .expect_record(0, Life::Committed, None)
        .finish();
}

#[test]
fn a_correction_that_fails_dependency_stability_leaves_its_rival() {
    scenario("correction fails check 4")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(belief(0, 1, 0))
        .step(commit(0))
        .step(begin_medium(0))
        .step(request_revocation(1))
        .step(belief(0, 0, 1).source(MID_A).parents(&[1]))
        .step(commit(0))
        .expect_record(2, Life::Quarantined, Some(Reason::UnstableDependency))
        .expect_record(0, Life::Committed, None)
        .finish();
}

#[test]
fn the_pipeline_reports_the_rivals_it_won_against_without_changing_the_state() {
    // pipeline::run is a pure judgement: the Pass verdict names the rivals to supersede.
    let s = scenario("verdict")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(belief(0, 1, 0).source(LOW))
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_A)) // r2 corrects r0
        .step(belief(0, 1, 1).source(HIGH)) // r3 outranks r1
        .finish();
    let cfg = wide(Variant::Memtx);
    let ctx = CommitContext {
        now: 0,
        snapshot_seq: s.txn(0).unwrap().snapshot_seq,
        commit_start: s.next_seq,
    };
    let before = s.clone();
    assert_eq!(
        pipeline::run(&cfg, &s, 2, ctx),
        Verdict::Pass {
            outranked: RecordSet::EMPTY,
            corrected: set(&[0]),
        }
    );
    assert_eq!(
        pipeline::run(&cfg, &s, 3, ctx),
        Verdict::Pass {
            outranked: set(&[1]),
            corrected: RecordSet::EMPTY,
        }
    );
    assert!(s == before);
    assert_eq!(pipeline::rivals(&cfg, &s, 2), set(&[0]));
    assert_eq!(pipeline::rivals(&cfg, &s, 3), set(&[1]));
}

#[test]
fn rivals_are_beliefs_in_force_only() {
    // A quarantined belief is not a rival, and views never conflict.
    scenario("rivals in force")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A).low_confidence()) // r0 quarantined
        .step(belief(0, 1, 0).scope(Scope::Shared))
        .step(summary(0, &[1]))
        .step(commit(0))
        .expect_record(0, Life::Quarantined, Some(Reason::Evidence))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_B))
        .step(commit(0))
        .expect_record(3, Life::Committed, None)
        .expect(|s| {
            assert_eq!(
                pipeline::rivals(&wide(Variant::Memtx), s, 2),
                RecordSet::EMPTY
            )
        })
        .finish();
}
