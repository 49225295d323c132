//! The command line: `memtx check | replay | list | bench | reference`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// memtx: bounded exhaustive model checking of the MemTX belief-commit protocol.
#[derive(Parser, Debug)]
#[command(
    name = "memtx",
    version,
    about,
    long_about = None,
    after_help = "Exit codes: 0 pass (complete, every invariant holds, every example reached); \
1 fail (a violation, or an example never reached in a complete run); 2 bad input; \
3 incomplete (stopped early by a limit without a violation: nothing is proved beyond the states \
visited); 130 interrupted (SIGINT or SIGTERM: the partial summary is printed and the reports are \
written marked incomplete; a second interrupt quits at once). The protocol and every property \
in full: docs/protocol.md."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a bounded exhaustive check and report every property's verdict.
    Check(CheckArgs),
    /// Finish a check saved with `memtx check --checkpoint DIR` (after a kill, a crash or on
    /// another machine), with the same result as an uninterrupted run.
    Resume(ResumeArgs),
    /// Re-execute a saved trace against the model and check its recorded expectation.
    Replay(ReplayArgs),
    /// List properties, variants and presets.
    List(ListArgs),
    /// Benchmark the fast explorer against stateright's BFS in one run.
    Bench(BenchArgs),
    /// Regenerate the reference reports in reports/ (quick, paper, the ablation matrix, manifest).
    Reference(ReferenceArgs),
    /// Check every preset of the suite and the union of their rule coverage.
    Suite(SuiteArgs),
    /// Swarm random walks over a configuration too large to exhaust: every visited state
    /// judged by every property; a violation shortened and saved as a trace. Never a proof.
    Simulate(SimulateArgs),
    /// Serve stateright's web Explorer over the model (127.0.0.1 only unless --bind).
    Explore(ExploreArgs),
    /// Check an implementation's event log (docs/event-log.md) against the model: each run
    /// conforms, or its first divergence is named in the implementation's words.
    ValidateLog(ValidateLogArgs),
    /// Generate a conformance suite from the model: the shortest witness of every rule, the
    /// scripted traps and controls, the harms of I15-I18, each as a scenario and an event log.
    Conformance(ConformanceArgs),
}

/// `memtx conformance`.
#[derive(Args, Debug, Clone)]
pub struct ConformanceArgs {
    /// Directory to write the suite into (index.json, rules/, families/, harms/).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Presets to search for witnesses, in order (a tie goes to the first); default: the suite's.
    #[arg(long = "preset", value_name = "NAME")]
    pub presets: Vec<String>,
    /// The most states kept per preset's search.
    #[arg(long, value_name = "STATES", default_value_t = 400_000)]
    pub budget: usize,
    /// Where the scripted scenarios and saved traces are (scenarios/, and one folder per
    /// preset); missing: the suite has witnesses only, and says so.
    #[arg(long, value_name = "DIR", default_value = "regressions")]
    pub regressions: PathBuf,
}

/// `memtx validate-log`.
#[derive(Args, Debug, Clone)]
pub struct ValidateLogArgs {
    /// The event log: JSON Lines, one or more runs, each opened by a header line.
    pub log: PathBuf,
    /// The protocol the implementation claims to follow (a variant of `memtx list`).
    #[arg(long, default_value = "memtx")]
    pub variant: String,
    /// Where to write each diverging run's events before its divergence, as a memtx scenario
    /// that replays with `memtx replay`.
    #[arg(long, value_name = "DIR", default_value = "traces/logs")]
    pub scenarios: PathBuf,
    /// Operations the log may leave out (comma-separated: tick, request-revocation, read, ...;
    /// any that creates no record). Before an event that does not match, the shortest sequence
    /// of such steps that makes it match is searched for, and said.
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    pub missing: Vec<String>,
    /// With --missing: the most left-out steps searched for before one event.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "missing")]
    pub max_missing: usize,
    /// Hold every run to this preset's configuration (each event must be one it explores)
    /// instead of inferring one from the run.
    #[arg(long)]
    pub preset: Option<String>,
    /// Hold every run to this domain (and bounds) file, as for `memtx check` (on --preset,
    /// default full).
    #[arg(long, value_name = "FILE")]
    pub domain: Option<PathBuf>,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    pub json: bool,
}

