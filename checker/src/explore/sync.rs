//! What the workers share: a level barrier that can be poisoned, per-worker counters, the
//! memory stop flag and the coordinator's decision for the next level.
//!
//! Everything here is touched a few times per batch or per level, never per state.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
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
}

/// State shared by all workers of one exploration.
pub(crate) struct Shared {
    pub(crate) threads: usize,
    pub(crate) barrier: LevelBarrier,
    pub(crate) counters: Vec<Counters>,
    /// Set when the memory budget is exhausted; workers stop expanding at the next check
    /// point.
    pub(crate) stop_memory: AtomicBool,
    pub(crate) max_memory: Option<u64>,
    /// Per worker, per property: smallest key of a discovery in the level just expanded.
    pub(crate) level_discoveries: Vec<Mutex<Vec<Option<u64>>>>,
    pub(crate) decision: Mutex<Decision>,
}

impl Shared {
    pub(crate) fn new(threads: usize, max_memory: Option<u64>, decision: Decision) -> Self {
        let properties = decision.pending.len();
        Shared {
            threads,
            barrier: LevelBarrier::new(threads),
            counters: (0..threads).map(|_| Counters::default()).collect(),
            stop_memory: AtomicBool::new(false),
            max_memory,
            level_discoveries: (0..threads)
                .map(|_| Mutex::new(vec![None; properties]))
                .collect(),
            decision: Mutex::new(decision),
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

    /// Asks every worker to stop expanding (memory budget exhausted).
    pub(crate) fn request_memory_stop(&self) {
        self.stop_memory.store(true, Ordering::Relaxed);
    }

    /// Whether a memory stop was requested.
    pub(crate) fn memory_stop_requested(&self) -> bool {
        self.stop_memory.load(Ordering::Relaxed)
    }
}
