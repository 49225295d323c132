//! Interrupting `memtx check`: the first SIGINT or SIGTERM stops the run gracefully (partial
//! summary, reports marked incomplete, no temporary file left, exit 130); a second SIGINT
//! quits at once.
//!
//! Each test starts a child `memtx check --preset paper` (34 M states: long enough to be
//! interrupted in the middle of exploring on any machine), waits until it has printed what it
//! will cover (so the signal handler is installed and exploration is under way), and signals
//! it. The bound on how long the child may take to stop is generous (a liveness check, not a
//! speed target): the explorer polls the interrupt every 256 states.

mod binary_support;
use binary_support::*;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child `memtx check --preset paper`, past its preamble, with the rest of its stdout read
/// on a thread (so a full pipe cannot stall it).
struct Run {
    child: Child,
    preamble: String,
    rest: std::thread::JoinHandle<String>,
}

/// Starts `memtx check --preset paper` with reports and traces under `dir`, and returns once
/// it has printed its preamble (the last line of which starts with "  exhaustive will mean")
/// and explored for a moment.
fn start_paper_check(dir: &Path) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args([
            "check", "--preset", "paper", "--report", "rep", "--traces", "tr",
        ])
        .current_dir(dir)
        .env("CI", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the memtx binary starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut preamble = String::new();
    loop {
        let mut line = String::new();
        let n = stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "memtx ended before its preamble: {preamble}");
        preamble.push_str(&line);
        if line.starts_with("  exhaustive will mean") {
            break;
        }
    }
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    // Let it explore for a moment: the interrupt must land mid-run, not before the start.
    std::thread::sleep(Duration::from_millis(700));
    Run {
        child,
        preamble,
        rest,
    }
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .args([format!("-{name}"), child.id().to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill -{name} failed");
}

/// Waits (at most 60 s) for the child; returns its exit code, stdout and stderr.
fn finish(mut child: Child, started: Instant) -> (Option<i32>, String, Duration) {
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let deadline = started + Duration::from_secs(60);
        loop {
            if let Some(_status) = child.try_wait().unwrap() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "memtx did not stop within 60 s of the signal"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        e.read_to_string(&mut stderr).unwrap();
    }
    let took = started.elapsed();
    let status = child.wait().unwrap();
    (status.code(), stderr, took)
}

/// Every file under `dir`, recursively, as paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

fn interrupted_run_reports_what_it_found(signal_name: &str) {
    let dir = scratch(signal_name);
    let run = start_paper_check(&dir);
    let started = Instant::now();
    signal(&run.child, signal_name);
    let (code, stderr, _took) = finish(run.child, started);
    let _ = run.rest.join();
    assert_eq!(
        code,
        Some(130),
        "exit code after {signal_name}; stderr: {stderr}"
    );
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    // The report says incomplete, stopped by the interrupt, with the partial counts.
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("rep/paper-memtx.json")).expect("the JSON report"),
    )
    .expect("the JSON report parses");
    assert_eq!(json["result"], "incomplete", "{json}");
    assert_eq!(json["complete"], false);
    let reason = json["coverage"]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("interrupt"), "{reason}");
    let unique = json["unique_states"].as_u64().unwrap();
    assert!(
        unique > 0 && unique < 33_915_693,
        "a partial count, not the whole of paper: {unique}"
    );
    let md = std::fs::read_to_string(dir.join("rep/paper-memtx.md")).unwrap();
    assert!(md.contains("INCOMPLETE"), "{md}");

    // Nothing but complete files is left.
    let left = files_under(&dir);
    assert!(
        left.iter().all(|f| !f.ends_with(".tmp")),
        "temporary files left: {left:?}"
    );
    assert_eq!(
        left,
        vec![
            "rep/index.html",
            "rep/paper-memtx.html",
            "rep/paper-memtx.json",
            "rep/paper-memtx.md"
        ]
    );
}

/// SIGINT mid-run: partial summary on stdout, the reports marked incomplete, exit 130.
#[test]
fn sigint_stops_the_run_with_a_partial_report() {
    interrupted_run_reports_what_it_found("INT");
}

