//! The enumerator proposes, the protocol decides (issue: every enabling condition lives only
//! in `ops`).
//!
//! `Enumeration::Filtered` does not propose some operations, for speed. Each of its
//! pre-filters must be implied by an enabling condition of `ops`: over many reachable states
//! of several presets, every operation that the wide enumeration proposes and the filtered
//! one drops must be refused by `machine::step`. If a pre-filter hid an operation the
//! protocol would perform, the filtered state space would silently lose states; this test
//! fails instead, naming the state and the operation.

use memtx_model::config::Enumeration;
mod common;

use common::reachable;
use memtx_model::machine::{candidate_ops, step};
use memtx_model::presets::{preset, SUITE};
use memtx_model::{State, Variant};

fn check_filter_is_implied(name: &str, variant: Variant, limit: usize) {
    let mut filtered = preset(name, variant).expect("a preset");
    filtered.domain.enumeration = Enumeration::Filtered;
    let mut wide = filtered.clone();
    wide.domain.enumeration = Enumeration::Wide;
    let states = reachable(&filtered, limit);
    assert!(
        states.len() > 1_000,
        "{name}: too few states explored ({})",
        states.len()
    );
    let (mut f, mut w) = (Vec::new(), Vec::new());
    let mut dropped = 0usize;
    for s in &states {
        f.clear();
        w.clear();
        candidate_ops(&filtered, s, &mut f);
        candidate_ops(&wide, s, &mut w);
        for op in &f {
            assert!(
                w.contains(op),
                "{name}: the filtered enumeration proposes {op:?}, the wide one does not"
            );
        }
        for op in w.iter().filter(|op| !f.contains(op)) {
            dropped += 1;
            // A dropped stutter step (a record read again) loses no state.
            if let Some(next) = step(&filtered, s, op).ok().filter(|next| next != s) {
                panic!(
                    "{name}: the enumerator drops {op:?}, but the protocol performs it\n\
                     state:\n{s:?}\nwould lead to:\n{next:?}"
                );
            }
        }
    }
    assert!(
        dropped > 0,
        "{name}: the filter dropped nothing (vacuous test)"
    );
}

#[test]
fn the_filters_of_quick_are_implied_by_the_enabling_conditions() {
    check_filter_is_implied("quick", Variant::Memtx, 50_000);
}

#[test]
fn the_filters_of_paper_are_implied_by_the_enabling_conditions() {
    check_filter_is_implied("paper", Variant::Memtx, 50_000);
}

#[test]
fn the_filters_of_the_focused_presets_are_implied_by_the_enabling_conditions() {
    let focused = SUITE
        .iter()
        .filter(|e| !matches!(e.name, "quick" | "paper"));
    for entry in focused {
        check_filter_is_implied(entry.name, Variant::Memtx, 30_000);
    }
}

#[test]
fn the_filters_hold_under_the_variants_that_change_what_is_visible() {
    for variant in [
        Variant::NoVisibilityScoping,
        Variant::NoSnapshotReads,
        Variant::PaperGate,
        Variant::NoActionGate,
    ] {
        check_filter_is_implied("isolation", variant, 8_000);
    }
}

/// A harness may ask an external-action `Begin` for any isolation level (issue 31 item 5): the
/// environment offers every level, even when the domain lists none for the other tiers, and the
/// protocol opens each at action-safe-read. Otherwise I14 ("every external-action transaction
/// reads at action-safe-read") could never fail, whatever `ops::begin` did.
#[test]
fn an_external_action_begin_is_offered_at_every_level_and_reads_action_safe() {
    use memtx_model::ops::Op;
    use memtx_model::txn::{Isolation, Tier};
    let mut cfg = preset("quick", Variant::Memtx).expect("quick preset");
    cfg.domain.tiers = vec![Tier::ExternalAction];
    cfg.domain.isolations.clear();
    let s = State::initial();
    let mut ops = Vec::new();
    candidate_ops(&cfg, &s, &mut ops);
    let mut asked: Vec<Isolation> = ops
        .iter()
        .filter_map(|op| match *op {
            Op::Begin {
                agent: 0,
                tier: Tier::ExternalAction,
                isolation,
            } => Some(isolation),
            _ => None,
        })
        .collect();
    asked.sort();
    assert_eq!(asked, Isolation::ALL.to_vec(), "levels offered: {asked:?}");
    for isolation in Isolation::ALL {
        let op = Op::Begin {
            agent: 0,
            tier: Tier::ExternalAction,
            isolation,
        };
        let next = step(&cfg, &s, &op).unwrap_or_else(|r| panic!("{op:?} refused: {r}"));
        let tx = next.txn(0).expect("the transaction is open");
        assert_eq!(
            tx.isolation,
            Isolation::ActionSafeRead,
            "asked {isolation:?}"
        );
    }
}

#[test]
fn a_projection_proposes_what_the_model_proposes_among_its_operations_only() {
    use memtx_model::MemTx;
    use stateright::Model;
    let model = MemTx::new(preset("quick", Variant::Memtx).expect("quick"));
    let states = reachable(&model.cfg, 2_000);
    let mut all = Vec::new();
    model.actions(&states[0], &mut all);
    assert!(all.len() > 3, "{all:?}");
    // Two operations of the initial state, one twice, and one the model never proposes there.
    let kept = [all[0].clone(), all[2].clone(), all[0].clone()];
    let projected = model.projected(&kept);
    let mut seen_any = 0;
    for s in &states {
        let (mut whole, mut only) = (Vec::new(), Vec::new());
        model.actions(s, &mut whole);
        projected.actions(s, &mut only);
        let expected: Vec<_> = whole.into_iter().filter(|op| kept.contains(op)).collect();
        assert_eq!(only, expected);
        seen_any += only.len();
    }
    assert!(seen_any > 0);
    assert_eq!(projected.symmetry.order(), 1, "no renaming in a projection");
}

