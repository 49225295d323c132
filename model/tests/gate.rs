//! The action gate in front of irreversible tool calls (docs/protocol.md §7).
//!
//! One test per blocking condition, with the structured reply (`GateBlock`) asserted:
//! condition 1 (a Tentative record outside the snapshot in flight, the caller's own staging
//! included), condition 2 (an external-action snapshot without any ActionSafe record; support not
//! ActionSafe; support no longer valid), the Decided support checks (support pending revocation;
//! an ancestor of the support pending revocation); the weak form of medium and low tiers; the
//! variants `paper-gate` (no action-time stability check: I9 tells it apart) and `no-action-gate`
//! (no gate: I1 tells it apart). Also what an executed call creates, and that reversible calls are
//! not gated.

mod common;

use common::*;
use memtx_model::gate::{self, GateBlock};
use memtx_model::ops::Refusal;
use memtx_model::record::{Effect, Kind, Scope};
use memtx_model::txn::{Isolation, Tier};
use memtx_model::{Life, Variant};

// ---- condition 1 -------------------------------------------------------------------------------

#[test]
fn condition_1_blocks_while_another_transaction_has_a_tentative_record_in_flight() {
    scenario("condition 1, other transaction")
        .step(begin_medium(0))
        .step(begin_medium(1))
        .step(belief(1, 0, 0))
        .blocked(
            irreversible(0, &[]),
            GateBlock::InFlightTentative { record: 0 },
        )
        .step(commit(1))
        // r0 is committed now (still outside a0's snapshot, but no longer in flight).
        .step(irreversible(0, &[]))
        .expect(|s| assert_eq!(s.record(1).kind, Kind::IrreversibleAction))
        .finish();
}

#[test]
fn condition_1_includes_the_callers_own_staging() {
    // "An agent must commit its plan before acting."
    scenario("condition 1, own staging")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .blocked(
            irreversible(0, &[]),
            GateBlock::InFlightTentative { record: 0 },
        )
        .expect(|s| assert_eq!(s.len(), 1, "a blocked call creates nothing"))
        .step(commit(0))
        .step(begin_medium(0))
        .step(irreversible(0, &[0]))
        .finish();
}

#[test]
fn condition_1_includes_an_adopted_raw_record() {
    // Regression: at raw-read the Raw r0 is in a0's snapshot; once a0 adopts it, it is a0's own
    // uncommitted staging and must block a0's irreversible call.
    scenario("condition 1, adopted raw record")
        .step(observe(MID_A, 0, 0, Scope::Shared, 0))
        .step(begin(0, Tier::Medium, Isolation::RawRead))
        .step(adopt(0, 0))
        .expect_life(0, Life::Tentative)
        .blocked(
            irreversible(0, &[]),
            GateBlock::InFlightTentative { record: 0 },
        )
        .finish();
}

#[test]
fn condition_1_includes_a_rebuilt_view() {
    // Regression: the view r2 was committed, hence in a0's and a1's snapshots; a cascade
    // quarantines it and a0 rebuilds it: a new Tentative version is in flight, a0's own staging.
    // Neither a0 nor a1 may act before it is recommitted, and a1 may not read it.
    scenario("condition 1, rebuilt view")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(belief(0, 1, 0))
        .step(summary(0, &[0, 1]))
        .step(commit(0))
        .step(begin_medium(0))
        .step(begin_medium(1))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .expect_record(
            2,
            Life::Quarantined,
            Some(memtx_model::record::Reason::Rebuild),
        )
        .step(rebuild(2))
        .expect_life(2, Life::Tentative)
        .blocked(
            irreversible(0, &[]),
            GateBlock::InFlightTentative { record: 2 },
        )
        .blocked(
            irreversible(1, &[]),
            GateBlock::InFlightTentative { record: 2 },
        )
        // Reading it at committed-read would be a dirty read (I5).
        .disabled(belief(1, 1, 1).parents(&[2]))
        .step(commit(0))
        .expect_record(2, Life::Committed, None)
        .expect(|s| assert_eq!(s.record(2).parents, set(&[1]), "rebuilt from r1 only"))
        .step(irreversible(1, &[1]))
        .finish();
}

#[test]
fn a_tentative_record_inside_the_snapshot_does_not_block() {
    // The spec's wording: only records *outside* the snapshot count. At tentative-read, a1's
    // staged r0 is in a0's snapshot.
    scenario("condition 1, inside the snapshot")
        .step(begin_medium(1))
        .step(belief(1, 0, 0))
        .step(begin(0, Tier::Medium, Isolation::TentativeRead))
        .step(irreversible(0, &[]))
        .expect_life(1, Life::Committed)
        .finish();
}

