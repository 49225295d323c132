//! The fresh table: the states first reached during the level being explored, with the
//! smallest parent key seen so far and each one's index in the level ([`FreshTable`]); the
//! visited table ([`super::visited`]) holds the closed levels.
//!
//! # Layout
//!
//! Same probing and home function, but a bucket holds three 20-byte entries
//! `(key, parent key, index)`: the key, the smallest key among the parents that reached the
//! state so far during this level, and the state's position in the open level (its index in
//! the next frontier and in the parent log's open level). It doubles at 7/8 load and
//! stops at 15/16 when it may not grow. Doubling in the middle of a level moves every entry,
//! so when a level closes the table is instead sized, in one allocation, for the next
//! level's expected size (the closed level's size times its growth over the level before,
//! at 3/4 load), when it is too small for that or more than four times too big and the
//! memory budget allows. Because the two tables use the same monotone home function,
//! draining the fresh table bucket by bucket feeds keys to the visited table in almost
//! ascending bucket order too; the drain also prefetches the visited table's bucket of the
//! key four fresh buckets ahead, since consecutive keys usually land on different cache
//! lines.
//!
use super::visited::{fill_limit, growth_threshold, home, prefetch_read};

/// Entries per bucket of a fresh table: three 20-byte entries in one 64-byte cache line.
const FRESH_SLOTS: usize = 3;

/// Initial (and smallest) number of buckets of a fresh table (12 KiB).
const FRESH_INITIAL_BUCKETS: usize = 192;

/// How many buckets ahead [`FreshTable::drain`] prefetches.
const DRAIN_AHEAD: usize = 4;

/// One cache line of a fresh table: three entries `(key, parent key, index)`.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct FreshBucket {
    keys: [u64; FRESH_SLOTS],
    parents: [u64; FRESH_SLOTS],
    index: [u32; FRESH_SLOTS],
}

const EMPTY_FRESH: FreshBucket = FreshBucket {
    keys: [0; FRESH_SLOTS],
    parents: [0; FRESH_SLOTS],
    index: [0; FRESH_SLOTS],
};

/// Result of [`FreshTable::probe`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// The key is in this slot.
    Found(usize),
    /// The key is absent; this slot is where [`FreshTable::fill`] puts it.
    Vacant(usize),
}

/// The states first reached during the current level: key → (smallest parent key so far,
/// index in the level); see the [module documentation](self).
pub(crate) struct FreshTable {
    buckets: Vec<FreshBucket>,
    len: usize,
    grow_at: usize,
    limit: usize,
}

impl FreshTable {
    /// An empty table of the smallest size.
    pub(crate) fn new() -> Self {
        Self::with_buckets(FRESH_INITIAL_BUCKETS)
    }

    fn with_buckets(buckets: usize) -> Self {
        let slots = buckets * FRESH_SLOTS;
        FreshTable {
            buckets: vec![EMPTY_FRESH; buckets],
            len: 0,
            grow_at: growth_threshold(slots),
            limit: fill_limit(slots),
        }
    }

    /// Number of entries.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Number of entries at which the table should grow.
    #[inline]
    pub(crate) fn grow_at(&self) -> usize {
        self.grow_at
    }

    /// Number of entries the table may hold when it may not grow (15/16 of its slots).
    #[inline]
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes held by the table.
    pub(crate) fn bytes(&self) -> u64 {
        (self.buckets.capacity() * std::mem::size_of::<FreshBucket>()) as u64
    }

    /// Bytes that doubling the table would allocate on top of [`FreshTable::bytes`].
    pub(crate) fn growth_bytes(&self) -> u64 {
        (self.buckets.len() * 2 * std::mem::size_of::<FreshBucket>()) as u64
    }

