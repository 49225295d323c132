//! Enabling conditions of the operations of docs/protocol.md §5.
//!
//! For each operation, each part of its enabling condition is violated once and the operation
//! must be refused with `Refusal::Disabled` naming that part, leaving the state unchanged (the
//! scenario DSL checks both). Where it helps, the enabled case is shown next to the refused one,
//! with its effect (Revalidate and Rebuild restage in the owner's transaction; Rebuild drops the
//! inactive parents; Resolve keeps or rejects; Begin of an external-action transaction reads
//! action-safe whatever isolation is asked).

mod common;

use common::*;
use memtx_model::ops::{Op, Refusal};
use memtx_model::record::{Kind, Reason, Scope};
use memtx_model::rules::Rule;
use memtx_model::txn::{visible, Isolation, Tier};
use memtx_model::{Life, Variant};

/// A malformed operation (an id outside the bounds): a guard against user input, not a rule.
fn disabled(why: &'static str) -> Refusal {
    Refusal::Disabled(why)
}

/// The refusal of the enabling-condition part `rule` (its statement is the reason given).
fn by(rule: Rule) -> Refusal {
    Refusal::Disabled(rule.statement())
}

/// The wide configuration with only `records` record slots.
fn with_records(records: u8) -> Scenario {
    let mut cfg = wide(Variant::Memtx);
    cfg.bounds.records = records;
    Scenario::new(&format!("{records} records"), cfg)
}

#[test]
fn tick_is_disabled_at_the_bound() {
    scenario("tick")
        .step(tick())
        .step(tick())
        .step(tick())
        .expect(|s| assert_eq!(s.clock, 3))
        .refused(tick(), by(Rule::EnTickBound))
        .finish();
}

#[test]
fn observe_needs_a_free_record_id_and_known_parameters() {
    with_records(1)
        .refused(
            observe(MID_A, 0, 0, Scope::Shared, 4),
            disabled("no such agent"),
        )
        .refused(
            observe(4, 0, 0, Scope::Shared, 0),
            disabled("no such source"),
        )
        .refused(
            observe(MID_A, 2, 0, Scope::Shared, 0),
            disabled("no such slot"),
        )
        .refused(
            observe(MID_A, 0, 2, Scope::Shared, 0),
            disabled("no such value"),
        )
        .step(observe(MID_A, 0, 0, Scope::Shared, 0))
        .expect_record(0, Life::Raw, None)
        .expect(|s| assert_eq!(s.record(0).writer, None, "outside any transaction"))
        .refused(
            observe(MID_A, 0, 1, Scope::Shared, 0),
            by(Rule::EnObserveFree),
        )
        .finish();
}

#[test]
fn begin_is_disabled_for_an_agent_with_an_open_transaction() {
    scenario("begin twice")
        .refused(begin_medium(4), disabled("no such agent"))
        .step(begin_medium(0))
        .refused(begin_external(0), by(Rule::EnBeginOpen))
        .step(begin_medium(1))
        .finish();
}

#[test]
fn begin_of_an_external_action_transaction_reads_action_safe() {
    scenario("external isolation")
        .step(begin(0, Tier::ExternalAction, Isolation::RawRead))
        .expect(|s| assert_eq!(s.txn(0).unwrap().isolation, Isolation::ActionSafeRead))
        .finish();
}

#[test]
fn stage_needs_an_open_transaction_and_a_free_record_id() {
    with_records(1)
        .refused(belief(0, 0, 0), by(Rule::EnStageNoTxn))
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .refused(belief(0, 1, 0), by(Rule::EnStageFree))
        .finish();
}

#[test]
fn stage_refuses_malformed_records() {
    scenario("malformed stage")
        .step(begin_medium(0))
        .refused(
            belief(0, 0, 0).kind(Kind::IrreversibleAction),
            disabled("tool actions are created by CallTool, not staged"),
        )
        .refused(summary(0, &[]), by(Rule::EnStageViewParent))
        .refused(
            belief(0, 0, 0).valid(1, 1),
            disabled("empty validity interval"),
        )
        .refused(belief(0, 2, 0), disabled("no such slot"))
        .refused(belief(0, 0, 2), disabled("no such value"))
        .refused(belief(0, 0, 0).source(4), disabled("no such source"))
        .refused(belief(0, 0, 0).parents(&[5]), disabled("no such record"))
        .finish();
}

