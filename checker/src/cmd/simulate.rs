//! `memtx simulate`: swarm random walks over any preset or `--domain` (see
//! [`crate::simulate`]), the violation found shortened and saved as an ordinary trace.

use crate::cli::SimulateArgs;
use crate::error::{ErrorKind, UserError};
use crate::report::simulation::{SimulatedProperty, SimulatedViolation, SimulationReport};
use crate::report::RuleCoverage;
use crate::setup;
use crate::simulate::{shrink, simulate, SimulateOptions, Simulation, SimulationEnd};
use crate::trace::{replay_command, trace_path, Trace};
use memtx_model::properties::PropertyDef;
use memtx_model::MemTx;
use stateright::Model;

/// Walks run when neither `--walks` nor `--time` is given.
pub const DEFAULT_WALKS: u64 = 100_000;

/// `memtx simulate` as a command; returns the exit code (0 no violation, 1 a violation,
/// 130 interrupted).
pub fn simulate_command(args: &SimulateArgs, command: &str) -> Result<u8, UserError> {
    if let Some(dir) = &args.report {
        crate::fsutil::check_writable_dir(dir, "--report")?;
    }
    let report = run(args, command)?;
    if let Some(dir) = &args.report {
        write_report(&report, dir)?;
    }
    if args.json {
        crate::output::println(&report.to_json_string())?;
    } else {
        crate::output::print(&report.render_text())?;
    }
    Ok(report.exit_code())
}

/// Runs the simulation and builds its report, saving the shortened trace of a violation.
pub fn run(args: &SimulateArgs, command: &str) -> Result<SimulationReport, UserError> {
    let (cfg, selected) = setup::configured(
        &args.preset,
        args.domain.as_deref(),
        args.max_input_size.as_deref(),
        &args.bounds,
        &args.variant,
        &args.properties,
    )?;
    let time = match &args.time {
        Some(text) => Some(
            setup::budget(text)
                .map_err(|m| UserError::new(ErrorKind::Usage, format!("--time {m}")))?,
        ),
        None => None,
    };
    if args.walks == Some(0) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--walks 0: a simulation needs at least one walk",
        ));
    }
    if args.max_walk_depth == 0 {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--max-walk-depth 0: a walk needs at least one step",
        ));
    }
    if args.threads == 0 {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--threads 0: a simulation needs at least one thread",
        ));
    }
    let max_memory = match &args.max_memory {
        Some(s) => Some(setup::memory(s).map_err(|m| UserError::new(ErrorKind::Usage, m))?),
        None => None,
    };
    let walks = match (args.walks, time) {
        (None, None) => Some(DEFAULT_WALKS),
        (w, _) => w,
    };
    let dir = args.traces.join(crate::trace::configuration_name(&cfg));
    let trace_file = |key: &str| trace_path(&dir, cfg.variant, &format!("{key}-simulated"));
    for def in selected.iter().filter(|d| d.is_invariant()) {
        crate::fsutil::check_replaceable(&trace_file(def.key), "trace")?;
    }
    crate::interrupt::install()?;
    let model = MemTx::with_properties(cfg.clone(), selected.clone());
    let opts = SimulateOptions {
        seed: args.seed,
        walks,
        time,
        max_walk_depth: args.max_walk_depth,
        threads: args.threads,
        interrupt: Some(crate::interrupt::flag()),
    };
    let sim = simulate(&model, &opts);
    let reproduce = reproduce_command(command, sim.walks, args.seed);
    let violation = match &sim.violation {
        Some(v) => {
            let def = PropertyDef::find(v.key).ok_or_else(|| {
                UserError::new(
                    ErrorKind::Usage,
                    format!("[memtx internal bug] no property {}", v.key),
                )
            })?;
            let short = shrink::shorten(
                &model,
                def,
                &v.ops,
                args.search_budget,
                max_memory,
                args.threads,
            );
            let path = replay_path(&model, &short.ops).ok_or_else(|| {
                UserError::new(
                    ErrorKind::Usage,
                    format!(
                        "[memtx internal bug] the shortened counterexample of {} does not replay",
                        v.key
                    ),
                )
            })?;
            let trace = Trace::from_path(&cfg, def, &path, &reproduce)
                .map_err(|bug| UserError::new(ErrorKind::Usage, bug.to_string()))?;
            let file = trace_file(def.key);
            trace.write(&file)?;
            Some(SimulatedViolation {
                property: def.key,
                walk: v.walk,
                walk_steps: short.walk_steps,
                after_removal: short.after_removal,
                after_projection: short.after_projection,
                steps: short.ops.len(),
                search: short.search,
                searched_states: short.searched_states,
                trace: file.display().to_string(),
                replay: replay_command(&file),
            })
        }
        None => None,
    };
    Ok(build_report(
        args, command, reproduce, cfg, &selected, &sim, violation,
    ))
}

