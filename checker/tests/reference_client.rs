//! The reference client (`conformance/reference`, an implementation of MemTX that shares no code
//! with the model) judged by `memtx validate-log`: its logs conform on the scripted scenarios
//! and on random operation sequences over `full`, the whole protocol at once (1,500 here;
//! 40,000 were checked once by hand); each of its switchable defects is reported as a
//! divergence at the first event where it shows (the first event whose outcome differs from the
//! correct client's), on its own hand-written script and in random walks.

use memtx_checker::bench::log::{walks, WALK_STEPS};
use memtx_checker::log::emit::emit_run;
use memtx_checker::log::names::LogOptions;
use memtx_model::{Config, Op, Variant};
use memtx_reference::{run_script, Defect};
use std::path::{Path, PathBuf};

mod binary_support;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `full`: the whole protocol at once.
fn domain() -> Config {
    memtx_model::presets::preset("full", Variant::Memtx).expect("full")
}

/// Validates `log` (one run) under `memtx`: the run's divergence, if any.
fn judge(dir: &Path, log: &str) -> Option<memtx_checker::log::validate::Divergence> {
    let path = dir.join("client.jsonl");
    std::fs::write(&path, log).expect("written");
    let mut out = None;
    memtx_checker::log::validate_log(&path, &LogOptions::complete(Variant::Memtx), |run| {
        out = run.result.divergence.clone();
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}\n{log}"));
    out
}

fn script(cfg: &Config, ops: &[Op], name: &str) -> String {
    emit_run(name, cfg, ops).join("\n") + "\n"
}

#[test]
fn the_correct_client_conforms_on_random_sequences() {
    let dir = binary_support::scratch("random");
    let cfg = domain();
    let mut events = 0;
    for (i, ops) in walks(&cfg, 1500 * WALK_STEPS, 1).iter().enumerate() {
        let log = run_script(&script(&cfg, ops, &format!("walk-{i}")), &[]).expect("runs");
        if let Some(d) = judge(&dir, &log) {
            panic!(
                "walk {i}: event {}: {} ({})\n{log}",
                d.event, d.what, d.action
            );
        }
        events += ops.len();
    }
    assert!(events > 15_000, "{events} events");
}

#[test]
fn the_correct_client_conforms_on_the_scripted_scenarios() {
    let dir = binary_support::scratch("scenarios");
    let mut run = 0;
    for entry in std::fs::read_dir(root().join("regressions/scenarios")).expect("scenarios") {
        let path = entry.expect("entry").path();
        let trace = memtx_checker::trace::Trace::read(&path).expect("scenario");
        let ops: Vec<Op> = trace.steps.iter().map(|s| s.action.clone()).collect();
        let mut cfg = trace.config.clone();
        cfg.variant = Variant::Memtx;
        let log = run_script(&script(&cfg, &ops, "scenario"), &[]).expect("runs");
        assert_eq!(judge(&dir, &log), None, "{}\n{log}", path.display());
        run += 1;
    }
    assert!(run >= 6, "{run} scenarios within the client's scope");
}

#[test]
fn each_defect_is_a_divergence_at_the_first_event_where_it_shows() {
    let dir = binary_support::scratch("defects");
    let cfg = domain();
    // The whole protocol, then a preset that stacks beliefs on beliefs under revocations.
    let lineage = memtx_model::presets::preset("lineage", Variant::Memtx).expect("lineage");
    let mut walked: Vec<(&Config, Vec<Op>)> = Vec::new();
    walked.extend(
        walks(&cfg, 10_000 * WALK_STEPS, 2)
            .into_iter()
            .map(|w| (&cfg, w)),
    );
    walked.extend(
        walks(&lineage, 10_000 * WALK_STEPS, 3)
            .into_iter()
            .map(|w| (&lineage, w)),
    );
    let scripts = walked
        .iter()
        .enumerate()
        .map(|(i, (c, ops))| script(c, ops, &format!("walk-{i}")));
    let mut caught = [0usize; Defect::ALL.len()];
    for s in scripts {
        if caught.iter().all(|&c| c >= 5) {
            break;
        }
        let good = run_script(&s, &[]).expect("runs");
        for (k, defect) in Defect::ALL.into_iter().enumerate() {
            if caught[k] >= 5 {
                continue;
            }
            let bad = run_script(&s, &[defect]).expect("runs");
            if good == bad {
                continue;
            }
            // The first event whose line differs (line 0 is the header).
            let first = good
                .lines()
                .zip(bad.lines())
                .position(|(a, b)| a != b)
                .expect("a differing line");
            let d = judge(&dir, &bad)
                .unwrap_or_else(|| panic!("{}: the defective log conforms\n{bad}", defect.name()));
            assert_eq!(d.event, first, "{}: {}\n{bad}", defect.name(), d.what);
            caught[k] += 1;
        }
    }
    eprintln!("defects caught in random walks: {caught:?}");
    // Every defect shows in some walk but one: a commit over a parent pending revocation
    // needs a request, a fresh transaction and a child in a row (its own script, below).
    let shown = caught.iter().filter(|&&c| c > 0).count();
    assert!(shown >= Defect::ALL.len() - 1, "{caught:?}");
    assert!(caught.iter().sum::<usize>() >= 30, "{caught:?}");
}

const HEADER: &str = r#"{"format": "memtx-event-log", "version": 1, "run": "defect", "sources": {"crm": 0.95, "notes": 0.8, "web": 0.5}}"#;
const BEGIN_A: &str =
    r#"{"event": "begin", "agent": "a", "tier": "medium", "isolation": "committed-read"}"#;
const COMMIT_A: &str = r#"{"event": "commit", "agent": "a"}"#;

fn belief(
    record: &str,
    attribute: &str,
    value: u8,
    source: &str,
    confidence: f64,
    scope: &str,
    parents: &[&str],
) -> String {
    serde_json::json!({"event": "stage", "agent": "a", "record": record, "kind": "belief",
        "entity": "order-17", "attribute": attribute, "value": value, "source": source,
        "confidence": confidence, "scope": scope, "parents": parents})
    .to_string()
}

/// A script per defect, written by hand, in which it shows.
fn defect_scripts() -> Vec<(Defect, Vec<String>)> {
    let s = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let b1 = belief("b1", "eligible", 1, "crm", 0.9, "shared", &[]);
    vec![
        (
            Defect::NoEvidenceCheck,
            s(&[
                HEADER,
                BEGIN_A,
                &belief("b1", "eligible", 1, "web", 0.4, "shared", &[]),
                COMMIT_A,
            ]),
        ),
        (
            Defect::NoValidityCheck,
            s(&[
                HEADER,
                BEGIN_A,
                r#"{"event": "stage", "agent": "a", "record": "b1", "kind": "belief", "entity": "order-17", "attribute": "eligible", "value": 1, "source": "crm", "confidence": 0.9, "scope": "shared", "validity": {"from": 0, "until": 1}}"#,
                r#"{"event": "tick"}"#,
                COMMIT_A,
            ]),
        ),
        (
            Defect::NoStaleWriteCheck,
            s(&[
                HEADER,
                BEGIN_A,
                r#"{"event": "begin", "agent": "b", "tier": "medium", "isolation": "committed-read"}"#,
                r#"{"event": "stage", "agent": "b", "record": "c1", "kind": "belief", "entity": "order-17", "attribute": "eligible", "value": 2, "source": "crm", "confidence": 0.9, "scope": "shared"}"#,
                r#"{"event": "commit", "agent": "b"}"#,
                &b1,
                COMMIT_A,
            ]),
        ),
        (
            Defect::NoLineageCheck,
            s(&[
                HEADER,
                r#"{"event": "begin", "agent": "b", "tier": "medium", "isolation": "committed-read"}"#,
                r#"{"event": "stage", "agent": "b", "record": "c1", "kind": "belief", "entity": "order-17", "attribute": "eligible", "value": 2, "source": "crm", "confidence": 0.9, "scope": "shared"}"#,
                r#"{"event": "begin", "agent": "a", "tier": "medium", "isolation": "tentative-read"}"#,
                &belief("b1", "refund", 1, "crm", 0.9, "shared", &["c1"]),
                COMMIT_A,
            ]),
        ),
        (
            Defect::NoPermissionCheck,
            s(&[
                HEADER,
                BEGIN_A,
                &belief("p1", "eligible", 1, "crm", 0.9, "private", &[]),
                COMMIT_A,
                BEGIN_A,
                &belief("b1", "refund", 1, "crm", 0.9, "shared", &["p1"]),
                COMMIT_A,
            ]),
        ),
        (
            Defect::NoStabilityCheck,
            s(&[
                HEADER,
                BEGIN_A,
                &b1,
                COMMIT_A,
                r#"{"event": "request-revocation", "record": "b1"}"#,
                BEGIN_A,
                &belief("b2", "refund", 1, "crm", 0.9, "shared", &["b1"]),
                COMMIT_A,
            ]),
        ),
        (
            Defect::GateIgnoresInFlight,
            s(&[
                HEADER,
                BEGIN_A,
                &b1,
                r#"{"event": "call-tool", "agent": "a", "record": "refund", "reversible": false, "support": []}"#,
            ]),
        ),
        (
            Defect::NoCascade,
            s(&[
                HEADER,
                BEGIN_A,
                &b1,
                COMMIT_A,
                BEGIN_A,
                r#"{"event": "stage", "agent": "a", "record": "v1", "kind": "summary", "scope": "shared", "parents": ["b1"]}"#,
                COMMIT_A,
                r#"{"event": "request-revocation", "record": "b1"}"#,
                r#"{"event": "apply-revocation", "record": "b1"}"#,
            ]),
        ),
    ]
}

/// Each defect on its own script: the correct client conforms, the defective one diverges at
/// the first event where the two differ, and no other defect is needed to show it.
#[test]
fn each_defect_shows_on_its_own_script() {
    let dir = binary_support::scratch("defect-scripts");
    let scripts = defect_scripts();
    assert_eq!(scripts.len(), Defect::ALL.len());
    for (defect, lines) in scripts {
        let s = lines.join("\n") + "\n";
        let good = run_script(&s, &[]).expect("runs");
        assert_eq!(
            judge(&dir, &good),
            None,
            "{}: the correct client\n{good}",
            defect.name()
        );
        let bad = run_script(&s, &[defect]).expect("runs");
        let first = good
            .lines()
            .zip(bad.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| panic!("{} does not show\n{good}", defect.name()));
        let d = judge(&dir, &bad).unwrap_or_else(|| panic!("{} conforms\n{bad}", defect.name()));
        assert_eq!(d.event, first, "{}: {}", defect.name(), d.what);
        assert_eq!(
            first,
            lines.len() - 1,
            "{}: shows at the script's last event",
            defect.name()
        );
    }
}
