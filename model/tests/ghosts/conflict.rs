//! Semantic conflict over history (`ghost/conflict.rs`): I7 no stale override, I12
//! adjudication, I17's pipeline parts; and I6, one truth per slot in every view.

use super::*;

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
    // Kept by hand: r1 supersedes r0 (mid, an equal authority: review may) and r2 (high: it
    // may not), each logged as superseded by review.
    let kept = |supersede: &[RecordId]| {
        let mut post = pre.clone();
        for &x in supersede {
            post.move_record(x, Life::Superseded).unwrap();
            post.record_mut(x).reason = Some(Reason::SupersededByReview);
        }
        post.move_record(1, Life::Validated).unwrap();
        post.move_record(1, Life::Committed).unwrap();
        judge(&pre, &resolve(1, true), post)
    };
    assert!(!adjudication(&model(), &kept(&[0, 2])), "over the high r2");
    assert!(
        adjudication(&model(), &kept(&[0])),
        "control: over the mid r0 alone"
    );
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
        let bad = judge(&pre, &commit(0), refuse(closed(&pre, 0), 1, life, reason));
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
    let bad = refuse(closed(&lone, 0), 0, Life::Revoked, Reason::Outranked);
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
    two_private.record_mut(0).scope = Scope::Private;
    assert!(one_truth_per_slot(&model(), &two_private));
    let good = step(&cfg(), &pre, &commit(1)).unwrap();
    assert!(one_truth_per_slot(&model(), &good));
}

#[test]
fn i12_breaks_when_a_truth_leaves_force_for_review_outside_any_commit() {
    // Only a commit's wider winner sends a belief in force to scope review. A step that
    // commits nothing (a tick, here) and quarantines a0's committed r0 for it takes a truth
    // out of force with no winner at all.
    let pre = run(&[begin_medium(0), belief(0, 0, 0).into(), commit(0)]);
    let good = step(&cfg(), &pre, &tick()).unwrap();
    assert_eq!(good.record(0).life(), Life::Committed);
    assert!(adjudication(&model(), &judge(&pre, &tick(), good.clone())));
    let mut bad = good;
    bad.move_record(0, Life::Quarantined).unwrap();
    bad.record_mut(0).reason = Some(Reason::ScopeReview);
    assert!(!adjudication(&model(), &judge(&pre, &tick(), bad)));
}

#[test]
fn i12_breaks_when_a_commit_stands_over_an_equal_rival_that_a_later_record_displaced() {
    // a0's r0 (mid source A) is committed; a0 stages r1 and r2, both contradicting it, one
    // from mid source B (an equal rival: review) and one from the high source (it supersedes
    // r0). Records of a commit are judged in id order.
    let pre = |first: u8, second: u8| {
        run(&[
            begin_medium(0),
            belief(0, 0, 0).source(MID_A).into(),
            commit(0),
            begin_medium(0),
            belief(0, 0, 1).source(first).into(),
            belief(0, 0, 1).source(second).into(),
        ])
    };
    // Mid r1 first: r0 still stood when r1 was judged; that r2 superseded it afterwards
    // does not excuse r1's commit over it.
    let mid_first = pre(MID_B, HIGH);
    let mut bad = hand_commit(&mid_first, 0, &[1, 2]);
    bad.move_record(0, Life::Superseded).unwrap();
    bad.record_mut(0).reason = Some(Reason::SupersededByAuthority);
    assert!(!adjudication(&model(), &judge(&mid_first, &commit(0), bad)));
    let good = step(&cfg(), &mid_first, &commit(0)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::Review));
    assert!(adjudication(&model(), &good));
    // High r1 first, but r0 left standing: r2 was committed over an equal rival in force
    // (that r1 contradicts r0 too does not take r0 out of force).
    let high_first = pre(HIGH, MID_B);
    let bad = hand_commit(&high_first, 0, &[1, 2]);
    assert!(!adjudication(
        &model(),
        &judge(&high_first, &commit(0), bad)
    ));
    let good = step(&cfg(), &high_first, &commit(0)).unwrap();
    assert_eq!(good.record(0).life(), Life::Superseded);
    assert!(adjudication(&model(), &good));
}

#[test]
fn i17_breaks_when_the_only_entitled_winner_is_narrower_whatever_else_commits() {
    // a0's Shared r0 (mid source A); a1 commits a Private high r1 and a Public mid r2 (source
    // B), both contradicting r0. Only r1 is entitled to supersede r0 (by authority): r2 is an
    // equal rival of another source. r0 superseded is then superseded by a narrower record.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_A).into(),
        commit(0),
        begin_medium(1),
        belief(1, 0, 1).source(HIGH).private().into(),
        belief(1, 0, 1).source(MID_B).public().into(),
    ]);
    let mut bad = hand_commit(&pre, 1, &[1, 2]);
    bad.move_record(0, Life::Superseded).unwrap();
    bad.record_mut(0).reason = Some(Reason::SupersededByAuthority);
    let bad = judge(&pre, &commit(1), bad);
    assert!(!scope_non_interference(&model(), &bad));
    let good = step(&cfg(), &pre, &commit(1)).unwrap();
    assert!(scope_non_interference(&model(), &good));
}

#[test]
fn i7_breaks_when_a_commit_stands_over_a_rival_committed_after_its_snapshot() {
    // a0 begins and stages r0; a1 then commits a contradicting r1 of the same source. r0's
    // commit would stand over a rival committed after a0's snapshot: a stale late write.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_B).into(),
        begin_medium(1),
        belief(1, 0, 1).source(MID_B).into(),
        commit(1),
    ]);
    let mut bad = hand_commit(&pre, 0, &[0]);
    bad.move_record(1, Life::Superseded).unwrap();
    bad.record_mut(1).reason = Some(Reason::SupersededByCorrection);
    assert!(!no_stale_override(&model(), &judge(&pre, &commit(0), bad)));
    // The protocol aborts it; the aborted record, still the transaction's, is no commit.
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(0).reason, Some(Reason::StaleWrite));
    assert!(no_stale_override(&model(), &good));
    // Control: staged after a1's commit, in a snapshot that holds r1, r0 corrects it.
    let fresh = run(&[
        begin_medium(1),
        belief(1, 0, 1).source(MID_B).into(),
        commit(1),
        begin_medium(0),
        belief(0, 0, 0).source(MID_B).into(),
        commit(0),
    ]);
    assert_eq!(fresh.record(0).reason, Some(Reason::SupersededByCorrection));
    assert!(no_stale_override(&model(), &fresh));
}
