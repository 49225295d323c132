//! `docs/event-log.schema.json`, the JSON Schema of one line of an event log (for the
//! implementations that write them, and for editors), checked against what `memtx
//! validate-log` reads (`memtx_checker::log::read::parse_line`):
//!
//! * every line of `regressions/logs/` and of the logs written from every trace of
//!   `regressions/` is valid;
//! * the schema never refuses a line memtx reads: each of those lines with any field removed or
//!   given a value of another type (nested outcome fields included) is either refused by memtx
//!   or accepted by the schema;
//! * typical mistakes, and a field neither knows on any kind of line, are refused by both;
//! * its value lists are the code's (events, lifecycle states, reasons).

mod binary_support;
mod schema_support;

use binary_support::files_under;
use memtx_checker::log::read::parse_line;
use schema_support::{validate, validate_def};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("docs/event-log.schema.json"))
        .expect("docs/event-log.schema.json is readable");
    serde_json::from_str(&text).expect("docs/event-log.schema.json is JSON")
}

/// Every line of the hand-written logs and of the logs written from every regression trace.
fn lines() -> Vec<Value> {
    let mut out = Vec::new();
    for log in files_under(&root().join("regressions/logs"), "jsonl") {
        let text = std::fs::read_to_string(&log).expect("log");
        out.extend(
            text.lines()
                .map(|l| serde_json::from_str(l).expect("JSON line")),
        );
    }
    for file in files_under(&root().join("regressions"), "json") {
        let trace = memtx_checker::trace::Trace::read(&file).expect("a regression");
        let ops: Vec<_> = trace.steps.iter().map(|s| s.action.clone()).collect();
        for line in memtx_checker::log::emit::emit_run("schema", &trace.config, &ops) {
            out.push(serde_json::from_str(&line).expect("JSON line"));
        }
    }
    out
}

fn reads(line: &Value) -> bool {
    parse_line(&line.to_string(), 1).is_ok()
}

#[test]
fn every_line_memtx_reads_and_writes_is_valid() {
    let schema = schema();
    let lines = lines();
    assert!(lines.len() > 300, "{} lines", lines.len());
    let mut events = std::collections::BTreeSet::new();
    for line in &lines {
        assert!(reads(line), "memtx reads {line}");
        if let Err(e) = validate(&schema, line) {
            panic!("{line}: {e}");
        }
        if let Some(e) = line["event"].as_str() {
            events.insert(e.to_string());
        }
    }
    // The lines exercise most of the format.
    assert!(events.len() >= 12, "{events:?}");
}

/// Values of other types than `v`'s, to retype a field with.
fn others(v: &Value) -> Vec<Value> {
    [
        json!(null),
        json!(true),
        json!(7),
        json!(0.5),
        json!("x"),
        json!([]),
        json!({}),
    ]
    .into_iter()
    .filter(|o| std::mem::discriminant(o) != std::mem::discriminant(v))
    .collect()
}

/// `line` with each field (at any depth) removed, and given each value of another type.
fn mutants(line: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    fn walk(root: &Value, path: &mut Vec<String>, here: &Value, out: &mut Vec<Value>) {
        if let Value::Object(map) = here {
            for (k, v) in map {
                path.push(k.clone());
                let mut removed = root.clone();
                let mut retyped: Vec<Value> = Vec::new();
                {
                    let parent = at_mut(&mut removed, &path[..path.len() - 1]);
                    parent.as_object_mut().expect("object").remove(k);
                }
                for o in others(v) {
                    let mut r = root.clone();
                    *at_mut(&mut r, path) = o;
                    retyped.push(r);
                }
                out.push(removed);
                out.extend(retyped);
                walk(root, path, v, out);
                path.pop();
            }
        }
    }
    fn at_mut<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
        path.iter().fold(v, |v, k| &mut v[k.as_str()])
    }
    walk(line, &mut Vec::new(), line, &mut out);
    out
}

