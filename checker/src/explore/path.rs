//! The parent log, and rebuilding a discovery's path from it.
//!
//! # The parent log
//!
//! No actions and no action indices are stored. For every state the engine keeps only a
//! reference to its *parent*, the state it was reached from at the previous depth, chosen
//! by a rule that depends on the model alone: **the parent with the smallest key** among all
//! the states of the previous level that have it as a successor. While a level is open that
//! choice is still being made, in the shard's fresh table ([`super::visited`]), which keeps
//! the smallest parent key seen so far, whatever the order in which the threads deliver the
//! arrivals. When the level closes, the choice is final, and each shard appends the level to
//! its [`ParentLog`]: two arrays of exact size,
//!
//! * `keys`: the keys of the shard's states of that level, in *discovery order* (the order in
//!   which they joined the level, which is also their order in the next frontier), 8 bytes;
//! * `parents`: for each of them a 32-bit reference to its parent in the previous level,
//!   4 bytes;
//!
//! 12 bytes per state, with no load factor and no per-state overhead. A parent reference is
//! `index · shards + shard` ([`parent_ref`]), the parent's position in its shard's part of
//! its level: the worker that expands the `i`-th state of a shard's part (its own, or a
//! peer's it helps with) knows both numbers, puts the reference in every successor record,
//! and the owner of the successor stores the reference of the smallest-key parent. The
//! reference names a shard without knowing the sizes of the other shards' parts, so no
//! worker ever writes another's log during the search; the only thing of it a worker reads
//! is the keys of the level being expanded, shared read-only while it helps with that
//! shard's part. (One level may hold at most about 2^32 states; the engine stops with an internal
//! error beyond that, long after memory would have run out on any machine this runs on.)
//!
//! Discovery order depends on thread timing, so the *values* of the references do too; what
//! they point at does not. The keys of a level are deliberately not sorted, and need no
//! search: a discovery is reported with the reference of the state it was made on (the
//! worker that expands a state knows it), so the walk below starts there.
//!
//! # Rebuilding a path
//!
//! To rebuild the path to a discovery of level `d` with reference `r`:
//!
//! 1. walk the log backwards: read the key `kd` at `r` in level `d`, follow its parent
//!    reference into level `d − 1`, and so on down to level 0, giving the chain of keys
//!    `k0, k1, …, kd` (see [`key_chain`]);
//! 2. re-execute forwards: take the first initial state (in `init_states()` order, within
//!    the boundary) whose key is `k0`; then, from each state, try the actions in
//!    `actions()` order and take the first whose successor (within the boundary) has the
//!    next key of the chain.
//!
//! A key is computed exactly as during exploration: canonicalize under symmetry,
//! fingerprint, and in exact mode look the packed bytes up in the owning shard's visited
//! table. Under symmetry the chain holds canonical keys, while re-execution walks real
//! states: the path keeps the actual successor, not its canonical representative, so each
//! step is a real transition of the model. (If `s` and `c` are symmetric and `c` reaches
//! `t`, then `s` reaches a state symmetric to `t`; that is what a valid symmetry
//! guarantees.)
//!
//! The chain is a function of the model (smallest-key parents), and everything here is a
//! function of the model and of the chain, so the rebuilt path is the same for every thread
//! count and every run of the same build.

use super::coordinator::Sighting;
use super::packed::PackedState;
use super::report::ExploreError;
use super::visited::{fingerprint_packed, shard_of, VisitedTable};
use super::{Canonicalizer, Trace};
use stateright::Model;
use std::hash::Hash;
use std::sync::Arc;

/// Parent reference of an initial state.
pub(crate) const NO_PARENT_REF: u32 = u32::MAX;

/// The parent reference of the state at `index` in shard `shard`'s part of its level:
/// `index · shards + shard`, which names the shard and the position without knowing the
/// sizes of the other shards' parts.
///
/// # Panics
///
/// If the reference does not fit in 32 bits (a level of about 2^32 states).
#[inline]
pub(crate) fn parent_ref(index: usize, shard: usize, shards: usize) -> u32 {
    index
        .checked_mul(shards)
        .and_then(|r| r.checked_add(shard))
        .and_then(|r| u32::try_from(r).ok())
        .filter(|&r| r != NO_PARENT_REF)
        .unwrap_or_else(|| {
            panic!(
                "[memtx internal bug] parent reference overflow: a BFS level of about 2^32 \
                 states is beyond this engine's 32-bit parent references"
            )
        })
}

/// A closed level's keys and parent references, shared without a copy.
pub(crate) type SharedLevel = (Arc<[u64]>, Arc<[u32]>);

