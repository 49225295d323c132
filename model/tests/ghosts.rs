//! Each ghost judge of docs/protocol.md §9 (revision 2) breaks on a hand-made violating step.
//!
//! A ghost restates its rule without calling the code it judges, so it must catch a step that
//! the protocol code would never take. Each test builds the state before a step with the real
//! protocol (`machine::step`), then builds the state *after* the step by hand, as a defective
//! protocol would leave it, and hands both to the ghost observer (`ghost::observe_step`). The
//! property must fail on the defective step and hold on the correct one (the control), so a
//! judge that always or never fires fails its test.

mod common;

use common::*;
use memtx_model::ghost::observe_step;
use memtx_model::machine::step;
use memtx_model::ops::Op;
use memtx_model::properties::{
    action_safety_gating, adjudication, cascade_repair_completeness, content_scope,
    evidence_at_commit, isolation, lifecycle_legality, no_harm_from_known_doubt, no_stale_content,
    no_stale_override, one_truth_per_slot, scope_non_interference, sound_lineage_at_commit,
    tier_isolation, validity_at_commit, zero_downstream_harm,
};
use memtx_model::record::{Reason, RecordId};
use memtx_model::txn::{Isolation, Tier};
use memtx_model::{Config, Life, MemTx, State, Variant};

fn cfg() -> Config {
    wide(Variant::Memtx)
}

/// The state after performing `ops` from the initial state with the real protocol.
fn run(ops: &[Op]) -> State {
    let cfg = cfg();
    ops.iter().fold(State::initial(), |s, op| {
        step(&cfg, &s, op).unwrap_or_else(|r| panic!("{op:?} refused: {r}"))
    })
}

/// `pre` → `post` by `op`, judged by the ghost; returns the judged post state.
fn judge(pre: &State, op: &Op, mut post: State) -> State {
    observe_step(&cfg(), pre, op, &mut post);
    post
}

/// Commits `ids` by hand (Tentative → Validated → Committed, next sequence numbers) and
/// closes `agent`'s transaction: a commit step that skipped every check.
fn hand_commit(pre: &State, agent: u8, ids: &[RecordId]) -> State {
    let mut post = pre.clone();
    for &id in ids {
        post.move_record(id, Life::Validated).unwrap();
        post.move_record(id, Life::Committed).unwrap();
        post.record_mut(id).seq = Some(post.next_seq);
        post.next_seq += 1;
    }
    for id in post.staged_by(agent).iter() {
        post.record_mut(id).writer = None;
    }
    post.set_txn(agent, None);
    post
}

fn model() -> MemTx {
    MemTx::new(cfg())
}

#[test]
fn i10_breaks_when_a_record_without_evidence_commits() {
    // Low confidence (0.4) from a mid source (0.8): the evidence check must quarantine it.
    let pre = run(&[begin_medium(0), belief(0, 0, 0).low_confidence().into()]);
    let bad = judge(&pre, &commit(0), hand_commit(&pre, 0, &[0]));
    assert!(!evidence_at_commit(&model(), &bad));
    // Control: the same commit by the protocol quarantines it, and I10 holds.
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(0).life(), Life::Quarantined);
    assert!(evidence_at_commit(&model(), &good));
    // Low confidence from the high source passes on authority alone.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).source(HIGH).low_confidence().into(),
    ]);
    let ok = judge(&pre, &commit(0), hand_commit(&pre, 0, &[0]));
    assert!(evidence_at_commit(&model(), &ok));
}

#[test]
fn i11_breaks_when_a_record_commits_outside_its_validity() {
    let pre = run(&[begin_medium(0), belief(0, 0, 0).valid_from(1).into()]);
    let bad = judge(&pre, &commit(0), hand_commit(&pre, 0, &[0]));
    assert!(!validity_at_commit(&model(), &bad));
    let pre = run(&[begin_medium(0), belief(0, 0, 0).into()]);
    let good = judge(&pre, &commit(0), hand_commit(&pre, 0, &[0]));
    assert!(validity_at_commit(&model(), &good));
}

#[test]
fn i13_breaks_when_a_record_commits_under_an_ancestor_pending_revocation() {
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
        begin_medium(0),
        summary(0, &[0]).into(),
        request_revocation(0),
    ]);
    let bad = judge(&pre, &commit(0), hand_commit(&pre, 0, &[1]));
    assert!(!sound_lineage_at_commit(&model(), &bad));
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(
        good.record(1).reason,
        Some(Reason::UnstableDependency),
        "the protocol quarantines it"
    );
    assert!(sound_lineage_at_commit(&model(), &good));
}

