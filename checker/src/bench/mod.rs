//! Benchmark: stateright's BFS against the fast explorer on the same model, in one process.
//!
//! [`bench_model`] runs, for every requested thread count, the fast engine
//! ([`crate::explore::explore`]) and then, optionally, stateright's
//! `model.checker().threads(t).spawn_bfs().join()`, and measures each run's
//! wall-clock time, distinct states per second and memory. [`bench_two_phase`] does it for
//! two-phase commit; [`BenchResult::to_markdown`] renders the table.
//!
//! # Memory in one process
//!
//! Before each run the process's peak resident set (`VmHWM`) is reset to the current
//! resident set by writing `5` to `/proc/self/clear_refs` (Linux), and `VmRSS` is read as
//! the baseline; after the run, `VmHWM − baseline` is the memory the run added at its peak.
//! This is accurate as long as freed memory went back to the kernel; the allocator may keep
//! some of a previous run's small allocations and reuse them, which makes a later run look
//! smaller. That is why all fast-engine runs (whose big tables and frontiers are `mmap`ed and
//! returned on free) come before the stateright runs (millions of small state allocations).
//! For the fast engine the table also reports the engine's own accounting, independent of
//! the allocator: bytes of visited set per distinct state (the table of keys, and in exact
//! mode the stored states) and bytes of parent log per distinct state (what paths are
//! rebuilt from, 12 bytes per state).
//!
//! [`two_phase_commit`] is the second benchmark model (and the explorer's own test model).

pub mod log;
pub mod simulation;
pub mod two_phase_commit;

use crate::bench::two_phase_commit::TwoPhaseSys;
use crate::explore::{
    explore, explore_timely, read_proc_status_bytes, reset_peak_rss, Canonicalizer, Cluster,
    ExploreError, ExploreOptions, Locality, NextStateInto, PackedState,
};
use stateright::{Checker, Model};
use std::fmt::{Debug, Write};
use std::hash::Hash;
use std::time::Instant;

/// Which engine produced a [`EngineRun`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Engine {
    /// `stateright`'s `spawn_bfs`.
    StaterightBfs,
    /// [`crate::explore::explore`].
    Fast,
    /// [`crate::explore::explore_timely`]: the fast engine's search over timely workers, in
    /// one process of a cluster ([`run_one_over`]).
    Timely,
}

impl Engine {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Engine::StaterightBfs => "stateright BFS",
            Engine::Fast => "memtx fast",
            Engine::Timely => "memtx timely",
        }
    }
}

/// Measurements of one engine run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EngineRun {
    /// The engine.
    pub engine: Engine,
    /// Threads used.
    pub threads: usize,
    /// Distinct states.
    pub unique_states: u64,
    /// States generated, repeats included.
    pub total_states: u64,
    /// Maximum depth (stateright's convention).
    pub max_depth: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Distinct states per second.
    pub states_per_second: f64,
    /// Peak resident memory the run added (`VmHWM` after minus `VmRSS` before), if the
    /// platform allows measuring it. Over processes ([`Engine::Timely`]): the sum of every
    /// process's peak resident set.
    pub peak_rss_delta_bytes: Option<u64>,
    /// `peak_rss_delta_bytes / unique_states`.
    pub rss_bytes_per_state: Option<f64>,
    /// Fast engine only: visited-set bytes per distinct state (own accounting).
    pub visited_bytes_per_state: Option<f64>,
    /// Fast engine only: parent-log bytes per distinct state (own accounting).
    pub parent_log_bytes_per_state: Option<f64>,
    /// Fast engine only: peak of the engine's own memory accounting.
    pub peak_estimate_bytes: Option<u64>,
    /// Fast engine only: fast states/s divided by stateright's states/s at the same thread
    /// count (when stateright ran with it).
    pub speedup: Option<f64>,
    /// When the run is the median of repeated runs ([`EngineRun::median`]): every run's
    /// seconds, in the order they ran.
    #[serde(default)]
    pub repeats: Vec<f64>,
    /// Over processes ([`Engine::Timely`]) only: bytes of successor records sent from one
    /// process to another, all processes.
    #[serde(default)]
    pub bytes_to_other_processes: Option<u64>,
}

impl EngineRun {
    /// The run with the median time among repeated runs of one engine and thread count
    /// (the lower of the two middle ones for an even number), with every run's time in
    /// [`EngineRun::repeats`]. `None` for no runs.
    pub fn median(runs: Vec<EngineRun>) -> Option<EngineRun> {
        let repeats: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
        let mut sorted = runs;
        sorted.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        let mut median = sorted.into_iter().nth((repeats.len().max(1) - 1) / 2)?;
        median.repeats = repeats;
        Some(median)
    }
}

