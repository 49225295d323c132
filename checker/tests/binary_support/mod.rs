//! Running the `memtx` binary from a test, in a scratch directory of its own.

#![allow(dead_code)]

mod scratch;
pub use scratch::Scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `memtx args…` in `dir` (with `CI=true`: no spinner) and waits for it.
pub fn memtx(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(args)
        .current_dir(dir)
        .env("CI", "true")
        .output()
        .expect("the memtx binary runs")
}

/// A fresh, empty directory for the test called `name`, unique to this test binary and
/// process, removed when the test passes (kept when it fails).
pub fn scratch(name: &str) -> Scratch {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "test".into());
    Scratch::new(&format!("{binary}-{name}"))
}

/// What a run must share with another run of the same check (resumed, or over other
/// workers), from its `--json` output: counts, levels, result, coverage, rules, and each
/// property's verdict and trace length.
pub fn essentials(out: &Output) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let verdicts: Vec<serde_json::Value> = v["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .map(|p| serde_json::json!([p["key"], p["verdict"], p["trace_len"]]))
        .collect();
    serde_json::json!({
        "unique": v["unique_states"],
        "total": v["total_states"],
        "depth": v["max_depth"],
        "levels": v["states_per_depth"],
        "result": v["result"],
        "coverage": v["coverage"],
        "rules": v["rules"],
        "verdicts": verdicts,
    })
}

/// The children of `parent` (from /proc), with their command lines.
pub fn children(parent: u32) -> Vec<(u32, String)> {
    std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
        .map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            (pid, String::from_utf8_lossy(&cmdline).replace('\0', " "))
        })
        .collect()
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
pub fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state == "Z" || state == "X"),
    }
}

/// Waits until every process of `pids` has ended (gone or a zombie). If one still runs after
/// `within`, kills them all, so that a failing test leaves no process behind, and panics with
/// `what`.
pub fn await_ended(pids: &[u32], within: std::time::Duration, what: &str) {
    let since = std::time::Instant::now();
    while !pids.iter().all(|&p| ended(p)) {
        if since.elapsed() > within {
            for &p in pids {
                sigkill(p);
            }
            panic!("{what} (still running after {within:?})");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Sends SIGKILL to `pid`; whether `kill` succeeded.
pub fn sigkill(pid: u32) -> bool {
    Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill runs")
        .success()
}

/// Makes a named FIFO at `path` with `mkfifo`; `false` where that cannot be done (the caller
/// skips what needs one).
pub fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `memtx args…` in `dir` (with `CI=true`), its standard error drained on a thread (a
/// long message cannot block it on a full pipe), and panics naming `what` if it is still
/// running after `limit`: a test of an input that once hung fails instead of hanging.
pub fn memtx_within(args: &[&str], dir: &Path, limit: std::time::Duration, what: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(args)
        .current_dir(dir)
        .env("CI", "true")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the memtx binary runs");
    let mut pipe = child.stderr.take().expect("a stderr pipe");
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = std::io::Read::read_to_end(&mut pipe, &mut text);
        text
    });
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for memtx") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: still running after {limit:?}: memtx {args:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    Output {
        status,
        stdout: Vec::new(),
        stderr: reader.join().expect("the stderr reader"),
    }
}

/// Every file under `dir` (recursively) whose name ends in `.ext`, sorted.
pub fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            out.extend(files_under(&path, ext));
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
    out.sort();
    out
}
