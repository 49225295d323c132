//! A worker and the shard it owns.
//!
//! Worker `w` owns shard `w`: for every state that [`owner_of`] gives to `w` (by its
//! fingerprint, or by its locality key if the exploration has one), the visited table
//! (closed levels), the fresh table (the open level), the parent log, the part of the
//! current level made of those states, and the part of the next level it discovers. During
//! a level a worker
//!
//! 1. expands its own frontier chunk by chunk, claiming `CHUNK` states at a time from its
//!    share of the level ([`Part`](crate::explore::sync::Part), published for the level), then claims and expands what
//!    is left of its peers' shares (work stealing: the expansion of a state does not depend
//!    on which worker does it, since its parent reference names the share it belongs to, and
//!    it evens out the end of a level, where one worker used to wait for the other). For
//!    each state: unpack it into a reused value,
//!    evaluate the properties that still lack a discovery, enumerate the actions into a
//!    reused vector, and for each successor within the boundary canonicalize it (symmetry),
//!    pack it once into a scratch buffer, fingerprint those bytes, and copy them into the
//!    outgoing batch of the owning shard (one successor late: [`Worker::route`] says why),
//!    after a header carrying the fingerprint, the
//!    expanded state's key and its parent reference (`index · threads + s` for the `index`-th
//!    state of shard `s`'s share, see [`super::path`]).
//!    A self-loop, a successor equal to the state being expanded, is counted but skips the
//!    lookup (in two-phase commit, re-receiving a message: over a third of all
//!    successors), and so is a repeat of a successor this worker sent lately from a parent
//!    whose key is no larger than this one's ([`super::recent`]: half of all successors in
//!    MemTX's `paper`);
//! 2. hands every full batch to its owner: its own batches are absorbed on the spot, the
//!    others travel over the owner's `mpsc` channel; between chunks it absorbs whatever
//!    arrived in its own inbox;
//! 3. when no state of the level is left to claim (or a memory stop was requested), flushes
//!    every batch,
//!    sends `Done` to every other worker and keeps absorbing until it has received `Done`
//!    from all of them. Channels are FIFO per sender, so after the last `Done` nothing of
//!    this level is still in flight;
//! 4. closes the level in its shard ([`Shard::end_level`]): the fresh table is drained
//!    into the visited table and the level's keys and parent references become a closed
//!    level of the parent log. Every record of the level has been absorbed, so every
//!    parent choice is final. The fresh table is then resized for the next level's
//!    expected size, within the memory budget;
//! 5. publishes its counters and the smallest-key discovery per property, and waits at the
//!    level barrier.
//!
//! # Absorbing a batch
//!
//! *Absorbing* a batch inserts its records in order while a second cursor prefetches, eight
//! records ahead, the home buckets of the record in both tables, so that the cache misses of
//! consecutive lookups overlap instead of queueing. (Eight, not more: with two prefetches
//! per record, a longer distance keeps more lines in flight than the core has fill buffers,
//! and the prefetches themselves start to stall.) A record is
//!
//! * **old** if its key is in the visited table: nothing to do;
//! * **same-level** if its key is in the fresh table: if its parent key is smaller than the
//!   stored one, the fresh entry and the open level's parent reference are updated;
//! * **new** otherwise: it joins the fresh table, the open level of the parent log and the
//!   next frontier (its bytes are copied; nothing is unpacked), all three at the same index.
//!
//! Which table is asked first matters only for speed. In two-phase commit every path to a
//! state has the same length, so every repeat is same-level and asking the visited table
//! first would waste a cache miss on nearly every record; in models with cycles most
//! repeats are old. So each shard counts, during a level, how many records each table
//! answered, and during the next level asks first the table that answered more often.
//!
//! Before an insertion that could take a table past its growth threshold the worker grows
//! it, if the memory budget allows the new arrays; the visited table must have room for the
//! open level too, since the level moves in when it closes. If the budget refuses, the
//! worker requests the memory stop and stops asking; the tables then fill up to 15/16 and
//! further new states are counted as dropped.
//!
//! With one thread the same code runs on the calling thread: every successor belongs to
//! shard 0 and every batch is absorbed locally.

mod table;
mod worker;

pub(crate) use table::{Insert, Shard};
pub(crate) use worker::{Context, Worker};

use super::visited::{fmix64, shard_of};
use super::Locality;
use std::time::Duration;

/// The worker (of `shards`) that owns the state packed as `bytes`, whose fingerprint is
/// `fp`: drawn from its locality key when the exploration has one
/// ([`super::ExploreOptions::locality`]), otherwise from the fingerprint.
#[inline]
pub(crate) fn owner_of(bytes: &[u8], fp: u64, locality: Option<Locality>, shards: usize) -> usize {
    if shards == 1 {
        return 0;
    }
    let key = match locality {
        Some(key) => fmix64(key(bytes)),
        None => fp,
    };
    shard_of(key, shards)
}

/// States expanded between two check points.
pub(crate) const CHUNK: usize = 256;
/// A batch is handed to its owner once it holds `batch_bytes(threads)` bytes: 128 KiB for up
/// to 11 threads, then less (at least 4 KiB), so that the `threads²` outgoing batches stay
/// within about 16 MiB.
///
/// Why 128 KiB and not 32 KiB as before: `paper` on 2 threads ran 6 % and 10 % faster in two
/// spells of interleaved runs (15.73 → 14.74 s and 16.94 → 15.27 s, medians of 4 and 3),
/// while 1 thread and 2PC with 9 RMs timed the same. (Presumably fewer switches between the
/// working sets of expanding and absorbing; the mechanism is not pinned down.) 256 KiB on
/// `paper` and 512 KiB on 2PC were slower again.
fn batch_bytes(threads: usize) -> usize {
    ((16 << 20) / (threads * threads)).clamp(4 << 10, 128 << 10)
}
/// An empty batch buffer with room for `batch_bytes(threads)` bytes and the record that
/// takes it past that size.
fn new_batch(threads: usize) -> Vec<u8> {
    Vec::with_capacity(batch_bytes(threads) + 1024)
}
/// How far ahead of the insertion point the home buckets are prefetched (see the module
/// documentation for why not more).
const PREFETCH_DISTANCE: usize = 8;
/// How long a waiting worker blocks before polling its check point.
const POLL: Duration = Duration::from_millis(20);
/// Spare batch buffers a worker keeps.
const POOL: usize = 16;

/// A message between workers.
pub(crate) enum Msg {
    /// Successor records (see [`super::frontier`]).
    Batch(Vec<u8>),
    /// The sender will send nothing more during this level.
    Done,
}
