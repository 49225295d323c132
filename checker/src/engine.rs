//! The two engines behind `memtx check --engine`, behind one result type.
//!
//! [`run`] explores a [`MemTx`] model with either the fast explorer ([`crate::explore`]) or
//! stateright's `BfsChecker`, and returns a [`RunOutcome`] that everything downstream (traces,
//! reports, replay commands) reads, whichever engine produced it.

use crate::explore::{
    self, Canonicalizer, ExploreOptions, Locality, NextStateInto, PackedState, Progress, StopReason,
};
use memtx_model::{MemTx, Op, State};
use stateright::{Checker, Model};
use std::time::{Duration, Instant};

/// Which explorer runs the check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// This project's level-synchronous, sharded BFS over packed states.
    Fast,
    /// stateright 0.31's `BfsChecker` (the reference).
    Stateright,
    /// The fast engine's shards owned by timely dataflow workers, in one process or over
    /// several ([`crate::explore::explore_timely`]); [`RunOptions::cluster`] says where.
    Timely,
}

impl Engine {
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Fast => "fast",
            Engine::Stateright => "stateright",
            Engine::Timely => "timely",
        }
    }
}

/// Limits and switches of one run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Engine.
    pub engine: Engine,
    /// Worker threads.
    pub threads: usize,
    /// Symmetry reduction over agents (fast engine only).
    pub symmetry: bool,
    /// Exact mode: no fingerprint-collision risk (fast engine only).
    pub exact: bool,
    /// Memory budget in bytes (fast engine only).
    pub max_memory: Option<u64>,
    /// Stop after this many distinct states.
    pub max_states: Option<u64>,
    /// Stop after this many transitions (generated successors; fast engine only).
    pub max_transitions: Option<u64>,
    /// Check every state reachable in at most this many steps (0: the initial states only);
    /// their successors one step further are counted but neither checked nor expanded.
    pub max_depth: Option<usize>,
    /// End the run with the first level by whose end every selected property is decided (an
    /// invariant violated, an example found): `--until-decided`. Counterexamples stay
    /// shortest; a property that holds is decided only by the whole search. (stateright's BFS
    /// always ends there.)
    pub until_decided: bool,
    /// Write checkpoints (fast engine, not exact).
    pub checkpoint: Option<crate::explore::CheckpointPlan>,
    /// Continue the run saved in this checkpoint (fast engine).
    pub resume: Option<std::sync::Arc<crate::explore::Checkpoint>>,
    /// The timely workers of an [`Engine::Timely`] run: this process's place in the cluster
    /// (or in-process workers).
    pub cluster: Option<crate::explore::Cluster>,
}

impl RunOptions {
    /// The engines' `target_max_depth` (1-based, the level that is counted but not
    /// expanded) for [`RunOptions::max_depth`] steps: states after `d` steps are at 1-based
    /// depth `d + 1`, and the level after them, `d + 2`, is the one left unexpanded.
    fn target_max_depth(&self) -> Option<usize> {
        self.max_depth.map(|d| d.saturating_add(2))
    }
}

/// Says where and why a run stopped early, in words for the report: the limit and how far
/// the run got.
fn describe_stop(reason: StopReason, opts: &RunOptions, unique: u64, depth: usize) -> String {
    match reason {
        StopReason::MaxStates => format!(
            "max states: {unique} distinct states against the limit of {}, while expanding depth {depth}",
            opts.max_states.unwrap_or_default()
        ),
        StopReason::MaxTransitions => format!(
            "max transitions: the limit of {} successors generated ({unique} distinct states), while expanding depth {depth}",
            opts.max_transitions.unwrap_or_default()
        ),
        StopReason::MaxDepth => format!(
            "max depth: every state within {} steps checked; those one step further counted, not checked",
            opts.max_depth.unwrap_or_default()
        ),
        StopReason::Memory => format!(
            "memory: the budget of {} MiB was reached while expanding depth {depth}",
            opts.max_memory.unwrap_or_default() >> 20
        ),
        StopReason::Interrupted => format!("interrupt: while expanding depth {depth}"),
        StopReason::AllDiscovered if opts.engine == Engine::Stateright => format!(
            "every selected property has a discovery, and stateright's BFS ends its search there \
             (at depth {depth}) whether or not states are left: counts are of what it visited"
        ),
        StopReason::AllDiscovered => format!(
            "--until-decided: every selected property was decided by the end of depth {depth}, \
             where the run ended; states further away were not visited"
        ),
    }
}

