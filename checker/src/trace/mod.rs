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
mod files;
pub mod itf;
pub mod replay;
pub mod scenario;

use crate::error::{internal_bug, ErrorKind, InternalBug, UserError};
use crate::fsutil::{json_pretty, write_atomic};
use crate::input::{
    cut, cut_quoted, parse_json, read_limited, user_path, JsonError, MAX_INPUT_BYTES,
};
pub use files::regression_traces;
use memtx_model::config::VARIANTS;
use memtx_model::display::op_line;
use memtx_model::presets::preset;
use memtx_model::properties::{PropertyDef, PROPERTIES};
use memtx_model::{Config, Op, State, Variant};
use scenario::{malformed_expect, StepExpect};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

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
    /// Must hold in every reachable state (I1–I14); a discovery is a counterexample.
    Always,
    /// Must hold in some reachable state (E1–E9); a discovery is an example.
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
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The state before the first step; a hand-written file may leave it out (it is the
    /// model's initial state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_state: Option<State>,
}

impl Trace {
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
            steps,
            initial_state: Some(initial_state.clone()),
        })
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

    /// Reads and validates a trace or scenario file of at most [`MAX_INPUT_BYTES`].
    pub fn read(path: &Path) -> Result<Trace, UserError> {
        Trace::read_limited(path, MAX_INPUT_BYTES)
    }

    /// Reads and validates a trace or scenario file, refusing one larger than `limit` bytes
    /// without reading it whole ([`crate::input::read_limited`]).
    pub fn read_limited(path: &Path, limit: u64) -> Result<Trace, UserError> {
        let text = read_limited(path, "trace", limit)?;
        Trace::from_json_str(&text, &path.display().to_string())
    }

    /// Parses and validates a trace; `origin` (a file name) prefixes every error message.
    /// A key repeated in any object is refused ([`crate::input::parse_json`]).
    pub fn from_json_str(text: &str, origin: &str) -> Result<Trace, UserError> {
        let value = parse_json(text).map_err(|e| match e {
            JsonError::Syntax(m) => UserError::with_fix(
                ErrorKind::NotJson,
                format!("{origin} is not valid JSON ({m})"),
                "pass a .trace.json file written by memtx check, or a scenario file (docs/traces.md)",
            ),
            dup @ JsonError::DuplicateKey { .. } => UserError::with_fix(
                ErrorKind::Malformed,
                format!("{origin}: {dup}"),
                "keep one of the two: a reader would silently take the last",
            ),
        })?;
        Trace::from_json_value(value, origin)
    }

    /// Validates a parsed JSON value as a trace (see [`Trace::from_json_str`]).
    pub fn from_json_value(value: Value, origin: &str) -> Result<Trace, UserError> {
        let Value::Object(obj) = value else {
            return Err(wrong_format(origin, "it is not a JSON object"));
        };
        match obj.get("format") {
            Some(Value::String(f)) if f == TRACE_FORMAT => {}
            Some(Value::String(f)) => {
                return Err(wrong_format(
                    origin,
                    &format!("its format is \"{}\"", cut(f)),
                ))
            }
            Some(other) => {
                return Err(wrong_format(
                    origin,
                    &format!("its format is {}", cut(&other.to_string())),
                ))
            }
            None if obj.contains_key("#meta") => {
                return Err(UserError::with_fix(
                    ErrorKind::WrongFormat,
                    format!(
                        "{origin} is an ITF trace (for Apalache/Quint tools), not a memtx trace"
                    ),
                    "replay the .trace.json file written next to it",
                ))
            }
            None => return Err(wrong_format(origin, "it has no \"format\" field")),
        }
        if let Some(unknown) = obj.keys().find(|k| !TOP_LEVEL_FIELDS.contains(&k.as_str())) {
            return Err(malformed(
                origin,
                &cut(unknown),
                &format!(
                    "unknown field: a trace holds {}",
                    TOP_LEVEL_FIELDS.join(", ")
                ),
            ));
        }
        let tool = match obj.get("tool") {
            Some(v) => at::<String>(v, "tool", origin)?,
            None => String::new(),
        };
        match obj.get("version") {
            Some(v) if v.as_u64() == Some(TRACE_VERSION) => {}
            Some(v) => {
                let by = if tool.is_empty() {
                    "an unknown tool".to_string()
                } else {
                    cut(&tool)
                };
                return Err(UserError::with_fix(
                    ErrorKind::UnknownVersion,
                    format!(
                        "{origin} is memtx trace format version {}, written by {by}; this memtx ({}) reads version {TRACE_VERSION} only",
                        cut(&v.to_string()),
                        tool_id()
                    ),
                    format!("replay it with the memtx that wrote it ({by}) or re-run its \"command\" to make a version-{TRACE_VERSION} trace"),
                ));
            }
            None => return Err(malformed(origin, "version", "the field is missing")),
        }
        let config = read_config(&obj, origin)?;
        let property = match obj.get("property") {
            None => None,
            Some(v) => {
                let property: PropertyRef = at(v, "property", origin)?;
                let def = known_property(&property.key, origin, "property.key")?;
                if PropertyKind::of(def) != property.kind {
                    return Err(malformed(
                        origin,
                        "property.kind",
                        &format!(
                            "{} is a \"{}\" property, not \"{}\"",
                            def.key,
                            PropertyKind::of(def).name(),
                            property.kind.name()
                        ),
                    ));
                }
                Some(property)
            }
        };
        let expectation: Expectation = match obj.get("expectation") {
            Some(v) => at(v, "expectation", origin)?,
            None => Expectation::all_hold(),
        };
        let command = match obj.get("command") {
            Some(v) => at::<String>(v, "command", origin)?,
            None => String::new(),
        };
        let description = match obj.get("description") {
            Some(v) => Some(at::<String>(v, "description", origin)?),
            None => None,
        };
        let steps = read_steps(&obj, origin, &config)?;
        let initial_state: Option<State> = match obj.get("initial_state") {
            Some(v) => Some(at(v, "initial_state", origin)?),
            None => None,
        };
        check_expectation(&expectation, steps.len(), origin)?;
        Ok(Trace {
            format: TRACE_FORMAT.to_string(),
            version: TRACE_VERSION,
            description,
            tool,
            command,
            config,
            property,
            expectation,
            steps,
            initial_state,
        })
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

/// One row of a trace's step table (for reports): the action, what it changed, and the
/// invariants failing after it. See [`step_rows`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRow {
    /// Step number (1 = the first action).
    pub step: usize,
    /// The action's label, e.g. `a0 Commit`.
    pub action: String,
    /// The records whose lifecycle state, reason or effect changed, e.g. `r1
    /// Tentative→Committed, r2 added (Tentative)`; `refused: <rule>` for a refused step;
    /// `—` when no record changed.
    pub changed: String,
    /// Keys of the `always` properties failing in the state after the step.
    pub failing: Vec<String>,
}

