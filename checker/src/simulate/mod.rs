//! Swarm simulation: random walks from the initial state over the same model and the same
//! properties as `memtx check`, for configurations too large to exhaust (`memtx simulate`).
//!
//! Every state a walk visits is judged by every selected property (invariants: a violation
//! ends the run; examples: the first walk and depth that reached each); every attempted step
//! is counted in the rule tallies; every state's fingerprint goes into a
//! [`sketch::Sketch`] that estimates how many distinct states the walks saw. Each walk draws
//! its own [`swarm::Swarm`] (operation families it favours, its depth bound) from the run's
//! seed and its index; each of its steps chooses a family, then one of the family's
//! operations (`walker.rs`).
//!
//! **Deterministic on any thread count.** Walks are taken in batches of [`BATCH`]; a batch
//! is run by one thread, start to end, and the results are merged in batch order, up to the
//! first batch with a violation (whose walks after the violating one are not run) or the
//! first batch not run (a deadline or an interrupt stops the run between batches). The
//! result is therefore that of walks `0..walks` in order, whichever threads ran them:
//! `--walks N --seed S` reproduces any run, and a violation is always the lowest-numbered
//! violating walk's.

pub mod shrink;
pub mod sketch;
pub mod swarm;

mod walker;

use crate::explore::CoverageTally;
use memtx_model::ops::Op;
use memtx_model::MemTx;
use sketch::Sketch;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use walker::Walker;

/// Walks per batch: the unit of work a thread takes and of merging.
pub const BATCH: u64 = 64;
/// `--max-walk-depth` when not given.
pub const DEFAULT_MAX_WALK_DEPTH: usize = 64;
/// `--seed` when not given.
pub const DEFAULT_SEED: u64 = 1;
/// `--search-budget` when not given: states the search for a shorter counterexample explores.
pub const DEFAULT_SEARCH_BUDGET: u64 = 2_000_000;

/// What a simulation runs.
#[derive(Clone, Debug)]
pub struct SimulateOptions {
    /// The run's seed: with the walk's index, it decides everything a walk does.
    pub seed: u64,
    /// Run at most this many walks.
    pub walks: Option<u64>,
    /// Start no batch after this long.
    pub time: Option<Duration>,
    /// The deepest a walk may go (each walk draws its own bound, up to this).
    pub max_walk_depth: usize,
    /// Worker threads (0 is treated as 1).
    pub threads: usize,
    /// Polled between batches: once it reads `true` the run stops as interrupted.
    pub interrupt: Option<&'static AtomicBool>,
}

/// Why a simulation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SimulationEnd {
    /// Every walk asked for was run.
    Walks,
    /// The time given ran out.
    Time,
    /// An invariant was violated.
    Violation,
    /// SIGINT or SIGTERM.
    Interrupted,
}

/// A walk that broke an invariant: the operations from the initial state to the first state
/// that breaks it.
#[derive(Clone, Debug)]
pub struct WalkViolation {
    /// The property's key (`I2`).
    pub key: &'static str,
    /// The walk's index.
    pub walk: u64,
    /// The walk's operations, the last one leading to the violating state.
    pub ops: Vec<Op>,
}

/// Where an example was first reached: the walk and its step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Sighting {
    /// The walk's index.
    pub walk: u64,
    /// Steps from the initial state.
    pub step: usize,
}

/// How far a simulation had got after its first `walks` walks: recorded after 1, 2, 4, 8, …
/// batches and at the end, so the points are the same on any thread count (but `seconds`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ProgressPoint {
    /// Walks merged.
    pub walks: u64,
    /// Steps of those walks.
    pub steps: u64,
    /// Seconds since the start when they were merged.
    pub seconds: f64,
    /// Rules fired by some step of those walks.
    pub rules_exercised: u32,
    /// Estimated distinct states those walks visited.
    pub distinct_estimate: u64,
}

/// What a simulation found and how much it did.
#[derive(Clone, Debug)]
pub struct Simulation {
    /// Walks run (a violation's walk included).
    pub walks: u64,
    /// Steps taken (operations applied), over every walk.
    pub steps: u64,
    /// Steps attempted that the protocol refused.
    pub refused: u64,
    /// Walks that ended because no proposed operation was enabled.
    pub stuck: u64,
    /// Walks by length: `lengths[n]` walks took `n` steps.
    pub lengths: Vec<u64>,
    /// Estimated distinct states visited (initial state included); see [`Sketch`].
    pub distinct_estimate: f64,
    /// Per selected property, in order: where each example was first reached (`None` for
    /// invariants and examples never reached).
    pub examples: Vec<Option<Sighting>>,
    /// Rule tallies over every attempted step (first step: the fewest steps of a walk
    /// after which the rule fired).
    pub rules: Vec<CoverageTally>,
    /// The violation, if a walk found one.
    pub violation: Option<WalkViolation>,
    /// Why the run ended.
    pub end: SimulationEnd,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Coverage and distinct states as the walks went on.
    pub progress: Vec<ProgressPoint>,
}

