//! The twelve scripted scenarios of docs/protocol.md §12: six corruption families, each with a trap
//! (must be stopped) and a control (must go through).
//!
//! | family | trap | control |
//! |---|---|---|
//! | tool-result pollution | a polluted tool output summarised into a profile; the source is corrected; the profile must be quarantined | a clean tool output summarised and used |
//! | stale late write | an update arriving after a correction must not override it | a write with no newer rival commits |
//! | dirty read | a refund executed while the eligibility belief is still tentative must be blocked | the refund after the belief commits goes through |
//! | semantic conflict | two sources assert contradictory values; the higher authority wins, equal authority goes to review | non-overlapping validity coexists |
//! | permission laundering | the loan example: an investor-facing shared risk score derived from two private credit records is blocked | a shared record derived from shared parents commits |
//! | cascading rollback | a retracted belief's summary, profile and refund are repaired by type | retracting an unrelated belief leaves them alone |
//!
//! Each scenario is a step list: an operation with its expected outcome (accepted, refused,
//! blocked by the gate) and assertions on the state after it. Every `always` property of
//! `properties::PROPERTIES` is asserted after every step and on the final state (`finish`).

mod common;

use common::*;
use memtx_model::gate::GateBlock;
use memtx_model::properties::{
    example_compensated, example_deep_cascade, example_external_call_on_support,
    example_irreversible_call, example_leak_recorded, example_review_keep_supersedes,
    example_stale_write_aborted,
};
use memtx_model::record::{Effect, Kind, Reason, Scope};
use memtx_model::state::Repair;
use memtx_model::txn::{visible, Isolation, Tier};
use memtx_model::{Life, MemTx, State, Variant};

// The small world the scenarios are told in: slots and values.
/// Customer tier: `REGULAR` or `VIP`.
const CUSTOMER_TIER: u8 = 0;
const REGULAR: u8 = 0;
const VIP: u8 = 1;
/// Shipping address: `OLD_ADDRESS` or `NEW_ADDRESS`.
const ADDRESS: u8 = 0;
const OLD_ADDRESS: u8 = 0;
const NEW_ADDRESS: u8 = 1;
/// Refund eligibility: `ELIGIBLE` or not.
const REFUND_ELIGIBILITY: u8 = 0;
const ELIGIBLE: u8 = 1;
/// Unit price and stock level (two independent slots).
const PRICE: u8 = 0;
const STOCK: u8 = 1;
/// Credit history and income of a loan applicant (two private credit records).
const CREDIT_HISTORY: u8 = 0;
const INCOME: u8 = 1;
/// An unrelated fact (the customer's preferred language).
const LANGUAGE: u8 = 1;

fn model() -> MemTx {
    MemTx::new(wide(Variant::Memtx))
}

fn holds(example: fn(&MemTx, &State) -> bool, s: &State) -> bool {
    example(&model(), s)
}

// ---- tool-result pollution ------------------------------------------------------------------------

#[test]
fn tool_result_pollution_trap() {
    scenario("tool-result pollution — trap")
        // A tool returns a polluted result ("the customer is VIP"). It enters as a Raw
        // observation, outside any transaction: the tool-result pollution entry point.
        .step(observe(MID_A, CUSTOMER_TIER, VIP, Scope::Shared, 0))
        .expect_record(0, Life::Raw, None)
        // The profile agent reads raw tool output, adopts it and summarises it into a profile.
        .step(begin(0, Tier::Medium, Isolation::RawRead))
        .step(adopt(0, 0))
        .step(profile(0, &[0]))
        .step(commit(0))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Committed, None)
        // The source is corrected: a revocation of the polluted result is requested.
        .step(request_revocation(0))
        // While the correction is pending, no one may act on the profile.
        .step(begin_medium(1))
        .blocked(
            irreversible(1, &[1]),
            GateBlock::UnstableSupport {
                record: 1,
                ancestor: 0,
            },
        )
        // The correction is applied: the profile must be quarantined.
        .step(apply_revocation(0))
        .expect_record(0, Life::Revoked, Some(Reason::Revocation))
        .expect_record(1, Life::Quarantined, Some(Reason::Rebuild))
        .expect(|s| {
            assert!(s.audit(1).has(Repair::Quarantined));
            assert_eq!(s.audit(1).cause, Some(0));
            assert!(
                s.records().iter().all(|r| !r.kind.is_action()),
                "nothing was done on the polluted profile"
            );
        })
        // a1's snapshot still names the profile, but it is no longer in force.
        .blocked(
            irreversible(1, &[1]),
            memtx_model::gate::GateBlock::SupportNotInForce {
                record: 1,
                life: Life::Quarantined,
                pending_revocation: false,
            },
        )
        .finish();
}

