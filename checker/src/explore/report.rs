//! What an exploration returns: [`ExploreReport`], [`Progress`], [`StopReason`] and
//! [`ExploreError`], plus reading the process's peak memory from `/proc`.

use serde::Serialize;
use stateright::Expectation;
use std::fmt;
use std::time::Duration;

/// Why an exploration stopped before visiting every reachable state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum StopReason {
    /// The memory budget (`max_memory_bytes`) was reached. The level being expanded may be
    /// incomplete; counts are then not deterministic.
    Memory,
    /// At least `max_states` distinct states were found. Checked between chunks of
    /// expanded states, so the run stops within about one batch of the limit, in the middle
    /// of a level; counts are then not deterministic.
    MaxStates,
    /// At least `max_transitions` successors were generated (checked like `MaxStates`).
    MaxTransitions,
    /// The next level is at `target_max_depth`; its states were counted but not expanded or
    /// checked, as in stateright.
    MaxDepth,
    /// Every property has a discovery and `finish_when_all_discovered` was set (checked
    /// when a level ends).
    AllDiscovered,
    /// The interrupt flag ([`super::ExploreOptions::interrupt`]) was raised, by SIGINT or
    /// SIGTERM: the run stopped at the next check point, within a level.
    Interrupted,
}

impl StopReason {
    /// A non-zero code for an atomic stop request.
    pub(crate) fn code(self) -> u8 {
        match self {
            StopReason::Memory => 1,
            StopReason::MaxStates => 2,
            StopReason::MaxDepth => 3,
            StopReason::AllDiscovered => 4,
            StopReason::Interrupted => 5,
            StopReason::MaxTransitions => 6,
        }
    }

    /// The reason of a [`StopReason::code`]; `None` for 0 (no stop requested).
    pub(crate) fn from_code(code: u8) -> Option<StopReason> {
        [
            StopReason::Memory,
            StopReason::MaxStates,
            StopReason::MaxDepth,
            StopReason::AllDiscovered,
            StopReason::Interrupted,
            StopReason::MaxTransitions,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            StopReason::Memory => "memory",
            StopReason::MaxStates => "max states",
            StopReason::MaxTransitions => "max transitions",
            StopReason::MaxDepth => "max depth",
            StopReason::AllDiscovered => "all properties discovered",
            StopReason::Interrupted => "interrupt",
        };
        write!(f, "stopped early: {what}")
    }
}

/// A snapshot passed to the progress callback about once per `progress_interval`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Progress {
    /// States generated so far, repeats included (as stateright's `state_count()`).
    pub generated: u64,
    /// Distinct states found so far.
    pub distinct: u64,
    /// Distinct states found but not yet expanded.
    pub queue: u64,
    /// Depth (1-based, as stateright counts it) of the level being expanded.
    pub depth: usize,
    /// Time since the exploration started.
    pub elapsed: Duration,
    /// Bytes the engine holds (visited tables, parent logs, frontiers, batches).
    pub memory: u64,
}

/// A state where a property's discovery condition holds, with the shortest path to it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Discovery<State, Action> {
    /// The path, in stateright's format: each state with the action taken from it, the last
    /// state with `None`. The first state is an initial state; each state is the result of
    /// the previous state's action (without symmetry canonicalization: a real execution).
    pub path: Vec<(State, Option<Action>)>,
    /// The visited-set key (fingerprint) of the discovered state (canonical form under
    /// symmetry); the tie-breaker among shortest discoveries.
    pub fingerprint: u64,
}

impl<State, Action> Discovery<State, Action> {
    /// Number of actions on the path.
    pub fn steps(&self) -> usize {
        self.path.len().saturating_sub(1)
    }

    /// The discovered state (the last one on the path).
    pub fn last_state(&self) -> Option<&State> {
        self.path.last().map(|(state, _)| state)
    }

    /// The actions along the path.
    pub fn actions(&self) -> impl Iterator<Item = &Action> {
        self.path.iter().filter_map(|(_, action)| action.as_ref())
    }
}

/// The outcome for one property of the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PropertyReport<State, Action> {
    /// The property's name.
    pub name: &'static str,
    /// Always (a discovery is a counterexample) or Sometimes (a discovery is an example).
    pub expectation: Expectation,
    /// The shortest discovery, if one was found.
    pub discovery: Option<Discovery<State, Action>>,
}

impl<State, Action> PropertyReport<State, Action> {
    /// Whether this property failed: an Always property with a counterexample.
    pub fn is_failure(&self) -> bool {
        self.expectation == Expectation::Always && self.discovery.is_some()
    }
}

