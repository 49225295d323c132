//! [`RunReport`]: what one check proved, printed as text or JSON and written as JSON and
//! Markdown with `--report`.

use super::config::config_markdown;
use super::text::{capitalize, escape, group, mib, on_off};
use super::{html, RuleCoverage, PROTOCOL_DOC};
use crate::error::{ErrorKind, UserError};
use crate::fsutil::{json_pretty, read_text, write_atomic};
use crate::trace::{PropertyKind, PropertyRef};
use memtx_model::properties::PropertyDef;
use memtx_model::{Config, Variant};
use serde::{Deserialize, Serialize};
use std::fmt::{self, Write as _};
use std::path::Path;

/// What a run proves about its bounds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Coverage {
    /// Every reachable state within the bounds was visited.
    Exhaustive,
    /// The search stopped before that; verdicts of `holds` only cover what was visited.
    StoppedEarly {
        /// Why (memory, max states, max depth, ...).
        reason: String,
    },
}

impl Coverage {
    /// Did the run visit every reachable state?
    pub fn is_exhaustive(&self) -> bool {
        matches!(self, Coverage::Exhaustive)
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Coverage::Exhaustive => f.write_str("exhaustive within these bounds"),
            Coverage::StoppedEarly { reason } => {
                let reason = reason.strip_prefix("stopped early: ").unwrap_or(reason);
                write!(f, "stopped early: {reason}")
            }
        }
    }
}

/// The verdict on one property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// An invariant with no counterexample among the visited states.
    Holds,
    /// An invariant with a counterexample.
    Violated,
    /// An example property reached.
    ExampleFound,
    /// An example property never reached (the model may be vacuous).
    ExampleNotFound,
    /// Not selected for this run.
    NotChecked,
}

impl Verdict {
    /// The verdict for a property of `kind`, given whether a discovery was found.
    pub fn from_discovery(kind: PropertyKind, found: bool) -> Self {
        match (kind, found) {
            (PropertyKind::Always, false) => Verdict::Holds,
            (PropertyKind::Always, true) => Verdict::Violated,
            (PropertyKind::Sometimes, true) => Verdict::ExampleFound,
            (PropertyKind::Sometimes, false) => Verdict::ExampleNotFound,
        }
    }
    /// A failing verdict: an invariant violated, or an example never reached.
    pub fn is_failure(self) -> bool {
        matches!(self, Verdict::Violated | Verdict::ExampleNotFound)
    }
    /// Human words: `holds`, `violated`, `example found`, `example not found`, `not checked`.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
            Verdict::ExampleFound => "example found",
            Verdict::ExampleNotFound => "example not found",
            Verdict::NotChecked => "not checked",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.words())
    }
}

/// One property's line of a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyOutcome {
    /// Key (`I2`).
    pub key: String,
    /// Full name.
    pub name: String,
    /// Invariant or example.
    pub kind: PropertyKind,
    /// What the run found.
    pub verdict: Verdict,
    /// Steps of the discovery path, when one was found.
    #[serde(default)]
    pub trace_len: Option<usize>,
    /// The saved trace, when one was written.
    #[serde(default)]
    pub trace: Option<String>,
    /// The exact command that replays the trace.
    #[serde(default)]
    pub replay_command: Option<String>,
    /// A violation's counterexample, step by step: the action, what it changed, the
    /// invariants failing after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Vec<crate::trace::StepRow>>,
}

impl PropertyOutcome {
    /// An outcome for a registered property, without trace.
    pub fn new(def: &PropertyDef, verdict: Verdict) -> Self {
        let p = PropertyRef::of(def);
        PropertyOutcome {
            key: p.key,
            name: p.name,
            kind: p.kind,
            verdict,
            trace_len: None,
            trace: None,
            replay_command: None,
            counterexample: None,
        }
    }
    /// The same outcome with a discovery of `len` steps saved at `trace`, replayed by `command`.
    pub fn with_trace(
        mut self,
        len: usize,
        trace: Option<String>,
        command: Option<String>,
    ) -> Self {
        self.trace_len = Some(len);
        self.trace = trace;
        self.replay_command = command;
        self
    }
    /// The matrix cell text: `holds`, `violated (len N)`, ...
    pub fn cell(&self) -> String {
        match (self.verdict, self.trace_len) {
            (Verdict::Violated, Some(n)) => format!("violated (len {n})"),
            (Verdict::ExampleFound, Some(n)) => format!("example found (len {n})"),
            (v, _) => v.words().to_string(),
        }
    }
}

