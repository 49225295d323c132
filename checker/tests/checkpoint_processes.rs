//! Checkpoints over timely workers and processes: a run over processes writes one part per
//! worker at a level boundary, and any checkpoint (parts or the single file of a run on
//! threads) resumes on any number of threads, workers or processes with the result of the
//! uninterrupted run. The library first, then the `memtx` binary (`--local N`, SIGKILL of the
//! supervising process and of one member process, missing and foreign parts).

mod binary_support;

use binary_support::{await_ended, children, essentials, memtx, scratch, sigkill};
use memtx_checker::bench::two_phase_commit::{locality, TwoPhaseSys};
use memtx_checker::explore::{
    explore, explore_timely, load, CheckpointPlan, Cluster, ExploreOptions, ExploreReport,
    PackedState, StopReason,
};
use stateright::Model;
use std::fmt::Debug;
use std::hash::Hash;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    for (g, w) in got.properties.iter().zip(&want.properties) {
        assert_eq!(g.discovery, w.discovery, "discovery of {}, {what}", w.name);
    }
}

/// Where a run goes: threads of the fast engine, or timely workers in this process.
#[derive(Clone, Copy, Debug)]
enum On {
    Threads(usize),
    Workers(usize),
}

fn run<M>(model: &M, options: &ExploreOptions<'_, M>, on: On) -> ExploreReport<M::State, M::Action>
where
    M: Model + Sync,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState + Debug,
    M::Action: Clone + Debug + Send,
{
    match on {
        On::Threads(n) => explore(model, &options.clone().threads(n)).expect("explores"),
        On::Workers(n) => explore_timely(model, options, &Cluster::InProcess(n))
            .expect("explores")
            .expect("worker 0's report"),
    }
}

/// For each stop (a state count): a run `saved_on` that checkpoints at every level boundary
/// and is stopped mid-level by `max_states`, resumed on each of `resumed_on`; every resumed
/// run must equal the uninterrupted one.
fn resume_across<M>(
    model: &M,
    options: &dyn Fn() -> ExploreOptions<'static, M>,
    stops: &[u64],
    saved_on: On,
    resumed_on: &[On],
    name: &str,
) where
    M: Model + Sync,
    M::State: Hash + Clone + Eq + Send + Sync + PackedState + Debug,
    M::Action: Clone + Debug + Send + PartialEq,
{
    let reference = run(model, &options(), On::Threads(1));
    assert!(reference.is_complete());
    for &stop in stops {
        let dir = scratch(&format!("{name}-{stop}"));
        let plan = CheckpointPlan {
            dir: dir.to_path_buf(),
            every: Duration::ZERO,
            run: serde_json::json!({"test": name}),
        };
        let cut = run(
            model,
            &options().max_states(stop).checkpoint(&plan),
            saved_on,
        );
        let what = format!("{name}: stopped at {stop} on {saved_on:?}");
        assert_eq!(cut.stopped_early, Some(StopReason::MaxStates), "{what}");
        assert!(cut.checkpoints_written > 0, "{what}");
        assert_eq!(cut.checkpoint_error, None, "{what}");
        if let On::Workers(n) = saved_on {
            let parts = std::fs::read_dir(&dir)
                .expect("the checkpoint directory")
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().contains("-part-"))
                .count();
            assert_eq!(
                parts, n,
                "one part per worker, only the last checkpoint's: {what}"
            );
        }
        let saved = load(&dir).expect("the checkpoint reads back");
        assert!(saved.unique_states() < reference.unique_states);
        assert_eq!(
            saved.states_per_depth(),
            &reference.states_per_depth[..saved.level() + 1],
            "levels saved, {what}"
        );
        for &on in resumed_on {
            let resumed = run(model, &options().resume_from(&saved), on);
            assert_eq!(resumed.resumed_from_level, Some(saved.level()), "{what}");
            assert_same(&reference, &resumed, &format!("{what}, resumed on {on:?}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn two_phase_commit_saved_over_workers_resumes_on_threads_and_other_worker_counts() {
    let model = TwoPhaseSys::new(5).expect("5 RMs");
    let options = || ExploreOptions::new().locality(locality);
    let total = run(&model, &options(), On::Threads(1)).unique_states;
    let stops: Vec<u64> = [10, 50, 90].iter().map(|p| total * p / 100).collect();
    let everywhere = [
        On::Threads(1),
        On::Threads(2),
        On::Workers(1),
        On::Workers(3),
    ];
    resume_across(
        &model,
        &options,
        &stops,
        On::Workers(2),
        &everywhere,
        "2pc-w2",
    );
    // A checkpoint of a run on threads resumes over workers.
    resume_across(
        &model,
        &options,
        &stops[1..2],
        On::Threads(2),
        &[On::Workers(2), On::Workers(3)],
        "2pc-t2",
    );
}

#[test]
fn a_violation_saved_over_workers_resumes_with_the_same_counterexample_and_coverage() {
    use memtx_checker::engine::memtx_hooks;
    use memtx_model::MemTx;
    let variant = memtx_checker::setup::variant("missed-cascade").expect("a variant");
    let cfg = memtx_checker::setup::config("quick", &Default::default(), variant).expect("quick");
    let model = MemTx::new(cfg);
    let hooks = memtx_hooks(false);
    let options = move || {
        ExploreOptions::new()
            .next_state_into(hooks.next_state_into)
            .locality(hooks.locality)
            .coverage(hooks.coverage)
    };
    let reference = run(&model, &options(), On::Threads(1));
    assert!(reference.properties.iter().any(|p| p.discovery.is_some()));
    let total = reference.unique_states;
    let stops: Vec<u64> = [30, 80].iter().map(|p| total * p / 100).collect();
    resume_across(
        &model,
        &options,
        &stops,
        On::Workers(3),
        &[On::Threads(2), On::Workers(2)],
        "quick-mc-w3",
    );
}

// ---- through the binary ------------------------------------------------------------------

/// The level of the newest complete checkpoint over `parts` processes in `dir`, from the
/// part files' names.
fn parts_level(dir: &Path, parts: usize) -> Option<u64> {
    let suffix = format!("-of-{parts:04}.memtx");
    let mut counts = std::collections::BTreeMap::<u64, usize>::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('L') && name.ends_with(&suffix) {
            if let Ok(level) = name[1..5].parse::<u64>() {
                *counts.entry(level).or_default() += 1;
            }
        }
    }
    counts
        .into_iter()
        .filter(|&(_, n)| n == parts)
        .map(|(level, _)| level)
        .next_back()
}

/// The children of `pid` whose command line contains `has`.
fn children_with(pid: u32, has: &str) -> Vec<u32> {
    children(pid)
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains(has))
        .map(|(p, _)| p)
        .collect()
}

/// Who is killed in a `--local 2` run.
#[derive(Clone, Copy, Debug)]
enum Victim {
    /// The supervising process (`--local`): its members see their standard input close and
    /// stop, as if the machine had gone down.
    Supervisor,
    /// Process 1 of the run: process 0 loses its connection and the run ends (exit 2).
    Member,
}

/// When the victim is killed.
#[derive(Clone, Copy, Debug)]
enum When {
    /// Once a checkpoint of at least this level is complete.
    AtLevel(u64),
    /// While a part is being written (its temporary file exists), after a first checkpoint.
    DuringWrite,
}

/// Whether some checkpoint part is being written in `dir`.
fn writing(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
    })
}

