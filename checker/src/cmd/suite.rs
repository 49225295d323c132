//! `memtx suite`: every preset of the suite, each checked exhaustively, and the union of
//! their rule coverage (docs/protocol.md §1, revision 2).
//!
//! "Exhaustive" is only worth what the enumerated domain lets happen, and no single preset
//! within this machine's reach lets every rule of the protocol fire. The suite is the set of
//! presets that together do ([`memtx_model::presets::SUITE`]). It passes when every preset
//! is complete within its bounds, no invariant is violated, every preset reaches the examples
//! it must reach, every example of §9 is reached by some preset, and **every rule of the
//! protocol is exercised by some preset**; otherwise it names what failed and exits 1.

use crate::cli::{BoundArgs, CheckArgs, SimulateArgs, SuiteArgs};
use crate::cmd::check::check;
use crate::error::{ErrorKind, UserError};
pub use crate::report::suite::SuiteReport;
use crate::report::suite::{SuiteSimulation, SuiteSimulationRun};
use crate::simulate;
use memtx_model::config::VARIANTS;
use memtx_model::presets::SUITE;

/// The preset `--simulate` walks: the whole protocol at once.
pub const SIMULATED_PRESET: &str = "full";

/// The check arguments of one preset of the suite: a reference check of the protocol.
fn preset_args(name: &str, args: &SuiteArgs) -> CheckArgs {
    CheckArgs {
        threads: args.threads,
        ..crate::cmd::reference::reference_args(name, "memtx", args.traces.clone())
    }
}

/// Runs the suite (or its `--quick` subset).
pub fn run_suite(args: &SuiteArgs, command: &str) -> Result<SuiteReport, UserError> {
    // Checked before the first preset starts (each check would refuse it, after the suite
    // had announced its first preset).
    if args.threads == 0 || args.threads > 256 {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!("--threads {} is out of range: use 1 to 256", args.threads),
        ));
    }
    if let Some(budget) = &args.simulate {
        crate::setup::budget(budget)
            .map_err(|m| UserError::new(ErrorKind::Usage, format!("--simulate {m}")))?;
    }
    let mut presets = Vec::new();
    for entry in SUITE.iter().filter(|e| e.quick || !args.quick) {
        if !args.json {
            eprintln!("memtx suite: checking {} ({})", entry.name, entry.focus);
        }
        presets.push(check(&preset_args(entry.name, args), command)?);
        if crate::interrupt::interrupted() {
            break;
        }
    }
    let simulation = match &args.simulate {
        Some(time) if !crate::interrupt::interrupted() => Some(simulate_all(
            &Budget::Time(time.clone()),
            &simulation_plan(),
            args.threads,
            &args.traces,
            !args.json,
        )?),
        _ => None,
    };
    Ok(SuiteReport::from_reports(
        presets, simulation, args.quick, command,
    ))
}

/// What bounds each swarm run of [`simulate_all`].
#[derive(Clone, Debug)]
pub enum Budget {
    /// At most this long (`--simulate 2m`), as `memtx simulate --time` reads it.
    Time(String),
    /// At most this many walks (deterministic: what the tests use).
    Walks(u64),
}

/// The swarm runs of `--simulate`, in order: `memtx` with every property (`None`), then each
/// variant of §10 once per property it is expected to break, that property alone (so that
/// another one's violation cannot end the run first).
pub fn simulation_plan() -> Vec<(&'static str, Option<&'static str>)> {
    VARIANTS
        .iter()
        .flat_map(|v| {
            let keys: Vec<Option<&'static str>> = if v.expected_to_break.is_empty() {
                vec![None]
            } else {
                v.expected_to_break.iter().map(|k| Some(*k)).collect()
            };
            keys.into_iter().map(move |k| (v.name, k))
        })
        .collect()
}

