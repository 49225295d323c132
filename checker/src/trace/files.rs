//! Where saved traces live and how they are named: the regression suite's folders, a trace's
//! file name, its ITF companion, and the command that replays it.

use super::TRACE_SUFFIX;
use memtx_model::Variant;
use std::path::{Path, PathBuf};

/// The regression traces under `traces`: its own, and those of each preset folder (every
/// subfolder but `scenarios/`, which holds hand-written scenarios).
pub fn regression_traces(traces: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut dirs = vec![traces.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(traces) {
        dirs.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir() && !p.ends_with("scenarios")),
        );
    }
    let mut files = Vec::new();
    for dir in dirs {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            files.extend(
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.to_string_lossy().ends_with(TRACE_SUFFIX)),
            );
        }
    }
    files
}

/// `<dir>/<variant>-<key>.trace.json`, e.g. `regressions/missed-cascade-I2.trace.json`.
pub fn trace_path(dir: &Path, variant: Variant, key: &str) -> PathBuf {
    dir.join(format!("{}-{key}{TRACE_SUFFIX}", variant.name()))
}

/// The ITF file written next to a trace: `x.trace.json` → `x.itf.json` (else `<path>.itf.json`).
pub fn itf_path_for(trace_path: &Path) -> PathBuf {
    let s = trace_path.to_string_lossy();
    match s.strip_suffix(TRACE_SUFFIX) {
        Some(stem) => PathBuf::from(format!("{stem}.itf.json")),
        None => PathBuf::from(format!("{s}.itf.json")),
    }
}

/// The command that replays a trace: `memtx replay <path>` (the path quoted for a POSIX shell
/// when it needs it).
pub fn replay_command(trace_path: &Path) -> String {
    format!(
        "memtx replay {}",
        shell_quote(&trace_path.to_string_lossy())
    )
}

/// `s` quoted for a POSIX shell if it contains anything but safe characters.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
