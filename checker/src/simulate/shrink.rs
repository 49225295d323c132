//! Shortening a walk's counterexample before it is saved: a walk wanders, a person reads.
//!
//! 1. **Removal** (delta debugging, after Zeller): drop runs of steps, halving the run length
//!    down to single steps, keeping a removal when every remaining step is still enabled and
//!    the same invariant still breaks (the trace is then cut at the first state that breaks
//!    it); repeat until no single step can go.
//! 2. **Search over its own operations**: a breadth-first search of the model projected onto
//!    the operations left (any of them, in any order, any number of times: `MemTx::projected`)
//!    for a violation in fewer steps. Its branching is a handful of operations instead of the
//!    configuration's dozens, so it reaches depths the whole search cannot; every path it finds
//!    is a path of the model.
//! 3. **Bounded search**: a breadth-first search from the initial state for a violation of the
//!    same invariant in fewer steps, up to a state budget. BFS finds shortest paths: what it
//!    finds is a shortest counterexample, and if it finishes every depth below the current
//!    length without one, the trace is a shortest counterexample of that invariant in the
//!    configuration. Either is said; a search stopped by its budget is said too.

use crate::engine::memtx_hooks;
use crate::explore::{explore, ExploreOptions, ExploreReport, StopReason};
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
    /// How many steps removal left.
    pub after_removal: usize,
    /// How many steps the search over the trace's own operations left (before the bounded
    /// search of the whole model).
    pub after_projection: usize,
    /// The bounded search's conclusion (`None` if the trace was already one step long).
    pub search: Option<Search>,
    /// States the search explored.
    pub searched_states: u64,
}

/// Replays `ops` from the initial state: the number of steps after which `def` first breaks,
/// or `None` if a step is not proposed by the model in its state (the configuration's domain
/// does not enumerate it there: `memtx replay` would refuse it), is refused, or it never breaks.
pub fn breaks_after(model: &MemTx, def: &PropertyDef, ops: &[Op]) -> Option<usize> {
    let mut state = model.init_states().into_iter().next()?;
    if !(def.holds)(model, &state) {
        return Some(0);
    }
    let mut next: State = state.clone();
    let mut proposed = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        proposed.clear();
        model.actions(&state, &mut proposed);
        if !proposed.contains(op) || !model.next_state_into(&state, op.clone(), &mut next) {
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
        after_projection: removed.len(),
        ops: removed,
        walk_steps,
        search: None,
        searched_states: 0,
    };
    if out.ops.len() <= 1 {
        return out;
    }
    let single = MemTx::with_properties(model.cfg.clone(), vec![def]);
    let projected = single.projected(&out.ops);
    if let Some((shorter, _)) = bfs(&projected, out.ops.len(), budget, max_memory, threads) {
        if shorter.as_ref().is_some_and(|s| s.len() < out.ops.len()) {
            out.ops = shorter.unwrap_or_default();
            out.after_projection = out.ops.len();
        }
    }
    if out.ops.len() <= 1 {
        return out;
    }
    let Some((found, report)) = bfs(&single, out.ops.len(), budget, max_memory, threads) else {
        return out;
    };
    out.searched_states = report.unique_states;
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

/// What a breadth-first search of the model reports.
type SearchReport = ExploreReport<State, Op>;

/// A breadth-first search of `model` for its one selected property's violation in fewer than
/// `steps` steps, within `budget` states (and `max_memory`): the operations of the shortest
/// one found (`None`: none), and the search's report; `None` if the search could not run.
fn bfs(
    model: &MemTx,
    steps: usize,
    budget: u64,
    max_memory: Option<u64>,
    threads: usize,
) -> Option<(Option<Vec<Op>>, SearchReport)> {
    // Every state within steps - 1 steps is checked (depth = steps + 1, one more counted).
    let hooks = memtx_hooks(false);
    let mut options = ExploreOptions::new()
        .threads(threads)
        .next_state_into(hooks.next_state_into)
        .repeats(hooks.repeats)
        .locality(hooks.locality)
        .target_max_depth(steps + 1)
        .max_states(budget)
        .finish_when_all_discovered(true);
    if let Some(bytes) = max_memory {
        options = options.max_memory_bytes(bytes);
    }
    let report = explore(model, &options).ok()?;
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
    Some((found, report))
}