/// SIGTERM (what `timeout` and job schedulers send) is handled like SIGINT.
#[test]
fn sigterm_stops_the_run_with_a_partial_report() {
    interrupted_run_reports_what_it_found("TERM");
}

/// The summary printed on stdout after an interrupt: counts, the depth reached, the coverage
/// so far, and a result line that says INCOMPLETE and why, never PASS.
#[test]
fn the_partial_summary_says_interrupted() {
    let dir = scratch("summary");
    let run = start_paper_check(&dir);
    assert!(run.preamble.contains("preset paper"), "{}", run.preamble);
    let started = Instant::now();
    signal(&run.child, "INT");
    let (code, _stderr, _) = finish(run.child, started);
    let stdout = run.rest.join().unwrap();
    assert_eq!(code, Some(130));
    assert!(stdout.contains("unique states"), "{stdout}");
    assert!(stdout.contains("max depth"), "{stdout}");
    assert!(stdout.contains("rules exercised"), "{stdout}");
    assert!(
        stdout.contains("result: INCOMPLETE (stopped by interrupt"),
        "{stdout}"
    );
    assert!(!stdout.contains("result: PASS"), "{stdout}");
    assert!(
        stdout.contains("holds so far") || stdout.contains("violated"),
        "{stdout}"
    );
}

/// A second SIGINT quits at once, without a report, and still leaves no temporary file.
#[test]
fn a_second_sigint_quits_at_once() {
    let dir = scratch("twice");
    let run = start_paper_check(&dir);
    let started = Instant::now();
    signal(&run.child, "INT");
    signal(&run.child, "INT");
    let (code, stderr, _) = finish(run.child, started);
    let _ = run.rest.join();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        files_under(&dir).iter().all(|f| !f.ends_with(".tmp")),
        "{:?}",
        files_under(&dir)
    );
}

/// A second SIGINT at any moment of the stop the first one began (while the partial reports
/// and traces are being written) leaves no temporary file: 4 of 150 such runs left one when a
/// temporary was registered before it was created.
#[test]
fn a_second_sigint_at_any_moment_leaves_no_temporary() {
    for delay in (0..=280).step_by(40) {
        let dir = scratch(&format!("twice-{delay}"));
        let run = start_paper_check(&dir);
        let started = Instant::now();
        signal(&run.child, "INT");
        std::thread::sleep(Duration::from_millis(delay));
        // It may have finished its graceful stop already: then there is nothing to signal.
        let _ = Command::new("kill")
            .args(["-INT", &run.child.id().to_string()])
            .status();
        let (code, stderr, _) = finish(run.child, started);
        let _ = run.rest.join();
        assert_eq!(code, Some(130), "after {delay} ms: {stderr}");
        let left: Vec<String> = files_under(&dir)
            .into_iter()
            .filter(|f| f.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "after {delay} ms: {left:?}");
    }
}

/// A second SIGINT to the supervisor of a `--local` run quits at once and still removes the
/// temporary directory that holds the run's hosts file (a destructor would not run: the exit
/// is immediate); its processes stop as their standard input closes.
#[test]
fn a_second_sigint_to_a_local_supervisor_removes_its_hosts_directory() {
    let dir = scratch("local-twice");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let hosts_dirs = || -> Vec<String> {
        std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("memtx-local-"))
            .collect()
    };
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
        .current_dir(&dir)
        .env("CI", "true")
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the memtx binary starts");
    let started = Instant::now();
    let members = loop {
        let members = children(child.id());
        if members.len() == 2 && hosts_dirs().len() == 1 {
            break members;
        }
        assert!(child.try_wait().unwrap().is_none(), "paper ended too soon");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no local run under way after 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Let the run get under way, so that the handler is installed and the processes connected.
    std::thread::sleep(Duration::from_millis(700));
    let signalled = Instant::now();
    signal(&child, "INT");
    signal(&child, "INT");
    let (code, stderr, _) = finish(child, signalled);
    let pids: Vec<u32> = members.iter().map(|&(p, _)| p).collect();
    await_ended(
        &pids,
        Duration::from_secs(10),
        "the run's processes did not stop after their supervisor quit",
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted twice"), "{stderr}");
    assert_eq!(hosts_dirs(), Vec::<String>::new(), "left in TMPDIR");
}
