//! Export of a trace in the Informal Trace Format (ITF), for Apalache, Quint and their tools.
//!
//! ITF ([Apalache ADR-015](https://apalache-mc.org/docs/adr/015adr-trace.html)) is the JSON trace
//! format of the TLA+/Quint ecosystem: trace viewers, the `itf` Rust crate, model-based testing
//! drivers. A memtx trace ([`crate::trace`]) stays the file memtx replays; the `.itf.json` written
//! next to it is a read-only view for those tools.
//!
//! ITF encodes TLA+ values in JSON:
//!
//! | TLA+ value | ITF | used here for |
//! |---|---|---|
//! | integer | `{"#bigint": "42"}` (always, small or big) | clock, ids, slots, values, sequence numbers |
//! | string | `"text"` | enum values (`"Committed"`, `"medium"`), labels |
//! | Boolean | `true` / `false` | flags |
//! | record | a JSON object (no `#` keys) | a record, a transaction, a log entry |
//! | sequence | a JSON array | `records`, `log` (index = record id) |
//! | set | `{"#set": [...]}` | parents, snapshots, repairs, violated ghosts |
//! | function | `{"#map": [[key, value], ...]}` | `txns`: agent ↦ open transaction |
//! | variant (Quint sum type) | `{"tag": "Some", "value": v}` / `{"tag": "None", "value": {}}` | optional fields |
//!
//! The file:
//!
//! ```json
//! {
//!   "#meta": { "format": "ITF", "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
//!              "source": "missed-cascade-I2.trace.json", "description": "memtx 0.1.0: ... I2 ... violation at step 7" },
//!   "vars": ["action", "clock", "next_seq", "records", "txns", "log", "ghost_violated"],
//!   "states": [
//!     { "#meta": { "index": 0, "action": "init" }, "action": "init", "clock": { "#bigint": "0" }, "...": "..." },
//!     { "#meta": { "index": 1, "action": "a0 Begin Medium CommittedRead" }, "...": "..." }
//!   ]
//! }
//! ```
//!
//! State 0 is the trace's initial state (action `"init"`); state `k` is the state after step `k`,
//! with that step's label as `action`. A validity's `until` is `None` when it is unbounded.

use crate::error::UserError;
use crate::fsutil::{json_pretty, write_atomic};
use crate::trace::Trace;
use memtx_model::record::{Record, FOREVER};
use memtx_model::txn::Txn;
use memtx_model::State;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::Path;

/// The ITF variables, in the order they are listed in `vars`.
pub const ITF_VARS: &[&str] = &[
    "action",
    "clock",
    "next_seq",
    "records",
    "txns",
    "log",
    "ghost_violated",
];

/// The `action` of state 0.
pub const INIT_ACTION: &str = "init";

/// An ITF integer: `{"#bigint": "n"}`.
pub fn int(n: impl Into<i128>) -> Value {
    json!({ "#bigint": n.into().to_string() })
}

/// An ITF set: `{"#set": [...]}`.
pub fn set(items: impl IntoIterator<Item = Value>) -> Value {
    json!({ "#set": items.into_iter().collect::<Vec<_>>() })
}

/// An optional value as a variant, as Quint writes its `Option` type: `Some(v)` or `None`
/// (read it in Rust with `#[serde(tag = "tag", content = "value")] enum Opt<T> { Some(T), None }`).
pub fn option(v: Option<Value>) -> Value {
    match v {
        Some(v) => json!({ "tag": "Some", "value": v }),
        None => json!({ "tag": "None", "value": {} }),
    }
}

/// The serde name of an enum value (e.g. `"committed-read"`), as in memtx traces.
fn name<T: Serialize>(v: &T) -> Value {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => Value::String(s),
        Ok(other) => Value::String(other.to_string()),
        Err(e) => Value::String(format!("<{e}>")),
    }
}

fn ids(set_of: memtx_model::RecordSet) -> Value {
    set(set_of.iter().map(int))
}

