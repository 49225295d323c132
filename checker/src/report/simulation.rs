//! The report of one simulation (`memtx simulate`): what the walks did and found. A
//! simulation never passes: it says how many walks found no violation, or the violation.

use super::RuleCoverage;
use crate::simulate::shrink::Search;
use crate::simulate::{ProgressPoint, Sighting, SimulationEnd};
use memtx_model::config::Config;
use memtx_model::Variant;
use serde::Serialize;
use std::fmt::Write as _;

/// What `memtx simulate --json` prints.
#[derive(Clone, Debug, Serialize)]
pub struct SimulationReport {
    /// The memtx that ran it.
    pub tool: String,
    /// The command line.
    pub command: String,
    /// The command that runs exactly these walks again (`--walks N --seed S`).
    pub reproduce: String,
    /// The configuration walked.
    pub config: Config,
    /// The protocol variant.
    pub variant: Variant,
    /// The run's seed.
    pub seed: u64,
    /// Worker threads (the result does not depend on them).
    pub threads: usize,
    /// The deepest a walk could go.
    pub max_walk_depth: usize,
    /// Walks run.
    pub walks: u64,
    /// Operations applied, over every walk.
    pub steps: u64,
    /// Operations proposed, tried and refused by the protocol.
    pub refused: u64,
    /// Walks that ended before their depth bound: nothing proposed was enabled.
    pub stuck_walks: u64,
    /// The longest walk's steps.
    pub deepest_walk: usize,
    /// Walks by length: `[length, walks]` for each length some walk took.
    pub walk_lengths: Vec<(usize, u64)>,
    /// Estimated distinct states the walks visited.
    pub distinct_states_estimate: u64,
    /// How the estimate is made.
    pub distinct_states_method: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Operations applied per second.
    pub steps_per_second: f64,
    /// Each property: its key, name and what the walks saw.
    pub properties: Vec<SimulatedProperty>,
    /// Rule coverage over every attempted step.
    pub rules: RuleCoverage,
    /// The violation found, shortened.
    pub violation: Option<SimulatedViolation>,
    /// Why the run ended.
    pub end: SimulationEnd,
    /// Coverage and distinct states after 1, 2, 4, … batches of walks and at the end.
    pub progress: Vec<ProgressPoint>,
    /// `no-violation`, `violation` or `interrupted`.
    pub result: &'static str,
}

/// One property as the walks saw it.
#[derive(Clone, Debug, Serialize)]
pub struct SimulatedProperty {
    /// `I2`, `E5`.
    pub key: &'static str,
    /// The property as a sentence.
    pub name: &'static str,
    /// `invariant` or `example`.
    pub kind: &'static str,
    /// `violated`, `not violated in the walks`, `reached`, `not reached`.
    pub verdict: &'static str,
    /// For an example: where it was first reached.
    pub first: Option<Sighting>,
}

/// The violation a walk found, after shortening.
#[derive(Clone, Debug, Serialize)]
pub struct SimulatedViolation {
    /// The invariant's key.
    pub property: &'static str,
    /// The walk that found it.
    pub walk: u64,
    /// Steps the walk took to it.
    pub walk_steps: usize,
    /// Steps left after removing steps.
    pub after_removal: usize,
    /// Steps left after the search over the trace's own operations.
    pub after_projection: usize,
    /// Steps of the saved trace.
    pub steps: usize,
    /// The bounded search's conclusion.
    pub search: Option<Search>,
    /// States the bounded search explored.
    pub searched_states: u64,
    /// The saved trace.
    pub trace: String,
    /// The command that replays it.
    pub replay: String,
}

impl SimulationReport {
    /// The exit code: 0 no violation, 1 a violation, 130 interrupted.
    pub fn exit_code(&self) -> u8 {
        match self.end {
            SimulationEnd::Violation => 1,
            SimulationEnd::Interrupted => crate::interrupt::EXIT_CODE,
            SimulationEnd::Walks | SimulationEnd::Time => 0,
        }
    }

    /// The JSON form.
    pub fn to_json_string(&self) -> String {
        crate::fsutil::json_pretty(self)
    }

    /// The text summary.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "memtx simulate: preset {} variant {} ({}) seed {} threads {}",
            self.config.preset,
            self.variant.name(),
            super::bounds_phrase(&self.config),
            self.seed,
            self.threads
        );
        let _ = writeln!(
            out,
            "walks {}  steps {}  refused {}  deepest walk {} (bound {})  {:.2} s  {:.0} steps/s",
            self.walks,
            self.steps,
            self.refused,
            self.deepest_walk,
            self.max_walk_depth,
            self.seconds,
            self.steps_per_second
        );
        let _ = writeln!(
            out,
            "distinct states seen: about {} ({})",
            self.distinct_states_estimate, self.distinct_states_method
        );
        out.push_str(&self.rules.summary_text());
        // Every verdict in one column, however long a statement (the name starts with the key).
        let width = self.properties.iter().map(|p| p.name.chars().count()).max();
        for p in &self.properties {
            let at = p
                .first
                .map(|s| format!(" (walk {}, step {})", s.walk, s.step))
                .unwrap_or_default();
            let width = width.unwrap_or(0);
            let _ = writeln!(out, "  {:<width$}  {}{at}", p.name, p.verdict);
        }
        let _ = writeln!(out, "{}", self.result_line());
        if let Some(v) = &self.violation {
            let _ = writeln!(out, "trace: {}", v.trace);
            let _ = writeln!(out, "replay: {}", v.replay);
        }
        let _ = writeln!(out, "reproduce: {}", self.reproduce);
        out
    }

    /// `result: VIOLATION of …` (with how the trace was shortened) or `result: no violation in
    /// N walks (…)`: never PASS.
    pub fn result_line(&self) -> String {
        match &self.violation {
            Some(v) => {
                let search = match v.search {
                    Some(Search::FoundShorter) => format!(
                        "; a breadth-first search of {} states found a shortest one",
                        v.searched_states
                    ),
                    Some(Search::Shortest) => format!(
                        "; shortest: a search of every state within {} steps ({} states) found none shorter",
                        v.steps.saturating_sub(1),
                        v.searched_states
                    ),
                    Some(Search::Budget) => format!(
                        "; a search stopped at its budget of {} states before proving it shortest",
                        v.searched_states
                    ),
                    Some(Search::Memory) => format!(
                        "; a search stopped at --max-memory after {} states before proving it shortest",
                        v.searched_states
                    ),
                    None => String::new(),
                };
                let projection = if v.after_projection < v.after_removal {
                    format!(", a search over its own operations {}", v.after_projection)
                } else {
                    String::new()
                };
                format!(
                    "result: VIOLATION of {} in walk {} after {} steps, shortened to {} (removal left {}{projection}{search})",
                    v.property, v.walk, v.walk_steps, v.steps, v.after_removal
                )
            }
            None => {
                let how = match self.end {
                    SimulationEnd::Interrupted => "interrupted",
                    SimulationEnd::Time => "time up",
                    _ => "every walk run",
                };
                format!(
                    "result: no violation in {} walks ({how}); a simulation proves nothing beyond the walks taken",
                    self.walks
                )
            }
        }
    }
}
