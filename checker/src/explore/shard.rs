//! A worker and the shard it owns.
//!
//! Worker `w` owns shard `w`: the visited table of every key `k` with
//! `shard_of(k) == w`, the part of the current level made of those states, and the part of
//! the next level it discovers. During a level a worker
//!
//! 1. expands its own frontier chunk by chunk: unpack the state into a reused value,
//!    evaluate the properties that still lack a discovery, enumerate the actions into a
//!    reused vector, and for each successor within the boundary canonicalize it (symmetry),
//!    pack it once into a scratch buffer, fingerprint those bytes, and copy them into the
//!    outgoing batch of the owning shard.
//!    A self-loop, a successor equal to the state being expanded, is counted but skips the
//!    lookup (in two-phase commit, re-receiving a message: over a third of all
//!    successors);
//! 2. hands every full batch to its owner: its own batches are absorbed on the spot, the
//!    others travel over the owner's `mpsc` channel; between chunks it absorbs whatever
//!    arrived in its own inbox;
//! 3. when its frontier is done (or a memory stop was requested), flushes every batch,
//!    sends `Done` to every other worker and keeps absorbing until it has received `Done`
//!    from all of them. Channels are FIFO per sender, so after the last `Done` nothing of
//!    this level is still in flight;
//! 4. publishes its counters and the smallest-key discovery per property, and waits at the
//!    level barrier.
//!
//! *Absorbing* a batch inserts its records into the visited table in order while a second
//! cursor prefetches the home bucket of the record a dozen places ahead, so that the cache
//! misses of consecutive lookups overlap instead of queueing. New states are
//! appended to the next frontier by copying their bytes; nothing is unpacked.
//!
//! With one thread the same code runs on the calling thread: every successor belongs to
//! shard 0 and every batch is absorbed locally.

use super::coordinator::Coordinator;
use super::frontier::{begin_record, finish_record, read_record, Frontier, RECORD_HEADER};
use super::packed::PackedState;
use super::sync::{lock, Poisoned, Shared};
use super::visited::{fingerprint_packed, shard_of, Insert, VisitedTable};
use super::{Canonicalizer, NextStateInto};
use stateright::{Expectation, Model, Property};
use std::hash::Hash;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// States expanded between two check points.
const CHUNK: usize = 256;
/// A batch is handed to its owner once it holds `batch_bytes(threads)` bytes: 32 KiB for up
/// to 22 threads, then less (at least 4 KiB), so that the `threads²` outgoing batches stay
/// within about 16 MiB.
fn batch_bytes(threads: usize) -> usize {
    ((16 << 20) / (threads * threads)).clamp(4 << 10, 32 << 10)
}
/// How far ahead of the insertion point the home bucket is prefetched.
const PREFETCH_DISTANCE: usize = 12;
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

/// What a worker owns: its visited table and its share of the current and next level.
pub(crate) struct Shard {
    pub(crate) table: VisitedTable,
    pub(crate) current: Frontier,
    pub(crate) next: Frontier,
}

impl Shard {
    /// An empty shard.
    pub(crate) fn new(exact: bool) -> Self {
        Shard {
            table: VisitedTable::new(exact),
            current: Frontier::default(),
            next: Frontier::default(),
        }
    }

    /// Bytes held by the table and both frontiers.
    pub(crate) fn bytes(&self) -> u64 {
        self.table.bytes() + self.current.bytes() + self.next.bytes()
    }
}

