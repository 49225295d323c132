//! `memtx validate-log`: event logs of an implementation (docs/event-log.md) judged against the
//! model. A log that says what the protocol does conforms; one changed outcome is the first
//! divergence, named in the log's own words, with the events before it written as a scenario
//! that `memtx replay` replays; malformed logs are one line and exit 2.

mod binary_support;

use binary_support::{files_under, memtx, scratch};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn example() -> String {
    std::fs::read_to_string(root().join("regressions/logs/refund.jsonl")).expect("example log")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("log written");
    path.to_string_lossy().into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_example_log_conforms_run_by_run() {
    let dir = scratch("conforms");
    let log = root().join("regressions/logs/refund.jsonl");
    let out = memtx(&["validate-log", &log.to_string_lossy(), "--json"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(v["conforms"], true);
    assert_eq!(v["invariants_hold"], true);
    assert_eq!(v["events"], 9);
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["run"], "refund-after-commit");
    assert_eq!(runs[0]["events"], 6);
    assert_eq!(runs[1]["run"], "weak-evidence");
    // Discretisation is said: crm's 0.95 is high, web's 0.5 and agent-notes' 0.8 below it.
    let d = runs[0]["discretisation"].as_str().expect("discretisation");
    assert!(d.contains("crm 0.95 -> high"), "{d}");
    assert!(d.contains("web 0.5 -> low"), "{d}");
    assert!(d.contains("agent-notes 0.8 -> mid"), "{d}");
    assert!(
        !dir.join("traces").exists(),
        "nothing written for conforming runs"
    );
}

#[test]
fn a_changed_outcome_is_the_first_divergence_in_the_logs_words() {
    let dir = scratch("diverges");
    // The implementation claims the weak-evidence belief committed.
    let text = example().replace(
        "\"refund-eligible#18\": {\"state\": \"quarantined\", \"reason\": \"evidence\"}",
        "\"refund-eligible#18\": {\"state\": \"committed\"}",
    );
    assert_ne!(text, example());
    let log = write(&dir, "changed.jsonl", &text);
    let out = memtx(&["validate-log", &log], &dir);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("run refund-after-commit (line 1, 6 events): conforms"),
        "{text}"
    );
    assert!(
        text.contains("DIVERGES at event 3 (line 11, planner commit): the implementation has refund-eligible#18 committed; the protocol has it quarantined (evidence): confidence 0.5 < 0.6 and authority 0.8 < 0.9"),
        "{text}"
    );
    assert!(text.contains("Result: 1 of 2 runs diverge"), "{text}");
    // The events before it, as a scenario that replays.
    let scenario = dir.join("traces/logs/002-weak-evidence.scenario.json");
    assert!(
        text.contains("memtx replay traces/logs/002-weak-evidence.scenario.json"),
        "{text}"
    );
    let replayed = memtx(&["replay", &scenario.to_string_lossy()], &dir);
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}{}",
        stdout(&replayed),
        stderr(&replayed)
    );
    assert!(
        stdout(&replayed).contains("Replay of a scenario (2 steps)"),
        "{}",
        stdout(&replayed)
    );
}