#[test]
fn i12_breaks_when_an_equal_authority_conflict_is_decided_without_review() {
    // r0 from mid source A is committed; r1 from mid source B contradicts it.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_A).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 1).source(MID_B).into(),
    ]);
    let mut bad = hand_commit(&pre, 0, &[1]);
    bad.move_record(0, Life::Superseded).unwrap();
    let bad = judge(&pre, &commit(0), bad);
    assert!(
        !adjudication(&model(), &bad),
        "superseded by an equal rival"
    );
    // Committing over it without superseding it is no better.
    let bad = judge(&pre, &commit(0), hand_commit(&pre, 0, &[1]));
    assert!(
        !adjudication(&model(), &bad),
        "committed over an equal rival"
    );
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::Review));
    assert!(adjudication(&model(), &good));
}

#[test]
fn i12_breaks_when_a_supersession_reason_names_the_wrong_entitlement() {
    // r1 supersedes r0 (from mid source A): `winner` is the source of r1. The reason r0 is
    // given must be the entitlement that won: authority for a higher source, correction for
    // its own source.
    for (winner, right, wrong) in [
        (
            HIGH,
            Reason::SupersededByAuthority,
            Reason::SupersededByCorrection,
        ),
        (
            MID_A,
            Reason::SupersededByCorrection,
            Reason::SupersededByAuthority,
        ),
    ] {
        let pre = run(&[
            begin_medium(0),
            belief(0, 0, 0).source(MID_A).into(),
            commit(0),
            begin_medium(0),
            belief(0, 0, 1).source(winner).into(),
        ]);
        let good = step(&cfg(), &pre, &commit(0)).unwrap();
        assert_eq!(good.record(0).life(), Life::Superseded);
        assert_eq!(good.record(0).reason, Some(right));
        assert!(adjudication(&model(), &good), "the protocol's own step");
        let by_hand = |reason: Reason| {
            let mut post = hand_commit(&pre, 0, &[1]);
            post.move_record(0, Life::Superseded).unwrap();
            post.record_mut(0).reason = Some(reason);
            judge(&pre, &commit(0), post)
        };
        assert!(
            adjudication(&model(), &by_hand(right)),
            "control: {right:?} by hand"
        );
        assert!(
            !adjudication(&model(), &by_hand(wrong)),
            "superseded by source {winner}, logged as {wrong:?}"
        );
        // Review's reason is review's: a Commit never gives it.
        assert!(!adjudication(
            &model(),
            &by_hand(Reason::SupersededByReview)
        ));
    }
}

#[test]
fn i12_breaks_when_review_keeps_a_record_over_a_higher_authority_rival() {
    // The second defect of revision 1: on review, r2 (mid) is kept and supersedes r1 (high).
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_A).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 1).source(MID_B).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 0).source(HIGH).into(),
        commit(0),
    ]);
    assert_eq!(pre.record(1).reason, Some(Reason::Review));
    let mut bad = pre.clone();
    bad.move_record(0, Life::Superseded).unwrap();
    bad.move_record(2, Life::Superseded).unwrap();
    bad.move_record(1, Life::Validated).unwrap();
    bad.move_record(1, Life::Committed).unwrap();
    let bad = judge(&pre, &resolve(1, true), bad);
    assert!(!adjudication(&model(), &bad));
    // The protocol refuses to keep it (a higher-authority rival stands); rejecting is fine.
    assert!(step(&cfg(), &pre, &resolve(1, true)).is_err());
    let good = step(&cfg(), &pre, &resolve(1, false)).unwrap();
    assert!(adjudication(&model(), &good));
}

#[test]
fn i7_breaks_when_review_keeps_a_record_over_a_rival_newer_than_its_snapshot() {
    // a0 commits r0; a1 begins, stages r1 (other source, other value); a0 commits r2 after
    // a1's snapshot; a1's commit quarantines r1 for review (revision 1's defect) and the
    // reviewer keeps it: r1 stands over r2, a rival newer than its staging snapshot.
    let cfg = cfg();
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 1).source(MID_A).into(),
        commit(0),
        begin_medium(1),
        belief(1, 0, 0).source(MID_B).into(),
        begin_medium(0),
        belief(0, 0, 1).source(MID_A).into(),
        commit(0),
    ]);
    // Revision 1's first-rival-decides conflict check sends r1 to review.
    let mut rev1 = cfg.clone();
    rev1.variant = Variant::Rev1Adjudication;
    let reviewed = step(&rev1, &pre, &commit(1)).unwrap();
    assert_eq!(reviewed.record(1).reason, Some(Reason::Review));
    let kept = step(&rev1, &reviewed, &resolve(1, true)).unwrap();
    assert!(
        !no_stale_override(&MemTx::new(rev1), &kept),
        "I7 on Resolve(keep)"
    );
    // Revision 2 aborts r1 as a stale late write.
    let fixed = step(&cfg, &pre, &commit(1)).unwrap();
    assert_eq!(fixed.record(1).reason, Some(Reason::StaleWrite));
    assert!(no_stale_override(&model(), &fixed));
}