    /// Hints the CPU to load the home bucket of `key` into cache.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        let index = home(key, self.buckets.len());
        prefetch_read(self.buckets.as_ptr().wrapping_add(index).cast());
    }

    /// Looks `key` up.
    #[inline]
    pub(crate) fn probe(&self, key: u64) -> Probe {
        let buckets = self.buckets.len();
        let mut index = home(key, buckets);
        loop {
            let bucket = &self.buckets[index];
            for (i, &k) in bucket.keys.iter().enumerate() {
                if k == key {
                    return Probe::Found(index * FRESH_SLOTS + i);
                }
                if k == 0 {
                    return Probe::Vacant(index * FRESH_SLOTS + i);
                }
            }
            index += 1;
            if index == buckets {
                index = 0;
            }
        }
    }

    /// Fills the vacant `slot` returned by [`FreshTable::probe`] (with no insertion since).
    #[inline]
    pub(crate) fn fill(&mut self, slot: usize, key: u64, parent: u64, index: u32) {
        let bucket = &mut self.buckets[slot / FRESH_SLOTS];
        let i = slot % FRESH_SLOTS;
        bucket.keys[i] = key;
        bucket.parents[i] = parent;
        bucket.index[i] = index;
        self.len += 1;
    }

    /// The parent key and level index stored in `slot`.
    #[inline]
    pub(crate) fn entry(&self, slot: usize) -> (u64, u32) {
        let bucket = &self.buckets[slot / FRESH_SLOTS];
        let i = slot % FRESH_SLOTS;
        (bucket.parents[i], bucket.index[i])
    }

    /// Replaces the parent key stored in `slot`.
    #[inline]
    pub(crate) fn set_parent(&mut self, slot: usize, parent: u64) {
        self.buckets[slot / FRESH_SLOTS].parents[slot % FRESH_SLOTS] = parent;
    }

    /// Doubles the table, moving every entry.
    pub(crate) fn grow(&mut self) {
        let mut grown = Self::with_buckets(self.buckets.len() * 2);
        for bucket in &self.buckets {
            for i in 0..FRESH_SLOTS {
                let key = bucket.keys[i];
                if key == 0 {
                    continue;
                }
                if let Probe::Vacant(slot) = grown.probe(key) {
                    grown.fill(slot, key, bucket.parents[i], bucket.index[i]);
                }
            }
        }
        *self = grown;
    }

    /// Calls `f(key, index)` for every entry, in bucket order, and empties the table;
    /// `prefetch(key)` is called a few buckets ahead of `f`, for the key that `f` will get
    /// there (so that `f`'s own cache misses overlap).
    pub(crate) fn drain(&mut self, prefetch: impl Fn(u64), mut f: impl FnMut(u64, u32)) {
        let count = self.buckets.len();
        for at in 0..count {
            if let Some(ahead) = self.buckets.get(at + DRAIN_AHEAD) {
                if ahead.keys[0] != 0 {
                    prefetch(ahead.keys[0]);
                }
            }
            let bucket = &mut self.buckets[at];
            if bucket.keys[0] == 0 {
                // Entries fill a bucket from its first slot; an empty first slot means an
                // empty bucket.
                continue;
            }
            for i in 0..FRESH_SLOTS {
                if bucket.keys[i] != 0 {
                    f(bucket.keys[i], bucket.index[i]);
                }
            }
            *bucket = EMPTY_FRESH;
        }
        self.len = 0;
    }

    /// The number of buckets that suits a level of about `expected` states (3/4 load).
    fn buckets_for(expected: usize) -> usize {
        (expected / 9 * 4 + expected % 9 * 4 / 9 + 1).max(FRESH_INITIAL_BUCKETS)
    }

    /// Bytes that [`FreshTable::resize_for`] would allocate on top of what it frees, if
    /// it would resize at all.
    pub(crate) fn resize_bytes(&self, expected: usize) -> Option<u64> {
        let want = Self::buckets_for(expected);
        let have = self.buckets.len();
        let resize = have < want || have > want * 4;
        let bucket = std::mem::size_of::<FreshBucket>() as u64;
        resize.then(|| (want as u64).saturating_sub(have as u64) * bucket)
    }

    /// Resizes the empty table for a level of about `expected` states if it is too small
    /// for it or more than four times too big (it still grows on demand).
    pub(crate) fn resize_for(&mut self, expected: usize) {
        assert_eq!(
            self.len, 0,
            "[memtx internal bug] resizing a non-empty fresh table"
        );
        if self.resize_bytes(expected).is_some() {
            // Free the old array first, so that both are never held at once.
            self.buckets = Vec::new();
            *self = Self::with_buckets(Self::buckets_for(expected));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::visited::{fmix64, nonzero};

    fn key(i: u64) -> u64 {
        nonzero(fmix64(i))
    }

    #[test]
    fn fresh_table_probe_fill_grow_and_drain() {
        let mut fresh = FreshTable::new();
        for i in 1..=50_000u64 {
            if fresh.len() >= fresh.grow_at() {
                fresh.grow();
            }
            let Probe::Vacant(slot) = fresh.probe(key(i)) else {
                panic!("key {i} present before its insertion");
            };
            fresh.fill(slot, key(i), 1000 + i, i as u32);
        }
        assert_eq!(fresh.len(), 50_000);
        for i in 1..=50_000u64 {
            let Probe::Found(slot) = fresh.probe(key(i)) else {
                panic!("key {i} lost");
            };
            assert_eq!(fresh.entry(slot), (1000 + i, i as u32));
            fresh.set_parent(slot, i);
            assert_eq!(fresh.entry(slot), (i, i as u32));
        }
        let big = fresh.bytes();
        let mut drained = Vec::new();
        let prefetched = std::cell::Cell::new(0);
        fresh.drain(
            |_| prefetched.set(prefetched.get() + 1),
            |k, index| drained.push((k, index)),
        );
        assert_eq!(fresh.len(), 0);
        assert!(prefetched.get() > 0 && prefetched.get() <= 50_000);
        assert_eq!(fresh.resize_bytes(10), Some(0));
        fresh.resize_for(10);
        drained.sort_unstable_by_key(|&(_, index)| index);
        let expected: Vec<_> = (1..=50_000u64).map(|i| (key(i), i as u32)).collect();
        assert_eq!(drained, expected);
        // Resized for the small level announced, and empty.
        assert!(fresh.bytes() < big / 4);
        assert!(matches!(fresh.probe(key(1)), Probe::Vacant(_)));
        let mut again = 0;
        fresh.drain(|_| {}, |_, _| again += 1);
        assert_eq!(again, 0);
        // Resized up front for a large level: no growth needed for it.
        let small = fresh.bytes();
        assert!(fresh.resize_bytes(100_000).is_some_and(|extra| extra > 0));
        fresh.resize_for(100_000);
        assert!(fresh.bytes() > small);
        assert!(fresh.grow_at() >= 100_000);
        assert_eq!(fresh.resize_bytes(100_000), None);
    }
}