/// One progress sample of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the run started.
    pub seconds: f64,
    /// Distinct states so far.
    pub distinct: u64,
    /// States generated so far, repeats included.
    pub generated: u64,
    /// Bytes the explorer held.
    pub memory_bytes: u64,
    /// The process's resident memory when the sample was taken (what `peak memory` is the
    /// peak of); absent where the system does not say (reports written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_bytes: Option<u64>,
}

/// What a run establishes as a whole: the `result` of `--json` and the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Complete, every invariant holds and every example was reached; or, however early
    /// the run ended, every property it checked is an example it reached (exit 0).
    Pass,
    /// An invariant is violated (complete or not: the counterexample is real), or a complete
    /// run never reached an example (exit 1).
    Fail,
    /// Stopped early (a limit, memory, an interrupt) with no violation and a property left
    /// open: nothing is proved beyond the states visited (exit 3).
    Incomplete,
}

impl Outcome {
    /// The process exit code: 0, 1 or 3 (2 is a user error).
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Pass => 0,
            Outcome::Fail => 1,
            Outcome::Incomplete => 3,
        }
    }
}

/// Everything one check established (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// `memtx <version>`.
    pub tool: String,
    /// The command line.
    pub command: String,
    /// The engine that explored (`fast`, `stateright`).
    pub engine: String,
    /// The whole configuration.
    pub config: Config,
    /// The protocol variant (as in `config`, repeated for readers).
    pub variant: Variant,
    /// Distinct states.
    pub unique_states: u64,
    /// States generated, repeats included.
    pub total_states: u64,
    /// The maximum depth reached.
    pub max_depth: usize,
    /// Distinct states per depth (may be empty if the engine does not count them).
    #[serde(default)]
    pub states_per_depth: Vec<u64>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Distinct states per second.
    pub states_per_second: f64,
    /// Peak resident memory, if known.
    #[serde(default)]
    pub peak_memory_bytes: Option<u64>,
    /// Estimated probability that a fingerprint collision hid a state, if fingerprints are used.
    #[serde(default)]
    pub collision_probability: Option<f64>,
    /// Whether symmetry reduction was on.
    pub symmetry: bool,
    /// Progress samples taken during the run (about every 200 ms, and at the end): what the
    /// HTML report plots over time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Sample>,
    /// With symmetry: the renamings applied (agents, values within slots, interchangeable
    /// sources) and the group's order, e.g. `agents (2), values within each of 1 slot(s)
    /// (2): 4 renamings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symmetry_group: Option<String>,
    /// Worker threads.
    #[serde(default)]
    pub threads: usize,
    /// Whether exact (collision-free) mode was on.
    #[serde(default)]
    pub exact: bool,
    /// Visited-set bytes per distinct state (fast engine).
    #[serde(default)]
    pub visited_bytes_per_state: Option<f64>,
    /// Parent-log bytes per distinct state (fast engine): what counterexample paths are
    /// rebuilt from.
    #[serde(default)]
    pub parent_log_bytes_per_state: Option<f64>,
    /// Exhaustive or stopped early.
    pub coverage: Coverage,
    /// Rule coverage: how often each rule of the protocol fired (fast engine; `None` for
    /// stateright's BFS, which cannot collect it).
    #[serde(default)]
    pub rules: Option<RuleCoverage>,
    /// One entry per property.
    pub properties: Vec<PropertyOutcome>,
    /// `pass`, `fail` or `incomplete` (see [`Outcome`]); written for readers of the JSON,
    /// recomputed from the rest by [`RunReport::outcome`].
    #[serde(default = "default_outcome")]
    pub result: Outcome,
    /// Whether the run visited every reachable state within its bounds.
    #[serde(default)]
    pub complete: bool,
    /// For a run finished by `memtx resume`: the 0-based level of the checkpoint it resumed
    /// from (the first level it expanded). Its counts, levels, verdicts, coverage and
    /// counterexamples are those of the uninterrupted run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_from_level: Option<usize>,
    /// For a run over timely workers (`--local`, `--processes`): processes, workers per
    /// process, per-process peak memory and bytes of successor records exchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::explore::ClusterReport>,
}