#[test]
fn i2_breaks_when_a_retracting_step_leaves_a_staged_descendant_unrepaired() {
    // r0 committed; a1 stages a summary of it; r0 is revoked and the cascade "forgets" r1.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
        begin_medium(1),
        summary(1, &[0]).into(),
        request_revocation(0),
    ]);
    let mut bad = pre.clone();
    bad.move_record(0, Life::Revoked).unwrap();
    let bad = judge(
        &pre,
        &memtx_model::ops::Op::ApplyRevocation { record: 0 },
        bad,
    );
    assert!(!cascade_repair_completeness(&model(), &bad));
    let good = step(
        &cfg(),
        &pre,
        &memtx_model::ops::Op::ApplyRevocation { record: 0 },
    )
    .unwrap();
    assert_eq!(good.record(1).life(), Life::Quarantined);
    assert!(cascade_repair_completeness(&model(), &good));
}

#[test]
fn i1_judges_against_the_ghost_snapshot_not_the_protocol_field() {
    // a0 stages r0 (Tentative); a1 begins: neither snapshot holds r0, so a1's irreversible
    // call must be blocked (condition 1). A protocol that captured a wrong snapshot (holding
    // the tentative r0) would let the gate pass; the ghost's own copy still says "outside".
    let pre = run(&[begin_medium(0), belief(0, 0, 0).into(), begin_medium(1)]);
    let mut wrong = pre.clone();
    let mut tx = *wrong.txn(1).unwrap();
    tx.snapshot.insert(0);
    wrong.set_txn(1, Some(tx));
    let call = irreversible(1, &[]);
    let mut post = wrong.clone();
    post.push_record(memtx_model::Record::default());
    observe_step(&cfg(), &wrong, &call, &mut post);
    assert!(!action_safety_gating(&model(), &post));
}

#[test]
fn i5_judges_against_the_level_the_spec_assigns() {
    // An external-action transaction reads action-safe whatever isolation is asked; a Begin
    // that kept committed-read would let it read a merely Committed record.
    let pre = run(&[begin_medium(0), belief(0, 0, 0).into(), commit(0)]);
    let begin = Op::Begin {
        agent: 1,
        tier: Tier::ExternalAction,
        isolation: Isolation::CommittedRead,
    };
    let good = step(&cfg(), &pre, &begin).unwrap();
    assert!(tier_isolation(&model(), &good));
    let mut bad = good.clone();
    let mut tx = *bad.txn(1).unwrap();
    tx.isolation = Isolation::CommittedRead;
    tx.snapshot.insert(0);
    bad.set_txn(1, Some(tx));
    assert!(!tier_isolation(&model(), &bad), "I14 sees the wrong level");
    // Reading r0 in that transaction: the ghost's level is action-safe-read.
    let read = Op::from(summary(1, &[0]));
    let mut post = bad.clone();
    post.push_record(memtx_model::Record::default());
    observe_step(&cfg(), &bad, &read, &mut post);
    assert!(!isolation(&model(), &post));
}

#[test]
fn i10_and_i11_break_when_a_quarantine_reason_is_not_true() {
    // A confident record from a mid source meets the evidence rule; a defective pipeline
    // quarantines it "for evidence" anyway.
    let pre = run(&[begin_medium(0), belief(0, 0, 0).into()]);
    let mut bad = pre.clone();
    bad.move_record(0, Life::Quarantined).unwrap();
    bad.record_mut(0).reason = Some(Reason::Evidence);
    bad.record_mut(0).writer = None;
    bad.set_txn(0, None);
    let judged = judge(&pre, &commit(0), bad.clone());
    assert!(!evidence_at_commit(&model(), &judged));
    // The same record quarantined "as expired" while valid now.
    bad.record_mut(0).reason = Some(Reason::Expired);
    let judged = judge(&pre, &commit(0), bad);
    assert!(!validity_at_commit(&model(), &judged));
    // The protocol quarantines a low-confidence one for evidence, truly.
    let pre = run(&[begin_medium(0), belief(0, 0, 0).low_confidence().into()]);
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(0).reason, Some(Reason::Evidence));
    assert!(evidence_at_commit(&model(), &good));
    assert!(validity_at_commit(&model(), &good));
}

