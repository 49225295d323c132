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
