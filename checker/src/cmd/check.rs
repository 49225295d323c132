//! `memtx check`: one bounded exhaustive check, its verdicts, traces and summary.
//!
//! Flow: command line → [`crate::setup`] (configuration, properties) → [`crate::engine::run`]
//! (either engine) → a verdict per property → a trace file per violation (and per example with
//! `--examples`) → a [`RunReport`], printed as text or `--json`, and with `--report` written as
//! `<name>.json`/`.md`.

use super::resume::SavedRun;
use crate::cli::{CheckArgs, EngineArg};
use crate::engine::{run, Engine, RunOptions, RunOutcome};
use crate::error::{ErrorKind, UserError};
use crate::progress::ProgressSink;
use crate::report::{Coverage, PropertyOutcome, RunReport, Verdict};
use crate::setup;
use crate::trace::{itf_path_for, replay_command, trace_path, PropertyKind, Trace};
use memtx_model::properties::PropertyDef;
use memtx_model::{Config, MemTx};
use std::path::Path;
use std::time::Duration;

fn options(args: &CheckArgs) -> Result<RunOptions, UserError> {
    let engine = match args.engine {
        EngineArg::Fast => Engine::Fast,
        EngineArg::Stateright => Engine::Stateright,
    };
    if args.checkpoint.is_some() && (engine == Engine::Stateright || args.exact) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--checkpoint needs the fast engine without --exact: drop --exact / --engine stateright, or drop --checkpoint",
        ));
    }
    if args.checkpoint_every.is_some() && args.checkpoint.is_none() {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--checkpoint-every needs --checkpoint DIR",
        ));
    }
    if engine == Engine::Stateright
        && (args.symmetry
            || args.exact
            || args.max_memory.is_some()
            || args.max_transitions.is_some())
    {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--symmetry, --exact, --max-memory and --max-transitions need the fast engine: drop them or use --engine fast",
        ));
    }
    if args.max_transitions == Some(0) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--max-transitions 0 would stop before the first step: give at least 1",
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
    // A preset's default reduction applies to the fast engine only (stateright's BFS has none).
    let symmetry = args.symmetry
        || (engine == Engine::Fast
            && !args.no_symmetry
            && memtx_model::presets::symmetric_by_default(&args.preset));
    let cluster = crate::cmd::cluster::cluster_of(&args.cluster, args.threads)?;
    if cluster.is_some() && (engine == Engine::Stateright || args.exact) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--local and --processes need the fast engine without --exact: drop those, or run on threads",
        ));
    }
    let engine = if cluster.is_some() {
        Engine::Timely
    } else {
        engine
    };
    Ok(RunOptions {
        engine,
        threads: args.threads,
        symmetry,
        exact: args.exact,
        max_memory,
        max_states: args.max_states,
        max_transitions: args.max_transitions,
        max_depth: args.max_depth,
        until_decided: args.until_decided,
        checkpoint: None,
        resume: None,
        cluster,
    })
}

/// The default of `--checkpoint-every`.
const DEFAULT_CHECKPOINT_EVERY: Duration = Duration::from_secs(300);

/// Where a check's traces go and which it writes.
pub struct Outputs<'x> {
    /// Directory for traces.
    pub traces: &'x Path,
    /// Also save a trace for every example.
    pub examples: bool,
    /// Also write ITF traces.
    pub itf: bool,
}

/// What happens once a check (or a resumed check) has its report.
pub(super) struct Presentation<'x> {
    pub(super) report: Option<&'x Path>,
    pub(super) name: Option<&'x str>,
    pub(super) json: bool,
    pub(super) coverage: bool,
}

/// Prints to stdout (and flushes), or to stderr when stdout carries one JSON object.
pub(super) fn announcer(json: bool) -> impl Fn(&str) {
    move |text: &str| {
        if json {
            eprint!("{text}");
        } else {
            // A closed standard output is reported by the summary's print, at the end.
            let _ = crate::output::print(text);
        }
    }
}

