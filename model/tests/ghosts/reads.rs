//! I5 isolation (`ghost/reads.rs`): the ghost's own snapshot and every read judged against it.

use super::*;

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

/// `Read` (revision 3: serving a record into an agent's context) is a read like any other:
/// a record committed after the reader's snapshot was taken breaks I5 when served to it.
#[test]
fn i5_judges_a_served_record_as_a_read() {
    let pre = run(&[
        begin_medium(1),
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
    ]);
    let op = read(1, 0);
    // A protocol that served it anyway: the ghost judges the step.
    let judged = judge(&pre, &op, pre.clone());
    assert!(!isolation(&model(), &judged), "a read outside the snapshot");
    // Control: a transaction begun after the commit is served it.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
        begin_medium(1),
    ]);
    let judged = judge(&pre, &op, pre.clone());
    assert!(isolation(&model(), &judged));
}

#[test]
fn i5_judges_adopt_as_a_read() {
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
fn i5_judges_a_rebuilt_view_as_a_new_version_outside_every_snapshot() {
    // a0's view r2 over r0 and r1 is committed; a1 begins (r2 in its snapshot); r0 is revoked,
    // r2 quarantined by the cascade and rebuilt by a0 over r1 alone: a new, uncommitted
    // version that a1's snapshot never captured (§4). Serving it to a1 is no snapshot read.
    let pre = run(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        belief(0, 1, 0).into(),
        summary(0, &[0, 1]).into(),
        commit(0),
        begin_medium(1),
        request_revocation(0),
        apply_revocation(0),
        begin_medium(0),
        rebuild(2),
    ]);
    assert_eq!(pre.record(2).life(), Life::Tentative);
    assert!(
        !pre.txn(1).unwrap().snapshot.contains(2),
        "the protocol forgets it"
    );
    let served = |id: RecordId| judge(&pre, &read(1, id), pre.clone());
    assert!(!isolation(&model(), &served(2)), "the rebuilt r2");
    assert!(isolation(&model(), &served(1)), "control: r1, untouched");
}
