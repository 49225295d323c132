//! Does a checkpoint describe a run of this model? A checkpoint is untrusted input: its
//! checksum catches damage, not an edit whose checksum was recomputed. An edited header
//! (another variant, `agents` 1 → 4) resumed before and reported a mixed result as the
//! uninterrupted run's, or ended in `[memtx internal bug] could not replay the discovery
//! path` (issue 26).
//!
//! [`check_fits`] regenerates the first levels of the model, breadth-first from its initial
//! states exactly as the explorer does (same symmetry, same boundary, same keys), and compares
//! each level's set of keys with the checkpoint's, up to a budget of states. A configuration
//! that differs from the saved run in what its first levels reach is refused in one line. An
//! edit whose effect shows only deeper than the budget reaches (a variant that differs only
//! after many steps) is not caught: that is said in the README.

use super::checkpoint::Checkpoint;
use super::options::Canonicalizer;
use super::packed::PackedState;
use super::visited::fingerprint_packed;
use rustc_hash::FxHashSet;
use stateright::Model;
use std::hash::Hash;

/// States regenerated at most: the levels compared are those that fit in it.
pub(crate) const FIT_BUDGET: usize = 200_000;

/// Checks that the checkpoint's first levels are the model's (see the module documentation).
pub(crate) fn check_fits<M>(
    model: &M,
    symmetry: Option<Canonicalizer<M>>,
    ck: &Checkpoint,
) -> Result<(), String>
where
    M: Model,
    M::State: Hash + PackedState,
{
    let mut buffer = Vec::new();
    let mut key = |state: &M::State| {
        let canonical = symmetry.map(|f| f(model, state));
        buffer.clear();
        canonical.as_ref().unwrap_or(state).pack(&mut buffer);
        fingerprint_packed(&buffer)
    };
    let mut seen: FxHashSet<u64> = FxHashSet::default();
    let mut level: Vec<M::State> = Vec::new();
    for state in model.init_states() {
        if model.within_boundary(&state) && seen.insert(key(&state)) {
            level.push(state);
        }
    }
    let mut level_keys: FxHashSet<u64> = seen.clone();
    let mut spent = level.len();
    let mut actions = Vec::new();
    for depth in 0..=ck.level() {
        let saved: FxHashSet<u64> = ck.level_keys(depth).collect();
        if saved != level_keys {
            return Err(format!(
                "its level {depth} holds {} states, of which {} are not among the {} this configuration reaches there: it was written by another configuration or edited",
                saved.len(),
                saved.difference(&level_keys).count(),
                level_keys.len()
            ));
        }
        let next_size = ck.level_keys(depth + 1).count();
        if depth == ck.level() || spent + next_size > FIT_BUDGET {
            return Ok(());
        }
        let mut next = Vec::new();
        level_keys = FxHashSet::default();
        for state in &level {
            actions.clear();
            model.actions(state, &mut actions);
            for action in actions.drain(..) {
                let Some(successor) = model.next_state(state, action) else {
                    continue;
                };
                if !model.within_boundary(&successor) {
                    continue;
                }
                let k = key(&successor);
                if seen.insert(k) {
                    level_keys.insert(k);
                    next.push(successor);
                }
            }
        }
        spent += next.len();
        level = next;
    }
    Ok(())
}
