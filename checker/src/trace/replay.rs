//! Replay: re-execute a saved trace on the model and judge it again.
//!
//! A trace records actions and (a saved one) the states they led to. [`replay`] does not trust
//! the recorded states: it starts from the model's initial state and performs every action with
//! [`memtx_model::machine::step`], the same function the explorers use, under the trace's
//! configuration. At each step it checks that
//!
//! 1. the action is **enabled**: `step` accepts it and it is one of the operations the
//!    configuration's domain enumerates in that state (else [`ReplayError::NotEnabled`], with the
//!    model's reason) — unless the step expects to be **refused** (a scenario's
//!    `"expect": {"refused": ...}`): then it must be refused for that reason, it changes nothing,
//!    and the replay goes on from the same state;
//! 2. the state it produces is **the recorded one**, when the trace records it (else
//!    [`ReplayError::StateMismatch`], naming the fields that differ). A mismatch means the model
//!    changed since the trace was made. A hand-written trace may leave the states out: they
//!    are computed ([`ReplayReport::completed`] gives the trace with them filled in);
//! 3. the step's other expectations hold (the named records' lifecycle state, reason and
//!    effect; the invariants it violates): each one that does not is a
//!    [`crate::trace::scenario::Mismatch`] naming the step, the record and the difference.
//!
//! It then evaluates every property on each state and records, per step, what changed (records
//! added, lifecycle moves, transactions opened and closed, the clock, the rollback log, ghosts),
//! which `always` properties fail and which `sometimes` properties hold. The
//! [`ReplayReport`] finally says whether the trace's recorded [`Expectation`] is met:
//!
//! * violation of `P` at step `n`: `P` holds at every step before `n` and fails at `n`;
//! * example of `P` at step `n`: `P` holds at step `n`;
//! * all-hold: no `always` property fails at any step, except those a step's
//!   `"expect": {"violates": [...]}` names (from that step on).
//!
//! # Replaying under another variant
//!
//! With `variant_override`, the same actions run under another protocol variant: this is how a
//! regression trace found under a seeded defect (`missed-cascade`) is shown to be harmless under
//! the fixed protocol. The recorded states belong to the other variant, so they are not compared,
//! nor are the steps' expectations; each action must still be enabled (or be refused where the
//! step expects a refusal). The recorded expectation describes the recorded variant;
//! judge the override with [`ReplayReport::meets`] (typically `Expectation::all_hold()`).

use crate::error::{ErrorKind, UserError};
use crate::fsutil::json_pretty;
use crate::trace::scenario::{Mismatch, RefusalSeen, StepExpect};
use crate::trace::{
    changes, json_differences, summarize, Expectation, ExpectationKind, PropertyRef, Step, Trace,
};
use memtx_model::display::op_line;
use memtx_model::machine::{candidate_ops, step};
use memtx_model::properties::PROPERTIES;
use memtx_model::rules::take_fired;
use memtx_model::{Config, MemTx, Op, State, Variant};
use serde::Serialize;
use stateright::Model;
use std::fmt::{self, Write as _};

/// Why a trace does not replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "error", rename_all = "kebab-case")]
pub enum ReplayError {
    /// The configuration (with the override applied) is not usable.
    InvalidConfig {
        /// What is wrong.
        reason: String,
    },
    /// The trace's initial state is not an initial state of the model.
    InitialState {
        /// Which fields differ from the model's initial state.
        fields: Vec<String>,
    },
    /// Step `step` (1-based) is not enabled in the state before it.
    NotEnabled {
        /// Step number (1 = first action).
        step: usize,
        /// The action's label.
        action: String,
        /// The model's reason.
        reason: String,
    },
    /// Step `step` produced a state other than the recorded one.
    StateMismatch {
        /// Step number (1 = first action).
        step: usize,
        /// The action's label.
        action: String,
        /// Which fields differ, as `path: recorded X, replayed Y`.
        fields: Vec<String>,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::InvalidConfig { reason } => write!(
                f,
                "the trace cannot be replayed: its configuration is invalid ({reason})"
            ),
            ReplayError::InitialState { fields } => write!(
                f,
                "the trace does not start from the model's initial state ({})",
                summarize(fields, 3)
            ),
            ReplayError::NotEnabled {
                step,
                action,
                reason,
            } => write!(f, "step {step} ({action}) is not enabled: {reason}"),
            ReplayError::StateMismatch {
                step,
                action,
                fields,
            } => write!(
                f,
                "step {step} ({action}) leads to a state other than the recorded one ({})",
                summarize(fields, 3)
            ),
        }
    }
}

