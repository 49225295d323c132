//! A shard's tables: the visited table of the closed levels, the fresh table and parent log
//! of the open level, the frontiers; insertion, growth and the closing of a level.

use crate::explore::fresh::{FreshTable, Probe};
use crate::explore::frontier::Frontier;
use crate::explore::path::ParentLog;
use crate::explore::visited::{probe_key, VisitedTable, MAX_PROBE_ATTEMPTS};
use std::sync::Arc;

/// Result of [`Shard::insert`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Insert {
    /// The state was not present and now is, under this key.
    New(u64),
    /// The state was already present.
    Known,
    /// The state was not present and the tables are full (memory budget exhausted).
    Full,
}

/// What a worker owns: its visited table, the fresh table and parent log of the open level,
/// and its share of the current and next level; see the [module documentation](self).
pub(crate) struct Shard {
    /// The keys of every state of the closed levels.
    pub(crate) table: VisitedTable,
    /// The states first reached during the open level.
    pub(crate) fresh: FreshTable,
    /// Keys and parent references, level by level.
    pub(crate) log: ParentLog,
    pub(crate) current: Frontier,
    pub(crate) next: Frontier,
    exact: bool,
    collisions: u64,
    /// Look arriving states up in the fresh table before the visited table (chosen per
    /// level from the previous level's hit counts; either order gives the same answers).
    fresh_first: bool,
    /// Arrivals of the open level found in the visited table (closed levels).
    old_hits: u64,
    /// Arrivals of the open level found in the fresh table (the open level).
    fresh_hits: u64,
    /// Size of this shard's part of the last closed level.
    previous_level: usize,
    /// After a resume: the keys of the levels before the checkpoint's frontier, shared
    /// read-only by every shard (their owners for the new thread count cannot be known
    /// without their packed bytes, which a checkpoint does not keep; see
    /// [`crate::explore::checkpoint`]).
    pub(crate) restored: Option<Arc<VisitedTable>>,
    /// Whether [`Shard::bytes`] counts the restored table (shard 0 does, once for all).
    pub(crate) counts_restored: bool,
}

impl Shard {
    /// An empty shard.
    pub(crate) fn new(exact: bool) -> Self {
        Shard {
            table: VisitedTable::new(exact),
            fresh: FreshTable::new(),
            log: ParentLog::default(),
            current: Frontier::default(),
            next: Frontier::default(),
            exact,
            collisions: 0,
            fresh_first: false,
            old_hits: 0,
            fresh_hits: 0,
            previous_level: 0,
            restored: None,
            counts_restored: false,
        }
    }

    /// Bytes held by the tables, the parent log and both frontiers.
    pub(crate) fn bytes(&self) -> u64 {
        let restored = match &self.restored {
            Some(table) if self.counts_restored => table.bytes(),
            _ => 0,
        };
        restored
            + self.table.bytes()
            + self.fresh.bytes()
            + self.log.bytes()
            + self.log.staging_bytes()
            + self.current.bytes()
            + self.next.bytes()
    }

    /// Distinct states of the closed levels.
    pub(crate) fn len(&self) -> u64 {
        self.log.len()
    }

    /// States stored under a secondary key because their fingerprint collided with another
    /// state's (exact mode only).
    pub(crate) fn collisions(&self) -> u64 {
        self.collisions
    }

    /// Whether one more new state would take the visited table (which must have room for
    /// the open level too) or the fresh table past its growth threshold.
    #[inline]
    pub(crate) fn needs_growth(&self) -> bool {
        let fresh = self.fresh.len();
        self.table.len() + fresh >= self.table.grow_at() || fresh >= self.fresh.grow_at()
    }

    fn table_needs_growth(&self) -> bool {
        self.table.len() + self.fresh.len() >= self.table.grow_at()
    }

