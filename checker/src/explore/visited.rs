//! The visited set: per shard, an open-addressing table of 64-bit keys for the closed BFS
//! levels and a *fresh table* for the level being explored.
//!
//! # Fingerprints
//!
//! A state's fingerprint is `fmix64(FxHash(state))`, with the value 0 replaced by a fixed
//! non-zero constant because 0 marks an empty slot. FxHash is a very fast multiply-rotate
//! hash, but its output is weak in the low bits: for a state that is a few small integers the
//! low bits can be constant, and an open-addressing table that takes its slot index from the
//! low bits then piles every state into a fraction of its buckets (with one constant low bit,
//! half the table is never used, and so on). MurmurHash3's 64-bit finalizer `fmix64` is a
//! bijection whose every output bit depends on every input bit, so after it every bit of the
//! fingerprint is usable: the top 32 bits choose the shard (see [`shard_of`]; unless a
//! locality key chooses it, `super::ExploreOptions::locality`) and the low 32 bits choose the
//! bucket inside the shard's tables. Being a bijection, it cannot add collisions that FxHash
//! did not already have.
//!
//! # What is stored, and why it is split
//!
//! Until a state's level is closed, the engine must know more than "this state was seen":
//! it must know which of the state's parents to keep for the path, and that choice is still
//! open while other parents of the same level may arrive (see [`super::path`]). Once the
//! level is closed the parent never changes again, and the visited set needs only to answer
//! "seen or not". An earlier design kept both questions in one table of 16-byte
//! `(key, parent key)` slots, with a "fresh" bit per slot to tell states of the open level
//! from older ones; its power-of-two size put it anywhere between 18 and 37 bytes per state
//! depending on where the state count fell. The storage is now split three ways:
//!
//! * [`VisitedTable`]: the keys of every state of the closed levels, 8 bytes a slot, and
//!   nothing else. This is the visited set proper.
//! * [`FreshTable`](super::fresh::FreshTable) (`fresh.rs`): the states first reached during the open level, with the smallest
//!   parent key seen so far and the state's index in the level. Working memory, sized for
//!   about one level and reused from level to level.
//! * The parent log ([`super::path::ParentLog`]): once a level closes, its keys and a
//!   32-bit parent reference per state, 12 bytes, in arrays of exact size.
//!
//! A successor is looked up in both tables: found in the visited table, it is an old state;
//! found in the fresh table, it is a state of the open level, and its parent key is
//! compared with the stored one; found in neither, it is new and joins the fresh table. The
//! two tables never hold the same key, so the order of the two lookups does not change the
//! answer; the shard picks, level by level, the order that needs fewer cache misses
//! ([`super::shard`]). When the level closes, the fresh table is *drained*: each key is
//! added to the visited table and the fresh table is left empty for the next level.
//!
//! # The visited table
//!
//! An array of 64-byte, cache-line-aligned buckets of eight keys. The home bucket of a key
//! is a multiply-shift range reduction, `((rotl(key, 32) · buckets) >> 64)`: the rotation
//! puts the low 32 bits (which do not take part in the choice of the shard) on top, so the
//! keys of one shard spread over all of its buckets, and the multiplication maps them onto
//! any number of buckets, not only a power of two. Probing is linear over buckets: look at
//! the eight keys of the home bucket, then of the next bucket (wrapping at the end), until
//! the key or an empty slot is found. Keys are filled in order and never deleted, so an
//! empty slot ends the search.
//!
//! The table grows by half (1.5×) when seven eighths of its slots are taken, counting the
//! keys of the open level that will move in when it closes. Just before a growth the load is
//! 7/8, just after it 7/12; the table therefore holds its keys at 8/0.875 ≈ 9.1 to
//! 8/0.583 ≈ 13.7 bytes per key, **at most 16 bytes per state at any state count** past its
//! initial 4 KiB. Doubling would have allowed loads down to 7/16 (18.3 bytes per key); a
//! power-of-two size is what forced it, and multiply-shift removes that constraint for the
//! price of one multiplication per lookup. Eight keys per cache line keep a lookup at about
//! one cache miss even at 7/8 load. Growing by half moves every key more often than
//! doubling (each key is moved about twice, instead of once, over the table's life), but the
//! move is cheap: the home function is monotone, so reading the old buckets in order writes
//! the new buckets in (almost) ascending order, which the hardware prefetcher follows.
//!
//! If the memory budget forbids growing, the table accepts keys up to 15/16 of its slots;
//! further new states are dropped, which the explorer reports as an early stop for memory.
//!
//! # Exact mode
//!
//! In exact mode the visited table also records, per slot, where the state's packed bytes
//! live in a per-shard arena; the fresh table needs nothing more, since a state of the open
//! level has its bytes in the next frontier at its index. A key match then compares bytes:
//! equal bytes are the same state; different bytes are a fingerprint collision, and the
//! state is looked up again under the next key of its *probe sequence*,
//! `key_i = top32(fp) | low32(fmix64(fp ^ i·φ))` for `i = 1, 2, …`, until its bytes or an
//! absent key are found. Every key of the sequence keeps the fingerprint's top 32 bits, so a
//! state and all its keys live in the same shard, and a key alone still names its shard when
//! a discovery is looked up in the parent log.