impl ReplayError {
    /// What to do about it. A trace saved by `memtx check` records the `command` that made
    /// it, so it can be made again; a hand-written scenario (no command) is fixed by hand.
    pub fn remedy(&self, command: &str) -> String {
        if command.is_empty() {
            return match self {
                ReplayError::InvalidConfig { .. } => {
                    "fix the scenario's \"config\" (docs/traces.md lists its fields)".into()
                }
                ReplayError::InitialState { .. } => {
                    "remove \"initial_state\" from the scenario (replay starts from the model's)"
                        .into()
                }
                ReplayError::NotEnabled { .. } => "fix the step, or the scenario's \"config\" \
                     (its domain must offer the operation; docs/traces.md), or expect the refusal \
                     with \"expect\": {\"refused\": \"<rule id>\"}"
                    .into(),
                ReplayError::StateMismatch { .. } => {
                    "fix the step's recorded \"state\", or leave it out (a scenario need not \
                     record states)"
                        .into()
                }
            };
        }
        match self {
            ReplayError::InvalidConfig { .. } | ReplayError::InitialState { .. } => {
                format!("restore the file, or make it again with `{command}`")
            }
            ReplayError::NotEnabled { .. } => format!(
                "the trace does not fit this model or variant: make it again with `{command}`"
            ),
            ReplayError::StateMismatch { .. } => format!(
                "the model changed since the trace was made: make it again with `{command}`, or \
                 replay under --variant to skip the comparison"
            ),
        }
    }

    /// The error as a user error about `trace`, with the remedy that applies to it.
    pub fn for_trace(&self, trace: &Trace) -> UserError {
        UserError::with_fix(ErrorKind::Replay, self, self.remedy(&trace.command))
    }
}

impl std::error::Error for ReplayError {}

impl From<ReplayError> for UserError {
    fn from(e: ReplayError) -> Self {
        // Without the trace at hand: what applies to every trace ([`ReplayError::for_trace`]
        // gives the remedy for one).
        UserError::with_fix(
            ErrorKind::Replay,
            &e,
            "docs/traces.md says what a replay checks and how to fix a trace",
        )
    }
}

/// What one replayed step did and which properties it affected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReplayStep {
    /// Step number (0 = initial state, `k` = after the `k`-th action).
    pub step: usize,
    /// The action's label (`init` for step 0).
    pub label: String,
    /// What changed, one short phrase per change.
    pub changes: Vec<String>,
    /// Keys of the `always` properties that fail in the state after the step.
    pub failing: Vec<String>,
    /// Keys of the `sometimes` properties that hold in the state after the step.
    pub examples: Vec<String>,
    /// How the step was refused, when it was (and its expectation said it would be).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<RefusalSeen>,
    /// What the step had to show (scenario files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<StepExpect>,
    /// The state after the step.
    pub state: State,
}

