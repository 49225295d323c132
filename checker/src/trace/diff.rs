//! Differences between two JSON values (a trace's configuration against the one given, a
//! recorded state against the replayed one), as paths and values a person can read.

use memtx_model::Config;
use serde_json::Value;

/// The differences between two configurations as `path: trace X, given Y` strings, ignoring the
/// informational `preset` name.
pub fn config_differences(recorded: &Config, given: &Config) -> Vec<String> {
    let mut a = serde_json::to_value(recorded).unwrap_or(Value::Null);
    let mut b = serde_json::to_value(given).unwrap_or(Value::Null);
    for v in [&mut a, &mut b] {
        if let Value::Object(m) = v {
            m.remove("preset");
        }
    }
    let mut out = Vec::new();
    json_differences(&a, &b, "", &mut out);
    out.into_iter()
        .map(|d| format!("{}: trace {}, given {}", d.path, d.left, d.right))
        .collect()
}

/// One leaf where two JSON values differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JsonDiff {
    /// Path from the root, e.g. `records[2].life`.
    pub path: String,
    /// The left value (compact JSON), or `absent`.
    pub left: String,
    /// The right value (compact JSON), or `absent`.
    pub right: String,
}

/// Collects the leaves where `a` and `b` differ, descending into objects and equal-length arrays.
pub(crate) fn json_differences(a: &Value, b: &Value, path: &str, out: &mut Vec<JsonDiff>) {
    if a == b {
        return;
    }
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(l), Some(r)) => json_differences(l, r, &join(k), out),
                    (l, r) => out.push(JsonDiff {
                        path: join(k),
                        left: l.map_or("absent".into(), Value::to_string),
                        right: r.map_or("absent".into(), Value::to_string),
                    }),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (l, r)) in x.iter().zip(y).enumerate() {
                json_differences(l, r, &format!("{path}[{i}]"), out);
            }
        }
        _ => out.push(JsonDiff {
            path: if path.is_empty() {
                "(root)".into()
            } else {
                path.to_string()
            },
            left: a.to_string(),
            right: b.to_string(),
        }),
    }
}

/// The first `max` items joined by `; `, and how many more there are.
pub(crate) fn summarize(items: &[String], max: usize) -> String {
    let mut s = items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > max {
        s.push_str(&format!("; and {} more", items.len() - max));
    }
    s
}
