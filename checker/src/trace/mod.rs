//! Traces: a discovered path saved as a versioned, self-describing JSON file, or a scenario
//! written by hand (the format, exit codes and a worked example: `docs/traces.md`).
//!
//! When a check finds a counterexample (an `always` property fails) or an example (a `sometimes`
//! property holds), memtx saves the path that reaches it as a *trace*. A trace is meant to be
//! replayed ([`replay`]) months later, by someone who did not run the check, possibly with a
//! newer memtx. So it carries everything needed to replay and judge it:
//!
//! ```json
//! {
//!   "format": "memtx-trace",
//!   "version": 1,
//!   "tool": "memtx 0.1.0",
//!   "command": "memtx check --preset quick --variant missed-cascade",
//!   "config": { "preset": "quick", "bounds": { "agents": 1, "...": "..." }, "domain": { "...": "..." }, "variant": "missed-cascade" },
//!   "property": { "key": "I2", "name": "I2 every descendant of a retracted record is repaired", "kind": "always" },
//!   "expectation": { "kind": "violation", "property": "I2", "step": 7 },
//!   "steps": [
//!     { "action": { "op": "begin", "agent": 0, "tier": "medium", "isolation": "committed-read" },
//!       "label": "a0 Begin Medium CommittedRead",
//!       "state": { "clock": 0, "next_seq": 0, "records": [], "txns": [ { "...": "..." }, null, null, null ], "log": [], "ghost_violated": [] } }
//!   ],
//!   "initial_state": { "clock": 0, "next_seq": 0, "records": [], "txns": [null, null, null, null], "log": [], "ghost_violated": [] }
//! }
//! ```
//!
//! * `format` and `version` identify the file. A reader refuses another format and any version it
//!   does not know, naming both, instead of misreading the file.
//! * `tool` and `command` say which memtx made it and how, so it can be made again.
//! * `config` is the whole [`Config`] (bounds, enumerated domains, variant): a trace is only
//!   replayed against the configuration it was made with ([`Trace::check_config`]).
//! * `property` names what was found; `expectation` says what a replay must observe (see
//!   [`Expectation`]). Step numbers count actions: step 0 is `initial_state`, step `k` is the state
//!   after the `k`-th action.
//! * each step holds the action (the model's [`Op`], with stable field names), its one-line label
//!   ([`memtx_model::display::op_line`]) for humans, and the state after it, in the compact form of
//!   [`memtx_model::state_serde`].
//!
//! A **scenario** (a trace written by hand) may leave out the states, labels, `tool`, `command`,
//! `property` and `expectation` (then every invariant must hold at every step), may name a
//! preset as its configuration (`{"preset": "quick", "bounds": {...}}`, overrides replacing the
//! preset's fields), and may give a step an `expect` ([`scenario::StepExpect`]: refused for a
//! reason, records' lifecycle states, violated invariants). Replay computes what is left out
//! ([`replay::ReplayReport::completed`]).
//!
//! Reading ([`Trace::read`], [`Trace::from_json_str`]) validates everything and reports each kind
//! of bad input as its own one-line [`UserError`]: too large ([`MAX_INPUT_BYTES`]), not JSON, a
//! duplicate key, wrong format tag, unknown version, unknown variant, unknown property, invalid
//! configuration, or a malformed field (named by its path, steps numbered from 1: `step 4:
//! action`), with any echoed value cut ([`crate::input`]).

pub mod command;
mod diff;
mod domain;
mod files;
pub mod itf;
mod read;
pub mod replay;
pub mod scenario;
mod steps;

