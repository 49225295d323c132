//! The coordinator: the bookkeeping worker 0 does between levels and at check points.
//!
//! Worker 0 runs on the calling thread and carries a [`Coordinator`]. At its check points
//! (every chunk of expanded states, and every poll while it waits for the other workers'
//! last batches) it samples the shared counters, tracks peak memory, raises the memory stop
//! flag when over budget and calls the progress callback when one is due. Between the two
//! barriers that end a level it merges the workers' discoveries, records the level's size
//! and decides whether the next level is expanded.

use super::checkpoint::{self, CheckpointPlan, SaveData, ShardSnapshot};
use super::coverage::Tally;
use super::report::{Progress, StopReason};
use super::sync::{lock, Decision, Shared};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A discovery within one level: the discovered state's key and its reference in the level
/// ([`super::path::parent_ref`], which names the shard that stores it). Tuples compare by
/// key first, so the smallest key wins.
pub(crate) type Sighting = (u64, u32);

/// Smallest-key discovery of one property: where it is, and its depth in steps from an
/// initial state.
pub(crate) type Found = Option<(Sighting, usize)>;

/// Limits and callbacks the coordinator applies.
pub(crate) struct Limits<'a> {
    pub(crate) finish_when_all_discovered: bool,
    pub(crate) max_states: Option<u64>,
    pub(crate) max_transitions: Option<u64>,
    pub(crate) max_memory: Option<u64>,
    /// Stateright's `target_max_depth`: states at this 1-based depth or deeper are not
    /// expanded. `None` (or 0, as in stateright) means no bound.
    pub(crate) target_max_depth: Option<usize>,
    pub(crate) progress: Option<&'a (dyn Fn(&Progress) + Sync)>,
    pub(crate) progress_interval: Duration,
    /// Set from outside (a signal handler) to stop at the next check point.
    pub(crate) interrupt: Option<&'static AtomicBool>,
}

/// Exploration-wide bookkeeping kept by worker 0; see the [module documentation](self).
pub(crate) struct Coordinator<'a> {
    pub(crate) limits: Limits<'a>,
    pub(crate) start: Instant,
    last_progress: Instant,
    /// Initial states within the boundary (counted as generated, like stateright).
    pub(crate) init_generated: u64,
    /// Distinct initial states.
    pub(crate) init_distinct: u64,
    /// 0-based index of the level being expanded.
    pub(crate) level: usize,
    pub(crate) states_per_depth: Vec<u64>,
    pub(crate) max_depth: usize,
    pub(crate) discoveries: Vec<Found>,
    pub(crate) stopped_early: Option<StopReason>,
    pub(crate) peak_memory: u64,
    /// States expanded before a resumed run started (0 otherwise).
    pub(crate) base_expanded: u64,
    /// Checkpoints to write, if any ([`super::checkpoint`]).
    pub(crate) saving: Option<Saving<'a>>,
}

/// How long a run with checkpoints waits for its first one, whatever the interval: early
/// levels are small and cheap to save, and a run killed in its first minutes can then be
/// resumed too (a checkpoint at the first level boundary after a second, then one per
/// interval).
pub(crate) const FIRST_CHECKPOINT: Duration = Duration::from_secs(1);

/// The checkpoints of a run: the plan and what became of it.
pub(crate) struct Saving<'a> {
    pub(crate) plan: &'a CheckpointPlan,
    /// When the last checkpoint was written (or the run started).
    pub(crate) last: Instant,
    /// Checkpoints written.
    pub(crate) written: u64,
    /// The first failed write.
    pub(crate) error: Option<String>,
}

impl<'a> Coordinator<'a> {
    pub(crate) fn new(
        limits: Limits<'a>,
        start: Instant,
        init_generated: u64,
        init_distinct: u64,
        properties: usize,
    ) -> Self {
        Coordinator {
            limits,
            start,
            last_progress: start,
            init_generated,
            init_distinct,
            level: 0,
            states_per_depth: if init_distinct > 0 {
                vec![init_distinct]
            } else {
                Vec::new()
            },
            max_depth: 0,
            discoveries: vec![None; properties],
            stopped_early: None,
            peak_memory: 0,
            base_expanded: 0,
            saving: None,
        }
    }