/// Runs `plan` (see [`simulation_plan`]): each a swarm simulation of the whole protocol
/// (`full`) within `budget`, its violation shortened and saved under `traces`, as
/// `memtx simulate` does; `announce` prints a line on stderr before each run.
pub fn simulate_all(
    budget: &Budget,
    plan: &[(&'static str, Option<&'static str>)],
    threads: usize,
    traces: &std::path::Path,
    announce: bool,
) -> Result<SuiteSimulation, UserError> {
    let mut runs = Vec::new();
    for &(variant, property) in plan {
        if announce {
            eprintln!(
                "memtx suite: simulating {SIMULATED_PRESET} under {variant}{}",
                property.map_or(String::new(), |k| format!(" ({k} alone)"))
            );
        }
        let sim = simulate_args(variant, property, budget, threads, traces);
        let line = simulate_command_line(&sim);
        let started = std::time::Instant::now();
        let report = crate::cmd::simulate::run(&sim, &line)?;
        let replays = report.violation.as_ref().map(|v| replays(&v.trace));
        runs.push(SuiteSimulationRun::from_report(
            variant,
            property,
            report,
            started.elapsed(),
            replays,
        ));
        if crate::interrupt::interrupted() {
            break;
        }
    }
    Ok(SuiteSimulation {
        preset: SIMULATED_PRESET.into(),
        budget: match budget {
            Budget::Time(t) => t.clone(),
            Budget::Walks(n) => format!("{n} walks"),
        },
        seed: simulate::DEFAULT_SEED,
        threads,
        runs,
    })
}

/// Does the trace saved at `path` replay and meet its recorded expectation?
fn replays(path: &str) -> bool {
    crate::trace::Trace::read(std::path::Path::new(path))
        .ok()
        .and_then(|t| crate::trace::replay::replay(&t, None).ok())
        .is_some_and(|r| r.expectation_met())
}

/// The arguments of one swarm run of the suite (every other setting at its default).
fn simulate_args(
    variant: &str,
    property: Option<&str>,
    budget: &Budget,
    threads: usize,
    traces: &std::path::Path,
) -> SimulateArgs {
    let (walks, time) = match budget {
        Budget::Time(t) => (None, Some(t.clone())),
        Budget::Walks(n) => (Some(*n), None),
    };
    SimulateArgs {
        preset: SIMULATED_PRESET.into(),
        bounds: BoundArgs::default(),
        domain: None,
        max_input_size: None,
        variant: variant.into(),
        properties: property.map(|k| vec![k.to_string()]).unwrap_or_default(),
        walks,
        time,
        max_walk_depth: simulate::DEFAULT_MAX_WALK_DEPTH,
        seed: simulate::DEFAULT_SEED,
        threads,
        search_budget: simulate::DEFAULT_SEARCH_BUDGET,
        max_memory: None,
        traces: traces.to_path_buf(),
        report: None,
        json: false,
    }
}

/// The `memtx simulate` command line that runs `sim` alone (what its trace and its
/// reproduce command name).
fn simulate_command_line(sim: &SimulateArgs) -> String {
    let mut line = format!(
        "memtx simulate --preset {} --variant {}",
        sim.preset, sim.variant
    );
    for key in &sim.properties {
        line.push_str(&format!(" --property {key}"));
    }
    if let Some(walks) = sim.walks {
        line.push_str(&format!(" --walks {walks}"));
    }
    if let Some(time) = &sim.time {
        line.push_str(&format!(" --time {time}"));
    }
    line.push_str(&format!(
        " --threads {} --traces {}",
        sim.threads,
        sim.traces.display()
    ));
    line
}

/// `memtx suite`: runs, prints, writes reports; exit 0 on a pass, 130 when interrupted, 1
/// otherwise.
pub fn suite_command(args: &SuiteArgs, command: &str) -> Result<u8, UserError> {
    if let Some(dir) = &args.report {
        crate::fsutil::check_writable_dir(dir, "--report")?;
    }
    crate::fsutil::check_writable_dir(&args.traces, "--traces")?;
    crate::interrupt::install()?;
    let report = run_suite(args, command)?;
    if let Some(dir) = &args.report {
        for r in &report.presets {
            let name = format!("{}-memtx", r.config.preset);
            r.write_json(&dir.join(format!("{name}.json")))?;
            r.write_markdown(&dir.join(format!("{name}.md")))?;
            r.write_html(&dir.join(format!("{name}.html")))?;
        }
        crate::fsutil::write_atomic(
            &dir.join("index.html"),
            crate::report::html::suite_page(&report).as_bytes(),
        )?;
        crate::fsutil::write_atomic(&dir.join("suite.md"), report.to_markdown().as_bytes())?;
        crate::fsutil::write_atomic(
            &dir.join("suite.json"),
            crate::fsutil::json_pretty(&report).as_bytes(),
        )?;
    }
    if args.json {
        crate::output::println(&crate::fsutil::json_pretty(&report))?;
    } else {
        crate::output::print(&report.render_text())?;
    }
    if crate::interrupt::interrupted() {
        eprintln!(
            "memtx suite: interrupted after {} of its presets: the suite is incomplete",
            report.presets.len()
        );
        return Ok(crate::interrupt::EXIT_CODE);
    }
    Ok(if report.passed() { 0 } else { 1 })
}
