//! What the workers share: a level barrier that can be poisoned, per-worker counters, the
//! memory stop flag and the coordinator's decision for the next level.
//!
//! Everything here is touched a few times per batch or per level, never per state.

use super::coordinator::Sighting;
use super::frontier::Frontier;
use super::report::StopReason;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Returned by blocking operations once some worker has panicked.
#[derive(Debug)]
pub(crate) struct Poisoned;

/// Locks a mutex, ignoring poisoning (a panicking worker poisons the barrier instead).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A reusable barrier for `parties` threads that every waiter leaves with `Err(Poisoned)`
/// once [`LevelBarrier::poison`] is called, so that a panic in one worker (for example in
/// model code) cannot leave the others blocked forever.
pub(crate) struct LevelBarrier {
    parties: usize,
    state: Mutex<(usize, u64)>,
    condvar: Condvar,
    poisoned: AtomicBool,
}

impl LevelBarrier {
    pub(crate) fn new(parties: usize) -> Self {
        LevelBarrier {
            parties,
            state: Mutex::new((0, 0)),
            condvar: Condvar::new(),
            poisoned: AtomicBool::new(false),
        }
    }

    /// Blocks until all parties arrived (or the barrier is poisoned).
    pub(crate) fn wait(&self) -> Result<(), Poisoned> {
        let mut state = lock(&self.state);
        if self.is_poisoned() {
            return Err(Poisoned);
        }
        let generation = state.1;
        state.0 += 1;
        if state.0 == self.parties {
            state.0 = 0;
            state.1 += 1;
            self.condvar.notify_all();
            return Ok(());
        }
        while state.1 == generation {
            if self.is_poisoned() {
                return Err(Poisoned);
            }
            state = self
                .condvar
                .wait_timeout(state, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(())
    }

    /// Wakes every waiter with `Err(Poisoned)`, now and in the future.
    pub(crate) fn poison(&self) {
        self.poisoned.store(true, Ordering::SeqCst);
        let _guard = lock(&self.state);
        self.condvar.notify_all();
    }

    /// Whether [`LevelBarrier::poison`] was called.
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Relaxed)
    }
}

/// Cumulative counters one worker publishes at every check point (one cache line per
/// worker, so that workers do not invalidate each other's lines).
#[derive(Default)]
#[repr(align(64))]
pub(crate) struct Counters {
    /// Successors generated (within the boundary).
    pub(crate) generated: AtomicU64,
    /// States this worker's shard added to its visited table (initial states excluded).
    pub(crate) new: AtomicU64,
    /// States this worker expanded.
    pub(crate) expanded: AtomicU64,
    /// States this worker's shard dropped because its table was full.
    pub(crate) dropped: AtomicU64,
    /// Bytes this worker holds (table, frontiers, buffers).
    pub(crate) memory: AtomicU64,
}

/// The coordinator's verdict when a level ends.
#[derive(Clone, Debug)]
pub(crate) struct Decision {
    /// Stop now (the next level is kept but not expanded).
    pub(crate) stop: bool,
    /// Per property: still to be evaluated on the next level (no discovery yet).
    pub(crate) pending: Vec<bool>,
    /// Write a checkpoint before expanding the next level ([`super::checkpoint`]).
    pub(crate) save: bool,
}

/// One worker's share of the level being expanded, readable by every worker: the states
/// (packed), their keys, and a cursor through them. Whoever expands states of it, the worker
/// itself or a peer that finished its own share, claims them `CHUNK` at a time by advancing
/// the cursor, so each state is expanded exactly once.
pub(crate) struct Part {
    /// The states, in the order of `keys`.
    pub(crate) frontier: Frontier,
    /// Their keys (the last closed level of the owner's parent log).
    pub(crate) keys: Arc<[u64]>,
    /// Index of the first state nobody has claimed yet.
    cursor: AtomicUsize,
}

impl Part {
    /// A share of `frontier`, whose states have the keys `keys`, with nothing claimed yet.
    pub(crate) fn new(frontier: Frontier, keys: Arc<[u64]>) -> Self {
        Part {
            frontier,
            keys,
            cursor: AtomicUsize::new(0),
        }
    }