#[test]
fn stage_parents_must_be_visible() {
    scenario("parents not visible")
        .step(begin_medium(0))
        .step(belief(0, 0, 0)) // r0: a0's staging
        .step(begin_medium(1))
        // Another transaction's staging is not in a1's committed-read snapshot.
        .refused(
            belief(1, 1, 0).parents(&[0]),
            by(Rule::EnStageParentVisible),
        )
        .step(commit(0))
        // Committed after a1's snapshot was taken: still not visible to a1.
        .refused(
            belief(1, 1, 0).parents(&[0]),
            by(Rule::EnStageParentVisible),
        )
        .step(abort(1))
        .step(begin_medium(1))
        .step(belief(1, 1, 0).parents(&[0]))
        // The transaction's own staging is visible to it.
        .step(summary(1, &[1]))
        .finish();
}

#[test]
fn a_private_record_of_another_owner_is_not_visible() {
    scenario("private of another owner")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).private())
        .step(commit(0))
        .step(begin_medium(1))
        .step(begin_medium(0))
        .expect(|s| {
            let cfg = wide(Variant::Memtx);
            assert!(s.txn(1).unwrap().snapshot.contains(0), "in the snapshot");
            assert!(!visible(&cfg, s, 1, 0), "but not permitted to a1");
            assert!(visible(&cfg, s, 0, 0), "its owner sees it");
        })
        .refused(summary(1, &[0]).private(), by(Rule::EnStageParentVisible))
        .step(summary(0, &[0]).private())
        .finish();
}

#[test]
fn adopt_needs_a_visible_raw_record() {
    scenario("adopt")
        .step(observe(MID_A, 0, 0, Scope::Private, 1)) // r0: private to a1
        .step(observe(MID_A, 1, 0, Scope::Shared, 1)) // r1
        .refused(adopt(0, 1), by(Rule::EnAdoptNoTxn))
        .step(begin_medium(0))
        // A committed-read snapshot holds no Raw record.
        .refused(adopt(0, 1), by(Rule::EnAdoptNotVisible))
        .step(abort(0))
        .step(begin(0, Tier::Medium, Isolation::RawRead))
        .refused(adopt(0, 0), by(Rule::EnAdoptNotVisible))
        .step(adopt(0, 1))
        .expect(|s| assert_eq!(s.record(1).writer, Some(0)))
        .refused(adopt(0, 1), by(Rule::EnAdoptNotRaw))
        .step(commit(0))
        .expect_record(1, Life::Committed, None)
        .finish();
}

#[test]
fn commit_and_abort_need_an_open_transaction() {
    scenario("commit without transaction")
        .refused(commit(0), by(Rule::EnCommitNoTxn))
        .refused(abort(0), by(Rule::EnAbortNoTxn))
        .refused(commit(7), disabled("no such agent"))
        .step(begin_medium(0))
        .step(commit(0))
        .refused(commit(0), by(Rule::EnCommitNoTxn))
        .finish();
}

#[test]
fn call_tool_needs_a_transaction_a_free_id_and_visible_support_in_force() {
    with_records(3)
        .refused(reversible(0, &[]), by(Rule::EnCallNoTxn))
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .refused(reversible(0, &[0]), by(Rule::EnCallReversibleNotInForce))
        .step(commit(0))
        .step(begin_medium(1))
        .step(begin_medium(0))
        .step(belief(0, 1, 0).private())
        .step(commit(0))
        .refused(reversible(1, &[1]), by(Rule::EnCallSupportVisible))
        .step(reversible(1, &[0]))
        .refused(reversible(1, &[0]), by(Rule::EnCallFree))
        .finish();
}

