//! Where saved traces live: the regression suite's folders.

use super::TRACE_SUFFIX;

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