/// `memtx explore`.
#[derive(Args, Debug, Clone)]
pub struct ExploreArgs {
    /// Preset whose configuration the Explorer walks.
    #[arg(long, default_value = "quick")]
    pub preset: String,
    /// Protocol variant.
    #[arg(long, default_value = "memtx")]
    pub variant: String,
    /// Port to listen on (0: one the system chooses, named in the printed URL).
    #[arg(long, default_value_t = 3000)]
    pub port: u16,
    /// Loopback address to listen on (127.0.0.1 or ::1); any other address is refused
    /// unless given with --bind.
    #[arg(long, value_name = "IP", conflicts_with = "bind")]
    pub address: Option<String>,
    /// Listen on this address instead of 127.0.0.1 (a warning is printed for any address
    /// that is not loopback: anyone who can reach it can drive the checker).
    #[arg(long, value_name = "IP")]
    pub bind: Option<String>,
    /// Print the URL that opens the Explorer at this trace's last state (refused steps left
    /// out and named) and the verdicts there.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

/// `memtx simulate`.
#[derive(Args, Debug, Clone)]
pub struct SimulateArgs {
    /// Preset (see `memtx list`); `full` opens the whole protocol at once.
    #[arg(long, default_value = "full")]
    pub preset: String,
    /// Bound overrides.
    #[command(flatten)]
    pub bounds: BoundArgs,
    /// Read the enumerated domain (and optionally the bounds) from this JSON file, as for
    /// `memtx check`.
    #[arg(long, value_name = "FILE")]
    pub domain: Option<PathBuf>,
    /// Refuse a --domain file larger than this (default 64M).
    #[arg(long, value_name = "SIZE")]
    pub max_input_size: Option<String>,
    /// Protocol variant.
    #[arg(long, default_value = "memtx")]
    pub variant: String,
    /// Judge only this property (repeatable). Default: all, as `memtx check`.
    #[arg(long = "property", value_name = "KEY")]
    pub properties: Vec<String>,
    /// Run this many walks (default 100000 when --time is not given either).
    #[arg(long, value_name = "N")]
    pub walks: Option<u64>,
    /// Start no new batch of walks after this long, e.g. 60s, 10m (with --walks: whichever
    /// comes first). The report names the walks run; `--walks N --seed S` runs them again.
    #[arg(long, value_name = "DURATION")]
    pub time: Option<String>,
    /// The deepest a walk may go; each walk draws its own bound between a quarter of this
    /// and this.
    #[arg(long, value_name = "STEPS", default_value_t = crate::simulate::DEFAULT_MAX_WALK_DEPTH)]
    pub max_walk_depth: usize,
    /// The seed: with it, the same walks give the same result on any thread count.
    #[arg(long, default_value_t = crate::simulate::DEFAULT_SEED)]
    pub seed: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// States the breadth-first search for a shorter counterexample may explore.
    #[arg(long, value_name = "STATES", default_value_t = crate::simulate::DEFAULT_SEARCH_BUDGET)]
    pub search_budget: u64,
    /// Stop the search for a shorter counterexample at this much memory (e.g. 2G), as
    /// `check --max-memory` stops a check; the walks themselves use a few megabytes.
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// Directory for the counterexample trace (`<configuration>/<variant>-<key>-simulated`).
    #[arg(long, value_name = "DIR", default_value = "traces")]
    pub traces: PathBuf,
    /// Write simulation.json and an index.html (walk lengths, coverage and distinct states as
    /// the walks went on, rule coverage, the counterexample step by step) into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Print one JSON object on stdout instead of the text summary.
    #[arg(long)]
    pub json: bool,
}

/// `memtx suite`.
#[derive(Args, Debug, Clone)]
pub struct SuiteArgs {
    /// Only the presets `cargo test` runs (the same union coverage, under 2 minutes).
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object on stdout instead of the text summary.
    #[arg(long)]
    pub json: bool,
    /// Write each preset's report, suite.md and suite.json into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Worker threads per check.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Directory for counterexample traces.
    #[arg(long, value_name = "DIR", default_value = "traces")]
    pub traces: PathBuf,
    /// After the presets, simulate the whole protocol (`full`) for at most this long per run
    /// (e.g. 2m): under `memtx`, where no walk may break an invariant, and under every variant
    /// of §10 once per property it must break, where a walk must break it.
    #[arg(long, value_name = "DURATION")]
    pub simulate: Option<String>,
}

/// Which explorer runs a check.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineArg {
    /// This project's sharded, packed-state BFS (default).
    Fast,
    /// stateright's BfsChecker (reference engine).
    Stateright,
}