#[test]
fn request_revocation_needs_a_record_in_force_not_already_pending() {
    scenario("request revocation")
        .refused(request_revocation(0), disabled("no such record"))
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .refused(request_revocation(0), by(Rule::EnRequestNotCommitted))
        .step(commit(0))
        .step(request_revocation(0))
        .expect(|s| assert!(s.record(0).pending_revocation))
        .refused(request_revocation(0), by(Rule::EnRequestPending))
        .step(begin_medium(0))
        .step(reversible(0, &[]))
        .refused(request_revocation(1), by(Rule::EnRequestAction))
        .finish();
}

#[test]
fn apply_revocation_needs_a_pending_revocation() {
    scenario("apply revocation")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .refused(apply_revocation(0), by(Rule::EnApplyNotPending))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(0, Life::Revoked, Some(Reason::Revocation))
        .refused(apply_revocation(0), by(Rule::EnApplyNotPending))
        .finish();
}

#[test]
fn revalidate_needs_a_quarantined_belief_with_active_ancestors_and_its_owners_transaction() {
    scenario("revalidate")
        .step(begin_medium(0))
        .step(belief(0, 0, 0)) // r0
        .step(belief(0, 1, 0).parents(&[0]).low_confidence()) // r1: fails evidence
        .step(summary(0, &[0])) // r2
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Evidence))
        .refused(revalidate(0), by(Rule::EnRevalidateNotQuarantined))
        .refused(revalidate(2), by(Rule::EnRevalidateNotBelief))
        .refused(revalidate(1), by(Rule::EnRevalidateNoTxn))
        .step(begin_medium(0))
        .step(revalidate(1))
        .expect_record(1, Life::Tentative, None)
        .expect(|s| assert_eq!(s.record(1).writer, Some(0)))
        // Back through the whole pipeline: it fails the evidence check again.
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Evidence))
        // Once its parent is superseded, it may not be revalidated.
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(HIGH))
        .step(commit(0))
        .expect_life(0, Life::Superseded)
        .step(begin_medium(0))
        .refused(revalidate(1), by(Rule::EnRevalidateAncestor))
        .finish();
}

#[test]
fn rebuild_needs_a_quarantined_view_with_an_active_parent_and_its_owners_transaction() {
    scenario("rebuild")
        .step(begin_medium(0))
        .step(belief(0, 0, 0)) // r0
        .step(belief(0, 1, 0)) // r1
        .step(summary(0, &[0, 1])) // r2
        .step(summary(0, &[0])) // r3
        .step(commit(0))
        .refused(rebuild(2), by(Rule::EnRebuildNotQuarantined))
        .refused(rebuild(0), by(Rule::EnRebuildNotView))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        .expect_record(3, Life::Quarantined, Some(Reason::Rebuild))
        .refused(rebuild(2), by(Rule::EnRebuildNoTxn))
        .step(begin_medium(0))
        .refused(rebuild(3), by(Rule::EnRebuildNoParent))
        .step(rebuild(2))
        .expect_record(2, Life::Tentative, None)
        .expect(|s| assert_eq!(s.record(2).parents, set(&[1]), "the revoked r0 is dropped"))
        .step(commit(0))
        .expect_record(2, Life::Committed, None)
        .expect(|s| {
            let model = memtx_model::MemTx::new(wide(Variant::Memtx));
            assert!(
                memtx_model::properties::example_view_rebuilt(&model, s),
                "E9"
            );
        })
        .finish();
}

/// r0 (slot 0 = 0, MID_A) committed; r1 (slot 0 = 1, MID_B) quarantined for review.
fn under_review() -> Scenario {
    scenario("resolve")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_B))
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Review))
}

#[test]
fn resolve_keep_commits_the_record_and_supersedes_its_rival() {
    under_review()
        .refused(resolve(0, true), by(Rule::EnResolveNotReview))
        .step(resolve(1, true))
        .expect_record(1, Life::Committed, None)
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByReview))
        .expect(|s| assert_eq!(s.record(1).seq, Some(1)))
        .refused(resolve(1, true), by(Rule::EnResolveNotReview))
        .finish();
}

#[test]
fn resolve_reject_revokes_the_record_and_leaves_its_rival() {
    under_review()
        .step(resolve(1, false))
        .expect_record(1, Life::Revoked, Some(Reason::ReviewRejected))
        .expect_record(0, Life::Committed, None)
        .finish();
}

