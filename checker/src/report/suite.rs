//! The report of `memtx suite` (the command is `cmd/suite.rs`): the verdict over the checks
//! of the suite's presets, as text (the preset × property matrix), Markdown and JSON.

use crate::report::simulation::{SimulatedViolation, SimulationReport};
use crate::report::{RuleCoverage, RunReport, Verdict};
use crate::simulate::SimulationEnd;
use memtx_model::properties::PROPERTIES;
use serde::Serialize;
use std::fmt::Write as _;

/// The outcome of a suite run.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteReport {
    /// `memtx <version>`.
    pub tool: String,
    /// The command line.
    pub command: String,
    /// `--quick`: the subset run by `cargo test`.
    pub quick: bool,
    /// One check per preset, in suite order.
    pub presets: Vec<RunReport>,
    /// The union of the presets' rule coverage.
    pub union: RuleCoverage,
    /// `--simulate`: the swarm runs of the whole protocol, if asked for.
    pub simulation: Option<SuiteSimulation>,
    /// Examples of §9 reached by no preset.
    pub examples_missing: Vec<String>,
    /// `pass` or `fail`.
    pub result: String,
    /// What failed, one item per cause (empty on a pass).
    pub failures: Vec<String>,
}

impl SuiteReport {
    /// The suite's verdict over the checks of its presets (in suite order).
    pub fn from_reports(
        presets: Vec<RunReport>,
        simulation: Option<SuiteSimulation>,
        quick: bool,
        command: &str,
    ) -> SuiteReport {
        let union = RuleCoverage::union(presets.iter().filter_map(|r| r.rules.as_ref()));
        let mut failures = Vec::new();
        for r in &presets {
            if !r.coverage.is_exhaustive() {
                failures.push(format!("{}: {}", r.config.preset, r.coverage));
            }
            for p in r.properties.iter().filter(|p| p.verdict.is_failure()) {
                failures.push(format!("{}: {} {}", r.config.preset, p.key, p.verdict));
            }
        }
        let examples_missing: Vec<String> = PROPERTIES
            .iter()
            .filter(|p| !p.is_invariant())
            .filter(|p| {
                !presets.iter().any(|r| {
                    r.property(p.key)
                        .is_some_and(|o| o.verdict == Verdict::ExampleFound)
                })
            })
            .map(|p| p.key.to_string())
            .collect();
        if !examples_missing.is_empty() {
            failures.push(format!(
                "examples reached by no preset: {}",
                examples_missing.join(", ")
            ));
        }
        let never = union.never();
        if !never.is_empty() {
            failures.push(format!(
                "rules exercised by no preset: {}",
                never.join(", ")
            ));
        }
        if let Some(sim) = &simulation {
            for run in sim.runs.iter().filter(|r| !r.as_expected()) {
                failures.push(format!(
                    "simulation of {} under {}: {}",
                    sim.preset,
                    run.variant,
                    run.outcome()
                ));
            }
        }
        SuiteReport {
            tool: crate::trace::tool_id(),
            command: command.to_string(),
            quick,
            presets,
            union,
            simulation,
            examples_missing,
            result: if failures.is_empty() { "pass" } else { "fail" }.into(),
            failures,
        }
    }

