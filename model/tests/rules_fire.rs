//! Rule coverage is only as true as its firing points: each rule fires exactly where it
//! decides something, and nowhere else. These tests take one step at a time and compare the set
//! of rules it fired (`rules::take_fired`) with the set the protocol's text says it must fire.
//! (Mutation testing found that nothing else checks the firing points: a rule fired in the
//! wrong place still "covers" it.)

mod common;

use common::*;
use memtx_model::machine::step;
use memtx_model::ops::Op;
use memtx_model::rules::{in_set, take_fired, Rule};
use memtx_model::txn::{Isolation, Tier};
use memtx_model::{State, Variant};

/// The state after `ops`, and the rules the last of them fired.
fn fired_by_last(ops: &[Op]) -> (State, Vec<&'static str>) {
    let cfg = wide(Variant::Memtx);
    let mut s = State::initial();
    let mut fired = 0;
    for op in ops {
        let _ = take_fired();
        s = step(&cfg, &s, op).unwrap_or_else(|r| panic!("{op:?} refused: {r}"));
        fired = take_fired();
    }
    (s, in_set(fired).map(|r| r.id).collect())
}

fn has(fired: &[&str], rule: Rule) -> bool {
    fired.contains(&rule.id())
}

#[test]
fn a_revocation_fires_the_repairs_it_makes_and_no_other() {
    // r0 committed; r1 a summary of it; r2 a belief derived from the summary; revoke r0.
    let (_, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        summary(0, &[0]).into(),
        belief(0, 1, 0).parents(&[1]).into(),
        commit(0),
        request_revocation(0),
        Op::ApplyRevocation { record: 0 },
    ]);
    for rule in [
        Rule::OpApplyRevocation,
        Rule::LifeRevoke,
        Rule::LifeRequarantine,
        Rule::CascadeQuarantineView,
        Rule::CascadeRevokeBelief,
        Rule::CascadeBelowView,
        Rule::AuditRetracted,
        Rule::AuditQuarantined,
        Rule::AuditRevoked,
    ] {
        assert!(has(&fired, rule), "{} did not fire: {fired:?}", rule.id());
    }
    for rule in [
        Rule::CascadeStagedDescendant,
        Rule::CascadeCompensate,
        Rule::CascadeLeak,
        Rule::AuditLeaked,
    ] {
        assert!(!has(&fired, rule), "{} fired: {fired:?}", rule.id());
    }
}

#[test]
fn a_belief_directly_under_the_root_is_not_below_a_view() {
    let (_, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        belief(0, 1, 0).parents(&[0]).into(),
        commit(0),
        request_revocation(0),
        Op::ApplyRevocation { record: 0 },
    ]);
    assert!(has(&fired, Rule::CascadeRevokeBelief), "{fired:?}");
    assert!(!has(&fired, Rule::CascadeBelowView), "{fired:?}");
    assert!(!has(&fired, Rule::CascadeQuarantineView), "{fired:?}");
}

#[test]
fn staged_descendants_of_another_transaction_are_told_apart() {
    // a1 stages a summary of committed r0; revoking r0 repairs a staged record of another
    // transaction.
    let (_, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        commit(0),
        begin_medium(1),
        summary(1, &[0]).into(),
        request_revocation(0),
        Op::ApplyRevocation { record: 0 },
    ]);
    assert!(has(&fired, Rule::CascadeStagedDescendant), "{fired:?}");
    // a0 aborts its own staged r0 with a staged child in the same transaction: not another's.
    let (_, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        summary(0, &[0]).into(),
        Op::Abort { agent: 0 },
    ]);
    assert!(has(&fired, Rule::CascadeQuarantineView), "{fired:?}");
    assert!(!has(&fired, Rule::CascadeStagedDescendant), "{fired:?}");
    // a1 (tentative-read) commits a child of a0's staged r0; a0 aborts r0: the committed child
    // is repaired, and it is no staged record.
    let (s, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).into(),
        Op::Begin {
            agent: 1,
            tier: Tier::Medium,
            isolation: Isolation::TentativeRead,
        },
        summary(1, &[0]).into(),
        commit(1),
        Op::Abort { agent: 0 },
    ]);
    assert_eq!(
        s.record(1).reason,
        Some(memtx_model::record::Reason::Rebuild)
    );
    assert!(!has(&fired, Rule::CascadeStagedDescendant), "{fired:?}");
}