use crate::error::{internal_bug, ErrorKind, InternalBug, UserError};
use crate::fsutil::{json_pretty, write_atomic};
use crate::input::{
    cut, cut_quoted, parse_json, read_limited, user_path, JsonError, MAX_INPUT_BYTES,
};
pub use diff::config_differences;
pub(crate) use diff::{json_differences, summarize};
pub(crate) use domain::domain_fault;
pub use files::{
    configuration_name, itf_path_for, regression_traces, replay_command, shell_quote, trace_path,
};
use memtx_model::config::VARIANTS;
use memtx_model::display::op_line;
use memtx_model::presets::preset;
use memtx_model::properties::{number_of, PropertyDef, INVARIANTS, PROPERTIES};
use memtx_model::{Config, Op, State, Variant};
use scenario::{malformed_expect, StepExpect};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;
pub use steps::{changed_records, changes, record_changes, step_rows, StepRow};

/// The `format` tag of every trace file.
pub const TRACE_FORMAT: &str = "memtx-trace";

/// The trace format version this memtx writes and reads.
pub const TRACE_VERSION: u64 = 1;

/// The file-name suffix of a trace.
pub const TRACE_SUFFIX: &str = ".trace.json";

/// `memtx <version>`: the tool that writes traces and reports.
pub fn tool_id() -> String {
    format!("memtx {}", env!("CARGO_PKG_VERSION"))
}

/// Whether a property is an invariant or an example (docs/protocol.md §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PropertyKind {
    /// Must hold in every reachable state (I1–I18); a discovery is a counterexample.
    Always,
    /// Must hold in some reachable state (E1–E11); a discovery is an example.
    Sometimes,
}

impl PropertyKind {
    /// The kind of a registered property.
    pub fn of(def: &PropertyDef) -> Self {
        if def.is_invariant() {
            PropertyKind::Always
        } else {
            PropertyKind::Sometimes
        }
    }
    /// `always` or `sometimes`.
    pub fn name(self) -> &'static str {
        match self {
            PropertyKind::Always => "always",
            PropertyKind::Sometimes => "sometimes",
        }
    }
}

/// A property as written into traces and reports: key, full name and kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyRef {
    /// Short key (`I2`, `E5`, ...).
    pub key: String,
    /// The full name (key and sentence).
    pub name: String,
    /// Invariant or example.
    pub kind: PropertyKind,
}

impl PropertyRef {
    /// The reference to a registered property.
    pub fn of(def: &PropertyDef) -> Self {
        PropertyRef {
            key: def.key.to_string(),
            name: def.name.to_string(),
            kind: PropertyKind::of(def),
        }
    }
    /// The registered property with this key, if memtx knows it.
    pub fn def(&self) -> Option<&'static PropertyDef> {
        PropertyDef::find(&self.key)
    }
}

/// What a replay of the trace must observe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpectationKind {
    /// The `always` property first fails at `step` (and not before).
    Violation,
    /// The `sometimes` property holds at `step`.
    Example,
    /// No `always` property fails at any step (e.g. a regression trace under the fixed protocol).
    AllHold,
}

/// The recorded expectation of a trace: a kind, and for a violation or an example the property
/// key and the step (0 = initial state, `k` = after the `k`-th action).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expectation {
    /// Violation, example or all-hold.
    pub kind: ExpectationKind,
    /// The property key (violation and example only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// The step (violation and example only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
}

impl Expectation {
    /// `key` first fails at `step`.
    pub fn violation(key: &str, step: usize) -> Self {
        Expectation {
            kind: ExpectationKind::Violation,
            property: Some(key.to_string()),
            step: Some(step),
        }
    }
    /// `key` holds at `step`.
    pub fn example(key: &str, step: usize) -> Self {
        Expectation {
            kind: ExpectationKind::Example,
            property: Some(key.to_string()),
            step: Some(step),
        }
    }
    /// No invariant fails anywhere.
    pub fn all_hold() -> Self {
        Expectation {
            kind: ExpectationKind::AllHold,
            property: None,
            step: None,
        }
    }
    /// One line for humans, e.g. `I2 first fails at step 7`.
    pub fn describe(&self) -> String {
        let key = self.property.as_deref().unwrap_or("?");
        let step = self.step.map_or("?".to_string(), |s| s.to_string());
        match self.kind {
            ExpectationKind::Violation => format!("{key} first fails at step {step}"),
            ExpectationKind::Example => format!("{key} holds at step {step}"),
            ExpectationKind::AllHold => "every invariant holds at every step".to_string(),
        }
    }
}

