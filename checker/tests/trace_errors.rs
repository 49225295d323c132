//! Each kind of bad input gives its own error variant and a one-line message naming a fix.

mod binary_support;
mod trace_support;

use memtx_checker::error::{ErrorKind, UserError};
use memtx_checker::trace::replay::{replay, ReplayError};
use memtx_checker::trace::Trace;
use memtx_model::Variant;
use serde_json::{json, Value};
use trace_support::*;

/// A valid trace as JSON, to be broken one way at a time.
fn good() -> Value {
    serde_json::to_value(scripted_trace()).expect("serialise")
}

fn read_value(v: Value) -> Result<Trace, UserError> {
    Trace::from_json_str(&v.to_string(), "t.trace.json")
}

/// Asserts the error kind and that the message is one line, names the file and proposes a fix.
fn expect_kind(result: Result<Trace, UserError>, kind: ErrorKind) -> String {
    let e = result.expect_err("bad input accepted");
    let m = e.to_string();
    assert_eq!(e.kind(), kind, "{m}");
    assert!(!m.contains('\n'), "not one line: {m:?}");
    assert!(m.contains("t.trace.json"), "does not name the file: {m}");
    assert!(m.contains(';'), "no fix proposed: {m}");
    assert_eq!(e.exit_code(), 2);
    m
}

fn one_line(e: &impl std::fmt::Display) -> String {
    let m = e.to_string();
    assert!(!m.contains('\n'), "not one line: {m:?}");
    m
}

#[test]
fn good_input_is_accepted() {
    assert!(read_value(good()).is_ok());
}

#[test]
fn not_json() {
    let m = expect_kind(
        Trace::from_json_str("{\"format\": \"memtx-trace\",", "t.trace.json"),
        ErrorKind::NotJson,
    );
    assert!(m.contains("not valid JSON"), "{m}");
    expect_kind(Trace::from_json_str("", "t.trace.json"), ErrorKind::NotJson);
}

#[test]
fn wrong_format() {
    let mut v = good();
    v["format"] = json!("memtx-report");
    let m = expect_kind(read_value(v), ErrorKind::WrongFormat);
    assert!(
        m.contains("memtx-report") && m.contains("memtx-trace"),
        "{m}"
    );
    let mut v = good();
    v.as_object_mut().expect("object").remove("format");
    expect_kind(read_value(v), ErrorKind::WrongFormat);
    expect_kind(read_value(json!([1, 2])), ErrorKind::WrongFormat);
    let m = expect_kind(
        read_value(json!({"#meta": {"format": "ITF"}, "states": []})),
        ErrorKind::WrongFormat,
    );
    assert!(m.contains("ITF"), "{m}");
}

#[test]
fn unknown_version() {
    let mut v = good();
    v["version"] = json!(2);
    let m = expect_kind(read_value(v), ErrorKind::UnknownVersion);
    assert!(m.contains("version 2") && m.contains("version 1"), "{m}");
    let mut v = good();
    v["version"] = json!("1");
    expect_kind(read_value(v), ErrorKind::UnknownVersion);
}

#[test]
fn unknown_variant() {
    let mut v = good();
    v["config"]["variant"] = json!("no-such-variant");
    let m = expect_kind(read_value(v), ErrorKind::UnknownVariant);
    assert!(
        m.contains("no-such-variant") && m.contains("missed-cascade"),
        "{m}"
    );
}

#[test]
fn unknown_property() {
    let mut v = good();
    v["property"]["key"] = json!("I99");
    let m = expect_kind(read_value(v), ErrorKind::UnknownProperty);
    assert!(m.contains("I99") && m.contains("I1"), "{m}");
    let mut v = good();
    v["expectation"] = json!({"kind": "violation", "property": "X1", "step": 1});
    expect_kind(read_value(v), ErrorKind::UnknownProperty);
}

#[test]
fn invalid_config() {
    let mut v = good();
    v["config"]["bounds"]["agents"] = json!(9);
    let m = expect_kind(read_value(v), ErrorKind::InvalidConfig);
    assert!(m.contains("agents"), "{m}");
}

/// One way to break a trace's JSON.
type Mutation = Box<dyn Fn(&mut Value)>;

#[test]
fn malformed_fields_are_named() {
    let cases: Vec<(Mutation, &str)> = vec![
        (
            Box::new(|v| v["steps"][1]["action"] = json!({"op": "fly"})),
            "step 2: action",
        ),
        (
            Box::new(|v| v["steps"][0]["state"]["records"] = json!([{"kind": "belief"}])),
            "step 1: state",
        ),
        (
            Box::new(|v| v["steps"][2]["state"]["log"] = json!([])),
            "step 3: state",
        ),
        (
            Box::new(|v| v["steps"][0]["state"]["txns"][0]["snapshot"] = json!([40])),
            "step 1: state",
        ),
        (Box::new(|v| v["steps"] = json!({})), "steps"),
        (
            Box::new(|v| {
                v["steps"][0].as_object_mut().map(|o| o.remove("action"));
            }),
            "step 1: action",
        ),
        (
            Box::new(|v| v["steps"][1]["expect"] = json!({"refused": "gate.block.nope"})),
            "step 2: expect.refused",
        ),
        (
            Box::new(|v| v["steps"][1]["lable"] = json!("typo")),
            "step 2: lable",
        ),
        (Box::new(|v| v["expectations"] = json!({})), "expectations"),
        (
            Box::new(|v| v["config"]["bounds"]["agents"] = json!(-1)),
            "config",
        ),
        (
            Box::new(|v| v["property"]["kind"] = json!("always")),
            "property.kind",
        ),
        (
            Box::new(|v| {
                v["expectation"] = json!({"kind": "violation", "property": "I2", "step": 99})
            }),
            "expectation.step",
        ),
        (
            Box::new(|v| {
                v["expectation"] = json!({"kind": "example", "property": "I2", "step": 1})
            }),
            "expectation.property",
        ),
        (
            Box::new(|v| v["expectation"] = json!({"kind": "sometimes"})),
            "expectation",
        ),
        (Box::new(|v| v["command"] = json!(7)), "command"),
    ];
    for (mutate, field) in cases {
        let mut v = good();
        mutate(&mut v);
        let m = expect_kind(read_value(v), ErrorKind::Malformed);
        assert!(m.contains(&format!(": {field}:")), "{field} not named: {m}");
    }
}

