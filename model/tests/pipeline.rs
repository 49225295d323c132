//! The commit pipeline of docs/protocol.md §6: one test per outcome.
//!
//! Check 1 evidence, check 2 validity, check 3 semantic conflict (stale late write, higher and
//! lower authority, equal authority with a different or the same source, non-overlapping
//! validity), lineage (revoked parent, inactive parent), permission inheritance, check 4
//! dependency stability, the pass (Committed, or ActionSafe in an external-action transaction),
//! and the "Decided" rules: the first failing check decides; an adjudication's effect on a rival
//! happens only if the record commits; staged records are decided in id order.
//!
//! Sources (see `common`): `MID_A` and `MID_B` are two different sources of mid authority (0.8),
//! `HIGH` is 0.95 and `LOW` 0.5. Every accepted step is checked against every `always` property.

mod common;

use common::*;
use memtx_model::pipeline::{self, CommitContext, Verdict};
use memtx_model::record::{Reason, RecordSet, Scope};
use memtx_model::state::Repair;
use memtx_model::txn::{Isolation, Tier};
use memtx_model::{Life, Variant};

/// r0: a committed Shared belief `slot 0 = value 0` from `source`, then a new transaction of a0.
fn rival_committed(name: &str, source: u8) -> Scenario {
    scenario(name)
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(source))
        .step(commit(0))
        .expect_record(0, Life::Committed, None)
        .step(begin_medium(0))
}

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

// ---- revision 3, scope non-interference (§6 (a)-(c)), each harm replayed both ways -------------

/// `Resolve(keep)`'s refusal while a wider rival stands (revision 3, scope non-interference (b)).
fn keep_refused_for_a_wider_rival() -> memtx_model::ops::Refusal {
    memtx_model::ops::Refusal::Disabled(memtx_model::rules::Rule::EnKeepWiderRival.statement())
}

/// Agent 0's Shared belief (slot 0 = v0, mid source B) is committed: the shared truth.
fn shared_truth(variant: Variant) -> Scenario {
    scenario("a shared truth")
        .variant(variant)
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_B))
        .step(commit(0))
}

#[test]
fn a_private_record_never_displaces_a_shared_truth() {
    // (b): agent 1's Private high-authority belief would supersede the Shared one, and agent 0
    // would see no value at all. It goes to scope review instead, and the reviewer may not
    // keep it while the wider rival stands.
    let path = |variant| {
        shared_truth(variant)
            .step(begin_medium(1))
            .step(belief(1, 0, 1).source(HIGH).private())
    };
    path(Variant::Memtx)
        .step(commit(1))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Quarantined, Some(Reason::ScopeReview))
        .refused(resolve(1, true), keep_refused_for_a_wider_rival())
        .step(resolve(1, false))
        .expect_life(1, Life::Revoked)
        .finish();
    // A same-source correction is a displacement too.
    shared_truth(Variant::Memtx)
        .step(begin_medium(1))
        .step(belief(1, 0, 1).source(MID_B).private())
        .step(commit(1))
        .expect_record(1, Life::Quarantined, Some(Reason::ScopeReview))
        .expect_record(0, Life::Committed, None)
        .finish();
    let s = path(Variant::Rev2Scopes)
        .without_invariants()
        .step(commit(1));
    assert_eq!(s.state().record(0).life(), Life::Superseded);
    assert_eq!(s.violations(), vec!["I17"]);
}

#[test]
fn a_hidden_rival_neither_aborts_outranks_nor_reviews_and_is_sent_to_review() {
    // (a) and (c): agent 1 holds a Private belief; agent 0, who may not see it, writes a Shared
    // one. Whether the hidden record has higher authority (revision 2 aborts the write as
    // outranked) or equal authority from another source (revision 2 sends it to review), the
    // outcome would reveal it. Instead the Shared record commits and the narrower hidden one
    // goes to its owner's review, so that agent 1 too sees one truth; its owner may not keep
    // it while the wider record stands.
    for (source, revealing) in [(HIGH, Reason::Outranked), (MID_A, Reason::Review)] {
        let path = |variant| {
            scenario("hidden rival")
                .variant(variant)
                .step(begin_medium(1))
                .step(belief(1, 0, 1).source(source).private())
                .step(commit(1))
                .step(begin_medium(0))
                .step(belief(0, 0, 0).source(MID_B))
        };
        path(Variant::Memtx)
            .step(commit(0))
            .expect_record(0, Life::Quarantined, Some(Reason::ScopeReview))
            .expect_record(1, Life::Committed, None)
            .refused(resolve(0, true), keep_refused_for_a_wider_rival())
            .finish();
        let s = path(Variant::Rev2Scopes)
            .without_invariants()
            .step(commit(0));
        assert_eq!(s.state().record(1).reason, Some(revealing));
        assert_eq!(s.violations(), vec!["I17"]);
    }
}

#[test]
fn two_owners_private_records_both_stand() {
    // Two Private records of different owners are not narrower than each other: each stands
    // in its owner's view, and one truth holds in every view (I6, asserted on every step).
    scenario("two private truths")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A).private())
        .step(commit(0))
        .step(begin_medium(1))
        .step(belief(1, 0, 1).source(HIGH).private())
        .step(commit(1))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Committed, None)
        .finish();
}

#[test]
fn a_wider_record_displaces_a_narrower_one_it_may_see() {
    // Knowledge flows from wider to narrower: a Public high-authority record supersedes its
    // writer's own Shared one, and a Shared record supersedes its writer's own Private one.
    shared_truth(Variant::Memtx)
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(HIGH).public())
        .step(commit(0))
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByAuthority))
        .expect_record(1, Life::Committed, None)
        .finish();
    // Its Private record is in its context: it writes Shared in a new session (the price of
    // provenance follows content, §11).
    scenario("own private corrected by a shared record")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A).private())
        .step(commit(0))
        .step(end_session(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_A))
        .step(commit(0))
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByCorrection))
        .finish();
}

#[test]
fn the_writer_of_an_adopted_record_is_the_adopting_agent() {
    // Found by the random walks: a1 adopts its own Private observation r0 and a Shared one r1
    // owned by a0, and commits both. r1's writer is a1, who may see r0: r0 is r1's rival and
    // is superseded by authority, not sent to scope review as if a0 had written r1.
    scenario("adopted records judged by their writer")
        .step(observe(MID_A, 0, 1, Scope::Private, 1))
        .step(observe(HIGH, 0, 0, Scope::Shared, 0))
        .step(begin(1, Tier::Medium, Isolation::RawRead))
        .step(adopt(1, 0))
        .step(adopt(1, 1))
        .step(commit(1))
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByAuthority))
        .expect_record(1, Life::Committed, None)
        .finish();
}

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
