//! One worker: expands its share of a level, routes successors to their owners in batches,
//! absorbs the batches it receives, and meets the others at the level's barrier.

use super::table::{Insert, Shard};
use super::{batch_bytes, new_batch, owner_of, Msg, CHUNK, POLL, POOL, PREFETCH_DISTANCE};
use crate::explore::checkpoint::ShardSnapshot;
use crate::explore::coordinator::{Coordinator, Sighting};
use crate::explore::frontier::{begin_record, finish_record, read_record, RECORD_HEADER};
use crate::explore::packed::PackedState;
use crate::explore::path::parent_ref;
use crate::explore::recent::RecentSuccessors;
use crate::explore::report::StopReason;
use crate::explore::sync::{lock, Part, Poisoned, Shared};
use crate::explore::visited::fingerprint_packed;
use crate::explore::{Canonicalizer, Locality, NextStateInto};
use stateright::{Expectation, Model, Property};
use std::hash::Hash;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;

/// One attempted step of an expansion, as a [`crate::explore::Repeats`] hook needs it: its key,
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
    pub(crate) repeats: Option<crate::explore::Repeats<M>>,
    pub(crate) coverage: Option<crate::explore::CoverageProbe>,
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
    tally: crate::explore::coverage::Tally,
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
            tally: crate::explore::coverage::Tally::default(),
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

    /// The checkpoint phase of a level boundary ([`crate::explore::checkpoint`]): every worker lends
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
    /// claimed chunk by chunk (the timely engine, [`crate::explore::timely`], which has no work
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
    pub(crate) fn finish(self) -> (Shard, crate::explore::coverage::Tally) {
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
        // larger than this one's changes nothing ([`crate::explore::recent`] explains why): skip
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