use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// Parent key of an initial state (0 is never a key).
pub(crate) const NO_PARENT: u64 = 0;

/// Value that replaces a fingerprint of 0, which is reserved for empty slots.
const ZERO_REPLACEMENT: u64 = 0x9E37_79B9_7F4A_7C15;

/// Keys per bucket of the visited table: eight 8-byte keys fill one 64-byte cache line.
const SLOTS: usize = 8;

/// Initial number of buckets of a visited table (any number works; 64 buckets are 4 KiB).
const INITIAL_BUCKETS: usize = 64;

/// The MurmurHash3 64-bit finalizer: a bijection that mixes every input bit into every
/// output bit.
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// The explorer's 64-bit fingerprint of a value: `fmix64(FxHash(value))`, never 0.
#[inline]
pub fn fingerprint<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = FxHasher::default();
    value.hash(&mut hasher);
    nonzero(fmix64(hasher.finish()))
}

/// The fingerprint of a state from its packed bytes: `fmix64(FxHash(bytes))`, never 0.
///
/// The explorer fingerprints states this way: it packs each successor once anyway (for the
/// frontier), and one pass over the bytes is cheaper than a field-by-field `Hash`. Equal states
/// pack to equal bytes ([`crate::explore::PackedState`]'s contract), so equal states get equal
/// fingerprints.
#[inline]
pub fn fingerprint_packed(bytes: &[u8]) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(bytes);
    nonzero(fmix64(hasher.finish()))
}

#[inline]
pub(super) fn nonzero(x: u64) -> u64 {
    if x == 0 {
        ZERO_REPLACEMENT
    } else {
        x
    }
}

/// The shard (out of `shards`) that owns a key: a multiply-shift range reduction of the
/// key's top 32 bits, which every key of an exact-mode probe sequence shares.
#[inline]
pub fn shard_of(key: u64, shards: usize) -> usize {
    (((key >> 32) * shards as u64) >> 32) as usize
}

/// The `attempt`-th key of a fingerprint's exact-mode probe sequence (attempt 0 is the
/// fingerprint itself). Keeps the top 32 bits so that the shard does not change.
#[inline]
pub(crate) fn probe_key(fp: u64, attempt: u32) -> u64 {
    if attempt == 0 {
        return fp;
    }
    let low = fmix64(fp ^ u64::from(attempt).wrapping_mul(ZERO_REPLACEMENT)) & 0xFFFF_FFFF;
    nonzero((fp & 0xFFFF_FFFF_0000_0000) | low)
}

/// After this many colliding keys for one fingerprint, something is badly wrong.
pub(crate) const MAX_PROBE_ATTEMPTS: u32 = 1 << 16;

