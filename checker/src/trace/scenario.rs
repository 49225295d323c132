//! Per-step expectations of a scenario file: `"expect": {...}` on a step.
//!
//! A hand-written trace (a *scenario*, see `docs/traces.md`) says what must happen at each step,
//! in the model's own names:
//!
//! ```json
//! { "action": { "op": "call-tool", "agent": 0, "reversible": false, "support": [0] },
//!   "expect": { "refused": "gate.block.in-flight" } }
//! { "action": { "op": "apply-revocation", "record": 0 },
//!   "expect": { "records": { "r1": { "life": "Quarantined", "reason": "rebuild" },
//!                            "r3": { "effect": "leaked" } } } }
//! ```
//!
//! * `refused`: the step must be refused (not enabled), for this reason: the id of a rule of the
//!   rule table that refused it (an `enable.*` part of the operation's enabling condition, or a
//!   `gate.block.*` block of the action gate; `docs/protocol.md` lists them), or the gate's block
//!   condition as the model names it (`in-flight-tentative`, `support-not-in-force`, ...). A
//!   refused step changes nothing; the replay goes on from the same state.
//! * `records`: for each named record (`"r1"` or `"1"`), what it must be after the step: its
//!   lifecycle state `life` (`Tentative`, `Committed`, `Quarantined`, ...), its `reason` (the
//!   quarantine, abort or supersession reason: `review`, `stale-write`, `permission`, `rebuild`,
//!   ...; `null` for none), its `effect` (tool actions: `executed`, `compensated`, `leaked`;
//!   `null` for none) and whether a revocation of it is pending (`pending_revocation`). Only
//!   the fields given are compared.
//! * `violates`: the invariants (`always` properties) that must fail in the state after the step.
//!
//! A malformed expectation (an unknown reason, record field, lifecycle state or property, a
//! record id beyond the configuration's bounds) is refused when the file is read, as bad input
//! (exit 2). An expectation the replay does not observe is a [`Mismatch`] (exit 1) naming the
//! step, the record and the difference.

use crate::error::{ErrorKind, UserError};
use crate::input::cut;
use memtx_model::lifecycle::Life;
use memtx_model::ops::Refusal;
use memtx_model::properties::PropertyDef;
use memtx_model::record::{Effect, Reason, Record, RecordId};
use memtx_model::rules::{self, Family, Fired};
use memtx_model::State;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// What one step of a scenario must show (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StepExpect {
    /// The step must be refused for this reason (a rule id or a gate block condition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Named records and what they must be after the step.
    #[serde(
        skip_serializing_if = "BTreeMap::is_empty",
        serialize_with = "records_by_name"
    )]
    pub records: BTreeMap<RecordId, RecordExpect>,
    /// Invariants that must fail in the state after the step.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violates: Vec<String>,
}

/// What a record must be after a step; `None` fields are not compared.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RecordExpect {
    /// Its lifecycle state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub life: Option<Life>,
    /// Its reason code (`Some(None)`: it must have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Option<Reason>>,
    /// Its effect (`Some(None)`: it must have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<Option<Effect>>,
    /// Whether a revocation of it is pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_revocation: Option<bool>,
}

fn records_by_name<S: Serializer>(
    records: &BTreeMap<RecordId, RecordExpect>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(records.iter().map(|(id, e)| (format!("r{id}"), e)))
}

/// The gate's block conditions as the model names them (`GateBlock`'s `condition` tag), with
/// the rule each one is.
pub const GATE_CONDITIONS: &[(&str, &str)] = &[
    ("in-flight-tentative", "gate.block.in-flight"),
    ("no-action-safe-in-snapshot", "gate.block.no-action-safe"),
    (
        "support-not-action-safe",
        "gate.block.support-not-action-safe",
    ),
    ("support-expired", "gate.block.support-expired"),
    ("support-not-in-force", "gate.block.support-not-in-force"),
    ("unstable-support", "gate.block.unstable-support"),
];