#[test]
fn every_reason_a_commit_gives_must_be_true() {
    // r0 alone, confident, valid, parentless: any reason to refuse it is false.
    let pre = run(&[begin_medium(0), belief(0, 0, 0).into()]);
    let refuse = |life: Life, reason: Reason| {
        let mut bad = pre.clone();
        bad.move_record(0, life).unwrap();
        bad.record_mut(0).reason = Some(reason);
        bad.record_mut(0).writer = None;
        bad.set_txn(0, None);
        judge(&pre, &commit(0), bad)
    };
    let m = model();
    let s = refuse(Life::Quarantined, Reason::Review);
    assert!(!adjudication(&m, &s), "review without an equal rival");
    let s = refuse(Life::Revoked, Reason::Outranked);
    assert!(!adjudication(&m, &s), "outranked without a higher rival");
    let s = refuse(Life::Revoked, Reason::StaleWrite);
    assert!(!no_stale_override(&m, &s), "stale without a newer rival");
    let s = refuse(Life::Quarantined, Reason::InactiveParent);
    assert!(
        !sound_lineage_at_commit(&m, &s),
        "inactive parent without a parent"
    );
    let s = refuse(Life::Quarantined, Reason::UnstableDependency);
    assert!(
        !sound_lineage_at_commit(&m, &s),
        "unstable without an ancestor in doubt"
    );
    let s = refuse(Life::Quarantined, Reason::Permission);
    assert!(
        !memtx_model::properties::no_permission_laundering(&m, &s),
        "laundering without a narrower ancestor"
    );
}

#[test]
fn i9_judges_irreversible_calls_in_every_tier() {
    // r1 summarises r0; r0's revocation is requested; a medium-tier call on r1 executes
    // (paper-gate skips the stability check), then the revocation leaks it.
    let ops = [
        begin_medium(0),
        belief(0, 0, 0).into(),
        summary(0, &[0]).into(),
        commit(0),
        request_revocation(0),
        begin_medium(0),
        irreversible(0, &[1]),
        commit(0),
        apply_revocation(0),
    ];
    let gate = wide(Variant::PaperGate);
    let s = ops.iter().fold(State::initial(), |s, op| {
        step(&gate, &s, op).unwrap_or_else(|r| panic!("{op:?} refused: {r}"))
    });
    assert_eq!(
        s.record(2).effect,
        Some(memtx_model::record::Effect::Leaked)
    );
    assert!(!no_harm_from_known_doubt(&MemTx::new(gate), &s));
    // The protocol blocks the same call in the medium tier.
    let pre = run(&ops[..6]);
    assert!(step(&cfg(), &pre, &ops[6]).is_err());
}

#[test]
fn i4_breaks_when_a_record_enters_the_lifecycle_other_than_by_its_operation() {
    use memtx_model::record::Scope;
    let pre = State::initial();
    let op = observe(MID_A, 0, 0, Scope::Shared, 0);
    let good = step(&cfg(), &pre, &op).unwrap();
    assert!(lifecycle_legality(&model(), &good));
    // A defective Observe that creates the record directly in Committed (every move it
    // takes is a row of the table: only the entry is wrong).
    let mut bad = good.clone();
    for life in [Life::Tentative, Life::Validated, Life::Committed] {
        bad.move_record(0, life).unwrap();
    }
    let judged = judge(&pre, &op, bad);
    assert!(!lifecycle_legality(&model(), &judged));
    // A Stage that creates a Raw record; a Commit that creates one.
    let pre = run(&[begin_medium(0)]);
    let op = Op::from(belief(0, 0, 0));
    let good = step(&cfg(), &pre, &op).unwrap();
    assert!(lifecycle_legality(&model(), &good));
    let raw = judge(
        &pre,
        &op,
        step(&cfg(), &pre, &observe(MID_A, 0, 0, Scope::Shared, 0)).unwrap(),
    );
    assert!(!lifecycle_legality(&model(), &raw));
    let staged = good.clone();
    let judged = judge(&staged, &commit(0), {
        let mut post = step(&cfg(), &staged, &commit(0)).unwrap();
        post.push_record(memtx_model::Record::default());
        post
    });
    assert!(!lifecycle_legality(&model(), &judged));
}

