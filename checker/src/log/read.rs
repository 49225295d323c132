//! Reading one line of an event log strictly: a field memtx does not know is refused (a typo
//! must not pass silently), and every error is one line naming the field.

use super::event::{
    Event, EventOp, Header, Key, Line, Outcome, RecordOutcome, Span, Write, LOG_FORMAT, LOG_VERSION,
};
use memtx_model::lifecycle::Life;
use memtx_model::record::{Effect, Kind, Reason, Scope};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Reads one line (1-based `line`); the error is one line without the line number (the caller
/// adds where).
pub fn parse_line(text: &str, line: usize) -> Result<Line, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let what = e.to_string();
        if e.is_eof() {
            format!("the line ends before its JSON value does (truncated?): {what}")
        } else {
            format!("not JSON: {what}")
        }
    })?;
    let Value::Object(map) = value else {
        return Err("a line must be a JSON object (an event or a run header)".into());
    };
    let mut f = Fields::new(map);
    if f.map.contains_key("format") {
        let header = read_header(&mut f)?;
        f.done("a run header")?;
        return Ok(Line::Header(header));
    }
    let op_name = f.string("event")?;
    let op = read_op(&op_name, &mut f)?;
    let outcome = match f.take("outcome") {
        None => None,
        Some(v) => Some(read_outcome(v)?),
    };
    f.optional_any("time");
    f.optional_any("note");
    f.done(&format!("a {op_name} event"))?;
    Ok(Line::Event(Box::new(Event { line, op, outcome })))
}

fn read_header(f: &mut Fields) -> Result<Header, String> {
    let format = f.string("format")?;
    if format != LOG_FORMAT {
        return Err(format!(
            "\"format\" is \"{}\", not \"{LOG_FORMAT}\": not a memtx event log",
            crate::input::cut(&format)
        ));
    }
    let version = f
        .take("version")
        .ok_or("the run header has no \"version\"")?;
    if version.as_u64() != Some(LOG_VERSION) {
        return Err(format!(
            "event-log version {} is not one this memtx reads (it reads version {LOG_VERSION})",
            crate::input::cut(&version.to_string())
        ));
    }
    let run = f.optional_string("run")?;
    let service = f.optional_string("service")?;
    let mut sources = Vec::new();
    if let Some(v) = f.take("sources") {
        let Value::Object(m) = v else {
            return Err("\"sources\" must be an object: source name -> authority (0 to 1)".into());
        };
        for (name, a) in m {
            sources.push((name.clone(), unit(&a, &format!("sources.{name}"))?));
        }
    }
    Ok(Header {
        run,
        service,
        sources,
    })
}

fn read_write(f: &mut Fields, scope: Scope) -> Result<Write, String> {
    Ok(Write {
        key: Key {
            entity: f.string("entity")?,
            attribute: f.string("attribute")?,
        },
        value: {
            let v = f.take("value").ok_or("has no \"value\"")?;
            match v {
                Value::Null | Value::Array(_) | Value::Object(_) => {
                    return Err("\"value\" must be a string, a number or a boolean".into())
                }
                v => v.to_string(),
            }
        },
        source: f.string("source")?,
        authority: match f.take("authority") {
            None => None,
            Some(a) => Some(unit(&a, "authority")?),
        },
        confidence: unit(
            &f.take("confidence").ok_or("has no \"confidence\"")?,
            "confidence",
        )?,
        scope,
    })
}

