//! Checkpoint and resume: a run resumed from a checkpoint taken at any level boundary, on any
//! thread count, gives what the uninterrupted run gives (counts, levels, verdicts, the
//! discoveries' paths, coverage tallies). Library-level tests here; the `memtx` binary
//! (SIGKILL, `memtx resume`, damaged files) below them.

mod binary_support;

use binary_support::{essentials, scratch};
use memtx_checker::bench::two_phase_commit::{canonicalize, locality, TwoPhaseSys};
use memtx_checker::explore::{
    explore, load, CheckpointPlan, ExploreOptions, ExploreReport, PackedState, StopReason,
};
use stateright::Model;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

/// Everything a resumed run must reproduce.
fn assert_same<S: PartialEq + Debug, A: PartialEq + Debug>(
    want: &ExploreReport<S, A>,
    got: &ExploreReport<S, A>,
    what: &str,
) {
    assert_eq!(got.unique_states, want.unique_states, "unique, {what}");
    assert_eq!(got.total_states, want.total_states, "total, {what}");
    assert_eq!(got.max_depth, want.max_depth, "depth, {what}");
    assert_eq!(
        got.states_per_depth, want.states_per_depth,
        "levels, {what}"
    );
    assert_eq!(got.stopped_early, want.stopped_early, "stop, {what}");
    assert_eq!(got.coverage, want.coverage, "coverage, {what}");
    assert_eq!(got.properties.len(), want.properties.len());
    for (g, w) in got.properties.iter().zip(&want.properties) {
        assert_eq!(g.discovery, w.discovery, "discovery of {}, {what}", w.name);
    }
}

/// Runs `model` uninterrupted, then, for each of `stops` (a state count), a run on
/// `save_threads` threads that checkpoints at every level boundary and is stopped by
/// `max_states` mid-level; resumes each checkpoint on 1, 2 and 3 threads and compares. Returns
/// the levels the checkpoints were taken at.
fn resume_everywhere<M>(
    model: &M,
    options: &dyn Fn(usize) -> ExploreOptions<'static, M>,
    stops: &[u64],
    save_threads: usize,
    name: &str,
) -> BTreeSet<usize>
where
    M: Model + Sync,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState + Debug,
    M::Action: Clone + Debug + PartialEq,
{
    let reference = explore(model, &options(1)).expect("explores");
    assert!(reference.is_complete());
    assert_eq!(reference.resumed_from_level, None);
    let mut levels = BTreeSet::new();
    for &stop in stops {
        let dir = scratch(&format!("{name}-{stop}"));
        let plan = CheckpointPlan {
            dir: dir.to_path_buf(),
            every: Duration::ZERO,
            run: serde_json::json!({"test": name}),
        };
        let cut = explore(
            model,
            &options(save_threads).max_states(stop).checkpoint(&plan),
        )
        .expect("explores");
        assert_eq!(
            cut.stopped_early,
            Some(StopReason::MaxStates),
            "{name} {stop}"
        );
        assert!(cut.checkpoints_written > 0, "{name} {stop}");
        assert_eq!(cut.checkpoint_error, None);
        let saved = load(&dir).expect("the checkpoint reads back");
        assert_eq!(saved.run(), &serde_json::json!({"test": name}));
        assert!(saved.unique_states() < reference.unique_states);
        assert_eq!(
            saved.states_per_depth(),
            &reference.states_per_depth[..saved.level() + 1],
            "levels saved, {name} {stop}"
        );
        levels.insert(saved.level());
        for threads in [1, 2, 3] {
            let resumed = explore(model, &options(threads).resume_from(&saved)).expect("resumes");
            assert_eq!(resumed.resumed_from_level, Some(saved.level()));
            assert_same(
                &reference,
                &resumed,
                &format!("{name}: stopped at {stop} on {save_threads}, resumed on {threads}"),
            );
        }
        // A resumed run checkpoints too, and a checkpoint of a resumed run resumes.
        let again = scratch(&format!("{name}-{stop}-again"));
        let plan2 = CheckpointPlan {
            dir: again.to_path_buf(),
            every: Duration::ZERO,
            run: serde_json::json!({"test": name}),
        };
        let second_stop = (saved.unique_states() + reference.unique_states) / 2;
        let cut2 = explore(
            model,
            &options(2)
                .resume_from(&saved)
                .checkpoint(&plan2)
                .max_states(second_stop),
        )
        .expect("resumes");
        if cut2.checkpoints_written > 0 {
            let saved2 = load(&again).expect("reads back");
            assert!(saved2.level() >= saved.level());
            let resumed = explore(model, &options(1).resume_from(&saved2)).expect("resumes");
            assert_same(&reference, &resumed, &format!("{name}: resumed twice"));
        }
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&again);
    }
    levels
}