#[test]
fn condition_1_is_checked_before_condition_2() {
    scenario("condition order")
        .step(begin_external(0))
        .step(belief(0, 0, 0))
        .blocked(
            irreversible(0, &[]),
            GateBlock::InFlightTentative { record: 0 },
        )
        .finish();
}

// ---- condition 2 (strong form, external-action) -------------------------------------------------

#[test]
fn condition_2_blocks_an_external_action_snapshot_without_action_safe_records() {
    scenario("condition 2")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        // r0 is Committed, not ActionSafe: a1's external-action snapshot is empty.
        .step(begin_external(1))
        .expect(|s| assert!(s.txn(1).unwrap().snapshot.is_empty()))
        .blocked(irreversible(1, &[]), GateBlock::NoActionSafeInSnapshot)
        // An ActionSafe record committed after a1 began is not in its snapshot either.
        .step(begin_external(2))
        .step(belief(2, 1, 0))
        .step(commit(2))
        .expect_life(1, Life::ActionSafe)
        .blocked(irreversible(1, &[]), GateBlock::NoActionSafeInSnapshot)
        .step(begin_external(3))
        .step(irreversible(3, &[1]))
        .expect(|s| assert_eq!(s.record(2).life(), Life::ActionSafe))
        .finish();
}

#[test]
fn condition_2_support_must_be_action_safe() {
    // Through an operation this is refused earlier: an external-action transaction sees only
    // ActionSafe records, so a Committed support is not visible. The gate's own judgement:
    let s = scenario("condition 2, support not ActionSafe")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(begin_external(0))
        .step(belief(0, 1, 0))
        .step(commit(0))
        .step(begin_external(1))
        .refused(
            irreversible(1, &[0]),
            Refusal::Disabled("a declared support record is not visible to the transaction"),
        )
        .finish();
    let cfg = wide(Variant::Memtx);
    assert_eq!(
        gate::check(&cfg, &s, 1, set(&[0])),
        Err(GateBlock::SupportNotActionSafe { record: 0 })
    );
    assert_eq!(gate::check(&cfg, &s, 1, set(&[1])), Ok(()));
    assert_eq!(
        gate::check_action_safe_support(&cfg, &s, 1, set(&[1, 0])),
        Err(GateBlock::SupportNotActionSafe { record: 0 })
    );
}

#[test]
fn condition_2_support_must_be_valid_now() {
    scenario("condition 2, support expired")
        .step(begin_external(0))
        .step(belief(0, 0, 0).valid(0, 1))
        .step(commit(0))
        .expect_life(0, Life::ActionSafe)
        .step(tick())
        .step(begin_external(1))
        .blocked(
            irreversible(1, &[0]),
            GateBlock::SupportExpired { record: 0 },
        )
        // Without declared support the snapshot's ActionSafe record satisfies condition 2.
        .step(irreversible(1, &[]))
        .finish();
}

// ---- Decided: support stability at action time ----------------------------------------------------

#[test]
fn support_pending_revocation_blocks() {
    scenario("support pending revocation")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(begin_medium(1))
        .step(request_revocation(0))
        .blocked(
            irreversible(1, &[0]),
            GateBlock::SupportNotInForce {
                record: 0,
                life: Life::Committed,
                pending_revocation: true,
            },
        )
        // A reversible call is not gated.
        .step(reversible(1, &[0]))
        .expect(|s| assert_eq!(s.record(1).kind, Kind::ReversibleAction))
        .finish();
}

#[test]
fn ancestor_of_support_pending_revocation_blocks() {
    scenario("ancestor pending revocation")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(summary(0, &[0]))
        .step(commit(0))
        .step(begin_medium(1))
        .step(request_revocation(0))
        .blocked(
            irreversible(1, &[1]),
            GateBlock::UnstableSupport {
                record: 1,
                ancestor: 0,
            },
        )
        .finish();
}