/// Is `reason` a refusal reason a scenario may name: an `enable.*` or `gate.block.*` rule id,
/// or a gate block condition?
pub fn is_refusal_reason(reason: &str) -> bool {
    GATE_CONDITIONS.iter().any(|(name, _)| *name == reason)
        || rules::find(reason)
            .is_some_and(|r| r.family == Family::Enabling || r.id.starts_with("gate.block."))
}

/// One expectation the replay did not observe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// The step (1 = the first action).
    pub step: usize,
    /// What was expected and what happened instead, e.g. `r1: expected life Committed, got
    /// Quarantined`.
    pub what: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {}: {}", self.step, self.what)
    }
}

/// How a step was refused: the model's message and the ids of the refusal rules that fired
/// (every failing part of an enabling condition fires, the first is the reason given).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RefusalSeen {
    /// The model's one-line reason.
    pub message: String,
    /// The `enable.*` and `gate.block.*` rules that fired.
    pub rules: Vec<String>,
    /// The gate's block condition, when the gate refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

impl RefusalSeen {
    /// The refusal `r`, with the rules `fired` while it was attempted.
    pub fn new(r: &Refusal, fired: Fired) -> Self {
        let rules = rules::in_set(fired)
            .filter(|d| d.family == Family::Enabling || d.id.starts_with("gate.block."))
            .map(|d| d.id.to_string())
            .collect();
        let condition = match r {
            Refusal::Blocked(block) => GATE_CONDITIONS
                .iter()
                .find(|(_, id)| *id == block.rule().id())
                .map(|(name, _)| name.to_string()),
            _ => None,
        };
        RefusalSeen {
            message: r.to_string(),
            rules,
            condition,
        }
    }

    /// Does this refusal have `reason` (see [`StepExpect::refused`])?
    pub fn matches(&self, reason: &str) -> bool {
        self.rules.iter().any(|r| r == reason) || self.condition.as_deref() == Some(reason)
    }

    /// One short line: the rule ids (or the message when no rule fired) and the message.
    pub fn describe(&self) -> String {
        if self.rules.is_empty() {
            self.message.clone()
        } else {
            format!("{} ({})", self.rules.join(", "), self.message)
        }
    }
}

/// The serde name of a value (`stale-write`), as the files spell it.
pub fn serde_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(Value::Null) => "none".to_string(),
        Ok(other) => other.to_string(),
        Err(_) => "?".to_string(),
    }
}

fn opt_name<T: Serialize>(v: &Option<T>) -> String {
    v.as_ref().map_or("none".to_string(), serde_name)
}

