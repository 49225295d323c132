//! # memtx-reference: a small reference implementation of MemTX that logs what it does
//!
//! An implementation of the protocol of `docs/protocol.md`, written as an agent-memory service
//! would be (records with names, agents with names, real-valued authority and confidence), that
//! does **not** depend on `memtx-model`: it shares no code with the model memtx checks, so a
//! log it writes that `memtx validate-log` accepts is evidence that the two agree, and each of
//! its switchable [`Defect`]s is a defect a real service could have. It was written from
//! `docs/protocol.md`, with the model's code read where that page is terse: it shares no code
//! with the model, but it is not a clean-room implementation (a held-out one is the real test).
//!
//! It runs a *script*: an event log (`docs/event-log.md`) whose events have no outcomes (any
//! outcome given is ignored). It performs each event (or refuses it) and writes the log with
//! the outcome it decided: whether it refused and why, and every record the event created or
//! changed (`"all_changes": true`). [`run_script`] is the whole interface.
//!
//! Scope: every operation of the protocol (`tick`, `observe`, `begin`, `stage` of beliefs and
//! views, `adopt`, `commit`, `abort`, `call-tool`, `request-revocation`, `apply-revocation`,
//! `revalidate`, `rebuild`, `read`, `end-session`, `resolve`), any number of agents. An event of
//! another kind is logged refused.

mod commit;
mod gate;
mod record;
mod store;

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use store::Store;

/// A deliberate defect, switched on by name: one per pipeline check, the gate and the cascade.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Defect {
    /// Check 1 skipped: a belief without evidence commits.
    NoEvidenceCheck,
    /// Check 2 skipped: an expired belief commits.
    NoValidityCheck,
    /// Check 3, in part: a rival committed after the snapshot does not abort a write.
    NoStaleWriteCheck,
    /// The lineage part of check 4 skipped: a record over a revoked or uncommitted parent commits.
    NoLineageCheck,
    /// Permission inheritance skipped: a Shared record over Private content commits.
    NoPermissionCheck,
    /// Dependency stability skipped: a record over a parent pending revocation commits.
    NoStabilityCheck,
    /// The gate's condition 1 skipped: an irreversible call runs while a record is in flight.
    GateIgnoresInFlight,
    /// The cascade stops at the retracted record: its descendants stay as they were.
    NoCascade,
}

impl Defect {
    /// Every defect.
    pub const ALL: [Defect; 8] = [
        Defect::NoEvidenceCheck,
        Defect::NoValidityCheck,
        Defect::NoStaleWriteCheck,
        Defect::NoLineageCheck,
        Defect::NoPermissionCheck,
        Defect::NoStabilityCheck,
        Defect::GateIgnoresInFlight,
        Defect::NoCascade,
    ];

    /// Its name (`no-evidence-check`).
    pub fn name(self) -> &'static str {
        match self {
            Defect::NoEvidenceCheck => "no-evidence-check",
            Defect::NoValidityCheck => "no-validity-check",
            Defect::NoStaleWriteCheck => "no-stale-write-check",
            Defect::NoLineageCheck => "no-lineage-check",
            Defect::NoPermissionCheck => "no-permission-check",
            Defect::NoStabilityCheck => "no-stability-check",
            Defect::GateIgnoresInFlight => "gate-ignores-in-flight",
            Defect::NoCascade => "no-cascade",
        }
    }
}

/// Runs `script` (an event log; outcomes ignored) with the `defects` switched on; the log with
/// this implementation's outcomes, one line per event. The error names the line of a script
/// it cannot read.
pub fn run_script(script: &str, defects: &[Defect]) -> Result<String, String> {
    let mut out = String::new();
    let mut store: Option<Store> = None;
    for (n, line) in script.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| format!("line {}: {m}", n + 1);
        let value: Value = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
        let Value::Object(mut e) = value else {
            return Err(at("not an object".into()));
        };
        if e.contains_key("format") {
            let authority = e
                .get("sources")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(0.8)))
                        .collect()
                })
                .unwrap_or_default();
            store = Some(Store {
                defects: defects.iter().copied().collect(),
                recs: Vec::new(),
                clock: 0,
                next_seq: 0,
                txns: BTreeMap::new(),
                contexts: BTreeMap::new(),
                authority,
            });
            out.push_str(line.trim());
            out.push('\n');
            continue;
        }
        let s = store
            .as_mut()
            .ok_or_else(|| at("an event before a header".into()))?;
        e.remove("outcome");
        let before: Vec<Value> = s.recs.iter().map(|r| s.outcome_of(r)).collect();
        match s.perform(&e).map_err(at)? {
            Err(reason) => {
                // An operation this implementation does not support: refused, no reason.
                let said = if reason == "unsupported" {
                    json!(true)
                } else {
                    json!(reason)
                };
                e.insert("outcome".into(), json!({ "refused": said }));
            }
            Ok(()) => {
                let mut records = Map::new();
                for (i, r) in s.recs.iter().enumerate() {
                    let now = s.outcome_of(r);
                    if before.get(i) != Some(&now) {
                        records.insert(r.name.clone(), now);
                    }
                }
                e.insert(
                    "outcome".into(),
                    json!({ "records": records, "all_changes": true }),
                );
            }
        }
        out.push_str(&Value::Object(e).to_string());
        out.push('\n');
    }
    Ok(out)
}