#[test]
fn tool_result_pollution_control() {
    scenario("tool-result pollution — control")
        // A clean tool output, from a high-authority source.
        .step(observe(HIGH, CUSTOMER_TIER, REGULAR, Scope::Shared, 0))
        .step(begin(0, Tier::Medium, Isolation::RawRead))
        .step(adopt(0, 0))
        .step(profile(0, &[0]))
        .step(commit(0))
        .expect_record(1, Life::Committed, None)
        // ... summarised and used: an action supported by the profile executes.
        .step(begin_medium(1))
        .step(irreversible(1, &[1]))
        .step(commit(1))
        .expect(|s| {
            let call = s.record(2);
            assert_eq!(call.kind, Kind::IrreversibleAction);
            assert_eq!(call.effect, Some(Effect::Executed));
            assert_eq!(call.parents, set(&[1]));
            assert!(holds(example_irreversible_call, s));
            assert!(
                !holds(example_external_call_on_support, s),
                "E10 is the strong form's: a medium-tier call does not reach it"
            );
            assert!(
                s.ids().all(|id| s.audit(id).cause.is_none()),
                "nothing repaired"
            );
        })
        .finish();
}

// ---- stale late write ---------------------------------------------------------------------------------

#[test]
fn stale_late_write_trap() {
    scenario("stale late write — trap")
        // The shipping address is recorded (r0).
        .step(begin_medium(0))
        .step(belief(0, ADDRESS, OLD_ADDRESS).source(MID_A))
        .step(commit(0))
        // a1 starts an update from what it read: its snapshot holds r0 only.
        .step(begin_medium(1))
        // Meanwhile the same source sends a correction (r1 supersedes r0).
        .step(begin_medium(0))
        .step(belief(0, ADDRESS, NEW_ADDRESS).source(MID_A))
        .step(commit(0))
        .expect_record(1, Life::Committed, None)
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByCorrection))
        // a1's update arrives after the correction. Even from a higher-authority source it must
        // not override it: it is aborted as a stale late write.
        .step(belief(1, ADDRESS, OLD_ADDRESS).source(HIGH))
        .step(commit(1))
        .expect_record(2, Life::Revoked, Some(Reason::StaleWrite))
        .expect_record(1, Life::Committed, None)
        .expect(|s| {
            assert!(holds(example_stale_write_aborted, s), "E3");
            assert!(s.audit(2).has(Repair::Retracted));
        })
        .finish();
}

#[test]
fn stale_late_write_control() {
    scenario("stale late write — control")
        .step(begin_medium(0))
        .step(belief(0, ADDRESS, OLD_ADDRESS).source(MID_A))
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, ADDRESS, NEW_ADDRESS).source(MID_A))
        .step(commit(0))
        // a1 opens after the correction: its snapshot holds it, so the rival is not newer than
        // the snapshot. The write is adjudicated normally and, from a higher authority, commits.
        .step(begin_medium(1))
        .step(belief(1, ADDRESS, OLD_ADDRESS).source(HIGH))
        .step(commit(1))
        .expect_record(2, Life::Committed, None)
        .expect_record(1, Life::Superseded, Some(Reason::SupersededByAuthority))
        // And a write with no rival at all commits.
        .step(begin_medium(1))
        .step(belief(1, LANGUAGE, 0).source(LOW))
        .step(commit(1))
        .expect_record(3, Life::Committed, None)
        .expect(|s| assert!(!holds(example_stale_write_aborted, s)))
        .finish();
}

// ---- dirty read -----------------------------------------------------------------------------------------

#[test]
fn dirty_read_trap() {
    scenario("dirty read — trap")
        // a0 checks refund eligibility: its belief "eligible" is staged, still tentative (r0).
        .step(begin_external(0))
        .step(belief(0, REFUND_ELIGIBILITY, ELIGIBLE).source(HIGH))
        // a1, the refund agent, opens an external-action transaction and tries to refund.
        .step(begin_external(1))
        .blocked(
            irreversible(1, &[]),
            GateBlock::InFlightTentative { record: 0 },
        )
        // It cannot declare the tentative belief as support: not in its snapshot.
        .refused(
            irreversible(1, &[0]),
            memtx_model::ops::Refusal::Disabled(
                "a declared support record is not visible to the transaction",
            ),
        )
        // A medium-tier agent is blocked too (condition 1 is the weak form).
        .step(begin_medium(2))
        .blocked(
            irreversible(2, &[]),
            GateBlock::InFlightTentative { record: 0 },
        )
        // And a0 itself must commit its plan before acting.
        .blocked(
            irreversible(0, &[]),
            GateBlock::InFlightTentative { record: 0 },
        )
        .expect(|s| {
            assert_eq!(s.len(), 1, "no refund was executed");
            assert!(!holds(example_irreversible_call, s));
        })
        .finish();
}