/// Bounds that override the preset's (docs/protocol.md §1).
#[derive(Args, Debug, Clone, Default)]
pub struct BoundArgs {
    /// Agents (1..=4).
    #[arg(long)]
    pub agents: Option<u8>,
    /// Record slots (1..=16).
    #[arg(long)]
    pub records: Option<u8>,
    /// Clock bound: ticks 0..=T (0..=16).
    #[arg(long)]
    pub ticks: Option<u8>,
    /// Entity/attribute keys (1..=8).
    #[arg(long)]
    pub slots: Option<u8>,
    /// Values per slot (1..=8).
    #[arg(long)]
    pub values: Option<u8>,
    /// Sources (1..=8); authorities follow mid, mid, high, low, repeating.
    #[arg(long)]
    pub sources: Option<u8>,
}

/// `memtx check`.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// Preset: quick, paper (default), large or full (see `memtx list`).
    #[arg(long, default_value = "paper")]
    pub preset: String,
    /// Bound overrides.
    #[command(flatten)]
    pub bounds: BoundArgs,
    /// Read the enumerated domain (and optionally the bounds) from this JSON file, in the form
    /// reports and `memtx list --json` print them; bound flags still override.
    #[arg(long, value_name = "FILE")]
    pub domain: Option<PathBuf>,
    /// Refuse a --domain file larger than this (e.g. 64M, 1.5G; default 64M).
    #[arg(long, value_name = "SIZE")]
    pub max_input_size: Option<String>,
    /// Protocol variant (see `memtx list`): memtx (the protocol) or an ablation / seeded defect.
    #[arg(long, default_value = "memtx")]
    pub variant: String,
    /// Check only this property (key such as I2 or E5; repeatable). Default: all.
    #[arg(long = "property", value_name = "KEY")]
    pub properties: Vec<String>,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Explorer.
    #[arg(long, value_enum, default_value = "fast")]
    pub engine: EngineArg,
    /// Symmetry reduction: agents are interchangeable (fast engine). On by default for the
    /// `large` preset.
    #[arg(long, overrides_with = "no_symmetry")]
    pub symmetry: bool,
    /// No symmetry reduction, even where the preset turns it on (`large`).
    #[arg(long, overrides_with = "symmetry")]
    pub no_symmetry: bool,
    /// Exact mode: store whole packed states, no fingerprint-collision risk (fast engine).
    #[arg(long)]
    pub exact: bool,
    /// Memory budget, e.g. 8G, 1.5G or 512M; the run stops gracefully when reached (fast engine).
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// Stop once this many distinct states were found (within about one batch, mid-level);
    /// the run is then INCOMPLETE (exit 3).
    #[arg(long)]
    pub max_states: Option<u64>,
    /// Stop once this many transitions (successors generated, the report's total states) were
    /// taken: a bound on total work however few of them are new. The run is then INCOMPLETE
    /// (exit 3). Fast engine only.
    #[arg(long, value_name = "N")]
    pub max_transitions: Option<u64>,
    /// Check every state reachable in at most this many steps (0: the initial state only);
    /// states one step further are counted but not checked. The run is then INCOMPLETE.
    #[arg(long, value_name = "STEPS")]
    pub max_depth: Option<usize>,
    /// End the run with the level by whose end every selected property is decided (each
    /// invariant violated, each example found), as TLC does by default: a counterexample
    /// hunt (`--variant V --property K`) ends at its shortest counterexample's depth. A
    /// property that holds is decided only by the whole search. A run that ends early is
    /// INCOMPLETE unless a violation makes it FAIL or every property it checked is an
    /// example it found (then PASS).
    #[arg(long)]
    pub until_decided: bool,
    /// Write NAME.json and NAME.md reports into this directory (trace links in them are
    /// relative to it).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Report file name inside --report, a plain name without '/' or '..' (default:
    /// PRESET-VARIANT).
    #[arg(long)]
    pub name: Option<String>,
    /// Directory for counterexample traces.
    #[arg(long, value_name = "DIR", default_value = "traces")]
    pub traces: PathBuf,
    /// Also save a trace for every example (`sometimes` property) found.
    #[arg(long)]
    pub examples: bool,
    /// Also write each trace in the Informal Trace Format (.itf.json).
    #[arg(long)]
    pub itf: bool,
    /// Print one JSON object on stdout instead of the text summary.
    #[arg(long)]
    pub json: bool,
    /// Print the whole rule-coverage table (every rule, how often it fired, how early).
    #[arg(long)]
    pub coverage: bool,
    /// Save the run at level boundaries into this directory (one file replaced atomically;
    /// over processes one part per worker), so that `memtx resume DIR` can finish it after a
    /// kill. Fast engine, not with --exact.
    #[arg(long, value_name = "DIR")]
    pub checkpoint: Option<PathBuf>,
    /// With --checkpoint: the least time between two checkpoints, e.g. 30s, 5m (default),
    /// 1h; 0s saves at every level boundary. The first comes at the first level boundary
    /// after 1 s (or the interval, if shorter).
    #[arg(long, value_name = "DURATION")]
    pub checkpoint_every: Option<String>,
    /// Where the workers run: --local N, or --processes N --process I --hostfile FILE.
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Where the timely workers of a run over processes are (`memtx check` and `memtx resume`);
/// without any of these the run is on threads of this process.
#[derive(Args, Debug, Clone, Default)]
pub struct ClusterArgs {
    /// Run over N processes on this machine (loopback), each with --threads timely
    /// workers; the counts, verdicts and traces are those of one thread.
    #[arg(long, value_name = "N", conflicts_with_all = ["processes", "process", "hostfile"])]
    pub local: Option<usize>,
    /// Run as one process of a cluster of N processes (timely dataflow over TCP); every
    /// process gets the same command but its --process index; needs --hostfile.
    #[arg(long, value_name = "N", requires_all = ["process", "hostfile"])]
    pub processes: Option<usize>,
    /// This process's index in the cluster, 0 to N-1 (process 0 prints the report).
    #[arg(long, value_name = "I", requires = "processes")]
    pub process: Option<usize>,
    /// The cluster's addresses: one host:port per line, in process order.
    #[arg(long, value_name = "FILE", requires = "processes")]
    pub hostfile: Option<PathBuf>,
    /// With --processes or --local: how long to wait for every process to connect, e.g.
    /// 30s, 5m (default 60s); then the run ends naming the processes not reached.
    #[arg(long, value_name = "DURATION")]
    pub connect_timeout: Option<String>,
    /// With --processes or --local: end the run when a worker waiting for the others has
    /// heard nothing from one of them for this long, e.g. 5m (default 120s): that process
    /// hangs or its machine is unreachable.
    #[arg(long, value_name = "DURATION")]
    pub peer_timeout: Option<String>,
}

