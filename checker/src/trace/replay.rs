//! Replay: re-execute a saved trace on the model and judge it again.
//!
//! A trace records actions *and* the states they led to. [`replay`] does not trust the recorded
//! states: it starts from the model's initial state and performs every action with
//! [`memtx_model::machine::step`], the same function the explorers use, under the trace's
//! configuration. At each step it checks that
//!
//! 1. the action is **enabled**: `step` accepts it and it is one of the operations the
//!    configuration's domain enumerates in that state (else [`ReplayError::NotEnabled`], with the
//!    model's reason), and
//! 2. the state it produces is **the recorded one** (else [`ReplayError::StateMismatch`], naming
//!    the fields that differ). A mismatch means the model changed since the trace was made.
//!
//! It then evaluates every property on each state and records, per step, what changed (records
//! added, lifecycle moves, transactions opened and closed, the clock, the rollback log, ghosts),
//! which `always` properties fail and which `sometimes` properties hold. The
//! [`ReplayReport`] finally says whether the trace's recorded [`Expectation`] is met:
//!
//! * violation of `P` at step `n`: `P` holds at every step before `n` and fails at `n`;
//! * example of `P` at step `n`: `P` holds at step `n`;
//! * all-hold: no `always` property fails at any step.
//!
//! # Replaying under another variant
//!
//! With `variant_override`, the same actions run under another protocol variant: this is how a
//! regression trace found under a seeded defect (`missed-cascade`) is shown to be harmless under
//! the fixed protocol. The recorded states belong to the other variant, so they are not compared;
//! each action must still be enabled. The recorded expectation describes the recorded variant;
//! judge the override with [`ReplayReport::meets`] (typically `Expectation::all_hold()`).

use crate::error::{ErrorKind, UserError};
use crate::fsutil::json_pretty;
use crate::trace::{json_differences, summarize, Expectation, ExpectationKind, PropertyRef, Trace};
use memtx_model::display::{life_name, op_line, record_row};
use memtx_model::machine::{candidate_ops, step};
use memtx_model::properties::PROPERTIES;
use memtx_model::{Config, MemTx, State, Variant};
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
                "the trace cannot be replayed: its configuration is invalid ({reason}); restore the file or re-run the command in its \"command\" field"
            ),
            ReplayError::InitialState { fields } => write!(
                f,
                "the trace does not start from the model's initial state ({}); restore the file or re-run the command in its \"command\" field",
                summarize(fields, 3)
            ),
            ReplayError::NotEnabled {
                step,
                action,
                reason,
            } => write!(
                f,
                "step {step} ({action}) is not enabled: {reason}; the trace does not fit this model or variant: re-run the command in its \"command\" field to make a new one"
            ),
            ReplayError::StateMismatch {
                step,
                action,
                fields,
            } => write!(
                f,
                "step {step} ({action}) leads to a state other than the recorded one ({}); the model changed since the trace was made: re-run the command in its \"command\" field, or replay under a variant override to skip the comparison",
                summarize(fields, 3)
            ),
        }
    }
}

impl std::error::Error for ReplayError {}

