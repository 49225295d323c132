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
//! The validator here knows the keywords the schema uses and nothing more; a keyword it does not
//! know fails the test rather than being skipped.

use memtx_checker::trace::Trace;
use memtx_model::config::{Enumeration, VARIANTS};
use memtx_model::machine::candidate_ops;
use memtx_model::properties::PROPERTIES;
use memtx_model::txn::Isolation;
use memtx_model::Life;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("docs/trace.schema.json"))
        .expect("docs/trace.schema.json is readable");
    serde_json::from_str(&text).expect("docs/trace.schema.json is JSON")
}

/// Every `.json` file under `dir`, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            out.extend(json_files(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &["$schema", "$id", "$defs", "title", "description"];

/// Validates `value` against `node` (a schema or sub-schema of `root`); the error names the
/// JSON path of the first value at fault.
fn check(root: &Value, node: &Value, value: &Value, at: &str) -> Result<(), String> {
    let Value::Object(node) = node else {
        panic!("schema node at {at} is not an object: {node}");
    };
    for (keyword, arg) in node {
        match keyword.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "$ref" => {
                let name = arg
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .unwrap_or_else(|| panic!("unsupported $ref {arg}"));
                let target = root["$defs"]
                    .get(name)
                    .unwrap_or_else(|| panic!("$ref to a missing definition {name}"));
                check(root, target, value, at)?;
            }
            "type" => {
                let ok = match arg.as_str().expect("type is one name") {
                    "object" => value.is_object(),
                    "array" => value.is_array(),
                    "string" => value.is_string(),
                    "boolean" => value.is_boolean(),
                    "null" => value.is_null(),
                    "integer" => value.is_u64() || value.is_i64(),
                    other => panic!("unsupported type {other}"),
                };
                if !ok {
                    return Err(format!("{at}: expected {arg}, found {value}"));
                }
            }
            "enum" => {
                let values = arg.as_array().expect("enum is an array");
                if !values.contains(value) {
                    return Err(format!("{at}: {value} is not one of {arg}"));
                }
            }
            "const" => {
                if value != arg {
                    return Err(format!("{at}: expected {arg}, found {value}"));
                }
            }
            "minimum" | "maximum" => {
                if let Some(n) = value.as_f64() {
                    let bound = arg.as_f64().expect("a numeric bound");
                    let bad = if keyword == "minimum" {
                        n < bound
                    } else {
                        n > bound
                    };
                    if bad {
                        return Err(format!("{at}: {value} is beyond the {keyword} {arg}"));
                    }
                }
            }
            "properties" | "required" | "additionalProperties" | "propertyNames" => {
                if let Value::Object(obj) = value {
                    check_object_keyword(root, node, keyword, arg, obj, at)?;
                }
            }
            "items" => {
                if let Value::Array(items) = value {
                    for (i, item) in items.iter().enumerate() {
                        check(root, arg, item, &format!("{at}[{i}]"))?;
                    }
                }
            }
            "anyOf" | "oneOf" => {
                let branches = arg.as_array().expect("a list of schemas");
                let results: Vec<_> = branches.iter().map(|b| check(root, b, value, at)).collect();
                let passed = results.iter().filter(|r| r.is_ok()).count();
                let ok = if keyword == "anyOf" {
                    passed >= 1
                } else {
                    passed == 1
                };
                if !ok {
                    let why: Vec<String> = results.into_iter().filter_map(Result::err).collect();
                    return Err(format!(
                        "{at}: {passed} of the {keyword} branches match ({})",
                        why.join("; ")
                    ));
                }
            }
            other => panic!("the test's validator does not know the keyword {other} (at {at})"),
        }
    }
    Ok(())
}

fn check_object_keyword(
    root: &Value,
    node: &Map<String, Value>,
    keyword: &str,
    arg: &Value,
    obj: &Map<String, Value>,
    at: &str,
) -> Result<(), String> {
    let declared = node.get("properties").and_then(Value::as_object);
    match keyword {
        "properties" => {
            for (key, sub) in arg.as_object().expect("properties is an object") {
                if let Some(v) = obj.get(key) {
                    check(root, sub, v, &format!("{at}.{key}"))?;
                }
            }
        }
        "required" => {
            for key in arg.as_array().expect("required is an array") {
                let key = key.as_str().expect("a field name");
                if !obj.contains_key(key) {
                    return Err(format!("{at}: the field {key} is missing"));
                }
            }
        }
        "additionalProperties" => {
            for (key, v) in obj {
                if declared.is_some_and(|d| d.contains_key(key)) {
                    continue;
                }
                match arg {
                    Value::Bool(true) => {}
                    Value::Bool(false) => return Err(format!("{at}: unknown field {key}")),
                    sub => check(root, sub, v, &format!("{at}.{key}"))?,
                }
            }
        }
        "propertyNames" => {
            for key in obj.keys() {
                check(root, arg, &Value::String(key.clone()), &format!("{at} key"))?;
            }
        }
        _ => unreachable!(),
    }
    Ok(())
}

fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, schema, value, "$")
}

fn validate_def(schema: &Value, def: &str, value: &Value) -> Result<(), String> {
    check(schema, &schema["$defs"][def], value, "$")
}

fn reads(value: &Value) -> bool {
    Trace::from_json_value(value.clone(), "mutant").is_ok()
}

#[test]
fn every_file_in_regressions_is_valid() {
    let schema = schema();
    let files = json_files(&root().join("regressions"));
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
    for file in json_files(&root().join("regressions")) {
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