/// Writes the reports, prints the summary, and returns the exit code.
pub(super) fn present(result: &RunReport, how: &Presentation<'_>) -> Result<u8, UserError> {
    let name = how
        .name
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}-{}", result.config.preset, result.variant.name()));
    if let Some(dir) = how.report {
        result.write_json(&dir.join(format!("{name}.json")))?;
        result.write_markdown(&dir.join(format!("{name}.md")))?;
        result.write_html(&dir.join(format!("{name}.html")))?;
        result.write_html(&dir.join("index.html"))?;
    }
    let written = how.report.map(|dir| {
        format!(
            "report written to {} (.json, .md, .html; the page also as {})\n",
            dir.join(&name).display(),
            dir.join("index.html").display()
        )
    });
    if how.json {
        crate::output::println(&result.to_json_string())?;
        if let Some(line) = &written {
            eprint!("{line}");
        }
    } else {
        crate::output::print(&render_text(result))?;
        if let Some(line) = &written {
            crate::output::print(line)?;
        }
        if how.coverage {
            if let Some(rules) = &result.rules {
                crate::output::print(&rules.table_text())?;
            }
        }
    }
    if crate::interrupt::interrupted() {
        return Ok(crate::interrupt::EXIT_CODE);
    }
    Ok(result.outcome().exit_code())
}

/// `memtx check` as a command: checks the output paths before the run, prints what the run
/// will cover, runs it (stopping gracefully on SIGINT/SIGTERM), writes the reports, prints
/// the summary; returns the exit code (0 pass, 1 fail, 3 incomplete, 130 interrupted).
pub fn check_command(args: &CheckArgs, command: &str) -> Result<u8, UserError> {
    check_outputs(args.name.as_deref(), args.report.as_deref(), &args.traces)?;
    if let Some(dir) = &args.checkpoint {
        crate::fsutil::check_writable_dir(dir, "--checkpoint")?;
    }
    // One run writes a checkpoint folder at a time (the processes of one cluster run share
    // it: the one that starts them holds the lock for them).
    let _lock = match &args.checkpoint {
        Some(dir) if args.cluster.process.is_none() => {
            std::fs::create_dir_all(dir).map_err(|e| UserError::io("create", dir, &e))?;
            crate::fsutil::check_replaceable(
                &crate::explore::checkpoint::file_in(dir),
                "--checkpoint file",
            )?;
            Some(crate::fsutil::DirLock::take(dir, "--checkpoint", command)?)
        }
        _ => None,
    };
    if args.cluster.local.is_some() {
        return crate::cmd::cluster::run_local(&args.cluster, command);
    }
    crate::cmd::cluster::watch_supervisor();
    crate::interrupt::install()?;
    if args.cluster.process.is_some_and(|p| p != 0) {
        // A cluster member other than process 0 lends its workers; process 0 reports.
        check_announcing(args, command, &|_| {})?;
        return Ok(0);
    }
    let result = check_announcing(args, command, &announcer(args.json))?;
    present(
        &result,
        &Presentation {
            report: args.report.as_deref(),
            name: args.name.as_deref(),
            json: args.json,
            coverage: args.coverage,
        },
    )
}

/// Refuses, before minutes of exploring, output paths that could not be written afterwards:
/// a report name that is not a plain file name, an unwritable `--report` or `--traces`.
pub(super) fn check_outputs(
    name: Option<&str>,
    report: Option<&Path>,
    traces: &Path,
) -> Result<(), UserError> {
    if let Some(name) = name {
        crate::fsutil::check_plain_name(name, "--name")?;
        if report.is_none() {
            return Err(UserError::new(
                ErrorKind::Usage,
                "--name names the report files: give --report DIR as well",
            ));
        }
    }
    if let Some(dir) = report {
        crate::fsutil::check_writable_dir(dir, "--report")?;
    }
    crate::fsutil::check_writable_dir(traces, "--traces")
}

