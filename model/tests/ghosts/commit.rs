//! What one commit decides (`ghost/commit.rs`): I10 evidence, I11 validity and I13 sound
//! lineage for what commits, the truth of every reason given, and the pipeline's order.

use super::*;

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
    // Validity is half-open: a record valid over [0, 1) has expired when the clock reads 1.
    let at_tick_1 = |until: u8| {
        let pre = run(&[
            begin_medium(0),
            belief(0, 0, 0).valid(0, until).into(),
            tick(),
        ]);
        assert_eq!(pre.clock, 1);
        judge(&pre, &commit(0), hand_commit(&pre, 0, &[0]))
    };
    assert!(!validity_at_commit(&model(), &at_tick_1(1)), "ended at 1");
    assert!(validity_at_commit(&model(), &at_tick_1(2)), "ends at 2");
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
fn i13_breaks_when_a_record_commits_over_a_parent_superseded_earlier_in_the_same_commit() {
    // a0 stages r0, a correction r1 of it (same slot and source, another value), and a view
    // r2 over r0. The records of a commit pass in id order: r1 supersedes r0 before r2 is
    // judged, so r2 stands on a parent already out of force.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        belief(0, 0, 1).into(),
        summary(0, &[0]).into(),
    ]);
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(0).life(), Life::Superseded);
    assert_eq!(good.record(2).reason, Some(Reason::InactiveParent));
    assert!(sound_lineage_at_commit(&model(), &good));
    let mut bad = hand_commit(&pre, 0, &[0, 1, 2]);
    bad.move_record(0, Life::Superseded).unwrap();
    bad.record_mut(0).reason = Some(Reason::SupersededByCorrection);
    assert!(!sound_lineage_at_commit(
        &model(),
        &judge(&pre, &commit(0), bad)
    ));
}