#[test]
fn i5_breaks_when_a_read_is_of_a_record_outside_the_ghost_snapshot() {
    // a1 begins with an empty snapshot; a0 then commits r0. r0 is Committed, at a1's level,
    // but was committed after a1's snapshot: reading it is not a snapshot read.
    let pre = run(&[
        begin_medium(1),
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
    ]);
    let op = Op::from(summary(1, &[0]));
    assert!(step(&cfg(), &pre, &op).is_err(), "the protocol refuses it");
    let bad = step(&wide(Variant::NoSnapshotReads), &pre, &op).unwrap();
    let judged = judge(&pre, &op, bad);
    assert!(!isolation(&model(), &judged));
    // Control: a transaction begun after the commit reads it.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
        begin_medium(1),
    ]);
    let good = step(&cfg(), &pre, &op).unwrap();
    assert!(isolation(&model(), &good));
}

#[test]
fn i5_judges_adopt_as_a_read() {
    use memtx_model::record::Scope;
    // A raw observation, then a committed-read transaction: r0 is not in its snapshot.
    let pre = run(&[
        observe(MID_A, 0, 0, Scope::Shared, 0),
        begin(0, Tier::Medium, Isolation::CommittedRead),
    ]);
    let op = adopt(0, 0);
    assert!(step(&cfg(), &pre, &op).is_err(), "the protocol refuses it");
    let mut bad = pre.clone();
    bad.move_record(0, Life::Tentative).unwrap();
    bad.record_mut(0).writer = Some(0);
    let judged = judge(&pre, &op, bad);
    assert!(!isolation(&model(), &judged));
    // Control: adopted at raw-read.
    let pre = run(&[
        observe(MID_A, 0, 0, Scope::Shared, 0),
        begin(0, Tier::Medium, Isolation::RawRead),
    ]);
    assert!(isolation(&model(), &step(&cfg(), &pre, &op).unwrap()));
}

#[test]
fn the_order_of_the_pipeline_is_judged_a_reason_names_the_first_failing_check() {
    // r0 (high) says v0; a low-confidence mid write of v1 fails evidence first, and is also
    // outranked. A pipeline that ran the conflict check first would call it "outranked".
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).source(HIGH).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 1).low_confidence().into(),
    ]);
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::Evidence));
    assert!(evidence_at_commit(&model(), &good));
    let mut bad = good.clone();
    bad.move_record(1, Life::Revoked).unwrap();
    bad.record_mut(1).reason = Some(Reason::Outranked);
    let judged = judge(&pre, &commit(0), bad);
    assert!(
        adjudication(&model(), &judged),
        "the outranking itself is true"
    );
    assert!(
        !evidence_at_commit(&model(), &judged),
        "but evidence came first"
    );
    // An expired write (valid from tick 1, committed at 0) reported outranked: I11.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).source(HIGH).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 1).valid_from(1).into(),
    ]);
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::Expired));
    let mut bad = good.clone();
    bad.move_record(1, Life::Revoked).unwrap();
    bad.record_mut(1).reason = Some(Reason::Outranked);
    let judged = judge(&pre, &commit(0), bad);
    assert!(!validity_at_commit(&model(), &judged));
    assert!(validity_at_commit(&model(), &good));
}

#[test]
fn i13_breaks_when_a_record_commits_over_a_parent_not_yet_committed() {
    // a1 reads a0's staged r0 at tentative-read and stages a summary r1 over it.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        begin(1, Tier::Medium, Isolation::TentativeRead),
        summary(1, &[0]).into(),
    ]);
    let bad = judge(&pre, &commit(1), hand_commit(&pre, 1, &[1]));
    assert!(!sound_lineage_at_commit(&model(), &bad));
    let good = step(&cfg(), &pre, &commit(1)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::UncommittedParent));
    assert!(sound_lineage_at_commit(&model(), &good));
    // A parent committed earlier in the same commit passes.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        summary(0, &[0]).into(),
    ]);
    let both = judge(&pre, &commit(0), hand_commit(&pre, 0, &[0, 1]));
    assert!(sound_lineage_at_commit(&model(), &both));
}

