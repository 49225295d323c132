//! Input hardening of trace, scenario and domain files, through the `memtx` binary: files over
//! the size limit (a regular file, `/dev/zero` behind standard input), devices, duplicate keys, 1-based step numbers in
//! messages, long values cut. Each is exit 2 with one line on stderr and no panic.

mod binary_support;
use binary_support::*;

use std::path::Path;
use std::process::Output;

/// Exit 2, one line on stderr starting with `memtx:`, no panic, nothing on stdout; returns the
/// line.
fn user_error(out: &Output, mentions: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("memtx:"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    assert!(stderr.contains(mentions), "'{mentions}' not in: {stderr}");
    stderr
}

/// A small valid scenario, as text, with `steps` spliced in.
fn scenario(steps: &str) -> String {
    format!(
        r#"{{"format": "memtx-trace", "version": 1, "config": {{"preset": "quick"}}, "steps": [{steps}]}}"#
    )
}

const BEGIN: &str =
    r#"{"action": {"op": "begin", "agent": 0, "tier": "medium", "isolation": "committed-read"}}"#;

fn write(dir: &Path, name: &str, body: &str) -> String {
    std::fs::write(dir.join(name), body).expect("written");
    name.to_string()
}

#[test]
fn a_file_over_the_size_limit_is_refused_without_being_read_whole() {
    let dir = scratch("size");
    let body = scenario(BEGIN);
    let padded = format!("{body}{}", " ".repeat(2048));
    let f = write(&dir, "big.json", &padded);
    let ok = memtx(&["replay", &f], &dir);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "under the default limit it replays"
    );
    let m = user_error(
        &memtx(&["replay", &f, "--max-input-size", "1K"], &dir),
        "larger than 1 KiB",
    );
    assert!(
        m.contains("--max-input-size"),
        "the fix names the flag: {m}"
    );
    // A device is refused as such; a stream that never ends (here /dev/zero behind standard
    // input, as a shell's redirection gives it) is refused after limit + 1 bytes, not read
    // until memory runs out.
    user_error(
        &memtx(&["replay", "/dev/zero"], &dir),
        "it is a character device",
    );
    let from_zero = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_memtx"))
            .args(args)
            .current_dir(&dir)
            .stdin(std::fs::File::open("/dev/zero").unwrap())
            .output()
            .unwrap()
    };
    user_error(
        &from_zero(&["replay", "/dev/stdin", "--max-input-size", "1M"]),
        "larger than 1 MiB",
    );
    user_error(&from_zero(&["replay", "/dev/stdin"]), "larger than 64 MiB");
    user_error(
        &memtx(&["replay", &f, "--max-input-size", "lots"], &dir),
        "not a size",
    );
    user_error(&memtx(&["replay", "."], &dir), "directory");
}

#[test]
fn duplicate_keys_are_refused_naming_the_key_and_where() {
    let dir = scratch("dup");
    let top = r#"{"format": "memtx-trace", "version": 1, "version": 1, "config": {"preset": "quick"}, "steps": []}"#;
    let f = write(&dir, "top.json", top);
    user_error(
        &memtx(&["replay", &f], &dir),
        "duplicate key \"version\" in the top-level object",
    );
    let cfg = r#"{"format": "memtx-trace", "version": 1, "config": {"preset": "quick", "variant": "memtx", "variant": "no-cascade"}, "steps": []}"#;
    let f = write(&dir, "cfg.json", cfg);
    user_error(
        &memtx(&["replay", &f], &dir),
        "duplicate key \"variant\" in config",
    );
    let step = scenario(&format!(
        r#"{BEGIN}, {{"action": {{"op": "commit", "agent": 0, "agent": 0}}}}"#
    ));
    let f = write(&dir, "step.json", &step);
    user_error(
        &memtx(&["replay", &f], &dir),
        "duplicate key \"agent\" in step 2: action",
    );
    // Domain files too.
    let domain = r#"{"domain": {"tiers": ["medium"], "tiers": ["low"]}}"#;
    let f = write(&dir, "domain.json", domain);
    user_error(
        &memtx(&["check", "--preset", "quick", "--domain", &f], &dir),
        "duplicate key \"tiers\" in domain",
    );
}

#[test]
fn steps_are_numbered_from_one_and_long_values_are_cut() {
    let dir = scratch("cut");
    let long = "x".repeat(10_000);
    let body = scenario(&format!(r#"{BEGIN}, {{"action": {{"op": "{long}"}}}}"#));
    let f = write(&dir, "longop.json", &body);
    let m = user_error(&memtx(&["replay", &f], &dir), "step 2: action");
    assert!(!m.contains("steps["), "{m}");
    assert!(m.contains('…'), "{m}");
    assert!(
        m.len() < 600,
        "{} bytes: the 10 KB name is echoed whole",
        m.len()
    );
    let body = format!(r#"{{"format": "{long}", "version": 1}}"#);
    let f = write(&dir, "longformat.json", &body);
    let m = user_error(&memtx(&["replay", &f], &dir), "not a memtx trace");
    assert!(m.len() < 400 && m.contains('…'), "{m}");
    let body = scenario(&format!(
        r#"{BEGIN}, {{"action": {{"op": "tick"}}, "{long}": 1}}"#
    ));
    let f = write(&dir, "longfield.json", &body);
    let m = user_error(&memtx(&["replay", &f], &dir), "step 2: ");
    assert!(m.len() < 400 && m.contains('…'), "{m}");
    // A step refused without expecting it: exit 2, 1-based.
    let body = scenario(r#"{"action": {"op": "commit", "agent": 0}}"#);
    let f = write(&dir, "refused.json", &body);
    user_error(
        &memtx(&["replay", &f], &dir),
        "step 1 (a0 Commit) is not enabled",
    );
    // A domain file with a long unknown field.
    let domain = format!(r#"{{"domain": {{"{long}": 1}}}}"#);
    let f = write(&dir, "longdomain.json", &domain);
    let m = user_error(
        &memtx(&["check", "--preset", "quick", "--domain", &f], &dir),
        "not a memtx domain",
    );
    assert!(m.len() < 800 && m.contains('…'), "{} bytes: {m}", m.len());
    user_error(
        &memtx(
            &["check", "--preset", "quick", "--domain", "/dev/zero"],
            &dir,
        ),
        "it is a character device",
    );
}
