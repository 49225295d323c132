//! Shortening a walk's counterexample before it is saved: a walk wanders, a person reads.
//!
//! 1. **Removal** (delta debugging, after Zeller): drop runs of steps, halving the run length
//!    down to single steps, keeping a removal when every remaining step is still enabled and
//!    the same invariant still breaks (the trace is then cut at the first state that breaks
//!    it); repeat until no single step can go.
//! 2. **Bounded search**: a breadth-first search from the initial state for a violation of the
//!    same invariant in fewer steps, up to a state budget. BFS finds shortest paths: what it
//!    finds is a shortest counterexample, and if it finishes every depth below the current
//!    length without one, the trace is a shortest counterexample of that invariant in the
//!    configuration. Either is said; a search stopped by its budget is said too.

use crate::engine::memtx_hooks;
use crate::explore::{explore, ExploreOptions, StopReason};
use memtx_model::ops::Op;
use memtx_model::properties::PropertyDef;
use memtx_model::state::State;
use memtx_model::MemTx;
use stateright::Model;

/// What the bounded search around the shortened trace concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Search {
    /// It found a shorter counterexample, which replaced the shortened one: a shortest one,
    /// since breadth-first search finds a property's violations level by level.
    FoundShorter,
    /// It searched every state within one step less than the trace's length: the trace is a
    /// shortest counterexample of its invariant.
    Shortest,
    /// It stopped at its state budget before that depth: the trace may not be the shortest.
    Budget,
    /// It stopped at the memory limit (`--max-memory`) before that depth: the trace may not be
    /// the shortest.
    Memory,
}

/// A shortened counterexample.
#[derive(Clone, Debug)]
pub struct Shortened {
    /// Its steps.
    pub ops: Vec<Op>,
    /// How many steps the walk took to the violation.
    pub walk_steps: usize,
    /// How many steps removal left (before the search).
    pub after_removal: usize,
    /// The bounded search's conclusion (`None` if the trace was already one step long).
    pub search: Option<Search>,
    /// States the search explored.
    pub searched_states: u64,
}

/// Replays `ops` from the initial state: the number of steps after which `def` first breaks,
/// or `None` if a step is refused or it never breaks.
pub fn breaks_after(model: &MemTx, def: &PropertyDef, ops: &[Op]) -> Option<usize> {
    let mut state = model.init_states().into_iter().next()?;
    if !(def.holds)(model, &state) {
        return Some(0);
    }
    let mut next: State = state.clone();
    for (i, op) in ops.iter().enumerate() {
        if !model.next_state_into(&state, op.clone(), &mut next) {
            return None;
        }
        std::mem::swap(&mut state, &mut next);
        if !(def.holds)(model, &state) {
            return Some(i + 1);
        }
    }
    None
}

/// Removal (step 1 of the [module documentation](self)): `ops` must break `def`.
pub fn remove_steps(model: &MemTx, def: &PropertyDef, ops: &[Op]) -> Vec<Op> {
    let mut ops = ops.to_vec();
    if let Some(n) = breaks_after(model, def, &ops) {
        ops.truncate(n);
    }
    let mut chunk = ops.len().div_ceil(2).max(1);
    loop {
        let mut removed = false;
        let mut start = 0;
        while start < ops.len() {
            let end = (start + chunk).min(ops.len());
            let candidate: Vec<Op> = ops[..start].iter().chain(&ops[end..]).cloned().collect();
            match breaks_after(model, def, &candidate) {
                Some(n) => {
                    ops = candidate;
                    ops.truncate(n);
                    removed = true;
                }
                None => start += chunk,
            }
        }
        if chunk == 1 && !removed {
            return ops;
        }
        if !removed {
            chunk = chunk.div_ceil(2).max(1);
        }
    }
}

/// Both steps of the [module documentation](self), the search within `budget` states (and
/// `max_memory` bytes, if given) on `threads` threads. `ops` must break `def`.
pub fn shorten(
    model: &MemTx,
    def: &'static PropertyDef,
    ops: &[Op],
    budget: u64,
    max_memory: Option<u64>,
    threads: usize,
) -> Shortened {
    let walk_steps = breaks_after(model, def, ops).unwrap_or(ops.len());
    let removed = remove_steps(model, def, ops);
    let mut out = Shortened {
        after_removal: removed.len(),
        ops: removed,
        walk_steps,
        search: None,
        searched_states: 0,
    };
    if out.ops.len() <= 1 {
        return out;
    }
    // Every state within len - 1 steps is checked (depth = steps + 1, one more counted).
    let single = MemTx::with_properties(model.cfg.clone(), vec![def]);
    let hooks = memtx_hooks(false);
    let mut options = ExploreOptions::new()
        .threads(threads)
        .next_state_into(hooks.next_state_into)
        .repeats(hooks.repeats)
        .locality(hooks.locality)
        .target_max_depth(out.ops.len() + 1)
        .max_states(budget)
        .finish_when_all_discovered(true);
    if let Some(bytes) = max_memory {
        options = options.max_memory_bytes(bytes);
    }
    let Ok(report) = explore(&single, &options) else {
        return out;
    };
    out.searched_states = report.unique_states;
    let found = report
        .properties
        .iter()
        .find_map(|p| p.discovery.as_ref())
        .map(|d| {
            d.path
                .iter()
                .filter_map(|(_, op)| op.clone())
                .collect::<Vec<Op>>()
        });
    out.search = Some(match found {
        Some(shorter) if shorter.len() < out.ops.len() => {
            out.ops = shorter;
            Search::FoundShorter
        }
        Some(_) => Search::Shortest,
        None => match report.stopped_early {
            None | Some(StopReason::MaxDepth) => Search::Shortest,
            Some(StopReason::Memory) => Search::Memory,
            Some(_) => Search::Budget,
        },
    });
    out
}
