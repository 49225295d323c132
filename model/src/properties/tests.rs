//! The judges' own definitions, on states built by hand: each example and the state
//! invariant I8 on a state that has what it names, and on near misses that lack one part of
//! it. An example that holds too easily makes non-vacuity vacuous (a protocol that refuses
//! what the example names would still reach it), so each condition of an example is put to
//! the test by a state that meets all the others (reports/mutants.md: 27 mutants of this
//! file passed the model's tests before).

use super::*;
use crate::presets::preset;
use crate::record::{Effect, Kind, Reason, Record, RecordId, RecordSet};
use crate::state::Repair;
use crate::Variant;

fn judge(key: &str, s: &State) -> bool {
    let model = MemTx::new(preset("quick", Variant::Memtx).expect("quick"));
    let def = PropertyDef::find(key).expect("a key of the table");
    (def.holds)(&model, s)
}

fn record(kind: Kind, life: Life, reason: Option<Reason>) -> Record {
    Record {
        kind,
        life,
        reason,
        ..Record::default()
    }
}

fn belief(life: Life, reason: Option<Reason>) -> Record {
    record(Kind::Belief, life, reason)
}

fn state_of(records: &[Record]) -> State {
    let mut s = State::initial();
    for r in records {
        s.push_record(*r);
    }
    s
}

/// `key` holds on `yes` and on none of `near` (each named by what it lacks).
fn assert_exactly(key: &str, yes: &State, near: &[(&str, State)]) {
    assert!(
        judge(key, yes),
        "{key} does not hold on its own example: {yes:?}"
    );
    assert!(!judge(key, &State::initial()), "{key} on the initial state");
    for (what, s) in near {
        assert!(!judge(key, s), "{key} holds on a near miss ({what}): {s:?}");
    }
}

#[test]
fn examples_of_one_record_hold_exactly_on_their_life_reason_and_effect() {
    use Life::*;
    let one = |r: Record| state_of(&[r]);
    let superseded = |reason| one(belief(Superseded, Some(reason)));
    let quarantined = |reason| one(belief(Quarantined, Some(reason)));
    assert_exactly(
        "E3",
        &one(belief(Quarantined, Some(Reason::StaleWrite))),
        &[("another reason", quarantined(Reason::Evidence))],
    );
    assert_exactly(
        "E4",
        &superseded(Reason::SupersededByAuthority),
        &[
            (
                "superseded by review",
                superseded(Reason::SupersededByReview),
            ),
            (
                "not superseded",
                one(belief(Quarantined, Some(Reason::SupersededByAuthority))),
            ),
        ],
    );
    assert_exactly(
        "E5",
        &quarantined(Reason::Review),
        &[
            ("another quarantine", quarantined(Reason::Evidence)),
            (
                "not quarantined",
                one(belief(Revoked, Some(Reason::Review))),
            ),
        ],
    );
    assert_exactly(
        "E6",
        &quarantined(Reason::Permission),
        &[("another reason", quarantined(Reason::Evidence))],
    );
    assert_exactly(
        "E11",
        &superseded(Reason::SupersededByReview),
        &[
            (
                "superseded by authority",
                superseded(Reason::SupersededByAuthority),
            ),
            (
                "not superseded",
                one(belief(Quarantined, Some(Reason::SupersededByReview))),
            ),
        ],
    );
    let call = |effect| {
        one(Record {
            effect: Some(effect),
            ..record(Kind::ReversibleAction, Committed, None)
        })
    };
    assert_exactly(
        "E7",
        &call(Effect::Compensated),
        &[
            ("executed", call(Effect::Executed)),
            ("leaked", call(Effect::Leaked)),
        ],
    );
}

/// E1 is any irreversible call; E10 one that entered ActionSafe on declared support.
#[test]
fn irreversible_call_examples_hold_on_their_calls() {
    let call = |kind, life, parents| {
        state_of(&[
            belief(Life::ActionSafe, None),
            Record {
                parents,
                ..record(kind, life, None)
            },
        ])
    };
    let support = RecordSet::single(0);
    let strong = call(Kind::IrreversibleAction, Life::ActionSafe, support);
    assert_exactly(
        "E1",
        &call(Kind::IrreversibleAction, Life::Committed, RecordSet::EMPTY),
        &[(
            "a reversible call",
            call(Kind::ReversibleAction, Life::ActionSafe, support),
        )],
    );
    assert_exactly(
        "E10",
        &strong,
        &[
            (
                "a reversible call",
                call(Kind::ReversibleAction, Life::ActionSafe, support),
            ),
            (
                "a weak tier's call",
                call(Kind::IrreversibleAction, Life::Committed, support),
            ),
            (
                "no declared support",
                call(Kind::IrreversibleAction, Life::ActionSafe, RecordSet::EMPTY),
            ),
        ],
    );
}

