//! A worker and the shard it owns.
//!
//! Worker `w` owns shard `w`: for every state that [`owner_of`] gives to `w` (by its
//! fingerprint, or by its locality key if the exploration has one), the visited table
//! (closed levels), the fresh table (the open level), the parent log, the part of the
//! current level made of those states, and the part of the next level it discovers. During
//! a level a worker
//!
//! 1. expands its own frontier chunk by chunk, claiming `CHUNK` states at a time from its
//!    share of the level ([`Part`], published for the level), then claims and expands what
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

use super::checkpoint::ShardSnapshot;
use super::coordinator::{Coordinator, Sighting};
use super::fresh::{FreshTable, Probe};
use super::frontier::{begin_record, finish_record, read_record, Frontier, RECORD_HEADER};
use super::packed::PackedState;
use super::path::{parent_ref, ParentLog};
use super::recent::RecentSuccessors;
use super::report::StopReason;
use super::sync::{lock, Part, Poisoned, Shared};
use super::visited::{
    fingerprint_packed, fmix64, probe_key, shard_of, VisitedTable, MAX_PROBE_ATTEMPTS,
};
use super::{Canonicalizer, Locality, NextStateInto};
use stateright::{Expectation, Model, Property};
use std::hash::Hash;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
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
    /// [`super::checkpoint`]).
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

/// One attempted step of an expansion, as a [`super::Repeats`] hook needs it: its key,
/// the rules its step fired, whether it was taken, whether its successor was generated
/// (taken and within the model's boundary).
struct Attempt {
    key: u64,
    fired: u128,
    taken: bool,
    generated: bool,
}

/// The read-only context of a worker.
pub(crate) struct Context<'a, M: Model> {
    pub(crate) model: &'a M,
    pub(crate) properties: &'a [Property<M>],
    pub(crate) symmetry: Option<Canonicalizer<M>>,
    pub(crate) next_state_into: Option<NextStateInto<M>>,
    pub(crate) repeats: Option<super::Repeats<M>>,
    pub(crate) coverage: Option<super::CoverageProbe>,
    pub(crate) exact: bool,
    /// The locality key, if states are owned by it rather than by their fingerprint (never
    /// in exact mode).
    pub(crate) locality: Option<Locality>,
    pub(crate) shared: &'a Shared,
}

/// One worker thread's state; see the [module documentation](self).
pub(crate) struct Worker<'a, M: Model> {
    id: usize,
    cx: Context<'a, M>,
    senders: Vec<Sender<Msg>>,
    inbox: Receiver<Msg>,
    shard: Shard,
    outboxes: Vec<Vec<u8>>,
    pool: Vec<Vec<u8>>,
    actions: Vec<M::Action>,
    /// Reused buffer: each successor is packed here once and fingerprinted; it then moves
    /// to `held` (the two swap) until it is routed.
    scratch: Vec<u8>,
    /// The packed successor waiting to be routed: [`Worker::route`] copies it to its batch.
    held: Vec<u8>,
    /// The state being expanded, decoded into a reused value (boxed, so that moving it out
    /// of the worker for the duration of an expansion moves a pointer, not the state).
    state: Option<Box<M::State>>,
    /// Successors sent lately, to skip repeats (fingerprint mode only).
    recent: Option<RecentSuccessors>,
    /// The successor value reused by [`Context::next_state_into`] (boxed, as `state`).
    successor: Option<Box<M::State>>,
    /// Per property, the smallest-key discovery of this level so far.
    discoveries: Vec<Option<Sighting>>,
    /// Peers that sent `Done` during the current level.
    done: usize,
    /// Size at which an outgoing batch is handed over.
    batch_bytes: usize,
    generated: u64,
    new: u64,
    expanded: u64,
    dropped: u64,
    /// A growth was refused for lack of memory: do not ask again.
    growth_refused: bool,
    /// Which rules the steps fired (with a coverage probe).
    tally: super::coverage::Tally,
    /// 0-based index of the level being expanded.
    level: usize,
}