fn read_op(name: &str, f: &mut Fields) -> Result<EventOp, String> {
    Ok(match name {
        "tick" => EventOp::Tick,
        "observe" => {
            let record = f.string("record")?;
            let owner = f.string("agent")?;
            let scope = f.named("scope")?;
            EventOp::Observe {
                record,
                owner,
                write: read_write(f, scope)?,
            }
        }
        "begin" => EventOp::Begin {
            agent: f.string("agent")?,
            tier: f.named("tier")?,
            isolation: f.named("isolation")?,
        },
        "stage" => {
            let agent = f.string("agent")?;
            let record = f.string("record")?;
            let kind: Kind = f.named("kind")?;
            if kind.is_action() {
                return Err(format!(
                    "\"kind\" {} is a tool action: actions are logged by call-tool, not staged",
                    super::names::kind_name(kind)
                ));
            }
            let scope: Scope = f.named("scope")?;
            let parents = f.names("parents")?;
            let (write, validity) = if kind == Kind::Belief {
                let validity = match f.take("validity") {
                    None => None,
                    Some(v) => Some(read_span(v)?),
                };
                (Some(read_write(f, scope)?), validity)
            } else {
                (None, None)
            };
            EventOp::Stage {
                agent,
                record,
                kind,
                write,
                view_scope: scope,
                parents,
                validity,
            }
        }
        "adopt" => EventOp::Adopt {
            agent: f.string("agent")?,
            record: f.string("record")?,
        },
        "commit" => EventOp::Commit {
            agent: f.string("agent")?,
        },
        "abort" => EventOp::Abort {
            agent: f.string("agent")?,
        },
        "call-tool" => EventOp::CallTool {
            agent: f.string("agent")?,
            record: f.string("record")?,
            reversible: f.bool("reversible")?,
            support: f.names("support")?,
        },
        "request-revocation" => EventOp::RequestRevocation {
            record: f.string("record")?,
        },
        "apply-revocation" => EventOp::ApplyRevocation {
            record: f.string("record")?,
        },
        "revalidate" => EventOp::Revalidate {
            record: f.string("record")?,
        },
        "rebuild" => EventOp::Rebuild {
            record: f.string("record")?,
        },
        "read" => EventOp::Read {
            agent: f.string("agent")?,
            record: f.string("record")?,
        },
        "end-session" => EventOp::EndSession {
            agent: f.string("agent")?,
        },
        "resolve" => EventOp::Resolve {
            record: f.string("record")?,
            keep: f.bool("keep")?,
        },
        other => {
            return Err(format!(
                "unknown event \"{}\"; the events are tick, observe, begin, stage, adopt, commit, abort, call-tool, request-revocation, apply-revocation, revalidate, rebuild, read, end-session, resolve",
                crate::input::cut(other)
            ))
        }
    })
}

fn read_span(v: Value) -> Result<Span, String> {
    let Value::Object(m) = v else {
        return Err("\"validity\" must be {\"from\": tick, \"until\": tick or null}".into());
    };
    let mut f = Fields::new(m);
    let from = f
        .take("from")
        .and_then(|v| v.as_u64())
        .ok_or("\"validity.from\" must be a tick (a whole number)")?;
    let until = match f.take("until") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or("\"validity.until\" must be a tick (a whole number) or null")?,
        ),
    };
    f.done("\"validity\"")?;
    if until.is_some_and(|u| u <= from) {
        return Err(format!(
            "\"validity\" [{from}, {}) is empty",
            until.unwrap_or_default()
        ));
    }
    Ok(Span { from, until })
}

fn read_outcome(v: Value) -> Result<Outcome, String> {
    let Value::Object(m) = v else {
        return Err("\"outcome\" must be an object".into());
    };
    let mut f = Fields::new(m);
    let refused = match f.take("refused") {
        None | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(None),
        Some(Value::String(reason)) => {
            if !crate::trace::scenario::is_refusal_reason(&reason) {
                return Err(format!(
                    "\"outcome.refused\" \"{}\" is not a refusal reason memtx knows (an enable.* or gate.block.* rule id of `memtx list`, or a gate condition such as in-flight-tentative); write true when the reason is not known",
                    crate::input::cut(&reason)
                ));
            }
            Some(Some(reason))
        }
        Some(_) => {
            return Err(
                "\"outcome.refused\" must be true, false or a refusal reason (a string)".into(),
            )
        }
    };
    let mut records = BTreeMap::new();
    if let Some(v) = f.take("records") {
        let Value::Object(m) = v else {
            return Err("\"outcome.records\" must be an object: record name -> outcome".into());
        };
        for (name, r) in m {
            records.insert(name.clone(), read_record_outcome(r, &name)?);
        }
    }
    let all_changes = match f.take("all_changes") {
        None => false,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err("\"outcome.all_changes\" must be true or false".into()),
    };
    f.done("\"outcome\"")?;
    if refused.is_some() && (!records.is_empty() || all_changes) {
        return Err("\"outcome\" says the event was refused and names what it changed: a refused event changes nothing; give one or the other".into());
    }
    Ok(Outcome {
        refused,
        records,
        all_changes,
    })
}