/// The results of some walks: one batch's, or the sum of the batches merged so far.
struct BatchResult {
    walks: u64,
    steps: u64,
    refused: u64,
    stuck: u64,
    lengths: Vec<u64>,
    sketch: Sketch,
    examples: Vec<Option<Sighting>>,
    tally: crate::explore::Tally,
    violation: Option<WalkViolation>,
}

impl BatchResult {
    fn new(properties: usize) -> Self {
        BatchResult {
            walks: 0,
            steps: 0,
            refused: 0,
            stuck: 0,
            lengths: Vec::new(),
            sketch: Sketch::default(),
            examples: vec![None; properties],
            tally: crate::explore::Tally::default(),
            violation: None,
        }
    }

    /// Adds the walks of `r`, which come after these.
    fn absorb(&mut self, r: BatchResult) {
        self.walks += r.walks;
        self.steps += r.steps;
        self.refused += r.refused;
        self.stuck += r.stuck;
        if self.lengths.len() < r.lengths.len() {
            self.lengths.resize(r.lengths.len(), 0);
        }
        for (a, b) in self.lengths.iter_mut().zip(&r.lengths) {
            *a += b;
        }
        self.sketch.merge(&r.sketch);
        for (a, b) in self.examples.iter_mut().zip(r.examples) {
            *a = match (*a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
        }
        r.tally.merge_into(&mut self.tally);
        self.violation = r.violation;
    }

    /// Where these walks have got, `seconds` after the start.
    fn point(&self, seconds: f64) -> ProgressPoint {
        ProgressPoint {
            walks: self.walks,
            steps: self.steps,
            seconds,
            rules_exercised: self.tally.exercised(),
            distinct_estimate: self.sketch.estimate().round() as u64,
        }
    }

    fn finish(
        self,
        end: SimulationEnd,
        elapsed: Duration,
        mut progress: Vec<ProgressPoint>,
    ) -> Simulation {
        if progress.last().is_none_or(|p| p.walks != self.walks) {
            progress.push(self.point(elapsed.as_secs_f64()));
        }
        Simulation {
            progress,
            walks: self.walks,
            steps: self.steps,
            refused: self.refused,
            stuck: self.stuck,
            lengths: self.lengths,
            distinct_estimate: self.sketch.estimate(),
            examples: self.examples,
            rules: self.tally.finish(),
            violation: self.violation,
            end,
            elapsed,
        }
    }
}

/// Runs the simulation (see the [module documentation](self)).
pub fn simulate(model: &MemTx, opts: &SimulateOptions) -> Simulation {
    let started = Instant::now();
    let threads = opts.threads.max(1);
    let batches = opts.walks.map(|w| w.div_ceil(BATCH));
    let next = AtomicU64::new(0);
    // The lowest batch known to hold a violation: no batch after it is started.
    let violated = AtomicU64::new(u64::MAX);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(u64, BatchResult)>();
    let deadline = opts.time.map(|t| started + t);
    let mut end = SimulationEnd::Walks;
    let mut merge = Merge::new(model.selected.len(), started);
    let sighted = Sighted::new(model.selected.len());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, violated, stop, sighted) = (&next, &violated, &stop, &sighted);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let b = next.fetch_add(1, Ordering::Relaxed);
                if batches.is_some_and(|n| b >= n) || b > violated.load(Ordering::Relaxed) {
                    return;
                }
                let first = b * BATCH;
                let last = opts.walks.map_or(first + BATCH, |w| w.min(first + BATCH));
                let result = run_batch(model, opts, b, first..last, sighted);
                if result.violation.is_some() {
                    violated.fetch_min(b, Ordering::Relaxed);
                }
                if tx.send((b, result)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        // Merge in batch order as results arrive; watch the clock and the interrupt.
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok((b, result)) => {
                    merge.pending.insert(b, result);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            merge.ready();
            if merge.merged.violation.is_some() {
                end = SimulationEnd::Violation;
                stop.store(true, Ordering::Relaxed);
            } else if opts.interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
                end = SimulationEnd::Interrupted;
                stop.store(true, Ordering::Relaxed);
            } else if deadline.is_some_and(|d| Instant::now() >= d) {
                end = SimulationEnd::Time;
                stop.store(true, Ordering::Relaxed);
            }
        }
        // Batches that finished after the stop but extend the contiguous prefix still count.
        merge.ready();
    });
    if merge.merged.violation.is_some() {
        end = SimulationEnd::Violation;
    }
    merge.merged.finish(end, started.elapsed(), merge.progress)
}