    /// Claims the next `chunk` states (fewer at the end); `None` once all are claimed.
    pub(crate) fn claim(&self, chunk: usize) -> Option<std::ops::Range<usize>> {
        let len = self.frontier.len();
        let start = self.cursor.fetch_add(chunk, Ordering::Relaxed);
        (start < len).then(|| start..(start + chunk).min(len))
    }
}

/// State shared by all workers of one exploration.
pub(crate) struct Shared {
    pub(crate) threads: usize,
    pub(crate) barrier: LevelBarrier,
    pub(crate) counters: Vec<Counters>,
    /// The first stop requested during a level (0: none; else [`StopReason::code`]): the
    /// memory budget, `max_states` or an interrupt. Workers stop expanding at their next
    /// check point, finish the level's exchange, and the level closes as the last one.
    pub(crate) stop: AtomicU8,
    pub(crate) max_memory: Option<u64>,
    /// Per worker, per property: the smallest-key discovery in the level just expanded.
    pub(crate) level_discoveries: Vec<Mutex<Vec<Option<Sighting>>>>,
    pub(crate) decision: Mutex<Decision>,
    /// Per worker: its share of the level being expanded, published when the level starts
    /// and taken back once every worker has sent `Done` (so nobody reads it any more).
    pub(crate) parts: Vec<Mutex<Option<Arc<Part>>>>,
    /// The workers' coverage tallies, merged as each worker finishes.
    pub(crate) coverage: Mutex<super::coverage::Tally>,
    /// Per worker: what it lends to the checkpoint being written (between two barriers).
    pub(crate) snapshots: Vec<Mutex<Option<super::checkpoint::ShardSnapshot>>>,
}

impl Shared {
    pub(crate) fn new(threads: usize, max_memory: Option<u64>, decision: Decision) -> Self {
        let properties = decision.pending.len();
        Shared {
            threads,
            barrier: LevelBarrier::new(threads),
            counters: (0..threads).map(|_| Counters::default()).collect(),
            stop: AtomicU8::new(0),
            max_memory,
            level_discoveries: (0..threads)
                .map(|_| Mutex::new(vec![None; properties]))
                .collect(),
            decision: Mutex::new(decision),
            parts: (0..threads).map(|_| Mutex::new(None)).collect(),
            coverage: Mutex::new(super::coverage::Tally::default()),
            snapshots: (0..threads).map(|_| Mutex::new(None)).collect(),
        }
    }

    /// Sum of one counter over all workers.
    pub(crate) fn sum(&self, field: impl Fn(&Counters) -> &AtomicU64) -> u64 {
        self.counters
            .iter()
            .map(|c| field(c).load(Ordering::Relaxed))
            .sum()
    }

    /// Whether `extra` more bytes fit in the memory budget.
    pub(crate) fn memory_allows(&self, extra: u64) -> bool {
        match self.max_memory {
            None => true,
            Some(max) => self.sum(|c| &c.memory).saturating_add(extra) <= max,
        }
    }

    /// Asks every worker to stop expanding, for `reason`; the first reason requested wins.
    pub(crate) fn request_stop(&self, reason: StopReason) {
        let _ = self
            .stop
            .compare_exchange(0, reason.code(), Ordering::Relaxed, Ordering::Relaxed);
    }

    /// The stop requested so far, if any.
    pub(crate) fn stop_requested(&self) -> Option<StopReason> {
        StopReason::from_code(self.stop.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A share of 1000 states claimed 7 at a time by three threads at once (as by a worker
    /// and two thieves): every state is claimed exactly once, and claims past the end
    /// return nothing.
    #[test]
    fn concurrent_claims_cover_every_state_exactly_once() {
        let mut frontier = Frontier::default();
        for i in 0..1000u32 {
            frontier.push(&i.to_le_bytes());
        }
        let part = Part::new(frontier, (0..1000u64).collect());
        let claimed: Vec<Vec<usize>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        while let Some(range) = part.claim(7) {
                            assert!(range.len() <= 7 && range.end <= 1000, "{range:?}");
                            mine.extend(range);
                        }
                        mine
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all: Vec<usize> = claimed.concat();
        all.sort_unstable();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
        assert_eq!(part.claim(7), None, "everything was claimed");
    }
}
