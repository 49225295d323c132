//! `memtx bench`: the fast explorer against stateright's BFS on the same model, in one run,
//! printing distinct states/s, memory and the ratio (speed targets live here, never in tests).
//!
//! Every measurement runs in a fresh child process (`memtx bench … --run-one ENGINE`, which
//! prints one [`EngineRun`] as JSON). Runs in one process influence each other: after a run
//! has freed gigabytes, glibc's allocator serves the next run's large buffers from its heap
//! instead of fresh mappings (it raises its mmap threshold dynamically), so growing them
//! copies instead of remapping, and a second paper run measured 10–30 % slower than the same
//! run alone. A process per run also makes the peak RSS the run's own.
//!
//! `memtx bench --processes N` compares, per model, N local processes × 1 thread with 1
//! process × N threads instead (`processes.rs`).

use crate::bench::two_phase_commit::TwoPhaseSys;
use crate::bench::{
    run_one, run_one_over, two_phase_options, BenchOptions, BenchResult, Engine, EngineRun,
};
use crate::cli::{BenchArgs, EngineArg};
use crate::error::{ErrorKind, UserError};
use crate::setup;
use memtx_model::{MemTx, Variant};
use std::process::Command;

mod processes;
use processes::processes_against_threads;

/// One benchmarked model: its label, the arguments that select it in a child, and the binary
/// that runs it (this one, or `--baseline-binary`).
struct Subject {
    label: String,
    args: Vec<String>,
    binary: Option<std::path::PathBuf>,
    /// Stopped at the distinct states of the subject at this index (measured before it in
    /// each round, at the same thread count), fast engine only.
    stopped_at: Option<usize>,
}