    /// Bytes that [`Shard::grow`] would allocate on top of [`Shard::bytes`].
    pub(crate) fn growth_bytes(&self) -> u64 {
        let mut bytes = 0;
        if self.table_needs_growth() {
            bytes += self.table.growth_bytes();
        }
        if self.fresh.len() >= self.fresh.grow_at() {
            bytes += self.fresh.growth_bytes();
        }
        bytes
    }

    /// Grows whichever table [`Shard::needs_growth`] refers to, once.
    pub(crate) fn grow(&mut self) {
        if self.table_needs_growth() {
            self.table.grow();
        }
        if self.fresh.len() >= self.fresh.grow_at() {
            self.fresh.grow();
        }
    }

    /// Hints the CPU to load the buckets that inserting `fp` reads.
    #[inline]
    pub(crate) fn prefetch(&self, fp: u64) {
        self.fresh.prefetch(fp);
        self.table.prefetch(fp);
        if let Some(restored) = &self.restored {
            restored.prefetch(fp);
        }
    }

    /// Whether `fp` is a key of a closed level (this shard's, or a restored one).
    #[inline(always)]
    fn is_old(&self, fp: u64) -> bool {
        self.table.contains(fp) || self.restored.as_ref().is_some_and(|r| r.contains(fp))
    }

    /// Inserts a state with fingerprint `fp` and packed form `bytes`, reached from the
    /// state with key `parent` and parent reference `parent_ref`. A state of a closed level
    /// is [`Insert::Known`]; a state already reached during the open level keeps the
    /// smaller parent key (and its reference); a new state joins the open level: fresh
    /// table, parent log and next frontier, at the same index in the last two.
    #[inline(always)]
    pub(crate) fn insert(&mut self, fp: u64, parent: u64, parent_ref: u32, bytes: &[u8]) -> Insert {
        if self.exact {
            return self.insert_exact(fp, parent, parent_ref, bytes);
        }
        if !self.fresh_first && self.is_old(fp) {
            self.old_hits += 1;
            return Insert::Known;
        }
        match self.fresh.probe(fp) {
            Probe::Found(slot) => {
                self.fresh_hits += 1;
                self.offer_parent(slot, parent, parent_ref);
                Insert::Known
            }
            Probe::Vacant(slot) => {
                if self.fresh_first && self.is_old(fp) {
                    self.old_hits += 1;
                    return Insert::Known;
                }
                self.add_fresh(slot, fp, parent, parent_ref, bytes)
            }
        }
    }

    /// The same-level arrival rule: keep the smaller parent key.
    #[inline]
    fn offer_parent(&mut self, slot: usize, parent: u64, parent_ref: u32) {
        let (stored, index) = self.fresh.entry(slot);
        if parent < stored {
            self.fresh.set_parent(slot, parent);
            self.log.set_parent(index, parent_ref);
        }
    }

    #[inline]
    fn add_fresh(
        &mut self,
        slot: usize,
        key: u64,
        parent: u64,
        parent_ref: u32,
        bytes: &[u8],
    ) -> Insert {
        let fresh = self.fresh.len();
        if self.table.len() + fresh >= self.table.limit() || fresh >= self.fresh.limit() {
            return Insert::Full;
        }
        let index = self.log.push(key, parent_ref);
        self.fresh.fill(slot, key, parent, index);
        self.next.push(bytes);
        Insert::New(key)
    }

    /// Exact mode: follows the fingerprint's probe sequence, comparing bytes with the
    /// visited table's arena (closed levels) or the next frontier (open level).
    #[inline(never)]
    fn insert_exact(&mut self, fp: u64, parent: u64, parent_ref: u32, bytes: &[u8]) -> Insert {
        for attempt in 0..MAX_PROBE_ATTEMPTS {
            let want = probe_key(fp, attempt);
            if let Some(slot) = self.table.find(want) {
                if self.table.bytes_at(slot) == Some(bytes) {
                    return Insert::Known;
                }
                continue;
            }
            match self.fresh.probe(want) {
                Probe::Found(slot) => {
                    let (_, index) = self.fresh.entry(slot);
                    if self.next.get(index as usize) == bytes {
                        self.offer_parent(slot, parent, parent_ref);
                        return Insert::Known;
                    }
                }
                Probe::Vacant(slot) => {
                    let result = self.add_fresh(slot, want, parent, parent_ref, bytes);
                    if attempt > 0 && result != Insert::Full {
                        self.collisions += 1;
                    }
                    return result;
                }
            }
        }
        panic!("[memtx internal bug] {MAX_PROBE_ATTEMPTS} colliding keys for one fingerprint")
    }

