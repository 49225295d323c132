//! The moment an irreversible call executes (`ghost/action.rs`): I1, I9, I17's gate part
//! and I18.

use super::*;

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
    foreign.record_mut(0).scope = Scope::Private;
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

/// I1 in an external-action transaction (§7 condition 2): every support record ActionSafe
/// (Committed and valid will not do), and some ActionSafe record in the snapshot, even for a
/// call without support. Each call below is judged as if a defective gate had let it through.
#[test]
fn i1_wants_action_safe_support_and_an_action_safe_snapshot_in_external_action() {
    let judged = |pre: &State, support: &[RecordId]| {
        let call = irreversible(1, support);
        let mut post = pre.clone();
        post.push_record(memtx_model::Record::default());
        observe_step(&cfg(), pre, &call, &mut post);
        action_safety_gating(&model(), &post)
    };
    let committed_r0 = [
        begin_medium(0),
        Op::from(belief(0, 0, 0).source(HIGH)),
        commit(0),
    ];
    // r0 Committed (medium), r1 ActionSafe (external-action); a1's snapshot holds r1.
    let mut ops = committed_r0.to_vec();
    ops.extend([
        begin_external(0),
        Op::from(belief(0, 1, 0).source(HIGH)),
        commit(0),
        begin_external(1),
    ]);
    let pre = run(&ops);
    assert_eq!(pre.record(0).life(), Life::Committed);
    assert_eq!(pre.record(1).life(), Life::ActionSafe);
    assert!(judged(&pre, &[1]), "ActionSafe support");
    assert!(judged(&pre, &[]), "no support, an ActionSafe snapshot");
    assert!(!judged(&pre, &[0]), "Committed support");
    // Nothing ActionSafe anywhere: a call without support has nothing to stand on.
    let mut ops = committed_r0.to_vec();
    ops.push(begin_external(1));
    let bare = run(&ops);
    assert!(!judged(&bare, &[]), "no ActionSafe record in the snapshot");
}
