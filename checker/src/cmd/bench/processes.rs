//! `memtx bench --processes N`: per model, N local processes × 1 thread against 1 process ×
//! N threads ([`processes_against_threads`]): a MemTX preset through `memtx check --json`
//! (`--local N` for the processes), 2PC through `--run-one fast` (over processes: N cluster
//! members with `--processes N --process I --hostfile FILE`, started by `cluster.rs`;
//! process 0 prints the measurements).

use super::{measure_in_child, Subject};
use crate::bench::EngineRun;
use crate::cli::EngineArg;
use crate::error::{ErrorKind, UserError};

/// One run of a model as `memtx bench --processes N` compares it: the search's seconds and
/// what must not depend on the setup.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Measured {
    seconds: f64,
    unique: u64,
    total: u64,
    depth: u64,
    /// Bytes of successor records sent between processes (runs over processes only).
    bytes: Option<u64>,
}

impl From<&EngineRun> for Measured {
    fn from(run: &EngineRun) -> Self {
        Measured {
            seconds: run.seconds,
            unique: run.unique_states,
            total: run.total_states,
            depth: run.max_depth as u64,
            bytes: run.bytes_to_other_processes,
        }
    }
}

/// One `memtx check <args> --json` in a child process, and its measurements.
fn check_in_child(args: &[String]) -> Result<Measured, UserError> {
    let exe = std::env::current_exe()
        .map_err(|e| UserError::new(ErrorKind::Io, format!("cannot find the memtx binary: {e}")))?;
    let out = std::process::Command::new(exe)
        .arg("check")
        .args(args)
        .arg("--json")
        .output()
        .map_err(|e| UserError::new(ErrorKind::Io, format!("cannot run memtx check: {e}")))?;
    let bug = |why: &str| {
        UserError::new(
            ErrorKind::Usage,
            format!(
                "[memtx internal bug] bench: `memtx check {}` {why}",
                args.join(" ")
            ),
        )
    };
    // Timely prints connection lines on stdout before the report: the report starts at the
    // first line that is `{` alone (the pretty-printed object).
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text
        .match_indices("{\n")
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text[..i].ends_with('\n'))
        .ok_or_else(|| bug("printed no JSON report"))?;
    let report: serde_json::Value =
        serde_json::from_str(&text[start..]).map_err(|_| bug("printed no JSON report"))?;
    let count = |field: &str| {
        report[field]
            .as_u64()
            .ok_or_else(|| bug(&format!("reported no {field}")))
    };
    Ok(Measured {
        seconds: report["seconds"]
            .as_f64()
            .ok_or_else(|| bug("reported no time"))?,
        unique: count("unique_states")?,
        total: count("total_states")?,
        depth: count("max_depth")?,
        bytes: report["cluster"]["bytes_to_other_processes"].as_u64(),
    })
}

/// `memtx bench --two-phase RMS --threads 1 --run-one fast` as `n` local processes over
/// loopback (each a member of the cluster, [`crate::cmd::cluster::run_local_capturing`]), and
/// process 0's measurements.
fn two_phase_over_processes(rms: usize, n: usize) -> Result<Measured, UserError> {
    let args: Vec<std::ffi::OsString> = [
        "bench",
        "--two-phase",
        &rms.to_string(),
        "--threads",
        "1",
        "--run-one",
        "fast",
    ]
    .iter()
    .map(Into::into)
    .collect();
    let (code, out) = crate::cmd::cluster::run_local_capturing(n, &args)?;
    let bug = |why: String| {
        UserError::new(
            ErrorKind::Usage,
            format!("[memtx internal bug] bench: 2PC with {rms} RMs over {n} processes {why}"),
        )
    };
    if code != 0 {
        return Err(bug(format!("ended with exit code {code}")));
    }
    let run: EngineRun =
        serde_json::from_slice(&out).map_err(|e| bug(format!("printed no measurements ({e})")))?;
    Ok(Measured::from(&run))
}

/// A model `memtx bench --processes N` compares: its heading and how to run it on threads
/// and over processes.
enum Compared {
    /// A MemTX preset, through `memtx check --json` (`--threads N` / `--threads 1 --local N`).
    Preset(String),
    /// Two-phase commit with this many RMs, through `memtx bench --run-one fast`.
    TwoPhase(usize),
}

impl Compared {
    fn label(&self) -> String {
        match self {
            Compared::Preset(p) => format!("MemTX, preset `{p}`"),
            Compared::TwoPhase(rms) => format!("2PC, {rms} RMs"),
        }
    }

