//! Shared helpers of the `trace_*` tests: real paths found by a small breadth-first search.
#![allow(dead_code)]

// Every test that includes this module includes `binary_support` too.
pub use crate::binary_support::Scratch;

use memtx_checker::trace::Trace;
use memtx_model::machine::{candidate_ops, step};
use memtx_model::presets::preset;
use memtx_model::properties::PropertyDef;
use memtx_model::{Config, MemTx, Op, State, Variant};
use std::collections::{HashMap, VecDeque};

/// The `quick` preset under `variant`.
pub fn quick(variant: Variant) -> Config {
    preset("quick", variant).expect("the quick preset exists")
}

/// A shortest path (stateright format) from the initial state to a state satisfying `target`.
pub fn find_path(
    cfg: &Config,
    target: impl Fn(&State) -> bool,
    max_depth: usize,
) -> Option<Vec<(State, Option<Op>)>> {
    let init = State::initial();
    let mut parent: HashMap<State, Option<(State, Op)>> = HashMap::new();
    parent.insert(init.clone(), None);
    let mut queue = VecDeque::from([(init, 0usize)]);
    let mut ops = Vec::new();
    while let Some((s, depth)) = queue.pop_front() {
        if target(&s) {
            let mut path = vec![(s.clone(), None)];
            let mut cur = s;
            while let Some(Some((prev, op))) = parent.get(&cur).cloned() {
                path.push((prev.clone(), Some(op)));
                cur = prev;
            }
            path.reverse();
            return Some(path);
        }
        if depth == max_depth {
            continue;
        }
        ops.clear();
        candidate_ops(cfg, &s, &mut ops);
        for op in &ops {
            if let Ok(t) = step(cfg, &s, op) {
                if !parent.contains_key(&t) {
                    parent.insert(t.clone(), Some((s.clone(), op.clone())));
                    queue.push_back((t, depth + 1));
                }
            }
        }
    }
    None
}

/// A shortest discovery path for property `key` under `variant` of `quick`.
pub fn discovery(
    variant: Variant,
    key: &str,
) -> (Config, &'static PropertyDef, Vec<(State, Option<Op>)>) {
    let cfg = quick(variant);
    let def = PropertyDef::find(key).expect("a known property");
    let model = MemTx::new(cfg.clone());
    let invariant = def.is_invariant();
    let path = find_path(&cfg, |s| (def.holds)(&model, s) != invariant, 12)
        .unwrap_or_else(|| panic!("no discovery of {key} under {}", variant.name()));
    (cfg, def, path)
}

/// A real trace: the shortest I2 violation under `missed-cascade`.
pub fn missed_cascade_trace() -> Trace {
    let (cfg, def, path) = discovery(Variant::MissedCascade, "I2");
    Trace::from_path(
        &cfg,
        def,
        &path,
        "memtx check --preset quick --variant missed-cascade",
    )
    .expect("a well-formed path")
}

/// A short trace made by stepping the quick configuration through a few scripted operations.
pub fn scripted_trace() -> Trace {
    use memtx_model::evidence::Confidence;
    use memtx_model::record::{Kind, RecordSet, Scope, Validity};
    use memtx_model::txn::{Isolation, Tier};
    let cfg = quick(Variant::Memtx);
    let ops = [
        Op::Begin {
            agent: 0,
            tier: Tier::Medium,
            isolation: Isolation::CommittedRead,
        },
        Op::Stage {
            agent: 0,
            kind: Kind::Belief,
            slot: 0,
            value: 1,
            source: 0,
            confidence: Confidence::High,
            scope: Scope::Shared,
            parents: RecordSet::EMPTY,
            validity: Validity::open(0),
        },
        Op::Commit { agent: 0 },
        Op::RequestRevocation { record: 0 },
    ];
    let mut path = vec![(State::initial(), None)];
    for op in ops {
        let pre = path.last().expect("non-empty").0.clone();
        let post = step(&cfg, &pre, &op).expect("the scripted operation is enabled");
        path.last_mut().expect("non-empty").1 = Some(op);
        path.push((post, None));
    }
    let def = PropertyDef::find("E1").expect("E1");
    Trace::from_path(&cfg, def, &path, "scripted")
        .expect("a well-formed path")
        .with_expectation(memtx_checker::trace::Expectation::all_hold())
}

/// A fresh empty directory under the system temp dir, removed when the test passes.
pub fn temp_dir(name: &str) -> Scratch {
    Scratch::new(&format!("trace-tests-{name}"))
}