/// The result of a successful replay (every step enabled, and, without override, every state as
/// recorded).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReplayReport {
    /// The variant the trace was made with.
    pub recorded_variant: Variant,
    /// The variant it was replayed under.
    pub variant: Variant,
    /// Whether the variant was overridden (recorded states were then not compared).
    pub overridden: bool,
    /// The property the trace is about, if it names one.
    pub property: Option<PropertyRef>,
    /// What the trace shows, in words (scenario files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The recorded expectation.
    pub expectation: Expectation,
    /// The command that made the trace (empty for a hand-written one).
    pub command: String,
    /// Step 0 (the initial state) and one entry per action.
    pub steps: Vec<ReplayStep>,
    /// The steps' expectations that the replay did not observe (not judged under an override).
    pub mismatches: Vec<Mismatch>,
    /// Invariants of this memtx that the trace was recorded without ([`Trace::invariants`]):
    /// judged on replay, not compared with the recorded verdicts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub newer_invariants: Vec<String>,
}

/// Replays `trace` (see the module docs); `variant_override` replaces the recorded variant.
pub fn replay(
    trace: &Trace,
    variant_override: Option<Variant>,
) -> Result<ReplayReport, ReplayError> {
    let mut cfg: Config = trace.config.clone();
    let overridden = variant_override.is_some_and(|v| v != trace.config.variant);
    if let Some(v) = variant_override {
        cfg.variant = v;
    }
    cfg.validate().map_err(|e| ReplayError::InvalidConfig {
        reason: e.to_string(),
    })?;
    let model = MemTx::new(cfg.clone());
    let inits = model.init_states();
    let initial = match &trace.initial_state {
        Some(given) if inits.contains(given) => given.clone(),
        Some(given) => {
            let fields = inits
                .first()
                .map(|init| state_differences(init, given, "model", "trace"))
                .unwrap_or_default();
            return Err(ReplayError::InitialState { fields });
        }
        None => inits.first().cloned().unwrap_or_else(State::initial),
    };
    let compared = trace.compared_invariants();
    let mut steps = vec![judge(&model, 0, "init".into(), vec![], initial.clone())];
    let mut mismatches = Vec::new();
    let mut pre = initial;
    let mut candidates = Vec::new();
    for (i, recorded) in trace.steps.iter().enumerate() {
        let number = i + 1;
        let (post, refused) = perform(
            &cfg,
            &pre,
            recorded,
            number,
            overridden,
            &mut candidates,
            &mut mismatches,
        )?;
        let label = op_line(&recorded.action);
        if let Some(want) = &recorded.state {
            if !overridden && !same_as_recorded(want, &post, compared.as_deref()) {
                return Err(ReplayError::StateMismatch {
                    step: number,
                    action: label,
                    fields: state_differences(want, &post, "recorded", "replayed"),
                });
            }
        }
        let changes = changes(&pre, &post);
        let mut judged = judge(&model, number, label, changes, post.clone());
        if let Some(expect) = &recorded.expect {
            if !overridden {
                expect.judge_records(number, &post, &mut mismatches);
                expect.judge_violations(number, &judged.failing, &mut mismatches);
            }
            judged.expect = Some(expect.clone());
        }
        judged.refused = refused;
        steps.push(judged);
        pre = post;
    }
    Ok(ReplayReport {
        recorded_variant: trace.config.variant,
        variant: cfg.variant,
        overridden,
        property: trace.property.clone(),
        description: trace.description.clone(),
        expectation: trace.expectation.clone(),
        command: trace.command.clone(),
        steps,
        mismatches,
        newer_invariants: match &trace.invariants {
            Some(known) => super::current_invariants()
                .into_iter()
                .filter(|k| !known.contains(k))
                .collect(),
            None => Vec::new(),
        },
    })
}

/// Is `post` the state `want` a trace recorded? With `compared` (the invariants of the table the
/// trace was recorded under, [`Trace::invariants`]), the ghost's verdicts are compared on those
/// only: an invariant added since judges the replay but cannot contradict the recording.
fn same_as_recorded(want: &State, post: &State, compared: Option<&[u8]>) -> bool {
    if post == want {
        return true;
    }
    let Some(known) = compared else {
        return false;
    };
    let mut want = want.clone();
    let mut post = post.clone();
    want.ghost.violated = want.ghost.violated.restricted_to(|n| known.contains(&n));
    post.ghost.violated = post.ghost.violated.restricted_to(|n| known.contains(&n));
    post == want
}