impl RunOptions {
    /// The fast engine on `threads` threads, no symmetry, no limits: an exhaustive run.
    pub fn fast(threads: usize) -> Self {
        RunOptions {
            engine: Engine::Fast,
            threads,
            symmetry: false,
            exact: false,
            max_memory: None,
            max_states: None,
            max_transitions: None,
            max_depth: None,
            until_decided: false,
            checkpoint: None,
            resume: None,
            cluster: None,
        }
    }
}

/// A path: each state with the action taken from it; the last state has `None`.
pub type Path = Vec<(State, Option<Op>)>;

/// What a run found, engine-independent.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// Engine that ran.
    pub engine: Engine,
    /// Distinct states.
    pub unique: u64,
    /// States generated, repeats included.
    pub total: u64,
    /// Maximum depth (stateright's convention: the initial state is depth 1).
    pub depth: usize,
    /// Distinct states per depth (fast engine only).
    pub per_depth: Vec<u64>,
    /// Wall time.
    pub elapsed: Duration,
    /// Why the run stopped before exhausting the bounds, if it did.
    pub stopped_early: Option<String>,
    /// Per property key: the discovery path, if any (shortest).
    pub discoveries: Vec<(&'static str, Option<Path>)>,
    /// Peak resident memory of the process, if known.
    pub peak_rss: Option<u64>,
    /// Visited-set bytes per distinct state (fast engine).
    pub visited_bytes_per_state: Option<f64>,
    /// Parent-log bytes per distinct state (fast engine).
    pub parent_log_bytes_per_state: Option<f64>,
    /// TLC's optimistic fingerprint-collision probability (fast engine; 0 in exact mode).
    pub collision_probability: Option<f64>,
    /// Which rules fired, per set of rules (fast engine only).
    pub rule_tallies: Option<Vec<crate::explore::CoverageTally>>,
    /// For a resumed run: the level it resumed from.
    pub resumed_from_level: Option<usize>,
    /// The first checkpoint that could not be written (the run went on without it).
    pub checkpoint_error: Option<String>,
    /// How a timely run was spread (per-process memory, bytes exchanged).
    pub cluster: Option<crate::explore::ClusterReport>,
}

impl PackedState for State {
    fn pack(&self, out: &mut Vec<u8>) {
        State::pack(self, out)
    }
    fn unpack(bytes: &[u8]) -> Option<Self> {
        State::unpack(bytes)
    }
    fn unpack_into(&mut self, bytes: &[u8]) -> bool {
        State::unpack_into(self, bytes)
    }
}

/// The symmetry canonicalizer the explorer takes: [`MemTx::representative`], the renamings of
/// [`MemTx::symmetry`] (agents, values within slots, interchangeable sources).
fn canonical(model: &MemTx, s: &State) -> State {
    model.representative(s)
}

/// Runs one check.
pub fn run(
    model: &MemTx,
    opts: &RunOptions,
    progress: Option<&(dyn Fn(&Progress) + Sync)>,
) -> Result<RunOutcome, String> {
    match opts.engine {
        Engine::Fast => run_fast(model, opts, progress),
        Engine::Stateright => Ok(run_stateright(model, opts)),
        Engine::Timely => run_timely(model, opts, progress),
    }
}