/// Runs `memtx bench`; exit code 0.
pub fn bench_command(args: &BenchArgs) -> Result<u8, UserError> {
    if let Some(path) = &args.out {
        crate::fsutil::check_writable_file(path, "--out")?;
        if let Some(binary) = &args.baseline_binary {
            crate::fsutil::check_not_input(path, "--out", binary, "the --baseline-binary")?;
        }
        if let Ok(me) = std::env::current_exe() {
            crate::fsutil::check_not_input(path, "--out", &me, "this memtx binary")?;
        }
    }
    if args.threads.is_empty() || args.threads.iter().any(|&t| t == 0 || t > 256) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--threads must be between 1 and 256",
        ));
    }
    if !(1..=99).contains(&args.repeat) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--repeat must be between 1 and 99",
        ));
    }
    let cfg = setup::config(args.preset(), &Default::default(), Variant::Memtx)
        .map_err(|m| UserError::new(ErrorKind::InvalidConfig, m))?;
    for &rms in &args.two_phase {
        TwoPhaseSys::new(rms).map_err(|m| UserError::new(ErrorKind::Usage, m))?;
    }
    if let Some(time) = &args.simulate {
        return crate::cmd::bench_simulate::bench_simulate(args, cfg, time);
    }
    if let Some(events) = args.validate_log {
        return crate::cmd::bench_simulate::bench_validate_log(args, cfg, events);
    }
    if let Some(engine) = args.run_one {
        return measure_here(args, cfg, engine);
    }
    if args.process.is_some() || args.hostfile.is_some() {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--process and --hostfile are internal to `memtx bench --processes N`: drop them",
        ));
    }
    if let Some(n) = args.processes {
        let out = processes_against_threads(args.preset(), &args.two_phase, n, args.repeat)?;
        crate::output::print(&out)?;
        if let Some(path) = &args.out {
            crate::fsutil::write_atomic(path, out.as_bytes())?;
        }
        return Ok(0);
    }
    if args.coverage_baseline && args.baseline_binary.is_some() {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--coverage-baseline and --baseline-binary each compare against a baseline: give one",
        ));
    }
    // Absolute (symbolic links kept, as the user named it), so that a bare file name is not
    // looked up in PATH.
    let baseline_binary = match &args.baseline_binary {
        Some(path) => match std::path::absolute(path) {
            Ok(abs) if abs.is_file() => Some(abs),
            _ => {
                return Err(UserError::new(
                    ErrorKind::Usage,
                    format!(
                        "--baseline-binary {}: no such file (scripts/build-baseline.sh builds one)",
                        path.display()
                    ),
                ))
            }
        },
        None => None,
    };
    if let Some(path) = &baseline_binary {
        // Before any long measurement: does the baseline run a benchmark child at all (2PC
        // with 2 RMs, a few milliseconds)?
        let probe = Subject {
            label: String::new(),
            args: vec!["--two-phase".into(), "2".into()],
            binary: Some(path.clone()),
            stopped_at: None,
        };
        measure_in_child(&probe, EngineArg::Fast, 1, None)?;
    }
    let mut subjects = vec![Subject {
        label: format!("MemTX, preset {}", args.preset()),
        args: vec!["--preset".into(), args.preset().to_string()],
        binary: None,
        stopped_at: None,
    }];
    if args.coverage_baseline {
        subjects.push(Subject {
            label: format!("MemTX, preset {}, rule firings not counted", args.preset()),
            args: vec![
                "--preset".into(),
                args.preset().to_string(),
                "--no-rule-coverage".into(),
            ],
            binary: None,
            stopped_at: None,
        });
    }
    if let Some(path) = &baseline_binary {
        subjects.push(Subject {
            label: format!("MemTX, preset {}, baseline binary", args.preset()),
            args: vec!["--preset".into(), args.preset().to_string()],
            binary: Some(path.clone()),
            stopped_at: None,
        });
        subjects.push(Subject {
            label: format!(
                "MemTX, preset {}, stopped at the baseline's distinct states",
                args.preset()
            ),
            args: vec!["--preset".into(), args.preset().to_string()],
            binary: None,
            stopped_at: Some(1),
        });
    }
    subjects.extend(args.two_phase.iter().map(|rms| Subject {
        label: format!("2PC, {rms} RMs"),
        args: vec!["--two-phase".into(), rms.to_string()],
        binary: None,
        stopped_at: None,
    }));
    let mut engines = vec![EngineArg::Fast];
    if !args.skip_stateright {
        engines.push(EngineArg::Stateright);
    }
    let rows = if args.repeat == 1 {
        "Each row is one run in a fresh process".to_string()
    } else {
        format!(
            "Each row is the run with the median time of {} runs, each in a fresh process, \
             interleaved with the other rows' runs",
            args.repeat
        )
    };
    let mut out = format!(
        "# memtx bench\n\ncommand: `{}`\n\n{rows}; \"speedup\" is distinct states/s against \
         stateright's BFS at the same thread count.\n\n",
        std::env::args().collect::<Vec<_>>().join(" ")
    );
    // A baseline (coverage or binary) is interleaved with the MemTX runs it is compared with:
    // the MemTX subjects form one group, every other subject a group of its own.
    let memtx_subjects = match (args.coverage_baseline, args.baseline_binary.is_some()) {
        (true, _) => 2,
        (false, true) => 3,
        (false, false) => 0,
    };
    let groups: Vec<Vec<&Subject>> = if memtx_subjects > 0 {
        let mut g = vec![subjects[..memtx_subjects].iter().collect::<Vec<_>>()];
        g.extend(subjects[memtx_subjects..].iter().map(|s| vec![s]));
        g
    } else {
        subjects.iter().map(|s| vec![s]).collect()
    };
    let mut fast_medians: Vec<(String, usize, f64)> = Vec::new();
    let mut medians: Vec<(String, EngineRun)> = Vec::new();
    for group in &groups {
        // Every (subject, engine, threads) of the group once per round, so that a slow spell
        // of the machine affects all of them alike.
        // The coverage baseline and a stopped run are measured with the fast engine only.
        let pairs: Vec<(&Subject, EngineArg, usize)> = group
            .iter()
            .flat_map(|&subject| {
                let fast_only = subject.args.iter().any(|a| a == "--no-rule-coverage")
                    || subject.stopped_at.is_some();
                engines
                    .iter()
                    .filter(move |&&e| !fast_only || e == EngineArg::Fast)
                    .flat_map(move |&e| args.threads.iter().map(move |&t| (subject, e, t)))
            })
            .collect();
        let mut measured: Vec<Vec<EngineRun>> = vec![Vec::new(); pairs.len()];
        for _ in 0..args.repeat {
            for k in 0..pairs.len() {
                let (subject, engine, threads) = pairs[k];
                // The stopped run's bound: the distinct states of its reference's run at the
                // same thread count, measured earlier in this round.
                let stop = subject.stopped_at.and_then(|of| {
                    pairs[..k]
                        .iter()
                        .zip(&measured)
                        .rev()
                        .find(|((s, e, t), _)| {
                            std::ptr::eq(*s, &subjects[of])
                                && *e == EngineArg::Fast
                                && *t == threads
                        })
                        .and_then(|(_, runs)| runs.last())
                        .map(|r| r.unique_states)
                });
                if subject.stopped_at.is_some() && stop.is_none() {
                    return Err(UserError::new(
                        ErrorKind::Io,
                        "[memtx internal bug] a stopped run was measured before its reference",
                    ));
                }
                let run = measure_in_child(subject, engine, threads, stop)?;
                let runs = &mut measured[k];
                eprintln!(
                    "bench: {}, {}, {} thread(s): {} distinct states in {:.2} s",
                    subject.label,
                    run.engine.name(),
                    run.threads,
                    run.unique_states,
                    run.seconds
                );
                runs.push(run);
            }
        }
        for &subject in group {
            let runs: Vec<EngineRun> = pairs
                .iter()
                .zip(&measured)
                .filter(|((s, _, _), _)| std::ptr::eq(*s, subject))
                .filter_map(|(_, runs)| EngineRun::median(runs.clone()))
                .collect();
            for r in runs.iter().filter(|r| r.engine == Engine::Fast) {
                fast_medians.push((subject.label.clone(), r.threads, r.seconds));
            }
            medians.extend(runs.iter().map(|r| (subject.label.clone(), r.clone())));
            out.push_str(&BenchResult::collect(&subject.label, runs).to_markdown());
            out.push('\n');
        }
    }
    if let Some(path) = &baseline_binary {
        out.push_str(&against_baseline(
            &path.display().to_string(),
            [&subjects[0].label, &subjects[1].label, &subjects[2].label],
            &medians,
        ));
    }
    if args.coverage_baseline {
        out.push_str(&coverage_overhead(
            &subjects[0].label,
            &subjects[1].label,
            &fast_medians,
        ));
    }
    crate::output::print(&out)?;
    if let Some(path) = &args.out {
        crate::fsutil::write_atomic(path, out.as_bytes())?;
    }
    Ok(0)
}