/// Writes `DIR/simulation.json` and `DIR/index.html` (with the counterexample's steps, read
/// back from its saved trace).
fn write_report(report: &SimulationReport, dir: &std::path::Path) -> Result<(), UserError> {
    crate::fsutil::write_atomic(
        &dir.join("simulation.json"),
        report.to_json_string().as_bytes(),
    )?;
    let trace = match &report.violation {
        Some(v) => Some(Trace::read(std::path::Path::new(&v.trace))?),
        None => None,
    };
    crate::fsutil::write_atomic(
        &dir.join("index.html"),
        crate::report::html::simulation_page(report, trace.as_ref()).as_bytes(),
    )
}

/// The states of `ops` from the initial state, in the explorer's path format.
fn replay_path(
    model: &MemTx,
    ops: &[memtx_model::ops::Op],
) -> Option<Vec<(memtx_model::state::State, Option<memtx_model::ops::Op>)>> {
    let mut state = model.init_states().into_iter().next()?;
    let mut path = Vec::with_capacity(ops.len() + 1);
    for op in ops {
        let next = model.next_state(&state, op.clone())?;
        path.push((state, Some(op.clone())));
        state = next;
    }
    path.push((state, None));
    Some(path)
}

/// The command line with `--walks N --seed S` in place of `--walks`, `--time` and `--seed`:
/// it runs exactly these walks again.
fn reproduce_command(command: &str, walks: u64, seed: u64) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut skip = false;
    for word in command.split(' ') {
        if skip {
            skip = false;
            continue;
        }
        if ["--walks", "--time", "--seed"].contains(&word) {
            skip = true;
            continue;
        }
        if ["--walks=", "--time=", "--seed="]
            .iter()
            .any(|p| word.starts_with(p))
        {
            continue;
        }
        words.push(word.to_string());
    }
    words.push(format!("--walks {walks} --seed {seed}"));
    words.join(" ")
}

fn build_report(
    args: &SimulateArgs,
    command: &str,
    reproduce: String,
    cfg: memtx_model::config::Config,
    selected: &[&'static PropertyDef],
    sim: &Simulation,
    violation: Option<SimulatedViolation>,
) -> SimulationReport {
    let properties = selected
        .iter()
        .zip(&sim.examples)
        .map(|(def, first)| {
            let invariant = def.is_invariant();
            let broken = violation.as_ref().is_some_and(|v| v.property == def.key);
            SimulatedProperty {
                key: def.key,
                name: def.name,
                kind: if invariant { "invariant" } else { "example" },
                verdict: match (invariant, broken, first.is_some()) {
                    (true, true, _) => "VIOLATED",
                    (true, false, _) => "not violated in the walks",
                    (false, _, true) => "reached",
                    (false, _, false) => "not reached",
                },
                first: *first,
            }
        })
        .collect();
    let deepest_walk = sim.lengths.len().saturating_sub(1);
    let seconds = sim.elapsed.as_secs_f64();
    SimulationReport {
        tool: crate::trace::tool_id(),
        command: command.to_string(),
        reproduce,
        variant: cfg.variant,
        config: cfg,
        seed: args.seed,
        threads: args.threads,
        max_walk_depth: args.max_walk_depth,
        walks: sim.walks,
        steps: sim.steps,
        refused: sim.refused,
        stuck_walks: sim.stuck,
        deepest_walk,
        walk_lengths: sim
            .lengths
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(l, &n)| (l, n))
            .collect(),
        distinct_states_estimate: sim.distinct_estimate.round() as u64,
        distinct_states_method: format!(
            "HyperLogLog over 64-bit state fingerprints, {} registers, standard error {:.1} %",
            crate::simulate::sketch::Sketch::REGISTERS,
            crate::simulate::sketch::Sketch::STANDARD_ERROR * 100.0
        ),
        seconds,
        steps_per_second: sim.steps as f64 / seconds.max(1e-9),
        properties,
        rules: RuleCoverage::from_tallies(&sim.rules),
        violation,
        end: sim.end,
        progress: sim.progress.clone(),
        result: match sim.end {
            SimulationEnd::Violation => "violation",
            SimulationEnd::Interrupted => "interrupted",
            _ => "no-violation",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reproduce_command_names_the_walks_and_the_seed() {
        assert_eq!(
            reproduce_command("memtx simulate --preset full --time 60s --seed 7", 1234, 7),
            "memtx simulate --preset full --walks 1234 --seed 7"
        );
        assert_eq!(
            reproduce_command("memtx simulate --walks=5 --threads 2", 5, 1),
            "memtx simulate --threads 2 --walks 5 --seed 1"
        );
    }
}
