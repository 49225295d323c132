//! `memtx check`: one bounded exhaustive check, its verdicts, traces and summary.
//!
//! Flow: command line → [`crate::setup`] (configuration, properties) → [`crate::engine::run`]
//! (either engine) → a verdict per property → a trace file per violation (and per example with
//! `--examples`) → the summary (text or `--json`) and, with `--report`, `<name>.json`/`.md`.

use crate::cli::{CheckArgs, EngineArg};
use crate::engine::{run, Engine, RunOptions, RunOutcome};
use crate::error::{ErrorKind, UserError};
use crate::progress::ProgressSink;
use crate::setup;
use crate::trace::{itf_path_for, replay_command, trace_path, Trace};
use memtx_model::properties::PropertyDef;
use memtx_model::{Config, MemTx};
use serde::Serialize;
use std::path::PathBuf;

/// A property's verdict after a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// An invariant with no violation in the explored states.
    Holds,
    /// An invariant with a counterexample.
    Violated,
    /// An example that was reached.
    ExampleFound,
    /// An example never reached: the check fails (non-vacuity, PROTOCOL.md §9).
    ExampleNotFound,
}

impl Verdict {
    /// Does this verdict fail the run?
    pub fn fails(self) -> bool {
        matches!(self, Verdict::Violated | Verdict::ExampleNotFound)
    }
}

/// One property's line of the result.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyResult {
    /// Key (I1 … I9, E1 … E9).
    pub key: &'static str,
    /// The property as a sentence.
    pub name: &'static str,
    /// `always` or `sometimes`.
    pub kind: &'static str,
    /// Verdict.
    pub verdict: Verdict,
    /// Steps of the shortest discovery, if any.
    pub length: Option<usize>,
    /// The saved trace, if any.
    pub trace: Option<PathBuf>,
    /// The exact command that replays it.
    pub replay: Option<String>,
}

/// The whole result of a check (what `--json` prints and reports hold).
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    /// `memtx <version>`.
    pub tool: String,
    /// The command line.
    pub command: String,
    /// Engine.
    pub engine: Engine,
    /// Threads.
    pub threads: usize,
    /// Symmetry reduction on.
    pub symmetry: bool,
    /// Exact (collision-free) mode on.
    pub exact: bool,
    /// The full configuration (bounds, domains, variant).
    pub config: Config,
    /// Distinct states.
    pub unique_states: u64,
    /// States generated, repeats included.
    pub total_states: u64,
    /// Maximum depth.
    pub max_depth: usize,
    /// Distinct states per depth (fast engine).
    pub states_per_depth: Vec<u64>,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Generated states per second.
    pub states_per_second: f64,
    /// "exhaustive within these bounds" or "stopped early: …".
    pub coverage: String,
    /// Peak resident memory in bytes, if known.
    pub peak_memory_bytes: Option<u64>,
    /// Visited-set bytes per state (fast engine).
    pub visited_bytes_per_state: Option<f64>,
    /// TLC's optimistic fingerprint-collision probability n·(g−n)/2^64 (fast engine).
    pub collision_probability: Option<f64>,
    /// Per-property verdicts.
    pub properties: Vec<PropertyResult>,
    /// True when every invariant holds and every example was found.
    pub passed: bool,
}

fn options(args: &CheckArgs) -> Result<RunOptions, UserError> {
    let engine = match args.engine {
        EngineArg::Fast => Engine::Fast,
        EngineArg::Stateright => Engine::Stateright,
    };
    if engine == Engine::Stateright && (args.symmetry || args.exact || args.max_memory.is_some()) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--symmetry, --exact and --max-memory need the fast engine: drop them or use --engine fast",
        ));
    }
    if args.threads == 0 || args.threads > 256 {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!("--threads {} is out of range: use 1 to 256", args.threads),
        ));
    }
    let max_memory = match &args.max_memory {
        Some(s) => Some(setup::memory(s).map_err(|m| UserError::new(ErrorKind::Usage, m))?),
        None => None,
    };
    Ok(RunOptions {
        engine,
        threads: args.threads,
        symmetry: args.symmetry,
        exact: args.exact,
        max_memory,
        max_states: args.max_states,
        max_depth: args.max_depth,
    })
}