/// The cost of counting rule firings: the fast engine's median time on the MemTX preset with
/// coverage against without, per thread count (the baseline measured in the same run).
fn coverage_overhead(with: &str, without: &str, medians: &[(String, usize, f64)]) -> String {
    let mut out = String::from(
        "## What rule coverage costs\n\nMedian seconds of the fast engine, counting rule firings \
         and not counting them (the baseline), measured in this run, interleaved.\n\n\
         | threads | counted | not counted | overhead |\n|---:|---:|---:|---:|\n",
    );
    for &(_, threads, counted) in medians.iter().filter(|m| m.0 == with) {
        if let Some(&(_, _, base)) = medians.iter().find(|m| m.0 == without && m.1 == threads) {
            out.push_str(&format!(
                "| {threads} | {counted:.2} s | {base:.2} s | {:+.1} % |\n",
                (counted / base - 1.0) * 100.0
            ));
        }
    }
    out.push('\n');
    out
}

/// This binary against `--baseline-binary` on one preset, per thread count, from the median
/// runs of this run: seconds per distinct state (the two models may count different states),
/// the same for this binary's run stopped at the baseline's distinct states (`stopped`: the
/// cost of a state on the same amount of work, without the part of a larger model that lies
/// beyond the baseline's size), and the fast engine's lead over stateright's BFS under each.
/// `labels` are this binary's, the baseline's and the stopped run's.
fn against_baseline(path: &str, labels: [&str; 3], medians: &[(String, EngineRun)]) -> String {
    let [ours, theirs, stopped] = labels;
    let find = |label: &str, engine: Engine, threads: usize| {
        medians
            .iter()
            .find(|(l, r)| l == label && r.engine == engine && r.threads == threads)
            .map(|(_, r)| r)
    };
    let per_state = |r: &EngineRun| r.seconds / r.unique_states.max(1) as f64;
    let mut out = format!(
        "## Against the baseline binary\n\nBaseline: `{path}`, measured in this run, interleaved. \
         Time per distinct state (the two models may have different state counts); target: at \
         most 15 % slower. \"Same size\": this binary's run stopped once it has as many \
         distinct states as the baseline's (not a target; where a larger model's later states \
         cost more, the two figures differ by that). The fast engine's lead is its distinct \
         states/s over stateright's BFS at the same thread count; target: no smaller than the \
         baseline's.\n\n\
         | threads | µs per state | baseline | slower by | target | same size | slower by | fast lead | baseline lead | target |\n\
         |---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n"
    );
    let threads: Vec<usize> = medians
        .iter()
        .filter(|(l, r)| l == ours && r.engine == Engine::Fast)
        .map(|(_, r)| r.threads)
        .collect();
    for t in threads {
        let (Some(a), Some(b)) = (find(ours, Engine::Fast, t), find(theirs, Engine::Fast, t))
        else {
            continue;
        };
        let slower = per_state(a) / per_state(b) - 1.0;
        let (same_size, same_slower) = match find(stopped, Engine::Fast, t) {
            Some(c) => (
                format!("{:.3}", per_state(c) * 1e6),
                format!("{:+.1} %", (per_state(c) / per_state(b) - 1.0) * 100.0),
            ),
            None => ("—".to_string(), "—".to_string()),
        };
        let lead = |label: &str, fast: &EngineRun| {
            find(label, Engine::StaterightBfs, t)
                .map(|s| fast.states_per_second / s.states_per_second.max(f64::MIN_POSITIVE))
        };
        let (lead_ours, lead_theirs) = (lead(ours, a), lead(theirs, b));
        let show = |x: Option<f64>| x.map_or("—".to_string(), |x| format!("{x:.2}×"));
        let lead_verdict = match (lead_ours, lead_theirs) {
            (Some(x), Some(y)) if x >= y => "met",
            (Some(_), Some(_)) => "missed",
            _ => "not measured (--skip-stateright)",
        };
        out.push_str(&format!(
            "| {t} | {:.3} | {:.3} | {:+.1} % | {} | {same_size} | {same_slower} | {} | {} | {lead_verdict} |\n",
            per_state(a) * 1e6,
            per_state(b) * 1e6,
            slower * 100.0,
            if slower <= 0.15 { "met" } else { "missed" },
            show(lead_ours),
            show(lead_theirs),
        ));
    }
    out.push('\n');
    out
}