#[test]
fn i18_breaks_when_an_irreversible_call_executes_over_an_ancestor_not_in_force() {
    // r1 summarises r0, both committed; then r0 leaves force (a hand-made move: the protocol
    // would have repaired r1), and a call on r1 executes with the gate removed.
    let mut pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        summary(0, &[0]).into(),
        commit(0),
        begin_medium(0),
    ]);
    let call = irreversible(0, &[1]);
    let intact = step(&cfg(), &pre, &call).unwrap();
    assert!(
        zero_downstream_harm(&model(), &intact),
        "a call on a closure in force"
    );
    pre.move_record(0, Life::Quarantined).unwrap();
    let bad = step(&wide(Variant::NoActionGate), &pre, &call).unwrap();
    assert!(!zero_downstream_harm(&model(), &bad));
    // The protocol's gate refuses the same call and names the ancestor.
    let refused = step(&cfg(), &pre, &call).unwrap_err().to_string();
    assert!(
        refused.contains("r0, an ancestor of support r1"),
        "{refused}"
    );
    // Expired ancestors and another agent's Private support break it too.
    let mut expired = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        summary(0, &[0]).into(),
        commit(0),
        begin_medium(0),
    ]);
    expired.record_mut(0).validity.until = 0;
    let bad = step(&wide(Variant::NoActionGate), &expired, &call).unwrap();
    assert!(!zero_downstream_harm(&model(), &bad));
    // Another agent's Private support: the ghost judges the same executed call from a state
    // in which the caller may not see it (a step no enabling condition would allow).
    let ordinary = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
        begin_medium(0),
    ]);
    let call = irreversible(0, &[0]);
    let post = step(&cfg(), &ordinary, &call).unwrap();
    assert!(zero_downstream_harm(&model(), &post));
    let mut foreign = ordinary.clone();
    foreign.record_mut(0).scope = memtx_model::record::Scope::Private;
    foreign.record_mut(0).owner = 1;
    let post = judge(&foreign, &call, post);
    assert!(!zero_downstream_harm(&model(), &post));
}

#[test]
fn i17_breaks_when_an_external_action_call_passes_on_a_record_its_caller_may_not_see() {
    // a1 commits a Private belief as ActionSafe; a0's external-action snapshot holds it and
    // nothing else. The protocol's gate refuses a0's call; a hand-made step that executes it
    // (the gate removed) breaks I17. a1's own call on the same view holds.
    let pre = run(&[
        begin_external(1),
        belief(1, 0, 0).private().into(),
        commit(1),
        begin_external(0),
        begin_external(1),
    ]);
    let call = irreversible(0, &[]);
    let refused = step(&cfg(), &pre, &call).unwrap_err().to_string();
    assert!(refused.contains("condition 2"), "{refused}");
    let bad = step(&wide(Variant::NoActionGate), &pre, &call).unwrap();
    assert!(!scope_non_interference(&model(), &bad));
    let own = step(&cfg(), &pre, &irreversible(1, &[])).unwrap();
    assert!(scope_non_interference(&model(), &own));
}

/// a0's Shared belief r0 (mid source B) committed; a1 has staged a contradicting Private one,
/// r1, from `source`.
fn shared_truth_and_private_rival(source: u8) -> State {
    run(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_B).into(),
        commit(0),
        begin_medium(1),
        belief(1, 0, 1).source(source).private().into(),
    ])
}

#[test]
fn i17_breaks_when_a_narrower_record_supersedes_a_wider_one() {
    // a1's Private high-authority r1 superseding a0's Shared r0 (revision 2's rules) leaves a0
    // with no value at all. The protocol sends r1 to scope review instead.
    let pre = shared_truth_and_private_rival(HIGH);
    let mut bad = hand_commit(&pre, 1, &[1]);
    bad.move_record(0, Life::Superseded).unwrap();
    bad.record_mut(0).reason = Some(Reason::SupersededByAuthority);
    let bad = judge(&pre, &commit(1), bad);
    assert!(!scope_non_interference(&model(), &bad));
    assert!(adjudication(&model(), &bad), "entitled by authority alone");
    let good = step(&cfg(), &pre, &commit(1)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::ScopeReview));
    assert!(scope_non_interference(&model(), &good));
    assert!(adjudication(&model(), &good));
}