/// Performs step `number` from `pre`: the state after it (`pre` itself when it is refused as
/// its expectation says) and how it was refused. A refusal the step does not expect is
/// [`ReplayError::NotEnabled`]; a refusal for another reason than the expected one, or a step
/// performed that should have been refused, is a mismatch.
#[allow(clippy::too_many_arguments)]
fn perform(
    cfg: &Config,
    pre: &State,
    recorded: &Step,
    number: usize,
    overridden: bool,
    candidates: &mut Vec<Op>,
    mismatches: &mut Vec<Mismatch>,
) -> Result<(State, Option<RefusalSeen>), ReplayError> {
    let label = op_line(&recorded.action);
    let expected = recorded.expect.as_ref().and_then(|e| e.refused.as_deref());
    let _ = take_fired();
    let result = step(cfg, pre, &recorded.action);
    let fired = take_fired();
    match (result, expected) {
        (Err(refusal), None) => Err(ReplayError::NotEnabled {
            step: number,
            action: label,
            reason: refusal.to_string(),
        }),
        (Err(refusal), Some(want)) => {
            let seen = RefusalSeen::new(&refusal, fired);
            if !overridden && !seen.matches(want) {
                mismatches.push(Mismatch {
                    step: number,
                    what: format!(
                        "expected it refused for {want}, got refused for {}",
                        seen.describe()
                    ),
                });
            }
            Ok((pre.clone(), Some(seen)))
        }
        (Ok(post), Some(want)) => {
            if !overridden {
                mismatches.push(Mismatch {
                    step: number,
                    what: format!("expected it refused for {want}, but it was performed"),
                });
            }
            Ok((post, None))
        }
        (Ok(post), None) => {
            candidates.clear();
            candidate_ops(cfg, pre, candidates);
            if !candidates.contains(&recorded.action) {
                let why = match super::domain::domain_fault(cfg, &recorded.action, pre.clock) {
                    Some(field) => format!("outside the configuration's domain: {field}"),
                    None => "the configuration's domain does not enumerate this operation in \
                             this state"
                        .into(),
                };
                return Err(ReplayError::NotEnabled {
                    step: number,
                    action: label,
                    reason: why,
                });
            }
            Ok((post, None))
        }
    }
}

fn judge(
    model: &MemTx,
    step: usize,
    label: String,
    changes: Vec<String>,
    state: State,
) -> ReplayStep {
    let mut failing = Vec::new();
    let mut examples = Vec::new();
    for p in PROPERTIES {
        let holds = (p.holds)(model, &state);
        if p.is_invariant() && !holds {
            failing.push(p.key.to_string());
        } else if !p.is_invariant() && holds {
            examples.push(p.key.to_string());
        }
    }
    ReplayStep {
        step,
        label,
        changes,
        failing,
        examples,
        refused: None,
        expect: None,
        state,
    }
}

/// The fields where two states differ, as `path: <left_name> X, <right_name> Y`.
fn state_differences(
    left: &State,
    right: &State,
    left_name: &str,
    right_name: &str,
) -> Vec<String> {
    let a = serde_json::to_value(left).unwrap_or_default();
    let b = serde_json::to_value(right).unwrap_or_default();
    let mut diffs = Vec::new();
    json_differences(&a, &b, "", &mut diffs);
    diffs
        .into_iter()
        .map(|d| {
            format!(
                "{}: {left_name} {}, {right_name} {}",
                d.path, d.left, d.right
            )
        })
        .collect()
}

impl ReplayReport {
    /// Number of actions replayed.
    pub fn len(&self) -> usize {
        self.steps.len().saturating_sub(1)
    }