/// Memory accounting of one exploration.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemoryReport {
    /// The process's peak resident set (`VmHWM` from `/proc/self/status`) when the
    /// exploration ended, if readable. Process-wide: it includes whatever ran before.
    pub peak_rss_bytes: Option<u64>,
    /// Peak of the engine's own accounting: visited tables, fresh tables, parent logs,
    /// frontiers and batch buffers (sampled at check points and level ends).
    pub peak_estimate_bytes: u64,
    /// Bytes held by the visited sets at the end: the tables of keys and, in exact mode,
    /// the stored states and their offsets.
    pub visited_bytes: u64,
    /// `visited_bytes / unique_states`.
    pub visited_bytes_per_state: f64,
    /// Bytes held by the parent logs at the end: per state its key and a 32-bit reference
    /// to its parent (12 bytes), which is what discovery paths are rebuilt from.
    pub parent_log_bytes: u64,
    /// `parent_log_bytes / unique_states`.
    pub parent_log_bytes_per_state: f64,
    /// `(visited_bytes + parent_log_bytes) / unique_states`: what the engine keeps per
    /// distinct state once its level is closed.
    pub stored_bytes_per_state: f64,
    /// Working memory of the level being explored still held at the end: the fresh tables
    /// and the parent logs' staging vectors, sized for about the largest level (included in
    /// `peak_estimate_bytes`, not in the per-state figures).
    pub level_scratch_bytes: u64,
}

/// TLC's optimistic fingerprint-collision probability of a run that found `unique` distinct
/// states among `total` generated ones with 64-bit fingerprints: `unique · (total − unique) / 2^64`.
pub(crate) fn collision_probability(unique: u64, total: u64) -> f64 {
    unique as f64 * total.saturating_sub(unique) as f64 / 2f64.powi(64)
}

impl MemoryReport {
    /// The report of an exploration that stored `unique_states` states in `visited_bytes`
    /// of visited sets and `parent_log_bytes` of parent logs; the per-state figures are
    /// derived (0 when nothing was stored).
    pub(crate) fn new(
        peak_rss_bytes: Option<u64>,
        peak_estimate_bytes: u64,
        visited_bytes: u64,
        parent_log_bytes: u64,
        level_scratch_bytes: u64,
        unique_states: u64,
    ) -> Self {
        let per_state = |bytes: u64| {
            if unique_states > 0 {
                bytes as f64 / unique_states as f64
            } else {
                0.0
            }
        };
        MemoryReport {
            peak_rss_bytes,
            peak_estimate_bytes,
            visited_bytes,
            visited_bytes_per_state: per_state(visited_bytes),
            parent_log_bytes,
            parent_log_bytes_per_state: per_state(parent_log_bytes),
            stored_bytes_per_state: per_state(visited_bytes + parent_log_bytes),
            level_scratch_bytes,
        }
    }
}

/// The result of [`explore`](super::explore).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExploreReport<State, Action> {
    /// Distinct states found (as stateright's `unique_state_count()`).
    pub unique_states: u64,
    /// States generated, repeats included: the initial states within the boundary plus
    /// every successor within the boundary of every expanded state (as stateright's
    /// `state_count()`).
    pub total_states: u64,
    /// Deepest level popped, 1-based: initial states have depth 1 (as stateright's
    /// `max_depth()`).
    pub max_depth: usize,
    /// Distinct states per depth; index 0 holds the initial states.
    pub states_per_depth: Vec<u64>,
    /// One entry per property, in `model.properties()` order.
    pub properties: Vec<PropertyReport<State, Action>>,
    /// Wall-clock time of the exploration (path reconstruction included).
    pub elapsed: Duration,
    /// `None` if every reachable state (within the boundary) was visited.
    pub stopped_early: Option<StopReason>,
    /// Memory accounting.
    pub memory: MemoryReport,
    /// TLC's optimistic estimate of the probability that a fingerprint collision hid a
    /// state: `n·(g−n)/2^64` with `n` distinct and `g` generated states; 0 in exact mode.
    pub collision_probability: f64,
    /// Exact mode only: states whose fingerprint collided with another state's and that
    /// were told apart by comparing bytes.
    pub fingerprint_collisions: u64,
    /// States lost because a visited table was full under the memory budget.
    pub dropped_states: u64,
    /// Distinct states stored by each worker, in worker order: how the states were split.
    /// By fingerprint the shares are about equal; with a locality key
    /// ([`super::ExploreOptions::locality`]) they are as even as the key spreads the states.
    pub states_per_worker: Vec<u64>,
    /// With a coverage probe ([`super::ExploreOptions::coverage`]): per rule (bit) that fired,
    /// the attempted steps that fired it and the shortest run that did, in bit order.
    pub coverage: Option<Vec<super::CoverageTally>>,
    /// Worker threads used.
    pub threads: usize,
    /// Whether exact mode was on.
    pub exact: bool,
    /// Whether a symmetry canonicalizer was applied.
    pub symmetry: bool,
    /// For a resumed run: the 0-based level the checkpoint's frontier was, where this run
    /// started expanding ([`super::ExploreOptions::resume_from`]).
    pub resumed_from_level: Option<usize>,
    /// Checkpoints this run wrote.
    pub checkpoints_written: u64,
    /// The first checkpoint that could not be written, if any (the run went on).
    pub checkpoint_error: Option<String>,
    /// How the run was spread over timely workers and processes
    /// ([`super::explore_timely`]); `None` for the threaded engine.
    pub cluster: Option<super::ClusterReport>,
}