/// What the fast explorer needs to know about MemTX beyond `stateright::Model`. `memtx check`
/// and `memtx bench` both take it from [`memtx_hooks`], so that a benchmark measures what a
/// check runs.
pub struct MemtxHooks {
    /// The in-place successor function ([`MemTx::next_state_into`]).
    pub next_state_into: NextStateInto<MemTx>,
    /// The canonicalizer, when symmetry is asked for.
    pub symmetry: Option<Canonicalizer<MemTx>>,
    /// Which worker owns a state ([`memtx_model::packed::locality`]).
    pub locality: Locality,
    /// The rule-coverage probe ([`memtx_model::rules::take_fired`]).
    pub coverage: crate::explore::CoverageProbe,
    /// Operations that repeat the one before them ([`MemTx::repeats`]).
    pub repeats: crate::explore::Repeats<MemTx>,
}

/// The hooks for MemTX, with the canonicalizer if `symmetry` is asked for.
pub fn memtx_hooks(symmetry: bool) -> MemtxHooks {
    MemtxHooks {
        next_state_into: MemTx::next_state_into,
        symmetry: symmetry.then_some(canonical as Canonicalizer<MemTx>),
        locality: memtx_model::packed::locality,
        coverage: memtx_model::rules::take_fired,
        repeats: MemTx::repeats,
    }
}

/// The explorer options of a MemTX run (the fast engine's and the timely engine's).
fn explore_options<'a>(
    opts: &'a RunOptions,
    progress: Option<&'a (dyn Fn(&Progress) + Sync)>,
) -> ExploreOptions<'a, MemTx> {
    let hooks = memtx_hooks(opts.symmetry);
    let mut o: ExploreOptions<'_, MemTx> = ExploreOptions::new()
        .threads(opts.threads)
        .exact(opts.exact)
        .next_state_into(hooks.next_state_into)
        .locality(hooks.locality)
        .repeats(hooks.repeats)
        .coverage(hooks.coverage);
    if let Some(canonical) = hooks.symmetry {
        o = o.symmetry(canonical);
    }
    if let Some(t) = opts.target_max_depth() {
        o = o.target_max_depth(t);
    }
    o = o.interrupt(crate::interrupt::flag());
    o = o.finish_when_all_discovered(opts.until_decided);
    if let Some(n) = opts.max_states {
        o = o.max_states(n);
    }
    if let Some(n) = opts.max_transitions {
        o = o.max_transitions(n);
    }
    if let Some(m) = opts.max_memory {
        o = o.max_memory_bytes(m);
    }
    if let Some(p) = progress {
        o = o.progress(p, Duration::from_millis(200));
    }
    if let Some(plan) = &opts.checkpoint {
        o = o.checkpoint(plan);
    }
    if let Some(saved) = &opts.resume {
        o = o.resume_from(saved);
    }
    o
}

fn run_fast(
    model: &MemTx,
    opts: &RunOptions,
    progress: Option<&(dyn Fn(&Progress) + Sync)>,
) -> Result<RunOutcome, String> {
    let o = explore_options(opts, progress);
    let report = explore::explore(model, &o).map_err(|e| match e {
        explore::ExploreError::Checkpoint(what) => what,
        e => format!("[memtx internal bug] {e}"),
    })?;
    Ok(outcome(model, opts, Engine::Fast, &report))
}

/// A run on timely workers ([`Engine::Timely`]). On a process other than the one holding
/// worker 0, the outcome is empty (no states, no discoveries): that process only lends its
/// workers, the report is process 0's.
fn run_timely(
    model: &MemTx,
    opts: &RunOptions,
    progress: Option<&(dyn Fn(&Progress) + Sync)>,
) -> Result<RunOutcome, String> {
    let Some(cluster) = &opts.cluster else {
        return Err("[memtx internal bug] a timely run without a cluster".to_string());
    };
    let o = explore_options(opts, progress);
    let report = explore::explore_timely(model, &o, cluster).map_err(|e| match e {
        explore::ExploreError::Cluster(what) | explore::ExploreError::Checkpoint(what) => what,
        e => format!("[memtx internal bug] {e}"),
    })?;
    Ok(match report {
        Some(report) => outcome(model, opts, Engine::Timely, &report),
        None => RunOutcome {
            engine: Engine::Timely,
            unique: 0,
            total: 0,
            depth: 0,
            per_depth: Vec::new(),
            elapsed: Duration::ZERO,
            stopped_early: None,
            discoveries: model.selected.iter().map(|p| (p.key, None)).collect(),
            peak_rss: None,
            visited_bytes_per_state: None,
            parent_log_bytes_per_state: None,
            collision_probability: None,
            rule_tallies: None,
            resumed_from_level: None,
            checkpoint_error: None,
            cluster: None,
        },
    })
}

