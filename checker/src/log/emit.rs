//! The other direction: a path through the model written as an event log, in names an
//! implementation might use (`planner`, `note-3`, `order-1.eligible`), with every outcome the
//! protocol gives. Used to turn traces and scenarios into logs (a round trip `validate-log`
//! must accept), to generate long logs for the benchmark, and by the conformance suite.
//!
//! Each operation is performed on the model's step function; a refused one is logged with
//! `"refused"` and its first refusal rule. After a performed one, every record it created or
//! changed (lifecycle state, reason, effect, pending revocation) is named with what it became,
//! and `"all_changes": true` says that these are all.

use super::event::{LOG_FORMAT, LOG_VERSION};
use super::names::life_name;
use crate::trace::scenario::{serde_name, RefusalSeen};
use memtx_model::machine::step;
use memtx_model::record::{RecordId, RecordSet, FOREVER};
use memtx_model::rules::take_fired;
use memtx_model::{Config, Op, State};
use serde_json::{json, Map, Value};

const AGENTS: [&str; 4] = ["planner", "critic", "booker", "mailer"];

/// The name of agent `a`.
pub fn agent_name(a: u8) -> String {
    AGENTS
        .get(a as usize)
        .map_or_else(|| format!("agent-{a}"), |s| s.to_string())
}

/// The name of record `id`, of kind `kind` (`note-0`, `summary-3`, `call-5`).
fn record_name(state: &State, id: RecordId) -> String {
    if !state.exists(id) {
        return format!("missing-{id}");
    }
    let r = state.record(id);
    let prefix = if r.kind.is_action() {
        "call"
    } else if r.kind.is_view() {
        "view"
    } else {
        "note"
    };
    format!("{prefix}-{id}")
}

/// A real number as the log writes it (the f32 level's shortest decimal: 0.95, not
/// 0.949999988).
fn real(x: f32) -> Value {
    let shortest: f64 = format!("{x}").parse().unwrap_or(f64::from(x));
    json!(shortest)
}

fn names(state: &State, set: RecordSet) -> Vec<String> {
    set.iter().map(|id| record_name(state, id)).collect()
}

/// Writes `ops` from the model's initial state under `cfg` as one run named `run`: the header
/// line, then one line per operation. Refused operations are logged as refused.
pub fn emit_run(run: &str, cfg: &Config, ops: &[Op]) -> Vec<String> {
    let mut lines = Vec::with_capacity(ops.len() + 1);
    let sources: Map<String, Value> = cfg
        .bounds
        .sources
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("source-{i}"), real(a.value())))
        .collect();
    lines.push(
        json!({"format": LOG_FORMAT, "version": LOG_VERSION, "run": run, "service": crate::trace::tool_id(), "sources": sources})
            .to_string(),
    );
    let mut state = State::initial();
    for op in ops {
        take_fired();
        let result = step(cfg, &state, op);
        let fired = take_fired();
        // Names of records are those of the state the operation creates them in.
        let post = result.as_ref().ok();
        let naming = post.unwrap_or(&state);
        let mut event = event_of(op, &state, naming);
        match &result {
            Err(refusal) => {
                let seen = RefusalSeen::new(refusal, fired);
                let reason = seen
                    .rules
                    .first()
                    .cloned()
                    .or(seen.condition)
                    .map_or(json!(true), Value::String);
                event.insert("outcome".into(), json!({ "refused": reason }));
            }
            Ok(post) => {
                let changed = crate::trace::changed_records(&state, post);
                {
                    let mut records = Map::new();
                    for id in changed.iter() {
                        let r = post.record(id);
                        let mut o = Map::new();
                        o.insert("state".into(), json!(life_name(r.life())));
                        o.insert(
                            "reason".into(),
                            r.reason.map_or(Value::Null, |x| json!(serde_name(&x))),
                        );
                        if r.kind.is_action() {
                            o.insert(
                                "effect".into(),
                                r.effect.map_or(Value::Null, |x| json!(serde_name(&x))),
                            );
                        }
                        o.insert("pending_revocation".into(), json!(r.pending_revocation));
                        records.insert(record_name(post, id), Value::Object(o));
                    }
                    event.insert(
                        "outcome".into(),
                        json!({ "records": records, "all_changes": true }),
                    );
                }
            }
        }
        lines.push(Value::Object(event).to_string());
        if let Ok(post) = result {
            state = post;
        }
    }
    lines
}