/// One closed level of one shard: its keys in discovery order and each one's parent
/// reference. Exact-size slices, so the level takes 12 bytes per state; the keys are shared
/// (`Arc`) because while the level is expanded other workers may read them (work stealing,
/// [`super::shard`]).
struct Level {
    keys: Arc<[u64]>,
    parents: Arc<[u32]>,
}

/// One shard's parent log: for every level, the keys of the shard's states of that level
/// and a 32-bit reference to each one's parent; see the [module documentation](self).
///
/// The level being explored is *open*: its entries accumulate in two reused vectors and
/// are copied into exact-size arrays when the level is closed.
#[derive(Default)]
pub(crate) struct ParentLog {
    levels: Vec<Level>,
    open_keys: Vec<u64>,
    open_parents: Vec<u32>,
    closed: u64,
}

impl ParentLog {
    /// Appends a state to the open level; returns its index in the level.
    #[inline]
    pub(crate) fn push(&mut self, key: u64, parent: u32) -> u32 {
        let index = u32::try_from(self.open_keys.len()).unwrap_or_else(|_| {
            panic!(
                "[memtx internal bug] level index overflow: one shard's part of a BFS level \
                 holds 2^32 states, beyond this engine's 32-bit indices"
            )
        });
        self.open_keys.push(key);
        self.open_parents.push(parent);
        index
    }

    /// Replaces the parent reference of the open level's `index`-th state.
    #[inline]
    pub(crate) fn set_parent(&mut self, index: u32, parent: u32) {
        self.open_parents[index as usize] = parent;
    }

    /// Number of states in the open level.
    pub(crate) fn open_len(&self) -> usize {
        self.open_keys.len()
    }

    /// Closes the open level (possibly empty).
    pub(crate) fn close_level(&mut self) {
        self.closed += self.open_keys.len() as u64;
        self.levels.push(Level {
            keys: self.open_keys.as_slice().into(),
            parents: self.open_parents.as_slice().into(),
        });
        self.open_keys.clear();
        self.open_parents.clear();
    }

    /// Appends a closed level given whole (a level restored from a checkpoint,
    /// [`super::checkpoint`]); the open level must be empty.
    pub(crate) fn push_closed_level(&mut self, keys: Vec<u64>, parents: Vec<u32>) {
        assert!(
            self.open_keys.is_empty() && keys.len() == parents.len(),
            "[memtx internal bug] a restored level with an open level or unequal arrays"
        );
        self.closed += keys.len() as u64;
        self.levels.push(Level {
            keys: keys.into(),
            parents: parents.into(),
        });
    }

    /// The closed levels, shared (no copy): per level its keys and parent references, for
    /// writing a checkpoint.
    pub(crate) fn closed_levels(&self) -> Vec<SharedLevel> {
        self.levels
            .iter()
            .map(|l| (Arc::clone(&l.keys), Arc::clone(&l.parents)))
            .collect()
    }

    /// Number of states in the closed levels.
    pub(crate) fn len(&self) -> u64 {
        self.closed
    }

    /// The keys of the last closed level (the level being expanded), in discovery order.
    pub(crate) fn last_keys(&self) -> Arc<[u64]> {
        match self.levels.last() {
            Some(level) => Arc::clone(&level.keys),
            None => panic!("[memtx internal bug] expanding a level that was never closed"),
        }
    }

    /// The key and parent reference of the `index`-th state of level `level`.
    pub(crate) fn entry(&self, level: usize, index: usize) -> Option<(u64, u32)> {
        let level = self.levels.get(level)?;
        Some((*level.keys.get(index)?, level.parents[index]))
    }

    /// Bytes held by the closed levels (exactly 12 per state, plus a few per level).
    pub(crate) fn bytes(&self) -> u64 {
        let per_level = std::mem::size_of::<Level>();
        self.levels
            .iter()
            .map(|l| (l.keys.len() * 8 + l.parents.len() * 4 + per_level) as u64)
            .sum::<u64>()
            + (self.levels.capacity() - self.levels.len()) as u64 * per_level as u64
    }

    /// Bytes held by the open level's reused vectors (working memory).
    pub(crate) fn staging_bytes(&self) -> u64 {
        (self.open_keys.capacity() * 8 + self.open_parents.capacity() * 4) as u64
    }
}

/// The chain of keys from an initial state to the state with reference `reference` in level
/// `level` ([`parent_ref`]), read from the shards' parent logs; see the
/// [module documentation](self).
pub(crate) fn key_chain(logs: &[&ParentLog], reference: u32, level: usize) -> Vec<u64> {
    let shards = logs.len();
    let mut shard = reference as usize % shards;
    let mut index = reference as usize / shards;
    let mut chain = Vec::with_capacity(level + 1);
    let mut level = level;
    loop {
        let Some((key, parent)) = logs[shard].entry(level, index) else {
            panic!("[memtx internal bug] parent reference to a missing entry of level {level}");
        };
        chain.push(key);
        if level == 0 {
            assert_eq!(
                parent, NO_PARENT_REF,
                "[memtx internal bug] an initial state with a parent"
            );
            break;
        }
        assert_ne!(
            parent, NO_PARENT_REF,
            "[memtx internal bug] a state of level {level} without a parent"
        );
        shard = parent as usize % shards;
        index = parent as usize / shards;
        level -= 1;
    }
    chain.reverse();
    chain
}