impl StepExpect {
    /// Reads the `expect` object of step `step` (1-based). `records` is the configuration's
    /// record bound. The error is the path below the step and what is wrong with it.
    pub fn read(v: &Value, records: u8) -> Result<StepExpect, (String, String)> {
        let Value::Object(obj) = v else {
            return Err(("expect".into(), "expected an object".into()));
        };
        let mut out = StepExpect::default();
        for (key, value) in obj {
            match key.as_str() {
                "refused" => {
                    let Some(reason) = value.as_str() else {
                        return Err((
                            "expect.refused".into(),
                            "expected a string (a rule id such as \"gate.block.in-flight\")".into(),
                        ));
                    };
                    if !is_refusal_reason(reason) {
                        return Err((
                            "expect.refused".into(),
                            format!(
                                "unknown refusal reason \"{}\": name an enable.* or gate.block.* rule id (docs/protocol.md) or a gate block condition ({})",
                                cut(reason),
                                GATE_CONDITIONS
                                    .iter()
                                    .map(|(n, _)| *n)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                    out.refused = Some(reason.to_string());
                }
                "records" => {
                    let Value::Object(recs) = value else {
                        return Err((
                            "expect.records".into(),
                            "expected an object such as {\"r1\": {\"life\": \"Committed\"}}".into(),
                        ));
                    };
                    for (name, e) in recs {
                        let at = format!("expect.records.{}", cut(name));
                        let id = record_id(name).ok_or_else(|| {
                            (
                                at.clone(),
                                "not a record id: write \"r1\" or \"1\"".to_string(),
                            )
                        })?;
                        if id >= records {
                            return Err((
                                at,
                                format!(
                                    "record r{id} cannot exist: the configuration has {records} record slots"
                                ),
                            ));
                        }
                        let e = RecordExpect::read(e).map_err(|why| (at, why))?;
                        out.records.insert(id, e);
                    }
                }
                "violates" => {
                    let keys: Vec<String> = Vec::deserialize(value).map_err(|e| {
                        (
                            "expect.violates".into(),
                            crate::input::cut_quoted(&e.to_string()),
                        )
                    })?;
                    for k in &keys {
                        match PropertyDef::find(k) {
                            Some(p) if p.is_invariant() => {}
                            Some(p) => {
                                return Err((
                                    "expect.violates".into(),
                                    format!(
                                    "{} is an example (a \"sometimes\" property), not an invariant",
                                    p.key
                                ),
                                ))
                            }
                            None => {
                                return Err((
                                    "expect.violates".into(),
                                    format!(
                                        "unknown property \"{}\": name invariants I1…I14",
                                        cut(k)
                                    ),
                                ))
                            }
                        }
                    }
                    out.violates = keys
                        .iter()
                        .filter_map(|k| PropertyDef::find(k).map(|p| p.key.to_string()))
                        .collect();
                }
                other => {
                    return Err((
                        "expect".into(),
                        format!(
                        "unknown field \"{}\": an expectation holds refused, records and violates",
                        cut(other)
                    ),
                    ))
                }
            }
        }
        Ok(out)
    }

    /// The records expectations not met in `state` (after step `step`).
    pub fn judge_records(&self, step: usize, state: &State, out: &mut Vec<Mismatch>) {
        for (&id, want) in &self.records {
            if !state.exists(id) {
                out.push(Mismatch {
                    step,
                    what: format!(
                        "r{id}: expected {}, but r{id} does not exist",
                        want.describe()
                    ),
                });
                continue;
            }
            for what in want.differences(state.record(id)) {
                out.push(Mismatch {
                    step,
                    what: format!("r{id}: {what}"),
                });
            }
        }
    }

    /// The `violates` expectations not met, given the invariants `failing` after step `step`.
    pub fn judge_violations(&self, step: usize, failing: &[String], out: &mut Vec<Mismatch>) {
        for key in &self.violates {
            if !failing.iter().any(|k| k == key) {
                out.push(Mismatch {
                    step,
                    what: format!("expected {key} to be violated, but it holds"),
                });
            }
        }
    }
}

fn record_id(name: &str) -> Option<RecordId> {
    name.strip_prefix('r').unwrap_or(name).parse().ok()
}

impl RecordExpect {
    fn read(v: &Value) -> Result<RecordExpect, String> {
        let Value::Object(obj) = v else {
            return Err(
                "expected an object with life, reason, effect or pending_revocation".into(),
            );
        };
        let mut out = RecordExpect::default();
        let bad = |field: &str, e: serde_json::Error| {
            format!("{field}: {}", crate::input::cut_quoted(&e.to_string()))
        };
        for (key, value) in obj {
            match key.as_str() {
                "life" => out.life = Some(Life::deserialize(value).map_err(|e| bad("life", e))?),
                "reason" => {
                    out.reason =
                        Some(Option::<Reason>::deserialize(value).map_err(|e| bad("reason", e))?)
                }
                "effect" => {
                    out.effect =
                        Some(Option::<Effect>::deserialize(value).map_err(|e| bad("effect", e))?)
                }
                "pending_revocation" => {
                    out.pending_revocation = Some(
                        bool::deserialize(value).map_err(|e| bad("pending_revocation", e))?,
                    )
                }
                other => {
                    return Err(format!(
                        "unknown field \"{}\": a record expectation holds life, reason, effect and pending_revocation",
                        cut(other)
                    ))
                }
            }
        }
        Ok(out)
    }

    /// `life Committed, reason none` (the fields given).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(l) = self.life {
            parts.push(format!("life {}", serde_name(&l)));
        }
        if let Some(r) = &self.reason {
            parts.push(format!("reason {}", opt_name(r)));
        }
        if let Some(e) = &self.effect {
            parts.push(format!("effect {}", opt_name(e)));
        }
        if let Some(p) = self.pending_revocation {
            parts.push(format!("pending_revocation {p}"));
        }
        if parts.is_empty() {
            "it to exist".to_string()
        } else {
            parts.join(", ")
        }
    }

    /// `expected life Committed, got Quarantined` for each field that differs.
    pub fn differences(&self, r: &Record) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(l) = self.life {
            if r.life() != l {
                out.push(format!(
                    "expected life {}, got {}",
                    serde_name(&l),
                    serde_name(&r.life())
                ));
            }
        }
        if let Some(want) = &self.reason {
            if r.reason != *want {
                out.push(format!(
                    "expected reason {}, got {}",
                    opt_name(want),
                    opt_name(&r.reason)
                ));
            }
        }
        if let Some(want) = &self.effect {
            if r.effect != *want {
                out.push(format!(
                    "expected effect {}, got {}",
                    opt_name(want),
                    opt_name(&r.effect)
                ));
            }
        }
        if let Some(p) = self.pending_revocation {
            if r.pending_revocation != p {
                out.push(format!(
                    "expected pending_revocation {p}, got {}",
                    r.pending_revocation
                ));
            }
        }
        out
    }
}

/// The malformed-expectation error of step `step` (1-based) of `origin`.
pub fn malformed_expect(origin: &str, step: usize, at: &str, why: &str) -> UserError {
    UserError::with_fix(
        ErrorKind::Malformed,
        format!("{origin}: step {step}: {at}: {why}"),
        "fix the expectation (docs/traces.md lists what a step may expect)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtx_model::gate::GateBlock;
    use serde_json::json;

    #[test]
    fn reasons_are_rule_ids_or_gate_conditions() {
        assert!(is_refusal_reason("gate.block.in-flight"));
        assert!(is_refusal_reason("enable.commit.no-txn"));
        assert!(is_refusal_reason("support-not-in-force"));
        assert!(!is_refusal_reason("op.commit"));
        assert!(!is_refusal_reason("gate.pass.weak"));
        for (name, id) in GATE_CONDITIONS {
            assert!(rules::find(id).is_some(), "{id}");
            let tags = [
                GateBlock::InFlightTentative { record: 0 },
                GateBlock::NoActionSafeInSnapshot,
                GateBlock::SupportNotActionSafe { record: 0 },
                GateBlock::SupportExpired { record: 0 },
                GateBlock::SupportNotInForce {
                    record: 0,
                    life: Life::Raw,
                    pending_revocation: false,
                },
                GateBlock::UnstableSupport {
                    record: 0,
                    ancestor: 0,
                },
            ];
            let block = tags
                .iter()
                .find(|b| b.rule().id() == *id)
                .expect("a block per condition");
            let v = serde_json::to_value(block).expect("serialise");
            assert_eq!(v["condition"], json!(name), "{id}");
        }
    }

    #[test]
    fn expectations_read_and_refuse_what_is_malformed() {
        let e = StepExpect::read(
            &json!({"refused": "gate.block.in-flight", "records": {"r1": {"life": "Committed", "reason": null}}, "violates": ["i2"]}),
            3,
        )
        .expect("well formed");
        assert_eq!(e.refused.as_deref(), Some("gate.block.in-flight"));
        assert_eq!(e.records[&1].life, Some(Life::Committed));
        assert_eq!(e.records[&1].reason, Some(None));
        assert_eq!(e.violates, ["I2"]);
        let bad = |v: Value| StepExpect::read(&v, 3).expect_err("malformed");
        assert_eq!(bad(json!({"refused": "nope"})).0, "expect.refused");
        assert_eq!(bad(json!({"records": {"r7": {}}})).0, "expect.records.r7");
        assert!(bad(json!({"records": {"r1": {"life": "Comitted"}}}))
            .1
            .contains("life"));
        assert!(bad(json!({"violates": ["E1"]})).1.contains("example"));
        assert!(bad(json!({"refuse": "x"})).1.contains("unknown field"));
    }
}
