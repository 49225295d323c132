//! Reading user files safely: a size limit, duplicate JSON keys refused, long values cut.
//!
//! Traces, scenario files and `--domain` files are user input. Three things can go wrong with
//! such input before any of its meaning is read, and each is refused with a one-line
//! [`UserError`] (exit 2):
//!
//! * **Size.** [`read_limited`] refuses a file larger than a limit ([`MAX_INPUT_BYTES`], 64 MiB,
//!   unless `--max-input-size` raises it) without reading it whole: it checks the length the
//!   file system reports, and also reads through [`Read::take`]`(limit + 1)`, so that
//!   `/dev/zero`, a pipe or a file that grows while it is read are refused too.
//! * **Duplicate keys.** serde_json keeps the last of two equal keys of an object silently; a
//!   hand-edited file with `"variant"` twice would be read as one of them without a word.
//!   [`parse_json`] refuses any object with a repeated key, anywhere in the document, and names
//!   the key and where it is (`step 4: action`).
//! * **Long values.** A message that echoes what the user wrote (an unknown operation name, a
//!   wrong format tag) echoes at most [`CUT_CHARS`] characters of it ([`cut`], [`cut_quoted`]).
//!
//! Steps are numbered one way in every message: `step 4` is the fourth action of a trace (the
//! JSON array index 3); [`user_path`] turns a field path such as `steps[3].action` into
//! `step 4: action`.

use crate::error::{ErrorKind, UserError};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// The largest trace, scenario or domain file read unless a flag raises it: 64 MiB.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// How many characters of a user's value a message echoes before cutting it with `…`.
pub const CUT_CHARS: usize = 60;

/// `value` as it is when at most [`CUT_CHARS`] characters long, else its first [`CUT_CHARS`]
/// characters followed by `…`.
pub fn cut(value: &str) -> String {
    match value.char_indices().nth(CUT_CHARS) {
        None => value.to_string(),
        Some((end, _)) => format!("{}…", &value[..end]),
    }
}

/// `message` with every quoted span (between backticks or double quotes) longer than
/// [`CUT_CHARS`] cut (see [`cut`]): serde's messages quote the offending value, e.g.
/// ``unknown variant `fly`, expected one of `tick`, …``. serde's word for an enumeration's
/// value, *variant*, is memtx's word for a protocol variant (`--variant`), so it reads
/// ``unknown value `fly`, expected one of `tick`, …`` here.
pub fn cut_quoted(message: &str) -> String {
    let message = message.replace("unknown variant `", "unknown value `");
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message.as_str();
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find(quote) {
            Some(close) => {
                out.push_str(&cut(&after[..close]));
                out.push(quote);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&cut(after));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// A size such as `64M`, `1.5G`, `512K`, `100KiB` or a plain byte count.
pub fn parse_size(size: &str) -> Result<u64, String> {
    let s = size.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let bad = || {
        format!(
            "'{}' is not a size: write e.g. 64M, 1.5G or 1048576",
            cut(size)
        )
    };
    let n: f64 = number.parse().map_err(|_| bad())?;
    let mult: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = n * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// A byte count for humans: `64 MiB`, `1.5 GiB`, `812 bytes`.
pub fn show_size(bytes: u64) -> String {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, name) in units {
        if bytes >= size {
            let v = bytes as f64 / size as f64;
            return if v.fract() == 0.0 {
                format!("{v:.0} {name}")
            } else {
                format!("{v:.1} {name}")
            };
        }
    }
    format!("{bytes} bytes")
}

fn too_large(what: &str, path: &Path, limit: u64) -> UserError {
    UserError::with_fix(
        ErrorKind::Io,
        format!(
            "the {what} {} is larger than {} (the input size limit)",
            path.display(),
            show_size(limit)
        ),
        if what == "trace" {
            "pass a trace file, or raise the limit with --max-input-size"
        } else {
            "pass a smaller file"
        },
    )
}

/// Is `path` one of the process's own descriptors (`/dev/fd/N`, `/proc/self/fd/N`,
/// `/dev/stdin`), as a shell's process substitution or redirection gives?
fn is_descriptor_path(path: &Path) -> bool {
    let text = path.to_string_lossy();
    text.starts_with("/dev/fd/") || text.starts_with("/proc/self/fd/") || text == "/dev/stdin"
}

/// Reads the text file `path` (a `what`: "trace", "domain file", ...), refusing it when it holds
/// more than `limit` bytes, without reading more than `limit + 1` bytes of it.
pub fn read_limited(path: &Path, what: &str, limit: u64) -> Result<String, UserError> {
    let read_error = |e: std::io::Error| {
        UserError::with_fix(
            ErrorKind::Io,
            format!("cannot read {what} {}: {e}", path.display()),
            "check the path",
        )
    };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if meta.is_dir() {
        return Err(UserError::with_fix(
            ErrorKind::Io,
            format!("cannot read {what} {}: it is a directory", path.display()),
            "pass a file",
        ));
    }
    // A named FIFO without a writer blocks `open` for ever (and the first Ctrl-C did not stop
    // it); a device may never end. Both are refused; the pipe of a shell's process
    // substitution (`--domain <(...)`, a `/dev/fd/N` path) has its writer and is read with
    // the limit.
    if !meta.is_file() && !is_descriptor_path(path) {
        let kind = crate::fsutil::kind_name(meta.file_type());
        return Err(UserError::with_fix(
            ErrorKind::Io,
            format!("cannot read {what} {}: it is {kind}", path.display()),
            "pass a regular file",
        ));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(what, path, limit));
    }
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(what, path, limit));
    }
    String::from_utf8(bytes).map_err(|e| {
        UserError::with_fix(
            ErrorKind::NotJson,
            format!(
                "{what} {} is not text (invalid UTF-8 at byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
            "pass a JSON file",
        )
    })
}