    /// True when the trace had no action.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first step at which the `always` property `key` fails, if any.
    pub fn first_failure(&self, key: &str) -> Option<usize> {
        self.steps
            .iter()
            .find(|s| s.failing.iter().any(|k| k.eq_ignore_ascii_case(key)))
            .map(|s| s.step)
    }

    /// Keys of every `always` property that fails at some step, in property order.
    pub fn ever_failing(&self) -> Vec<String> {
        PROPERTIES
            .iter()
            .filter(|p| self.first_failure(p.key).is_some())
            .map(|p| p.key.to_string())
            .collect()
    }

    /// The invariants that fail at some step without a step's `violates` naming them at or
    /// before it, with the first such step.
    pub fn unexcused_failures(&self) -> Vec<(String, usize)> {
        let mut excused: Vec<&str> = Vec::new();
        let mut out: Vec<(String, usize)> = Vec::new();
        for s in &self.steps {
            if let Some(e) = &s.expect {
                excused.extend(e.violates.iter().map(String::as_str));
            }
            for k in &s.failing {
                if !excused.contains(&k.as_str()) && !out.iter().any(|(x, _)| x == k) {
                    out.push((k.clone(), s.step));
                }
            }
        }
        out
    }

    /// Does the replay observe `expectation` (see the module docs)? The steps' own
    /// expectations are judged apart ([`ReplayReport::mismatches`]).
    pub fn meets(&self, expectation: &Expectation) -> bool {
        let key = expectation.property.as_deref().unwrap_or("");
        match expectation.kind {
            ExpectationKind::Violation => {
                expectation.step.is_some() && self.first_failure(key) == expectation.step
            }
            ExpectationKind::Example => expectation.step.is_some_and(|n| {
                self.steps
                    .get(n)
                    .is_some_and(|s| s.examples.iter().any(|k| k.eq_ignore_ascii_case(key)))
            }),
            ExpectationKind::AllHold => self.unexcused_failures().is_empty(),
        }
    }

    /// Does the replay observe the trace's recorded expectation and every step's expectation?
    pub fn expectation_met(&self) -> bool {
        self.meets(&self.expectation) && self.mismatches.is_empty()
    }