fn default_outcome() -> Outcome {
    Outcome::Incomplete
}

impl RunReport {
    /// The run's outcome: a violation fails it even when it stopped early (the
    /// counterexample is real); otherwise an incomplete run proves nothing beyond what it
    /// visited, unless every property it checked is an example it found; a complete run passes
    /// when every checked example was reached.
    pub fn outcome(&self) -> Outcome {
        let violated = self
            .properties
            .iter()
            .any(|p| p.verdict == Verdict::Violated);
        if violated {
            Outcome::Fail
        } else if !self.coverage.is_exhaustive() && !self.only_examples_all_found() {
            Outcome::Incomplete
        } else if self.properties.iter().any(|p| p.verdict.is_failure()) {
            Outcome::Fail
        } else {
            Outcome::Pass
        }
    }

    /// Was every property the run checked an example, and was each found? Then nothing it
    /// was asked is left open however early it ended: a found example is a path to a state,
    /// which no state left unvisited can undo (`--property E1 --until-decided`).
    fn only_examples_all_found(&self) -> bool {
        let mut checked = self
            .properties
            .iter()
            .filter(|p| p.verdict != Verdict::NotChecked)
            .peekable();
        checked.peek().is_some() && checked.all(|p| p.verdict == Verdict::ExampleFound)
    }

    /// The report with its `result` field set from [`RunReport::outcome`].
    pub fn with_outcome(mut self) -> Self {
        self.result = self.outcome();
        self
    }

    /// True when the outcome is [`Outcome::Pass`].
    pub fn passed(&self) -> bool {
        self.outcome() == Outcome::Pass
    }

    /// One property's verdict in words, honest about an incomplete run: an invariant "holds
    /// so far (to depth d)", an example is "not reached yet".
    pub fn cell(&self, p: &PropertyOutcome) -> String {
        if self.coverage.is_exhaustive() {
            return p.cell();
        }
        match p.verdict {
            Verdict::Holds => format!("holds so far (to depth {})", self.max_depth),
            Verdict::ExampleNotFound => "not reached yet".into(),
            _ => p.cell(),
        }
    }

    /// The result line: `result: PASS (…)`, `result: FAIL (I2 violated; E2 not reached)`,
    /// `result: INCOMPLETE (stopped by max states)`.
    pub fn result_line(&self) -> String {
        let failures: Vec<String> = self
            .properties
            .iter()
            .filter(|p| p.verdict.is_failure())
            .filter(|p| self.coverage.is_exhaustive() || p.verdict == Verdict::Violated)
            .map(|p| match p.verdict {
                Verdict::Violated => format!("{} violated", p.key),
                _ => format!("{} not reached", p.key),
            })
            .collect();
        match self.outcome() {
            Outcome::Pass if !self.coverage.is_exhaustive() => format!(
                "result: PASS (every property checked is an example, and each was found; the run \
                 visited {} states and says nothing of the others)",
                self.unique_states
            ),
            Outcome::Pass => {
                "result: PASS (every invariant holds, every example found)".to_string()
            }
            Outcome::Fail => format!("result: FAIL ({})", failures.join("; ")),
            Outcome::Incomplete => {
                let reason = match &self.coverage {
                    Coverage::StoppedEarly { reason } => reason
                        .strip_prefix("stopped early: ")
                        .unwrap_or(reason)
                        .to_string(),
                    Coverage::Exhaustive => "nothing".into(),
                };
                format!(
                    "result: INCOMPLETE (stopped by {reason}; no violation among the {} states visited)",
                    self.unique_states
                )
            }
        }
    }

    /// The outcome of property `key`, if listed.
    pub fn property(&self, key: &str) -> Option<&PropertyOutcome> {
        self.properties
            .iter()
            .find(|p| p.key.eq_ignore_ascii_case(key))
    }