/// Starts `memtx check ARGS --local 2 --checkpoint ck --checkpoint-every 0s --json` in
/// `dir`, SIGKILLs `victim` at `when`, and waits until every process of the run has ended.
/// Returns whether the kill landed before the run finished.
fn local_check_and_kill(dir: &Path, args: &[&str], when: When, victim: Victim) -> bool {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[
        "--local",
        "2",
        "--checkpoint",
        "ck",
        "--checkpoint-every",
        "0s",
        "--json",
    ]);
    // A supervisor killed by SIGKILL cannot remove its hosts file: TMPDIR puts it in the
    // test's scratch directory, removed with it.
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(&all)
        .current_dir(dir)
        .env("CI", "true")
        .env("TMPDIR", dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memtx starts");
    let ck = dir.join("ck");
    let started = Instant::now();
    let mut members = Vec::new();
    let killed = loop {
        if child.try_wait().expect("wait").is_some() {
            break false;
        }
        if members.len() < 2 {
            members = children_with(child.id(), "--processes");
        }
        let due = match when {
            When::AtLevel(level) => parts_level(&ck, 2).is_some_and(|l| l >= level),
            When::DuringWrite => parts_level(&ck, 2).is_some() && writing(&ck),
        };
        if members.len() == 2 && due {
            break match victim {
                Victim::Supervisor => sigkill(child.id()),
                Victim::Member => {
                    let one = children_with(child.id(), "--process 1");
                    assert_eq!(one.len(), 1, "process 1 of the run");
                    sigkill(one[0])
                }
            };
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the check ran too long"
        );
        std::thread::sleep(Duration::from_micros(300));
    };
    let out = child.wait_with_output().expect("wait");
    if killed {
        assert!(!out.status.success(), "a killed run does not exit 0");
        if let Victim::Member = victim {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            // With --json the preamble goes to stderr; the error is its last line.
            let last = stderr.lines().last().unwrap_or("");
            assert!(
                last.starts_with("memtx: ") && last.contains("process"),
                "a lost process is one line: {stderr}"
            );
        }
    }
    await_ended(
        &members,
        Duration::from_secs(30),
        &format!("the run's processes did not stop after the {victim:?} was killed"),
    );
    assert!(
        parts_level(&ck, 2).is_some(),
        "no checkpoint after killing the {victim:?}"
    );
    killed
}

