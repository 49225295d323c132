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
    let mut bad = refuse(closed(&pre, 0), 0, Life::Quarantined, Reason::Evidence);
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
        judge(&pre, &commit(0), refuse(closed(&pre, 0), 0, life, reason))
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
    let s = refuse(Life::Revoked, Reason::StaleContent);
    assert!(
        !no_stale_content(&m, &s),
        "stale content without a newer rival"
    );
    let s = refuse(Life::Quarantined, Reason::ScopeReview);
    assert!(!adjudication(&m, &s), "scope review without a wider rival");
    let s = refuse(Life::Revoked, Reason::RevokedParent);
    assert!(
        !sound_lineage_at_commit(&m, &s),
        "revoked parent without a parent"
    );
    let s = refuse(Life::Quarantined, Reason::ContentPermission);
    assert!(
        !content_scope(&m, &s),
        "content permission without private content"
    );
}

/// A conflict reason given over a rival that makes it *almost* true: the rival is there,
/// but one part of the reason's condition fails. Each is refused; the protocol's own outcome
/// on the same staging holds.
#[test]
fn a_conflict_reason_over_a_rival_that_misses_one_part_of_it_is_not_true() {
    // a0's r0 committed; a0 then stages r1 (another value) from `source`, in `scope`. The
    // record judged is the last one staged.
    let pre = |r0: Stage, source: u8, scope: Scope| {
        run(&[
            begin_medium(0),
            r0.into(),
            commit(0),
            begin_medium(0),
            belief(0, 0, 1).source(source).scope(scope).into(),
        ])
    };
    let shared = |source: u8| belief(0, 0, 0).source(source);
    let m = model();
    for (what, pre, life, reason, holds) in [
        (
            "stale content: r0 was committed before r1's observation",
            pre(shared(MID_A), MID_A, Scope::Shared),
            Life::Revoked,
            Reason::StaleContent,
            no_stale_content as fn(&MemTx, &State) -> bool,
        ),
        (
            "outranked by a rival of equal authority",
            pre(shared(MID_A), MID_B, Scope::Shared),
            Life::Revoked,
            Reason::Outranked,
            adjudication,
        ),
        (
            "review against a rival of r1's own source (a correction)",
            pre(shared(MID_A), MID_A, Scope::Shared),
            Life::Quarantined,
            Reason::Review,
            adjudication,
        ),
        (
            "scope review against a rival no wider than r1",
            pre(shared(LOW), HIGH, Scope::Shared),
            Life::Quarantined,
            Reason::ScopeReview,
            adjudication,
        ),
        (
            "scope review against a wider lower rival while a higher one stands",
            // r0 (low, Public) and r1 (high, Shared) say v0; r2 (mid) says v1.
            run(&[
                begin_medium(0),
                belief(0, 0, 0).source(LOW).public().into(),
                belief(0, 0, 0).source(HIGH).into(),
                commit(0),
                begin_medium(0),
                belief(0, 0, 1).source(MID_A).into(),
            ]),
            Life::Quarantined,
            Reason::ScopeReview,
            adjudication,
        ),
    ] {
        let id = pre.len() as RecordId - 1;
        let good = step(&cfg(), &pre, &commit(0)).unwrap();
        assert!(holds(&m, &good), "{what}: the protocol's own outcome");
        assert_ne!(good.record(id).reason, Some(reason), "{what}");
        let bad = refuse(closed(&pre, 0), id, life, reason);
        assert!(!holds(&m, &judge(&pre, &commit(0), bad)), "{what}");
    }
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
    // a0 stages r0 (mid source A), r1 superseding it (another value, from the same source: a
    // correction; or from the high source), and a view r2 over r0. The records of a commit
    // pass in id order: r1 supersedes r0 before r2 is judged, so r2 stands on a parent
    // already out of force.
    for (source, why) in [
        (MID_A, Reason::SupersededByCorrection),
        (HIGH, Reason::SupersededByAuthority),
    ] {
        let pre = run(&[
            begin_medium(0),
            belief(0, 0, 0).into(),
            belief(0, 0, 1).source(source).into(),
            summary(0, &[0]).into(),
        ]);
        let good = step(&cfg(), &pre, &commit(0)).unwrap();
        assert_eq!(good.record(0).reason, Some(why));
        assert_eq!(good.record(2).reason, Some(Reason::InactiveParent));
        assert!(sound_lineage_at_commit(&model(), &good));
        let mut bad = hand_commit(&pre, 0, &[0, 1, 2]);
        bad.move_record(0, Life::Superseded).unwrap();
        bad.record_mut(0).reason = Some(why);
        assert!(
            !sound_lineage_at_commit(&model(), &judge(&pre, &commit(0), bad)),
            "{why:?}"
        );
    }
}