#[test]
fn two_phase_commit_resumes_identically_from_every_level_on_any_thread_count() {
    let model = TwoPhaseSys::new(5).expect("5 RMs");
    let options = |threads: usize| ExploreOptions::new().threads(threads).locality(locality);
    let total = explore(&model, &options(1))
        .expect("explores")
        .unique_states;
    let stops: Vec<u64> = [5, 20, 40, 60, 80, 95]
        .iter()
        .map(|p| total * p / 100)
        .collect();
    let levels = resume_everywhere(&model, &options, &stops, 2, "2pc");
    assert!(
        levels.len() >= 4,
        "checkpoints at too few levels: {levels:?}"
    );
    // The same with symmetry, and saved on three threads without a locality key.
    let reduced = |threads: usize| {
        ExploreOptions::new()
            .threads(threads)
            .symmetry(|_, s| canonicalize(s))
    };
    let total = explore(&model, &reduced(1))
        .expect("explores")
        .unique_states;
    let stops: Vec<u64> = [30, 70].iter().map(|p| total * p / 100).collect();
    resume_everywhere(&model, &reduced, &stops, 3, "2pc-sym");
}

#[test]
fn memtx_quick_with_a_violation_resumes_with_the_same_counterexample_and_coverage() {
    use memtx_checker::engine::memtx_hooks;
    use memtx_model::MemTx;
    let variant = memtx_checker::setup::variant("missed-cascade").expect("a variant");
    let cfg = memtx_checker::setup::config("quick", &Default::default(), variant).expect("quick");
    let model = MemTx::new(cfg);
    let hooks = memtx_hooks(false);
    let options = move |threads: usize| {
        ExploreOptions::new()
            .threads(threads)
            .next_state_into(hooks.next_state_into)
            .locality(hooks.locality)
            .coverage(hooks.coverage)
    };
    let reference = explore(&model, &options(2)).expect("explores");
    assert!(
        reference.properties.iter().any(|p| p.discovery.is_some()),
        "missed-cascade has a counterexample on quick"
    );
    assert!(reference.coverage.as_ref().is_some_and(|c| !c.is_empty()));
    let total = reference.unique_states;
    let stops: Vec<u64> = [10, 50, 90].iter().map(|p| total * p / 100).collect();
    let levels = resume_everywhere(&model, &options, &stops, 2, "quick-mc");
    assert!(levels.len() >= 2, "{levels:?}");
}

#[test]
fn exact_mode_refuses_checkpoints() {
    let model = TwoPhaseSys::new(3).expect("3 RMs");
    let dir = scratch("exact");
    let plan = CheckpointPlan {
        dir: dir.to_path_buf(),
        every: Duration::ZERO,
        run: serde_json::Value::Null,
    };
    let err = explore(&model, &ExploreOptions::new().exact(true).checkpoint(&plan));
    assert!(err.is_err());
}

// ---- through the binary ------------------------------------------------------------------

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

fn memtx(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(args)
        .current_dir(dir)
        .env("CI", "true")
        .output()
        .expect("the memtx binary runs")
}

/// The level of the checkpoint in `dir`, read from its header line, if there is one.
fn saved_level(dir: &Path) -> Option<u64> {
    let text = std::fs::read(dir.join("checkpoint.memtx")).ok()?;
    let end = text.iter().position(|&b| b == b'\n')?;
    let header: serde_json::Value = serde_json::from_slice(&text[..end]).ok()?;
    header["level"].as_u64()
}

fn writing(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
    })
}

/// When to SIGKILL the child.
#[derive(Clone, Copy, Debug)]
enum Kill {
    /// Once a checkpoint of at least this level exists.
    AtLevel(u64),
    /// As soon as a checkpoint is being written (its temporary file exists), after the first.
    DuringWrite,
}

