//! The visited set: one open-addressing table of 64-bit fingerprints per shard.
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
//! fingerprint is usable: the top 32 bits choose the shard (see [`shard_of`]) and the low
//! bits choose the bucket inside the shard's table. Being a bijection, it cannot add
//! collisions that FxHash did not already have.
//!
//! # Layout
//!
//! The table is an array of 64-byte, cache-line-aligned buckets of four slots. A slot is a
//! `(key, parent)` pair of `u64`s, 16 bytes: `key` is the state's fingerprint (in exact mode,
//! see below, a *key* derived from it) and `parent` is the key of the state it was first
//! reached from (0 for an initial state). Probing is linear over buckets: look at the four
//! keys of the home bucket, then of the next bucket, and so on, until the key or an empty
//! slot is found. Slots are filled in order and never deleted, so an empty slot ends the
//! search. The table doubles when seven eighths of its slots are used; with four slots per
//! cache line, even that load costs about one cache miss per lookup, and it keeps the table
//! at 16 to 32 bytes per state. (If the memory budget forbids growing, the table fills up to
//! 15/16 and further new states are dropped, which the explorer reports as an early stop for
//! memory.)
//!
//! # Fresh bits and deterministic parents
//!
//! Beside the buckets the table keeps one bit per slot, "fresh": set when the slot was filled
//! during the current BFS level and cleared when the level ends. When a successor arrives
//! whose key is already present *and fresh*, the state was first reached during this level, so
//! the new parent is at the same depth as the stored one and equally short; the table keeps
//! the smaller of the two parent keys. When the level ends, every state of the new level has
//! as parent the smallest key among all its parents at the previous depth, whatever the
//! order in which threads delivered them. Without the bit the table could not tell a
//! same-depth parent from a deeper one, and updating the parent of an older state would
//! lengthen its path. The bit costs 1/128 of the table.
//!
//! # Exact mode
//!
//! In exact mode each slot also records where the state's packed bytes live in a per-shard
//! arena. A key match then compares bytes: equal bytes are the same state; different bytes
//! are a fingerprint collision, and the state is looked up again under the next key of its
//! *probe sequence*, `key_i = top32(fp) | low32(fmix64(fp ^ i·φ))` for `i = 1, 2, …`, until
//! its bytes or an empty slot are found. Every key of the sequence keeps the fingerprint's top
//! 32 bits, so a state and all its keys live in the same shard, and a key alone still names
//! its shard when a parent link is followed.

use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// Parent link of an initial state (0 is never a key).
pub(crate) const NO_PARENT: u64 = 0;

/// Value that replaces a fingerprint of 0, which is reserved for empty slots.
const ZERO_REPLACEMENT: u64 = 0x9E37_79B9_7F4A_7C15;

/// Slots per bucket: four 16-byte slots fill one 64-byte cache line.
const SLOTS: usize = 4;

/// Initial number of buckets per shard (a power of two).
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
fn nonzero(x: u64) -> u64 {
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
fn probe_key(fp: u64, attempt: u32) -> u64 {
    if attempt == 0 {
        return fp;
    }
    let low = fmix64(fp ^ u64::from(attempt).wrapping_mul(ZERO_REPLACEMENT)) & 0xFFFF_FFFF;
    nonzero((fp & 0xFFFF_FFFF_0000_0000) | low)
}

/// After this many colliding keys for one fingerprint, something is badly wrong.
const MAX_PROBE_ATTEMPTS: u32 = 1 << 16;

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Bucket {
    keys: [u64; SLOTS],
    parents: [u64; SLOTS],
}

const EMPTY_BUCKET: Bucket = Bucket {
    keys: [0; SLOTS],
    parents: [0; SLOTS],
};

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

/// Result of [`VisitedTable::insert`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Insert {
    /// The state was not present and now is, under this key.
    New(u64),
    /// The state was already present.
    Known,
    /// The state was not present and the table is full (memory budget exhausted).
    Full,
}

/// A shard's visited set; see the [module documentation](self).
pub(crate) struct VisitedTable {
    buckets: Vec<Bucket>,
    fresh: Vec<u64>,
    len: usize,
    exact: Option<ExactStore>,
    collisions: u64,
}

impl VisitedTable {
    /// An empty table; `exact` also stores every state's bytes.
    pub(crate) fn new(exact: bool) -> Self {
        let slots = INITIAL_BUCKETS * SLOTS;
        VisitedTable {
            buckets: vec![EMPTY_BUCKET; INITIAL_BUCKETS],
            fresh: vec![0; slots / 64],
            len: 0,
            exact: exact.then(|| ExactStore {
                offsets: vec![0; slots],
                arena: Vec::new(),
            }),
            collisions: 0,
        }
    }