#[test]
fn a_reason_of_a_later_check_is_not_true_of_a_record_that_failed_evidence() {
    // r1, a low-confidence mid belief over the committed r0, fails the evidence check, the
    // first of the pipeline: no later check's reason may be given to it.
    let pre = run(&[
        begin_medium(0),
        belief(0, 1, 0).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 1).low_confidence().parents(&[0]).into(),
    ]);
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::Evidence));
    assert!(evidence_at_commit(&model(), &good));
    for (life, reason) in [
        (Life::Quarantined, Reason::Expired),
        (Life::Quarantined, Reason::InactiveParent),
        (Life::Revoked, Reason::RevokedParent),
        (Life::Quarantined, Reason::Permission),
        (Life::Quarantined, Reason::UnstableDependency),
    ] {
        let bad = refuse(good.clone(), 1, life, reason);
        assert!(
            !evidence_at_commit(&model(), &judge(&pre, &commit(0), bad)),
            "{reason:?} given past a failed evidence check"
        );
    }
}

#[test]
fn permission_is_not_true_of_a_record_whose_ancestors_are_as_wide_as_it() {
    // r1, Shared, over a0's committed Shared r0: no ancestor is narrower, so quarantining r1
    // "for permission" (laundering) is false.
    let pre = run(&[
        begin_medium(0),
        belief(0, 1, 0).into(),
        commit(0),
        begin_medium(0),
        summary(0, &[0]).into(),
    ]);
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert!(good.record(1).life().is_committed());
    let mut bad = refuse(closed(&pre, 0), 1, Life::Quarantined, Reason::Permission);
    let judged = judge(&pre, &commit(0), bad.clone());
    let m = model();
    assert!(!memtx_model::properties::no_permission_laundering(
        &m, &judged
    ));
    // Control: over a Private r0 it is true.
    let mut narrower = pre.clone();
    narrower.record_mut(0).scope = Scope::Private;
    bad.record_mut(0).scope = Scope::Private;
    let judged = judge(&narrower, &commit(0), bad);
    assert!(memtx_model::properties::no_permission_laundering(
        &m, &judged
    ));
}

#[test]
fn a_reason_of_a_later_check_is_not_true_of_a_record_that_failed_the_conflict_check() {
    // r0 (slot 1) is committed, then its revocation requested: anything over it is an
    // unstable dependency (§6's last check). The last record staged, a mid belief of v1 over
    // r0, is outranked by a high rival of v0 first: one committed before (`earlier: false`)
    // or earlier in the same commit.
    for earlier in [false, true] {
        let high = Op::from(belief(0, 0, 0).source(HIGH));
        let mut ops = vec![begin_medium(0), belief(0, 1, 0).into()];
        if !earlier {
            ops.push(high.clone());
        }
        ops.extend([commit(0), begin_medium(0)]);
        if earlier {
            ops.push(high.clone());
        }
        ops.extend([
            belief(0, 0, 1).source(MID_A).parents(&[0]).into(),
            request_revocation(0),
        ]);
        let pre = run(&ops);
        let id = pre.len() as RecordId - 1;
        let good = step(&cfg(), &pre, &commit(0)).unwrap();
        assert_eq!(good.record(id).reason, Some(Reason::Outranked), "{earlier}");
        assert!(adjudication(&model(), &good));
        let post = if earlier {
            hand_commit(&pre, 0, &[1])
        } else {
            closed(&pre, 0)
        };
        let bad = refuse(post, id, Life::Quarantined, Reason::UnstableDependency);
        let judged = judge(&pre, &commit(0), bad);
        assert!(
            sound_lineage_at_commit(&model(), &judged),
            "{earlier}: the reason itself is true"
        );
        assert!(
            !adjudication(&model(), &judged),
            "{earlier}: but the conflict check came first"
        );
    }
}

