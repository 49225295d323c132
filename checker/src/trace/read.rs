//! Reading a trace or scenario file: every field validated, each kind of bad input reported as
//! its own one-line [`UserError`] (format, version, variant, property, configuration, steps,
//! expectation), values echoed from the input cut.

use super::*;

impl Trace {
    /// Reads and validates a trace or scenario file of at most [`MAX_INPUT_BYTES`].
    pub fn read(path: &Path) -> Result<Trace, UserError> {
        Trace::read_limited(path, MAX_INPUT_BYTES)
    }

    /// Reads and validates a trace or scenario file, refusing one larger than `limit` bytes
    /// without reading it whole ([`crate::input::read_limited`]).
    pub fn read_limited(path: &Path, limit: u64) -> Result<Trace, UserError> {
        let text = read_limited(path, "trace", limit)?;
        Trace::from_json_str(&text, &path.display().to_string())
    }

    /// Parses and validates a trace; `origin` (a file name) prefixes every error message.
    /// A key repeated in any object is refused ([`crate::input::parse_json`]).
    pub fn from_json_str(text: &str, origin: &str) -> Result<Trace, UserError> {
        let value = parse_json(text).map_err(|e| match e {
            JsonError::Syntax(m) => UserError::with_fix(
                ErrorKind::NotJson,
                format!("{origin} is not valid JSON ({m})"),
                "pass a .trace.json file written by memtx check, or a scenario file (docs/traces.md)",
            ),
            dup @ JsonError::DuplicateKey { .. } => UserError::with_fix(
                ErrorKind::Malformed,
                format!("{origin}: {dup}"),
                "keep one of the two: a reader would silently take the last",
            ),
        })?;
        Trace::from_json_value(value, origin)
    }

    /// Validates a parsed JSON value as a trace (see [`Trace::from_json_str`]).
    pub fn from_json_value(value: Value, origin: &str) -> Result<Trace, UserError> {
        let Value::Object(obj) = value else {
            return Err(wrong_format(origin, "it is not a JSON object"));
        };
        match obj.get("format") {
            Some(Value::String(f)) if f == TRACE_FORMAT => {}
            Some(Value::String(f)) => {
                return Err(wrong_format(
                    origin,
                    &format!("its format is \"{}\"", cut(f)),
                ))
            }
            Some(other) => {
                return Err(wrong_format(
                    origin,
                    &format!("its format is {}", cut(&other.to_string())),
                ))
            }
            None if obj.contains_key("#meta") => {
                return Err(UserError::with_fix(
                    ErrorKind::WrongFormat,
                    format!(
                        "{origin} is an ITF trace (for Apalache/Quint tools), not a memtx trace"
                    ),
                    "replay the .trace.json file written next to it",
                ))
            }
            None => return Err(wrong_format(origin, "it has no \"format\" field")),
        }
        if let Some(unknown) = obj.keys().find(|k| !TOP_LEVEL_FIELDS.contains(&k.as_str())) {
            return Err(malformed(
                origin,
                &cut(unknown),
                &format!(
                    "unknown field: a trace holds {}",
                    TOP_LEVEL_FIELDS.join(", ")
                ),
            ));
        }
        let tool = match obj.get("tool") {
            Some(v) => at::<String>(v, "tool", origin)?,
            None => String::new(),
        };
        match obj.get("version") {
            Some(v) if v.as_u64() == Some(TRACE_VERSION) => {}
            Some(v) => {
                let by = if tool.is_empty() {
                    "an unknown tool".to_string()
                } else {
                    cut(&tool)
                };
                return Err(UserError::with_fix(
                    ErrorKind::UnknownVersion,
                    format!(
                        "{origin} is memtx trace format version {}, written by {by}; this memtx ({}) reads version {TRACE_VERSION} only",
                        cut(&v.to_string()),
                        tool_id()
                    ),
                    format!("replay it with the memtx that wrote it ({by}) or re-run its \"command\" to make a version-{TRACE_VERSION} trace"),
                ));
            }
            None => return Err(malformed(origin, "version", "the field is missing")),
        }
        let config = read_config(&obj, origin)?;
        let property = match obj.get("property") {
            None => None,
            Some(v) => {
                let property: PropertyRef = at(v, "property", origin)?;
                let def = known_property(&property.key, origin, "property.key")?;
                if PropertyKind::of(def) != property.kind {
                    return Err(malformed(
                        origin,
                        "property.kind",
                        &format!(
                            "{} is a \"{}\" property, not \"{}\"",
                            def.key,
                            PropertyKind::of(def).name(),
                            property.kind.name()
                        ),
                    ));
                }
                Some(property)
            }
        };
        let expectation: Expectation = match obj.get("expectation") {
            Some(v) => at(v, "expectation", origin)?,
            None => Expectation::all_hold(),
        };
        let command = match obj.get("command") {
            Some(v) => at::<String>(v, "command", origin)?,
            None => String::new(),
        };
        let description = match obj.get("description") {
            Some(v) => Some(at::<String>(v, "description", origin)?),
            None => None,
        };
        // The JSON Schema an editor validates the file with (docs/trace.schema.json): read
        // and ignored.
        if let Some(v) = obj.get("$schema") {
            at::<String>(v, "$schema", origin)?;
        }
        let invariants = match obj.get("invariants") {
            None => None,
            Some(v) => {
                let keys: Vec<String> = at(v, "invariants", origin)?;
                for key in &keys {
                    let def = known_property(key, origin, "invariants")?;
                    if !def.is_invariant() || def.key != key {
                        return Err(malformed(
                            origin,
                            "invariants",
                            &format!("{} is not the key of an invariant (I1 …)", cut(key)),
                        ));
                    }
                }
                Some(keys)
            }
        };
        let steps = read_steps(&obj, origin, &config)?;
        let initial_state: Option<State> = match obj.get("initial_state") {
            Some(v) => Some(at(v, "initial_state", origin)?),
            None => None,
        };
        check_expectation(&expectation, steps.len(), origin)?;
        Ok(Trace {
            format: TRACE_FORMAT.to_string(),
            version: TRACE_VERSION,
            description,
            tool,
            command,
            config,
            property,
            expectation,
            invariants,
            steps,
            initial_state,
        })
    }
}