/// Refuses, before the run, a trace file it could not write after it: a directory, device or
/// FIFO where a violation's (or, with `--examples`, an example's) trace or ITF file would go,
/// or a file where the configuration's trace folder would be. (Found after the whole
/// exploration before, and the verdict was never printed.)
fn check_trace_paths(
    cfg: &Config,
    selected: &[&'static PropertyDef],
    outputs: &Outputs<'_>,
) -> Result<(), UserError> {
    let dir = outputs.traces.join(crate::trace::configuration_name(cfg));
    if dir.exists() && !dir.is_dir() {
        return Err(UserError::with_fix(
            ErrorKind::Usage,
            format!(
                "--traces: {} is in the way of this configuration's trace folder",
                dir.display()
            ),
            "move it, or give another --traces directory",
        ));
    }
    for def in selected {
        if !def.is_invariant() && !outputs.examples {
            continue;
        }
        let file = trace_path(&dir, cfg.variant, def.key);
        crate::fsutil::check_replaceable(&file, "trace file")?;
        if outputs.itf {
            crate::fsutil::check_replaceable(&itf_path_for(&file), "ITF file")?;
        }
    }
    Ok(())
}

/// What a run will cover, printed before it starts: the configuration, the domain, the
/// limits, and what "exhaustive" will mean for it.
pub fn preamble(cfg: &Config, opts: &RunOptions, properties: &[&'static PropertyDef]) -> String {
    let b = &cfg.bounds;
    let d = &cfg.domain;
    let mut out = format!(
        "memtx check: preset {}, variant {}, engine {}, {} thread{}{}\n",
        cfg.preset,
        cfg.variant.name(),
        opts.engine.name(),
        opts.threads,
        if opts.threads == 1 { "" } else { "s" },
        if opts.exact { ", exact" } else { "" },
    );
    if opts.symmetry {
        out.push_str(&format!(
            "  symmetry: {} (one state per orbit)\n",
            memtx_model::symmetry::Symmetry::of(cfg).describe()
        ));
    }
    let sources: Vec<String> = b.sources.iter().map(crate::report::serde_name).collect();
    out.push_str(&format!(
        "  bounds: {} agent(s), {} record ids, clock 0..={}, {} slot(s) x {} value(s), sources [{}]\n",
        b.agents,
        b.records,
        b.ticks,
        b.slots,
        b.values,
        sources.join(", ")
    ));
    out.push_str(&format!("  domain: {}\n", crate::report::domain_line(d)));
    // The domain's size where it can be told before exploring: what it proposes at the start
    // (a domain with a huge branching shows here, not after minutes).
    let init = memtx_model::State::initial();
    let mut proposed = Vec::new();
    memtx_model::machine::candidate_ops(cfg, &init, &mut proposed);
    let enabled = proposed
        .iter()
        .filter(|op| memtx_model::machine::step(cfg, &init, op).is_ok())
        .count();
    out.push_str(&format!(
        "  domain size: {} operations proposed in the initial state, {enabled} enabled\n",
        proposed.len()
    ));
    let keys: Vec<&str> = properties.iter().map(|p| p.key).collect();
    out.push_str(&format!(
        "  properties: {} (full statements: docs/protocol.md)\n",
        keys.join(" ")
    ));
    let mut limits = Vec::new();
    if let Some(n) = opts.max_states {
        limits.push(format!("max states {n}"));
    }
    if let Some(n) = opts.max_transitions {
        limits.push(format!("max transitions {n}"));
    }
    if let Some(dd) = opts.max_depth {
        limits.push(format!("max depth {dd} steps"));
    }
    if let Some(m) = opts.max_memory {
        limits.push(format!("memory {} MiB", m >> 20));
    }
    if opts.until_decided {
        limits.push(
            "until decided (the run ends with the level by whose end every selected property is decided)"
                .to_string(),
        );
    }
    if limits.is_empty() {
        out.push_str("  exhaustive will mean: every state reachable from the initial state within these bounds is visited and every property judged on it\n");
    } else {
        out.push_str(&format!(
            "  limits: {}; a run stopped by one proves nothing beyond the states it visited (result INCOMPLETE, exit 3)\n",
            limits.join(", ")
        ));
    }
    out
}

/// Runs `memtx check` silently; returns the report (the caller prints it and picks the exit
/// code).
pub fn check(args: &CheckArgs, command: &str) -> Result<RunReport, UserError> {
    check_announcing(args, command, &|_| {})
}

/// [`check`], handing the [`preamble`] to `announce` before exploring.
pub fn check_announcing(
    args: &CheckArgs,
    command: &str,
    announce: &dyn Fn(&str),
) -> Result<RunReport, UserError> {
    let (cfg, selected) = setup::configured(
        &args.preset,
        args.domain.as_deref(),
        args.max_input_size.as_deref(),
        &args.bounds,
        &args.variant,
        &args.properties,
    )?;
    let mut opts = options(args)?;
    if let Some(dir) = &args.checkpoint {
        let every = match &args.checkpoint_every {
            Some(text) => setup::duration(text)
                .map_err(|m| UserError::new(ErrorKind::Usage, format!("--checkpoint-every {m}")))?,
            None => DEFAULT_CHECKPOINT_EVERY,
        };
        let saved = SavedRun {
            config: cfg.clone(),
            properties: selected.iter().map(|p| p.key.to_string()).collect(),
            symmetry: opts.symmetry,
            max_memory: opts.max_memory,
            max_states: opts.max_states,
            max_transitions: opts.max_transitions,
            max_depth: opts.max_depth,
            until_decided: opts.until_decided,
            threads: opts.threads,
            checkpoint_every_ms: u64::try_from(every.as_millis()).unwrap_or(u64::MAX),
            command: command.to_string(),
            examples: args.examples,
            itf: args.itf,
        };
        let run = serde_json::to_value(&saved).map_err(|e| {
            UserError::new(
                ErrorKind::Usage,
                format!("[memtx internal bug] the run cannot be described in JSON: {e}"),
            )
        })?;
        opts.checkpoint = Some(crate::explore::CheckpointPlan {
            dir: dir.clone(),
            every,
            run,
        });
    }
    announce(&preamble(&cfg, &opts, &selected));
    let outputs = Outputs {
        traces: &args.traces,
        examples: args.examples,
        itf: args.itf,
    };
    run_and_report(&cfg, &selected, &opts, &outputs, command, command)
}

/// Runs a check (or resumes one, [`RunOptions::resume`]) and builds its report: the
/// verdicts, a trace per violation (and per example with [`Outputs::examples`]), recording
/// `trace_command` as the command that found them. `command` is the report's.
pub fn run_and_report(
    cfg: &Config,
    selected: &[&'static PropertyDef],
    opts: &RunOptions,
    outputs: &Outputs<'_>,
    command: &str,
    trace_command: &str,
) -> Result<RunReport, UserError> {
    check_trace_paths(cfg, selected, outputs)?;
    let model = MemTx::with_properties(cfg.clone(), selected.to_vec());
    let sink = ProgressSink::new();
    let samples = std::sync::Mutex::new(Vec::new());
    let update = |p: &crate::explore::Progress| {
        sink.update(p);
        if let Ok(mut s) = samples.lock() {
            s.push(crate::report::Sample {
                seconds: p.elapsed.as_secs_f64(),
                distinct: p.distinct,
                generated: p.generated,
                memory_bytes: p.memory,
                resident_bytes: crate::explore::read_proc_status_bytes("VmRSS"),
            });
        }
    };
    let outcome =
        run(&model, opts, Some(&update)).map_err(|m| UserError::new(ErrorKind::Usage, m))?;
    sink.finish();
    let mut samples = samples.into_inner().unwrap_or_default();
    samples.push(crate::report::Sample {
        seconds: outcome.elapsed.as_secs_f64(),
        distinct: outcome.unique,
        generated: outcome.total,
        // What the explorer held at the end: its tables' bytes per state times the states.
        memory_bytes: match (
            outcome.visited_bytes_per_state,
            outcome.parent_log_bytes_per_state,
        ) {
            (Some(v), Some(p)) => ((v + p) * outcome.unique as f64) as u64,
            _ => samples.last().map_or(0, |s| s.memory_bytes),
        },
        resident_bytes: crate::explore::read_proc_status_bytes("VmRSS"),
    });
    if let Some(error) = &outcome.checkpoint_error {
        eprintln!("memtx: warning: {error}; the run went on without checkpoints");
    }
    let mut properties = Vec::new();
    for def in selected {
        properties.push(judge(cfg, def, &outcome, outputs, trace_command)?);
    }
    let secs = outcome.elapsed.as_secs_f64();
    Ok(RunReport {
        tool: crate::trace::tool_id(),
        command: command.to_string(),
        engine: outcome.engine.name().to_string(),
        variant: cfg.variant,
        config: cfg.clone(),
        unique_states: outcome.unique,
        total_states: outcome.total,
        max_depth: outcome.depth,
        states_per_depth: outcome.per_depth.clone(),
        seconds: secs,
        states_per_second: outcome.unique as f64 / secs.max(1e-9),
        peak_memory_bytes: outcome.peak_rss,
        collision_probability: outcome.collision_probability,
        symmetry: opts.symmetry,
        samples,
        symmetry_group: opts.symmetry.then(|| model.symmetry.describe()),
        threads: opts.threads,
        exact: opts.exact,
        visited_bytes_per_state: outcome.visited_bytes_per_state,
        parent_log_bytes_per_state: outcome.parent_log_bytes_per_state,
        coverage: match &outcome.stopped_early {
            Some(reason) => Coverage::StoppedEarly {
                reason: reason.clone(),
            },
            None => Coverage::Exhaustive,
        },
        rules: outcome
            .rule_tallies
            .as_deref()
            .map(crate::report::RuleCoverage::from_tallies),
        properties,
        result: crate::report::Outcome::Incomplete,
        complete: outcome.stopped_early.is_none(),
        resumed_from_level: outcome.resumed_from_level,
        cluster: outcome.cluster.clone(),
    }
    .with_outcome())
}

/// The verdict of one property, saving its trace when there is one to save.
fn judge(
    cfg: &Config,
    def: &'static PropertyDef,
    outcome: &RunOutcome,
    args: &Outputs<'_>,
    command: &str,
) -> Result<PropertyOutcome, UserError> {
    let path = outcome
        .discoveries
        .iter()
        .find(|(k, _)| *k == def.key)
        .and_then(|(_, p)| p.as_ref());
    let verdict = Verdict::from_discovery(PropertyKind::of(def), path.is_some());
    let outcome = PropertyOutcome::new(def, verdict);
    let Some(path) = path else { return Ok(outcome) };
    let steps = path.len().saturating_sub(1);
    let save = verdict == Verdict::Violated || (verdict == Verdict::ExampleFound && args.examples);
    if !save {
        return Ok(outcome.with_trace(steps, None, None));
    }
    let trace = Trace::from_path(cfg, def, path, command)
        .map_err(|bug| UserError::new(ErrorKind::Usage, bug.to_string()))?;
    let dir = args.traces.join(crate::trace::configuration_name(cfg));
    let file = trace_path(&dir, cfg.variant, def.key);
    trace.write(&file)?;
    if args.itf {
        crate::trace::itf::write_itf(&trace, &file.to_string_lossy(), &itf_path_for(&file))?;
    }
    let mut outcome = outcome.with_trace(
        steps,
        Some(file.display().to_string()),
        Some(replay_command(&file)),
    );
    if verdict == Verdict::Violated {
        let rows = crate::trace::step_rows(&trace).map_err(|e| {
            UserError::new(
                ErrorKind::Usage,
                format!(
                    "[memtx internal bug] the counterexample of {} does not replay: {e}",
                    def.key
                ),
            )
        })?;
        outcome.counterexample = Some(rows);
    }
    Ok(outcome)
}

/// The text summary of a check. It follows the [`preamble`], which every text run prints
/// first on the same output, so it does not name the configuration again.
pub fn render_text(r: &RunReport) -> String {
    let mut out = String::new();
    if r.symmetry {
        // The group is named by the preamble.
        out.push_str("symmetry reduction: the counts below are of orbits\n");
    }
    if let Some(c) = &r.cluster {
        out.push_str(&format!("timely: {}\n", c.summary(r.unique_states)));
    }
    if let Some(level) = r.resumed_from_level {
        out.push_str(&format!(
            "resumed from a checkpoint at level {level}: counts, levels, verdicts and traces are the uninterrupted run's\n"
        ));
    }
    out.push_str(&format!(
        "unique states {}  total states {}  max depth {}  {:.2} s  {:.0} distinct states/s\n",
        r.unique_states, r.total_states, r.max_depth, r.seconds, r.states_per_second
    ));
    if let Some(p) = r.collision_probability {
        out.push_str(&format!(
            "fingerprint collision probability (optimistic) {p:.2e}\n"
        ));
    }
    if let Some(m) = r.peak_memory_bytes {
        out.push_str(&format!("peak memory {} MiB", m >> 20));
        if let (Some(v), Some(p)) = (r.visited_bytes_per_state, r.parent_log_bytes_per_state) {
            out.push_str(&format!(
                " (visited set {v:.1} B/state, parent log {p:.1} B/state)"
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!("coverage: {}\n", r.coverage));
    match &r.rules {
        Some(rules) => out.push_str(&rules.summary_text()),
        None => out.push_str("rule coverage: not collected (stateright engine)\n"),
    }
    // Every verdict in one column, however long a statement.
    let width = r.properties.iter().map(|p| p.name.chars().count()).max();
    for p in &r.properties {
        let width = width.unwrap_or(0);
        out.push_str(&format!("  {:<width$}  {}\n", p.name, r.cell(p)));
        if let (Some(t), Some(cmd)) = (&p.trace, &p.replay_command) {
            let from_checkout = cmd.strip_prefix("memtx ").unwrap_or(cmd);
            out.push_str(&format!("      trace: {t}\n      replay: {cmd}\n      (from a checkout: cargo run --release -- {from_checkout})\n"));
        }
    }
    out.push_str(&r.result_line());
    out.push('\n');
    out
}