fn read_record_outcome(v: Value, name: &str) -> Result<RecordOutcome, String> {
    let at = format!("outcome.records.{}", crate::input::cut(name));
    let Value::Object(m) = v else {
        return Err(format!("\"{at}\" must be an object"));
    };
    let mut f = Fields::new(m);
    let state = match f.take("state") {
        None => None,
        Some(Value::String(s)) => Some(life_named(&s).ok_or_else(|| {
            format!(
                "\"{at}.state\" \"{}\" is not a lifecycle state; they are {}",
                crate::input::cut(&s),
                super::names::LIVES
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?),
        Some(_) => return Err(format!("\"{at}.state\" must be a string")),
    };
    let reason = match f.take("reason") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => Some(Some(named_value::<Reason>(v, &format!("{at}.reason"))?)),
    };
    let effect = match f.take("effect") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => Some(Some(named_value::<Effect>(v, &format!("{at}.effect"))?)),
    };
    let pending_revocation = match f.take("pending_revocation") {
        None => None,
        Some(Value::Bool(b)) => Some(b),
        Some(_) => return Err(format!("\"{at}.pending_revocation\" must be true or false")),
    };
    f.done(&format!("\"{at}\""))?;
    Ok(RecordOutcome {
        state,
        reason,
        effect,
        pending_revocation,
    })
}

/// The lifecycle state named `s` in the log's spelling (`action-safe`).
pub fn life_named(s: &str) -> Option<Life> {
    super::names::LIVES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, l)| l)
}

fn named_value<T: DeserializeOwned>(v: Value, at: &str) -> Result<T, String> {
    let shown = crate::input::cut(&v.to_string());
    serde_json::from_value(v).map_err(|_| format!("\"{at}\" {shown} is not a name memtx knows"))
}

/// A number between 0 and 1.
fn unit(v: &Value, at: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "\"{at}\" must be a number between 0 and 1 (got {})",
            crate::input::cut(&v.to_string())
        )),
    }
}

/// The fields of one JSON object, taken one by one; whatever is left is refused.
struct Fields {
    map: Map<String, Value>,
}

impl Fields {
    fn new(map: Map<String, Value>) -> Self {
        Fields { map }
    }

    fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key)
    }

    fn string(&mut self, key: &str) -> Result<String, String> {
        match self.take(key) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s),
            Some(Value::String(_)) => Err(format!("\"{key}\" is empty")),
            Some(_) => Err(format!("\"{key}\" must be a string")),
            None => Err(format!("has no \"{key}\"")),
        }
    }

    fn optional_string(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("\"{key}\" must be a string")),
        }
    }

    fn optional_any(&mut self, key: &str) {
        self.take(key);
    }

    fn bool(&mut self, key: &str) -> Result<bool, String> {
        match self.take(key) {
            Some(Value::Bool(b)) => Ok(b),
            Some(_) => Err(format!("\"{key}\" must be true or false")),
            None => Err(format!("has no \"{key}\"")),
        }
    }

    /// A list of names (absent: empty); a name listed twice is refused.
    fn names(&mut self, key: &str) -> Result<Vec<String>, String> {
        let Some(v) = self.take(key) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = v else {
            return Err(format!("\"{key}\" must be a list of record names"));
        };
        let mut out: Vec<String> = Vec::new();
        for item in items {
            let Value::String(s) = item else {
                return Err(format!("\"{key}\" must be a list of record names"));
            };
            if out.contains(&s) {
                return Err(format!("\"{key}\" names {} twice", crate::input::cut(&s)));
            }
            out.push(s);
        }
        Ok(out)
    }

    fn named<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, String> {
        let v = self.take(key).ok_or_else(|| format!("has no \"{key}\""))?;
        named_value(v, key)
    }

    fn done(self, what: &str) -> Result<(), String> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(k) => Err(format!(
                "{what} has no field \"{}\" (see docs/event-log.md)",
                crate::input::cut(k)
            )),
        }
    }
}