fn wrong_format(origin: &str, why: &str) -> UserError {
    UserError::with_fix(
        ErrorKind::WrongFormat,
        format!("{origin} is not a memtx trace ({why}; expected \"format\": \"{TRACE_FORMAT}\")"),
        "pass a .trace.json file written by memtx check",
    )
}

fn malformed(origin: &str, at: &str, why: &str) -> UserError {
    UserError::with_fix(
        ErrorKind::Malformed,
        format!("{origin}: {}: {why}", user_path(at)),
        "fix the field (docs/traces.md describes the format)",
    )
}

/// The fields a trace file may hold.
const TOP_LEVEL_FIELDS: &[&str] = &[
    "$schema",
    "format",
    "version",
    "description",
    "invariants",
    "tool",
    "command",
    "config",
    "property",
    "expectation",
    "steps",
    "initial_state",
];

/// The fields a step may hold.
const STEP_FIELDS: &[&str] = &["action", "label", "state", "expect"];

/// Deserialises `v`, naming its path `at` in the error (values echoed from the input are cut).
fn at<T: DeserializeOwned>(v: &Value, path: &str, origin: &str) -> Result<T, UserError> {
    T::deserialize(v).map_err(|e| malformed(origin, path, &cut_quoted(&e.to_string())))
}

fn known_property(key: &str, origin: &str, path: &str) -> Result<&'static PropertyDef, UserError> {
    PropertyDef::find(key).ok_or_else(|| {
        let keys: Vec<&str> = PROPERTIES.iter().map(|p| p.key).collect();
        UserError::with_fix(
            ErrorKind::UnknownProperty,
            format!("{origin}: {path}: unknown property \"{}\"", cut(key)),
            format!(
                "this memtx knows {}; the trace may come from a newer memtx",
                keys.join(", ")
            ),
        )
    })
}

/// The configuration: either a whole [`Config`] (as memtx writes it), or a preset named with
/// optional overrides, `{"preset": "quick", "variant": "memtx", "bounds": {...}, "domain":
/// {...}}`: the preset's configuration under the variant (default `memtx`), each field given in
/// `bounds` or `domain` replacing the preset's.
fn read_config(obj: &Map<String, Value>, origin: &str) -> Result<Config, UserError> {
    let Some(cfg) = obj.get("config") else {
        return Err(malformed(origin, "config", "the field is missing"));
    };
    let variant = match cfg.get("variant") {
        None => Variant::Memtx,
        Some(Value::String(name)) => Variant::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
            UserError::with_fix(
                ErrorKind::UnknownVariant,
                format!(
                    "{origin}: config.variant: unknown variant \"{}\"",
                    cut(name)
                ),
                format!(
                    "this memtx knows {}; the trace may come from a newer memtx",
                    names.join(", ")
                ),
            )
        })?,
        Some(_) => {
            return Err(malformed(
                origin,
                "config.variant",
                "expected a variant name",
            ))
        }
    };
    let whole = Config::deserialize(cfg);
    let config = match (whole, cfg.get("preset").and_then(Value::as_str)) {
        (Ok(config), _) => config,
        (Err(_), Some(name)) if preset(name, variant).is_some() => {
            preset_config(cfg, name, variant, origin)?
        }
        (Err(e), _) => return Err(malformed(origin, "config", &cut_quoted(&e.to_string()))),
    };
    config.validate().map_err(|e| {
        UserError::with_fix(
            ErrorKind::InvalidConfig,
            format!("{origin}: config: {e}"),
            "fix the configuration (docs/traces.md lists its fields)",
        )
    })?;
    Ok(config)
}

