//! `memtx bench --validate-log N`: how long `memtx validate-log` takes on a log of N events
//! (issue 36's target: 100,000 events in under a minute), against the model's own stepping of
//! the same operations measured in the same run (what validation costs beyond the protocol).
//!
//! The log is generated: random walks over the preset (each a run of at most
//! [`WALK_STEPS`] operations chosen uniformly among those the model proposes; a refused one is
//! logged refused), written by [`crate::log::emit::emit_run`] in an implementation's names with
//! every outcome, until N events.

use crate::log::emit::emit_run;
use crate::simulate::swarm::Rng;
use memtx_model::machine::{candidate_ops, step};
use memtx_model::{Config, Op, State};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// The longest run of the generated log.
pub const WALK_STEPS: usize = 24;

/// One measurement of validate-log.
#[derive(Clone, Debug)]
pub struct LogBench {
    /// The preset walked.
    pub preset: String,
    /// Runs in the log.
    pub runs: usize,
    /// Events in the log.
    pub events: usize,
    /// Its size.
    pub bytes: u64,
    /// Seconds to generate and write it.
    pub generate_seconds: f64,
    /// Seconds `validate-log` took (read, parse, infer, replay, compare, judge).
    pub validate_seconds: f64,
    /// Seconds the model's step function took over the same operations (the baseline).
    pub step_seconds: f64,
    /// Did every run conform? (It must: the log says what the protocol does.)
    pub conforms: bool,
}

/// The target: this many seconds for 100,000 events.
pub const TARGET_SECONDS_PER_100K: f64 = 60.0;

/// The runs of the generated log: random walks from `seed`, at least `events` operations.
pub fn walks(cfg: &Config, events: usize, seed: u64) -> Vec<Vec<Op>> {
    let mut out = Vec::new();
    let mut total = 0;
    let mut candidates = Vec::new();
    let mut walk = 0u64;
    while total < events {
        let mut rng = Rng::for_walk(seed, walk);
        walk += 1;
        let mut state = State::initial();
        let mut ops = Vec::new();
        for _ in 0..WALK_STEPS.min(events - total) {
            candidates.clear();
            candidate_ops(cfg, &state, &mut candidates);
            if candidates.is_empty() {
                break;
            }
            let op = candidates.swap_remove(rng.below(candidates.len() as u64) as usize);
            if let Ok(post) = step(cfg, &state, &op) {
                state = post;
            }
            ops.push(op);
        }
        if ops.is_empty() {
            break;
        }
        total += ops.len();
        out.push(ops);
    }
    out
}

/// Generates a log of `events` events over `cfg` in `dir`, then validates it and steps the
/// model over the same operations, timing each.
pub fn measure(
    cfg: &Config,
    events: usize,
    dir: &Path,
) -> Result<LogBench, crate::error::UserError> {
    let start = Instant::now();
    let runs = walks(cfg, events, 1);
    let path = dir.join("bench.jsonl");
    let file = std::fs::File::create(&path)
        .map_err(|e| crate::error::UserError::io("cannot write the benchmark's log", &path, &e))?;
    let mut w = std::io::BufWriter::new(file);
    for (i, ops) in runs.iter().enumerate() {
        for line in emit_run(&format!("walk-{i}"), cfg, ops) {
            writeln!(w, "{line}").map_err(|e| {
                crate::error::UserError::io("cannot write the benchmark's log", &path, &e)
            })?;
        }
    }
    w.flush()
        .map_err(|e| crate::error::UserError::io("cannot write the benchmark's log", &path, &e))?;
    drop(w);
    let generate_seconds = start.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);

    let start = Instant::now();
    let mut conforms = true;
    let mut counted = 0;
    crate::log::validate_log(
        &path,
        &crate::log::names::LogOptions::complete(cfg.variant),
        |run| {
            conforms &= run.clean();
            counted += run.events;
            Ok(())
        },
    )?;
    let validate_seconds = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let mut performed = 0usize;
    for ops in &runs {
        let mut state = State::initial();
        for op in ops {
            if let Ok(post) = step(cfg, &state, op) {
                state = post;
                performed += 1;
            }
        }
    }
    std::hint::black_box(performed);
    let step_seconds = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    Ok(LogBench {
        preset: cfg.preset.clone(),
        runs: runs.len(),
        events: counted,
        bytes,
        generate_seconds,
        validate_seconds,
        step_seconds,
        conforms,
    })
}

impl LogBench {
    /// The report: the log, the time, the ratio to stepping alone, the target.
    pub fn to_markdown(&self) -> String {
        let per_100k = self.validate_seconds * 100_000.0 / self.events.max(1) as f64;
        let met = per_100k < TARGET_SECONDS_PER_100K;
        format!(
            "## validate-log on a generated log\n\n\
             A log of {} events in {} runs (random walks of at most {WALK_STEPS} operations over `{}`, seed 1; refused operations logged refused; every outcome given), {}, generated in {:.2} s.\n\n\
             | measure | seconds | events per second |\n|---|---:|---:|\n\
             | `validate-log` (read, parse, infer each run's configuration, replay, compare, judge every invariant) | {:.2} | {:.0} |\n\
             | the model's step function over the same operations (baseline, same run) | {:.2} | {:.0} |\n\n\
             validate-log takes {:.1}x the model's own stepping. Every run conforms: {}. Target: 100,000 events in under {TARGET_SECONDS_PER_100K:.0} s; at this rate 100,000 events take {:.2} s: {}.\n",
            self.events,
            self.runs,
            self.preset,
            crate::input::show_size(self.bytes),
            self.generate_seconds,
            self.validate_seconds,
            self.events as f64 / self.validate_seconds.max(1e-9),
            self.step_seconds,
            self.events as f64 / self.step_seconds.max(1e-9),
            self.validate_seconds / self.step_seconds.max(1e-9),
            if self.conforms { "yes" } else { "NO" },
            per_100k,
            if met { "met" } else { "NOT met" },
        )
    }
}