#[test]
fn a_reason_of_a_later_check_is_not_true_of_a_record_that_would_displace_a_wider_rival() {
    // r0, Public, says v0 from `source`; r1 (slot 1) is committed beside it, then its
    // revocation requested. r2, Shared, mid source A, says v1 over r1: it would displace the
    // wider r0 (of lower authority, or its own earlier write), so the conflict check sends it
    // to scope review before any later check is reached.
    for source in [LOW, MID_A] {
        let pre = run(&[
            begin_medium(0),
            belief(0, 0, 0).source(source).public().into(),
            belief(0, 1, 0).into(),
            commit(0),
            begin_medium(0),
            belief(0, 0, 1).source(MID_A).parents(&[1]).into(),
            request_revocation(1),
        ]);
        let good = step(&cfg(), &pre, &commit(0)).unwrap();
        assert_eq!(good.record(2).reason, Some(Reason::ScopeReview), "{source}");
        assert!(scope_non_interference(&model(), &good));
        let bad = refuse(
            closed(&pre, 0),
            2,
            Life::Quarantined,
            Reason::UnstableDependency,
        );
        let judged = judge(&pre, &commit(0), bad);
        assert!(
            sound_lineage_at_commit(&model(), &judged),
            "{source}: the reason itself is true"
        );
        assert!(
            !scope_non_interference(&model(), &judged),
            "{source}: but the conflict check came first"
        );
    }
}

#[test]
fn a_reason_of_a_later_check_is_not_true_of_a_record_expired_at_the_clock() {
    // r1 over r0 is valid over [0, 1); the clock reads 1 at the commit, and r0's revocation
    // is requested. Validity is checked before dependency stability: r1 is expired first.
    let pre = run(&[
        begin_medium(0),
        belief(0, 1, 0).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 1).valid(0, 1).parents(&[0]).into(),
        tick(),
        request_revocation(0),
    ]);
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(1).reason, Some(Reason::Expired));
    assert!(validity_at_commit(&model(), &good));
    let mut bad = good.clone();
    bad.record_mut(1).reason = Some(Reason::UnstableDependency);
    let judged = judge(&pre, &commit(0), bad);
    assert!(sound_lineage_at_commit(&model(), &judged), "true in itself");
    assert!(!validity_at_commit(&model(), &judged), "but expired first");
}

#[test]
fn i13_breaks_when_a_record_commits_over_an_ancestor_already_out_of_force() {
    // a0 commits r0 and a view r1 over it; a1 stages a view r2 over r1; a0 then supersedes
    // r0 by a high r3. r2's parent r1 is in force, but its lineage holds r0, out of force
    // before a1's commit begins.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        summary(0, &[0]).into(),
        commit(0),
        begin_medium(1),
        summary(1, &[1]).into(),
        begin_medium(0),
        belief(0, 0, 1).source(HIGH).into(),
        commit(0),
    ]);
    assert_eq!(pre.record(0).life(), Life::Superseded);
    assert!(pre.record(1).life().is_committed(), "the view r1 stands");
    let good = step(&cfg(), &pre, &commit(1)).unwrap();
    assert_eq!(good.record(2).reason, Some(Reason::InactiveParent));
    assert!(sound_lineage_at_commit(&model(), &good));
    let bad = judge(&pre, &commit(1), hand_commit(&pre, 1, &[2]));
    assert!(!sound_lineage_at_commit(&model(), &bad));
}
