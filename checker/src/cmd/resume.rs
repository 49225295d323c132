//! `memtx resume DIR`: a check saved in a checkpoint directory, finished as `memtx check` would
//! have finished it.

use super::check::{
    announcer, check_outputs, preamble, present, run_and_report, Outputs, Presentation,
};
use crate::cli::ResumeArgs;
use crate::engine::{Engine, RunOptions};
use crate::error::{ErrorKind, UserError};
use crate::setup;
use memtx_model::Config;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// What a checkpoint records about the check besides the exploration: everything
/// `memtx resume` needs to finish it as `memtx check` would have.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedRun {
    /// The whole configuration (preset, bounds, domain, variant).
    pub config: Config,
    /// The keys of the properties checked.
    pub properties: Vec<String>,
    /// Symmetry reduction over agents.
    pub symmetry: bool,
    /// Memory budget.
    pub max_memory: Option<u64>,
    /// `--max-states`.
    pub max_states: Option<u64>,
    /// `--max-transitions` (absent in checkpoints written before it existed).
    #[serde(default)]
    pub max_transitions: Option<u64>,
    /// `--max-depth`.
    pub max_depth: Option<usize>,
    /// `--until-decided` (absent in checkpoints written before it existed).
    #[serde(default)]
    pub until_decided: bool,
    /// Worker threads of the original run (the default of `memtx resume --threads`).
    pub threads: usize,
    /// `--checkpoint-every`, in milliseconds.
    pub checkpoint_every_ms: u64,
    /// The original command line, recorded in the traces the resumed run writes.
    pub command: String,
    /// `--examples`.
    pub examples: bool,
    /// `--itf`.
    pub itf: bool,
}

/// `memtx resume DIR`: reads the check saved in the checkpoint directory, continues it on
/// `--threads` threads, or over processes (`--local N`, `--processes N --process I
/// --hostfile FILE`), whatever the saved run ran on, writing checkpoints into the same
/// directory at the saved interval, and prints and reports it as `memtx check` does, saying
/// that it was resumed. The result is the uninterrupted run's.
pub fn resume_command(args: &ResumeArgs, command: &str) -> Result<u8, UserError> {
    // Two resumes of one checkpoint at once would overwrite each other's checkpoints.
    let _lock = if args.cluster.process.is_none() && args.dir.is_dir() {
        Some(crate::fsutil::DirLock::take(
            &args.dir,
            "checkpoint",
            command,
        )?)
    } else {
        None
    };
    if args.cluster.local.is_some() {
        // The processes read the checkpoint; this one only starts and watches them.
        check_outputs(args.name.as_deref(), args.report.as_deref(), &args.traces)?;
        return crate::cmd::cluster::run_local(&args.cluster, command);
    }
    crate::cmd::cluster::watch_supervisor();
    let saved = crate::explore::load(&args.dir)?;
    let shown = args.dir.display().to_string();
    let run: SavedRun = serde_json::from_value(saved.run().clone()).map_err(|e| {
        UserError::with_fix(
            ErrorKind::Malformed,
            format!("checkpoint {shown} does not describe a memtx check ({e})"),
            "give the directory that `memtx check --checkpoint DIR` wrote",
        )
    })?;
    run.config.validate().map_err(|e| {
        UserError::new(
            ErrorKind::InvalidConfig,
            format!("checkpoint {shown}: {}", e.0),
        )
    })?;
    let selected = setup::properties(&run.properties, &run.config.preset).map_err(|m| {
        UserError::new(
            ErrorKind::UnknownProperty,
            format!("checkpoint {shown}: {m}"),
        )
    })?;
    let threads = args.threads.unwrap_or(run.threads);
    if threads == 0 || threads > 256 {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!("--threads {threads} is out of range: use 1 to 256"),
        ));
    }
    check_outputs(args.name.as_deref(), args.report.as_deref(), &args.traces)?;
    let cluster = crate::cmd::cluster::cluster_of(&args.cluster, threads)?;
    crate::interrupt::install()?;
    let level = saved.level();
    let before = saved.unique_states();
    let opts = RunOptions {
        engine: if cluster.is_some() {
            Engine::Timely
        } else {
            Engine::Fast
        },
        threads,
        symmetry: run.symmetry,
        exact: false,
        max_memory: run.max_memory,
        max_states: run.max_states,
        max_transitions: run.max_transitions,
        max_depth: run.max_depth,
        until_decided: run.until_decided,
        checkpoint: Some(crate::explore::CheckpointPlan {
            dir: args.dir.clone(),
            every: Duration::from_millis(run.checkpoint_every_ms),
            run: saved.run().clone(),
        }),
        resume: Some(Arc::new(saved)),
        cluster,
    };
    let other_process = args.cluster.process.is_some_and(|p| p != 0);
    let quiet = |_: &str| {};
    let loud = announcer(args.json);
    let announce: &dyn Fn(&str) = if other_process { &quiet } else { &loud };
    announce(&format!(
        "memtx resume: {shown}, from level {level} ({before} distinct states found before it)\n"
    ));
    announce(&preamble(&run.config, &opts, &selected));
    let outputs = Outputs {
        traces: &args.traces,
        examples: run.examples,
        itf: run.itf,
    };
    let result = run_and_report(
        &run.config,
        &selected,
        &opts,
        &outputs,
        command,
        &run.command,
    )?;
    if other_process {
        // A cluster member other than process 0 lends its workers; process 0 reports.
        return Ok(0);
    }
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