    /// Closes the open level: its keys move from the fresh table into the visited table (in
    /// the fresh table's bucket order, which is also almost ascending bucket order in the
    /// visited table), and its parent log entries become a closed level. Then the fresh
    /// table is resized for the next level's expected size (this level's size times its
    /// growth over the previous one) if `memory_allows` the extra bytes.
    pub(crate) fn end_level(&mut self, memory_allows: impl Fn(u64) -> bool) {
        let level = self.log.open_len();
        assert_eq!(
            level,
            self.fresh.len(),
            "[memtx internal bug] fresh table and parent log disagree on the level's size"
        );
        let table = &mut self.table;
        let next = &self.next;
        if self.exact {
            self.fresh.drain(
                |_| {},
                |key, index| {
                    let slot = table.add(key);
                    table.store_bytes(slot, next.get(index as usize));
                },
            );
        } else {
            // `add` borrows the table mutably, so the prefetch goes through a copy of the
            // table's address and size (the table does not grow during the drain).
            let prefetcher = table.prefetcher();
            self.fresh.drain(
                |key| prefetcher.prefetch(key),
                |key, _| {
                    table.add(key);
                },
            );
        }
        self.log.close_level();
        let expected = if self.previous_level == 0 {
            level * 2
        } else {
            let ratio = (level as f64 / self.previous_level as f64).clamp(0.5, 4.0);
            (level as f64 * ratio) as usize
        };
        self.previous_level = level;
        if let Some(extra) = self.fresh.resize_bytes(expected) {
            if memory_allows(extra) {
                self.fresh.resize_for(expected);
            }
        }
        self.fresh_first = self.fresh_hits > self.old_hits;
        self.old_hits = 0;
        self.fresh_hits = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::path::{key_chain, parent_ref, NO_PARENT_REF};
    use crate::explore::visited::{fmix64, NO_PARENT};

    fn key(i: u64) -> u64 {
        fmix64(i) | 1
    }

    /// Closes the open level as a worker does between levels.
    fn close(shard: &mut Shard) {
        shard.end_level(|_| true);
        std::mem::swap(&mut shard.current, &mut shard.next);
        shard.next.clear();
    }

    /// A shard with one initial state per key, level 0 closed.
    fn with_initial(keys: &[u64]) -> Shard {
        let mut shard = Shard::new(false);
        for &k in keys {
            assert_eq!(
                shard.insert(k, NO_PARENT, NO_PARENT_REF, &k.to_le_bytes()),
                Insert::New(k)
            );
        }
        close(&mut shard);
        shard
    }

    #[test]
    fn smallest_same_level_parent_wins_whatever_the_arrival_order() {
        let parents = [key(1), key(2), key(3), key(4)];
        let smallest = parents.iter().copied().min().expect("four parents");
        let mut orders = Vec::new();
        // All 24 arrival orders of the four parents.
        for a in 0..4 {
            for b in 0..4 {
                for c in 0..4 {
                    let d = 6 - a - b - c;
                    if a != b && a != c && b != c && d < 4 && d != a && d != b && d != c {
                        orders.push([a, b, c, d]);
                    }
                }
            }
        }
        assert_eq!(orders.len(), 24);
        let child = key(99);
        for order in orders {
            let mut shard = with_initial(&parents);
            for (n, &p) in order.iter().enumerate() {
                let expected = if n == 0 {
                    Insert::New(child)
                } else {
                    Insert::Known
                };
                let parent_ref = parent_ref(p, 0, 1);
                assert_eq!(shard.insert(child, parents[p], parent_ref, b"c"), expected);
                // Every state of level 0 is known to level 1.
                assert_eq!(shard.insert(parents[p], child, 0, b"p"), Insert::Known);
            }
            close(&mut shard);
            // The child is the first (and only) state of level 1 in the one shard.
            let at = parent_ref(0, 0, 1);
            let chain = key_chain(&[&shard.log], at, 1);
            assert_eq!(chain, vec![smallest, child], "order {order:?}");
            // A later level cannot change the parent of a closed level's state.
            assert_eq!(shard.insert(child, NO_PARENT, 0, b"c"), Insert::Known);
            close(&mut shard);
            assert_eq!(key_chain(&[&shard.log], at, 1), vec![smallest, child]);
        }
    }

    #[test]
    fn exact_mode_tells_colliding_states_apart_in_both_tables() {
        let mut shard = Shard::new(true);
        let fp = 0xABCD_0000_1234_5678;
        assert_eq!(
            shard.insert(fp, NO_PARENT, NO_PARENT_REF, b"first"),
            Insert::New(fp)
        );
        // Same fingerprint, other bytes, same level: told apart through the fresh table.
        let Insert::New(second) = shard.insert(fp, NO_PARENT, NO_PARENT_REF, b"second") else {
            panic!("collision not told apart in the open level");
        };
        assert_ne!(second, fp);
        assert_eq!(
            shard.insert(fp, NO_PARENT, NO_PARENT_REF, b"second"),
            Insert::Known
        );
        close(&mut shard);
        // Closed: told apart through the visited table's stored bytes.
        assert_eq!(shard.insert(fp, 5, 0, b"first"), Insert::Known);
        assert_eq!(shard.insert(fp, 5, 0, b"second"), Insert::Known);
        let Insert::New(third) = shard.insert(fp, 5, 0, b"third") else {
            panic!("collision not told apart in a closed level");
        };
        assert!(third != fp && third != second);
        close(&mut shard);
        assert_eq!(shard.collisions(), 2);
        assert_eq!(shard.len(), 3);
        assert_eq!(shard.table.key_of(fp, b"third"), Some(third));
        assert_eq!(shard.current.get(0), b"third");
    }

    #[test]
    fn memory_accounting_and_the_hard_fill_limit() {
        let mut shard = Shard::new(false);
        let empty = shard.bytes();
        assert_eq!(
            empty,
            shard.table.bytes() + shard.fresh.bytes() + shard.log.bytes()
        );
        // Without growing, the shard accepts states up to 15/16 of the smaller table and
        // then reports it full.
        let limit = shard.table.limit().min(shard.fresh.limit());
        let mut added = 0;
        let mut i = 0;
        loop {
            i += 1;
            match shard.insert(key(i), NO_PARENT, NO_PARENT_REF, b"") {
                Insert::New(_) => added += 1,
                Insert::Full => break,
                Insert::Known => panic!("distinct keys"),
            }
            assert!(added <= limit);
        }
        assert_eq!(added, limit);
        assert!(shard.needs_growth());
        // A known state is still found when the tables are full.
        assert_eq!(
            shard.insert(key(1), NO_PARENT, NO_PARENT_REF, b""),
            Insert::Known
        );
        let extra = shard.growth_bytes();
        assert!(extra > 0);
        let before = shard.bytes();
        // The log's staging vectors and the frontier grew with the level.
        assert!(before >= empty + added as u64 * 12);
        shard.grow();
        assert!(shard.bytes() <= before + extra);
        assert!(shard.bytes() > before);
        close(&mut shard);
        assert_eq!(shard.len(), added as u64);
        assert_eq!(shard.table.len(), added);
        // The closed level is accounted at 12 bytes per state (plus a small header).
        let log = shard.log.bytes();
        assert!(log >= added as u64 * 12 && log < added as u64 * 12 + 256);
        assert!(shard.bytes() >= shard.table.bytes() + shard.fresh.bytes() + log);
    }
}