/// The read-only context of a worker.
pub(crate) struct Context<'a, M: Model> {
    pub(crate) model: &'a M,
    pub(crate) properties: &'a [Property<M>],
    pub(crate) symmetry: Option<Canonicalizer<M>>,
    pub(crate) next_state_into: Option<NextStateInto<M>>,
    pub(crate) exact: bool,
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
    /// Reused buffer: each successor is packed here once, fingerprinted, then copied to its batch.
    scratch: Vec<u8>,
    state: Option<M::State>,
    /// The successor value reused by [`Context::next_state_into`].
    successor: Option<M::State>,
    discoveries: Vec<Option<u64>>,
    /// Peers that sent `Done` during the current level.
    done: usize,
    /// Size at which an outgoing batch is handed over.
    batch_bytes: usize,
    generated: u64,
    new: u64,
    expanded: u64,
    dropped: u64,
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
    ) -> Self {
        let threads = cx.shared.threads;
        let properties = cx.properties.len();
        Worker {
            id,
            cx,
            senders,
            inbox,
            shard,
            outboxes: (0..threads)
                .map(|_| Vec::with_capacity(batch_bytes(threads) + 1024))
                .collect(),
            pool: Vec::new(),
            actions: Vec::new(),
            scratch: Vec::new(),
            state: None,
            successor: None,
            discoveries: vec![None; properties],
            done: 0,
            batch_bytes: batch_bytes(threads),
            generated: 0,
            new: 0,
            expanded: 0,
            dropped: 0,
        }
    }

    /// Runs levels until the coordinator says stop; returns the shard for path
    /// reconstruction. Worker 0 passes the coordinator.
    pub(crate) fn run(
        mut self,
        mut coordinator: Option<&mut Coordinator<'_>>,
    ) -> Result<Shard, Poisoned> {
        let mut pending = lock(&self.cx.shared.decision).pending.clone();
        loop {
            self.expand_level(&pending, coordinator.as_deref_mut())?;
            self.publish();
            *lock(&self.cx.shared.level_discoveries[self.id]) = self.discoveries.clone();
            self.cx.shared.barrier.wait()?;
            if let Some(c) = coordinator.as_deref_mut() {
                c.end_level(self.cx.shared);
            }
            self.cx.shared.barrier.wait()?;
            let decision = lock(&self.cx.shared.decision).clone();
            if decision.stop {
                return Ok(self.shard);
            }
            pending = decision.pending;
            std::mem::swap(&mut self.shard.current, &mut self.shard.next);
            self.shard.next.clear();
            self.shard.table.clear_fresh();
            self.discoveries.iter_mut().for_each(|d| *d = None);
        }
    }

    fn expand_level(
        &mut self,
        pending: &[bool],
        mut coordinator: Option<&mut Coordinator<'_>>,
    ) -> Result<(), Poisoned> {
        let current = std::mem::take(&mut self.shard.current);
        let any_pending = pending.iter().any(|p| *p);
        let mut index = 0;
        while index < current.len() && !self.cx.shared.memory_stop_requested() {
            let end = (index + CHUNK).min(current.len());
            for i in index..end {
                let (key, bytes) = current.get(i);
                self.expand(key, bytes, any_pending.then_some(pending));
            }
            self.expanded += (end - index) as u64;
            index = end;
            self.absorb_inbox();
            self.checkpoint(coordinator.as_deref_mut());
            if self.cx.shared.barrier.is_poisoned() {
                return Err(Poisoned);
            }
        }
        self.shard.current = current;

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
        Ok(())
    }

    /// Expands one state: properties, then successors into the outgoing batches.
    #[inline]
    fn expand(&mut self, key: u64, bytes: &[u8], pending: Option<&[bool]>) {
        // The state value is reused from one call to the next (moved out of `self` for
        // the duration of the call so that batches can be flushed meanwhile).
        let mut slot = self.state.take();
        let unpacked = match &mut slot {
            Some(state) => state.unpack_into(bytes),
            None => {
                slot = M::State::unpack(bytes);
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
                    *best = Some(best.map_or(key, |b| b.min(key)));
                }
            }
        }

        let threads = self.cx.shared.threads;
        let mut actions = std::mem::take(&mut self.actions);
        model.actions(state, &mut actions);
        let mut successor = self.successor.take();
        for action in actions.drain(..) {
            let owned;
            let next: &M::State = match self.cx.next_state_into {
                Some(step) => {
                    let out = successor.get_or_insert_with(|| state.clone());
                    if !step(model, state, action, out) {
                        continue;
                    }
                    out
                }
                None => match model.next_state(state, action) {
                    Some(next) => {
                        owned = next;
                        &owned
                    }
                    None => continue,
                },
            };
            if !model.within_boundary(next) {
                continue;
            }
            self.generated += 1;
            // Borrow rather than move: a state can be hundreds of bytes, and this loop runs
            // once per generated state.
            let canonical;
            let next: &M::State = match self.cx.symmetry {
                Some(canonicalize) => {
                    canonical = canonicalize(next);
                    &canonical
                }
                None => next,
            };
            self.scratch.clear();
            next.pack(&mut self.scratch);
            let fp = fingerprint_packed(&self.scratch);
            // A self-loop (the successor is the state itself) needs no lookup: the state is
            // visited and belongs to the current level, so its parent link cannot change.
            // In fingerprint mode equal fingerprints are equal states; in exact mode the
            // bytes decide, below.
            if fp == key && !self.cx.exact {
                continue;
            }
            let owner = shard_of(fp, threads);
            let batch = &mut self.outboxes[owner];
            let mark = begin_record(batch, fp, key);
            batch.extend_from_slice(&self.scratch);
            if fp == key && batch[mark..] == *bytes {
                batch.truncate(mark - RECORD_HEADER);
                continue;
            }
            finish_record(batch, mark);
            if batch.len() >= self.batch_bytes {
                self.flush(owner);
            }
        }
        self.actions = actions;
        self.successor = successor;
        self.state = slot;
    }

    /// Hands the batch for `owner` over: absorbed here if it is ours, sent otherwise.
    fn flush(&mut self, owner: usize) {
        if self.outboxes[owner].is_empty() {
            return;
        }
        let spare = self.pool.pop().unwrap_or_default();
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
    fn absorb_inbox(&mut self) {
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
        // Every record has a header, which bounds the number of new states.
        let most = batch.len() / RECORD_HEADER;
        while self.shard.table.wants_growth(most) {
            let extra = self.shard.table.growth_bytes();
            if !self.cx.shared.memory_allows(extra) {
                self.cx.shared.request_memory_stop();
                break;
            }
            self.shard.table.grow();
            self.publish_memory();
        }
        let table = &mut self.shard.table;
        // Two cursors over the records: `ahead` runs PREFETCH_DISTANCE records in front
        // and prefetches home buckets, `at` inserts.
        let mut ahead = 0;
        for _ in 0..PREFETCH_DISTANCE {
            match read_record(&batch, ahead) {
                Some(record) => {
                    table.prefetch(record.fp);
                    ahead = record.end;
                }
                None => break,
            }
        }
        let mut at = 0;
        while let Some(record) = read_record(&batch, at) {
            at = record.end;
            if let Some(next) = read_record(&batch, ahead) {
                table.prefetch(next.fp);
                ahead = next.end;
            }
            let bytes = &batch[record.start..record.end];
            match table.insert(record.fp, record.parent, bytes) {
                Insert::New(key) => {
                    self.shard.next.push(key, bytes);
                    self.new += 1;
                }
                Insert::Known => {}
                Insert::Full => {
                    self.dropped += 1;
                    self.cx.shared.request_memory_stop();
                }
            }
        }
        if self.pool.len() < POOL {
            batch.clear();
            self.pool.push(batch);
        }
    }

    fn memory_bytes(&self) -> u64 {
        let buffers: usize = self
            .outboxes
            .iter()
            .chain(&self.pool)
            .map(Vec::capacity)
            .sum();
        self.shard.bytes() + buffers as u64
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

    fn checkpoint(&mut self, coordinator: Option<&mut Coordinator<'_>>) {
        self.publish();
        if let Some(c) = coordinator {
            c.checkpoint(self.cx.shared);
        }
    }
}
