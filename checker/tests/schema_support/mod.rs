//! A JSON Schema validator for the tests of memtx's schemas (docs/trace.schema.json,
//! docs/event-log.schema.json): it knows the keywords those schemas use and nothing more; a
//! keyword it does not know fails the test rather than being skipped.

#![allow(dead_code)]

use serde_json::{Map, Value};

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
                    "number" => value.is_number(),
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
            "minLength" => {
                if let Some(text) = value.as_str() {
                    let least = arg.as_u64().expect("a length") as usize;
                    if text.chars().count() < least {
                        return Err(format!("{at}: {value} is shorter than {arg}"));
                    }
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

pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, schema, value, "$")
}

pub fn validate_def(schema: &Value, def: &str, value: &Value) -> Result<(), String> {
    check(schema, &schema["$defs"][def], value, "$")
}
