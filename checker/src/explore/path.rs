//! Rebuilding a discovery's path from parent links.
//!
//! The visited set stores, for every state, only the key of its parent: the state it was
//! first reached from at the previous depth (the smallest such key; see
//! [`super::visited`]). No actions and no action indices are stored. To rebuild the path
//! to a discovered state:
//!
//! 1. follow the parent links from the discovered key back to an initial state (parent
//!    [`NO_PARENT`]), giving the chain of keys `k0, k1, …, kd`;
//! 2. re-execute forwards: take the first initial state (in `init_states()` order, within
//!    the boundary) whose key is `k0`; then, from each state, try the actions in
//!    `actions()` order and take the first whose successor (within the boundary) has the
//!    next key of the chain.
//!
//! A key is computed exactly as during exploration: canonicalize under symmetry,
//! fingerprint, and in exact mode look the packed bytes up in the owning shard's table.
//! Under symmetry the chain holds canonical keys, while re-execution walks real states: the
//! path keeps the actual successor, not its canonical representative, so each step is a
//! real transition of the model. (If `s` and `c` are symmetric and `c` reaches `t`, then `s`
//! reaches a state symmetric to `t`; that is what a valid symmetry guarantees.)
//!
//! Everything here is a function of the model and of the chain, so the rebuilt path is as
//! deterministic as the chain itself.

use super::packed::PackedState;
use super::report::ExploreError;
use super::visited::{fingerprint_packed, shard_of, VisitedTable, NO_PARENT};
use super::{Canonicalizer, Trace};
use stateright::Model;
use std::hash::Hash;

/// Computes visited-set keys of arbitrary states.
pub(crate) struct Keyer<'a, M: Model> {
    pub(crate) symmetry: Option<Canonicalizer<M>>,
    pub(crate) tables: &'a [&'a VisitedTable],
    pub(crate) exact: bool,
    pub(crate) buffer: Vec<u8>,
}

impl<M> Keyer<'_, M>
where
    M: Model,
    M::State: Hash + PackedState,
{
    /// The key `state` has (or would have) in the visited set; `None` in exact mode when
    /// the state is absent.
    pub(crate) fn key_of(&mut self, state: &M::State) -> Option<u64> {
        let canonical = self.symmetry.map(|f| f(state));
        let state = canonical.as_ref().unwrap_or(state);
        self.buffer.clear();
        state.pack(&mut self.buffer);
        let fp = fingerprint_packed(&self.buffer);
        if !self.exact {
            return Some(fp);
        }
        self.tables[shard_of(fp, self.tables.len())].key_of(fp, &self.buffer)
    }
}

/// Rebuilds the path to the state stored under `key`, `steps` actions from an initial
/// state; see the [module documentation](self).
pub(crate) fn rebuild<M>(
    model: &M,
    keyer: &mut Keyer<'_, M>,
    property: &'static str,
    key: u64,
    steps: usize,
) -> Result<Trace<M>, ExploreError>
where
    M: Model,
    M::State: Hash + PackedState,
    M::Action: Clone,
{
    let tables = keyer.tables;
    let mut chain = vec![key];
    let mut at = key;
    loop {
        let parent = tables[shard_of(at, tables.len())]
            .parent_of(at)
            .unwrap_or_else(|| panic!("[memtx internal bug] key {at:#x} missing from its shard"));
        if parent == NO_PARENT {
            break;
        }
        chain.push(parent);
        at = parent;
        assert!(
            chain.len() <= steps + 1,
            "[memtx internal bug] parent chain longer than the discovery depth {steps}"
        );
    }
    assert!(
        chain.len() == steps + 1,
        "[memtx internal bug] parent chain of length {} for a discovery at depth {steps}",
        chain.len()
    );
    chain.reverse();

    let replay_error = |step| ExploreError::PathReplay { property, step };
    let mut current = model
        .init_states()
        .into_iter()
        .filter(|s| model.within_boundary(s))
        .find(|s| keyer.key_of(s) == Some(chain[0]))
        .ok_or_else(|| replay_error(0))?;
    let mut path = Vec::with_capacity(chain.len());
    let mut actions = Vec::new();
    for (step, &want) in chain.iter().enumerate().skip(1) {
        actions.clear();
        model.actions(&current, &mut actions);
        let (action, next) = actions
            .iter()
            .find_map(|action| {
                let next = model.next_state(&current, action.clone())?;
                let hit = model.within_boundary(&next) && keyer.key_of(&next) == Some(want);
                hit.then(|| (action.clone(), next))
            })
            .ok_or_else(|| replay_error(step))?;
        path.push((current, Some(action)));
        current = next;
    }
    path.push((current, None));
    Ok(path)
}

/// Checks that `path` is a real execution of `model`: the first state is an initial state,
/// every step's action is among `model.actions()` of its state and `next_state` maps the
/// state to the next one on the path, and only the last entry has no action.
///
/// # Errors
///
/// The index of the first entry that does not fit (0 if the path is empty or does not
/// start at an initial state).
pub fn check_path<M>(model: &M, path: &[(M::State, Option<M::Action>)]) -> Result<(), usize>
where
    M: Model,
    M::State: PartialEq,
    M::Action: Clone + PartialEq,
{
    let Some((first, _)) = path.first() else {
        return Err(0);
    };
    if !model.init_states().contains(first) {
        return Err(0);
    }
    let mut actions = Vec::new();
    for (index, (state, action)) in path.iter().enumerate() {
        let Some((next, _)) = path.get(index + 1) else {
            return if action.is_none() { Ok(()) } else { Err(index) };
        };
        let Some(action) = action else {
            return Err(index);
        };
        actions.clear();
        model.actions(state, &mut actions);
        if !actions.contains(action)
            || model.next_state(state, action.clone()).as_ref() != Some(next)
        {
            return Err(index);
        }
    }
    Ok(())
}
