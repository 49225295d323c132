mod common;
use common::*;
use memtx_model::txn::*;
use memtx_model::*;

#[test]
fn a_resolve_launders() {
    let s = scenario("A")
        .without_invariants()
        .step(begin_medium(0))
        .step(belief(0, 0, 0).private().source(MID_A))
        .step(commit(0))
        .step(begin_medium(0))
        .step(belief(0, 0, 1).source(MID_B).parents(&[0]))
        .step(commit(0));
    println!("{:?}", s.state());
    let s = s.step(resolve(1, true));
    println!("A {:?} {:?}", s.state(), s.violations());
}

#[test]
fn b_tentative_read_launders() {
    let s = scenario("B")
        .without_invariants()
        .step(begin_medium(0))
        .step(belief(0, 0, 0).private())
        .step(commit(0))
        .step(begin_medium(0))
        .step(summary(0, &[0]))
        .step(begin(1, Tier::Medium, Isolation::TentativeRead))
        .step(summary(1, &[1]))
        .step(commit(1));
    println!("B {:?} {:?}", s.state(), s.violations());
}

#[test]
fn c_rebuilt_view_dirty_read() {
    let s = scenario("C")
        .without_invariants()
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(belief(0, 1, 0))
        .step(summary(0, &[0, 1]))
        .step(commit(0))
        .step(begin_medium(1))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .step(begin_medium(0))
        .step(rebuild(2))
        .step(belief(1, 1, 1).parents(&[2]));
    println!("C {:?} {:?}", s.state(), s.violations());
    let s = s.step(irreversible(1, &[]));
    println!("C2 {:?} {:?}", s.state(), s.violations());
}

#[test]
fn d_own_adopt_not_blocked() {
    let s = scenario("D")
        .without_invariants()
        .step(observe(MID_A, 0, 0, Scope::Shared, 0))
        .step(begin(0, Tier::Medium, Isolation::RawRead))
        .step(adopt(0, 0))
        .step(irreversible(0, &[]));
    println!("D {:?} {:?}", s.state(), s.violations());
}

#[test]
fn e_own_rebuild_not_blocked() {
    let s = scenario("E")
        .without_invariants()
        .step(begin_medium(0))
        .step(belief(0, 0, 0))
        .step(belief(0, 1, 0))
        .step(summary(0, &[0, 1]))
        .step(commit(0))
        .step(begin_medium(0))
        .step(request_revocation(0))
        .step(apply_revocation(0))
        .step(rebuild(2))
        .step(irreversible(0, &[]));
    println!("E {:?} {:?}", s.state(), s.violations());
}