/// The step table of `trace`: one [`StepRow`] per action, from a replay under the trace's own
/// configuration (the states are recomputed, so a hand-written scenario has rows too).
pub fn step_rows(trace: &Trace) -> Result<Vec<StepRow>, replay::ReplayError> {
    let report = replay::replay(trace, None)?;
    Ok(report
        .steps
        .windows(2)
        .map(|w| {
            let (pre, post) = (&w[0], &w[1]);
            let changed = match &post.refused {
                Some(r) => format!("refused: {}", r.rules.first().unwrap_or(&r.message)),
                None => record_changes(&pre.state, &post.state),
            };
            StepRow {
                step: post.step,
                action: post.label.clone(),
                changed,
                failing: post.failing.clone(),
            }
        })
        .collect())
}

/// The records a step changed: added, or with another lifecycle state, reason or effect (the
/// records [`record_changes`] describes).
pub fn changed_records(pre: &State, post: &State) -> memtx_model::RecordSet {
    let mut out = memtx_model::RecordSet::EMPTY;
    for id in post.ids() {
        let r = post.record(id);
        let changed = !pre.exists(id) || {
            let q = pre.record(id);
            q.life() != r.life() || q.reason != r.reason || q.effect != r.effect
        };
        if changed {
            out.insert(id);
        }
    }
    out
}