    /// One line saying whether the recorded expectation is met, and what was seen instead.
    ///
    /// Under a variant override the recorded expectation describes the recorded variant, so the
    /// line reports instead whether every invariant holds at every step.
    pub fn verdict_line(&self) -> String {
        if self.overridden {
            let failing = self.ever_failing();
            let recorded = format!(
                "(recorded under {}: {})",
                self.recorded_variant.name(),
                self.expectation.describe()
            );
            return if failing.is_empty() {
                format!(
                    "under variant {}: every invariant holds at every step {recorded}",
                    self.variant.name()
                )
            } else {
                format!(
                    "under variant {}: invariants fail: {} {recorded}",
                    self.variant.name(),
                    failing.join(", ")
                )
            };
        }
        let e = &self.expectation;
        let expectations = self.steps.iter().filter(|s| s.expect.is_some()).count();
        let of_steps = if expectations > 0 {
            let s = if expectations == 1 { "" } else { "s" };
            format!(" and the expectations of {expectations} step{s}")
        } else {
            String::new()
        };
        if self.expectation_met() {
            return format!("expectation met: {}{of_steps}", e.describe());
        }
        if !self.mismatches.is_empty() {
            let more = if self.mismatches.len() > 1 {
                format!(" (and {} more)", self.mismatches.len() - 1)
            } else {
                String::new()
            };
            return format!("expectation NOT met: {}{more}", self.mismatches[0]);
        }
        let seen = match e.kind {
            ExpectationKind::Violation => {
                match e.property.as_deref().and_then(|k| self.first_failure(k)) {
                    Some(s) => format!("it first fails at step {s}"),
                    None => "it never fails".to_string(),
                }
            }
            ExpectationKind::Example => "it does not hold there".to_string(),
            ExpectationKind::AllHold => self
                .unexcused_failures()
                .iter()
                .map(|(k, s)| format!("{k} fails at step {s}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        format!("expectation NOT met: {} ({seen})", e.describe())
    }

    /// The report for humans: a header, one block per step, the final state and the verdict.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let about = match &self.property {
            Some(p) => format!("a trace for {}", p.name),
            None => "a scenario".to_string(),
        };
        let _ = writeln!(
            s,
            "Replay of {about} ({} steps), variant {}{}",
            self.len(),
            self.variant.name(),
            if self.overridden {
                format!(
                    " (overridden; recorded under {}: recorded states and step expectations not compared)",
                    self.recorded_variant.name()
                )
            } else {
                String::new()
            }
        );
        if let Some(d) = &self.description {
            let _ = writeln!(s, "What it shows: {d}");
        }
        if !self.command.is_empty() {
            let _ = writeln!(s, "Found by: {}", self.command);
        }
        let _ = writeln!(s, "Recorded expectation: {}", self.expectation.describe());
        if !self.newer_invariants.is_empty() {
            let _ = writeln!(
                s,
                "Recorded before {} existed: judged below, not compared with the recorded states",
                self.newer_invariants.join(", ")
            );
        }
        for st in &self.steps {
            let _ = writeln!(s);
            if st.step == 0 {
                let _ = writeln!(s, "step 0: initial state");
            } else {
                let _ = writeln!(s, "step {}: {}", st.step, st.label);
                if let Some(r) = &st.refused {
                    let _ = writeln!(s, "  refused: {}", r.describe());
                } else if st.changes.is_empty() {
                    let _ = writeln!(s, "  changed: nothing");
                }
                for c in &st.changes {
                    let _ = writeln!(s, "  changed: {c}");
                }
            }
            if st.failing.is_empty() {
                let _ = writeln!(s, "  invariants: all hold");
            } else {
                let names: Vec<&str> = st
                    .failing
                    .iter()
                    .filter_map(|k| PROPERTIES.iter().find(|p| p.key == k))
                    .map(|p| p.name)
                    .collect();
                let _ = writeln!(s, "  FAILS: {}", names.join("; "));
            }
            if !st.examples.is_empty() {
                let _ = writeln!(s, "  examples reached: {}", st.examples.join(", "));
            }
            if st.expect.is_some() {
                let wrong: Vec<&Mismatch> = self
                    .mismatches
                    .iter()
                    .filter(|m| m.step == st.step)
                    .collect();
                if wrong.is_empty() && !self.overridden {
                    let _ = writeln!(s, "  expected: as the scenario says");
                }
                for m in wrong {
                    let _ = writeln!(s, "  EXPECTATION NOT MET: {}", m.what);
                }
            }
        }
        if let Some(last) = self.steps.last() {
            let _ = writeln!(s, "\nfinal state:");
            for line in format!("{:?}", last.state).lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
        let _ = writeln!(s, "\n{}", self.verdict_line());
        s
    }

    /// `trace` with every state replaced by the replayed one and every label made again from
    /// its action: the completed form of a hand-written scenario (`memtx replay
    /// --write-states`). A refused step's state is the state before it.
    pub fn completed(&self, trace: &Trace) -> Trace {
        let mut out = trace.clone();
        out.invariants = Some(super::current_invariants());
        out.initial_state = self.steps.first().map(|s| s.state.clone());
        for (step, replayed) in out.steps.iter_mut().zip(self.steps.iter().skip(1)) {
            step.label = op_line(&step.action);
            step.state = Some(replayed.state.clone());
        }
        out
    }

    /// The report as JSON: the fields of [`ReplayReport`] plus `expectation_met`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let serde_json::Value::Object(m) = &mut v {
            m.insert(
                "expectation_met".into(),
                serde_json::Value::Bool(self.expectation_met()),
            );
        }
        v
    }

    /// [`ReplayReport::to_json`], pretty-printed.
    pub fn to_json_string(&self) -> String {
        json_pretty(&self.to_json())
    }
}