    /// Number of states stored.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Number of slots.
    fn slots(&self) -> usize {
        self.buckets.len() * SLOTS
    }

    /// States stored under a secondary key because their fingerprint collided with another
    /// state's (exact mode only).
    pub(crate) fn collisions(&self) -> u64 {
        self.collisions
    }

    /// Whether `additional` more states would take the table past its growth threshold.
    pub(crate) fn wants_growth(&self, additional: usize) -> bool {
        (self.len + additional) * 8 > self.slots() * 7
    }

    /// Whether a state can still be added without growing (the hard fill limit, 15/16).
    fn can_fill(&self) -> bool {
        self.len * 16 < self.slots() * 15
    }

    /// Bytes held by the table (buckets, fresh bits, exact-mode offsets and arena).
    pub(crate) fn bytes(&self) -> u64 {
        let mut bytes =
            self.buckets.capacity() * std::mem::size_of::<Bucket>() + self.fresh.capacity() * 8;
        if let Some(exact) = &self.exact {
            bytes += exact.offsets.capacity() * 8 + exact.arena.capacity();
        }
        bytes as u64
    }

    /// Bytes that doubling the table would allocate on top of [`VisitedTable::bytes`]
    /// (the new arrays, while the old ones are still alive).
    pub(crate) fn growth_bytes(&self) -> u64 {
        let slots = self.slots() as u64 * 2;
        let per_slot = if self.exact.is_some() { 16 + 8 } else { 16 };
        slots * per_slot + slots / 8
    }