impl<'a, M> Worker<'a, M>
where
    M: Model,
    M::State: Hash + Clone + PackedState,
{
    pub(crate) fn new(
        id: usize,
        cx: Context<'a, M>,
        senders: Vec<Sender<Msg>>,
        inbox: Receiver<Msg>,
        shard: Shard,
        level: usize,
    ) -> Self {
        let threads = cx.shared.threads;
        let properties = cx.properties.len();
        let exact = cx.exact;
        Worker {
            id,
            cx,
            senders,
            inbox,
            shard,
            outboxes: (0..threads).map(|_| new_batch(threads)).collect(),
            pool: Vec::new(),
            actions: Vec::new(),
            scratch: Vec::new(),
            held: Vec::new(),
            state: None,
            recent: (!exact).then(RecentSuccessors::new),
            successor: None,
            discoveries: vec![None; properties],
            done: 0,
            batch_bytes: batch_bytes(threads),
            generated: 0,
            new: 0,
            expanded: 0,
            dropped: 0,
            growth_refused: false,
            tally: super::coverage::Tally::default(),
            level,
        }
    }

    /// Runs levels until the coordinator says stop; returns the shard for path
    /// reconstruction. Worker 0 passes the coordinator.
    pub(crate) fn run(
        mut self,
        mut coordinator: Option<&mut Coordinator<'_>>,
    ) -> Result<Shard, Poisoned> {
        let mut pending = lock(&self.cx.shared.decision).pending.clone();
        if let Some(probe) = self.cx.coverage {
            // Forget whatever this thread fired before the exploration (another run, a
            // path rebuilt, a trace read): only steps taken here are counted.
            probe();
        }
        loop {
            self.tally.start_level(self.level);
            self.expand_level(&pending, coordinator.as_deref_mut())?;
            let shared = self.cx.shared;
            let refused = self.growth_refused;
            self.shard
                .end_level(|extra| !refused && shared.memory_allows(extra));
            self.publish();
            *lock(&self.cx.shared.level_discoveries[self.id]) = self.discoveries.clone();
            self.cx.shared.barrier.wait()?;
            if let Some(c) = coordinator.as_deref_mut() {
                c.end_level(self.cx.shared);
            }
            self.cx.shared.barrier.wait()?;
            let decision = lock(&self.cx.shared.decision).clone();
            if decision.stop {
                std::mem::take(&mut self.tally).merge_into(&mut lock(&self.cx.shared.coverage));
                return Ok(self.shard);
            }
            if decision.save {
                self.save(coordinator.as_deref_mut())?;
            }
            self.level += 1;
            pending = decision.pending;
            std::mem::swap(&mut self.shard.current, &mut self.shard.next);
            self.shard.next.clear();
            self.discoveries.iter_mut().for_each(|d| *d = None);
        }
    }

    /// The checkpoint phase of a level boundary ([`super::checkpoint`]): every worker lends
    /// its closed levels (shared, no copy), the level just closed (its next frontier) and a
    /// copy of its coverage tally; worker 0 writes them between two barriers, while the
    /// others wait; then every worker takes its frontier back.
    fn save(&mut self, coordinator: Option<&mut Coordinator<'_>>) -> Result<(), Poisoned> {
        let shared = self.cx.shared;
        *lock(&shared.snapshots[self.id]) = Some(self.lend());
        shared.barrier.wait()?;
        if let Some(c) = coordinator {
            c.save(shared);
        }
        shared.barrier.wait()?;
        match lock(&shared.snapshots[self.id]).take() {
            Some(snapshot) => self.take_back(snapshot),
            None => panic!("[memtx internal bug] a worker's checkpoint share was taken"),
        }
        Ok(())
    }

    /// What this worker lends to a checkpoint written after a level closed: its closed
    /// levels (shared, no copy), the level just closed (its next frontier, moved out) and a
    /// copy of its coverage tally. [`Worker::take_back`] returns the frontier.
    pub(crate) fn lend(&mut self) -> ShardSnapshot {
        ShardSnapshot {
            levels: self.shard.log.closed_levels(),
            frontier: std::mem::take(&mut self.shard.next),
            tally: self.tally.clone(),
        }
    }

    /// Takes back the frontier lent by [`Worker::lend`].
    pub(crate) fn take_back(&mut self, snapshot: ShardSnapshot) {
        self.shard.next = snapshot.frontier;
    }

    fn expand_level(
        &mut self,
        pending: &[bool],
        mut coordinator: Option<&mut Coordinator<'_>>,
    ) -> Result<(), Poisoned> {
        let threads = self.cx.shared.threads;
        let mine = Arc::new(Part::new(
            std::mem::take(&mut self.shard.current),
            self.shard.log.last_keys(),
        ));
        *lock(&self.cx.shared.parts[self.id]) = Some(Arc::clone(&mine));
        // Its own share first, then whatever is left of the others' (work stealing): a
        // state's expansion does not depend on which worker does it, since its parent
        // reference names the share it belongs to.
        self.expand_part(&mine, self.id, pending, coordinator.as_deref_mut())?;
        drop(mine);
        let id = self.id;
        for peer in (1..threads).map(|k| (id + k) % threads) {
            let theirs = lock(&self.cx.shared.parts[peer]).clone();
            if let Some(theirs) = theirs {
                self.expand_part(&theirs, peer, pending, coordinator.as_deref_mut())?;
            }
        }

        for owner in 0..self.outboxes.len() {
            self.flush(owner);
        }
        for (peer, sender) in self.senders.iter().enumerate() {
            if peer != self.id {
                // A send fails only if the peer is gone, i.e. it panicked; the barrier is
                // poisoned then and the next wait reports it.
                let _ = sender.send(Msg::Done);
            }
        }
        while self.done + 1 < self.cx.shared.threads {
            match self.inbox.recv_timeout(POLL) {
                Ok(Msg::Batch(batch)) => self.absorb(batch),
                Ok(Msg::Done) => self.done += 1,
                Err(RecvTimeoutError::Timeout) => {
                    if self.cx.shared.barrier.is_poisoned() {
                        return Err(Poisoned);
                    }
                    self.checkpoint(coordinator.as_deref_mut());
                }
                Err(RecvTimeoutError::Disconnected) => return Err(Poisoned),
            }
        }
        // Peers send the next level's `Done` only after the level barrier, which this
        // worker has not reached yet, so no message of the next level is counted here.
        self.done = 0;
        // Every peer has sent `Done`, which it does only after its last stolen chunk: no
        // one holds this worker's share any more, and it can be taken back for reuse.
        let mine = lock(&self.cx.shared.parts[self.id]).take();
        match mine.map(Arc::try_unwrap) {
            Some(Ok(part)) => self.shard.current = part.frontier,
            _ => panic!("[memtx internal bug] a worker's share of the level is still in use"),
        }
        Ok(())
    }

    /// Expands the states of `part` (the share of worker `owner`) that no worker has
    /// claimed yet, `CHUNK` at a time, absorbing arrivals and passing the check point
    /// between chunks.
    fn expand_part(
        &mut self,
        part: &Part,
        owner: usize,
        pending: &[bool],
        mut coordinator: Option<&mut Coordinator<'_>>,
    ) -> Result<(), Poisoned> {
        let pending = pending.iter().any(|p| *p).then_some(pending);
        while self.cx.shared.stop_requested().is_none() {
            let Some(chunk) = part.claim(CHUNK) else {
                break;
            };
            self.expand_chunk(part, owner, chunk, pending);
            self.absorb_inbox();
            self.checkpoint(coordinator.as_deref_mut());
            if self.cx.shared.barrier.is_poisoned() {
                return Err(Poisoned);
            }
        }
        Ok(())
    }

    /// Expands the states `chunk` of `part` (the share of worker `owner`), already claimed.
    /// `pending` is `None` when no property needs evaluating.
    pub(crate) fn expand_chunk(
        &mut self,
        part: &Part,
        owner: usize,
        chunk: std::ops::Range<usize>,
        pending: Option<&[bool]>,
    ) {
        let threads = self.cx.shared.threads;
        self.expanded += chunk.len() as u64;
        for i in chunk {
            let parent = parent_ref(i, owner, threads);
            self.expand(part.keys[i], parent, part.frontier.get(i), pending);
        }
    }

    /// Starts expanding the current level: the share of it this worker owns, to be
    /// claimed chunk by chunk (the timely engine, [`super::timely`], which has no work
    /// stealing across processes).
    pub(crate) fn begin_level(&mut self) -> Part {
        self.tally.start_level(self.level);
        Part::new(
            std::mem::take(&mut self.shard.current),
            self.shard.log.last_keys(),
        )
    }

    /// Hands every outgoing batch over (the timely engine's end of a level's expansion).
    pub(crate) fn flush_all(&mut self) {
        for owner in 0..self.outboxes.len() {
            self.flush(owner);
        }
    }

    /// Closes the level once every record of it has been absorbed (the timely engine):
    /// gives the share back to the shard, closes the level in the shard and publishes the
    /// counters. Returns this level's smallest-key discovery per property.
    pub(crate) fn close_level(&mut self, part: Part) -> Vec<Option<Sighting>> {
        self.shard.current = part.frontier;
        let shared = self.cx.shared;
        let refused = self.growth_refused;
        self.shard
            .end_level(|extra| !refused && shared.memory_allows(extra));
        self.publish();
        std::mem::replace(&mut self.discoveries, vec![None; self.cx.properties.len()])
    }

    /// Moves on to the next level (the timely engine, after a decision to go on).
    pub(crate) fn next_level(&mut self) {
        self.level += 1;
        std::mem::swap(&mut self.shard.current, &mut self.shard.next);
        self.shard.next.clear();
    }

    /// The worker's cumulative counters: generated, new, expanded, dropped, bytes held.
    pub(crate) fn counters(&self) -> [u64; 5] {
        [
            self.generated,
            self.new,
            self.expanded,
            self.dropped,
            self.memory_bytes(),
        ]
    }

    /// Ends the worker (the timely engine): its shard and its coverage tally.
    pub(crate) fn finish(self) -> (Shard, super::coverage::Tally) {
        (self.shard, self.tally)
    }

    /// Forgets the rules fired on this thread before the exploration (see [`Worker::run`]).
    pub(crate) fn reset_coverage(&self) {
        if let Some(probe) = self.cx.coverage {
            probe();
        }
    }

    /// Expands one state (key `key`; `parent` is its reference in its level, the parent
    /// reference of its successors): properties, then successors into the outgoing batches.
    #[inline]
    fn expand(&mut self, key: u64, parent: u32, bytes: &[u8], pending: Option<&[bool]>) {
        // The state value is reused from one call to the next (moved out of `self` for
        // the duration of the call so that batches can be flushed meanwhile).
        let mut slot = self.state.take();
        let unpacked = match &mut slot {
            Some(state) => state.unpack_into(bytes),
            None => {
                slot = M::State::unpack(bytes).map(Box::new);
                slot.is_some()
            }
        };
        let Some(state) = slot.as_ref().filter(|_| unpacked) else {
            panic!("[memtx internal bug] PackedState::unpack rejected bytes produced by pack");
        };
        let model = self.cx.model;
        if let Some(pending) = pending {
            for (p, property) in self.cx.properties.iter().enumerate() {
                if !pending[p] {
                    continue;
                }
                let holds = (property.condition)(model, state);
                let discovered = match property.expectation {
                    Expectation::Always => !holds,
                    Expectation::Sometimes => holds,
                    Expectation::Eventually => {
                        unreachable!("[memtx internal bug] eventually property reached a worker")
                    }
                };
                if discovered {
                    let best = &mut self.discoveries[p];
                    let here = (key, parent);
                    *best = Some(best.map_or(here, |b| b.min(here)));
                }
            }
        }

        let mut actions = std::mem::take(&mut self.actions);
        model.actions(state, &mut actions);
        let mut successor = self.successor.take();
        // The fingerprint of the successor packed in `self.held`, not routed yet.
        let mut held: Option<u64> = None;
        let probe = self.cx.coverage;
        // With a `repeats` hook: the action before this one and what its step did.
        let mut previous: Option<Attempt> = None;
        for action in actions.drain(..) {
            if let Some(repeats) = self.cx.repeats {
                let step = repeats(model, state, &action);
                if let (Some((key, extra)), Some(before)) = (step, &previous) {
                    if key == before.key {
                        // The same step again, counted as such; nothing to route: its
                        // successor, if any, is the one just generated.
                        if probe.is_some() {
                            let extra = if before.taken { extra } else { 0 };
                            self.tally.count(before.fired | extra);
                        }
                        self.generated += before.generated as u64;
                        continue;
                    }
                }
                previous = step.map(|(key, _)| Attempt {
                    key,
                    fired: 0,
                    taken: false,
                    generated: false,
                });
            }
            let owned;
            let next: Option<&M::State> = match self.cx.next_state_into {
                Some(step) => {
                    let out: &mut M::State = successor.get_or_insert_with(|| state.clone());
                    step(model, state, action, out).then_some(&*out)
                }
                None => match model.next_state(state, action) {
                    Some(next) => {
                        owned = next;
                        Some(&owned)
                    }
                    None => None,
                },
            };
            let fired = probe.map_or(0, |probe| probe());
            if probe.is_some() {
                self.tally.count(fired);
            }
            let attempt = previous.as_mut();
            let Some(next) = next else {
                if let Some(a) = attempt {
                    a.fired = fired;
                }
                continue;
            };
            let generated = model.within_boundary(next);
            if let Some(a) = attempt {
                (a.fired, a.taken, a.generated) = (fired, true, generated);
            }
            if !generated {
                continue;
            }
            self.generated += 1;
            // Borrow rather than move: a state can be hundreds of bytes, and this loop runs
            // once per generated state.
            let canonical;
            let next: &M::State = match self.cx.symmetry {
                Some(canonicalize) => {
                    canonical = canonicalize(self.cx.model, next);
                    &canonical
                }
                None => next,
            };
            self.scratch.clear();
            next.pack(&mut self.scratch);
            let fp = fingerprint_packed(&self.scratch);
            // Route the previous successor now, and this one after the next is packed: the
            // fingerprint's chain of multiplications then runs while the processor routes
            // a successor whose fingerprint is known, instead of stalling the branches that
            // depend on it (see `route`).
            if let Some(previous) = held.take() {
                self.route(previous, key, parent, bytes);
            }
            std::mem::swap(&mut self.scratch, &mut self.held);
            held = Some(fp);
        }
        if let Some(last) = held {
            self.route(last, key, parent, bytes);
        }
        self.actions = actions;
        self.successor = successor;
        self.state = slot;
    }

    /// Routes the successor packed in `self.held`, with fingerprint `fp`, reached from the
    /// state with key `key`, parent reference `parent` and packed form `bytes`: skipped if
    /// it is a self-loop or a recent repeat, otherwise appended to its owner's batch.
    ///
    /// [`Worker::expand`] routes each successor one step late, after packing and
    /// fingerprinting the next one. Whether a successor is skipped is a coin toss to the
    /// branch predictor (half of `paper`'s successors are repeats); routed at once, every
    /// mispredicted branch waited for the fingerprint's chain of dependent multiplications
    /// and the filter's load first. Routed late, its inputs are ready when the branch
    /// issues, and the next fingerprint's chain overlaps with the routing. Measured on
    /// `paper`: 3–4 % less time on 1 and 2 threads (medians of 8 interleaved runs). The order
    /// in which successors are routed, and so everything the workers send, is unchanged.
    #[inline(always)]
    fn route(&mut self, fp: u64, key: u64, parent: u32, bytes: &[u8]) {
        // A self-loop (the successor is the state itself) needs no lookup: the state is
        // visited and belongs to the current level, so its parent link cannot change.
        // In fingerprint mode equal fingerprints are equal states; in exact mode the
        // bytes decide, below.
        if fp == key && !self.cx.exact {
            return;
        }
        // A repeat of a successor this worker sent lately from a parent whose key is no
        // larger than this one's changes nothing ([`super::recent`] explains why): skip
        // it before it costs a batch record and a lookup.
        if let Some(recent) = &mut self.recent {
            if recent.is_repeat(fp, key) {
                return;
            }
        }
        let owner = owner_of(&self.held, fp, self.cx.locality, self.cx.shared.threads);
        let batch = &mut self.outboxes[owner];
        let mark = begin_record(batch, fp, key, parent);
        batch.extend_from_slice(&self.held);
        if fp == key && batch[mark..] == *bytes {
            batch.truncate(mark - RECORD_HEADER);
            return;
        }
        finish_record(batch, mark);
        if batch.len() >= self.batch_bytes {
            self.flush(owner);
        }
    }

    /// Hands the batch for `owner` over: absorbed here if it is ours, sent otherwise.
    fn flush(&mut self, owner: usize) {
        if self.outboxes[owner].is_empty() {
            return;
        }
        // With more than one worker, a worker's pool is refilled by the batches its peers
        // send it, which may be fewer than it sends them; a new buffer then gets the full
        // capacity at once rather than growing (and copying) batch by batch.
        let spare = self
            .pool
            .pop()
            .unwrap_or_else(|| new_batch(self.cx.shared.threads));
        let batch = std::mem::replace(&mut self.outboxes[owner], spare);
        if owner == self.id {
            self.absorb(batch);
        } else {
            // See `expand_level` for why a failed send can be ignored.
            let _ = self.senders[owner].send(Msg::Batch(batch));
        }
    }

    /// Absorbs every batch waiting in the inbox without blocking (a peer that finished its
    /// frontier early may already have sent `Done`, which is counted).
    pub(crate) fn absorb_inbox(&mut self) {
        while let Ok(msg) = self.inbox.try_recv() {
            match msg {
                Msg::Batch(batch) => self.absorb(batch),
                Msg::Done => self.done += 1,
            }
        }
    }

    /// Inserts a batch's records into the visited table; see the
    /// [module documentation](self).
    fn absorb(&mut self, mut batch: Vec<u8>) {
        // Two cursors over the records: `ahead` runs PREFETCH_DISTANCE records in front
        // and prefetches home buckets, `at` inserts.
        let mut ahead = 0;
        for _ in 0..PREFETCH_DISTANCE {
            match read_record(&batch, ahead) {
                Some(record) => {
                    self.shard.prefetch(record.fp);
                    ahead = record.end;
                }
                None => break,
            }
        }
        let mut at = 0;
        while let Some(record) = read_record(&batch, at) {
            at = record.end;
            if let Some(next) = read_record(&batch, ahead) {
                self.shard.prefetch(next.fp);
                ahead = next.end;
            }
            if self.shard.needs_growth() && !self.growth_refused {
                self.make_room();
            }
            let bytes = &batch[record.start..record.end];
            match self
                .shard
                .insert(record.fp, record.parent, record.parent_ref, bytes)
            {
                Insert::New(_) => {
                    self.new += 1;
                }
                Insert::Known => {}
                Insert::Full => {
                    self.dropped += 1;
                    self.cx.shared.request_stop(StopReason::Memory);
                }
            }
        }
        if self.pool.len() < POOL {
            batch.clear();
            self.pool.push(batch);
        }
    }

    /// Grows the shard's tables before an insertion that could take one past its growth
    /// threshold, if the memory budget allows; otherwise requests the memory stop, after
    /// which the tables fill up to their hard limit.
    #[cold]
    fn make_room(&mut self) {
        while self.shard.needs_growth() {
            let extra = self.shard.growth_bytes();
            if !self.cx.shared.memory_allows(extra) {
                self.cx.shared.request_stop(StopReason::Memory);
                self.growth_refused = true;
                return;
            }
            self.shard.grow();
            self.publish_memory();
        }
    }

    fn memory_bytes(&self) -> u64 {
        let buffers: usize = self
            .outboxes
            .iter()
            .chain(&self.pool)
            .map(Vec::capacity)
            .sum();
        let recent = self.recent.as_ref().map_or(0, RecentSuccessors::bytes);
        self.shard.bytes() + buffers as u64 + recent
    }

    fn publish_memory(&self) {
        self.cx.shared.counters[self.id]
            .memory
            .store(self.memory_bytes(), Ordering::Relaxed);
    }

    /// Publishes this worker's cumulative counters.
    fn publish(&self) {
        let c = &self.cx.shared.counters[self.id];
        c.generated.store(self.generated, Ordering::Relaxed);
        c.new.store(self.new, Ordering::Relaxed);
        c.expanded.store(self.expanded, Ordering::Relaxed);
        c.dropped.store(self.dropped, Ordering::Relaxed);
        self.publish_memory();
    }

    pub(crate) fn checkpoint(&mut self, coordinator: Option<&mut Coordinator<'_>>) {
        self.publish();
        if let Some(c) = coordinator {
            c.checkpoint(self.cx.shared);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::path::{key_chain, NO_PARENT_REF};
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