/// `memtx resume`.
#[derive(Args, Debug, Clone)]
pub struct ResumeArgs {
    /// The checkpoint directory given to `memtx check --checkpoint`. The configuration,
    /// properties and limits are read from it; checkpoints go on being written into it.
    pub dir: PathBuf,
    /// Worker threads (default: the saved run's); any number gives the same result.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write NAME.json and NAME.md reports into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Report file name inside --report (default: PRESET-VARIANT).
    #[arg(long)]
    pub name: Option<String>,
    /// Directory for counterexample traces.
    #[arg(long, value_name = "DIR", default_value = "traces")]
    pub traces: PathBuf,
    /// Print one JSON object on stdout instead of the text summary.
    #[arg(long)]
    pub json: bool,
    /// Print the whole rule-coverage table.
    #[arg(long)]
    pub coverage: bool,
    /// Where the workers run: --local N, or --processes N --process I --hostfile FILE (any
    /// placement resumes any checkpoint, with the same result).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `memtx replay`.
#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The trace file: a .trace.json written by `memtx check`, or a scenario written by hand
    /// (docs/traces.md).
    pub trace: PathBuf,
    /// Replay the steps under another variant (e.g. the fixed protocol `memtx`).
    #[arg(long)]
    pub variant: Option<String>,
    /// Insist that the trace was made with this preset's configuration (bounds and domain);
    /// a trace from another configuration is refused (exit 2) instead of replayed.
    #[arg(long)]
    pub preset: Option<String>,
    /// Print one JSON object instead of the step-by-step text.
    #[arg(long)]
    pub json: bool,
    /// Write the completed trace (every state filled in, labels made again) to this file,
    /// atomically.
    #[arg(long, value_name = "OUT")]
    pub write_states: Option<PathBuf>,
    /// Also draw the trace as a self-contained HTML page (each step's action, changes,
    /// failing invariants and the records' DAG) into this file.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    /// Refuse a trace file larger than this (e.g. 64M, 1.5G; default 64M).
    #[arg(long, value_name = "SIZE")]
    pub max_input_size: Option<String>,
}