/// One step of a trace: the action, its label, the state it leads to and what it must show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The operation performed.
    pub action: Op,
    /// Its one-line rendering (informational; replay uses `action`). A file may leave it out:
    /// reading fills it in.
    pub label: String,
    /// The state after the operation; a hand-written file may leave it out (replay computes
    /// it). After a refused step it is the state before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    /// What the step must show (scenario files, [`scenario`]). Read by
    /// [`Trace::from_json_value`], which validates it; serde's derived `Deserialize` skips it.
    #[serde(default, skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub expect: Option<StepExpect>,
}

/// A saved path, or a scenario written by hand, with everything needed to replay and judge it
/// (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// Always [`TRACE_FORMAT`].
    pub format: String,
    /// Always [`TRACE_VERSION`] when written by this memtx.
    pub version: u64,
    /// What the file shows, in words (scenario files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool that wrote it (`memtx <version>`); empty for a hand-written file.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool: String,
    /// The command line that found it; empty for a hand-written file.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// The whole configuration it was made with.
    pub config: Config,
    /// The property it is about (a scenario may name none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<PropertyRef>,
    /// What a replay must observe (all-hold when the file names none).
    pub expectation: Expectation,
    /// The invariants of the property table when memtx recorded the states (`I1` …). A replay
    /// compares the recorded ghost verdicts on these only: an invariant added since is judged
    /// and shown, but a trace recorded before it existed cannot disagree with it. Absent (a
    /// hand-written file): every verdict is compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariants: Option<Vec<String>>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The state before the first step; a hand-written file may leave it out (it is the
    /// model's initial state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_state: Option<State>,
}

impl Trace {
    /// A scenario written by memtx: `steps` under `cfg`, each with its expected outcomes, all
    /// invariants expected to hold, described in words; no property, command or initial state.
    pub fn scenario(cfg: &Config, steps: Vec<Step>, description: String) -> Trace {
        Trace {
            format: TRACE_FORMAT.to_string(),
            version: TRACE_VERSION,
            description: Some(description),
            tool: tool_id(),
            command: String::new(),
            config: cfg.clone(),
            property: None,
            expectation: Expectation::all_hold(),
            invariants: None,
            steps,
            initial_state: None,
        }
    }

    /// A trace from a discovery path in stateright's format: each state with the action taken
    /// from it, the last state with `None` (as `explore::Discovery::path`).
    ///
    /// The expectation is derived from the property: a violation of an `always` property, or an
    /// example of a `sometimes` property, at the last step. Use [`Trace::with_expectation`] to
    /// record another one.
    pub fn from_path(
        config: &Config,
        property: &PropertyDef,
        path: &[(State, Option<Op>)],
        command: &str,
    ) -> Result<Trace, InternalBug> {
        let Some(((initial_state, _), rest)) = path.split_first() else {
            return Err(internal_bug("a discovery path is empty"));
        };
        let mut steps = Vec::with_capacity(rest.len());
        for (i, (state, _)) in rest.iter().enumerate() {
            let Some(action) = &path[i].1 else {
                return Err(internal_bug(format!(
                    "state {i} of a discovery path has no action but is not the last"
                )));
            };
            steps.push(Step {
                action: action.clone(),
                label: op_line(action),
                state: Some(state.clone()),
                expect: None,
            });
        }
        if let Some((_, Some(action))) = path.last() {
            return Err(internal_bug(format!(
                "the last state of a discovery path has an action ({})",
                op_line(action)
            )));
        }
        let kind = PropertyKind::of(property);
        let expectation = match kind {
            PropertyKind::Always => Expectation::violation(property.key, steps.len()),
            PropertyKind::Sometimes => Expectation::example(property.key, steps.len()),
        };
        Ok(Trace {
            format: TRACE_FORMAT.to_string(),
            version: TRACE_VERSION,
            description: None,
            tool: tool_id(),
            command: command.to_string(),
            config: config.clone(),
            property: Some(PropertyRef::of(property)),
            expectation,
            invariants: Some(current_invariants()),
            steps,
            initial_state: Some(initial_state.clone()),
        })
    }