#[test]
fn dirty_read_control() {
    scenario("dirty read — control")
        .step(begin_external(0))
        .step(belief(0, REFUND_ELIGIBILITY, ELIGIBLE).source(HIGH))
        .step(commit(0))
        .expect_record(0, Life::ActionSafe, None)
        // The refund after the belief commits goes through.
        .step(begin_external(1))
        .step(irreversible(1, &[0]))
        .step(commit(1))
        .expect(|s| {
            let refund = s.record(1);
            assert_eq!(refund.kind, Kind::IrreversibleAction);
            assert_eq!(refund.life(), Life::ActionSafe);
            assert_eq!(refund.parents, set(&[0]));
            assert_eq!(refund.effect, Some(Effect::Executed));
            assert!(holds(example_external_call_on_support, s), "E10");
        })
        .finish();
}

// ---- semantic conflict ----------------------------------------------------------------------------------

#[test]
fn semantic_conflict_trap() {
    scenario("semantic conflict — trap")
        // Price: a mid-authority source says 0 (r0), a high-authority source says 1 (r1).
        .step(begin_medium(0))
        .step(belief(0, PRICE, 0).source(MID_A))
        .step(commit(0))
        .step(begin_medium(1))
        .step(belief(1, PRICE, 1).source(HIGH))
        .step(commit(1))
        // The higher authority wins.
        .expect_record(1, Life::Committed, None)
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByAuthority))
        // A lower-authority source contradicting the winner is aborted.
        .step(begin_medium(2))
        .step(belief(2, PRICE, 0).source(LOW))
        .step(commit(2))
        .expect_record(2, Life::Revoked, Some(Reason::Outranked))
        // Stock: two different sources of equal authority contradict each other (r3, r4).
        .step(begin_medium(0))
        .step(belief(0, STOCK, 0).source(MID_A))
        .step(commit(0))
        .step(begin_medium(1))
        .step(belief(1, STOCK, 1).source(MID_B))
        .step(commit(1))
        // Equal authority goes to review; the standing belief is untouched meanwhile.
        .expect_record(4, Life::Quarantined, Some(Reason::Review))
        .expect_record(3, Life::Committed, None)
        // The reviewer keeps the newer one: it commits, its rival is superseded.
        .step(resolve(4, true))
        .expect_record(4, Life::Committed, None)
        .expect_record(3, Life::Superseded, Some(Reason::SupersededByReview))
        .expect(|s| assert!(holds(example_review_keep_supersedes, s), "E11"))
        .finish();
}

#[test]
fn semantic_conflict_control() {
    scenario("semantic conflict — control")
        // The price is 0 until tick 2 ...
        .step(begin_medium(0))
        .step(belief(0, PRICE, 0).source(MID_A).valid(0, 2))
        .step(commit(0))
        .step(tick())
        .step(tick())
        // ... and 1 from tick 2, says another source of equal authority: no overlap, no conflict.
        .step(begin_medium(1))
        .step(belief(1, PRICE, 1).source(MID_B).valid_from(2))
        .step(commit(1))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Committed, None)
        .finish();
}

// ---- permission laundering ------------------------------------------------------------------------------

#[test]
fn permission_laundering_trap() {
    scenario("permission laundering — trap (the loan example)")
        // A loan officer (a0) holds two private credit records of an applicant.
        .step(begin_medium(0))
        .step(belief(0, CREDIT_HISTORY, 0).private())
        .step(belief(0, INCOME, 1).private())
        .step(commit(0))
        // An investor-facing, shared risk score is derived from both: it is blocked.
        .step(begin_medium(0))
        .step(summary(0, &[0, 1]))
        .step(commit(0))
        .expect_record(2, Life::Quarantined, Some(Reason::Permission))
        // The investor-facing agent cannot read the private records itself ...
        .step(begin_medium(1))
        .disabled(summary(1, &[0, 1]))
        // ... nor the quarantined score.
        .expect(|s| assert!(!visible(&wide(Variant::Memtx), s, 1, 2)))
        // Rebuilding the score sends it through the pipeline again: blocked again.
        .step(begin_medium(0))
        .step(rebuild(2))
        .step(commit(0))
        .expect_record(2, Life::Quarantined, Some(Reason::Permission))
        .finish();
}