/// A benchmark's runs; render with [`BenchResult::to_markdown`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BenchResult {
    /// What was benchmarked, e.g. "2PC, 8 RMs".
    pub label: String,
    /// Every run, fast engine first.
    pub runs: Vec<EngineRun>,
    /// Whether every run found the same number of distinct states.
    pub counts_agree: bool,
}

/// Options of [`bench_model`].
pub struct BenchOptions<M: Model> {
    /// Thread counts to run each engine with.
    pub threads: Vec<usize>,
    /// Also run stateright's BFS (it can be slow and memory-hungry for large models).
    pub stateright: bool,
    /// Run the fast engine in exact mode.
    pub exact: bool,
    /// Symmetry for the fast engine. Stateright's BFS ignores symmetry, so its counts then
    /// differ and `counts_agree` is false.
    pub symmetry: Option<Canonicalizer<M>>,
    /// In-place successor function for the fast engine (the one `memtx check` uses for
    /// MemTX), so that the benchmark measures what a check runs.
    pub next_state_into: Option<NextStateInto<M>>,
    /// Operations that repeat the one before them, for the fast engine (MemTX's, as
    /// `memtx check` uses it).
    pub repeats: Option<crate::explore::Repeats<M>>,
    /// Locality key for the fast engine (MemTX's, as `memtx check` uses it, or
    /// [`crate::bench::two_phase_commit::locality`]).
    pub locality: Option<Locality>,
    /// Rule-coverage probe for the fast engine (MemTX's, as `memtx check` collects it).
    pub coverage: Option<crate::explore::CoverageProbe>,
    /// Stop the fast engine after this many distinct states (`None`: exhaust the model).
    pub max_states: Option<u64>,
}

impl<M: Model> BenchOptions<M> {
    /// Both engines, these thread counts, fingerprint mode, no symmetry.
    pub fn new(threads: &[usize]) -> Self {
        BenchOptions {
            threads: threads.to_vec(),
            stateright: true,
            exact: false,
            symmetry: None,
            next_state_into: None,
            repeats: None,
            locality: None,
            coverage: None,
            max_states: None,
        }
    }
}

/// Resets the peak RSS and returns the baseline RSS (if measurable).
fn start_memory() -> Option<u64> {
    if reset_peak_rss() {
        read_proc_status_bytes("VmRSS")
    } else {
        None
    }
}

/// Peak RSS added since [`start_memory`].
fn end_memory(baseline: Option<u64>) -> Option<u64> {
    Some(read_proc_status_bytes("VmHWM")?.saturating_sub(baseline?))
}

fn per_second(states: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        states as f64 / seconds
    } else {
        0.0
    }
}

/// Benchmarks both engines on `model` in this process; see the [module documentation](self).
///
/// # Errors
///
/// Whatever [`explore`] returns (e.g. for a model with Eventually properties).
pub fn bench_model<M>(
    label: &str,
    model: &M,
    options: &BenchOptions<M>,
) -> Result<BenchResult, ExploreError>
where
    M: Model + Clone + Send + Sync + 'static,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState + 'static,
    M::Action: Clone + Debug + PartialEq,
{
    let mut runs = Vec::new();
    for &threads in &options.threads {
        runs.push(run_one(model, Engine::Fast, threads, options)?);
    }
    if options.stateright {
        for &threads in &options.threads {
            runs.push(run_one(model, Engine::StaterightBfs, threads, options)?);
        }
    }
    Ok(BenchResult::collect(label, runs))
}

/// Runs one engine once on `model` with `threads` threads and measures it. `memtx bench` runs
/// each of these in a process of its own (see [`crate::cmd::bench`]).
///
/// # Errors
///
/// Whatever [`explore`] returns (e.g. for a model with Eventually properties).
pub fn run_one<M>(
    model: &M,
    engine: Engine,
    threads: usize,
    options: &BenchOptions<M>,
) -> Result<EngineRun, ExploreError>
where
    M: Model + Clone + Send + Sync + 'static,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState + 'static,
    M::Action: Clone + Debug + PartialEq,
{
    let baseline = start_memory();
    if engine != Engine::StaterightBfs {
        let report = explore(model, &explore_options(options, threads))?;
        let rss = end_memory(baseline);
        return Ok(fast_run(engine, &report, rss));
    }
    let start = Instant::now();
    let checker = model
        .clone()
        .checker()
        .threads(threads.max(1))
        .spawn_bfs()
        .join();
    let seconds = start.elapsed().as_secs_f64();
    let rss = end_memory(baseline);
    let unique = checker.unique_state_count() as u64;
    Ok(EngineRun {
        engine,
        threads: threads.max(1),
        unique_states: unique,
        total_states: checker.state_count() as u64,
        max_depth: checker.max_depth(),
        seconds,
        states_per_second: per_second(unique, seconds),
        peak_rss_delta_bytes: rss,
        rss_bytes_per_state: rss.map(|b| b as f64 / unique.max(1) as f64),
        visited_bytes_per_state: None,
        parent_log_bytes_per_state: None,
        peak_estimate_bytes: None,
        speedup: None,
        repeats: Vec::new(),
        bytes_to_other_processes: None,
    })
}