/// The merging of batch results in batch order: those that arrived early wait in `pending`.
struct Merge {
    /// Results of batches not merged yet, by batch index.
    pending: BTreeMap<u64, BatchResult>,
    /// How many batches are merged (a prefix of the batches, in order).
    batches: u64,
    /// Their sum.
    merged: BatchResult,
    /// A point after each power of two of batches.
    progress: Vec<ProgressPoint>,
    started: Instant,
}

impl Merge {
    fn new(properties: usize, started: Instant) -> Self {
        Merge {
            pending: BTreeMap::new(),
            batches: 0,
            merged: BatchResult::new(properties),
            progress: Vec::new(),
            started,
        }
    }

    /// Absorbs the pending batches that extend the merged prefix, stopping after one with a
    /// violation.
    fn ready(&mut self) {
        while self.merged.violation.is_none() {
            let Some(result) = self.pending.remove(&self.batches) else {
                return;
            };
            self.merged.absorb(result);
            self.batches += 1;
            if self.batches.is_power_of_two() {
                let seconds = self.started.elapsed().as_secs_f64();
                self.progress.push(self.merged.point(seconds));
            }
        }
    }
}

/// For each example, the lowest batch that has sighted it so far (`u64::MAX`: none), shared by
/// the threads. A batch does not judge an example that a batch before it has sighted: the
/// merged result keeps each example's earliest sighting, which lies in a batch that judged it
/// (no batch before that one sighted it), so the result is the same, on any thread count, as
/// if every batch judged every example. Rare examples would otherwise be judged on every step
/// of every walk (about 8 % of the steps on `full`, 1 thread).
struct Sighted(Vec<AtomicU64>);

impl Sighted {
    fn new(properties: usize) -> Self {
        Sighted((0..properties).map(|_| AtomicU64::new(u64::MAX)).collect())
    }

    /// Which examples batch `batch` still judges: those no earlier batch has sighted.
    fn open_for(&self, batch: u64) -> Vec<bool> {
        self.0
            .iter()
            .map(|b| b.load(Ordering::Relaxed) >= batch)
            .collect()
    }

    /// Batch `batch` sighted the examples `examples` holds.
    fn record(&self, batch: u64, examples: &[Option<Sighting>]) {
        for (first, e) in self.0.iter().zip(examples) {
            if e.is_some() {
                first.fetch_min(batch, Ordering::Relaxed);
            }
        }
    }
}

/// Runs walks `walks` (batch `batch`) in order, stopping after the first that violates an
/// invariant; judges only the examples no earlier batch has sighted ([`Sighted`]).
fn run_batch(
    model: &MemTx,
    opts: &SimulateOptions,
    batch: u64,
    walks: std::ops::Range<u64>,
    sighted: &Sighted,
) -> BatchResult {
    let mut out = BatchResult::new(model.selected.len());
    let mut walker = Walker::new(model);
    walker.open = sighted.open_for(batch);
    for walk in walks {
        out.walks += 1;
        let violation = walker.walk(opts.seed, walk, opts.max_walk_depth, &mut out);
        if let Some(v) = violation {
            out.violation = Some(v);
            break;
        }
    }
    sighted.record(batch, &out.examples);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtx_model::presets::preset;
    use memtx_model::Variant;

    /// Batches that skip the examples an earlier batch has sighted ([`Sighted`]) merge into
    /// the same result as batches that judge every example, and the later batches do skip.
    #[test]
    fn skipping_examples_sighted_earlier_changes_no_sighting() {
        let model = MemTx::new(preset("full", Variant::Memtx).expect("full"));
        let opts = SimulateOptions {
            seed: 7,
            walks: None,
            time: None,
            max_walk_depth: 32,
            threads: 1,
            interrupt: None,
        };
        let run = |shared: bool| {
            let sighted = Sighted::new(model.selected.len());
            let mut merged = BatchResult::new(model.selected.len());
            let mut skipped = 0;
            for b in 0..40 {
                let fresh = Sighted::new(model.selected.len());
                let used = if shared { &sighted } else { &fresh };
                skipped += used.open_for(b).iter().filter(|open| !**open).count();
                merged.absorb(run_batch(
                    &model,
                    &opts,
                    b,
                    b * BATCH..(b + 1) * BATCH,
                    used,
                ));
            }
            (merged, skipped)
        };
        let (skipping, skipped) = run(true);
        let (judging, none) = run(false);
        assert_eq!(none, 0);
        assert!(skipped > 0, "no batch skipped an example");
        assert_eq!(skipping.examples, judging.examples);
        assert!(skipping.examples.iter().any(Option::is_some));
        assert_eq!(
            (skipping.walks, skipping.steps, skipping.refused),
            (judging.walks, judging.steps, judging.refused)
        );
    }
}