/// An event that creates a record may also say what became of records that existed before
/// it: each is judged as itself, never as the new one.
#[test]
fn an_event_that_creates_a_record_is_judged_on_every_record_it_names() {
    let dir = scratch("named-beside");
    let call = "\"outcome\": {\"records\": {\"refund#2\": {\"state\": \"committed\", \"effect\": \"executed\"}";
    assert!(example().contains(call));
    let beside = |support: &str| {
        example().replace(
            call,
            &format!("{call}, \"refund-eligible#17\": {{\"state\": \"committed\", \"effect\": {support}}}"),
        )
    };
    // The support, as it is: committed, with no effect of its own.
    let out = memtx(
        &["validate-log", &write(&dir, "a.jsonl", &beside("null"))],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    // The support said to be executed, which only the new call is.
    let out = memtx(
        &[
            "validate-log",
            &write(&dir, "b.jsonl", &beside("\"executed\"")),
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("DIVERGES at event 6 (line 7, planner call-tool refund#2 (irreversible, support: refund-eligible#17)): the implementation has refund-eligible#17 committed, executed; the protocol has it committed"),
        "{}",
        stdout(&out)
    );
    // A stage that misdescribes an earlier record quarantined for evidence: the protocol's
    // reason is explained with that record's own confidence, not the new write's.
    let later = format!(
        "{}\n{}\n{}\n",
        example().trim_end(),
        r#"{"event": "begin", "agent": "planner", "tier": "medium", "isolation": "committed-read"}"#,
        r#"{"event": "stage", "agent": "planner", "record": "refund-eligible#19", "kind": "belief", "entity": "order-19", "attribute": "refund-eligible", "value": true, "source": "agent-notes", "confidence": 0.3, "scope": "shared", "outcome": {"records": {"refund-eligible#18": {"state": "committed"}}}}"#
    );
    let out = memtx(&["validate-log", &write(&dir, "c.jsonl", &later)], &dir);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("the implementation has refund-eligible#18 committed; the protocol has it quarantined (evidence): confidence 0.5 < 0.6"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_refusal_and_a_performance_disagreeing_are_divergences_both_ways() {
    let dir = scratch("refusals");
    // The implementation let the refund through on a tentative belief (a dirty read).
    let performed = example().replace(", \"outcome\": {\"refused\": \"gate.block.in-flight\"}", "");
    let out = memtx(&["validate-log", &write(&dir, "a.jsonl", &performed)], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("DIVERGES at event 3 (line 4, planner call-tool refund#1 (irreversible, support: refund-eligible#17)): the implementation performed it; the protocol refuses it: gate.block.in-flight"),
        "{}",
        stdout(&out)
    );
    // ... or refused the refund after the commit, which the protocol performs.
    let refused = example().replace(
        "\"outcome\": {\"records\": {\"refund#2\": {\"state\": \"committed\", \"effect\": \"executed\"}}}",
        "\"outcome\": {\"refused\": true}",
    );
    let out = memtx(&["validate-log", &write(&dir, "b.jsonl", &refused)], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("DIVERGES at event 6 (line 7, planner call-tool refund#2 (irreversible, support: refund-eligible#17)): the implementation refused it; the protocol performs it"),
        "{}",
        stdout(&out)
    );
    // ... or refused for another reason than the protocol's.
    let reason = example().replace("gate.block.in-flight", "gate.block.support-expired");
    let out = memtx(&["validate-log", &write(&dir, "c.jsonl", &reason)], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("the implementation refused it for gate.block.support-expired; the protocol refuses it for gate.block.in-flight"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_run_that_conforms_under_a_variant_and_breaks_an_invariant_says_so() {
    let dir = scratch("invariant");
    // Under paper-gate the gate does not look at the support's tentative state... the dirty
    // read goes through and I1 (no executed irreversible call on unvalidated support) fails.
    let performed = example().replace(", \"outcome\": {\"refused\": \"gate.block.in-flight\"}", "");
    let log = write(&dir, "dirty.jsonl", &performed);
    let listed = memtx(&["list", "--json"], &dir);
    let variants: serde_json::Value = serde_json::from_str(&stdout(&listed)).expect("list JSON");
    let names: Vec<String> = variants["variants"]
        .as_array()
        .expect("variants")
        .iter()
        .filter_map(|v| v["name"].as_str().map(String::from))
        .collect();
    let mut found = false;
    for variant in &names {
        let out = memtx(
            &["validate-log", &log, "--variant", variant, "--json"],
            &dir,
        );
        let v: serde_json::Value = match serde_json::from_str(&stdout(&out)) {
            Ok(v) => v,
            Err(_) => panic!("{variant}: {}{}", stdout(&out), stderr(&out)),
        };
        if v["runs"][0]["conforms"] == true && v["invariants_hold"] == false {
            assert_eq!(out.status.code(), Some(1), "{variant}");
            let broken = v["runs"][0]["broken"].as_array().expect("broken");
            assert!(!broken.is_empty());
            assert!(v["runs"][0]["replay"].is_string(), "a scenario is written");
            found = true;
        }
    }
    assert!(
        found,
        "some variant performs the dirty read and breaks an invariant: {names:?}"
    );
}

#[test]
fn malformed_logs_are_one_line_and_exit_2() {
    let dir = scratch("malformed");
    let header = "{\"format\": \"memtx-event-log\", \"version\": 1}\n";
    let begin = "{\"event\": \"begin\", \"agent\": \"a\", \"tier\": \"medium\", \"isolation\": \"committed-read\"}\n";
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty", String::new(), "holds no run"),
        ("no header", begin.to_string(), "line 1: an event before any run header"),
        ("truncated", format!("{header}{{\"event\": \"begin\", \"agent\""), "line 2: the line ends before its JSON value does"),
        ("not JSON", format!("{header}hello\n"), "line 2: not JSON"),
        ("unknown event", format!("{header}{{\"event\": \"teleport\"}}\n"), "line 2: unknown event \"teleport\""),
        ("unknown field", format!("{header}{{\"event\": \"tick\", \"speed\": 3}}\n"), "line 2: a tick event has no field \"speed\""),
        ("wrong format", "{\"format\": \"memtx-trace\", \"version\": 1}\n".into(), "line 1: \"format\" is \"memtx-trace\""),
        ("version", "{\"format\": \"memtx-event-log\", \"version\": 9}\n".into(), "line 1: event-log version 9"),
        ("used before", format!("{header}{begin}{{\"event\": \"read\", \"agent\": \"a\", \"record\": \"ghost\"}}\n"), "line 3: record ghost is used before it exists"),
        ("created twice", format!("{header}{begin}{{\"event\": \"stage\", \"agent\": \"a\", \"record\": \"x\", \"kind\": \"belief\", \"entity\": \"e\", \"attribute\": \"t\", \"value\": 1, \"source\": \"s\", \"authority\": 0.95, \"confidence\": 0.9, \"scope\": \"shared\"}}\n{{\"event\": \"stage\", \"agent\": \"a\", \"record\": \"x\", \"kind\": \"belief\", \"entity\": \"e\", \"attribute\": \"t\", \"value\": 1, \"source\": \"s\", \"confidence\": 0.9, \"scope\": \"shared\"}}\n"), "line 4: record x already exists (created on line 3)"),
        ("no authority", format!("{header}{begin}{{\"event\": \"stage\", \"agent\": \"a\", \"record\": \"x\", \"kind\": \"belief\", \"entity\": \"e\", \"attribute\": \"t\", \"value\": 1, \"source\": \"s\", \"confidence\": 0.9, \"scope\": \"shared\"}}\n"), "line 3: run run 1: source s has no authority"),
        ("confidence", format!("{header}{begin}{{\"event\": \"stage\", \"agent\": \"a\", \"record\": \"x\", \"kind\": \"belief\", \"entity\": \"e\", \"attribute\": \"t\", \"value\": 1, \"source\": \"s\", \"authority\": 0.9, \"confidence\": 7, \"scope\": \"shared\"}}\n"), "line 3: \"confidence\" must be a number between 0 and 1 (got 7)"),
        ("too many authorities", "{\"format\": \"memtx-event-log\", \"version\": 1, \"sources\": {\"a\": 0.1, \"b\": 0.2, \"c\": 0.3}}\n".into(), "3 distinct authorities below 0.9"),
        ("five agents", format!("{header}{}", (0..5).map(|i| format!("{{\"event\": \"end-session\", \"agent\": \"g{i}\"}}\n")).collect::<String>()), "line 6: run run 1: a run has at most 4 agents"),
        ("seventeen ticks", format!("{header}{}", "{\"event\": \"tick\"}\n".repeat(17)), "the run has 17 ticks"),
        ("bad state", format!("{header}{begin}{{\"event\": \"commit\", \"agent\": \"a\", \"outcome\": {{\"records\": {{\"x\": {{\"state\": \"done\"}}}}}}}}\n"), "line 3: \"outcome.records.x.state\" \"done\" is not a lifecycle state"),
        ("unknown reason", format!("{header}{begin}{{\"event\": \"commit\", \"agent\": \"a\", \"outcome\": {{\"refused\": \"because\"}}}}\n"), "line 3: \"outcome.refused\" \"because\" is not a refusal reason"),
        ("long line", format!("{header}{{\"event\": \"tick\", \"note\": \"{}\"}}\n", "x".repeat(2 << 20)), "line 2: the line is longer than 1 MiB"),
        ("not UTF-8", format!("{header}\u{0}"), "line 2: not JSON"),
    ];
    for (what, text, want) in cases {
        let log = write(&dir, "bad.jsonl", &text);
        let out = memtx(&["validate-log", &log], &dir);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {}{err}", stdout(&out));
        assert_eq!(err.lines().count(), 1, "{what}: one line: {err}");
        assert!(err.contains(want), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
    let mut bytes = header.as_bytes().to_vec();
    bytes.extend_from_slice(b"{\"event\": \"tick\", \"note\": \"\xff\"}\n");
    std::fs::write(dir.join("latin.jsonl"), bytes).expect("written");
    let out = memtx(&["validate-log", "latin.jsonl"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("line 2: the line is not UTF-8 text"),
        "{}",
        stderr(&out)
    );
    let out = memtx(&["validate-log", "missing.jsonl"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let out = memtx(&["validate-log", "."], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("it is a directory"),
        "{}",
        stderr(&out)
    );
}

/// Every trace and scenario of `regressions/`, and the log `log::emit` writes of it.
fn regression_logs() -> Vec<(PathBuf, memtx_checker::trace::Trace, Vec<String>)> {
    files_under(&root().join("regressions"), "json")
        .into_iter()
        .map(|file| {
            let trace = memtx_checker::trace::Trace::read(&file).expect("a regression replays");
            let ops: Vec<memtx_model::Op> = trace.steps.iter().map(|s| s.action.clone()).collect();
            let lines = memtx_checker::log::emit::emit_run("regression", &trace.config, &ops);
            (file, trace, lines)
        })
        .collect()
}

/// Validates `lines` (a log) under `variant` through the library; the runs.
fn validate_lines(
    dir: &Path,
    lines: &[String],
    variant: memtx_model::Variant,
) -> Vec<memtx_checker::log::Run> {
    let path = dir.join("emitted.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("log written");
    let mut runs = Vec::new();
    memtx_checker::log::validate_log(
        &path,
        &memtx_checker::log::names::LogOptions::complete(variant),
        |run| {
            runs.push(run.clone());
            Ok(())
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), lines.join("\n")));
    runs
}

/// The round trip: every trace and scenario of `regressions/`, written as an implementation's
/// log under its own variant (in other names: agents `planner`, records `note-3`, values of
/// several JSON types), conforms; and the invariant a saved trace breaks is broken after the
/// same event, so the log's harm is the trace's harm.
#[test]
fn every_regression_trace_written_as_a_log_conforms_and_breaks_what_it_breaks() {
    use memtx_checker::trace::ExpectationKind;
    let dir = scratch("round-trip");
    let logs = regression_logs();
    assert!(logs.len() > 40, "{} files", logs.len());
    let mut violations = 0;
    for (file, trace, lines) in &logs {
        let ops = trace.steps.len();
        let variant = trace.config.variant;
        let runs = validate_lines(&dir, lines, variant);
        assert_eq!(runs.len(), 1);
        let run = &runs[0];
        assert!(
            run.result.divergence.is_none(),
            "{}: {:?}\n{}",
            file.display(),
            run.result.divergence,
            lines.join("\n")
        );
        assert_eq!(run.events, ops);
        if trace.expectation.kind == ExpectationKind::Violation {
            violations += 1;
            let key = trace.expectation.property.as_deref().expect("a property");
            let step = trace.expectation.step.expect("a step");
            let broken = run.result.broken.iter().find(|b| b.key == key);
            assert_eq!(
                broken.map(|b| b.event),
                Some(step),
                "{}: {key} at step {step}; the log broke {:?}",
                file.display(),
                run.result.broken
            );
        }
    }
    assert!(violations > 30, "{violations} violation traces");
}

/// Each outcome is compared: in every log written from `regressions/`, changing the state the
/// log gives any one record after any one event (to every other lifecycle state in turn) is a
/// divergence at exactly that event, naming that record; so is leaving that record out of the
/// line (which claims `all_changes`), and so is a performed event logged as refused.
#[test]
fn every_changed_outcome_of_every_regression_log_diverges_at_its_event() {
    use memtx_checker::log::names::LIVES;
    let dir = scratch("mutations");
    let (mut mutants, mut refusals, mut omissions) = (0, 0, 0);
    for (file, trace, lines) in regression_logs() {
        for (i, line) in lines.iter().enumerate().skip(1) {
            let event: serde_json::Value = serde_json::from_str(line).expect("JSON");
            let Some(records) = event["outcome"]["records"].as_object() else {
                continue;
            };
            let Some((name, said)) = records.iter().next() else {
                continue;
            };
            // Leaving a changed record out of a line that claims all changes diverges too.
            let mut omitted = event.clone();
            omitted["outcome"]["records"]
                .as_object_mut()
                .expect("records")
                .remove(name);
            let mut log = lines.clone();
            log[i] = omitted.to_string();
            let runs = validate_lines(&dir, &log, trace.config.variant);
            let d = runs[0]
                .result
                .divergence
                .as_ref()
                .expect("an omitted change diverges");
            assert_eq!(d.event, i, "{}: {}", file.display(), d.what);
            assert!(
                d.what.contains(&format!("the protocol also makes {name} ")),
                "{}",
                d.what
            );
            omissions += 1;
            let mut variants = Vec::new();
            for (other, _) in LIVES.iter().filter(|(n, _)| *n != said["state"]) {
                let mut e = event.clone();
                e["outcome"]["records"][name]["state"] = serde_json::json!(other);
                variants.push(e);
            }
            let mut refused = event.clone();
            refused["outcome"] = serde_json::json!({"refused": true});
            variants.push(refused);
            for (k, changed) in variants.into_iter().enumerate() {
                let mut log = lines.clone();
                log[i] = changed.to_string();
                let runs = validate_lines(&dir, &log, trace.config.variant);
                let d = runs[0].result.divergence.as_ref().unwrap_or_else(|| {
                    panic!(
                        "{}: event {i} changed to {} conforms",
                        file.display(),
                        log[i]
                    )
                });
                assert_eq!(d.event, i, "{}: {}", file.display(), d.what);
                if k + 1 == LIVES.len() {
                    assert!(
                        d.what.contains("the implementation refused it"),
                        "{}",
                        d.what
                    );
                    refusals += 1;
                } else {
                    assert!(d.what.contains(&format!("has {name} ")), "{}", d.what);
                    mutants += 1;
                }
            }
        }
    }
    assert!(
        mutants > 1000 && refusals > 150 && omissions > 150,
        "{mutants} mutants, {refusals} refusals, {omissions} omissions"
    );
}

/// Random walks over `full` (the whole protocol at once: two agents, observations, reviews,
/// revocations, reads, sessions) under every variant, written as logs: every run conforms to
/// its own variant, and the invariants validate-log reports broken are exactly those the model
/// judges broken along the walk, after the same event.
#[test]
fn random_walks_of_every_variant_written_as_logs_conform_and_break_what_they_break() {
    use memtx_checker::bench::log::walks;
    use memtx_checker::log::emit::emit_run;
    use memtx_model::config::VARIANTS;
    use memtx_model::machine::{step, MemTx};
    use memtx_model::properties::PROPERTIES;
    let dir = scratch("walks");
    let mut broken_total = 0;
    for info in VARIANTS {
        let cfg = memtx_model::presets::preset("full", info.variant).expect("full");
        let model = MemTx::new(cfg.clone());
        let runs = walks(&cfg, 2_000, 7);
        let mut lines = Vec::new();
        let mut expected = Vec::new();
        for (i, ops) in runs.iter().enumerate() {
            lines.extend(emit_run(&format!("walk-{i}"), &cfg, ops));
            // What the model itself says: the first event after which each invariant fails.
            let mut state = memtx_model::State::initial();
            let mut first: Vec<(String, usize)> = Vec::new();
            for (k, op) in ops.iter().enumerate() {
                if let Ok(post) = step(&cfg, &state, op) {
                    state = post;
                    for p in PROPERTIES.iter().filter(|p| p.is_invariant()) {
                        if !(p.holds)(&model, &state) && !first.iter().any(|(key, _)| key == p.key)
                        {
                            first.push((p.key.to_string(), k + 1));
                        }
                    }
                }
            }
            expected.push(first);
        }
        let judged = validate_lines(&dir, &lines, info.variant);
        assert_eq!(judged.len(), runs.len(), "{}", info.name);
        for (run, want) in judged.iter().zip(&expected) {
            assert!(
                run.result.divergence.is_none(),
                "{}: {}: {:?}",
                info.name,
                run.name,
                run.result.divergence
            );
            let got: Vec<(String, usize)> = run
                .result
                .broken
                .iter()
                .map(|b| (b.key.clone(), b.event))
                .collect();
            assert_eq!(&got, want, "{}: {}", info.name, run.name);
            broken_total += got.len();
        }
    }
    assert!(broken_total > 0, "some variant's walks break an invariant");
}

/// `memtx bench --validate-log N` (plumbing, a small log): the log it generates conforms, and
/// it reports the rate and the target; conflicting flags are one line and exit 2.
#[test]
fn the_benchmark_generates_a_conforming_log_and_reports_the_target() {
    let dir = scratch("bench");
    let out = memtx(&["bench", "--validate-log", "500"], &dir);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("A log of 500 events in"), "{text}");
    assert!(text.contains("over `full`"), "{text}");
    assert!(text.contains("Every run conforms: yes"), "{text}");
    assert!(
        text.contains("Target: 100,000 events in under 60 s"),
        "{text}"
    );
    for bad in [
        vec!["bench", "--validate-log", "0"],
        vec!["bench", "--validate-log", "10", "--simulate", "1s"],
        vec!["bench", "--validate-log", "10", "--repeat", "3"],
    ] {
        let out = memtx(&bad, &dir);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert_eq!(stderr(&out).lines().count(), 1, "{bad:?}: {}", stderr(&out));
    }
}

/// Partial logs: every trace of `regressions/` written as a log with its ticks and revocation
/// requests left out diverges as a complete log wherever a left-out step mattered, and
/// conforms with `--missing tick,request-revocation`, the search inserting no more steps than
/// were left out; the completed run replays as a scenario.
#[test]
fn logs_that_leave_out_ticks_and_revocation_requests_are_completed_by_search() {
    use memtx_checker::log::names::LogOptions;
    let dir = scratch("partial");
    let (mut partial_logs, mut completed_steps, mut strict_divergences) = (0, 0, 0);
    let mut named_insertions = 0;
    for (file, trace, lines) in regression_logs() {
        let left_out = |l: &String| {
            l.contains("\"event\":\"tick\"") || l.contains("\"event\":\"request-revocation\"")
        };
        let kept: Vec<String> = lines.iter().filter(|l| !left_out(l)).cloned().collect();
        let dropped = lines.len() - kept.len();
        if dropped == 0 {
            continue;
        }
        partial_logs += 1;
        let path = dir.join("partial.jsonl");
        std::fs::write(&path, kept.join("\n") + "\n").expect("written");
        let run_with = |options: &LogOptions| {
            let mut runs = Vec::new();
            memtx_checker::log::validate_log(&path, options, |run| {
                runs.push(run.clone());
                Ok(())
            })
            .map(|()| runs)
        };
        let variant = trace.config.variant;
        // As a complete log: a divergence, or malformed (a validity shape off the clock).
        match run_with(&LogOptions::complete(variant)) {
            Ok(runs) => strict_divergences += usize::from(runs[0].result.divergence.is_some()),
            Err(_) => strict_divergences += 1,
        }
        let options = LogOptions {
            variant,
            missing: vec!["tick", "request-revocation"],
            max_missing: 3,
            config: None,
        };
        let runs = run_with(&options).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let r = &runs[0].result;
        assert!(
            r.divergence.is_none(),
            "{}: {:?}\n{}",
            file.display(),
            r.divergence,
            kept.join("\n")
        );
        assert!(
            r.inserted.len() <= dropped,
            "{}: {:?}",
            file.display(),
            r.inserted
        );
        completed_steps += r.inserted.len();
        // An inserted step that names a record names it in the log's words too.
        for step in r
            .inserted
            .iter()
            .filter(|s| s.action.starts_with("RequestRevocation"))
        {
            assert!(
                step.action.contains(" (note-") || step.action.contains(" (view-"),
                "{}",
                step.action
            );
            named_insertions += 1;
        }
        let completed = memtx_checker::trace::replay::replay(&r.scenario, None)
            .unwrap_or_else(|e| panic!("{}: the completed run replays: {e:?}", file.display()));
        assert!(completed.mismatches.is_empty(), "{}", file.display());
    }
    assert!(
        partial_logs >= 10,
        "{partial_logs} logs with steps left out"
    );
    assert!(
        strict_divergences >= 5,
        "{strict_divergences} diverge as complete logs"
    );
    assert!(completed_steps >= 10, "{completed_steps} steps found");
    assert!(named_insertions > 0, "a revocation request was inserted");
}

/// A defect is not explained away: with steps allowed missing, a changed outcome still
/// diverges, and says no completion helps; unknown or record-creating kinds are usage errors.
#[test]
fn missing_steps_do_not_hide_a_divergence() {
    let dir = scratch("not-hidden");
    let text = example().replace(
        "\"refund-eligible#18\": {\"state\": \"quarantined\", \"reason\": \"evidence\"}",
        "\"refund-eligible#18\": {\"state\": \"committed\"}",
    );
    let log = write(&dir, "changed.jsonl", &text);
    let out = memtx(
        &[
            "validate-log",
            &log,
            "--missing",
            "tick,read,request-revocation,end-session",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("the protocol has it quarantined (evidence): confidence 0.5 < 0.6 and authority 0.8 < 0.9 (and no sequence of at most 3 left-out steps (tick, read, request-revocation, end-session) makes it match)"),
        "{}",
        stdout(&out)
    );
    for (bad, want) in [
        (
            "stage",
            "--missing stage: a stage creates a record the log names",
        ),
        ("teleport", "--missing: unknown operation \"teleport\""),
    ] {
        let out = memtx(&["validate-log", &log, "--missing", bad], &dir);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
    }
}

/// `--preset` / `--domain`: a run held to a given configuration conforms when every event is
/// one it explores; an event outside its domain is a divergence naming the field at fault; a run
/// larger than its bounds is refused (exit 2).
#[test]
fn a_run_held_to_a_preset_must_stay_within_its_domain() {
    let dir = scratch("preset");
    let log = [
        r#"{"format": "memtx-event-log", "version": 1, "run": "in-quick", "sources": {"crm": 0.95, "notes": 0.8}}"#,
        r#"{"event": "begin", "agent": "a", "tier": "medium", "isolation": "committed-read"}"#,
        r#"{"event": "stage", "agent": "a", "record": "b1", "kind": "belief", "entity": "order-17", "attribute": "eligible", "value": true, "source": "notes", "confidence": 0.9, "scope": "shared"}"#,
        r#"{"event": "commit", "agent": "a", "outcome": {"records": {"b1": {"state": "committed"}}}}"#,
        r#"{"event": "begin", "agent": "a", "tier": "medium", "isolation": "committed-read"}"#,
        r#"{"event": "call-tool", "agent": "a", "record": "refund", "reversible": false, "support": ["b1"], "outcome": {"records": {"refund": {"effect": "executed"}}}}"#,
    ]
    .join("\n");
    let path = write(&dir, "quick.jsonl", &log);
    let out = memtx(
        &["validate-log", &path, "--preset", "quick", "--json"],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    // crm (high) takes quick's high source, src2; notes (mid) the first mid one, src0.
    assert!(v["runs"][0]["names"]
        .as_str()
        .expect("names")
        .contains("sources src2 crm, src0 notes"));
    let scenario_dir = dir.join("sc");
    // A low-confidence write: a shape quick does not explore.
    let low = log.replacen("\"confidence\": 0.9", "\"confidence\": 0.4", 1);
    let path = write(&dir, "low.jsonl", &low);
    let out = memtx(
        &[
            "validate-log",
            &path,
            "--preset",
            "quick",
            "--scenarios",
            &scenario_dir.to_string_lossy(),
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("DIVERGES at event 2 (line 3, a stage b1 (order-17.eligible = true)): the configuration quick does not explore it"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("domain.writes has no shape"),
        "{}",
        stdout(&out)
    );
    // Without --preset the inferred domain has the shape, and the same log diverges one event
    // later, where the protocol quarantines the write for evidence.
    let out = memtx(
        &[
            "validate-log",
            &path,
            "--scenarios",
            &scenario_dir.to_string_lossy(),
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("DIVERGES at event 3 (line 4, a commit)"),
        "{}",
        stdout(&out)
    );
    // Two agents do not fit quick's one.
    let two = format!(
        "{log}\n{}",
        r#"{"event": "begin", "agent": "b", "tier": "medium", "isolation": "committed-read"}"#
    );
    let path = write(&dir, "two.jsonl", &two);
    let out = memtx(&["validate-log", &path, "--preset", "quick"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the run has 2 agents; the configuration quick has 1"),
        "{}",
        stderr(&out)
    );
    let out = memtx(&["validate-log", &path, "--preset", "tiny"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1);
}
