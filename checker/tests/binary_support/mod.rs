//! Running the `memtx` binary from a test, in a scratch directory of its own.

#![allow(dead_code)]

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
/// process.
pub fn scratch(name: &str) -> PathBuf {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "test".into());
    let dir = std::env::temp_dir().join(format!("memtx-{binary}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