/// Starts `memtx check ARGS --checkpoint ck --checkpoint-every 0s` in `dir` and SIGKILLs it
/// at `when`; returns whether the kill landed before the child finished.
fn check_and_kill(dir: &Path, args: &[&str], when: Kill) -> bool {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--checkpoint", "ck", "--checkpoint-every", "0s", "--json"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(&all)
        .current_dir(dir)
        .env("CI", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("memtx starts");
    let ck = dir.join("ck");
    let started = Instant::now();
    let killed = loop {
        if child.try_wait().expect("wait").is_some() {
            break false;
        }
        let due = match when {
            Kill::AtLevel(level) => saved_level(&ck).is_some_and(|l| l >= level),
            Kill::DuringWrite => saved_level(&ck).is_some() && writing(&ck),
        };
        if due {
            let ok = Command::new("kill")
                .args(["-KILL", &child.id().to_string()])
                .status()
                .expect("kill runs")
                .success();
            break ok;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the check ran too long"
        );
        std::thread::sleep(Duration::from_micros(200));
    };
    let status = child.wait().expect("wait");
    if killed {
        assert!(!status.success(), "a killed child does not exit 0");
    }
    assert!(saved_level(&ck).is_some(), "no checkpoint after {when:?}");
    killed
}

#[test]
fn a_killed_check_resumes_to_the_uninterrupted_result_on_one_and_two_threads() {
    let dir = scratch("kill");
    let reference = memtx(
        &dir,
        &["check", "--preset", "quick", "--json", "--traces", "t0"],
    );
    assert_eq!(reference.status.code(), Some(0));
    let want = essentials(&reference);
    let mut landed = 0;
    for (n, when) in [Kill::AtLevel(2), Kill::DuringWrite, Kill::AtLevel(9)]
        .into_iter()
        .enumerate()
    {
        let run = dir.join(format!("run{n}"));
        std::fs::create_dir_all(&run).unwrap();
        if check_and_kill(&run, &["--preset", "quick", "--threads", "1"], when) {
            landed += 1;
        }
        let level = saved_level(&run.join("ck")).expect("a checkpoint");
        for threads in ["1", "2"] {
            let out = memtx(&run, &["resume", "ck", "--threads", threads, "--json"]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                essentials(&out),
                want,
                "killed at {when:?}, resumed on {threads}"
            );
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert!(v["resumed_from_level"].as_u64().is_some_and(|l| l >= level));
        }
    }
    assert!(landed > 0, "no kill landed before the child finished");
}

#[test]
fn a_killed_violating_check_resumes_with_the_same_counterexample_trace() {
    let dir = scratch("kill-violation");
    let args = ["--preset", "quick", "--variant", "missed-cascade"];
    let mut check = vec!["check"];
    check.extend_from_slice(&args);
    check.extend_from_slice(&["--json", "--traces", "t0"]);
    let reference = memtx(&dir, &check);
    assert_eq!(
        reference.status.code(),
        Some(1),
        "missed-cascade fails on quick"
    );
    let want = essentials(&reference);
    let mut with_threads = args.to_vec();
    with_threads.extend_from_slice(&["--threads", "2"]);
    check_and_kill(&dir, &with_threads, Kill::AtLevel(4));
    let trace = |traces: &str| -> serde_json::Value {
        let file = dir.join(traces).join("quick/missed-cascade-I2.trace.json");
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).expect("a trace")).expect("JSON");
        // The command that found it differs (--checkpoint); everything else is the same.
        v.as_object_mut().expect("an object").remove("command");
        v
    };
    let mut texts = Vec::new();
    for threads in ["1", "2"] {
        let traces = format!("t{threads}");
        let out = memtx(
            &dir,
            &[
                "resume",
                "ck",
                "--threads",
                threads,
                "--json",
                "--traces",
                &traces,
            ],
        );
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(essentials(&out), want, "resumed on {threads}");
        assert_eq!(
            trace(&traces),
            trace("t0"),
            "the counterexample, resumed on {threads}"
        );
        texts.push(
            std::fs::read(dir.join(&traces).join("quick/missed-cascade-I2.trace.json")).unwrap(),
        );
    }
    assert_eq!(
        texts[0], texts[1],
        "the trace files of both resumes are byte-identical"
    );
}