/// A field path for messages: `steps[3].action` becomes `step 4: action`, `steps[0]` becomes
/// `step 1`; any other path is shown as it is.
pub fn user_path(path: &str) -> String {
    let Some(rest) = path.strip_prefix("steps[") else {
        return path.to_string();
    };
    let Some(close) = rest.find(']') else {
        return path.to_string();
    };
    let Ok(index) = rest[..close].parse::<usize>() else {
        return path.to_string();
    };
    let tail = rest[close + 1..].trim_start_matches('.');
    if tail.is_empty() {
        format!("step {}", index + 1)
    } else {
        format!("step {}: {tail}", index + 1)
    }
}

/// Why [`parse_json`] refused a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JsonError {
    /// Not JSON (serde_json's message, with line and column).
    Syntax(String),
    /// An object holds `key` twice; `at` is where the object is ([`user_path`] form, `(root)`
    /// for the top level).
    DuplicateKey {
        /// The repeated key (cut to [`CUT_CHARS`]).
        key: String,
        /// Where the object is.
        at: String,
    },
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Syntax(m) => f.write_str(m),
            JsonError::DuplicateKey { key, at } => {
                write!(f, "duplicate key \"{key}\" in {at}")
            }
        }
    }
}

/// Marker that a serde error is our duplicate-key error (so that it is not mistaken for a
/// syntax error): `\u{1}dup\u{1}key\u{1}path`.
const DUP_MARK: &str = "\u{1}dup\u{1}";

/// Parses `text` as JSON, refusing a repeated key in any object (see the module docs).
pub fn parse_json(text: &str) -> Result<Value, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Unique {
        path: String::new(),
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    value.map_err(|e| {
        let m = e.to_string();
        match m.strip_prefix(DUP_MARK) {
            Some(rest) => {
                let mut parts = rest.splitn(2, '\u{1}');
                let key = parts.next().unwrap_or_default().to_string();
                let path = parts
                    .next()
                    .unwrap_or_default()
                    .split(" at line ")
                    .next()
                    .unwrap_or_default()
                    .to_string();
                JsonError::DuplicateKey {
                    key: cut(&key),
                    at: if path.is_empty() {
                        "the top-level object".to_string()
                    } else {
                        user_path(&path)
                    },
                }
            }
            None => JsonError::Syntax(cut_quoted(&m)),
        }
    })
}

/// A seed deserialising any JSON value into a [`Value`], refusing repeated keys; `path` is
/// where the value is (`steps[3].action`).
struct Unique {
    path: String,
}

impl Unique {
    fn child_key(&self, key: &str) -> Unique {
        Unique {
            path: if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            },
        }
    }
}

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Unique {
            path: format!("{}[{}]", self.path, items.len()),
        })? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "{DUP_MARK}{key}\u{1}{}",
                    self.path
                )));
            }
            let v = map.next_value_seed(self.child_key(&key))?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_short_values_and_cuts_long_ones() {
        assert_eq!(cut("fly"), "fly");
        let long = "x".repeat(10_000);
        let c = cut(&long);
        assert_eq!(c.chars().count(), CUT_CHARS + 1);
        assert!(c.ends_with('…'));
        let m = cut_quoted(&format!("unknown variant `{long}`, expected one of `tick`"));
        assert!(m.len() < 200, "{m}");
        assert!(m.ends_with("expected one of `tick`"), "{m}");
        assert_eq!(cut_quoted("a \"b\" c"), "a \"b\" c");
        // serde's "variant" is not a protocol variant.
        assert_eq!(
            cut_quoted(
                "unknown variant `ExternalAction`, expected one of `low`, `external-action`"
            ),
            "unknown value `ExternalAction`, expected one of `low`, `external-action`"
        );
    }

    #[test]
    fn sizes_parse_with_units_and_decimals() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("1.5Q").is_err());
        assert_eq!(show_size(64 << 20), "64 MiB");
        assert_eq!(show_size(3 << 29), "1.5 GiB");
    }

    #[test]
    fn paths_number_steps_from_one() {
        assert_eq!(user_path("steps[3].action"), "step 4: action");
        assert_eq!(user_path("steps[0]"), "step 1");
        assert_eq!(user_path("config.bounds"), "config.bounds");
    }

    #[test]
    fn duplicate_keys_are_refused_anywhere() {
        assert!(parse_json(r#"{"a": [1, {"b": 2}], "c": null}"#).is_ok());
        let e = parse_json(r#"{"a": 1, "a": 2}"#).unwrap_err();
        assert_eq!(
            e,
            JsonError::DuplicateKey {
                key: "a".into(),
                at: "the top-level object".into()
            }
        );
        let e =
            parse_json(r#"{"steps": [{}, {"action": {"op": "tick", "op": "x"}}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "duplicate key \"op\" in step 2: action");
        assert!(matches!(parse_json("{"), Err(JsonError::Syntax(_))));
        assert!(matches!(parse_json("{} x"), Err(JsonError::Syntax(_))));
    }
}