#[test]
fn a_commit_fires_its_pipeline_outcomes() {
    // r0 (mid A) committed; r1 (high) wins against it; r2 (low confidence, mid) is quarantined.
    let (_, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_A).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 1).source(HIGH).into(),
        belief(0, 1, 0).low_confidence().into(),
        commit(0),
    ]);
    for rule in [
        Rule::OpCommit,
        Rule::PipeConflictSupersede,
        Rule::PipePassCommitted,
        Rule::PipeEvidenceFail,
        Rule::LifeSupersede,
        Rule::LifeQuarantine,
        Rule::LifeValidate,
        Rule::LifeCommit,
    ] {
        assert!(has(&fired, rule), "{} did not fire: {fired:?}", rule.id());
    }
    for rule in [
        Rule::PipeConflictSeveral,
        Rule::PipeConflictCorrection,
        Rule::PipeConflictReview,
        Rule::PipePassActionSafe,
        Rule::PipeEvidenceByAuthority,
        Rule::PipeDeferredEffect,
    ] {
        assert!(!has(&fired, rule), "{} fired: {fired:?}", rule.id());
    }
}

#[test]
fn evidence_by_authority_fires_only_for_a_record_that_needed_it() {
    let (_, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).source(HIGH).into(),
        commit(0),
    ]);
    assert!(!has(&fired, Rule::PipeEvidenceByAuthority), "{fired:?}");
    // A record without any rival judges no rivals at all.
    assert!(!has(&fired, Rule::PipeConflictSeveral), "{fired:?}");
    let (_, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).source(HIGH).low_confidence().into(),
        commit(0),
    ]);
    assert!(has(&fired, Rule::PipeEvidenceByAuthority), "{fired:?}");
}

#[test]
fn a_deferred_effect_fires_only_when_a_won_rival_is_left_alone() {
    // r1 (high) would supersede r0 (mid) but its parent is pending revocation: deferred.
    let (s, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_A).into(),
        belief(0, 1, 0).into(),
        commit(0),
        request_revocation(1),
        begin_medium(0),
        belief(0, 0, 1).source(HIGH).parents(&[1]).into(),
        commit(0),
    ]);
    assert_eq!(
        s.record(2).reason,
        Some(memtx_model::record::Reason::UnstableDependency)
    );
    assert!(has(&fired, Rule::PipeDeferredEffect), "{fired:?}");
    assert!(has(&fired, Rule::PipeStabilityFail), "{fired:?}");
    // The same failure with no rival to win against defers nothing.
    let (_, fired) = fired_by_last(&[
        begin_medium(0),
        belief(0, 1, 0).into(),
        commit(0),
        request_revocation(0),
        begin_medium(0),
        belief(0, 0, 1).source(HIGH).parents(&[0]).into(),
        commit(0),
    ]);
    assert!(has(&fired, Rule::PipeStabilityFail), "{fired:?}");
    assert!(!has(&fired, Rule::PipeDeferredEffect), "{fired:?}");
}

#[test]
fn several_rivals_count_only_when_the_ranking_decides_between_them() {
    // r0 (low) and r1 (mid A) agree on s0 = v0; a write of v1 has both as rivals.
    let base = |source: u8| {
        vec![
            begin_medium(0),
            belief(0, 0, 0).source(LOW).into(),
            belief(0, 0, 0).source(MID_A).into(),
            commit(0),
            begin_medium(0),
            belief(0, 0, 1).source(source).into(),
            commit(0),
        ]
    };
    // From the high source both rivals are outranked: one outcome, nothing ranked.
    let (s, fired) = fired_by_last(&base(HIGH));
    assert_eq!(s.record(2).life(), memtx_model::Life::Committed);
    assert!(has(&fired, Rule::PipeConflictSupersede), "{fired:?}");
    assert!(!has(&fired, Rule::PipeConflictSeveral), "{fired:?}");
    // From mid B: r0 is outranked by it, r1 is an equal-authority rival of another source;
    // the ranking decides (review wins over supersession).
    let (s, fired) = fired_by_last(&base(MID_B));
    assert_eq!(
        s.record(2).reason,
        Some(memtx_model::record::Reason::Review)
    );
    assert!(has(&fired, Rule::PipeConflictSeveral), "{fired:?}");
}