/// The home bucket of `key` in a table of `buckets` buckets: a multiply-shift range
/// reduction of the key rotated by 32 bits, so that its low 32 bits, which do not take part
/// in the choice of the shard, decide the most. Monotone in the rotated key, so a table's
/// keys, read bucket after bucket, come in (almost) ascending order of home position in any
/// other table.
#[inline]
pub(super) fn home(key: u64, buckets: usize) -> usize {
    ((u128::from(key.rotate_left(32)) * buckets as u128) >> 64) as usize
}

/// Number of entries at which a table of `slots` slots grows: 7/8 of them.
pub(super) fn growth_threshold(slots: usize) -> usize {
    slots / 8 * 7 + (slots % 8) * 7 / 8
}

/// Number of entries a table of `slots` slots may hold when it may not grow: 15/16.
pub(super) fn fill_limit(slots: usize) -> usize {
    slots / 16 * 15 + (slots % 16) * 15 / 16
}

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct KeyBucket {
    keys: [u64; SLOTS],
}

const EMPTY_KEYS: KeyBucket = KeyBucket { keys: [0; SLOTS] };

/// Exact-mode storage: per slot, the offset of the state's bytes in `arena`, where each
/// state is stored as a 4-byte little-endian length followed by the bytes.
struct ExactStore {
    offsets: Vec<u64>,
    arena: Vec<u8>,
}

impl ExactStore {
    fn bytes_at(&self, slot: usize) -> &[u8] {
        let at = self.offsets[slot] as usize;
        let mut len = [0u8; 4];
        len.copy_from_slice(&self.arena[at..at + 4]);
        let len = u32::from_le_bytes(len) as usize;
        &self.arena[at + 4..at + 4 + len]
    }

    fn push(&mut self, slot: usize, bytes: &[u8]) {
        let len = u32::try_from(bytes.len())
            .expect("[memtx internal bug] packed state longer than 4 GiB");
        self.offsets[slot] = self.arena.len() as u64;
        self.arena.extend_from_slice(&len.to_le_bytes());
        self.arena.extend_from_slice(bytes);
    }
}

/// A shard's visited set: the keys of every state of the closed levels; see the
/// [module documentation](self).
pub(crate) struct VisitedTable {
    buckets: Vec<KeyBucket>,
    len: usize,
    /// `growth_threshold(slots)`, cached for the hot path.
    grow_at: usize,
    /// `fill_limit(slots)`, cached for the hot path.
    limit: usize,
    exact: Option<ExactStore>,
}

impl VisitedTable {
    /// An empty table; `exact` also stores every state's bytes.
    pub(crate) fn new(exact: bool) -> Self {
        Self::with_buckets(INITIAL_BUCKETS, exact)
    }

    /// An empty fingerprint-mode table sized to take `keys` keys without growing (a table
    /// restored from a checkpoint, [`super::checkpoint`]).
    pub(crate) fn for_keys(keys: usize) -> Self {
        // Seven eighths of 8 slots a bucket: 7 keys a bucket below the growth threshold.
        let buckets = keys / 7 + 2;
        Self::with_buckets(buckets.max(INITIAL_BUCKETS), false)
    }

    /// Adds a key known to be absent, growing the table first if it is at its growth
    /// threshold.
    pub(crate) fn add_growing(&mut self, key: u64) {
        if self.len + 1 >= self.grow_at {
            self.grow();
        }
        self.add(key);
    }

    fn with_buckets(buckets: usize, exact: bool) -> Self {
        let slots = buckets * SLOTS;
        VisitedTable {
            buckets: vec![EMPTY_KEYS; buckets],
            len: 0,
            grow_at: growth_threshold(slots),
            limit: fill_limit(slots),
            exact: exact.then(|| ExactStore {
                offsets: vec![0; slots],
                arena: Vec::new(),
            }),
        }
    }