impl<State, Action> ExploreReport<State, Action> {
    /// The report of the property called `name`.
    pub fn property(&self, name: &str) -> Option<&PropertyReport<State, Action>> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// The discovery path of the property called `name`, if any.
    pub fn discovery(&self, name: &str) -> Option<&Discovery<State, Action>> {
        self.property(name)?.discovery.as_ref()
    }

    /// Whether every reachable state was visited.
    pub fn is_complete(&self) -> bool {
        self.stopped_early.is_none()
    }

    /// Distinct states per second of wall-clock time.
    pub fn states_per_second(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.unique_states as f64 / secs
        } else {
            0.0
        }
    }

    /// A short multi-line human-readable summary (no states printed).
    pub fn summary(&self) -> String {
        let mut out = format!(
            "unique states: {}\ntotal states: {}\nmax depth: {}\nelapsed: {:.3} s ({:.0} states/s)\n",
            self.unique_states,
            self.total_states,
            self.max_depth,
            self.elapsed.as_secs_f64(),
            self.states_per_second()
        );
        match self.stopped_early {
            Some(reason) => out.push_str(&format!("{reason}\n")),
            None => out.push_str("complete\n"),
        }
        for p in &self.properties {
            let status = match (&p.expectation, &p.discovery) {
                (Expectation::Always, Some(d)) => format!("VIOLATED ({} steps)", d.steps()),
                (Expectation::Sometimes, Some(d)) => format!("example found ({} steps)", d.steps()),
                (Expectation::Always, None) if self.is_complete() => "holds".to_string(),
                (Expectation::Sometimes, None) if self.is_complete() => "unreachable".to_string(),
                _ => "undecided (stopped early)".to_string(),
            };
            out.push_str(&format!("{:?} {:?}: {status}\n", p.expectation, p.name));
        }
        out
    }
}

/// Why an exploration could not run or finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExploreError {
    /// The model has an `Eventually` property (named here).
    EventuallyUnsupported(&'static str),
    /// `unpack(pack(s)) != s` for an initial state: the `PackedState` implementation is
    /// wrong.
    PackRoundTrip,
    /// A discovery path could not be replayed: the model is not deterministic, or the
    /// symmetry canonicalizer does not respect the model's symmetry.
    PathReplay {
        /// The property whose discovery failed to replay.
        property: &'static str,
        /// The step (0 = choosing the initial state) that failed.
        step: usize,
    },
    /// Checkpoints were asked for in exact mode, or a checkpoint does not fit the model.
    Checkpoint(String),
    /// A run over timely workers could not be set up (an unsupported option, a bad
    /// address), or lost a process ([`super::explore_timely`]).
    Cluster(String),
}

impl fmt::Display for ExploreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExploreError::EventuallyUnsupported(name) => write!(
                f,
                "eventually properties are not supported by the fast engine (property {name:?})"
            ),
            ExploreError::PackRoundTrip => write!(
                f,
                "PackedState round trip failed: unpack(pack(s)) != s for an initial state"
            ),
            ExploreError::PathReplay { property, step } => write!(
                f,
                "could not replay the discovery path of {property:?} at step {step}: the model \
                 is not deterministic or the symmetry canonicalizer is not a symmetry of it"
            ),
            ExploreError::Checkpoint(what) | ExploreError::Cluster(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for ExploreError {}

/// Reads a `kB` field such as `VmHWM` or `VmRSS` from `/proc/self/status`, in bytes.
pub fn read_proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let kb: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        Some(kb * 1024)
    })
}

/// Resets the process's peak resident set (`VmHWM`) to the current resident set by writing
/// `5` to `/proc/self/clear_refs` (Linux). Returns whether it worked.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}