#[test]
fn resolve_is_only_for_review_quarantines() {
    scenario("resolve non-review")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).low_confidence())
        .step(commit(0))
        .expect_record(0, Life::Quarantined, Some(Reason::Evidence))
        .refused(resolve(0, true), by(Rule::EnResolveNotReview))
        .refused(resolve(0, false), by(Rule::EnResolveNotReview))
        .finish();
}

#[test]
fn resolve_keep_needs_a_valid_record_with_stable_ancestors() {
    // The record is no longer valid.
    scenario("resolve expired")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_B).valid(0, 1))
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Review))
        .step(tick())
        .refused(resolve(1, true), by(Rule::EnKeepExpired))
        .step(resolve(1, false))
        .finish();
    // An ancestor is pending revocation.
    scenario("resolve unstable")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(belief(0, 1, 0))
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_B).parents(&[1]))
        .step(commit(0))
        .expect_record(2, Life::Quarantined, Some(Reason::Review))
        .step(request_revocation(1))
        .refused(resolve(2, true), by(Rule::EnKeepUnstable))
        .finish();
}

#[test]
fn resolve_keep_may_not_launder_permissions() {
    // Regression (I3): r1 (Shared) is derived from a0's Private r0 and contradicts it with equal
    // authority from another source, so the conflict check quarantines it for review before the
    // permission check runs. Keeping it must not commit a Shared record of Private ancestry.
    scenario("resolve laundering")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A).private())
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_B).parents(&[0]))
        .step(commit(0))
        .expect_record(1, Life::Quarantined, Some(Reason::Review))
        .refused(resolve(1, true), by(Rule::EnKeepPermission))
        .step(resolve(1, false))
        .expect_record(0, Life::Committed, None)
        .finish();
}

#[test]
fn operations_on_unknown_records_are_refused() {
    let ops: Vec<Op> = vec![
        request_revocation(3),
        apply_revocation(3),
        revalidate(3),
        rebuild(3),
        resolve(3, true),
        resolve(3, false),
    ];
    let mut s = scenario("unknown records");
    for op in ops {
        s = s.refused(op, disabled("no such record"));
    }
    s.finish();
}

#[test]
fn each_operation_creates_exactly_the_record_it_names() {
    // Every field a Stage, an Observe and a CallTool name lands in the new record (mutation
    // testing found nothing else that would notice a dropped field).
    use memtx_model::record::{Effect, Validity};
    scenario("fields")
        .step(begin_medium(1))
        .step(
            belief(1, 1, 1)
                .source(HIGH)
                .low_confidence()
                .private()
                .valid(0, 2),
        )
        .expect(|s| {
            let r = s.record(0);
            assert_eq!(
                (r.kind, r.slot, r.value, r.source),
                (Kind::Belief, 1, 1, HIGH)
            );
            assert_eq!(r.confidence, memtx_model::evidence::Confidence::Low);
            assert_eq!((r.owner, r.scope, r.writer), (1, Scope::Private, Some(1)));
            assert_eq!(r.validity, Validity { from: 0, until: 2 });
            assert_eq!(r.life(), Life::Tentative);
        })
        .step(summary(1, &[0]).private())
        .expect(|s| assert_eq!(s.record(1).parents.iter().collect::<Vec<_>>(), [0]))
        .step(observe(HIGH, 1, 1, Scope::Shared, 2))
        .expect(|s| {
            let r = s.record(2);
            assert_eq!((r.slot, r.value, r.source, r.owner), (1, 1, HIGH, 2));
            assert_eq!(
                (r.scope, r.life(), r.writer),
                (Scope::Shared, Life::Raw, None)
            );
        })
        .step(commit(1))
        .step(begin_medium(1))
        .step(reversible(1, &[0]))
        .expect(|s| {
            let r = s.record(3);
            assert_eq!((r.kind, r.owner), (Kind::ReversibleAction, 1));
            assert_eq!(r.parents.iter().collect::<Vec<_>>(), [0]);
            assert_eq!(r.effect, Some(Effect::Executed));
        })
        .finish();
}