#[test]
fn missing_file() {
    let dir = temp_dir("missing");
    let e = Trace::read(&dir.join("absent.trace.json")).expect_err("no file");
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(one_line(&e).contains("absent.trace.json"));
}

#[test]
fn config_mismatch() {
    let trace = scripted_trace();
    assert!(trace.check_config(&trace.config).is_ok());
    let mut other = trace.config.clone();
    other.preset = "custom".into();
    assert!(
        trace.check_config(&other).is_ok(),
        "the preset name is informational"
    );

    other.bounds.records = 4;
    other.domain.observe = true;
    let e = trace.check_config(&other).expect_err("different bounds");
    assert_eq!(e.kind(), ErrorKind::ConfigMismatch);
    let m = one_line(&e);
    assert!(m.contains("bounds.records: trace 3, given 4"), "{m}");
    assert!(m.contains("domain.observe"), "{m}");

    let mut other = trace.config.clone();
    other.variant = Variant::NoCascade;
    let e = trace.check_config(&other).expect_err("different variant");
    assert_eq!(e.kind(), ErrorKind::ConfigMismatch);
    assert!(one_line(&e).contains("variant"), "{e}");
}

#[test]
fn step_not_enabled() {
    let mut trace = scripted_trace();
    // Commit twice: the second has no open transaction.
    let commit = trace.steps[2].clone();
    trace.steps.insert(3, commit);
    let e = replay(&trace, None).expect_err("not enabled");
    match &e {
        ReplayError::NotEnabled {
            step,
            action,
            reason,
        } => {
            assert_eq!(*step, 4);
            assert_eq!(action, "a0 Commit");
            assert!(reason.contains("no open transaction"), "{reason}");
        }
        other => panic!("expected NotEnabled, got {other:?}"),
    }
    let m = one_line(&e);
    assert!(m.contains("step 4") && m.contains("a0 Commit"), "{m}");
    // The remedy fits the file: a saved trace is made again by its command; a scenario
    // (no command) is fixed by hand, with no advice about a command it does not have.
    let saved = one_line(&e.for_trace(&trace));
    assert!(
        saved.contains(&format!("make it again with `{}`", trace.command)),
        "{saved}"
    );
    trace.command.clear();
    let scenario = one_line(&e.for_trace(&trace));
    assert!(scenario.contains("fix the step"), "{scenario}");
    assert!(!scenario.contains("command"), "{scenario}");
    let u: UserError = e.into();
    assert_eq!(u.kind(), ErrorKind::Replay);
}

#[test]
fn step_outside_the_domain() {
    use memtx_model::txn::{Isolation, Tier};
    // Enabled by the protocol, but `quick` does not enumerate raw-read transactions.
    let mut trace = scripted_trace();
    trace.steps[0].action = memtx_model::Op::Begin {
        agent: 0,
        tier: Tier::Medium,
        isolation: Isolation::RawRead,
    };
    let e = replay(&trace, None).expect_err("outside the domain");
    assert!(
        matches!(e, ReplayError::NotEnabled { step: 1, .. }),
        "{e:?}"
    );
    let m = one_line(&e);
    assert!(
        m.contains("outside the configuration's domain: domain.isolations does not list raw-read"),
        "the field at fault is not named: {m}"
    );
}

#[test]
fn recorded_state_differs() {
    let mut trace = scripted_trace();
    let state = trace.steps[2]
        .state
        .as_mut()
        .expect("a saved trace has states");
    state.clock = 0;
    state.next_seq = 7;
    let e = replay(&trace, None).expect_err("mismatch");
    match &e {
        ReplayError::StateMismatch { step, fields, .. } => {
            assert_eq!(*step, 3);
            assert_eq!(fields.len(), 1, "{fields:?}");
            assert!(
                fields[0].starts_with("next_seq: recorded 7, replayed 1"),
                "{fields:?}"
            );
        }
        other => panic!("expected StateMismatch, got {other:?}"),
    }
    let m = one_line(&e);
    assert!(m.contains("next_seq"), "{m}");
    // The same edit through the file: read accepts it, replay refuses it.
    let v = serde_json::to_value(&trace).expect("serialise");
    let back = read_value(v).expect("a well-formed trace");
    assert!(matches!(
        replay(&back, None),
        Err(ReplayError::StateMismatch { step: 3, .. })
    ));
    // Under a variant override the recorded states are not compared.
    assert!(replay(&back, Some(Variant::NoCascade)).is_ok());
}

#[test]
fn initial_state_must_be_the_models() {
    let mut trace = scripted_trace();
    trace
        .initial_state
        .as_mut()
        .expect("a saved trace has its initial state")
        .clock = 1;
    let e = replay(&trace, None).expect_err("bad initial state");
    match &e {
        ReplayError::InitialState { fields } => {
            assert!(fields[0].starts_with("clock"), "{fields:?}")
        }
        other => panic!("expected InitialState, got {other:?}"),
    }
    one_line(&e);
}