/// The states of `walks` random walks of up to `depth` steps from the initial state (a fixed
/// linear congruential choice among the proposed operations the protocol performs).
fn walked(cfg: &memtx_model::Config, walks: u64, depth: usize) -> Vec<State> {
    let mut out = Vec::new();
    let mut ops = Vec::new();
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..walks {
        let mut s = State::initial();
        for _ in 0..depth {
            ops.clear();
            candidate_ops(cfg, &s, &mut ops);
            let next = (0..ops.len()).find_map(|k| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let op = &ops[((x >> 33) as usize + k) % ops.len()];
                step(cfg, &s, op).ok()
            });
            let Some(next) = next else { break };
            out.push(std::mem::replace(&mut s, next));
        }
        out.push(s);
    }
    out
}

/// `candidate_ops_of` (what a walk that picks a family first proposes) is `candidate_ops` with
/// the other families' operations left out, in the same order: for each family alone, for
/// pairs of families, and under both enumerations, over reachable states of `full` (every
/// family) and `paper`, found by random walks.
#[test]
fn proposing_some_families_is_proposing_all_and_keeping_theirs() {
    use memtx_model::machine::candidate_ops_of;
    use memtx_model::ops::{Families, Family};
    for name in ["full", "paper"] {
        for enumeration in [Enumeration::Filtered, Enumeration::Wide] {
            let mut cfg = preset(name, Variant::Memtx).expect("a preset");
            cfg.domain.enumeration = enumeration;
            let states = walked(&cfg, 300, 30);
            let (mut all, mut some) = (Vec::new(), Vec::new());
            let mut seen = Families::NONE;
            for (n, s) in states.iter().enumerate() {
                all.clear();
                candidate_ops(&cfg, s, &mut all);
                let f = Family::ALL[n % Family::ALL.len()];
                let g = Family::ALL[(n / Family::ALL.len()) % Family::ALL.len()];
                for families in [Families::only(f), Families::only(f).with(g)] {
                    some.clear();
                    candidate_ops_of(&cfg, s, families, &mut some);
                    let kept: Vec<_> = all
                        .iter()
                        .filter(|op| families.contains(op.family()))
                        .cloned()
                        .collect();
                    assert_eq!(some, kept, "{name}, {families:?}, state:\n{s:?}");
                    for op in &some {
                        seen = seen.with(op.family());
                    }
                }
                some.clear();
                candidate_ops_of(&cfg, s, Families::ALL, &mut some);
                assert_eq!(some, all, "{name}: every family is candidate_ops");
            }
            if name == "full" {
                assert_eq!(
                    seen,
                    Families::ALL,
                    "{enumeration:?}: a family never proposed"
                );
            }
        }
    }
}

/// The enumeration proposes the domain's operations, not others: in the initial state the wide
/// enumeration (which filters nothing) offers an `Observe` for exactly each write shape of the
/// domain at each slot, value and owner (none without observations), and tool calls of exactly
/// the kinds the domain allows (irreversible always, reversible only with `reversible_calls`).
/// The filter tests above compare the filtered enumeration with the wide one, so they cannot
/// see a change both share, such as an inverted source test in the `Observe` loop (found by
/// mutating `machine.rs`).
#[test]
fn the_operations_offered_are_the_domains_own() {
    use memtx_model::ops::Op;
    use std::collections::BTreeSet;
    for &name in memtx_model::presets::PRESETS {
        let mut cfg = preset(name, Variant::Memtx).expect("a preset");
        cfg.domain.enumeration = Enumeration::Wide;
        let (d, b) = (&cfg.domain, &cfg.bounds);
        let mut ops = Vec::new();
        candidate_ops(&cfg, &State::initial(), &mut ops);
        let observed: BTreeSet<String> = ops
            .iter()
            .filter(|op| matches!(op, Op::Observe { .. }))
            .map(|op| format!("{op:?}"))
            .collect();
        let mut expected = BTreeSet::new();
        if d.observe {
            for w in &d.writes {
                for slot in 0..b.slots {
                    for value in 0..b.values {
                        for owner in 0..b.agents {
                            let op = Op::Observe {
                                source: w.source,
                                slot,
                                value,
                                confidence: w.confidence,
                                scope: w.scope,
                                owner,
                            };
                            expected.insert(format!("{op:?}"));
                        }
                    }
                }
            }
        }
        assert_eq!(observed, expected, "{name}: the observations offered");
        let calls: BTreeSet<bool> = ops
            .iter()
            .filter_map(|op| match op {
                Op::CallTool { reversible, .. } => Some(*reversible),
                _ => None,
            })
            .collect();
        let allowed: BTreeSet<bool> = [false]
            .into_iter()
            .chain(d.reversible_calls.then_some(true))
            .collect();
        assert_eq!(calls, allowed, "{name}: the kinds of tool call offered");
    }
}