/// The records whose lifecycle state, reason or effect differ from `pre` to `post`, in one
/// short line (`—` when none did).
pub fn record_changes(pre: &State, post: &State) -> String {
    use memtx_model::display::life_name;
    let mut parts = Vec::new();
    for id in post.ids() {
        let r = post.record(id);
        if !pre.exists(id) {
            let effect = r
                .effect
                .map_or(String::new(), |e| format!(", {}", scenario::serde_name(&e)));
            parts.push(format!("r{id} added ({}{effect})", life_name(r.life())));
            continue;
        }
        let q = pre.record(id);
        let mut what = Vec::new();
        if q.life() != r.life() {
            what.push(format!("{}→{}", life_name(q.life()), life_name(r.life())));
        }
        if q.reason != r.reason {
            if let Some(reason) = r.reason {
                what.push(format!("({})", scenario::serde_name(&reason)));
            }
        }
        if q.effect != r.effect {
            let name = |e: Option<memtx_model::record::Effect>| {
                e.map_or("none".to_string(), |e| scenario::serde_name(&e))
            };
            what.push(format!("effect {}→{}", name(q.effect), name(r.effect)));
        }
        if !what.is_empty() {
            parts.push(format!("r{id} {}", what.join(" ")));
        }
    }
    if parts.is_empty() {
        "—".to_string()
    } else {
        parts.join(", ")
    }
}

/// The differences between two configurations as `path: trace X, given Y` strings, ignoring the
/// informational `preset` name.
pub fn config_differences(recorded: &Config, given: &Config) -> Vec<String> {
    let mut a = serde_json::to_value(recorded).unwrap_or(Value::Null);
    let mut b = serde_json::to_value(given).unwrap_or(Value::Null);
    for v in [&mut a, &mut b] {
        if let Value::Object(m) = v {
            m.remove("preset");
        }
    }
    let mut out = Vec::new();
    json_differences(&a, &b, "", &mut out);
    out.into_iter()
        .map(|d| format!("{}: trace {}, given {}", d.path, d.left, d.right))
        .collect()
}

/// One leaf where two JSON values differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JsonDiff {
    /// Path from the root, e.g. `records[2].life`.
    pub path: String,
    /// The left value (compact JSON), or `absent`.
    pub left: String,
    /// The right value (compact JSON), or `absent`.
    pub right: String,
}

/// Collects the leaves where `a` and `b` differ, descending into objects and equal-length arrays.
pub(crate) fn json_differences(a: &Value, b: &Value, path: &str, out: &mut Vec<JsonDiff>) {
    if a == b {
        return;
    }
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(l), Some(r)) => json_differences(l, r, &join(k), out),
                    (l, r) => out.push(JsonDiff {
                        path: join(k),
                        left: l.map_or("absent".into(), Value::to_string),
                        right: r.map_or("absent".into(), Value::to_string),
                    }),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (l, r)) in x.iter().zip(y).enumerate() {
                json_differences(l, r, &format!("{path}[{i}]"), out);
            }
        }
        _ => out.push(JsonDiff {
            path: if path.is_empty() {
                "(root)".into()
            } else {
                path.to_string()
            },
            left: a.to_string(),
            right: b.to_string(),
        }),
    }
}

/// The first `max` items joined by `; `, and how many more there are.
pub(crate) fn summarize(items: &[String], max: usize) -> String {
    let mut s = items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > max {
        s.push_str(&format!("; and {} more", items.len() - max));
    }
    s
}

/// `<dir>/<variant>-<key>.trace.json`, e.g. `regressions/missed-cascade-I2.trace.json`.
pub fn trace_path(dir: &Path, variant: Variant, key: &str) -> PathBuf {
    dir.join(format!("{}-{key}{TRACE_SUFFIX}", variant.name()))
}

/// The ITF file written next to a trace: `x.trace.json` → `x.itf.json` (else `<path>.itf.json`).
pub fn itf_path_for(trace_path: &Path) -> PathBuf {
    let s = trace_path.to_string_lossy();
    match s.strip_suffix(TRACE_SUFFIX) {
        Some(stem) => PathBuf::from(format!("{stem}.itf.json")),
        None => PathBuf::from(format!("{s}.itf.json")),
    }
}

