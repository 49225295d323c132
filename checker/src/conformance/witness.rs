//! The shortest witness of each rule on one preset: a breadth-first search of the model under
//! `memtx` that records, for every rule, the first attempted step that fires it (refused steps
//! included: the `enable.*` rules fire when a step is refused), and the path that leads there.
//!
//! Breadth first, in the model's own order of states and proposals, so a witness is a shortest
//! one and the same on every run. States are told apart up to the configuration's symmetry (a
//! renamed state fires the same rules), but each kept state is one actually reached, so every
//! witness is a real path of the model.

use memtx_model::machine::{candidate_ops, step, MemTx};
use memtx_model::rules::{take_fired, Fired};
use memtx_model::{Config, Op, State};
use rustc_hash::FxHashSet;

/// The witness of one rule: the operations from the initial state, the last one firing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The operations, in order (the last one fires the rule; it may be refused).
    pub ops: Vec<Op>,
}

/// What one search found.
#[derive(Clone, Debug)]
pub struct Search {
    /// The witness of each rule found (by rule bit).
    pub witnesses: Vec<Option<Witness>>,
    /// States kept.
    pub states: usize,
    /// Whether the search stopped at its state budget before it had expanded every state.
    pub stopped_early: bool,
}

/// Searches `cfg` (breadth first, keeping at most `budget` states) for the shortest witness of
/// every rule it fires.
pub fn search(cfg: &Config, budget: usize) -> Search {
    let model = MemTx::new(cfg.clone());
    // Each kept state: itself, its parent's index and the operation that reached it.
    let mut states: Vec<(State, u32, Option<Op>)> = vec![(State::initial(), u32::MAX, None)];
    let mut seen: FxHashSet<Vec<u8>> = FxHashSet::default();
    let key = |s: &State| {
        let mut bytes = Vec::new();
        model.representative(s).pack(&mut bytes);
        bytes
    };
    seen.insert(key(&states[0].0));
    let mut witnesses: Vec<Option<Witness>> = vec![None; memtx_model::rules::MAX_RULES];
    let mut found: Fired = 0;
    let mut candidates = Vec::new();
    let mut next = 0usize;
    let mut stopped_early = false;
    while next < states.len() {
        let here = next;
        next += 1;
        candidates.clear();
        candidate_ops(cfg, &states[here].0, &mut candidates);
        for op in &candidates {
            take_fired();
            let result = step(cfg, &states[here].0, op);
            let fired = take_fired();
            let new = fired & !found;
            if new != 0 {
                found |= new;
                let mut ops = path(&states, here);
                ops.push(op.clone());
                for (bit, w) in witnesses.iter_mut().enumerate() {
                    if new & (1u128 << bit) != 0 {
                        *w = Some(Witness { ops: ops.clone() });
                    }
                }
            }
            let Ok(post) = result else {
                continue;
            };
            if states.len() >= budget {
                stopped_early = true;
                continue;
            }
            if seen.insert(key(&post)) {
                states.push((post, here as u32, Some(op.clone())));
            }
        }
    }
    Search {
        witnesses,
        states: states.len(),
        stopped_early,
    }
}

/// The operations from the initial state to state `i`.
fn path(states: &[(State, u32, Option<Op>)], mut i: usize) -> Vec<Op> {
    let mut ops = Vec::new();
    while let Some(op) = &states[i].2 {
        ops.push(op.clone());
        i = states[i].1 as usize;
    }
    ops.reverse();
    ops
}