    /// Hints the CPU to load the home bucket of `key` into cache.
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        let index = key as usize & (self.buckets.len() - 1);
        let ptr = self.buckets.as_ptr().wrapping_add(index);
        prefetch_read(ptr.cast());
    }

    /// Clears every fresh bit (called when a BFS level ends).
    pub(crate) fn clear_fresh(&mut self) {
        self.fresh.fill(0);
    }

    #[inline]
    fn is_fresh(&self, slot: usize) -> bool {
        self.fresh[slot / 64] >> (slot % 64) & 1 == 1
    }

    #[inline]
    fn set_fresh(&mut self, slot: usize) {
        self.fresh[slot / 64] |= 1 << (slot % 64);
    }

    /// Inserts a state reached from `parent` (or [`NO_PARENT`]) with fingerprint `fp`;
    /// `bytes` is its packed form (only read in exact mode). A state already present keeps
    /// its key; if it was added during the current level its parent becomes the smaller of
    /// the stored and the offered parent.
    #[inline(always)]
    pub(crate) fn insert(&mut self, fp: u64, parent: u64, bytes: &[u8]) -> Insert {
        if self.exact.is_some() {
            return self.insert_exact(fp, parent, bytes);
        }
        let mask = self.buckets.len() - 1;
        let mut index = fp as usize & mask;
        loop {
            for i in 0..SLOTS {
                let key = self.buckets[index].keys[i];
                if key == fp {
                    let slot = index * SLOTS + i;
                    if parent < self.buckets[index].parents[i] && self.is_fresh(slot) {
                        self.buckets[index].parents[i] = parent;
                    }
                    return Insert::Known;
                }
                if key == 0 {
                    if !self.can_fill() {
                        return Insert::Full;
                    }
                    let bucket = &mut self.buckets[index];
                    bucket.keys[i] = fp;
                    bucket.parents[i] = parent;
                    self.set_fresh(index * SLOTS + i);
                    self.len += 1;
                    return Insert::New(fp);
                }
            }
            index = (index + 1) & mask;
        }
    }

    #[inline(never)]
    fn insert_exact(&mut self, fp: u64, parent: u64, bytes: &[u8]) -> Insert {
        let mask = self.buckets.len() - 1;
        let mut attempt = 0;
        'keys: loop {
            let want = probe_key(fp, attempt);
            let mut index = want as usize & mask;
            loop {
                for i in 0..SLOTS {
                    let key = self.buckets[index].keys[i];
                    let slot = index * SLOTS + i;
                    if key == want {
                        let same = self
                            .exact
                            .as_ref()
                            .is_some_and(|e| e.bytes_at(slot) == bytes);
                        if !same {
                            attempt += 1;
                            assert!(
                                attempt < MAX_PROBE_ATTEMPTS,
                                "[memtx internal bug] {attempt} colliding keys for one fingerprint"
                            );
                            continue 'keys;
                        }
                        if parent < self.buckets[index].parents[i] && self.is_fresh(slot) {
                            self.buckets[index].parents[i] = parent;
                        }
                        return Insert::Known;
                    }
                    if key == 0 {
                        if !self.can_fill() {
                            return Insert::Full;
                        }
                        let bucket = &mut self.buckets[index];
                        bucket.keys[i] = want;
                        bucket.parents[i] = parent;
                        self.set_fresh(slot);
                        if let Some(exact) = &mut self.exact {
                            exact.push(slot, bytes);
                        }
                        if attempt > 0 {
                            self.collisions += 1;
                        }
                        self.len += 1;
                        return Insert::New(want);
                    }
                }
                index = (index + 1) & mask;
            }
        }
    }

    /// The slot holding `key`, if any.
    fn find(&self, key: u64) -> Option<usize> {
        let mask = self.buckets.len() - 1;
        let mut index = key as usize & mask;
        loop {
            for i in 0..SLOTS {
                match self.buckets[index].keys[i] {
                    k if k == key => return Some(index * SLOTS + i),
                    0 => return None,
                    _ => {}
                }
            }
            index = (index + 1) & mask;
        }
    }

    /// The parent link stored for `key` ([`NO_PARENT`] for an initial state), or `None`
    /// if the key is absent.
    pub(crate) fn parent_of(&self, key: u64) -> Option<u64> {
        let slot = self.find(key)?;
        Some(self.buckets[slot / SLOTS].parents[slot % SLOTS])
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

    /// Doubles the number of buckets, moving every slot with its parent, fresh bit and
    /// exact-mode offset.
    pub(crate) fn grow(&mut self) {
        let new_buckets = self.buckets.len() * 2;
        let new_slots = new_buckets * SLOTS;
        let mask = new_buckets - 1;
        let mut buckets = vec![EMPTY_BUCKET; new_buckets];
        let mut fresh = vec![0u64; new_slots / 64];
        let mut offsets = self.exact.as_ref().map(|_| vec![0u64; new_slots]);
        for (old_index, bucket) in self.buckets.iter().enumerate() {
            for i in 0..SLOTS {
                let key = bucket.keys[i];
                if key == 0 {
                    continue;
                }
                let old_slot = old_index * SLOTS + i;
                let mut index = key as usize & mask;
                let slot = 'place: loop {
                    for j in 0..SLOTS {
                        if buckets[index].keys[j] == 0 {
                            buckets[index].keys[j] = key;
                            buckets[index].parents[j] = bucket.parents[i];
                            break 'place index * SLOTS + j;
                        }
                    }
                    index = (index + 1) & mask;
                };
                if self.is_fresh(old_slot) {
                    fresh[slot / 64] |= 1 << (slot % 64);
                }
                if let (Some(new), Some(old)) = (&mut offsets, &self.exact) {
                    new[slot] = old.offsets[old_slot];
                }
            }
        }
        self.buckets = buckets;
        self.fresh = fresh;
        if let (Some(new), Some(exact)) = (offsets, &mut self.exact) {
            exact.offsets = new;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[allow(unused_unsafe)]
fn prefetch_read(ptr: *const i8) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is only a hint; it never faults, even for an invalid address,
    // and SSE is part of the x86_64 baseline.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn prefetch_read(_ptr: *const i8) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_find_grow_keep_parents() {
        let mut table = VisitedTable::new(false);
        for i in 1..=10_000u64 {
            let fp = fmix64(i) | 1;
            if table.wants_growth(1) {
                table.grow();
            }
            assert_eq!(table.insert(fp, i, &[]), Insert::New(fp));
        }
        assert_eq!(table.len(), 10_000);
        for i in 1..=10_000u64 {
            let fp = fmix64(i) | 1;
            assert_eq!(table.insert(fp, 0, &[]), Insert::Known);
            // Fresh: the smaller parent 0 replaced the stored one.
            assert_eq!(table.parent_of(fp), Some(0));
        }
        table.clear_fresh();
        let fp = fmix64(7) | 1;
        assert_eq!(table.insert(fp, 99, &[]), Insert::Known);
        assert_eq!(table.parent_of(fp), Some(0));
        assert_eq!(table.parent_of(12345), None);
    }

    #[test]
    fn exact_mode_tells_colliding_states_apart() {
        let mut table = VisitedTable::new(true);
        let fp = 0xABCD_0000_1234_5678;
        assert_eq!(table.insert(fp, 0, b"first"), Insert::New(fp));
        let Insert::New(second) = table.insert(fp, 0, b"second") else {
            panic!("collision not told apart");
        };
        assert_ne!(second, fp);
        assert_eq!(shard_of(second, 7), shard_of(fp, 7));
        assert_eq!(table.insert(fp, 0, b"second"), Insert::Known);
        assert_eq!(table.collisions(), 1);
        for _ in 0..5 {
            table.grow();
        }
        assert_eq!(table.key_of(fp, b"first"), Some(fp));
        assert_eq!(table.key_of(fp, b"second"), Some(second));
        assert_eq!(table.key_of(fp, b"third"), None);
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
