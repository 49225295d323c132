//! `docs/trace.schema.json`, the JSON Schema of traces and scenarios (for editors: validation
//! and completion), checked against what memtx reads:
//!
//! * every file in `regressions/` (saved traces and hand-written scenarios) is valid;
//! * the schema never refuses a file memtx reads: every file in `regressions/`, with each of its
//!   fields removed or given a value of another type in turn, is either refused by
//!   [`Trace::from_json_value`] or accepted by the schema;
//! * files with typical mistakes are refused by both;
//! * its value lists are the code's (properties, presets, variants, isolation levels, lifecycle
//!   states), each of its values is one memtx reads, and every operation the model proposes
//!   (with every domain choice on) in the recorded states is valid.
//!
//! The validator (`schema_support`, shared with the event-log schema) knows the keywords the schema uses and nothing more; a keyword it does not
//! know fails the test rather than being skipped.

use memtx_checker::trace::Trace;
use memtx_model::config::{Enumeration, VARIANTS};
use memtx_model::machine::candidate_ops;
use memtx_model::properties::PROPERTIES;
use memtx_model::txn::Isolation;
use memtx_model::Life;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

mod binary_support;
mod schema_support;
use binary_support::files_under;
use schema_support::{validate, validate_def};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("docs/trace.schema.json"))
        .expect("docs/trace.schema.json is readable");
    serde_json::from_str(&text).expect("docs/trace.schema.json is JSON")
}

fn reads(value: &Value) -> bool {
    Trace::from_json_value(value.clone(), "mutant").is_ok()
}

#[test]
fn every_file_in_regressions_is_valid() {
    let schema = schema();
    let files = files_under(&root().join("regressions"), "json");
    assert!(
        files.len() >= 80,
        "expected the saved traces and scenarios, found {} files",
        files.len()
    );
    for file in &files {
        let value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert!(reads(&value), "memtx refuses {}", file.display());
        if let Err(e) = validate(&schema, &value) {
            panic!("{} is not valid: {e}", file.display());
        }
    }
}