/// The command that replays a trace: `memtx replay <path>` (the path quoted for a POSIX shell
/// when it needs it).
pub fn replay_command(trace_path: &Path) -> String {
    format!(
        "memtx replay {}",
        shell_quote(&trace_path.to_string_lossy())
    )
}

/// `s` quoted for a POSIX shell if it contains anything but safe characters.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn wrong_format(origin: &str, why: &str) -> UserError {
    UserError::with_fix(
        ErrorKind::WrongFormat,
        format!("{origin} is not a memtx trace ({why}; expected \"format\": \"{TRACE_FORMAT}\")"),
        "pass a .trace.json file written by memtx check",
    )
}

fn malformed(origin: &str, at: &str, why: &str) -> UserError {
    UserError::with_fix(
        ErrorKind::Malformed,
        format!("{origin}: {}: {why}", user_path(at)),
        "fix the field (docs/traces.md describes the format) or re-run the command in its \"command\" field",
    )
}

/// The fields a trace file may hold.
const TOP_LEVEL_FIELDS: &[&str] = &[
    "format",
    "version",
    "description",
    "tool",
    "command",
    "config",
    "property",
    "expectation",
    "steps",
    "initial_state",
];

/// The fields a step may hold.
const STEP_FIELDS: &[&str] = &["action", "label", "state", "expect"];

/// Deserialises `v`, naming its path `at` in the error (values echoed from the input are cut).
fn at<T: DeserializeOwned>(v: &Value, path: &str, origin: &str) -> Result<T, UserError> {
    T::deserialize(v).map_err(|e| malformed(origin, path, &cut_quoted(&e.to_string())))
}

fn known_property(key: &str, origin: &str, path: &str) -> Result<&'static PropertyDef, UserError> {
    PropertyDef::find(key).ok_or_else(|| {
        let keys: Vec<&str> = PROPERTIES.iter().map(|p| p.key).collect();
        UserError::with_fix(
            ErrorKind::UnknownProperty,
            format!("{origin}: {path}: unknown property \"{}\"", cut(key)),
            format!(
                "this memtx knows {}; the trace may come from a newer memtx",
                keys.join(", ")
            ),
        )
    })
}

/// The configuration: either a whole [`Config`] (as memtx writes it), or a preset named with
/// optional overrides, `{"preset": "quick", "variant": "memtx", "bounds": {...}, "domain":
/// {...}}`: the preset's configuration under the variant (default `memtx`), each field given in
/// `bounds` or `domain` replacing the preset's.
fn read_config(obj: &Map<String, Value>, origin: &str) -> Result<Config, UserError> {
    let Some(cfg) = obj.get("config") else {
        return Err(malformed(origin, "config", "the field is missing"));
    };
    let variant = match cfg.get("variant") {
        None => Variant::Memtx,
        Some(Value::String(name)) => Variant::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
            UserError::with_fix(
                ErrorKind::UnknownVariant,
                format!(
                    "{origin}: config.variant: unknown variant \"{}\"",
                    cut(name)
                ),
                format!(
                    "this memtx knows {}; the trace may come from a newer memtx",
                    names.join(", ")
                ),
            )
        })?,
        Some(_) => {
            return Err(malformed(
                origin,
                "config.variant",
                "expected a variant name",
            ))
        }
    };
    let whole = Config::deserialize(cfg);
    let config = match (whole, cfg.get("preset").and_then(Value::as_str)) {
        (Ok(config), _) => config,
        (Err(_), Some(name)) if preset(name, variant).is_some() => {
            preset_config(cfg, name, variant, origin)?
        }
        (Err(e), _) => return Err(malformed(origin, "config", &cut_quoted(&e.to_string()))),
    };
    config.validate().map_err(|e| {
        UserError::with_fix(
            ErrorKind::InvalidConfig,
            format!("{origin}: config: {e}"),
            "fix the configuration, or re-run the command in its \"command\" field",
        )
    })?;
    Ok(config)
}

