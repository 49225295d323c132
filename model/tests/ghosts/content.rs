//! What each record carries and each agent was served (`ghost/content.rs`): I15 content
//! scope and I16 no stale content.

use super::*;

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
fn i16_judges_an_adopted_record_by_what_its_committer_may_see_not_its_owner() {
    // a1's Private r0 is committed (sequence 0); a0's Shared tool result r1 is adopted by a1.
    // Set by hand: r1 was observed before r0 was committed (sequence 0). Its committer a1 may
    // see r0, so r1 committed beside it is stale; its owner a0 may not, and judging by the
    // owner's eyes would let it pass.
    let mut pre = run(&[
        begin_medium(1),
        belief(1, 0, 1).private().into(),
        commit(1),
        observe(MID_B, 0, 0, Scope::Shared, 0),
        begin(1, Tier::Medium, Isolation::RawRead),
        adopt(1, 1),
    ]);
    assert_eq!((pre.record(1).owner, pre.record(0).owner), (0, 1));
    let committed_beside = |pre: &State| judge(pre, &commit(1), hand_commit(pre, 1, &[1]));
    assert_eq!(
        pre.record(1).ghost_observed,
        Some(1),
        "adopted at a1's snapshot"
    );
    assert!(
        no_stale_content(&model(), &committed_beside(&pre)),
        "control: observed after r0 was committed"
    );
    pre.record_mut(1).ghost_observed = Some(0);
    assert!(
        !no_stale_content(&model(), &committed_beside(&pre)),
        "observed before r0, committed beside it by a1, who may see it"
    );
}