/// Runs `memtx resume` on `dir` and checks the one-line error and exit code 2.
fn refused(root: &Path, dir: &str, says: &str) {
    let out = memtx(root, &["resume", dir]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{dir}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{dir}: {stderr}");
    assert!(stderr.starts_with("memtx: "), "{stderr}");
    assert!(
        stderr.contains(says),
        "{dir}: {stderr:?} should say {says:?}"
    );
}

#[test]
fn damaged_checkpoints_and_bad_options_are_one_line_errors_with_exit_2() {
    let root = scratch("damaged");
    let out = memtx(
        &root,
        &[
            "check",
            "--preset",
            "quick",
            "--checkpoint",
            "good",
            "--checkpoint-every",
            "0s",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let good = std::fs::read(root.join("good/checkpoint.memtx")).expect("a checkpoint");
    let header_end = good
        .iter()
        .position(|&b| b == b'\n')
        .expect("a header line");
    let variants: Vec<(&str, Vec<u8>, &str)> = {
        let mut flipped = good.clone();
        let at = header_end + (good.len() - header_end) / 2;
        flipped[at] ^= 0x10;
        let mut last = good.clone();
        let end = last.len() - 1;
        last[end] ^= 1;
        let header = String::from_utf8_lossy(&good[..header_end]).to_string();
        let rest = &good[header_end..];
        let with_header = |h: String| [h.as_bytes(), rest].concat();
        let version = header.replace("\"version\":1", "\"version\":99");
        assert_ne!(version, header);
        let tool = header.replace("\"tool\":\"memtx ", "\"tool\":\"memtx 0.0.0-other ");
        assert_ne!(tool, header);
        vec![
            ("truncated", good[..good.len() / 2].to_vec(), "damaged"),
            ("header-only", good[..header_end + 1].to_vec(), "damaged"),
            ("flipped", flipped, "damaged"),
            ("checksum", last, "damaged"),
            ("version", with_header(version), "format version 99"),
            ("tool", with_header(tool), "written by memtx 0.0.0-other"),
            ("empty", Vec::new(), "damaged"),
            (
                "not-json",
                b"hello\nworld".to_vec(),
                "not a memtx checkpoint",
            ),
        ]
    };
    for (name, bytes, says) in variants {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join("checkpoint.memtx"), bytes).unwrap();
        refused(&root, name, says);
    }
    refused(&root, "missing", "there is no checkpoint in");
    // The intact one still resumes.
    let out = memtx(&root, &["resume", "good", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    // Options that cannot be checkpointed.
    for args in [
        &["check", "--preset", "quick", "--checkpoint", "x", "--exact"][..],
        &[
            "check",
            "--preset",
            "quick",
            "--checkpoint",
            "x",
            "--engine",
            "stateright",
        ],
        &[
            "check",
            "--preset",
            "quick",
            "--checkpoint",
            "x",
            "--checkpoint-every",
            "5x",
        ],
        &["check", "--preset", "quick", "--checkpoint-every", "5m"],
    ] {
        let out = memtx(&root, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
}

#[test]
fn the_first_checkpoint_comes_after_a_second_whatever_the_interval() {
    let dir = scratch("first-checkpoint");
    // The default interval is 5 minutes; `paper` runs for about half a minute.
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(["check", "--preset", "paper", "--checkpoint", "ck", "--json"])
        .current_dir(&dir)
        .env("CI", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("memtx starts");
    let started = Instant::now();
    let level = loop {
        if let Some(level) = saved_level(&dir.join("ck")) {
            break level;
        }
        assert!(
            child.try_wait().expect("wait").is_none(),
            "paper ended without a checkpoint"
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no checkpoint within 15 s with the default interval"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(level >= 1, "a checkpoint holds complete levels: {level}");
}

/// A checkpoint whose header was edited and whose checksum was recomputed (the checksum
/// catches damage, not edits) no longer resumes as another configuration: `agents` 1 → 2, the
/// number of values 2 → 1 and the variant memtx → no-cascade each change what the first levels
/// reach, and the resume is refused in one line (it reported a mixed result as the
/// uninterrupted run's, or ended in `[memtx internal bug] could not replay the discovery path`).
#[test]
fn an_edited_checkpoint_with_a_recomputed_checksum_is_refused() {
    use memtx_checker::explore::checkpoint::Checksum;
    let root = scratch("edited");
    let out = memtx(
        &root,
        &[
            "check",
            "--preset",
            "quick",
            "--checkpoint",
            "good",
            "--checkpoint-every",
            "0s",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let good = std::fs::read(root.join("good/checkpoint.memtx")).expect("a checkpoint");
    let header_end = good.iter().position(|&b| b == b'\n').unwrap();
    let header = String::from_utf8_lossy(&good[..header_end]).to_string();
    for (name, from, to) in [
        ("agents", "\"agents\":1", "\"agents\":2"),
        ("values", "\"values\":2", "\"values\":1"),
        (
            "variant",
            "\"variant\":\"memtx\"",
            "\"variant\":\"no-cascade\"",
        ),
    ] {
        let edited = header.replace(from, to);
        assert_ne!(edited, header, "{name}: the header holds {from}");
        let mut bytes = [edited.as_bytes(), &good[header_end..good.len() - 8]].concat();
        let mut sum = Checksum::default();
        sum.update(&bytes);
        bytes.extend_from_slice(&sum.finish().to_le_bytes());
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join("checkpoint.memtx"), bytes).unwrap();
        refused(&root, name, "does not fit this model");
    }
    // The checksum recomputation is right: the unedited header, re-summed, still resumes.
    let mut bytes = good[..good.len() - 8].to_vec();
    let mut sum = Checksum::default();
    sum.update(&bytes);
    bytes.extend_from_slice(&sum.finish().to_le_bytes());
    assert_eq!(
        bytes, good,
        "the checksum is the last 8 bytes, little-endian"
    );
}
