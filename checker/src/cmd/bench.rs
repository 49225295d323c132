//! `memtx bench`: the fast explorer against stateright's BFS on the same model, in one run,
//! printing distinct states/s, memory and the ratio (speed targets live here, never in tests).
//!
//! Every measurement runs in a fresh child process (`memtx bench … --run-one ENGINE`, which
//! prints one [`EngineRun`] as JSON). Runs in one process influence each other: after a run
//! has freed gigabytes, glibc's allocator serves the next run's large buffers from its heap
//! instead of fresh mappings (it raises its mmap threshold dynamically), so growing them
//! copies instead of remapping, and a second paper run measured 10–30 % slower than the same
//! run alone. A process per run also makes the peak RSS the run's own.

use crate::bench::{run_one, two_phase_options, BenchOptions, BenchResult, Engine, EngineRun};
use crate::cli::{BenchArgs, EngineArg};
use crate::error::{ErrorKind, UserError};
use crate::setup;
use crate::two_phase_commit::TwoPhaseSys;
use memtx_model::{MemTx, Variant};
use std::process::Command;

/// One benchmarked model: its label and the arguments that select it in a child.
struct Subject {
    label: String,
    args: Vec<String>,
}

/// Runs `memtx bench`; exit code 0.
pub fn bench_command(args: &BenchArgs) -> Result<u8, UserError> {
    if let Some(path) = &args.out {
        crate::fsutil::check_writable_file(path, "--out")?;
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
    let cfg = setup::config(&args.preset, &Default::default(), Variant::Memtx)
        .map_err(|m| UserError::new(ErrorKind::InvalidConfig, m))?;
    for &rms in &args.two_phase {
        TwoPhaseSys::new(rms).map_err(|m| UserError::new(ErrorKind::Usage, m))?;
    }
    if let Some(engine) = args.run_one {
        return measure_here(args, cfg, engine);
    }
    if let Some(n) = args.processes {
        let out = processes_against_threads(&args.preset, n, args.repeat)?;
        print!("{out}");
        if let Some(path) = &args.out {
            crate::fsutil::write_atomic(path, out.as_bytes())?;
        }
        return Ok(0);
    }
    let mut subjects = vec![Subject {
        label: format!("MemTX, preset {}", args.preset),
        args: vec!["--preset".into(), args.preset.clone()],
    }];
    if args.coverage_baseline {
        subjects.push(Subject {
            label: format!("MemTX, preset {}, rule firings not counted", args.preset),
            args: vec![
                "--preset".into(),
                args.preset.clone(),
                "--no-rule-coverage".into(),
            ],
        });
    }
    subjects.extend(args.two_phase.iter().map(|rms| Subject {
        label: format!("2PC, {rms} RMs"),
        args: vec!["--two-phase".into(), rms.to_string()],
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
    // The coverage baseline is interleaved with the MemTX runs it is compared with: the two
    // MemTX subjects form one group, every other subject a group of its own.
    let groups: Vec<Vec<&Subject>> = if args.coverage_baseline {
        let mut g = vec![subjects[..2].iter().collect::<Vec<_>>()];
        g.extend(subjects[2..].iter().map(|s| vec![s]));
        g
    } else {
        subjects.iter().map(|s| vec![s]).collect()
    };
    let mut fast_medians: Vec<(String, usize, f64)> = Vec::new();
    for group in &groups {
        // Every (subject, engine, threads) of the group once per round, so that a slow spell
        // of the machine affects all of them alike.
        // The coverage baseline is measured with the fast engine only.
        let pairs: Vec<(&Subject, EngineArg, usize)> = group
            .iter()
            .flat_map(|&subject| {
                let baseline = subject.args.iter().any(|a| a == "--no-rule-coverage");
                engines
                    .iter()
                    .filter(move |&&e| !baseline || e == EngineArg::Fast)
                    .flat_map(move |&e| args.threads.iter().map(move |&t| (subject, e, t)))
            })
            .collect();
        let mut measured: Vec<Vec<EngineRun>> = vec![Vec::new(); pairs.len()];
        for _ in 0..args.repeat {
            for (&(subject, engine, threads), runs) in pairs.iter().zip(&mut measured) {
                let run = measure_in_child(subject, engine, threads)?;
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
            out.push_str(&BenchResult::collect(&subject.label, runs).to_markdown());
            out.push('\n');
        }
    }
    if args.coverage_baseline {
        out.push_str(&coverage_overhead(
            &subjects[0].label,
            &subjects[1].label,
            &fast_medians,
        ));
    }
    print!("{out}");
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

/// Runs `memtx bench <subject> --threads T --run-one ENGINE` and reads its measurements.
/// One `memtx check --json` in a child process: (seconds of search, distinct states, bytes
/// sent between processes when over processes).
fn check_in_child(args: &[String]) -> Result<(f64, u64, Option<u64>), UserError> {
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
    let seconds = report["seconds"]
        .as_f64()
        .ok_or_else(|| bug("reported no time"))?;
    let unique = report["unique_states"]
        .as_u64()
        .ok_or_else(|| bug("reported no count"))?;
    let bytes = report["cluster"]["bytes_to_other_processes"].as_u64();
    Ok((seconds, unique, bytes))
}

/// `memtx bench --processes N`: N local processes × 1 thread against 1 process × N threads on
/// `preset`, `repeat` interleaved rounds, as a Markdown table with the median of each.
fn processes_against_threads(preset: &str, n: usize, repeat: usize) -> Result<String, UserError> {
    if !(2..=16).contains(&n) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--processes must be between 2 and 16",
        ));
    }
    let threads: Vec<String> = ["--preset", preset, "--threads", &n.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let processes: Vec<String> = [
        "--preset",
        preset,
        "--threads",
        "1",
        "--local",
        &n.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (mut t_runs, mut p_runs) = (Vec::new(), Vec::new());
    let mut bytes = None;
    let mut states = 0;
    for round in 1..=repeat {
        let (t, u, _) = check_in_child(&threads)?;
        let (p, v, b) = check_in_child(&processes)?;
        if u != v {
            return Err(UserError::new(
                ErrorKind::Usage,
                format!("[memtx internal bug] bench: {u} states on threads, {v} over processes"),
            ));
        }
        eprintln!("bench: round {round}: 1 process × {n} threads {t:.2} s, {n} processes × 1 thread {p:.2} s");
        t_runs.push(t);
        p_runs.push(p);
        bytes = b.or(bytes);
        states = u;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t, p) = (median(&mut t_runs.clone()), median(&mut p_runs.clone()));
    let mut out = format!(
        "# memtx bench --processes {n}\n\nPreset `{preset}`, {states} distinct states (the same in every run). Each run is a `memtx check --json` in a process of its own, the two setups interleaved, {repeat} round(s); times are the report's search time (after the processes connected).\n\n"
    );
    out.push_str(
        "| setup | median seconds | every run | distinct states/s |\n|---|---:|---|---:|\n",
    );
    for (label, m, runs) in [
        (format!("1 process × {n} threads"), t, &t_runs),
        (format!("{n} local processes × 1 thread"), p, &p_runs),
    ] {
        let every: Vec<String> = runs.iter().map(|s| format!("{s:.2}")).collect();
        out.push_str(&format!(
            "| {label} | {m:.2} | {} | {:.0} |\n",
            every.join(", "),
            states as f64 / m.max(1e-9)
        ));
    }
    out.push_str(&format!(
        "\nprocesses' speed / threads' speed: **{:.2}×** (target ≥ 0.8× on loopback)\n",
        t / p.max(1e-9)
    ));
    if let Some(b) = bytes {
        out.push_str(&format!(
            "bytes sent between processes: {b} ({:.1} per distinct state)\n",
            b as f64 / (states.max(1)) as f64
        ));
    }
    Ok(out)
}

fn measure_in_child(
    subject: &Subject,
    engine: EngineArg,
    threads: usize,
) -> Result<EngineRun, UserError> {
    let bug = |what: String| UserError::new(ErrorKind::Io, format!("[memtx internal bug] {what}"));
    let exe = std::env::current_exe()
        .map_err(|e| bug(format!("cannot find the running executable: {e}")))?;
    let engine_name = match engine {
        EngineArg::Fast => "fast",
        EngineArg::Stateright => "stateright",
    };
    let output = Command::new(exe)
        .arg("bench")
        .args(&subject.args)
        .args(["--threads", &threads.to_string(), "--run-one", engine_name])
        .output()
        .map_err(|e| bug(format!("cannot start a benchmark process: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(bug(format!(
            "benchmark process failed ({}): {}",
            output.status,
            stderr.trim()
        )));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|e| bug(format!("unreadable benchmark process output: {e}")))
}

/// The child side: one engine, the first thread count, the MemTX preset or the one 2PC model.
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
    let failed = |e: crate::explore::ExploreError| UserError::new(ErrorKind::Usage, e.to_string());
    let run = match args.two_phase.first() {
        Some(&rms) => {
            let model = TwoPhaseSys::new(rms).map_err(|m| UserError::new(ErrorKind::Usage, m))?;
            run_one(&model, engine, threads, &two_phase_options(&[threads])).map_err(failed)?
        }
        None => {
            let model = MemTx::new(cfg);
            let mut options = BenchOptions::new(&[threads]);
            // No symmetry: stateright's BFS ignores it, and both engines must count alike.
            let hooks = crate::engine::memtx_hooks(false);
            options.next_state_into = Some(hooks.next_state_into);
            options.locality = Some(hooks.locality);
            options.coverage = (!args.no_rule_coverage).then_some(hooks.coverage);
            run_one(&model, engine, threads, &options).map_err(failed)?
        }
    };
    let json = serde_json::to_string(&run).map_err(|e| {
        UserError::new(
            ErrorKind::Io,
            format!("[memtx internal bug] cannot encode a measurement: {e}"),
        )
    })?;
    println!("{json}");
    Ok(0)
}
