//! Revision 3, scope non-interference (§6 (a)-(c)), each harm replayed both ways.

use super::*;

// ---- revision 3, scope non-interference (§6 (a)-(c)), each harm replayed both ways -------------

/// `Resolve(keep)`'s refusal while a wider rival stands (revision 3, scope non-interference (b)).
fn keep_refused_for_a_wider_rival() -> memtx_model::ops::Refusal {
    memtx_model::ops::Refusal::Disabled(memtx_model::rules::Rule::EnKeepWiderRival.statement())
}

/// Agent 0's Shared belief (slot 0 = v0, mid source B) is committed: the shared truth.
fn shared_truth(variant: Variant) -> Scenario {
    scenario("a shared truth")
        .variant(variant)
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_B))
        .step(commit(0))
}

#[test]
fn a_private_record_never_displaces_a_shared_truth() {
    // (b): agent 1's Private high-authority belief would supersede the Shared one, and agent 0
    // would see no value at all. It goes to scope review instead, and the reviewer may not
    // keep it while the wider rival stands.
    let path = |variant| {
        shared_truth(variant)
            .step(begin_medium(1))
            .step(belief(1, 0, 1).source(HIGH).private())
    };
    path(Variant::Memtx)
        .step(commit(1))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Quarantined, Some(Reason::ScopeReview))
        .refused(resolve(1, true), keep_refused_for_a_wider_rival())
        .step(resolve(1, false))
        .expect_life(1, Life::Revoked)
        .finish();
    // A same-source correction is a displacement too.
    shared_truth(Variant::Memtx)
        .step(begin_medium(1))
        .step(belief(1, 0, 1).source(MID_B).private())
        .step(commit(1))
        .expect_record(1, Life::Quarantined, Some(Reason::ScopeReview))
        .expect_record(0, Life::Committed, None)
        .finish();
    let s = path(Variant::Rev2Scopes)
        .without_invariants()
        .step(commit(1));
    assert_eq!(s.state().record(0).life(), Life::Superseded);
    assert_eq!(s.violations(), vec!["I17"]);
}

#[test]
fn a_hidden_rival_neither_aborts_outranks_nor_reviews_and_is_sent_to_review() {
    // (a) and (c): agent 1 holds a Private belief; agent 0, who may not see it, writes a Shared
    // one. Whether the hidden record has higher authority (revision 2 aborts the write as
    // outranked) or equal authority from another source (revision 2 sends it to review), the
    // outcome would reveal it. Instead the Shared record commits and the narrower hidden one
    // goes to its owner's review, so that agent 1 too sees one truth; its owner may not keep
    // it while the wider record stands.
    for (source, revealing) in [(HIGH, Reason::Outranked), (MID_A, Reason::Review)] {
        let path = |variant| {
            scenario("hidden rival")
                .variant(variant)
                .step(begin_medium(1))
                .step(belief(1, 0, 1).source(source).private())
                .step(commit(1))
                .step(begin_medium(0))
                .step(belief(0, 0, 0).source(MID_B))
        };
        path(Variant::Memtx)
            .step(commit(0))
            .expect_record(0, Life::Quarantined, Some(Reason::ScopeReview))
            .expect_record(1, Life::Committed, None)
            .refused(resolve(0, true), keep_refused_for_a_wider_rival())
            .finish();
        let s = path(Variant::Rev2Scopes)
            .without_invariants()
            .step(commit(0));
        assert_eq!(s.state().record(1).reason, Some(revealing));
        assert_eq!(s.violations(), vec!["I17"]);
    }
}

#[test]
fn two_owners_private_records_both_stand() {
    // Two Private records of different owners are not narrower than each other: each stands
    // in its owner's view, and one truth holds in every view (I6, asserted on every step).
    scenario("two private truths")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A).private())
        .step(commit(0))
        .step(begin_medium(1))
        .step(belief(1, 0, 1).source(HIGH).private())
        .step(commit(1))
        .expect_record(0, Life::Committed, None)
        .expect_record(1, Life::Committed, None)
        .finish();
}

#[test]
fn a_wider_record_displaces_a_narrower_one_it_may_see() {
    // Knowledge flows from wider to narrower: a Public high-authority record supersedes its
    // writer's own Shared one, and a Shared record supersedes its writer's own Private one.
    shared_truth(Variant::Memtx)
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(HIGH).public())
        .step(commit(0))
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByAuthority))
        .expect_record(1, Life::Committed, None)
        .finish();
    // Its Private record is in its context: it writes Shared in a new session (the price of
    // provenance follows content, §11).
    scenario("own private corrected by a shared record")
        .step(begin_medium(0))
        .step(belief(0, 0, 0).source(MID_A).private())
        .step(commit(0))
        .step(end_session(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_A))
        .step(commit(0))
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByCorrection))
        .finish();
}

#[test]
fn the_writer_of_an_adopted_record_is_the_adopting_agent() {
    // Found by the random walks: a1 adopts its own Private observation r0 and a Shared one r1
    // owned by a0, and commits both. r1's writer is a1, who may see r0: r0 is r1's rival and
    // is superseded by authority, not sent to scope review as if a0 had written r1.
    scenario("adopted records judged by their writer")
        .step(observe(MID_A, 0, 1, Scope::Private, 1))
        .step(observe(HIGH, 0, 0, Scope::Shared, 0))
        .step(begin(1, Tier::Medium, Isolation::RawRead))
        .step(adopt(1, 0))
        .step(adopt(1, 1))
        .step(commit(1))
        .expect_record(0, Life::Superseded, Some(Reason::SupersededByAuthority))
        .expect_record(1, Life::Committed, None)
        .finish();
}