/// A preset's configuration with the overrides of a `config` object applied (see
/// [`read_config`]).
fn preset_config(
    cfg: &Value,
    name: &str,
    variant: Variant,
    origin: &str,
) -> Result<Config, UserError> {
    let base = preset(name, variant)
        .ok_or_else(|| malformed(origin, "config.preset", "unknown preset"))?;
    let mut merged =
        serde_json::to_value(&base).map_err(|e| malformed(origin, "config", &e.to_string()))?;
    let Value::Object(given) = cfg else {
        return Err(malformed(origin, "config", "expected an object"));
    };
    for (key, value) in given {
        match key.as_str() {
            "preset" | "variant" => {}
            "bounds" | "domain" => {
                let Value::Object(fields) = value else {
                    return Err(malformed(
                        origin,
                        &format!("config.{key}"),
                        "expected an object of the fields to override",
                    ));
                };
                if let Some(Value::Object(target)) = merged.get_mut(key.as_str()) {
                    for (f, v) in fields {
                        target.insert(f.clone(), v.clone());
                    }
                }
            }
            other => {
                return Err(malformed(
                    origin,
                    &format!("config.{}", cut(other)),
                    "unknown field: a preset-based configuration holds preset, variant, bounds and domain",
                ))
            }
        }
    }
    at(&merged, "config", origin)
}

fn read_steps(
    obj: &Map<String, Value>,
    origin: &str,
    config: &Config,
) -> Result<Vec<Step>, UserError> {
    let Some(steps) = obj.get("steps") else {
        return Err(malformed(origin, "steps", "the field is missing"));
    };
    let Value::Array(items) = steps else {
        return Err(malformed(origin, "steps", "expected an array of steps"));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = |name: &str| format!("steps[{i}].{name}");
        let Value::Object(step) = item else {
            return Err(malformed(
                origin,
                &format!("steps[{i}]"),
                "expected an object",
            ));
        };
        if let Some(unknown) = step.keys().find(|k| !STEP_FIELDS.contains(&k.as_str())) {
            return Err(malformed(
                origin,
                &path(&cut(unknown)),
                &format!("unknown field: a step holds {}", STEP_FIELDS.join(", ")),
            ));
        }
        let Some(action) = step.get("action") else {
            return Err(malformed(origin, &path("action"), "the field is missing"));
        };
        let action: Op = at(action, &path("action"), origin)?;
        let label: String = match step.get("label") {
            Some(v) => at(v, &path("label"), origin)?,
            None => op_line(&action),
        };
        let state: Option<State> = match step.get("state") {
            Some(v) => Some(at(v, &path("state"), origin)?),
            None => None,
        };
        let expect = match step.get("expect") {
            Some(v) => Some(
                StepExpect::read(v, config.bounds.records)
                    .map_err(|(at, why)| malformed_expect(origin, i + 1, &at, &why))?,
            ),
            None => None,
        };
        out.push(Step {
            action,
            label,
            state,
            expect,
        });
    }
    Ok(out)
}

fn check_expectation(e: &Expectation, len: usize, origin: &str) -> Result<(), UserError> {
    match e.kind {
        ExpectationKind::AllHold => Ok(()),
        ExpectationKind::Violation | ExpectationKind::Example => {
            let Some(key) = &e.property else {
                return Err(malformed(
                    origin,
                    "expectation.property",
                    "the field is missing",
                ));
            };
            let def = known_property(key, origin, "expectation.property")?;
            let want = if e.kind == ExpectationKind::Violation {
                PropertyKind::Always
            } else {
                PropertyKind::Sometimes
            };
            if PropertyKind::of(def) != want {
                return Err(malformed(
                    origin,
                    "expectation.property",
                    &format!(
                        "{key} is a \"{}\" property; a {} needs a \"{}\" one",
                        PropertyKind::of(def).name(),
                        if want == PropertyKind::Always {
                            "violation"
                        } else {
                            "example"
                        },
                        want.name()
                    ),
                ));
            }
            match e.step {
                None => Err(malformed(
                    origin,
                    "expectation.step",
                    "the field is missing",
                )),
                Some(s) if s > len => Err(malformed(
                    origin,
                    "expectation.step",
                    &format!("step {s} is beyond the trace's {len} steps"),
                )),
                Some(_) => Ok(()),
            }
        }
    }
}