/// The event of `op` taken in `pre`; records it creates are named after `post`.
fn event_of(op: &Op, pre: &State, post: &State) -> Map<String, Value> {
    let new_record = || {
        let id = pre.len() as RecordId;
        if post.exists(id) {
            record_name(post, id)
        } else {
            // Refused: the name it would have had.
            format!("refused-{}", pre.len())
        }
    };
    let key = |slot: u8| (format!("order-{slot}"), "eligible".to_string());
    let value = |v: u8| -> Value {
        // Values of several JSON types, to exercise the mapping.
        match v % 3 {
            0 => json!(format!("v{v}")),
            1 => json!(v),
            _ => json!(v.is_multiple_of(2)),
        }
    };
    let ev = match *op {
        Op::Tick => json!({"event": "tick"}),
        Op::Observe {
            source,
            slot,
            value: v,
            confidence,
            scope,
            owner,
        } => {
            let (entity, attribute) = key(slot);
            json!({"event": "observe", "record": new_record(), "agent": agent_name(owner),
                "entity": entity, "attribute": attribute, "value": value(v),
                "source": format!("source-{source}"), "confidence": real(confidence.value()),
                "scope": serde_name(&scope)})
        }
        Op::Begin {
            agent,
            tier,
            isolation,
        } => json!({"event": "begin", "agent": agent_name(agent), "tier": serde_name(&tier),
            "isolation": serde_name(&isolation)}),
        Op::Stage {
            agent,
            kind,
            slot,
            value: v,
            source,
            confidence,
            scope,
            parents,
            validity,
        } => {
            if kind.is_view() {
                json!({"event": "stage", "agent": agent_name(agent), "record": new_record(),
                    "kind": serde_name(&kind), "scope": serde_name(&scope),
                    "parents": names(pre, parents)})
            } else {
                let (entity, attribute) = key(slot);
                let until = (validity.until != FOREVER).then_some(validity.until);
                json!({"event": "stage", "agent": agent_name(agent), "record": new_record(),
                    "kind": "belief", "entity": entity, "attribute": attribute, "value": value(v),
                    "source": format!("source-{source}"), "confidence": real(confidence.value()),
                    "scope": serde_name(&scope), "parents": names(pre, parents),
                    "validity": {"from": validity.from, "until": until}})
            }
        }
        Op::Adopt { agent, record } => json!({"event": "adopt", "agent": agent_name(agent),
            "record": record_name(pre, record)}),
        Op::Commit { agent } => json!({"event": "commit", "agent": agent_name(agent)}),
        Op::Abort { agent } => json!({"event": "abort", "agent": agent_name(agent)}),
        Op::CallTool {
            agent,
            reversible,
            support,
        } => json!({"event": "call-tool", "agent": agent_name(agent), "record": new_record(),
            "reversible": reversible, "support": names(pre, support)}),
        Op::RequestRevocation { record } => {
            json!({"event": "request-revocation", "record": record_name(pre, record)})
        }
        Op::ApplyRevocation { record } => {
            json!({"event": "apply-revocation", "record": record_name(pre, record)})
        }
        Op::Revalidate { record } => {
            json!({"event": "revalidate", "record": record_name(pre, record)})
        }
        Op::Rebuild { view } => json!({"event": "rebuild", "record": record_name(pre, view)}),
        Op::Read { agent, record } => json!({"event": "read", "agent": agent_name(agent),
            "record": record_name(pre, record)}),
        Op::EndSession { agent } => json!({"event": "end-session", "agent": agent_name(agent)}),
        Op::Resolve { record, keep } => {
            json!({"event": "resolve", "record": record_name(pre, record), "keep": keep})
        }
    };
    match ev {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