impl From<ReplayError> for UserError {
    fn from(e: ReplayError) -> Self {
        UserError::new(ErrorKind::Replay, e.to_string())
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
    /// The property the trace is about.
    pub property: PropertyRef,
    /// The recorded expectation.
    pub expectation: Expectation,
    /// The command that made the trace.
    pub command: String,
    /// Step 0 (the initial state) and one entry per action.
    pub steps: Vec<ReplayStep>,
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
    if !inits.contains(&trace.initial_state) {
        let fields = inits
            .first()
            .map(|init| state_differences(init, &trace.initial_state, "model", "trace"))
            .unwrap_or_default();
        return Err(ReplayError::InitialState { fields });
    }
    let mut steps = vec![judge(
        &model,
        0,
        "init".into(),
        vec![],
        trace.initial_state.clone(),
    )];
    let mut pre = trace.initial_state.clone();
    let mut candidates = Vec::new();
    for (i, recorded) in trace.steps.iter().enumerate() {
        let number = i + 1;
        let label = op_line(&recorded.action);
        let post =
            step(&cfg, &pre, &recorded.action).map_err(|refusal| ReplayError::NotEnabled {
                step: number,
                action: label.clone(),
                reason: refusal.to_string(),
            })?;
        candidates.clear();
        candidate_ops(&cfg, &pre, &mut candidates);
        if !candidates.contains(&recorded.action) {
            return Err(ReplayError::NotEnabled {
                step: number,
                action: label,
                reason:
                    "the configuration's domain does not enumerate this operation in this state"
                        .into(),
            });
        }
        if !overridden && post != recorded.state {
            return Err(ReplayError::StateMismatch {
                step: number,
                action: label,
                fields: state_differences(&recorded.state, &post, "recorded", "replayed"),
            });
        }
        let changes = changes(&pre, &post);
        steps.push(judge(&model, number, label, changes, post.clone()));
        pre = post;
    }
    Ok(ReplayReport {
        recorded_variant: trace.config.variant,
        variant: cfg.variant,
        overridden,
        property: trace.property.clone(),
        expectation: trace.expectation.clone(),
        command: trace.command.clone(),
        steps,
    })
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

/// A short description of what changed from `pre` to `post`.
pub fn changes(pre: &State, post: &State) -> Vec<String> {
    let mut out = Vec::new();
    if pre.clock != post.clock {
        out.push(format!("clock {}→{}", pre.clock, post.clock));
    }
    for id in post.ids() {
        let r = post.record(id);
        if !pre.exists(id) {
            let row = record_row(id, r);
            out.push(format!(
                "added {}",
                row.split_whitespace().collect::<Vec<_>>().join(" ")
            ));
            continue;
        }
        let q = pre.record(id);
        let mut parts = Vec::new();
        if q.life() != r.life() {
            let why = match r.reason {
                Some(reason) if q.reason != r.reason => format!(" ({reason:?})"),
                _ => String::new(),
            };
            parts.push(format!(
                "{}→{}{why}",
                life_name(q.life()),
                life_name(r.life())
            ));
        } else if q.reason != r.reason {
            parts.push(format!("reason {:?}→{:?}", q.reason, r.reason));
        }
        if q.seq != r.seq {
            if let Some(seq) = r.seq {
                parts.push(format!("seq={seq}"));
            }
        }
        if q.effect != r.effect {
            parts.push(format!("effect {:?}→{:?}", q.effect, r.effect));
        }
        if q.pending_revocation != r.pending_revocation {
            parts.push(
                if r.pending_revocation {
                    "revocation requested"
                } else {
                    "no longer pending revocation"
                }
                .to_string(),
            );
        }
        if q.writer != r.writer {
            parts.push(match r.writer {
                Some(w) => format!("staged by a{w}"),
                None => "no longer staged".to_string(),
            });
        }
        if q.parents != r.parents {
            parts.push(format!("parents {:?}→{:?}", q.parents, r.parents));
        }
        if q.doubted_at_execution != r.doubted_at_execution {
            parts.push(format!("doubted at execution {:?}", r.doubted_at_execution));
        }
        if !parts.is_empty() {
            out.push(format!("r{id} {}", parts.join(", ")));
        }
    }
    for (agent, (a, b)) in pre.txns().iter().zip(post.txns()).enumerate() {
        match (a, b) {
            (None, Some(t)) => out.push(format!(
                "a{agent} opened {:?} {:?} snapshot={:?} snapshot_seq={}",
                t.tier, t.isolation, t.snapshot, t.snapshot_seq
            )),
            (Some(_), None) => out.push(format!("a{agent} closed")),
            (Some(x), Some(y)) if x != y => out.push(format!("a{agent} transaction changed")),
            _ => {}
        }
    }
    if pre.next_seq != post.next_seq {
        out.push(format!("next_seq {}→{}", pre.next_seq, post.next_seq));
    }
    for id in post.ids() {
        let after = post.audit(id);
        let before = if pre.exists(id) {
            *pre.audit(id)
        } else {
            Default::default()
        };
        let added: Vec<String> = after
            .repairs()
            .filter(|r| !before.has(*r))
            .map(|r| format!("{r:?}"))
            .collect();
        if !added.is_empty() || before.cause != after.cause {
            let cause = after.cause.map_or("-".to_string(), |c| format!("r{c}"));
            let what = if added.is_empty() {
                "cause changed".to_string()
            } else {
                format!("+{}", added.join("+"))
            };
            out.push(format!("log r{id} {what} (cause {cause})"));
        }
    }
    let newly: Vec<String> = (0..16u8)
        .filter(|&n| post.ghost.is_violated(n) && !pre.ghost.is_violated(n))
        .map(|n| format!("I{n}"))
        .collect();
    if !newly.is_empty() {
        out.push(format!("ghost: {} violated", newly.join(", ")));
    }
    out
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

    /// Does the replay observe `expectation` (see the module docs)?
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
            ExpectationKind::AllHold => self.steps.iter().all(|s| s.failing.is_empty()),
        }
    }

    /// Does the replay observe the trace's recorded expectation?
    pub fn expectation_met(&self) -> bool {
        self.meets(&self.expectation)
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
        if self.expectation_met() {
            return format!("expectation met: {}", e.describe());
        }
        let seen = match e.kind {
            ExpectationKind::Violation => {
                match e.property.as_deref().and_then(|k| self.first_failure(k)) {
                    Some(s) => format!("it first fails at step {s}"),
                    None => "it never fails".to_string(),
                }
            }
            ExpectationKind::Example => "it does not hold there".to_string(),
            ExpectationKind::AllHold => format!("failing: {}", self.ever_failing().join(", ")),
        };
        format!("expectation NOT met: {} ({seen})", e.describe())
    }

    /// The report for humans: a header, one block per step, the final state and the verdict.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Replay of a trace for {} ({} steps), variant {}{}",
            self.property.name,
            self.len(),
            self.variant.name(),
            if self.overridden {
                format!(
                    " (overridden; recorded under {}: recorded states not compared)",
                    self.recorded_variant.name()
                )
            } else {
                String::new()
            }
        );
        let _ = writeln!(s, "Found by: {}", self.command);
        let _ = writeln!(s, "Recorded expectation: {}", self.expectation.describe());
        for st in &self.steps {
            let _ = writeln!(s);
            if st.step == 0 {
                let _ = writeln!(s, "step 0: initial state");
            } else {
                let _ = writeln!(s, "step {}: {}", st.step, st.label);
                if st.changes.is_empty() {
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