/// One record as an ITF record (its id is its position in `records`, repeated as `id`).
pub fn record_value(id: u8, r: &Record) -> Value {
    let until = (r.validity.until != FOREVER).then(|| int(r.validity.until));
    json!({
        "id": int(id),
        "kind": name(&r.kind),
        "slot": int(r.slot),
        "value": int(r.value),
        "source": int(r.source),
        "confidence": name(&r.confidence),
        "owner": int(r.owner),
        "scope": name(&r.scope),
        "parents": ids(r.parents),
        "validity": { "from": int(r.validity.from), "until": option(until) },
        "life": name(&r.life()),
        "reason": option(r.reason.map(|x| name(&x))),
        "writer": option(r.writer.map(int)),
        "seq": option(r.seq.map(int)),
        "effect": option(r.effect.map(|x| name(&x))),
        "pending_revocation": r.pending_revocation,
        "doubted_at_execution": ids(r.doubted_at_execution),
    })
}

/// One open transaction as an ITF record.
pub fn txn_value(t: &Txn) -> Value {
    json!({
        "tier": name(&t.tier),
        "isolation": name(&t.isolation),
        "snapshot": ids(t.snapshot),
        "snapshot_seq": int(t.snapshot_seq),
    })
}

/// The ITF variables of one state, with `action` as its label.
pub fn state_vars(state: &State, action: &str) -> Map<String, Value> {
    let records: Vec<Value> = state
        .records()
        .iter()
        .enumerate()
        .map(|(id, r)| record_value(id as u8, r))
        .collect();
    let txns: Vec<Value> = state
        .txns()
        .iter()
        .enumerate()
        .filter_map(|(agent, t)| t.as_ref().map(|t| json!([int(agent as u8), txn_value(t)])))
        .collect();
    let log: Vec<Value> = state
        .ids()
        .map(|id| {
            let entry = state.audit(id);
            json!({
                "repairs": set(entry.repairs().map(|r| name(&r))),
                "cause": option(entry.cause.map(int)),
            })
        })
        .collect();
    let violated = state.ghost.violated.numbers().map(int);
    let mut m = Map::new();
    m.insert("action".into(), Value::String(action.to_string()));
    m.insert("clock".into(), int(state.clock));
    m.insert("next_seq".into(), int(state.next_seq));
    m.insert("records".into(), Value::Array(records));
    m.insert("txns".into(), json!({ "#map": txns }));
    m.insert("log".into(), Value::Array(log));
    m.insert("ghost_violated".into(), set(violated));
    m
}

/// The ITF document of `trace`; `source` names the file it was made from (for `#meta.source`).
/// A trace without its states (a hand-written scenario) is completed by replaying it first; if
/// it does not replay, the states it lacks are left out.
pub fn to_itf(trace: &Trace, source: &str) -> Value {
    let completed;
    let trace = if trace.has_states() {
        trace
    } else {
        match trace.completed() {
            Ok(t) => {
                completed = t;
                &completed
            }
            Err(_) => trace,
        }
    };
    let mut states = Vec::with_capacity(trace.len() + 1);
    let labelled = std::iter::once((INIT_ACTION, trace.initial_state.as_ref())).chain(
        trace
            .steps
            .iter()
            .map(|s| (s.label.as_str(), s.state.as_ref())),
    );
    for (index, (label, state)) in labelled.enumerate() {
        let Some(state) = state else { continue };
        let mut vars = state_vars(state, label);
        vars.insert("#meta".into(), json!({ "index": index, "action": label }));
        states.push(Value::Object(vars));
    }
    let about = trace
        .property
        .as_ref()
        .map_or("a scenario", |p| p.name.as_str());
    let tool = if trace.tool.is_empty() {
        "hand-written"
    } else {
        trace.tool.as_str()
    };
    let found_by = if trace.command.is_empty() {
        String::new()
    } else {
        format!("; found by: {}", trace.command)
    };
    let description = format!(
        "{tool}: {about} under variant {} ({}){found_by}",
        trace.config.variant.name(),
        trace.expectation.describe(),
    );
    json!({
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": source,
            "description": description,
        },
        "vars": ITF_VARS,
        "states": states,
    })
}

/// Writes the ITF form of `trace` to `path` atomically.
pub fn write_itf(trace: &Trace, source: &str, path: &Path) -> Result<(), UserError> {
    write_atomic(path, json_pretty(&to_itf(trace, source)).as_bytes())
}