#[test]
fn permission_laundering_control() {
    scenario("permission laundering — control")
        // The same two records, shared.
        .step(begin_medium(0))
        .step(belief(0, CREDIT_HISTORY, 0))
        .step(belief(0, INCOME, 1))
        .step(commit(0))
        // A shared risk score derived from shared parents commits ...
        .step(begin_medium(0))
        .step(summary(0, &[0, 1]))
        // ... and so does a private note derived from them (narrowing is always allowed).
        .step(summary(0, &[0, 1]).private())
        .step(commit(0))
        .expect_record(2, Life::Committed, None)
        .expect_record(3, Life::Committed, None)
        // Another agent reads the shared score.
        .step(begin_medium(1))
        .step(irreversible(1, &[2]))
        .expect(|s| {
            let cfg = wide(Variant::Memtx);
            assert!(visible(&cfg, s, 1, 2));
            assert!(!visible(&cfg, s, 1, 3));
        })
        .finish();
}

// ---- cascading rollback ---------------------------------------------------------------------------------

/// The refund world: a0 (external-action) commits the eligibility belief r0, a summary r1 of it,
/// a customer profile r2 built on the summary, and an unrelated belief r3; a1 (external-action)
/// refunds on the profile (irreversible, r4) and places a hold on the account (reversible, r5).
fn refund_world(name: &str) -> Scenario {
    scenario(name)
        .step(begin_external(0))
        .step(belief(0, REFUND_ELIGIBILITY, ELIGIBLE).source(HIGH))
        .step(summary(0, &[0]))
        .step(profile(0, &[1]))
        .step(belief(0, LANGUAGE, 0).source(HIGH))
        .step(commit(0))
        .expect(|s| assert!((0..4).all(|id| s.record(id).life() == Life::ActionSafe)))
        .step(begin_external(1))
        .step(irreversible(1, &[2]))
        .step(reversible(1, &[0]))
        .step(commit(1))
        .expect(|s| {
            assert_eq!(s.record(4).kind, Kind::IrreversibleAction);
            assert_eq!(s.record(5).kind, Kind::ReversibleAction);
        })
}

#[test]
fn cascading_rollback_trap() {
    refund_world("cascading rollback — trap")
        // The eligibility belief is retracted.
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(0, Life::Revoked, Some(Reason::Revocation))
        // Its summary and the profile below it: quarantined for rebuild.
        .expect_record(1, Life::Quarantined, Some(Reason::Rebuild))
        .expect_record(2, Life::Quarantined, Some(Reason::Rebuild))
        // The refund leaked (recorded), the hold is compensated.
        .expect_record(4, Life::Revoked, Some(Reason::Cascade))
        .expect_record(5, Life::Revoked, Some(Reason::Cascade))
        // The unrelated belief stands.
        .expect_record(3, Life::ActionSafe, None)
        .expect(|s| {
            assert_eq!(s.record(4).effect, Some(Effect::Leaked));
            assert_eq!(s.record(5).effect, Some(Effect::Compensated));
            let repairs: Vec<(u8, Vec<Repair>, Option<u8>)> = s
                .ids()
                .map(|id| (id, s.audit(id).repairs().collect(), s.audit(id).cause))
                .collect();
            assert_eq!(
                repairs,
                vec![
                    (0, vec![Repair::Retracted], Some(0)),
                    (1, vec![Repair::Quarantined], Some(0)),
                    (2, vec![Repair::Quarantined], Some(0)),
                    (3, vec![], None),
                    (4, vec![Repair::Leaked], Some(0)),
                    (5, vec![Repair::Compensated], Some(0)),
                ],
                "the rollback log"
            );
            assert!(holds(example_deep_cascade, s), "E2");
            assert!(holds(example_compensated, s), "E7");
            assert!(holds(example_leak_recorded, s), "E8");
        })
        .finish();
}

#[test]
fn cascading_rollback_control() {
    refund_world("cascading rollback — control")
        // Retracting the unrelated belief leaves the summary, profile, refund and hold alone.
        .step(request_revocation(3))
        .step(apply_revocation(3))
        .expect_record(3, Life::Revoked, Some(Reason::Revocation))
        .expect(|s| {
            for id in [0, 1, 2, 4, 5] {
                assert_eq!(s.record(id).life(), Life::ActionSafe, "r{id}");
                assert_eq!(s.audit(id).cause, None, "r{id} logged");
            }
            assert_eq!(s.record(4).effect, Some(Effect::Executed));
            assert_eq!(s.record(5).effect, Some(Effect::Executed));
        })
        .finish();
}