    /// The report as pretty JSON.
    pub fn to_json_string(&self) -> String {
        json_pretty(self)
    }

    /// Writes the JSON form atomically, its trace paths relative to the file's directory
    /// ([`RunReport::relocated`]).
    pub fn write_json(&self, path: &Path) -> Result<(), UserError> {
        let here = self.relocated(path);
        write_atomic(path, here.to_json_string().as_bytes())
    }

    /// This report as it reads from the directory of the report file `report_path`: every
    /// trace path (written relative to where the check ran) made relative to that directory,
    /// and the replay commands with it, so that the report folder and the traces can be moved
    /// or shared together and the links still work.
    pub fn relocated(&self, report_path: &Path) -> RunReport {
        let dir = match report_path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut out = self.clone();
        for p in &mut out.properties {
            if let Some(t) = &p.trace {
                let rel = crate::fsutil::relative_path(Path::new(t), dir);
                p.replay_command = Some(crate::trace::replay_command(&rel));
                p.trace = Some(rel.display().to_string());
            }
        }
        out
    }

    /// Writes the HTML page ([`html::run_page`]) atomically, its trace links relative to the
    /// file's directory, drawing each counterexample from its saved trace (read from the path
    /// the report names, relative to where the check ran).
    pub fn write_html(&self, path: &Path) -> Result<(), UserError> {
        let mut traces = Vec::new();
        for p in &self.properties {
            if let (Verdict::Violated, Some(t)) = (p.verdict, &p.trace) {
                if let Ok(trace) = crate::trace::Trace::read(Path::new(t)) {
                    traces.push((p.key.clone(), trace));
                }
            }
        }
        let page = html::run_page(&self.relocated(path), &traces);
        write_atomic(path, page.as_bytes())
    }

    /// Reads a JSON report written by [`RunReport::write_json`].
    pub fn read_json(path: &Path) -> Result<RunReport, UserError> {
        let text = read_text(path, "report")?;
        serde_json::from_str(&text).map_err(|e| {
            UserError::with_fix(
                ErrorKind::Malformed,
                format!("{} is not a memtx run report ({e})", path.display()),
                "pass a report .json written by memtx check",
            )
        })
    }

    /// Writes the Markdown form atomically, its trace links relative to the file's directory
    /// ([`RunReport::relocated`]).
    pub fn write_markdown(&self, path: &Path) -> Result<(), UserError> {
        write_atomic(path, self.relocated(path).to_markdown().as_bytes())
    }

