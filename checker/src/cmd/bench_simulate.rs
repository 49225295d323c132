//! `memtx bench --simulate D`: memtx's swarm simulation against stateright's simulation
//! checker on one preset, in one run ([`crate::bench::simulation`] measures; this prints).
//! `memtx bench --validate-log N`: validate-log on a generated log ([`crate::bench::log`]).

use crate::bench::simulation::{
    hunted, throughput, time_to_violation, Hunt, SimEngine, SimulationBench,
};
use crate::cli::BenchArgs;
use crate::error::{ErrorKind, UserError};
use memtx_model::config::Config;

/// Refuses the exhaustive benchmark's flags (and `--skip-stateright` when `skip` is set) in a
/// benchmark that `what` alone.
fn alone(args: &BenchArgs, what: &str, skip: bool) -> Result<(), UserError> {
    let others = [
        (!args.two_phase.is_empty(), "--two-phase"),
        (args.processes.is_some(), "--processes"),
        (args.baseline_binary.is_some(), "--baseline-binary"),
        (args.coverage_baseline, "--coverage-baseline"),
        (args.run_one.is_some(), "--run-one"),
        (args.repeat != 1, "--repeat"),
        (skip, "--skip-stateright"),
    ];
    match others.iter().find(|(given, _)| *given) {
        Some((_, flag)) => Err(UserError::new(
            ErrorKind::Usage,
            format!("{what} alone: drop {flag}"),
        )),
        None => Ok(()),
    }
}

/// Runs the validate-log benchmark on a log of `events` events over `cfg`; exit code 0.
pub fn bench_validate_log(args: &BenchArgs, cfg: Config, events: usize) -> Result<u8, UserError> {
    let usage = |m: String| UserError::new(ErrorKind::Usage, m);
    alone(
        args,
        "--validate-log measures validate-log",
        args.skip_stateright,
    )?;
    if !(1..=100_000_000).contains(&events) {
        return Err(usage("--validate-log takes 1 to 100000000 events".into()));
    }
    let dir = std::env::temp_dir().join(format!("memtx-bench-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| UserError::io("cannot create a scratch directory", &dir, &e))?;
    eprintln!(
        "bench: validate-log on {events} events over {}",
        args.preset()
    );
    let result = crate::bench::log::measure(&cfg, events, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let out = result?.to_markdown();
    crate::output::print(&out)?;
    if let Some(path) = &args.out {
        crate::fsutil::write_atomic(path, out.as_bytes())?;
    }
    Ok(0)
}

/// Runs the simulation benchmark on `cfg` (the preset under `memtx`); exit code 0.
pub fn bench_simulate(args: &BenchArgs, cfg: Config, time: &str) -> Result<u8, UserError> {
    let usage = |m: String| UserError::new(ErrorKind::Usage, m);
    let budget = crate::setup::budget(time).map_err(|m| usage(format!("--simulate {m}")))?;
    alone(args, "--simulate measures the simulations", false)?;
    if !(1..=99).contains(&args.seeds) {
        return Err(usage("--seeds must be between 1 and 99".into()));
    }
    let engines: &[SimEngine] = if args.skip_stateright {
        &[SimEngine::MemtxSwarm]
    } else {
        &[SimEngine::MemtxSwarm, SimEngine::StaterightSimulation]
    };
    let mut runs = Vec::new();
    for &threads in &args.threads {
        for &engine in engines {
            eprintln!(
                "bench: {} of {}, {threads} thread(s), {time}",
                engine.name(),
                args.preset()
            );
            runs.push(throughput(engine, &cfg, threads, budget, 1));
        }
    }
    let hunt_threads = args.threads.iter().copied().max().unwrap_or(1);
    let mut hunts = Vec::new();
    for (info, property) in hunted() {
        let vcfg = Config {
            variant: info.variant,
            ..cfg.clone()
        };
        eprintln!(
            "bench: hunting {property} under {}, {} seed(s)",
            info.name, args.seeds
        );
        let times = |engine| -> Vec<Option<f64>> {
            (1..=args.seeds)
                .map(|seed| time_to_violation(engine, &vcfg, property, hunt_threads, budget, seed))
                .collect()
        };
        let memtx = times(SimEngine::MemtxSwarm);
        let stateright = if args.skip_stateright {
            Vec::new()
        } else {
            times(SimEngine::StaterightSimulation)
        };
        hunts.push(Hunt {
            variant: info.name,
            property,
            memtx,
            stateright,
        });
    }
    let bench = SimulationBench {
        preset: args.preset().to_string(),
        seconds: budget.as_secs_f64(),
        throughput: runs,
        hunt_threads,
        seeds: args.seeds,
        hunts,
    };
    let out = bench.to_markdown();
    crate::output::print(&out)?;
    if let Some(path) = &args.out {
        crate::fsutil::write_atomic(path, out.as_bytes())?;
    }
    Ok(0)
}