/// A preset's configuration with the overrides of a `config` object applied (see
/// [`read_config`]).
fn preset_config(
    cfg: &Value,
    name: &str,
    variant: Variant,
    origin: &str,
) -> Result<Config, UserError> {
    let base = preset(name, variant)
        .ok_or_else(|| malformed(origin, "config.preset", "unknown preset"))?;
    let mut merged =
        serde_json::to_value(&base).map_err(|e| malformed(origin, "config", &e.to_string()))?;
    let Value::Object(given) = cfg else {
        return Err(malformed(origin, "config", "expected an object"));
    };
    for (key, value) in given {
        match key.as_str() {
            "preset" | "variant" => {}
            "bounds" | "domain" => {
                let Value::Object(fields) = value else {
                    return Err(malformed(
                        origin,
                        &format!("config.{key}"),
                        "expected an object of the fields to override",
                    ));
                };
                if let Some(Value::Object(target)) = merged.get_mut(key.as_str()) {
                    for (f, v) in fields {
                        target.insert(f.clone(), v.clone());
                    }
                }
            }
            other => {
                return Err(malformed(
                    origin,
                    &format!("config.{}", cut(other)),
                    "unknown field: a preset-based configuration holds preset, variant, bounds and domain",
                ))
            }
        }
    }
    at(&merged, "config", origin)
}

fn read_steps(
    obj: &Map<String, Value>,
    origin: &str,
    config: &Config,
) -> Result<Vec<Step>, UserError> {
    let Some(steps) = obj.get("steps") else {
        return Err(malformed(origin, "steps", "the field is missing"));
    };
    let Value::Array(items) = steps else {
        return Err(malformed(origin, "steps", "expected an array of steps"));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = |name: &str| format!("steps[{i}].{name}");
        let Value::Object(step) = item else {
            return Err(malformed(
                origin,
                &format!("steps[{i}]"),
                "expected an object",
            ));
        };
        if let Some(unknown) = step.keys().find(|k| !STEP_FIELDS.contains(&k.as_str())) {
            return Err(malformed(
                origin,
                &path(&cut(unknown)),
                &format!("unknown field: a step holds {}", STEP_FIELDS.join(", ")),
            ));
        }
        let Some(action) = step.get("action") else {
            return Err(malformed(origin, &path("action"), "the field is missing"));
        };
        let action: Op = at(action, &path("action"), origin)?;
        let label: String = match step.get("label") {
            Some(v) => at(v, &path("label"), origin)?,
            None => op_line(&action),
        };
        let state: Option<State> = match step.get("state") {
            Some(v) => Some(at(v, &path("state"), origin)?),
            None => None,
        };
        let expect = match step.get("expect") {
            Some(v) => Some(
                StepExpect::read(v, config.bounds.records)
                    .map_err(|(at, why)| malformed_expect(origin, i + 1, &at, &why))?,
            ),
            None => None,
        };
        out.push(Step {
            action,
            label,
            state,
            expect,
        });
    }
    Ok(out)
}

fn check_expectation(e: &Expectation, len: usize, origin: &str) -> Result<(), UserError> {
    match e.kind {
        ExpectationKind::AllHold => Ok(()),
        ExpectationKind::Violation | ExpectationKind::Example => {
            let Some(key) = &e.property else {
                return Err(malformed(
                    origin,
                    "expectation.property",
                    "the field is missing",
                ));
            };
            let def = known_property(key, origin, "expectation.property")?;
            let want = if e.kind == ExpectationKind::Violation {
                PropertyKind::Always
            } else {
                PropertyKind::Sometimes
            };
            if PropertyKind::of(def) != want {
                return Err(malformed(
                    origin,
                    "expectation.property",
                    &format!(
                        "{key} is a \"{}\" property; a {} needs a \"{}\" one",
                        PropertyKind::of(def).name(),
                        if want == PropertyKind::Always {
                            "violation"
                        } else {
                            "example"
                        },
                        want.name()
                    ),
                ));
            }
            match e.step {
                None => Err(malformed(
                    origin,
                    "expectation.step",
                    "the field is missing",
                )),
                Some(s) if s > len => Err(malformed(
                    origin,
                    "expectation.step",
                    &format!("step {s} is beyond the trace's {len} steps"),
                )),
                Some(_) => Ok(()),
            }
        }
    }
}