#[test]
fn i17_breaks_when_a_commit_is_aborted_by_a_rival_its_writer_may_not_see() {
    // a1's Private r0 is committed; a0, who may not see it, stages a Shared r1. Aborting r1 as
    // outranked by a higher-authority r0, or sending it to review over an equal-authority r0
    // of another source, tells a0 that r0 exists.
    let hidden_rival = |source: u8| {
        run(&[
            begin_medium(1),
            belief(1, 0, 1).source(source).private().into(),
            commit(1),
            begin_medium(0),
            belief(0, 0, 0).source(MID_B).into(),
        ])
    };
    for (source, life, reason) in [
        (HIGH, Life::Revoked, Reason::Outranked),
        (MID_A, Life::Quarantined, Reason::Review),
    ] {
        let pre = hidden_rival(source);
        let mut bad = pre.clone();
        bad.move_record(1, life).unwrap();
        bad.record_mut(1).reason = Some(reason);
        bad.record_mut(1).writer = None;
        bad.set_txn(0, None);
        let bad = judge(&pre, &commit(0), bad);
        assert!(!scope_non_interference(&model(), &bad), "{reason:?}");
    }
    let pre = hidden_rival(HIGH);
    // The protocol commits r1 and sends the narrower hidden r0 to its owner's review.
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(1).life(), Life::Committed);
    assert_eq!(good.record(0).reason, Some(Reason::ScopeReview));
    assert!(scope_non_interference(&model(), &good));
    assert!(adjudication(&model(), &good));
    // A reason that no rival explains at all is the conflict check's own error (I12).
    let lone = run(&[begin_medium(0), belief(0, 0, 0).into()]);
    let mut bad = lone.clone();
    bad.move_record(0, Life::Revoked).unwrap();
    bad.record_mut(0).reason = Some(Reason::Outranked);
    bad.record_mut(0).writer = None;
    bad.set_txn(0, None);
    let bad = judge(&lone, &commit(0), bad);
    assert!(!adjudication(&model(), &bad));
    assert!(scope_non_interference(&model(), &bad));
}

#[test]
fn i12_breaks_when_a_truth_leaves_force_for_scope_review_without_a_wider_winner() {
    // a0's Private r0 and a1's Private r1 disagree; neither is narrower than the other. A
    // commit of r1 that sends r0 to scope review takes a0's truth away without cause.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_A).private().into(),
        commit(0),
        begin_medium(1),
        belief(1, 0, 1).source(HIGH).private().into(),
    ]);
    let mut bad = hand_commit(&pre, 1, &[1]);
    bad.move_record(0, Life::Quarantined).unwrap();
    bad.record_mut(0).reason = Some(Reason::ScopeReview);
    let bad = judge(&pre, &commit(1), bad);
    assert!(!adjudication(&model(), &bad));
    let good = step(&cfg(), &pre, &commit(1)).unwrap();
    assert_eq!(good.record(0).life(), Life::Committed);
    assert!(adjudication(&model(), &good));
}

#[test]
fn i6_breaks_when_an_agent_sees_two_truths() {
    // a1's Private r1 stands beside a0's Shared r0 (no scope review): a1 sees both values.
    let pre = shared_truth_and_private_rival(MID_A);
    let bad = hand_commit(&pre, 1, &[1]);
    assert!(!one_truth_per_slot(&model(), &bad));
    // Two Private records of different owners: each owner sees one.
    let mut two_private = bad.clone();
    two_private.record_mut(0).scope = memtx_model::record::Scope::Private;
    assert!(one_truth_per_slot(&model(), &two_private));
    let good = step(&cfg(), &pre, &commit(1)).unwrap();
    assert!(one_truth_per_slot(&model(), &good));
}

#[test]
fn i15_breaks_when_a_record_carries_private_content_it_did_not_declare() {
    // The source blind spot (§11): a0 commits a Private r0, then in a later transaction of the
    // same session writes the same value as a Shared r1 declaring no parent.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 1).private().into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 1).source(MID_B).into(),
    ]);
    let bad = judge(&pre, &commit(0), hand_commit(&pre, 0, &[1]));
    assert!(!content_scope(&model(), &bad));
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::ContentPermission));
    assert!(content_scope(&model(), &good));
    // Its reading half: a1 served the laundered r1 (a protocol that ignored content in
    // visibility) may not see a0's Private r0 in it.
    let before_read = step(&cfg(), &bad, &begin_medium(1)).unwrap();
    let mut clean = before_read.clone();
    clean.ghost.violated = Default::default();
    let read_clean = judge(&clean, &read(1, 1), clean.clone());
    assert!(
        !content_scope(&model(), &read_clean),
        "a read of private content"
    );
    let own = judge(&clean, &read(0, 0), clean.clone());
    assert!(
        content_scope(&model(), &own),
        "its owner reading its own record"
    );
}