    /// Did the suite pass?
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// One cell of the preset × property matrix.
    fn cell(r: &RunReport, key: &str) -> &'static str {
        match r.property(key).map(|p| p.verdict) {
            Some(Verdict::Holds) => "ok",
            Some(Verdict::Violated) => "FAIL",
            Some(Verdict::ExampleFound) => "yes",
            Some(Verdict::ExampleNotFound) => "MISS",
            Some(Verdict::NotChecked) | None => "·",
        }
    }

    /// The text summary: the preset × property matrix, the union coverage, the result.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "memtx suite{}: {} presets, each exhaustive within its bounds unless marked",
            if self.quick { " --quick" } else { "" },
            self.presets.len()
        );
        let keys: Vec<&str> = PROPERTIES.iter().map(|p| p.key).collect();
        let _ = write!(
            out,
            "{:<13} {:>11} {:>5} {:>7}",
            "preset", "states", "depth", "secs"
        );
        for k in &keys {
            let _ = write!(out, " {k:>4}");
        }
        let _ = writeln!(out, "  rules");
        for r in &self.presets {
            let _ = write!(
                out,
                "{:<13} {:>11} {:>5} {:>7.1}",
                r.config.preset, r.unique_states, r.max_depth, r.seconds
            );
            for k in &keys {
                let _ = write!(out, " {:>4}", Self::cell(r, k));
            }
            let rules = rules_cell(r);
            let complete = if r.coverage.is_exhaustive() {
                String::new()
            } else {
                format!("  ({})", r.coverage)
            };
            let _ = writeln!(out, "  {rules}{complete}");
        }
        let _ = writeln!(
            out,
            "(ok: invariant holds; yes: example reached; ·: example not required of this preset)"
        );
        for r in &self.presets {
            for p in r.properties.iter().filter(|p| p.verdict.is_failure()) {
                match (&p.trace, &p.replay_command) {
                    (Some(trace), Some(replay)) => {
                        let _ = writeln!(
                            out,
                            "{} {} {}: counterexample of {} steps saved to {trace}\n  replay: {replay}",
                            r.config.preset,
                            p.key,
                            p.verdict,
                            p.trace_len.unwrap_or_default()
                        );
                    }
                    _ => {
                        let _ = writeln!(out, "{} {} {}", r.config.preset, p.key, p.verdict);
                    }
                }
            }
        }
        let _ = writeln!(out, "union: {}", self.union.summary_line());
        if let Some(sim) = &self.simulation {
            let _ = writeln!(out, "{}:", sim.heading());
            let _ = writeln!(out, "  {:<27} {:<8} result", "variant", "property");
            for run in &sim.runs {
                let _ = writeln!(
                    out,
                    "  {:<27} {:<8} {}",
                    run.variant,
                    run.property.unwrap_or("all"),
                    run.outcome()
                );
            }
        }
        let _ = writeln!(out, "{}", self.result_line());
        out
    }

    /// `result: PASS (…)` or `result: FAIL (what failed)`.
    pub fn result_line(&self) -> String {
        if self.passed() {
            let simulated = match &self.simulation {
                Some(sim) => format!(
                    "; simulating {}, every run showed what it must: no violation under memtx, each variant's defect under it",
                    sim.preset
                ),
                None => String::new(),
            };
            format!("result: PASS (every invariant holds on every preset, every example and every rule is exercised{simulated})")
        } else {
            format!("result: FAIL ({})", self.failures.join("; "))
        }
    }

    /// The suite as Markdown (`--report DIR` writes it as `suite.md`).
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# memtx suite{}\n",
            if self.quick { " --quick" } else { "" }
        );
        let _ = writeln!(
            s,
            "**{}.** Command: `{}`. {}\n",
            if self.passed() { "PASS" } else { "FAIL" },
            self.command,
            self.union.summary_line()
        );
        let keys: Vec<&str> = PROPERTIES.iter().map(|p| p.key).collect();
        let _ = write!(s, "| preset | states | depth | seconds |");
        for k in &keys {
            let _ = write!(s, " {k} |");
        }
        let _ = writeln!(s, " rules |");
        let _ = write!(s, "|---|---:|---:|---:|");
        for _ in &keys {
            let _ = write!(s, "---|");
        }
        let _ = writeln!(s, "---:|");
        for r in &self.presets {
            let _ = write!(
                s,
                "| [`{}`]({}-memtx.md) | {} | {} | {:.1} |",
                r.config.preset, r.config.preset, r.unique_states, r.max_depth, r.seconds
            );
            for k in &keys {
                let _ = write!(s, " {} |", Self::cell(r, k));
            }
            let rules = rules_cell(r);
            let _ = writeln!(s, " {rules} |");
        }
        if !self.failures.is_empty() {
            let _ = writeln!(s, "\n## Failures\n");
            for f in &self.failures {
                let _ = writeln!(s, "- {f}");
            }
        }
        if let Some(sim) = &self.simulation {
            let _ = writeln!(s, "\n## {}\n", capitalise(&sim.heading()));
            let _ = writeln!(s, "| variant | property | expected | result | replay |");
            let _ = writeln!(s, "|---|---|---|---|---|");
            for run in &sim.runs {
                let _ = writeln!(
                    s,
                    "| `{}` | {} | {} | {} | {} |",
                    run.variant,
                    run.property.unwrap_or("all"),
                    run.expected(),
                    run.outcome(),
                    run.violation
                        .as_ref()
                        .map_or(String::new(), |v| format!("`{}`", v.replay))
                );
            }
        }
        let _ = writeln!(s, "\n## Union rule coverage\n");
        s.push_str(&self.union.table_markdown());
        s
    }
}