    /// The invariants a replay compares the recorded verdicts on (see [`Trace::invariants`]):
    /// their numbers, or `None` for all.
    pub fn compared_invariants(&self) -> Option<Vec<u8>> {
        self.invariants
            .as_ref()
            .map(|keys| keys.iter().map(|k| number_of(k) as u8).collect())
    }

    /// The same trace with another recorded expectation.
    pub fn with_expectation(mut self, expectation: Expectation) -> Self {
        self.expectation = expectation;
        self
    }

    /// Number of steps (actions).
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// True when the trace has no step.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The recorded state at step `k` (0 = initial state), if the file records it.
    pub fn state_at(&self, k: usize) -> Option<&State> {
        match k {
            0 => self.initial_state.as_ref(),
            _ => self.steps.get(k - 1).and_then(|s| s.state.as_ref()),
        }
    }

    /// The recorded last state (the initial state for an empty trace), if the file records it.
    pub fn final_state(&self) -> Option<&State> {
        self.state_at(self.steps.len())
    }

    /// Does the file record every state (a saved trace, or a completed scenario)?
    pub fn has_states(&self) -> bool {
        self.initial_state.is_some() && self.steps.iter().all(|s| s.state.is_some())
    }

    /// The property key it is about, or `-` for a scenario that names none.
    pub fn property_key(&self) -> &str {
        self.property.as_ref().map_or("-", |p| p.key.as_str())
    }

    /// The same trace with every state filled in by replaying it under its own configuration
    /// (labels made again from the actions). See [`replay::ReplayReport::completed`].
    pub fn completed(&self) -> Result<Trace, replay::ReplayError> {
        Ok(replay::replay(self, None)?.completed(self))
    }

    /// The trace as pretty JSON (with a final newline).
    pub fn to_json_string(&self) -> String {
        json_pretty(self)
    }

    /// Writes the trace to `path` atomically (see [`crate::fsutil::write_atomic`]).
    pub fn write(&self, path: &Path) -> Result<(), UserError> {
        write_atomic(path, self.to_json_string().as_bytes())
    }

    /// Refuses to replay this trace against `given` unless it is the configuration the trace
    /// records. Every field is compared (bounds, domains and the variant) except the informational
    /// `preset` name; the error lists what differs.
    ///
    /// To replay under another *variant* on purpose, compare with the variant set to the trace's
    /// and pass the override to [`replay::replay`].
    pub fn check_config(&self, given: &Config) -> Result<(), UserError> {
        let diffs = config_differences(&self.config, given);
        if diffs.is_empty() {
            return Ok(());
        }
        let variant_only = diffs.len() == 1 && self.config.variant != given.variant;
        let fix = if variant_only {
            format!(
                "to replay it under variant {} use the variant override, or omit the variant to replay it as recorded ({})",
                given.variant.name(),
                self.config.variant.name()
            )
        } else {
            "replay it with the configuration it records (omit the configuration options) or re-run the check with this configuration".to_string()
        };
        Err(UserError::with_fix(
            ErrorKind::ConfigMismatch,
            format!(
                "the trace was made with a different configuration ({})",
                summarize(&diffs, 5)
            ),
            fix,
        ))
    }
}

/// The invariants of this memtx's property table, as a trace records them ([`Trace::invariants`]).
pub fn current_invariants() -> Vec<String> {
    PROPERTIES[..INVARIANTS]
        .iter()
        .map(|p| p.key.to_string())
        .collect()
}