/// a0's r0 is aborted as a stale late write against a1's correction r1; a0 then retries the
/// same value as r2 in a fresh transaction, in the same session or (`new_session`) a new one.
fn stale_retry(new_session: bool) -> Vec<Op> {
    let mut ops = vec![
        begin_medium(0),
        belief(0, 0, 0).source(MID_B).into(),
        begin_medium(1),
        belief(1, 0, 1).source(MID_B).into(),
        commit(1),
        commit(0),
    ];
    if new_session {
        ops.push(end_session(0));
    }
    ops.extend([begin_medium(0), belief(0, 0, 0).source(MID_B).into()]);
    ops
}

#[test]
fn i16_breaks_when_a_retried_stale_write_commits() {
    // The temporal blind spot (§11), in the same session.
    let pre = run(&stale_retry(false));
    assert_eq!(pre.record(0).reason, Some(Reason::StaleWrite));
    // A protocol that judged staleness by the snapshot: r2 corrects r1 (same source).
    let mut bad = hand_commit(&pre, 0, &[2]);
    bad.move_record(1, Life::Superseded).unwrap();
    bad.record_mut(1).reason = Some(Reason::SupersededByCorrection);
    let bad = judge(&pre, &commit(0), bad);
    assert!(!no_stale_content(&model(), &bad));
    assert!(
        no_stale_override(&model(), &bad),
        "not stale by its snapshot"
    );
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(2).reason, Some(Reason::StaleContent));
    assert_eq!(good.record(1).life(), Life::Committed);
    assert!(no_stale_content(&model(), &good));
    // A new session observes afresh: the retry is then a new observation and commits.
    let mut fresh = stale_retry(true);
    fresh.push(commit(0));
    let fresh = run(&fresh);
    assert_eq!(fresh.record(2).life(), Life::Committed);
    assert!(no_stale_content(&model(), &fresh));
}

#[test]
fn i16_blames_the_record_that_superseded_a_rival_not_one_committed_beside_it() {
    // Found by `memtx simulate --preset full`: in one commit a fresh record displaced a
    // correction, and a stale record asserting the same value committed after it (records
    // pass in id order, §5). The stale one displaced nothing: no harm, no violation; had the
    // stale one come first, it would have displaced the correction.
    let mut ops = stale_retry(true);
    ops.push(belief(0, 0, 0).source(MID_B).into());
    let pre = run(&ops);
    let post = |stale: RecordId| {
        let mut s = hand_commit(&pre, 0, &[2, 3]);
        s.move_record(1, Life::Superseded).unwrap();
        s.record_mut(1).reason = Some(Reason::SupersededByCorrection);
        s.record_mut(stale).ghost_observed = Some(0);
        judge(&pre, &commit(0), s)
    };
    assert!(
        no_stale_content(&model(), &post(3)),
        "r2, fresh, displaced r1; stale r3 only commits beside it"
    );
    assert!(
        !no_stale_content(&model(), &post(2)),
        "stale r2 displaced r1"
    );
}

#[test]
fn i18_breaks_when_a_call_executes_on_a_transcription_of_a_record_in_doubt() {
    // a0 commits r0; in a later transaction of the same session it writes the same value as
    // r1 declaring no parent (r1 transcribes r0, §6 (ii)); r0's revocation is requested; a0
    // calls an irreversible tool on r1.
    let ops = [
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 0).source(MID_B).into(),
        commit(0),
        request_revocation(0),
        begin_medium(0),
        irreversible(0, &[1]),
    ];
    let under = |variant: Variant| {
        let cfg = wide(variant);
        let mut s = State::initial();
        for op in &ops {
            match step(&cfg, &s, op) {
                Ok(next) => s = next,
                Err(refusal) => return Err(refusal.to_string()),
            }
        }
        Ok(s)
    };
    // The protocol's gate counts r0 in r1's support closure and refuses the call.
    let refused = under(Variant::Memtx).unwrap_err();
    assert!(refused.contains("r0"), "{refused}");
    // A transaction-scoped context forgot r0 at Begin: the call executes, on content whose
    // source is already in doubt.
    let txn = under(Variant::TxnProvenance).expect("txn-provenance lets the call through");
    assert_eq!(txn.len(), 3, "the call executed");
    assert!(!zero_downstream_harm(
        &MemTx::new(wide(Variant::TxnProvenance)),
        &txn
    ));
    // Under the paper's protocol the support closure is declared ancestry only (§9 I18: "under
    // provenance follows content"): the same call is not I18's harm there.
    let paper = under(Variant::PaperProvenance).expect("the paper's gate lets it through");
    assert!(zero_downstream_harm(
        &MemTx::new(wide(Variant::PaperProvenance)),
        &paper
    ));
}