    /// One run: 1 process × `n` threads, or `n` local processes × 1 thread.
    fn measure(&self, n: usize, over_processes: bool) -> Result<Measured, UserError> {
        let n_text = n.to_string();
        match (self, over_processes) {
            (Compared::Preset(p), false) => {
                check_in_child(&strings(&["--preset", p, "--threads", &n_text]))
            }
            (Compared::Preset(p), true) => check_in_child(&strings(&[
                "--preset",
                p,
                "--threads",
                "1",
                "--local",
                &n_text,
            ])),
            (Compared::TwoPhase(rms), false) => {
                let subject = Subject {
                    label: self.label(),
                    args: strings(&["--two-phase", &rms.to_string()]),
                    binary: None,
                    stopped_at: None,
                };
                Ok(Measured::from(&measure_in_child(
                    &subject,
                    EngineArg::Fast,
                    n,
                    None,
                )?))
            }
            (Compared::TwoPhase(rms), true) => two_phase_over_processes(*rms, n),
        }
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// `memtx bench --processes N`: N local processes × 1 thread against 1 process × N threads on
/// `preset` and on 2PC with each of `two_phase` RMs, `repeat` interleaved rounds (every
/// setup of every model once per round), as Markdown: one table per model with the median
/// of each setup, the speed ratio and the bytes exchanged per state.
pub(super) fn processes_against_threads(
    preset: &str,
    two_phase: &[usize],
    n: usize,
    repeat: usize,
) -> Result<String, UserError> {
    if !(2..=16).contains(&n) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--processes must be between 2 and 16",
        ));
    }
    let models: Vec<Compared> = std::iter::once(Compared::Preset(preset.to_string()))
        .chain(two_phase.iter().map(|&rms| Compared::TwoPhase(rms)))
        .collect();
    // Per model: the runs on threads, the runs over processes.
    let mut runs: Vec<(Vec<Measured>, Vec<Measured>)> = vec![Default::default(); models.len()];
    for round in 1..=repeat {
        for (model, (t_runs, p_runs)) in models.iter().zip(&mut runs) {
            let t = model.measure(n, false)?;
            let p = model.measure(n, true)?;
            if (t.unique, t.total, t.depth) != (p.unique, p.total, p.depth) {
                return Err(UserError::new(
                    ErrorKind::Usage,
                    format!(
                        "[memtx internal bug] bench: {}: {} distinct, {} total states, depth {} on threads; {}, {}, depth {} over processes",
                        model.label(), t.unique, t.total, t.depth, p.unique, p.total, p.depth
                    ),
                ));
            }
            eprintln!(
                "bench: round {round}, {}: 1 process × {n} threads {:.2} s, {n} processes × 1 thread {:.2} s",
                model.label(),
                t.seconds,
                p.seconds
            );
            t_runs.push(t);
            p_runs.push(p);
        }
    }
    let what = if two_phase.is_empty() {
        "Each run is a `memtx check --json`".to_string()
    } else {
        "Each run is a `memtx check --json` (the preset) or a `memtx bench --run-one fast` (2PC)"
            .to_string()
    };
    let mut out = format!(
        "# memtx bench --processes {n}\n\n{what} in a process of its own ({n} of them over processes), the two setups interleaved, every model once per round, {repeat} round(s); times are the report's search time (after the processes connected).\n\n"
    );
    for (model, (t_runs, p_runs)) in models.iter().zip(&runs) {
        out.push_str(&comparison_table(&model.label(), n, t_runs, p_runs));
    }
    Ok(out)
}

/// One model's section of `memtx bench --processes N`.
fn comparison_table(label: &str, n: usize, t_runs: &[Measured], p_runs: &[Measured]) -> String {
    let median = |runs: &[Measured]| {
        let mut v: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let (t, p) = (median(t_runs), median(p_runs));
    let Some(first) = t_runs.first() else {
        return String::new();
    };
    let states = first.unique;
    let mut out = format!(
        "## {label}\n\n{states} distinct states, {} states generated, depth {} (the same in every run).\n\n",
        first.total, first.depth
    );
    out.push_str(
        "| setup | median seconds | every run | distinct states/s |\n|---|---:|---|---:|\n",
    );
    for (setup, m, runs) in [
        (format!("1 process × {n} threads"), t, t_runs),
        (format!("{n} local processes × 1 thread"), p, p_runs),
    ] {
        let every: Vec<String> = runs.iter().map(|r| format!("{:.2}", r.seconds)).collect();
        out.push_str(&format!(
            "| {setup} | {m:.2} | {} | {:.0} |\n",
            every.join(", "),
            states as f64 / m.max(1e-9)
        ));
    }
    out.push_str(&format!(
        "\nprocesses' speed / threads' speed: **{:.2}×** (target ≥ 0.8× on loopback)\n",
        t / p.max(1e-9)
    ));
    if let Some(b) = p_runs.iter().rev().find_map(|r| r.bytes) {
        out.push_str(&format!(
            "bytes sent between processes: {b} ({:.1} per distinct state)\n",
            b as f64 / (states.max(1)) as f64
        ));
    }
    out.push('\n');
    out
}