    /// Number of keys stored.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Number of slots.
    pub(crate) fn slots(&self) -> usize {
        self.buckets.len() * SLOTS
    }

    /// Number of keys (stored plus reserved) at which the table should grow.
    #[inline]
    pub(crate) fn grow_at(&self) -> usize {
        self.grow_at
    }

    /// Number of keys the table may hold when it may not grow (15/16 of its slots).
    #[inline]
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes held by the table (buckets, exact-mode offsets and arena).
    pub(crate) fn bytes(&self) -> u64 {
        let mut bytes = self.buckets.capacity() * std::mem::size_of::<KeyBucket>();
        if let Some(exact) = &self.exact {
            bytes += exact.offsets.capacity() * 8 + exact.arena.capacity();
        }
        bytes as u64
    }

    /// The number of buckets after the next growth: half as many again.
    fn grown_buckets(&self) -> usize {
        let buckets = self.buckets.len();
        buckets + (buckets / 2).max(1)
    }

    /// Bytes that growing the table would allocate on top of [`VisitedTable::bytes`]
    /// (the new arrays, while the old ones are still alive).
    pub(crate) fn growth_bytes(&self) -> u64 {
        let buckets = self.grown_buckets() as u64;
        let per_bucket = if self.exact.is_some() {
            64 + 8 * SLOTS as u64
        } else {
            64
        };
        buckets * per_bucket
    }

    /// Hints the CPU to load the home bucket of `key` into cache.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        let index = home(key, self.buckets.len());
        prefetch_read(self.buckets.as_ptr().wrapping_add(index).cast());
    }

    /// A copy of what [`VisitedTable::prefetch`] needs, usable while the table is
    /// borrowed mutably (the address is only ever used as a prefetch hint).
    pub(crate) fn prefetcher(&self) -> Prefetcher {
        Prefetcher {
            base: self.buckets.as_ptr().cast(),
            buckets: self.buckets.len(),
        }
    }

    /// The slot holding `key`, if any.
    #[inline]
    pub(crate) fn find(&self, key: u64) -> Option<usize> {
        let buckets = self.buckets.len();
        let mut index = home(key, buckets);
        loop {
            let bucket = &self.buckets[index];
            for (i, &k) in bucket.keys.iter().enumerate() {
                if k == key {
                    return Some(index * SLOTS + i);
                }
                if k == 0 {
                    return None;
                }
            }
            index += 1;
            if index == buckets {
                index = 0;
            }
        }
    }

    /// Whether `key` is stored.
    #[inline]
    pub(crate) fn contains(&self, key: u64) -> bool {
        self.find(key).is_some()
    }

    /// Stores `key`, which must be absent, in the first empty slot of its probe sequence,
    /// and returns that slot. The caller keeps the table below its fill limit.
    #[inline]
    fn place(buckets: &mut [KeyBucket], key: u64) -> usize {
        let count = buckets.len();
        let mut index = home(key, count);
        loop {
            let bucket = &mut buckets[index];
            for (i, slot) in bucket.keys.iter_mut().enumerate() {
                if *slot == 0 {
                    *slot = key;
                    return index * SLOTS + i;
                }
            }
            index += 1;
            if index == count {
                index = 0;
            }
        }
    }

    /// Adds a key known to be absent (a state of the level being closed) and returns its
    /// slot.
    #[inline]
    pub(crate) fn add(&mut self, key: u64) -> usize {
        assert!(
            self.len < self.slots(),
            "[memtx internal bug] visited table full when a level was closed"
        );
        self.len += 1;
        Self::place(&mut self.buckets, key)
    }

    /// In exact mode, stores the packed bytes of the state just added in `slot`.
    pub(crate) fn store_bytes(&mut self, slot: usize, bytes: &[u8]) {
        if let Some(exact) = &mut self.exact {
            exact.push(slot, bytes);
        }
    }

    /// In exact mode, the packed bytes of the state in `slot`.
    pub(crate) fn bytes_at(&self, slot: usize) -> Option<&[u8]> {
        self.exact.as_ref().map(|e| e.bytes_at(slot))
    }

    /// The key under which the state with fingerprint `fp` and packed form `bytes` is
    /// stored. In fingerprint mode this is `fp` if present; in exact mode the probe
    /// sequence is followed, comparing bytes.
    pub(crate) fn key_of(&self, fp: u64, bytes: &[u8]) -> Option<u64> {
        let Some(exact) = &self.exact else {
            return self.find(fp).map(|_| fp);
        };
        for attempt in 0..MAX_PROBE_ATTEMPTS {
            let want = probe_key(fp, attempt);
            let slot = self.find(want)?;
            if exact.bytes_at(slot) == bytes {
                return Some(want);
            }
        }
        None
    }

    /// Grows the table by half (to a bucket count that need not be a power of two), moving
    /// every key with its exact-mode offset. Reading the old buckets in order writes the
    /// new ones in (almost) ascending order too, because [`home`] is monotone.
    pub(crate) fn grow(&mut self) {
        let new_buckets = self.grown_buckets();
        let new_slots = new_buckets * SLOTS;
        let mut buckets = vec![EMPTY_KEYS; new_buckets];
        let mut offsets = self.exact.as_ref().map(|_| vec![0u64; new_slots]);
        for (old_index, bucket) in self.buckets.iter().enumerate() {
            for (i, &key) in bucket.keys.iter().enumerate() {
                if key == 0 {
                    continue;
                }
                let slot = Self::place(&mut buckets, key);
                if let (Some(new), Some(old)) = (&mut offsets, &self.exact) {
                    new[slot] = old.offsets[old_index * SLOTS + i];
                }
            }
        }
        self.buckets = buckets;
        self.grow_at = growth_threshold(new_slots);
        self.limit = fill_limit(new_slots);
        if let (Some(new), Some(exact)) = (offsets, &mut self.exact) {
            exact.offsets = new;
        }
    }
}