#[test]
fn a_leak_is_an_example_only_with_its_log_entry() {
    let leaked = |effect, logged: bool| {
        let mut s = state_of(&[Record {
            effect: Some(effect),
            ..record(
                Kind::IrreversibleAction,
                Life::Revoked,
                Some(Reason::Cascade),
            )
        }]);
        if logged {
            s.log_repair(0, Repair::Leaked, 0);
        }
        s
    };
    assert_exactly(
        "E8",
        &leaked(Effect::Leaked, true),
        &[
            ("not in the log", leaked(Effect::Leaked, false)),
            ("logged, not leaked", leaked(Effect::Executed, true)),
        ],
    );
}

#[test]
fn a_view_rebuilt_is_a_committed_view_once_quarantined_by_a_cascade() {
    let view = |kind, life, logged: bool| {
        let mut s = state_of(&[record(kind, life, None)]);
        if logged {
            s.log_repair(0, Repair::Quarantined, 0);
        }
        s
    };
    assert_exactly(
        "E9",
        &view(Kind::Summary, Life::Committed, true),
        &[
            (
                "never quarantined",
                view(Kind::Summary, Life::Committed, false),
            ),
            (
                "not committed",
                view(Kind::Summary, Life::Quarantined, true),
            ),
            ("a belief", view(Kind::Belief, Life::Committed, true)),
        ],
    );
}

/// E2: r0 retracted; r1 derives from r0; r2 from r1. A repair of r2 caused by r0 is deep.
#[test]
fn a_deep_cascade_repairs_a_descendant_that_is_not_a_child() {
    let chain = |repaired: RecordId, repair: Repair, cause: RecordId| {
        let mut s = state_of(&[
            belief(Life::Revoked, Some(Reason::Evidence)),
            Record {
                parents: RecordSet::single(0),
                ..belief(Life::Revoked, Some(Reason::Cascade))
            },
            Record {
                parents: RecordSet::single(1),
                ..belief(Life::Revoked, Some(Reason::Cascade))
            },
            belief(Life::Committed, None),
        ]);
        s.log_repair(repaired, repair, cause);
        s
    };
    assert_exactly(
        "E2",
        &chain(2, Repair::Revoked, 0),
        &[
            ("a child of the cause", chain(1, Repair::Revoked, 0)),
            ("the root's own entry", chain(2, Repair::Retracted, 0)),
            ("a cause that is no ancestor", chain(2, Repair::Revoked, 3)),
        ],
    );
}

/// I8: every effect and repair a record shows has its entry in the rollback log.
#[test]
fn the_audit_invariant_wants_each_repair_and_effect_logged() {
    use Life::*;
    let with = |r: Record, log: Option<Repair>| {
        let mut s = state_of(&[belief(Committed, None), r]);
        if let Some(repair) = log {
            s.log_repair(1, repair, 0);
        }
        s
    };
    let call = |effect| Record {
        effect: Some(effect),
        ..record(Kind::IrreversibleAction, Revoked, Some(Reason::Cascade))
    };
    let cases = [
        ("a leak", call(Effect::Leaked), Repair::Leaked),
        (
            "a compensation",
            call(Effect::Compensated),
            Repair::Compensated,
        ),
        (
            "a view quarantined for rebuild",
            record(Kind::Summary, Quarantined, Some(Reason::Rebuild)),
            Repair::Quarantined,
        ),
        (
            "a retraction",
            belief(Revoked, Some(Reason::Evidence)),
            Repair::Retracted,
        ),
        (
            "a cascade revocation",
            belief(Revoked, Some(Reason::Cascade)),
            Repair::Revoked,
        ),
    ];
    for (what, r, repair) in cases {
        assert!(judge("I8", &with(r, Some(repair))), "{what}, logged");
        assert!(!judge("I8", &with(r, None)), "{what}, not logged");
    }
    // A call's effect wants its own entry: the revocation's does not stand for it.
    for effect in [Effect::Leaked, Effect::Compensated] {
        assert!(
            !judge("I8", &with(call(effect), Some(Repair::Revoked))),
            "{effect:?}, logged only as revoked"
        );
    }
    // The effect logged does not excuse the repair: a compensated call revoked by the
    // retraction of a record, without the retraction's entry.
    let compensated_root = Record {
        effect: Some(Effect::Compensated),
        ..record(Kind::ReversibleAction, Revoked, Some(Reason::Evidence))
    };
    assert!(!judge(
        "I8",
        &with(compensated_root, Some(Repair::Compensated))
    ));
}

#[test]
fn properties_are_found_by_key_or_name_and_keep_their_expectation() {
    for def in PROPERTIES {
        let lower = def.key.to_ascii_lowercase();
        for asked in [def.key, def.name, &lower] {
            assert_eq!(
                PropertyDef::find(asked).map(|p| p.key),
                Some(def.key),
                "{asked}"
            );
        }
        let sr = def.to_stateright();
        assert_eq!(sr.name, def.name);
        assert_eq!(
            matches!(sr.expectation, Expectation::Sometimes),
            !def.is_invariant(),
            "{}",
            def.key
        );
    }
    assert!(PropertyDef::find("I99").is_none());
    assert!(PropertyDef::find("").is_none());
}