/// Copies the checkpoint directory `from` to `to` (each resume gets its own copy: a resumed
/// run writes its own checkpoints into the directory it resumes).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn a_killed_local_run_resumes_on_processes_and_threads_to_the_uninterrupted_result() {
    let dir = scratch("local-kill");
    let reference = memtx(
        &["check", "--preset", "quick", "--json", "--traces", "t0"],
        &dir,
    );
    assert_eq!(reference.status.code(), Some(0));
    let want = essentials(&reference);
    let mut landed = 0;
    for (n, (when, victim)) in [
        (When::AtLevel(3), Victim::Supervisor),
        (When::AtLevel(8), Victim::Member),
        (When::DuringWrite, Victim::Member),
        (When::AtLevel(12), Victim::Supervisor),
    ]
    .into_iter()
    .enumerate()
    {
        let run = dir.join(format!("run{n}"));
        std::fs::create_dir_all(&run).unwrap();
        if local_check_and_kill(&run, &["--preset", "quick", "--threads", "1"], when, victim) {
            landed += 1;
        }
        let saved = parts_level(&run.join("ck"), 2).expect("a checkpoint");
        for (k, placement) in [
            &["--local", "2", "--threads", "1"][..],
            &["--local", "3", "--threads", "1"],
            &["--threads", "2"],
        ]
        .into_iter()
        .enumerate()
        {
            let copy = format!("ck{k}");
            copy_dir(&run.join("ck"), &run.join(&copy));
            let mut args = vec!["resume", copy.as_str(), "--json", "--traces", "tr"];
            args.extend_from_slice(placement);
            let out = memtx(&args, &run);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                essentials(&out),
                want,
                "killed the {victim:?} at {when:?}, resumed with {placement:?}"
            );
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["resumed_from_level"].as_u64(), Some(saved));
        }
    }
    assert!(landed > 0, "no kill landed before the run finished");
}

/// The level in the header of the checkpoint file of a run on threads in `dir`.
fn file_level(dir: &Path) -> Option<u64> {
    let text = std::fs::read(dir.join("checkpoint.memtx")).ok()?;
    let end = text.iter().position(|&b| b == b'\n')?;
    let header: serde_json::Value = serde_json::from_slice(&text[..end]).ok()?;
    header["level"].as_u64()
}