/// `memtx list`.
#[derive(Args, Debug, Clone)]
pub struct ListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `memtx bench`.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// MemTX preset to benchmark (both engines, same run); default `quick`, or `full` with
    /// --simulate.
    #[arg(long)]
    pub preset: Option<String>,
    /// Also benchmark two-phase commit with this many resource managers (repeatable).
    #[arg(long = "two-phase", value_name = "RMS")]
    pub two_phase: Vec<usize>,
    /// Thread counts for the fast engine.
    #[arg(long = "threads", default_values_t = vec![1, 2])]
    pub threads: Vec<usize>,
    /// Run only the fast engine (stateright's BFS takes ~13 minutes on 2PC with 10 RMs).
    #[arg(long)]
    pub skip_stateright: bool,
    /// Measure every engine and thread count this many times, interleaved, and report the
    /// run with the median time (every run's time is listed beside it).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Write the Markdown result to this file as well.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also measure the MemTX preset without counting rule firings, interleaved with the runs
    /// that count them, and print what rule coverage costs (target: at most 5 %).
    #[arg(long)]
    pub coverage_baseline: bool,
    /// A memtx binary built from an earlier commit (`scripts/build-baseline.sh` builds the last
    /// commit before revision 3): its runs of the same preset, both engines, interleave with
    /// this binary's, and the report prints the time per distinct state against it (target: at
    /// most 15 % slower), the same with this binary's run stopped at the baseline's number of
    /// distinct states (a third fast run per round: what a state costs on the same amount of
    /// work), and the fast engine's lead over stateright's BFS under each.
    #[arg(long, value_name = "PATH")]
    pub baseline_binary: Option<PathBuf>,
    /// Instead of the engines: the MemTX preset (and each --two-phase model) on N local
    /// processes × 1 thread (timely over loopback) against 1 process × N threads (the fast
    /// engine), interleaved `--repeat` times, each run in processes of its own; prints one
    /// table per model with the speed ratio (target ≥ 0.8 on loopback) and the bytes
    /// exchanged per state.
    #[arg(long, value_name = "N")]
    pub processes: Option<usize>,
    /// Internal: with --run-one and --processes N, this process's index in the cluster (process
    /// 0 prints the measurements).
    #[arg(long, value_name = "I", hide = true, requires = "processes")]
    pub process: Option<usize>,
    /// Internal: with --run-one and --processes N, the cluster's addresses (one host:port per
    /// line).
    #[arg(long, value_name = "FILE", hide = true, requires = "processes")]
    pub hostfile: Option<PathBuf>,
    /// Instead of the exhaustive engines: memtx's swarm simulation against stateright's
    /// simulation checker on the preset, each walking this long per thread count (states
    /// visited per second, target ≥ 5×), then the time to the first violation of each variant
    /// of §10 by each, at most this long per seed (median of --seeds).
    #[arg(long, value_name = "DURATION")]
    pub simulate: Option<String>,
    /// Instead of the engines: `memtx validate-log` on a generated log of this many events
    /// (random walks over the preset, default `full`), against the model's own stepping of the
    /// same operations (target: 100,000 events in under a minute).
    #[arg(long, value_name = "EVENTS", conflicts_with = "simulate")]
    pub validate_log: Option<usize>,
    /// With --simulate: seeds per variant's hunt (1 to N).
    #[arg(long, default_value_t = 3, requires = "simulate")]
    pub seeds: u64,
    /// Internal: with --run-one, do not count rule firings.
    #[arg(long, hide = true)]
    pub no_rule_coverage: bool,
    /// Internal: with --run-one, stop the fast engine after this many distinct states (the
    /// `--baseline-binary` report's run of this model stopped at the baseline's size).
    #[arg(long, value_name = "N", hide = true, requires = "run_one")]
    pub max_states: Option<u64>,
    /// Internal: run one engine once (with the first --threads and, if given, the one
    /// --two-phase model) and print its measurements as JSON. `memtx bench` runs every
    /// measurement this way, in a process of its own. With --processes N --process I
    /// --hostfile FILE: the fast engine over timely, as process I of N.
    #[arg(long, value_enum, hide = true)]
    pub run_one: Option<EngineArg>,
}

impl BenchArgs {
    /// The preset benchmarked: `--preset`, or `quick` (`full` with --simulate or
    /// --validate-log).
    pub fn preset(&self) -> &str {
        match &self.preset {
            Some(name) => name,
            None if self.simulate.is_some() || self.validate_log.is_some() => "full",
            None => "quick",
        }
    }
}

/// `memtx reference`.
#[derive(Args, Debug, Clone)]
pub struct ReferenceArgs {
    /// Output directory.
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Directory for the counterexample traces (the regression suite).
    #[arg(long, default_value = "regressions")]
    pub traces: PathBuf,
    /// Also run the whole matrix on the paper preset (a few minutes).
    #[arg(long)]
    pub paper: bool,
}