#[test]
fn an_irreversible_call_on_support_not_in_force_is_blocked_by_the_gate() {
    // Revision 2 (§7): the gate answers an irreversible call whose declared support is not in
    // force, naming the record and its state; a reversible call on it is not enabled.
    scenario("superseded support")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A))
        .step(commit(0))
        .step(begin_medium(1))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(HIGH))
        .step(commit(0))
        .expect_life(0, Life::Superseded)
        .blocked(
            irreversible(1, &[0]),
            GateBlock::SupportNotInForce {
                record: 0,
                life: Life::Superseded,
                pending_revocation: false,
            },
        )
        .disabled(reversible(1, &[0]))
        .finish();
}

#[test]
fn the_weak_form_of_medium_and_low_tiers_ignores_condition_2() {
    // Empty snapshots, no ActionSafe record anywhere: an external-action transaction would be
    // blocked by condition 2.
    scenario("weak form")
        .step(begin_medium(0))
        .step(irreversible(0, &[]))
        .step(begin(1, Tier::Low, Isolation::CommittedRead))
        .step(irreversible(1, &[]))
        .step(begin_external(2))
        .blocked(irreversible(2, &[]), GateBlock::NoActionSafeInSnapshot)
        .expect(|s| {
            assert_eq!(s.len(), 2);
            assert!(s.records().iter().all(|r| r.life() == Life::Committed));
        })
        .finish();
}

#[test]
fn the_weak_form_accepts_committed_support() {
    scenario("weak form, committed support")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(begin(1, Tier::Low, Isolation::CommittedRead))
        .step(irreversible(1, &[0]))
        .expect(|s| {
            let r = s.record(1);
            assert_eq!(r.life(), Life::Committed);
            assert_eq!(r.parents, set(&[0]));
        })
        .finish();
}

#[test]
fn the_weak_form_still_checks_support_stability() {
    scenario("weak form, unstable support")
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(begin(1, Tier::Low, Isolation::RawRead))
        .step(request_revocation(0))
        .blocked(
            irreversible(1, &[0]),
            GateBlock::SupportNotInForce {
                record: 0,
                life: Life::Committed,
                pending_revocation: true,
            },
        )
        .finish();
}

// ---- what an executed call creates ----------------------------------------------------------------

#[test]
fn an_executed_irreversible_call_is_an_action_safe_record_with_its_support_as_parents() {
    scenario("executed call")
        .step(begin_external(0))
        .step(belief(0, 0, 0))
        .step(commit(0))
        .step(tick())
        .step(begin_external(1))
        .step(irreversible(1, &[0]))
        .expect(|s| {
            let r = s.record(1);
            assert_eq!(r.kind, Kind::IrreversibleAction);
            assert_eq!(r.life(), Life::ActionSafe);
            assert_eq!(r.effect, Some(Effect::Executed));
            assert_eq!(r.parents, set(&[0]));
            assert_eq!((r.owner, r.scope), (1, Scope::Private));
            assert_eq!(r.validity.from, 1);
            assert!(r.doubted_at_execution.is_empty());
            assert_eq!(r.seq, None, "a tool action takes no commit sequence number");
            assert_eq!(s.next_seq, 1);
        })
        .finish();
}

#[test]
fn reversible_calls_are_not_gated() {
    scenario("reversible")
        .step(begin_external(0))
        .step(belief(0, 0, 0))
        .step(reversible(0, &[])) // own staging in flight, no ActionSafe record: not gated
        .expect(|s| {
            assert_eq!(s.record(1).kind, Kind::ReversibleAction);
            assert_eq!(s.record(1).life(), Life::ActionSafe);
        })
        .finish();
}

#[test]
fn the_reply_to_a_blocked_call_names_the_condition() {
    let one = Refusal::Blocked(GateBlock::InFlightTentative { record: 3 }).to_string();
    assert!(one.contains("condition 1") && one.contains("r3"), "{one}");
    let two = Refusal::Blocked(GateBlock::NoActionSafeInSnapshot).to_string();
    assert!(two.contains("condition 2"), "{two}");
    let unstable = GateBlock::UnstableSupport {
        record: 2,
        ancestor: 0,
    }
    .to_string();
    assert!(
        unstable.contains("r0") && unstable.contains("r2"),
        "{unstable}"
    );
}

// ---- variants ---------------------------------------------------------------------------------------

/// r0 (belief) and r1 (its summary) ActionSafe; a1 opens an external-action transaction; then a
/// correction for r0 arrives (revocation requested, not yet applied).
fn doubt_after_snapshot(variant: Variant) -> Scenario {
    scenario(&format!("{} gate", variant.name()))
        .variant(variant)
        .step(begin_external(0))
        .step(belief(0, 0, 0))
        .step(summary(0, &[0]))
        .step(commit(0))
        .step(begin_external(1))
        .step(request_revocation(0))
}