/// The outcome of an explorer run.
fn outcome(
    model: &MemTx,
    opts: &RunOptions,
    engine: Engine,
    report: &explore::ExploreReport<State, Op>,
) -> RunOutcome {
    let discoveries = model
        .selected
        .iter()
        .map(|p| (p.key, report.discovery(p.name).map(|d| d.path.clone())))
        .collect();
    RunOutcome {
        engine,
        unique: report.unique_states,
        total: report.total_states,
        depth: report.max_depth,
        per_depth: report.states_per_depth.clone(),
        elapsed: report.elapsed,
        stopped_early: report
            .stopped_early
            .map(|r| describe_stop(r, opts, report.unique_states, report.max_depth)),
        discoveries,
        peak_rss: report.memory.peak_rss_bytes,
        visited_bytes_per_state: Some(report.memory.visited_bytes_per_state),
        parent_log_bytes_per_state: Some(report.memory.parent_log_bytes_per_state),
        collision_probability: Some(report.collision_probability),
        rule_tallies: report.coverage.clone(),
        resumed_from_level: report.resumed_from_level,
        checkpoint_error: report.checkpoint_error.clone(),
        cluster: report.cluster.clone(),
    }
}

fn run_stateright(model: &MemTx, opts: &RunOptions) -> RunOutcome {
    let start = Instant::now();
    let mut builder = model.clone().checker().threads(opts.threads.max(1));
    if let Some(t) = opts.target_max_depth() {
        builder = builder.target_max_depth(t);
    }
    if let Some(n) = opts.max_states {
        builder = builder.target_state_count(n as usize);
    }
    let checker = builder.spawn_bfs();
    // stateright's checker cannot be asked to stop: on an interrupt its threads are left
    // running (the process exits soon after) and the counts so far are reported.
    let mut interrupted = false;
    while !checker.is_done() {
        if crate::interrupt::interrupted() {
            interrupted = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let discoveries: Vec<_> = model
        .selected
        .iter()
        .map(|p| (p.key, checker.discovery(p.name).map(|path| path.into_vec())))
        .collect();
    let unique = checker.unique_state_count() as u64;
    let depth = checker.max_depth();
    // stateright's BFS ends its search as soon as every property has a discovery, whatever
    // is left in its queue: such a run is never exhaustive (the fast engine goes on).
    let all_discovered = discoveries.iter().all(|(_, found)| found.is_some());
    let reason = if interrupted {
        Some(StopReason::Interrupted)
    } else if all_discovered {
        Some(StopReason::AllDiscovered)
    } else {
        match (opts.max_states, opts.target_max_depth()) {
            (Some(n), _) if unique >= n => Some(StopReason::MaxStates),
            (_, Some(t)) if depth >= t => Some(StopReason::MaxDepth),
            _ => None,
        }
    };
    let stopped_early = reason.map(|r| describe_stop(r, opts, unique, depth));
    RunOutcome {
        engine: Engine::Stateright,
        unique,
        total: checker.state_count() as u64,
        depth,
        per_depth: Vec::new(),
        elapsed: start.elapsed(),
        stopped_early,
        discoveries,
        peak_rss: crate::explore::read_proc_status_bytes("VmHWM"),
        visited_bytes_per_state: None,
        parent_log_bytes_per_state: None,
        collision_probability: None,
        rule_tallies: None,
        resumed_from_level: None,
        checkpoint_error: None,
        cluster: None,
    }
}