/// Runs the fast engine's search once on `model` over timely workers, as the process of
/// `cluster` it is ([`crate::explore::explore_timely`]), and measures it. Every process of
/// the cluster calls this; the process holding worker 0 gets the run (`Some`), the others
/// `None`. `memtx bench --processes N` runs N processes that each call this.
///
/// # Errors
///
/// Whatever [`crate::explore::explore_timely`] returns (e.g. a lost process).
pub fn run_one_over<M>(
    model: &M,
    cluster: &Cluster,
    options: &BenchOptions<M>,
) -> Result<Option<EngineRun>, ExploreError>
where
    M: Model + Clone + Send + Sync + 'static,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState + 'static,
    M::Action: Clone + Debug + PartialEq + Send,
{
    let threads = match cluster {
        Cluster::InProcess(n) => *n,
        Cluster::Processes { threads, .. } => *threads,
    };
    let Some(report) = explore_timely(model, &explore_options(options, threads), cluster)? else {
        return Ok(None);
    };
    let mut run = fast_run(Engine::Timely, &report, None);
    if let Some(cluster) = &report.cluster {
        let peaks: Option<Vec<u64>> = cluster
            .per_process
            .iter()
            .map(|p| p.peak_rss_bytes)
            .collect();
        run.peak_rss_delta_bytes = peaks.map(|p| p.iter().sum());
        run.rss_bytes_per_state = run
            .peak_rss_delta_bytes
            .map(|b| b as f64 / report.unique_states.max(1) as f64);
        run.bytes_to_other_processes = Some(cluster.bytes_to_other_processes);
    }
    Ok(Some(run))
}

/// The fast engine's options from a benchmark's.
fn explore_options<'a, M: Model>(
    options: &BenchOptions<M>,
    threads: usize,
) -> ExploreOptions<'a, M> {
    let mut explore_options = ExploreOptions::new().threads(threads).exact(options.exact);
    explore_options.symmetry = options.symmetry;
    explore_options.next_state_into = options.next_state_into;
    explore_options.repeats = options.repeats;
    explore_options.locality = options.locality;
    explore_options.coverage = options.coverage;
    explore_options.max_states = options.max_states;
    explore_options
}

/// The measurements of a fast-engine (or timely) run from its report and the resident
/// memory it added.
fn fast_run<S, A>(
    engine: Engine,
    report: &crate::explore::ExploreReport<S, A>,
    rss: Option<u64>,
) -> EngineRun {
    let seconds = report.elapsed.as_secs_f64();
    EngineRun {
        engine,
        threads: report.threads,
        unique_states: report.unique_states,
        total_states: report.total_states,
        max_depth: report.max_depth,
        seconds,
        states_per_second: per_second(report.unique_states, seconds),
        peak_rss_delta_bytes: rss,
        rss_bytes_per_state: rss.map(|b| b as f64 / report.unique_states.max(1) as f64),
        visited_bytes_per_state: Some(report.memory.visited_bytes_per_state),
        parent_log_bytes_per_state: Some(report.memory.parent_log_bytes_per_state),
        peak_estimate_bytes: Some(report.memory.peak_estimate_bytes),
        speedup: None,
        repeats: Vec::new(),
        bytes_to_other_processes: None,
    }
}

impl BenchResult {
    /// The result of `runs` (fast engine first): speedups against stateright's BFS at the same
    /// thread count, and whether every run found the same number of distinct states.
    pub fn collect(label: &str, mut runs: Vec<EngineRun>) -> Self {
        let reference: Vec<(usize, f64)> = runs
            .iter()
            .filter(|r| r.engine == Engine::StaterightBfs)
            .map(|r| (r.threads, r.states_per_second))
            .collect();
        for run in runs.iter_mut().filter(|r| r.engine == Engine::Fast) {
            run.speedup = reference
                .iter()
                .find(|(t, _)| *t == run.threads)
                .filter(|(_, rate)| *rate > 0.0)
                .map(|(_, rate)| run.states_per_second / rate);
        }
        let counts_agree = runs
            .windows(2)
            .all(|w| w[0].unique_states == w[1].unique_states);
        BenchResult {
            label: label.to_string(),
            runs,
            counts_agree,
        }
    }
}