#[test]
fn memtx_gate_blocks_acting_on_known_doubt() {
    doubt_after_snapshot(Variant::Memtx)
        .blocked(
            irreversible(1, &[1]),
            GateBlock::UnstableSupport {
                record: 1,
                ancestor: 0,
            },
        )
        .blocked(
            irreversible(1, &[0]),
            GateBlock::SupportNotInForce {
                record: 0,
                life: Life::ActionSafe,
                pending_revocation: true,
            },
        )
        .finish();
}

#[test]
fn paper_gate_lets_the_ancestor_pending_case_through_and_i9_tells() {
    let s = doubt_after_snapshot(Variant::PaperGate)
        .step(irreversible(1, &[1]))
        .expect(|s| assert_eq!(s.record(2).doubted_at_execution, set(&[0])))
        .step(apply_revocation(0))
        .expect(|s| assert_eq!(s.record(2).effect, Some(Effect::Leaked)));
    // I18 too: the call executed while an ancestor of its support was pending revocation.
    assert_eq!(s.violations(), vec!["I9", "I18"]);
}

#[test]
fn paper_gate_still_applies_conditions_1_and_2() {
    scenario("paper gate, conditions")
        .variant(Variant::PaperGate)
        .step(begin_external(0))
        .blocked(irreversible(0, &[]), GateBlock::NoActionSafeInSnapshot)
        .step(belief(0, 0, 0))
        .blocked(
            irreversible(0, &[]),
            GateBlock::InFlightTentative { record: 0 },
        )
        .finish();
}

#[test]
fn no_action_gate_lets_everything_through_and_i1_tells() {
    let s = scenario("no action gate")
        .variant(Variant::NoActionGate)
        .step(begin_external(0))
        .step(irreversible(0, &[])) // no ActionSafe record in the snapshot
        .step(belief(0, 0, 0))
        .step(irreversible(0, &[])); // own staging in flight
    assert_eq!(s.state().len(), 3);
    assert_eq!(s.violations(), vec!["I1", "I18"]);
    // Acting on a closure already in doubt is I18's harm at once; I9's comes with the leak.
    let s = doubt_after_snapshot(Variant::NoActionGate).step(irreversible(1, &[1]));
    assert_eq!(s.violations(), vec!["I18"]);
    let s = s.step(apply_revocation(0));
    assert_eq!(s.violations(), vec!["I9", "I18"]);
}

#[test]
fn the_gate_judges_the_support_closure_in_every_tier() {
    // Revision 3: r0 holds for one tick; r1 summarises it with open validity. After the tick
    // a medium-tier call on r1 is blocked through the gate, naming the ancestor; a call on r0
    // itself is blocked as expired support (revision 2 checked validity in the strong form
    // only). Under rev2-lineage both calls execute, and I18 tells.
    let path = |variant| {
        scenario("support closure")
            .variant(variant)
            .step(begin_medium(0))
            .step(belief(0, 0, 0).valid(0, 1))
            .step(summary(0, &[0]))
            .step(commit(0))
            .step(tick())
            .step(begin_medium(0))
    };
    path(Variant::Memtx)
        .blocked(
            irreversible(0, &[1]),
            GateBlock::AncestorNotInForce {
                record: 1,
                ancestor: 0,
                life: Life::Committed,
            },
        )
        .blocked(
            irreversible(0, &[0]),
            GateBlock::SupportExpired { record: 0 },
        )
        .finish();
    let s = path(Variant::Rev2Lineage).step(irreversible(0, &[1]));
    assert_eq!(s.violations(), vec!["I18"]);
}

#[test]
fn condition_2_counts_only_what_the_caller_may_see() {
    // Revision 3 (§4 "permitted", §7): another agent's Private ActionSafe record does not make
    // an empty view action-safe. rev2-scopes counts it, and I17 tells.
    let path = |variant| {
        scenario("condition 2 over permitted records")
            .variant(variant)
            .step(begin_external(1))
            .step(belief(1, 0, 0).private())
            .step(commit(1))
            .step(begin_external(0))
    };
    path(Variant::Memtx)
        .blocked(irreversible(0, &[]), GateBlock::NoPermittedActionSafe)
        .finish();
    let s = path(Variant::Rev2Scopes).step(irreversible(0, &[]));
    assert_eq!(s.violations(), vec!["I17"]);
}