    /// Whether the level at 0-based index `level` must not be expanded because of
    /// `target_max_depth` (its 1-based depth is `level + 1`).
    pub(crate) fn beyond_depth(&self, level: usize) -> bool {
        matches!(self.limits.target_max_depth, Some(t) if t > 0 && level + 1 >= t)
    }

    /// The decision for the next level's workers: which properties still need evaluating.
    pub(crate) fn decision(&self, stop: bool) -> Decision {
        Decision {
            stop,
            pending: self.discoveries.iter().map(Option::is_none).collect(),
            save: false,
        }
    }

    fn distinct(&self, shared: &Shared) -> u64 {
        self.init_distinct + shared.sum(|c| &c.new)
    }

    /// Samples memory, enforces the budget, and reports progress when due.
    pub(crate) fn checkpoint(&mut self, shared: &Shared) {
        let memory = shared.sum(|c| &c.memory);
        self.peak_memory = self.peak_memory.max(memory);
        if self.limits.max_memory.is_some_and(|max| memory > max) {
            shared.request_stop(StopReason::Memory);
        }
        // Checked here, between chunks, and not only when a level ends: a level can hold
        // many times `max_states` states, and an interrupt must act within a second.
        if self
            .limits
            .max_states
            .is_some_and(|max| self.distinct(shared) >= max)
        {
            shared.request_stop(StopReason::MaxStates);
        }
        if self
            .limits
            .max_transitions
            .is_some_and(|max| self.init_generated + shared.sum(|c| &c.generated) >= max)
        {
            shared.request_stop(StopReason::MaxTransitions);
        }
        if self
            .limits
            .interrupt
            .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed))
        {
            shared.request_stop(StopReason::Interrupted);
        }
        let Some(callback) = self.limits.progress else {
            return;
        };
        let now = Instant::now();
        if now.duration_since(self.last_progress) < self.limits.progress_interval {
            return;
        }
        self.last_progress = now;
        let distinct = self.distinct(shared);
        callback(&Progress {
            generated: self.init_generated + shared.sum(|c| &c.generated),
            distinct,
            queue: distinct.saturating_sub(self.base_expanded + shared.sum(|c| &c.expanded)),
            depth: self.level + 1,
            elapsed: now.duration_since(self.start),
            memory,
        });
    }

    /// Called by worker 0 between the two end-of-level barriers: merges discoveries, records
    /// the new level and publishes the decision for the next one.
    pub(crate) fn end_level(&mut self, shared: &Shared) {
        self.checkpoint(shared);
        let depth = self.level + 1;
        self.max_depth = depth;
        for (p, found) in self.discoveries.iter_mut().enumerate() {
            if found.is_some() {
                continue;
            }
            *found = shared
                .level_discoveries
                .iter()
                .filter_map(|d| lock(d)[p])
                .min()
                .map(|sighting| (sighting, self.level));
        }
        let distinct = self.distinct(shared);
        let before: u64 = self.states_per_depth.iter().sum();
        let level_new = distinct - before;
        if level_new > 0 {
            self.states_per_depth.push(level_new);
        }
        let all_discovered =
            !self.discoveries.is_empty() && self.discoveries.iter().all(Option::is_some);
        let memory = shared.sum(|c| &c.memory);
        self.stopped_early = if let Some(reason) = shared.stop_requested() {
            Some(reason)
        } else if level_new == 0 {
            None
        } else if self.limits.finish_when_all_discovered && all_discovered {
            Some(StopReason::AllDiscovered)
        } else if self.limits.max_states.is_some_and(|max| distinct >= max) {
            Some(StopReason::MaxStates)
        } else if self.limits.max_memory.is_some_and(|max| memory > max) {
            Some(StopReason::Memory)
        } else if self.beyond_depth(self.level + 1) {
            // Stateright pops the states of the bounded level (so they count towards
            // max_depth) but neither checks nor expands them.
            self.max_depth = depth + 1;
            Some(StopReason::MaxDepth)
        } else {
            None
        };
        let stop = self.stopped_early.is_some() || level_new == 0;
        let mut decision = self.decision(stop);
        decision.save = !stop && self.checkpoint_due();
        *lock(&shared.decision) = decision;
        self.level += 1;
    }

    /// Called by worker 0 between the two barriers of a checkpoint phase, when every worker
    /// has lent its shard ([`ShardSnapshot`]): writes the checkpoint.
    pub(crate) fn save(&mut self, shared: &Shared) {
        let guards: Vec<_> = shared.snapshots.iter().map(|m| lock(m)).collect();
        let snapshots: Vec<&ShardSnapshot> = guards
            .iter()
            .map(|g| {
                g.as_ref().unwrap_or_else(|| {
                    panic!("[memtx internal bug] a worker lent nothing to the checkpoint")
                })
            })
            .collect();
        // The tallies of the workers, and of the run before a resume.
        let mut tally = lock(&shared.coverage).clone();
        for snapshot in &snapshots {
            snapshot.tally.clone().merge_into(&mut tally);
        }
        let result = self.write(shared, &snapshots, &tally, None);
        if let Some(saving) = &mut self.saving {
            match result {
                Ok(()) => saving.written += 1,
                Err(e) => {
                    saving.error.get_or_insert(e);
                }
            }
        }
    }

    /// The timely engine's checkpoint phase ([`super::timely`]): writes worker `part`'s share
    /// of the checkpoint (its lent shard and its `tally`, which for worker 0 includes the run
    /// before a resume) as part `part` of `parts`. The checkpoint is complete once every
    /// worker's part is; the caller counts it then.
    pub(crate) fn save_part(
        &mut self,
        shared: &Shared,
        snapshot: &ShardSnapshot,
        tally: &Tally,
        part: usize,
        parts: usize,
    ) -> Result<(), String> {
        self.write(shared, &[snapshot], tally, Some((part, parts)))
    }

    fn write(
        &mut self,
        shared: &Shared,
        shards: &[&ShardSnapshot],
        tally: &Tally,
        part: Option<(usize, usize)>,
    ) -> Result<(), String> {
        let distinct = self.distinct(shared);
        let generated = self.init_generated + shared.sum(|c| &c.generated);
        let expanded = self.base_expanded + shared.sum(|c| &c.expanded);
        let elapsed = self.start.elapsed();
        let Some(saving) = &mut self.saving else {
            return Ok(());
        };
        let data = SaveData {
            run: &saving.plan.run,
            shards,
            discoveries: self
                .discoveries
                .iter()
                .map(|f| f.map(|((key, _), level)| (key, level)))
                .collect(),
            states_per_depth: &self.states_per_depth,
            generated,
            distinct,
            expanded,
            max_depth: self.max_depth,
            level: self.level,
            elapsed,
            tally,
        };
        let result = match part {
            None => checkpoint::write(&saving.plan.dir, &data),
            Some((p, n)) => checkpoint::write_part(&saving.plan.dir, p, n, &data),
        };
        saving.last = Instant::now();
        result
    }

    /// Whether a checkpoint is due by the clock: the interval since the last one passed, or,
    /// before the first, [`FIRST_CHECKPOINT`] (if shorter) since the run started.
    pub(crate) fn checkpoint_due(&self) -> bool {
        self.saving.as_ref().is_some_and(|s| {
            let wait = if s.written == 0 && s.error.is_none() {
                s.plan.every.min(FIRST_CHECKPOINT)
            } else {
                s.plan.every
            };
            s.last.elapsed() >= wait
        })
    }
}