#[test]
fn a_checkpoint_on_threads_resumes_over_local_processes_with_the_same_counterexample() {
    let dir = scratch("threads-to-local");
    let common = ["--preset", "quick", "--variant", "missed-cascade", "--json"];
    let mut check = vec!["check"];
    check.extend_from_slice(&common);
    check.extend_from_slice(&["--traces", "t0"]);
    let reference = memtx(&check, &dir);
    assert_eq!(
        reference.status.code(),
        Some(1),
        "missed-cascade fails on quick"
    );
    let want = essentials(&reference);
    // On two threads, killed once a checkpoint of level 3 or later exists (or finished).
    let mut saving = vec!["check"];
    saving.extend_from_slice(&common);
    saving.extend_from_slice(&["--threads", "2", "--traces", "t1", "--checkpoint", "ck"]);
    saving.extend_from_slice(&["--checkpoint-every", "0s"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(&saving)
        .current_dir(&dir)
        .env("CI", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("memtx starts");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if file_level(&dir.join("ck")).is_some_and(|l| l >= 3) {
            sigkill(child.id());
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the check ran too long"
        );
        std::thread::sleep(Duration::from_micros(300));
    }
    let _ = child.wait();
    assert!(
        file_level(&dir.join("ck")).is_some(),
        "a checkpoint on threads"
    );
    let out = memtx(
        &[
            "resume",
            "ck",
            "--local",
            "2",
            "--threads",
            "1",
            "--json",
            "--traces",
            "t2",
            "--report",
            "rep",
            "--name",
            "resumed",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(essentials(&out), want, "resumed over two processes");
    // The report says where it ran and that it was resumed.
    let md = std::fs::read_to_string(dir.join("rep").join("resumed.md")).expect("a report");
    assert!(md.contains("| engine | timely |"), "{md}");
    assert!(
        md.contains("| processes | 2 process(es) x 1 worker(s); peak memory per process "),
        "{md}"
    );
    assert!(
        md.contains("| resumed | from a checkpoint at level "),
        "{md}"
    );
    let trace = |traces: &str| -> serde_json::Value {
        let file = dir.join(traces).join("quick/missed-cascade-I2.trace.json");
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).expect("a trace")).expect("JSON");
        v.as_object_mut().expect("an object").remove("command");
        v
    };
    assert_eq!(
        trace("t2"),
        trace("t0"),
        "the counterexample, resumed over processes"
    );
    // The checkpoints the resumed run wrote (if it had a level boundary to write one at)
    // are parts, and the file of the run on threads is gone with the first of them.
    assert_ne!(
        parts_level(&dir.join("ck"), 2).is_some(),
        dir.join("ck").join("checkpoint.memtx").exists(),
        "one kind of checkpoint in the directory"
    );
}

#[test]
fn missing_and_foreign_parts_are_one_line_errors_with_exit_2() {
    let root = scratch("parts-damaged");
    for (name, variant) in [("a", "memtx"), ("b", "missed-cascade")] {
        let out = memtx(
            &[
                "check",
                "--preset",
                "quick",
                "--variant",
                variant,
                "--local",
                "2",
                "--threads",
                "1",
                "--checkpoint",
                name,
                "--checkpoint-every",
                "0s",
                "--max-states",
                "200000",
                "--json",
                "--traces",
                "t",
            ],
            &root,
        );
        assert!(
            matches!(out.status.code(), Some(1) | Some(3)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let level_a = parts_level(&root.join("a"), 2).expect("a checkpoint of a");
    let level_b = parts_level(&root.join("b"), 2).expect("a checkpoint of b");
    let part = |dir: &str, level: u64, p: usize| {
        root.join(dir)
            .join(format!("L{level:04}-part-{p:04}-of-0002.memtx"))
    };
    // One part missing.
    std::fs::create_dir_all(root.join("missing")).unwrap();
    std::fs::copy(part("a", level_a, 0), part("missing", level_a, 0)).unwrap();
    // Part 1 of another run, named as this run's.
    std::fs::create_dir_all(root.join("foreign")).unwrap();
    std::fs::copy(part("a", level_a, 0), part("foreign", level_a, 0)).unwrap();
    std::fs::copy(part("b", level_b, 1), part("foreign", level_a, 1)).unwrap();
    for (dir, says) in [
        ("missing", "incomplete checkpoint over processes"),
        ("foreign", "do not belong together"),
        ("nothing", "no checkpoint"),
    ] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        let out = memtx(&["resume", dir], &root);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{dir}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{dir}: {stderr}");
        assert!(
            stderr.contains(says),
            "{dir}: {stderr:?} should say {says:?}"
        );
    }
}

#[test]
fn the_processes_of_a_local_run_stop_at_once_when_its_supervisor_is_killed() {
    let dir = scratch("orphans");
    // `paper` runs for many seconds: the processes must stop because their supervisor is
    // gone, not because the run ended.
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args([
            "check",
            "--preset",
            "paper",
            "--threads",
            "1",
            "--local",
            "2",
        ])
        .args(["--checkpoint", "ck", "--checkpoint-every", "0s", "--json"])
        .env("TMPDIR", &*dir) // the hosts file of a supervisor killed by SIGKILL
        .current_dir(&dir)
        .env("CI", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("memtx starts");
    let started = Instant::now();
    let members = loop {
        let members = children_with(child.id(), "--processes");
        if members.len() == 2 && parts_level(&dir.join("ck"), 2).is_some_and(|l| l >= 3) {
            break members;
        }
        assert!(
            child.try_wait().expect("wait").is_none(),
            "paper ended too soon"
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no checkpoint of level 3"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(sigkill(child.id()));
    let _ = child.wait();
    await_ended(
        &members,
        Duration::from_secs(5),
        "the processes ran on after their supervisor was killed",
    );
}