/// Every mutant of `value`: each field (at any depth) removed, and each value replaced by one
/// of another JSON type.
fn mutants(value: &Value, out: &mut Vec<Value>) {
    fn walk(whole: &Value, path: &mut Vec<Value>, here: &Value, out: &mut Vec<Value>) {
        let others = [
            json!("x"),
            json!(7),
            json!(null),
            json!(true),
            json!([]),
            json!({}),
        ];
        for other in &others {
            if std::mem::discriminant(other) != std::mem::discriminant(here) {
                out.push(replaced(whole, path, Some(other.clone())));
            }
        }
        match here {
            Value::Object(obj) => {
                for (key, v) in obj {
                    path.push(Value::String(key.clone()));
                    out.push(replaced(whole, path, None));
                    walk(whole, path, v, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.push(json!(i));
                    walk(whole, path, v, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    fn replaced(whole: &Value, path: &[Value], with: Option<Value>) -> Value {
        let mut copy = whole.clone();
        let (last, parents) = match path.split_last() {
            Some(split) => split,
            None => return with.unwrap_or(Value::Null),
        };
        let mut node = &mut copy;
        for step in parents {
            node = match step {
                Value::String(k) => &mut node[k.as_str()],
                _ => &mut node[step.as_u64().unwrap() as usize],
            };
        }
        match (last, with) {
            (Value::String(k), None) => {
                node.as_object_mut().unwrap().remove(k);
            }
            (Value::String(k), Some(v)) => node[k.as_str()] = v,
            (i, Some(v)) => node[i.as_u64().unwrap() as usize] = v,
            (_, None) => unreachable!(),
        }
        copy
    }
    walk(value, &mut Vec::new(), value, out);
}

#[test]
fn the_schema_never_refuses_what_memtx_reads() {
    let schema = schema();
    // A saved trace with states, one under a domain with observations and sessions, and
    // hand-written scenarios (a preset with overrides, steps without states).
    let dir = root().join("regressions");
    let files = [
        "quick/no-action-gate-I1.trace.json",
        "provenance/txn-provenance-I15.trace.json",
        "scenarios/cascade-trap.json",
        "scenarios/dirty-read-control.json",
    ];
    let (mut read, mut refused) = (0, 0);
    for name in files {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let mut all = Vec::new();
        mutants(&value, &mut all);
        for mutant in &all {
            if reads(mutant) {
                read += 1;
                if let Err(e) = validate(&schema, mutant) {
                    panic!("{name}: memtx reads a mutant the schema refuses: {e}");
                }
            } else {
                refused += 1;
            }
        }
    }
    // Both kinds must occur, or the test proves nothing.
    assert!(
        read > 100 && refused > 1000,
        "{read} read, {refused} refused"
    );
}

/// A mistake's name and how it changes a good scenario.
type Mistake<'a> = (&'a str, &'a dyn Fn(&mut Value));

#[test]
fn typical_mistakes_are_refused_by_both() {
    let schema = schema();
    let good = json!({
        "format": "memtx-trace", "version": 1,
        "config": {"preset": "quick", "variant": "memtx"},
        "steps": [
            {"action": {"op": "begin", "agent": 0, "tier": "medium", "isolation": "committed-read"}},
            {"action": {"op": "commit", "agent": 0},
             "expect": {"records": {"r0": {"life": "Committed"}}}}
        ]
    });
    assert!(reads(&good), "the base scenario is read");
    validate(&schema, &good).expect("the base scenario is valid");
    let mistakes: [Mistake; 9] = [
        ("no format", &|v| {
            v.as_object_mut().unwrap().remove("format");
        }),
        ("a misspelt top-level field", &|v| v["stepz"] = json!([])),
        ("no steps", &|v| {
            v.as_object_mut().unwrap().remove("steps");
        }),
        ("an unknown operation", &|v| {
            v["steps"][1]["action"]["op"] = json!("comit")
        }),
        ("a misspelt isolation level", &|v| {
            v["steps"][0]["action"]["isolation"] = json!("committed_read")
        }),
        ("an agent as a string", &|v| {
            v["steps"][1]["action"]["agent"] = json!("0")
        }),
        ("a step field memtx does not know", &|v| {
            v["steps"][0]["expected"] = json!({})
        }),
        ("an unknown lifecycle state", &|v| {
            v["steps"][1]["expect"]["records"]["r0"]["life"] = json!("Commited")
        }),
        ("an unknown variant", &|v| {
            v["config"]["variant"] = json!("no-gate")
        }),
    ];
    for (what, mutate) in mistakes {
        let mut bad = good.clone();
        mutate(&mut bad);
        assert!(!reads(&bad), "memtx reads a scenario with {what}");
        assert!(
            validate(&schema, &bad).is_err(),
            "the schema accepts a scenario with {what}"
        );
    }
}

/// The values of the enumeration `def` of the schema.
fn values(schema: &Value, def: &str) -> Vec<String> {
    schema["$defs"][def]["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("$defs/{def} has an enum"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn names<T: serde::Serialize>(items: impl IntoIterator<Item = T>) -> Vec<String> {
    items
        .into_iter()
        .map(|t| {
            serde_json::to_value(t)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn the_schemas_value_lists_are_the_codes() {
    let schema = schema();
    let keys: Vec<String> = PROPERTIES.iter().map(|p| p.key.to_string()).collect();
    assert_eq!(values(&schema, "propertyKey"), keys);
    let presets: Vec<String> = memtx_model::presets::PRESETS
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(values(&schema, "preset"), presets);
    let variants: Vec<String> = VARIANTS.iter().map(|v| v.name.to_string()).collect();
    assert_eq!(values(&schema, "variant"), variants);
    assert_eq!(values(&schema, "isolation"), names(Isolation::ALL));
    assert_eq!(values(&schema, "life"), names(Life::ALL));
    // Every value of every other list is one memtx reads as that type.
    fn each_reads<T: serde::de::DeserializeOwned>(schema: &Value, def: &str) {
        for v in values(schema, def) {
            assert!(
                serde_json::from_value::<T>(json!(v)).is_ok(),
                "$defs/{def}: memtx does not read {v}"
            );
        }
    }
    use memtx_model::config::ValidityShape;
    use memtx_model::evidence::{Authority, Confidence};
    use memtx_model::record::{Effect, Reason};
    use memtx_model::state::Repair;
    use memtx_model::txn::Tier;
    use memtx_model::{Kind, Scope};
    each_reads::<Tier>(&schema, "tier");
    each_reads::<Kind>(&schema, "kind");
    each_reads::<Confidence>(&schema, "confidence");
    each_reads::<Authority>(&schema, "authority");
    each_reads::<Scope>(&schema, "scope");
    each_reads::<Reason>(&schema, "reason");
    each_reads::<Effect>(&schema, "effect");
    each_reads::<Repair>(&schema, "repair");
    each_reads::<ValidityShape>(&schema, "validityShape");
    each_reads::<Enumeration>(&schema, "enumeration");
}

#[test]
fn every_operation_the_model_proposes_is_valid() {
    let schema = schema();
    let mut seen = std::collections::BTreeSet::new();
    for file in files_under(&root().join("regressions"), "json") {
        let trace = Trace::read(&file).unwrap();
        let mut cfg = trace.config.clone();
        cfg.domain.enumeration = Enumeration::Wide;
        cfg.domain.observe = true;
        cfg.domain.reads = true;
        cfg.domain.sessions = true;
        for state in trace.steps.iter().filter_map(|s| s.state.as_ref()) {
            let mut ops = Vec::new();
            candidate_ops(&cfg, state, &mut ops);
            for op in ops {
                let value = serde_json::to_value(&op).unwrap();
                if let Err(e) = validate_def(&schema, "op", &value) {
                    panic!(
                        "{}: the model proposes {value}, which is not valid: {e}",
                        file.display()
                    );
                }
                seen.insert(value["op"].as_str().unwrap().to_string());
            }
        }
    }
    let schema_ops: std::collections::BTreeSet<String> = schema["$defs"]["op"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["properties"]["op"]["const"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, schema_ops, "the operations proposed and the schema's");
}
