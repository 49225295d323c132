//! Where saved traces live and how they are named: the regression suite's folders, a trace's
//! file name, its ITF companion, and the command that replays it.

use super::TRACE_SUFFIX;
use memtx_model::{Config, Variant};
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

/// The folder of a configuration's traces, so that runs of different configurations never
/// overwrite each other's: the preset's name when the bounds and domain are the preset's own
/// (`quick`), otherwise the preset (and `--domain` file) name followed by 8 hex digits of a
/// hash of the bounds and domain (`quick+wide-3f2a9c01`, `paper-0be1c7d2` for overridden
/// bounds). The variant is in the file name; the hash is the same on every machine.
pub fn configuration_name(cfg: &Config) -> String {
    let own = memtx_model::presets::preset(&cfg.preset, cfg.variant)
        .is_some_and(|p| p.bounds == cfg.bounds && p.domain == cfg.domain);
    if own {
        return cfg.preset.clone();
    }
    let text = serde_json::to_string(&(&cfg.bounds, &cfg.domain)).unwrap_or_default();
    // FNV-1a, 64 bits, folded to 32: short, stable, and not a security boundary.
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let name: String = cfg
        .preset
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+_-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    format!("{name}-{:08x}", (hash >> 32) as u32 ^ hash as u32)
}

/// `<dir>/<variant>-<key>.trace.json`, e.g. `regressions/quick/missed-cascade-I2.trace.json`
/// (`memtx check` gives `dir` as `<traces>/<configuration>`, [`configuration_name`]).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_of_different_configurations_go_to_different_folders() {
        let quick = memtx_model::presets::preset("quick", Variant::NoCascade).expect("quick");
        assert_eq!(configuration_name(&quick), "quick");
        // The variant is in the file name, not the folder.
        let memtx = memtx_model::presets::preset("quick", Variant::Memtx).expect("quick");
        assert_eq!(configuration_name(&memtx), "quick");
        let mut more = quick.clone();
        more.bounds.records += 1;
        let mut other_domain = quick.clone();
        other_domain.preset = "quick+my domain".into();
        other_domain.domain.reviews = !other_domain.domain.reviews;
        let names = [configuration_name(&more), configuration_name(&other_domain)];
        assert!(names[0].starts_with("quick-") && names[0].len() == "quick-".len() + 8);
        assert!(names[1].starts_with("quick+my-domain-"), "{}", names[1]);
        assert_ne!(names[0], names[1]);
        // Stable: the same configuration, the same name.
        assert_eq!(configuration_name(&more.clone()), names[0]);
    }
}