/// `pipe.conflict.several` fires for every pair of outcome classes, not only for the pairs
/// the test above meets: each class beside a rival the record outranks. (Mutation testing:
/// under a class never recorded, `pipe.conflict.several` still fired for the other pairs, and
/// nothing failed.)
#[test]
fn several_rivals_fire_for_each_outcome_class_beside_an_outranked_one() {
    use memtx_model::record::Reason;
    use memtx_model::Life;
    // r0 (low) holds s0 = v1: a mid write of v0 outranks it.
    let with = |rest: &[Op]| -> Vec<Op> {
        let mut ops = vec![
            begin_medium(0),
            belief(0, 0, 1).source(LOW).into(),
            commit(0),
        ];
        ops.extend_from_slice(rest);
        ops
    };
    let several = |what: &str, fired: &[&str]| {
        assert!(has(fired, Rule::PipeConflictSeveral), "{what}: {fired:?}");
    };
    // A higher rival: r1 (high) agrees with r0 and outranks the write r2.
    let (s, fired) = fired_by_last(&with(&[
        begin_medium(0),
        belief(0, 0, 1).source(HIGH).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 0).source(MID_A).into(),
        commit(0),
    ]));
    assert_eq!(s.record(2).reason, Some(Reason::Outranked));
    several("higher", &fired);
    // A rival of the write's own source: r2 corrects r1 and outranks r0.
    let (s, fired) = fired_by_last(&with(&[
        begin_medium(0),
        belief(0, 0, 1).source(MID_A).into(),
        commit(0),
        begin_medium(0),
        belief(0, 0, 0).source(MID_A).into(),
        commit(0),
    ]));
    assert_eq!(s.record(2).life(), Life::Committed);
    assert_eq!(s.record(1).reason, Some(Reason::SupersededByCorrection));
    assert_eq!(s.record(0).reason, Some(Reason::SupersededByAuthority));
    several("corrected", &fired);
    // A stale rival: a1 commits r1 after a0's snapshot.
    let (s, fired) = fired_by_last(&with(&[
        begin_medium(0),
        begin_medium(1),
        belief(1, 0, 1).source(LOW).into(),
        commit(1),
        belief(0, 0, 0).source(MID_A).into(),
        commit(0),
    ]));
    assert_eq!(s.record(2).reason, Some(Reason::StaleWrite));
    several("stale", &fired);
    // A stale-content rival: a0's r1 is aborted as stale against a1's r2; a0 retries the
    // same value as r3 in the same session, after r2 committed.
    let (s, fired) = fired_by_last(&with(&[
        begin_medium(0),
        belief(0, 0, 0).source(MID_B).into(),
        begin_medium(1),
        belief(1, 0, 1).source(MID_B).into(),
        commit(1),
        commit(0),
        begin_medium(0),
        belief(0, 0, 0).source(MID_B).into(),
        commit(0),
    ]));
    assert_eq!(s.record(1).reason, Some(Reason::StaleWrite));
    assert_eq!(s.record(3).reason, Some(Reason::StaleContent));
    several("stale content", &fired);
}

/// `pipe.conflict.hidden-rival` fires where a contradicting record is hidden from the writer,
/// and `pipe.conflict.narrower-rival-review` where such a record is also narrower, each only
/// there. (Mutation testing: either rule fired on every commit judging rivals, and nothing
/// failed.)
#[test]
fn hidden_and_narrower_rivals_fire_only_where_there_is_one() {
    use memtx_model::record::{Reason, Scope};
    use memtx_model::Life;
    // a1's r0 holds s0 = v1 in `scope`; a0 commits a Shared or Private r1 of v0.
    let run = |theirs: Scope, mine: Scope| {
        fired_by_last(&[
            begin_medium(1),
            belief(1, 0, 1).scope(theirs).into(),
            commit(1),
            begin_medium(0),
            belief(0, 0, 0).scope(mine).into(),
            commit(0),
        ])
    };
    // Private under Shared: hidden from a0 and narrower, so sent to review for a1.
    let (s, fired) = run(Scope::Private, Scope::Shared);
    assert_eq!(s.record(1).life(), Life::Committed);
    assert_eq!(s.record(0).reason, Some(Reason::ScopeReview));
    assert!(has(&fired, Rule::PipeConflictHiddenRival), "{fired:?}");
    assert!(has(&fired, Rule::PipeConflictNarrowerReview), "{fired:?}");
    // Two Private records of different owners: hidden, not narrower; both stand.
    let (s, fired) = run(Scope::Private, Scope::Private);
    assert_eq!(s.record(0).life(), Life::Committed);
    assert_eq!(s.record(1).life(), Life::Committed);
    assert!(has(&fired, Rule::PipeConflictHiddenRival), "{fired:?}");
    assert!(!has(&fired, Rule::PipeConflictNarrowerReview), "{fired:?}");
    // A Shared rival a0 sees: judged as a rival (r1 corrects it), neither rule.
    let (s, fired) = run(Scope::Shared, Scope::Shared);
    assert_eq!(s.record(0).reason, Some(Reason::SupersededByCorrection));
    assert!(!has(&fired, Rule::PipeConflictHiddenRival), "{fired:?}");
    assert!(!has(&fired, Rule::PipeConflictNarrowerReview), "{fired:?}");
}