/// The swarm simulations of `suite --simulate`: one preset (the whole protocol), one time
/// budget per run, every variant.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteSimulation {
    /// The preset walked (`full`).
    pub preset: String,
    /// The most time each run may take, as given (`2m`).
    pub budget: String,
    /// The seed of every run.
    pub seed: u64,
    /// Worker threads per run.
    pub threads: usize,
    /// One run under `memtx`, then one per variant and property it is expected to break.
    pub runs: Vec<SuiteSimulationRun>,
}

impl SuiteSimulation {
    /// `simulation of full, at most 2m per run, seed 1, 2 threads`.
    pub fn heading(&self) -> String {
        format!(
            "simulation of {}, at most {} per run, seed {}, {} thread(s)",
            self.preset, self.budget, self.seed, self.threads
        )
    }
}

/// One swarm run of the suite: a variant, and the property it must break (or, under
/// `memtx`, every property, none of which may break).
#[derive(Clone, Debug, Serialize)]
pub struct SuiteSimulationRun {
    /// The variant's name.
    pub variant: &'static str,
    /// The one property judged, or `None`: all of them.
    pub property: Option<&'static str>,
    /// Walks run.
    pub walks: u64,
    /// Steps taken.
    pub steps: u64,
    /// Wall-clock seconds of the walks.
    pub seconds: f64,
    /// Wall-clock seconds of the whole run: the walks, shortening and saving the trace.
    pub total_seconds: f64,
    /// Why the run ended.
    pub end: SimulationEnd,
    /// The violation found, shortened and saved.
    pub violation: Option<SimulatedViolation>,
    /// The command that runs exactly these walks again.
    pub reproduce: String,
    /// Whether the saved trace replays and meets its expectation (`None`: no trace, or not
    /// replayed).
    pub replays: Option<bool>,
}

impl SuiteSimulationRun {
    /// One run's summary, from the simulation's report (`replays`: whether its saved trace
    /// replays, if it has one).
    pub fn from_report(
        variant: &'static str,
        property: Option<&'static str>,
        report: SimulationReport,
        total: std::time::Duration,
        replays: Option<bool>,
    ) -> SuiteSimulationRun {
        SuiteSimulationRun {
            variant,
            property,
            walks: report.walks,
            steps: report.steps,
            seconds: report.seconds,
            total_seconds: total.as_secs_f64(),
            end: report.end,
            violation: report.violation,
            reproduce: report.reproduce,
            replays,
        }
    }

    /// What the run must show: no violation of any property, or one of its property.
    pub fn expected(&self) -> String {
        match self.property {
            None => "no violation".into(),
            Some(key) => format!("{key} violated"),
        }
    }

    /// Did the run show what it must?
    pub fn as_expected(&self) -> bool {
        match (self.property, &self.violation) {
            (None, None) => self.end != SimulationEnd::Interrupted,
            (Some(key), Some(v)) => v.property == key && self.replays != Some(false),
            _ => false,
        }
    }

    /// The run in a line: what it found, after how much, and where the trace is.
    pub fn outcome(&self) -> String {
        let walks = if self.walks == 1 { "walk" } else { "walks" };
        let effort = format!("{} {walks}, {:.1} s", self.walks, self.seconds);
        match (&self.violation, self.end) {
            (Some(v), _) if self.replays == Some(false) => format!(
                "{} violated in walk {} ({effort}), but its saved trace {} does NOT replay",
                v.property, v.walk, v.trace
            ),
            (Some(v), _) => format!(
                "{} violated in walk {} ({effort}), shortened from {} to {} steps in {:.1} s: {}",
                v.property,
                v.walk,
                v.walk_steps,
                v.steps,
                self.total_seconds - self.seconds,
                v.trace
            ),
            (None, SimulationEnd::Interrupted) => format!("interrupted ({effort})"),
            (None, _) => match self.property {
                None => format!("no violation in {effort}"),
                Some(key) => format!("{key} NOT FOUND in {effort}; reproduce: {}", self.reproduce),
            },
        }
    }
}

/// `text` with its first letter in upper case.
fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}

/// A preset's rule coverage as `exercised/total`, or `-` where it was not collected.
fn rules_cell(r: &RunReport) -> String {
    r.rules
        .as_ref()
        .map_or("-".into(), |c| format!("{}/{}", c.exercised, c.total))
}
