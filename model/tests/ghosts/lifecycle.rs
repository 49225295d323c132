//! The lifecycle: I2 cascade-repair completeness on the retracting step (`ghost/cascade.rs`)
//! and I4 lifecycle legality (`ghost/entry.rs`).

use super::*;

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
fn i4_breaks_when_a_record_enters_the_lifecycle_other_than_by_its_operation() {
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
    // A tool call creates an action in force: not a belief in force, nor an action that
    // waits in Tentative.
    let pre = run(&[begin_medium(0)]);
    let call = irreversible(0, &[]);
    let good = step(&cfg(), &pre, &call).unwrap();
    assert!(lifecycle_legality(&model(), &good));
    let mut belief_in_force = good.clone();
    belief_in_force.record_mut(0).kind = memtx_model::record::Kind::Belief;
    assert!(!lifecycle_legality(
        &model(),
        &judge(&pre, &call, belief_in_force)
    ));
    let mut waiting = step(&cfg(), &pre, &observe(MID_A, 0, 0, Scope::Shared, 0)).unwrap();
    waiting.record_mut(0).kind = good.record(0).kind;
    waiting.move_record(0, Life::Tentative).unwrap();
    assert!(!lifecycle_legality(&model(), &judge(&pre, &call, waiting)));
}

/// I4's entry state (`judge_entry_state`): a commit of an external-action transaction makes
/// its records ActionSafe, any other commit Committed. No variant of §10 breaks it, so a
/// mutation that deleted the judge passed the model's tests and the checker's oracle alike
/// (reports/mutants.md); these are the states that show it firing.
#[test]
fn i4_breaks_when_a_record_enters_in_force_in_the_other_tier_s_state() {
    let staged = |begin: Op| run(&[begin, Op::from(belief(0, 0, 0).source(HIGH))]);
    // External-action: the protocol makes r0 ActionSafe; a commit that left it Committed.
    let pre = staged(begin_external(0));
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(0).life(), Life::ActionSafe);
    assert!(lifecycle_legality(&model(), &good));
    let judged = judge(&pre, &commit(0), hand_commit(&pre, 0, &[0]));
    assert_eq!(judged.record(0).life(), Life::Committed);
    assert!(
        !lifecycle_legality(&model(), &judged),
        "Committed in external-action"
    );
    // Medium: the protocol makes r0 Committed; a commit that made it ActionSafe.
    let pre = staged(begin_medium(0));
    let good = step(&cfg(), &pre, &commit(0)).unwrap();
    assert_eq!(good.record(0).life(), Life::Committed);
    assert!(lifecycle_legality(&model(), &good));
    let mut bad = hand_commit(&pre, 0, &[0]);
    bad.move_record(0, Life::ActionSafe).unwrap();
    let judged = judge(&pre, &commit(0), bad);
    assert!(
        !lifecycle_legality(&model(), &judged),
        "ActionSafe in medium"
    );
    // A tool call executed in a medium transaction enters Committed; one that entered
    // ActionSafe there.
    let pre = run(&[begin_medium(0)]);
    let call = irreversible(0, &[]);
    let good = step(&cfg(), &pre, &call).unwrap();
    assert_eq!(good.record(0).life(), Life::Committed);
    assert!(lifecycle_legality(&model(), &good));
    let mut bad = good.clone();
    bad.move_record(0, Life::ActionSafe).unwrap();
    let judged = judge(&pre, &call, bad);
    assert!(
        !lifecycle_legality(&model(), &judged),
        "a call ActionSafe in medium"
    );
    // Review's keep commits the kept record as Committed, in no transaction of any tier.
    let pre = run(&[
        begin_external(0),
        belief(0, 0, 0).source(MID_A).into(),
        commit(0),
        begin_external(0),
        belief(0, 0, 1).source(MID_B).into(),
        commit(0),
    ]);
    assert_eq!(pre.record(1).reason, Some(Reason::Review));
    let keep = resolve(1, true);
    let good = step(&cfg(), &pre, &keep).unwrap();
    assert_eq!(good.record(1).life(), Life::Committed);
    assert!(lifecycle_legality(&model(), &good));
    let mut bad = good.clone();
    bad.move_record(1, Life::ActionSafe).unwrap();
    assert!(
        !lifecycle_legality(&model(), &judge(&pre, &keep, bad)),
        "kept as ActionSafe"
    );
}