/// One run of `subject` in a fresh child process (`memtx bench … --run-one ENGINE`), stopped at
/// `max_states` when given.
fn measure_in_child(
    subject: &Subject,
    engine: EngineArg,
    threads: usize,
    max_states: Option<u64>,
) -> Result<EngineRun, UserError> {
    let bug = |what: String| UserError::new(ErrorKind::Io, format!("[memtx internal bug] {what}"));
    let exe = match &subject.binary {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| bug(format!("cannot find the running executable: {e}")))?,
    };
    let engine_name = match engine {
        EngineArg::Fast => "fast",
        EngineArg::Stateright => "stateright",
    };
    let output = Command::new(exe)
        .arg("bench")
        .args(&subject.args)
        .args(["--threads", &threads.to_string(), "--run-one", engine_name])
        .args(max_states.map(|n| format!("--max-states={n}")))
        .output()
        .map_err(|e| bug(format!("cannot start a benchmark process: {e}")))?;
    // A baseline binary is the user's: its failures are not this binary's bugs.
    let fail = |what: String| match &subject.binary {
        Some(path) => UserError::new(
            ErrorKind::Usage,
            format!("--baseline-binary {}: {what}", path.display()),
        ),
        None => bug(what),
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why = stderr.lines().next().unwrap_or("").trim();
        return Err(fail(format!(
            "benchmark process failed ({}){}{why}",
            output.status,
            if why.is_empty() { "" } else { ": " }
        )));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|e| fail(format!("unreadable benchmark process output: {e}")))
}