    /// The report as Markdown: summary, configuration, states per depth, properties.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# memtx check: preset `{}`, variant `{}`\n",
            self.config.preset,
            self.variant.name()
        );
        let _ = writeln!(s, "**{}**\n", escape(&self.result_line()));
        let _ = writeln!(
            s,
            "{}. {}\n",
            capitalize(&self.coverage.to_string()),
            match self.outcome() {
                Outcome::Pass =>
                    "Every checked invariant holds and every checked example was reached.",
                Outcome::Fail => "Some property failed: see the table below.",
                Outcome::Incomplete =>
                    "No violation among the states visited, but the run stopped early: nothing is proved beyond them.",
            }
        );
        let _ = writeln!(s, "| | |\n|---|---|");
        let mut rows: Vec<(&str, String)> = vec![
            ("tool", self.tool.clone()),
            ("command", format!("`{}`", self.command)),
            ("engine", self.engine.clone()),
            (
                "variant",
                format!(
                    "`{}`: removes {}",
                    self.variant.name(),
                    self.variant.info().removes
                ),
            ),
            ("unique states", group(self.unique_states)),
            ("total states", group(self.total_states)),
            ("max depth", self.max_depth.to_string()),
            ("seconds", format!("{:.2}", self.seconds)),
            ("states/s", group(self.states_per_second.round() as u64)),
            (
                "peak memory",
                self.peak_memory_bytes.map_or("unknown".into(), mib),
            ),
            (
                "visited set / parent log",
                match (
                    self.visited_bytes_per_state,
                    self.parent_log_bytes_per_state,
                ) {
                    (Some(v), Some(p)) => format!("{v:.1} / {p:.1} bytes per state"),
                    _ => "– (stateright engine)".into(),
                },
            ),
            (
                "collision probability",
                self.collision_probability
                    .map_or("none (no fingerprints)".into(), |p| format!("{p:.3e}")),
            ),
            (
                "symmetry reduction",
                match &self.symmetry_group {
                    Some(group) if self.symmetry => format!("on: {group}"),
                    _ => on_off(self.symmetry).into(),
                },
            ),
            ("coverage", self.coverage.to_string()),
            (
                "rule coverage",
                self.rules.as_ref().map_or(
                    "not collected (stateright engine)".into(),
                    RuleCoverage::summary_line,
                ),
            ),
        ];
        if let Some(c) = &self.cluster {
            rows.insert(3, ("processes", c.summary(self.unique_states)));
        }
        if let Some(level) = self.resumed_from_level {
            rows.insert(
                2,
                (
                    "resumed",
                    format!("from a checkpoint at level {level} (the result is the uninterrupted run's)"),
                ),
            );
        }
        for (k, v) in rows {
            let _ = writeln!(s, "| {k} | {} |", escape(&v));
        }
        let _ = writeln!(s, "\n## Configuration\n");
        s.push_str(&config_markdown(&self.config));
        if !self.states_per_depth.is_empty() {
            let _ = writeln!(s, "\n## Distinct states per depth\n");
            let _ = writeln!(s, "| depth | states |\n|---:|---:|");
            for (d, n) in self.states_per_depth.iter().enumerate() {
                let _ = writeln!(s, "| {d} | {} |", group(*n));
            }
        }
        if let Some(rules) = &self.rules {
            let _ = writeln!(s, "\n## Rule coverage\n");
            let _ = writeln!(s, "{}\n", rules.summary_line());
            s.push_str(&rules.table_markdown());
        }
        let _ = writeln!(s, "\n## Properties\n");
        let _ = writeln!(
            s,
            "Each property's full statement, and the rules that judge it: `{}` in the memtx repository.\n",
            PROTOCOL_DOC
        );
        let _ = writeln!(
            s,
            "| property | kind | verdict | trace | replay |\n|---|---|---|---|---|"
        );
        for p in &self.properties {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                escape(&p.name),
                p.kind.name(),
                if p.verdict.is_failure() {
                    format!("**{}**", self.cell(p))
                } else {
                    self.cell(p)
                },
                p.trace.as_deref().map_or("-".into(), |t| format!(
                    "[`{}`]({})",
                    escape(t),
                    t.replace(' ', "%20")
                )),
                p.replay_command
                    .as_deref()
                    .map_or("-".into(), |c| format!("`{}`", escape(c))),
            );
        }
        s.push_str(&self.counterexamples_markdown());
        s
    }

    /// Each violation's counterexample as a step table (empty when there is none).
    fn counterexamples_markdown(&self) -> String {
        let mut s = String::new();
        let with_steps: Vec<&PropertyOutcome> = self
            .properties
            .iter()
            .filter(|p| p.counterexample.is_some())
            .collect();
        if with_steps.is_empty() {
            return s;
        }
        let _ = writeln!(s, "\n## Counterexamples\n");
        for p in with_steps {
            let rows = p.counterexample.as_deref().unwrap_or_default();
            let _ = writeln!(s, "### {}\n", escape(&p.name));
            if let (Some(t), Some(cmd)) = (&p.trace, &p.replay_command) {
                let _ = writeln!(
                    s,
                    "{} steps from the initial state; trace [`{}`]({}), replayed by `{}` (paths relative to this report).\n",
                    rows.len(),
                    escape(t),
                    t.replace(' ', "%20"),
                    escape(cmd)
                );
            }
            let _ = writeln!(
                s,
                "| step | action | what changed | invariants failing after it |\n|---:|---|---|---|"
            );
            for r in rows {
                let failing = if r.failing.is_empty() {
                    "–".to_string()
                } else {
                    format!("**{}**", r.failing.join(", "))
                };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    r.step,
                    escape(&r.action),
                    escape(&r.changed),
                    failing
                );
            }
            s.push('\n');
        }
        s
    }
}