/// Computes visited-set keys of arbitrary states.
pub(crate) struct Keyer<'a, M: Model> {
    pub(crate) model: &'a M,
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
        let canonical = self.symmetry.map(|f| f(self.model, state));
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

/// Rebuilds the path to the state `(key, reference)` of level `steps` (that many actions
/// from an initial state); see the [module documentation](self).
pub(crate) fn rebuild<M>(
    model: &M,
    keyer: &mut Keyer<'_, M>,
    logs: &[&ParentLog],
    property: &'static str,
    (key, reference): Sighting,
    steps: usize,
) -> Result<Trace<M>, ExploreError>
where
    M: Model,
    M::State: Hash + PackedState,
    M::Action: Clone,
{
    let chain = key_chain(logs, reference, steps);
    assert_eq!(
        chain.last(),
        Some(&key),
        "[memtx internal bug] a discovery's reference does not name its key"
    );
    replay(model, keyer, &chain, property)
}

/// Re-executes the key chain `chain` (from an initial state to a discovery of `property`)
/// into a path, step 2 of the [module documentation](self): the first initial state with
/// the first key, then at each step the first action whose successor has the next key.
pub(crate) fn replay<M>(
    model: &M,
    keyer: &mut Keyer<'_, M>,
    chain: &[u64],
    property: &'static str,
) -> Result<Trace<M>, ExploreError>
where
    M: Model,
    M::State: Hash + PackedState,
    M::Action: Clone,
{
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_log_rebuilds_chains_across_shards() {
        // Two shards; the walk follows references, whichever shard a key is in.
        let shards = 2;
        let (a, b) = (0x10, 0x8000_0000_0000_0010u64);
        let (c, d) = (0x20, 0x8000_0000_0000_0020u64);
        let e = 0x30;
        let mut logs = [ParentLog::default(), ParentLog::default()];
        // Level 0: a in shard 0, b in shard 1.
        logs[0].push(a, NO_PARENT_REF);
        logs[1].push(b, NO_PARENT_REF);
        for log in &mut logs {
            log.close_level();
        }
        // Level 1: c (parent b, index 0 of shard 1) and d (parent a, later replaced by b).
        logs[0].push(c, parent_ref(0, 1, shards));
        let at = logs[1].push(d, parent_ref(0, 0, shards));
        logs[1].set_parent(at, parent_ref(0, 1, shards));
        // Level 2: e, parent d (index 0 of shard 1).
        for log in &mut logs {
            log.close_level();
        }
        assert_eq!(logs[0].open_len(), 0);
        logs[0].push(e, parent_ref(0, 1, shards));
        for log in &mut logs {
            log.close_level();
        }
        for log in &mut logs {
            log.push(c, 0);
            log.close_level();
        }
        let logs: Vec<&ParentLog> = logs.iter().collect();
        assert_eq!(logs[0].last_keys()[0], c);
        assert_eq!(logs[0].len() + logs[1].len(), 5 + 2);
        assert_eq!(logs[1].last_keys()[0], c);
        let (first_of_0, first_of_1) = (parent_ref(0, 0, shards), parent_ref(0, 1, shards));
        assert_eq!(key_chain(&logs, first_of_0, 2), vec![b, d, e]);
        assert_eq!(key_chain(&logs, first_of_0, 1), vec![b, c]);
        assert_eq!(key_chain(&logs, first_of_1, 1), vec![b, d]);
        assert_eq!(key_chain(&logs, first_of_0, 0), vec![a]);
        assert_eq!(key_chain(&logs, first_of_1, 0), vec![b]);
        // Exactly 12 bytes per state, plus a fixed size per level.
        let per_level = std::mem::size_of::<Level>() as u64;
        assert!(logs[0].bytes() >= 4 * 12 + 4 * per_level);
    }

    #[test]
    fn parent_refs_name_shard_and_index() {
        assert_eq!(parent_ref(0, 0, 1), 0);
        assert_eq!(parent_ref(5, 2, 3), 17);
        assert_eq!(17 % 3, 2);
        assert_eq!(17 / 3, 5);
        let overflow = std::panic::catch_unwind(|| parent_ref(1 << 32, 0, 1));
        assert!(overflow.is_err());
    }
}