/// The child side: one engine, the first thread count, the MemTX preset or the one 2PC model.
/// With `--processes N --process I --hostfile FILE`: the fast engine over timely as process
/// I of N ([`run_one_over`]); only process 0 prints.
fn measure_here(
    args: &BenchArgs,
    cfg: memtx_model::Config,
    engine: EngineArg,
) -> Result<u8, UserError> {
    let engine = match engine {
        EngineArg::Fast => Engine::Fast,
        EngineArg::Stateright => Engine::StaterightBfs,
    };
    let threads = args.threads[0];
    let cluster = match args.processes {
        Some(processes) => {
            if engine != Engine::Fast {
                return Err(UserError::new(
                    ErrorKind::Usage,
                    "--run-one over --processes runs the fast engine over timely: use --run-one fast",
                ));
            }
            Some(crate::cmd::cluster::member_of(
                processes,
                args.process,
                args.hostfile.as_deref(),
                threads,
                (
                    crate::explore::DEFAULT_CONNECT_TIMEOUT,
                    crate::explore::DEFAULT_PEER_TIMEOUT,
                ),
            )?)
        }
        None => None,
    };
    let failed = |e: crate::explore::ExploreError| {
        let kind = match e {
            crate::explore::ExploreError::Cluster(_) => ErrorKind::Cluster,
            _ => ErrorKind::Usage,
        };
        UserError::new(kind, e.to_string())
    };
    let run = match args.two_phase.first() {
        Some(&rms) => {
            let model = TwoPhaseSys::new(rms).map_err(|m| UserError::new(ErrorKind::Usage, m))?;
            let options = two_phase_options(&[threads]);
            match &cluster {
                Some(cluster) => run_one_over(&model, cluster, &options).map_err(failed)?,
                None => Some(run_one(&model, engine, threads, &options).map_err(failed)?),
            }
        }
        None => {
            let model = MemTx::new(cfg);
            let mut options = BenchOptions::new(&[threads]);
            // No symmetry: stateright's BFS ignores it, and both engines must count alike.
            let hooks = crate::engine::memtx_hooks(false);
            options.next_state_into = Some(hooks.next_state_into);
            options.repeats = Some(hooks.repeats);
            options.locality = Some(hooks.locality);
            options.coverage = (!args.no_rule_coverage).then_some(hooks.coverage);
            options.max_states = args.max_states;
            match &cluster {
                Some(cluster) => run_one_over(&model, cluster, &options).map_err(failed)?,
                None => Some(run_one(&model, engine, threads, &options).map_err(failed)?),
            }
        }
    };
    // A cluster member other than process 0 lends its workers; process 0 reports.
    let Some(run) = run else {
        return Ok(0);
    };
    let json = serde_json::to_string(&run).map_err(|e| {
        UserError::new(
            ErrorKind::Io,
            format!("[memtx internal bug] cannot encode a measurement: {e}"),
        )
    })?;
    crate::output::println(&json)?;
    Ok(0)
}