/// Benchmarks both engines on two-phase commit with `rms` resource managers.
///
/// # Errors
///
/// A message if `rms` exceeds [`TwoPhaseSys::MAX_RMS`].
pub fn bench_two_phase(rms: usize, threads: &[usize]) -> Result<BenchResult, String> {
    let model = TwoPhaseSys::new(rms)?;
    bench_model(
        &format!("2PC, {rms} RMs"),
        &model,
        &two_phase_options(threads),
    )
    .map_err(|e| e.to_string())
}

/// The options two-phase commit is benchmarked with: [`BenchOptions::new`] and its locality
/// key ([`crate::bench::two_phase_commit::locality`]), as MemTX's benchmark uses MemTX's.
pub fn two_phase_options(threads: &[usize]) -> BenchOptions<TwoPhaseSys> {
    let mut options = BenchOptions::new(threads);
    options.locality = Some(crate::bench::two_phase_commit::locality);
    options
}

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

fn opt<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "–".to_string(), show)
}

impl BenchResult {
    /// Renders the runs as a Markdown table (with a heading line).
    pub fn to_markdown(&self) -> String {
        let mut out = format!("### {}\n\n", self.label);
        out.push_str(
            "| engine | threads | distinct states | total states | max depth | seconds | \
             distinct states/s | peak RSS added (MiB) | RSS bytes/state | \
             visited-set bytes/state | parent-log bytes/state | speedup vs stateright | \
             seconds of every run |\n",
        );
        out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for r in &self.runs {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.3} | {:.0} | {} | {} | {} | {} | {} | {} |",
                r.engine.name(),
                r.threads,
                r.unique_states,
                r.total_states,
                r.max_depth,
                r.seconds,
                r.states_per_second,
                opt(r.peak_rss_delta_bytes, mib),
                opt(r.rss_bytes_per_state, |b| format!("{b:.1}")),
                opt(r.visited_bytes_per_state, |b| format!("{b:.1}")),
                opt(r.parent_log_bytes_per_state, |b| format!("{b:.1}")),
                opt(r.speedup, |s| format!("{s:.1}×")),
                if r.repeats.len() > 1 {
                    let all: Vec<String> = r.repeats.iter().map(|s| format!("{s:.2}")).collect();
                    all.join(", ")
                } else {
                    "–".to_string()
                },
            );
        }
        if !self.counts_agree {
            out.push_str("\n**Warning: the runs disagree on the number of distinct states.**\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seconds: f64) -> EngineRun {
        EngineRun {
            engine: Engine::Fast,
            threads: 1,
            unique_states: 10,
            total_states: 20,
            max_depth: 3,
            seconds,
            states_per_second: 10.0 / seconds,
            peak_rss_delta_bytes: None,
            rss_bytes_per_state: None,
            visited_bytes_per_state: None,
            parent_log_bytes_per_state: None,
            peak_estimate_bytes: None,
            speedup: None,
            repeats: Vec::new(),
            bytes_to_other_processes: None,
        }
    }

    #[test]
    fn the_median_run_keeps_every_time_in_running_order() {
        let median = EngineRun::median(vec![run(3.0), run(1.0), run(2.0)]).expect("runs");
        assert_eq!(median.seconds, 2.0);
        assert_eq!(median.states_per_second, 5.0);
        assert_eq!(median.repeats, vec![3.0, 1.0, 2.0]);
        // Even count: the lower middle one.
        let median = EngineRun::median(vec![run(4.0), run(1.0), run(3.0), run(2.0)]);
        assert_eq!(median.map(|m| m.seconds), Some(2.0));
        assert_eq!(EngineRun::median(Vec::new()), None);
    }

    #[test]
    fn a_run_with_a_state_bound_stops_short_of_the_whole_model() {
        let model = TwoPhaseSys::new(3).expect("3 RMs");
        let mut options = two_phase_options(&[1]);
        let whole = run_one(&model, Engine::Fast, 1, &options).expect("a run");
        assert_eq!(whole.unique_states, 288);
        options.max_states = Some(100);
        let stopped = run_one(&model, Engine::Fast, 1, &options).expect("a run");
        assert!(
            (100..288).contains(&stopped.unique_states),
            "{}",
            stopped.unique_states
        );
    }
}