/// The bucket array's address and length, to prefetch home buckets; see
/// [`VisitedTable::prefetcher`]. Stale once the table grows, which only makes the hints
/// useless, never wrong.
pub(crate) struct Prefetcher {
    base: *const i8,
    buckets: usize,
}

impl Prefetcher {
    /// Hints the CPU to load the home bucket of `key` into cache.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        let offset = home(key, self.buckets) * std::mem::size_of::<KeyBucket>();
        prefetch_read(self.base.wrapping_add(offset));
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[allow(unused_unsafe)]
pub(super) fn prefetch_read(ptr: *const i8) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is only a hint; it never faults, even for an invalid address,
    // and SSE is part of the x86_64 baseline.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(super) fn prefetch_read(_ptr: *const i8) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> u64 {
        nonzero(fmix64(i))
    }

    #[test]
    fn growth_at_non_power_of_two_sizes_keeps_every_key_findable() {
        let mut table = VisitedTable::new(false);
        let mut sizes = vec![table.slots()];
        for i in 1..=200_000u64 {
            if table.len() >= table.grow_at() {
                table.grow();
                sizes.push(table.slots());
            }
            assert!(!table.contains(key(i)));
            table.add(key(i));
        }
        assert_eq!(table.len(), 200_000);
        // 64 buckets of 8 slots, then half as many buckets again (rounded down) each
        // time: 96, 144, 216, 324, 486, 729, 1093, ... — most of them not powers of two.
        assert!(sizes.len() > 8);
        assert!(sizes.iter().filter(|s| !s.is_power_of_two()).count() >= sizes.len() - 2);
        for pair in sizes.windows(2) {
            let (before, after) = (pair[0] / SLOTS, pair[1] / SLOTS);
            assert_eq!(after, before + before / 2);
        }
        for i in 1..=200_000u64 {
            assert!(table.contains(key(i)), "key {i} lost");
        }
        assert!(!table.contains(key(200_001)));
        // The load never exceeded 7/8 and, after the first growths, never fell below
        // 7/12: between 8/0.875 ≈ 9.1 and 8/(7/12) ≈ 13.7 bytes per key.
        let per_key = table.bytes() as f64 / table.len() as f64;
        assert!((9.1..=13.8).contains(&per_key), "{per_key} bytes per key");
    }

    #[test]
    fn growth_keeps_keys_that_wrapped_around_the_end() {
        // Keys whose low 32 bits are near the top all have their home in the last bucket:
        // they fill it, wrap around to the first buckets, and must be found after every
        // growth, mixed with ordinary keys.
        let crowded = |i: u64| (key(i) & 0xFFFF_FFFF_0000_0000) | (0xFFFF_F000 + i % 4096);
        let mut table = VisitedTable::new(true);
        let mut all = Vec::new();
        for i in 1..=3_000u64 {
            for k in [crowded(i), key(i)] {
                if table.len() >= table.grow_at() {
                    table.grow();
                }
                if !table.contains(k) {
                    let slot = table.add(k);
                    table.store_bytes(slot, &k.to_le_bytes());
                    all.push(k);
                }
            }
            if i == 40 {
                // The crowded keys have wrapped: some sit before their home.
                assert!(all
                    .iter()
                    .any(|&k| table.find(k).is_some_and(|s| s / SLOTS < home(k, 64))));
            }
        }
        for &k in &all {
            let slot = table.find(k).expect("every key is findable");
            assert_eq!(table.bytes_at(slot), Some(&k.to_le_bytes()[..]));
        }
    }

    #[test]
    fn keys_of_one_shard_spread_over_every_bucket() {
        // The home bucket must not depend on the bits that choose the shard: with 7
        // shards, the keys of shard 3 alone must still reach every bucket of a table.
        let buckets = 1000;
        let mut hit = vec![false; buckets];
        let mut i = 0u64;
        let mut seen = 0;
        while seen < 200_000 {
            i += 1;
            let k = key(i);
            if shard_of(k, 7) != 3 {
                continue;
            }
            seen += 1;
            hit[home(k, buckets)] = true;
        }
        assert!(hit.iter().all(|h| *h));
    }

    #[test]
    fn fill_limits_and_thresholds() {
        assert_eq!(growth_threshold(512), 448);
        assert_eq!(fill_limit(512), 480);
        assert_eq!(growth_threshold(768), 672);
        assert_eq!(growth_threshold(576), 504);
        assert_eq!(fill_limit(9), 8);
        let table = VisitedTable::new(false);
        assert_eq!(table.growth_bytes(), 96 * 64);
        assert_eq!(table.bytes(), 64 * 64);
        let exact = VisitedTable::new(true);
        assert_eq!(exact.bytes(), 64 * 64 + 512 * 8);
    }

    #[test]
    fn exact_mode_keys_and_bytes() {
        let mut table = VisitedTable::new(true);
        let fp = 0xABCD_0000_1234_5678;
        let second = probe_key(fp, 1);
        assert_ne!(second, fp);
        assert_eq!(shard_of(second, 7), shard_of(fp, 7));
        let slot = table.add(fp);
        table.store_bytes(slot, b"first");
        let slot = table.add(second);
        table.store_bytes(slot, b"second");
        for _ in 0..5 {
            table.grow();
        }
        assert_eq!(table.key_of(fp, b"first"), Some(fp));
        assert_eq!(table.key_of(fp, b"second"), Some(second));
        assert_eq!(table.key_of(fp, b"third"), None);
        let at = table.find(second).expect("present");
        assert_eq!(table.bytes_at(at), Some(&b"second"[..]));
    }

    #[test]
    fn fingerprints_are_never_zero_and_shards_in_range() {
        assert_ne!(fingerprint(&0u64), 0);
        for shards in 1..6 {
            assert!(shard_of(u64::MAX, shards) < shards);
            assert_eq!(shard_of(0, shards), 0);
        }
    }
}
