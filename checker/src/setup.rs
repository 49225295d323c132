//! Turning command-line choices into a checked [`Config`] and property selection.
//! Every error here is the user's, with the cause and the fix in one line.

use crate::cli::BoundArgs;
use memtx_model::config::default_authority;
use memtx_model::presets::{preset, PRESETS};
use memtx_model::properties::{PropertyDef, PROPERTIES};
use memtx_model::{Config, Variant};

/// Looks a variant up by name.
pub fn variant(name: &str) -> Result<Variant, String> {
    Variant::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = memtx_model::config::VARIANTS
            .iter()
            .map(|v| v.name)
            .collect();
        format!(
            "unknown variant '{name}': choose one of {} (see `memtx list`)",
            names.join(", ")
        )
    })
}

/// The largest domain file read (a domain is a few kilobytes; anything this large is not one).
pub const MAX_DOMAIN_FILE_BYTES: u64 = 1 << 20;

/// What `--domain FILE` holds: the `bounds` and `domain` of a configuration, in the form
/// every report and `memtx list --json` print them (the `config` object of a report's JSON
/// is accepted as it is: its `preset` and `variant` are ignored, `--variant` decides). The
/// bounds are optional (the preset's are kept); `--agents` and the other bound flags still
/// override them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainFile {
    #[serde(default)]
    #[allow(dead_code)]
    preset: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    variant: Option<serde_json::Value>,
    #[serde(default)]
    bounds: Option<memtx_model::config::Bounds>,
    domain: memtx_model::Domain,
}

/// Reads a `--domain` file into `cfg` (its domain, and its bounds when it has them), naming the
/// configuration after the file.
pub fn apply_domain_file(cfg: &mut Config, path: &std::path::Path) -> Result<(), String> {
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("cannot read the domain file {shown}: {e} (check the path)"))?;
    if !meta.is_file() {
        return Err(format!("the domain file {shown} is not a regular file"));
    }
    if meta.len() > MAX_DOMAIN_FILE_BYTES {
        return Err(format!(
            "the domain file {shown} has {} bytes, more than a domain needs ({MAX_DOMAIN_FILE_BYTES}): pass a domain JSON",
            meta.len()
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the domain file {shown}: {e}"))?;
    let file: DomainFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the domain file {shown} is not a memtx domain ({e}); write {{\"domain\": {{...}}}} as `memtx list --json` prints presets"
        )
    })?;
    if let Some(bounds) = file.bounds {
        cfg.bounds = bounds;
    }
    cfg.domain = file.domain;
    let stem = path
        .file_stem()
        .map_or("domain".into(), |s| s.to_string_lossy().into_owned());
    cfg.preset = format!("{}+{stem}", cfg.preset);
    Ok(())
}

/// The preset's configuration with a `--domain` file and the bound overrides applied,
/// validated.
pub fn config_with_domain(
    preset_name: &str,
    domain: Option<&std::path::Path>,
    bounds: &BoundArgs,
    variant: Variant,
) -> Result<Config, String> {
    let mut cfg = preset(preset_name, variant).ok_or_else(|| {
        format!(
            "unknown preset '{preset_name}': choose one of {}",
            PRESETS.join(", ")
        )
    })?;
    if let Some(path) = domain {
        apply_domain_file(&mut cfg, path)?;
    }
    overrides(cfg, bounds)
}

/// The preset's configuration with the bound overrides applied, validated.
pub fn config(preset_name: &str, bounds: &BoundArgs, variant: Variant) -> Result<Config, String> {
    config_with_domain(preset_name, None, bounds, variant)
}

fn overrides(mut cfg: Config, bounds: &BoundArgs) -> Result<Config, String> {
    let b = &mut cfg.bounds;
    if let Some(n) = bounds.agents {
        b.agents = n;
    }
    if let Some(n) = bounds.records {
        b.records = n;
    }
    if let Some(n) = bounds.ticks {
        b.ticks = n;
    }
    if let Some(n) = bounds.slots {
        b.slots = n;
    }
    if let Some(n) = bounds.values {
        b.values = n;
    }
    if let Some(n) = bounds.sources {
        b.sources = (0..n as usize).map(default_authority).collect();
        let n = b.sources.len();
        cfg.domain.writes.retain(|w| (w.source as usize) < n);
        if cfg.domain.writes.is_empty() {
            return Err(format!(
                "--sources {n} leaves the preset no write shape: raise --sources"
            ));
        }
    }
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// The selected properties: when `keys` is empty, every invariant and the examples the
/// preset must reach ([`memtx_model::presets::examples`]: all of them but for the focused
/// presets of the suite).
pub fn properties(keys: &[String], preset: &str) -> Result<Vec<&'static PropertyDef>, String> {
    if keys.is_empty() {
        let examples = memtx_model::presets::examples(preset);
        return Ok(PROPERTIES
            .iter()
            .filter(|p| p.is_invariant() || examples.contains(&p.key))
            .collect());
    }
    keys.iter()
        .map(|k| {
            PropertyDef::find(k).ok_or_else(|| {
                let all: Vec<&str> = PROPERTIES.iter().map(|p| p.key).collect();
                format!(
                    "unknown property '{k}': choose among {} (see `memtx list`)",
                    all.join(", ")
                )
            })
        })
        .collect()
}

/// Parses a size such as `8G`, `1.5G`, `512M`, `1024K` or a plain byte count (binary units:
/// K = 1024), as given to `flag`; the error says why a text is not a size.
pub fn size(text: &str, flag: &str) -> Result<u64, String> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let shown = crate::fsutil::cut(text, 40);
    let n: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite())
        .ok_or_else(|| {
            format!("{flag} '{shown}' is not a size: write e.g. 8G, 1.5G, 512M or 1048576")
        })?;
    let mult: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        _ => {
            return Err(format!(
                "{flag} '{shown}': unknown unit '{}' (use K, M, G or T)",
                crate::fsutil::cut(unit, 10)
            ))
        }
    };
    let bytes = n * mult as f64;
    if bytes >= u64::MAX as f64 {
        return Err(format!("{flag} '{shown}' is too large"));
    }
    Ok(bytes as u64)
}

/// Parses a memory budget (see [`size`]) and refuses budgets larger than this machine's
/// memory or too small to explore anything.
pub fn memory(text: &str) -> Result<u64, String> {
    let bytes = size(text, "--max-memory")?;
    let shown = crate::fsutil::cut(text, 40);
    if let Some(total) = physical_memory() {
        if bytes > total {
            return Err(format!(
                "--max-memory {shown} is more than this machine's {} MiB: choose a smaller budget",
                total >> 20
            ));
        }
    }
    if bytes < 16 << 20 {
        return Err(format!(
            "--max-memory {shown} is too small to explore anything: give at least 16M"
        ));
    }
    Ok(bytes)
}

/// Total physical memory, from /proc/meminfo.
pub fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