#[test]
fn the_schema_never_refuses_a_line_memtx_reads() {
    let schema = schema();
    let mut seen = std::collections::BTreeSet::new();
    let (mut checked, mut refused_by_both) = (0, 0);
    for line in lines() {
        // One line per shape is enough (the emitted logs repeat shapes).
        let shape: Vec<String> = match &line {
            Value::Object(m) => m.keys().cloned().collect(),
            _ => vec![],
        };
        if !seen.insert((
            line["event"].to_string(),
            shape,
            line["outcome"].to_string(),
        )) {
            continue;
        }
        // A field neither knows, at the top or in a record's outcome: refused by both.
        let mut extra = line.clone();
        extra["zz"] = json!(1);
        let mut extras = vec![extra];
        if let Some(name) = line["outcome"]["records"]
            .as_object()
            .and_then(|r| r.keys().next().cloned())
        {
            let mut e = line.clone();
            e["outcome"]["records"][name.as_str()]["zz"] = json!(1);
            extras.push(e);
        }
        for e in extras {
            assert!(!reads(&e), "memtx refuses {e}");
            assert!(validate(&schema, &e).is_err(), "the schema refuses {e}");
        }
        for m in mutants(&line) {
            checked += 1;
            if reads(&m) {
                if let Err(e) = validate(&schema, &m) {
                    panic!("memtx reads {m} but the schema refuses it: {e}");
                }
            } else {
                refused_by_both += usize::from(validate(&schema, &m).is_err());
            }
        }
    }
    assert!(checked > 1000, "{checked} mutants");
    // Most mutants are malformed for both (the schema is not merely permissive).
    assert!(
        refused_by_both * 10 > checked * 8,
        "{refused_by_both} of {checked}"
    );
}

#[test]
fn typical_mistakes_are_refused_by_both() {
    let schema = schema();
    let mistakes = [
        json!({"event": "teleport"}),
        json!({"event": "tick", "speed": 2}),
        json!({"event": "commit", "agnet": "a"}),
        json!({"event": "commit", "agent": "a", "outcome": {"records": {"x": {"state": "Committed"}}}}),
        json!({"event": "commit", "agent": "a", "outcome": {"records": {"x": {"life": "committed"}}}}),
        json!({"event": "commit", "agent": "a", "outcome": {"records": {"x": {"reason": "because"}}}}),
        json!({"event": "begin", "agent": "a", "tier": "high", "isolation": "committed-read"}),
        json!({"event": "stage", "agent": "a", "record": "x", "kind": "belief", "entity": "e", "attribute": "t", "value": 1, "source": "s", "confidence": 1.5, "scope": "shared"}),
        json!({"event": "stage", "agent": "a", "record": "x", "kind": "belief", "entity": "e", "attribute": "t", "value": null, "source": "s", "confidence": 0.5, "scope": "shared"}),
        json!({"event": "stage", "agent": "a", "record": "x", "kind": "summary", "parents": ["y"]}),
        json!({"event": "read", "agent": "", "record": "x"}),
        json!({"format": "memtx-event-log", "version": 2}),
        json!({"format": "memtx-event-log", "version": 1, "sources": {"crm": 2}}),
    ];
    for m in mistakes {
        assert!(!reads(&m), "memtx refuses {m}");
        assert!(validate(&schema, &m).is_err(), "the schema refuses {m}");
    }
}

#[test]
fn its_value_lists_are_the_codes() {
    let schema = schema();
    let lives: Vec<&str> = memtx_checker::log::names::LIVES
        .iter()
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(schema["$defs"]["life"]["enum"], json!(lives));
    let trace_schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/trace.schema.json")).expect("trace schema"),
    )
    .expect("JSON");
    for def in ["reason", "effect", "tier", "isolation", "scope"] {
        assert_eq!(
            schema["$defs"][def]["enum"], trace_schema["$defs"][def]["enum"],
            "{def}: the same names as traces (checked against the code by trace_schema.rs)"
        );
    }
    // Every event the schema names is one memtx reads, and every event memtx reads is named.
    let named: Vec<String> = schema["$defs"]["event"]["oneOf"]
        .as_array()
        .expect("branches")
        .iter()
        .map(|b| {
            let def = b["$ref"]
                .as_str()
                .expect("ref")
                .trim_start_matches("#/$defs/");
            schema["$defs"][def]["properties"]["event"]["const"]
                .as_str()
                .expect("const")
                .to_string()
        })
        .collect();
    for name in &named {
        let err = parse_line(&json!({ "event": name }).to_string(), 1).err();
        assert!(
            err.as_ref().is_none_or(|e| !e.contains("unknown event")),
            "{name}: {err:?}"
        );
    }
    let unknown = parse_line(&json!({"event": "x"}).to_string(), 1).expect_err("unknown");
    for listed in unknown
        .split("the events are ")
        .nth(1)
        .expect("a list")
        .split(", ")
    {
        assert!(
            named.iter().any(|n| n == listed),
            "{listed} has no schema branch"
        );
    }
    // Each value of the schema's lists is read by memtx.
    for life in lives {
        let line = json!({"event": "tick", "outcome": {"records": {"x": {"state": life}}}});
        assert!(reads(&line) && validate(&schema, &line).is_ok(), "{life}");
    }
    let header = json!({"format": "memtx-event-log", "version": 1});
    assert!(validate_def(&schema, "header", &header).is_ok() && reads(&header));
}
