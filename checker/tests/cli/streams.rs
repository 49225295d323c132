//! The standard streams: a closed or full stdout ends the command quietly or in one line; a
//! full stderr does not stop the run.

use super::*;

/// Runs `memtx args` with standard output sent to `stdout`; its output (stdout empty).
fn memtx_to(args: &[&str], stdout: std::process::Stdio) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(args)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("memtx runs")
}

/// A pipe whose reader is gone before memtx writes (`memtx list | head -0`, deterministic):
/// the command ends quietly with 141, as a process SIGPIPE ended, not with a panic (101).
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let regression = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../regressions/quick/no-cascade-I2.trace.json")
        .display()
        .to_string();
    for args in [
        vec!["list"],
        vec!["list", "--json"],
        vec!["replay", regression.as_str()],
        vec!["check", "--preset", "quick", "--max-depth", "3"],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = memtx_to(&args, writer.into());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("memtx:"),
            "{args:?}: said nothing: {stderr}"
        );
    }
}

/// A full standard output (`memtx list > /dev/full`) is one line, exit 2, not a panic.
#[test]
fn a_full_stdout_is_one_line_and_exit_2() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this system");
        return;
    };
    let out = memtx_to(&["list"], full.into());
    assert_user_error(&out, "cannot write to standard output");
}

/// A full standard error loses its lines, not the run: `check --json 2>/dev/full` printed its
/// preamble there and panicked (exit 101); now the verdict and exit code are the run's.
#[test]
fn a_full_stderr_does_not_stop_the_run() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this system");
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memtx"))
        .args(["check", "--preset", "quick", "--json"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "pass", "{}", v["result"]);
}