/// `op.begin.forced-isolation` fires where the protocol reads at another level than the one
/// asked (an external-action transaction reads action-safe whatever it requests), and only
/// there. (Mutation testing: the rule fired on every begin that was *not* forced, and nothing
/// failed.)
#[test]
fn a_begin_fires_forced_isolation_only_when_the_level_is_overridden() {
    let forced = |op: Op| has(&fired_by_last(&[op]).1, Rule::OpBeginForcedIsolation);
    assert!(forced(begin(0, Tier::ExternalAction, Isolation::RawRead)));
    assert!(!forced(begin(
        0,
        Tier::ExternalAction,
        Isolation::ActionSafeRead
    )));
    assert!(!forced(begin(0, Tier::Medium, Isolation::RawRead)));
    assert!(!forced(begin(0, Tier::Medium, Isolation::CommittedRead)));
}

/// Rule coverage counts what a rule decided: over every transition of a breadth-first prefix
/// of `quick`, a `cascade.*` repair rule fires exactly when the step logged a repair of its
/// kind (a visit to a record already Revoked repairs nothing and counts nothing).
#[test]
fn cascade_rules_fire_exactly_when_a_repair_is_logged() {
    use memtx_model::machine::{candidate_ops, step};
    use memtx_model::state::Repair;
    use std::collections::{HashSet, VecDeque};
    let cfg = memtx_model::presets::preset("quick", Variant::Memtx).unwrap();
    let kinds = [
        (Repair::Revoked, Rule::CascadeRevokeBelief),
        (Repair::Quarantined, Rule::CascadeQuarantineView),
        (Repair::Compensated, Rule::CascadeCompensate),
        (Repair::Leaked, Rule::CascadeLeak),
    ];
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([State::initial()]);
    let (mut transitions, mut repairs) = (0usize, 0usize);
    let mut ops = Vec::new();
    while let Some(pre) = queue.pop_front() {
        if seen.len() >= 60_000 {
            break;
        }
        ops.clear();
        candidate_ops(&cfg, &pre, &mut ops);
        for op in ops.iter() {
            let _ = take_fired();
            let Ok(post) = step(&cfg, &pre, op) else {
                continue;
            };
            let fired = take_fired();
            transitions += 1;
            for (repair, rule) in kinds {
                let logged = post
                    .ids()
                    .any(|id| post.audit(id).has(repair) && !pre.audit(id).has(repair))
                    || post.ids().any(|id| {
                        // Logged again with no new kind but a new cause: only a view is
                        // repaired twice (quarantined once more; a Revoked record is final).
                        let (a, b) = (pre.audit(id), post.audit(id));
                        repair == Repair::Quarantined
                            && post.record(id).kind.is_view()
                            && a.repairs_bits() == b.repairs_bits()
                            && a.cause != b.cause
                    });
                let fired = fired & (1u128 << rule as u8) != 0;
                assert_eq!(
                    fired,
                    logged,
                    "{} fired={fired} but repair logged={logged} on {op:?}",
                    rule.id()
                );
                repairs += logged as usize;
            }
            let mut key = Vec::new();
            post.pack(&mut key);
            if seen.insert(key) {
                queue.push_back(post);
            }
        }
    }
    assert!(
        repairs > 100,
        "the prefix repaired too little ({repairs} in {transitions})"
    );
}

#[test]
fn a_read_refused_for_its_content_fires_that_rule_alone() {
    // Agent 0 stages a Private belief (r0) and then a Shared one (r1) that carries it (r0 is in
    // its context); agent 1 begins at tentative-read, so both are in its snapshot.
    let cfg = wide(Variant::Memtx);
    let mut s = State::initial();
    for op in [
        begin_medium(0),
        belief(0, 0, 0).private().into(),
        belief(0, 0, 0).source(MID_B).into(),
        begin(1, Tier::Medium, Isolation::TentativeRead),
    ] {
        s = step(&cfg, &s, &op).unwrap_or_else(|r| panic!("{op:?} refused: {r}"));
    }
    let refused_by = |cfg: &memtx_model::Config, op: Op| {
        let _ = take_fired();
        assert!(step(cfg, &s, &op).is_err(), "{op:?} was served");
        in_set(take_fired()).map(|r| r.id).collect::<Vec<_>>()
    };
    // r1 is in view, but its content holds another owner's Private record.
    assert_eq!(
        refused_by(&cfg, read(1, 1)),
        [Rule::EnReadContentNotPermitted.id()]
    );
    // r0 is not in view at all: refused for that alone, its content not judged.
    assert_eq!(refused_by(&cfg, read(1, 0)), [Rule::EnReadNotVisible.id()]);
    // The paper's protocol serves r1 (provenance by declared parents only).
    assert!(step(&wide(Variant::PaperProvenance), &s, &read(1, 1)).is_ok());
}
