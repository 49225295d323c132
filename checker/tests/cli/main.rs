//! The `memtx` binary as a user meets it: exit codes, one-line errors for bad input (exit 2, no
//! panic, nothing half-written), `--json` output, and the replay command a violation prints.
//! One test binary, one module per subject: `runs`, `bad_input`, `streams`, `bench`.

#[path = "../binary_support/mod.rs"]
mod binary_support;

mod bad_input;
mod bench;
mod runs;
mod streams;

use binary_support::*;

use std::path::{Path, PathBuf};
use std::process::Output;

/// Exit code 2, exactly one line on stderr starting with `memtx:`, no panic, nothing on stdout.
fn assert_user_error(out: &Output, mentions: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit code for bad input; stderr: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "one line on stderr, got: {stderr}"
    );
    assert!(stderr.starts_with("memtx:"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.to_lowercase().contains(&mentions.to_lowercase()),
        "'{mentions}' not in: {stderr}"
    );
}

fn sample_trace(dir: &Path) -> PathBuf {
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--variant",
            "no-cascade",
            "--property",
            "I2",
        ],
        dir,
    );
    assert_eq!(out.status.code(), Some(1));
    dir.join("traces/quick/no-cascade-I2.trace.json")
}

/// The distinct states of `quick` under `memtx`, as `reports/manifest.json` pins them.
fn pinned_quick_states() -> u64 {
    memtx_checker::report::Manifest::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/manifest.json"),
    )
    .expect("reports/manifest.json")
    .get("quick", memtx_model::Variant::Memtx, false)
    .expect("quick × memtx is pinned")
    .unique
}