/// Runs `memtx check`; returns the result (the caller prints it and picks the exit code).
pub fn check(args: &CheckArgs, command: &str) -> Result<CheckResult, UserError> {
    let variant =
        setup::variant(&args.variant).map_err(|m| UserError::new(ErrorKind::UnknownVariant, m))?;
    let cfg = setup::config(&args.preset, &args.bounds, variant)
        .map_err(|m| UserError::new(ErrorKind::InvalidConfig, m))?;
    let selected = setup::properties(&args.properties)
        .map_err(|m| UserError::new(ErrorKind::UnknownProperty, m))?;
    let opts = options(args)?;
    let model = MemTx::with_properties(cfg.clone(), selected.clone());
    let sink = ProgressSink::new();
    let update = |p: &crate::explore::Progress| sink.update(p);
    let outcome =
        run(&model, &opts, Some(&update)).map_err(|m| UserError::new(ErrorKind::Usage, m))?;
    sink.finish();
    let mut properties = Vec::new();
    for def in &selected {
        properties.push(judge(&cfg, def, &outcome, args, command)?);
    }
    let secs = outcome.elapsed.as_secs_f64();
    let passed = !properties.iter().any(|p| p.verdict.fails());
    Ok(CheckResult {
        tool: crate::trace::tool_id(),
        command: command.to_string(),
        engine: outcome.engine,
        threads: opts.threads,
        symmetry: opts.symmetry,
        exact: opts.exact,
        config: cfg,
        unique_states: outcome.unique,
        total_states: outcome.total,
        max_depth: outcome.depth,
        states_per_depth: outcome.per_depth.clone(),
        seconds: secs,
        states_per_second: outcome.total as f64 / secs.max(1e-9),
        coverage: outcome
            .stopped_early
            .clone()
            .unwrap_or_else(|| "exhaustive within these bounds".into()),
        peak_memory_bytes: outcome.peak_rss,
        visited_bytes_per_state: outcome.visited_bytes_per_state,
        collision_probability: outcome.collision_probability,
        properties,
        passed,
    })
}

/// The verdict of one property, saving its trace when there is one to save.
fn judge(
    cfg: &Config,
    def: &'static PropertyDef,
    outcome: &RunOutcome,
    args: &CheckArgs,
    command: &str,
) -> Result<PropertyResult, UserError> {
    let path = outcome
        .discoveries
        .iter()
        .find(|(k, _)| *k == def.key)
        .and_then(|(_, p)| p.as_ref());
    let verdict = match (def.is_invariant(), path.is_some()) {
        (true, false) => Verdict::Holds,
        (true, true) => Verdict::Violated,
        (false, true) => Verdict::ExampleFound,
        (false, false) => Verdict::ExampleNotFound,
    };
    let mut result = PropertyResult {
        key: def.key,
        name: def.name,
        kind: if def.is_invariant() {
            "always"
        } else {
            "sometimes"
        },
        verdict,
        length: path.map(|p| p.len().saturating_sub(1)),
        trace: None,
        replay: None,
    };
    let save = verdict == Verdict::Violated || (verdict == Verdict::ExampleFound && args.examples);
    if let (true, Some(path)) = (save, path) {
        let trace = Trace::from_path(cfg, def, path, command)
            .map_err(|bug| UserError::new(ErrorKind::Usage, bug.what().to_string()))?;
        std::fs::create_dir_all(&args.traces)
            .map_err(|e| UserError::io("create the trace directory", &args.traces, &e))?;
        let file = trace_path(&args.traces, cfg.variant, def.key);
        trace.write(&file)?;
        if args.itf {
            crate::itf::write_itf(&trace, &file.to_string_lossy(), &itf_path_for(&file))?;
        }
        result.replay = Some(replay_command(&file));
        result.trace = Some(file);
    }
    Ok(result)
}

/// The text summary.
pub fn render_text(r: &CheckResult) -> String {
    let mut out = String::new();
    let b = &r.config.bounds;
    out.push_str(&format!(
        "memtx check: preset {} variant {} (agents {}, records {}, ticks {}, slots {}, values {}, sources {}) engine {} threads {}{}\n",
        r.config.preset,
        r.config.variant.name(),
        b.agents,
        b.records,
        b.ticks,
        b.slots,
        b.values,
        b.sources.len(),
        r.engine.name(),
        r.threads,
        if r.symmetry { " symmetry" } else { "" }
    ));
    out.push_str(&format!(
        "unique states {}  total states {}  max depth {}  {:.2} s  {:.0} states/s\n",
        r.unique_states, r.total_states, r.max_depth, r.seconds, r.states_per_second
    ));
    if let Some(p) = r.collision_probability {
        out.push_str(&format!(
            "fingerprint collision probability (optimistic) {p:.2e}{}\n",
            if r.exact { " (exact mode)" } else { "" }
        ));
    }
    if let Some(m) = r.peak_memory_bytes {
        out.push_str(&format!("peak memory {} MiB\n", m >> 20));
    }
    out.push_str(&format!("coverage: {}\n", r.coverage));
    for p in &r.properties {
        let verdict = match p.verdict {
            Verdict::Holds => "holds".to_string(),
            Verdict::Violated => format!("VIOLATED in {} steps", p.length.unwrap_or(0)),
            Verdict::ExampleFound => format!("example found in {} steps", p.length.unwrap_or(0)),
            Verdict::ExampleNotFound => "EXAMPLE NOT FOUND".to_string(),
        };
        out.push_str(&format!("  {:<72} {verdict}\n", p.name));
        if let (Some(t), Some(cmd)) = (&p.trace, &p.replay) {
            out.push_str(&format!("      trace: {}\n      replay: {cmd}   (from a checkout: cargo run --release -- {})\n", t.display(), cmd.trim_start_matches("memtx ")));
        }
    }
    out.push_str(if r.passed {
        "result: PASS (every invariant holds, every example found)\n"
    } else {
        "result: FAIL\n"
    });
    out
}
