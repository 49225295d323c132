//! Turning command-line choices into a checked [`Config`] and property selection.
//! Every error here is the user's, with the cause and the fix in one line.

use crate::cli::BoundArgs;
use crate::error::{ErrorKind, UserError};
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

/// The largest domain file read: the input size limit shared with traces
/// ([`crate::input::MAX_INPUT_BYTES`], 64 MiB).
pub const MAX_DOMAIN_FILE_BYTES: u64 = crate::input::MAX_INPUT_BYTES;

/// What `--domain FILE` holds: the `bounds` and `domain` of a configuration, in the form
/// every report and `memtx list --json` print them (the `config` object of a report's JSON
/// is accepted as it is: its `preset` is ignored; its `variant` must be the one the run
/// checks). The
/// bounds are optional (the preset's are kept); `--agents` and the other bound flags still
/// override them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainFile {
    #[serde(default)]
    #[allow(dead_code)]
    preset: Option<String>,
    #[serde(default)]
    variant: Option<serde_json::Value>,
    #[serde(default)]
    bounds: Option<memtx_model::config::Bounds>,
    domain: memtx_model::Domain,
}

/// Reads a `--domain` file into `cfg` (its domain, and its bounds when it has them), naming the
/// configuration after the file. The file is refused, in one line, when it is larger than
/// [`MAX_DOMAIN_FILE_BYTES`] (without being read whole), not JSON, holds a key twice, or is
/// not a domain.
pub fn apply_domain_file(cfg: &mut Config, path: &std::path::Path) -> Result<(), String> {
    apply_domain_file_limited(cfg, path, MAX_DOMAIN_FILE_BYTES)
}

/// [`apply_domain_file`] with another size limit.
pub fn apply_domain_file_limited(
    cfg: &mut Config,
    path: &std::path::Path,
    limit: u64,
) -> Result<(), String> {
    use crate::input::{cut_quoted, parse_json, read_limited};
    use serde::Deserialize as _;
    let shown = path.display();
    let text = read_limited(path, "domain file", limit).map_err(|e| e.to_string())?;
    let how = "write {\"domain\": {...}} as `memtx list --json` prints presets";
    let value = parse_json(&text)
        .map_err(|e| format!("the domain file {shown} is not a memtx domain ({e}); {how}"))?;
    let file = DomainFile::deserialize(&value).map_err(|e| {
        format!(
            "the domain file {shown} is not a memtx domain ({}); {how}",
            cut_quoted(&e.to_string())
        )
    })?;
    // A report's configuration names its variant: accepted when it is the one this run
    // checks, refused (not silently replaced by --variant) when it is another.
    if let Some(named) = &file.variant {
        let same = named.as_str() == Some(cfg.variant.name());
        if !same {
            return Err(format!(
                "the domain file {shown} names variant {}, and this run checks variant {}: pass --variant {} or remove \"variant\" from the file",
                crate::input::cut(&named.to_string()),
                cfg.variant.name(),
                crate::input::cut(named.as_str().unwrap_or("NAME"))
            ));
        }
    }
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
    domain_limit: u64,
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
        apply_domain_file_limited(&mut cfg, path, domain_limit)?;
    }
    overrides(cfg, bounds)
}

/// The size limit of an input file: `--max-input-size SIZE`, or 64 MiB
/// ([`crate::input::MAX_INPUT_BYTES`]) when it is not given.
pub fn input_limit(max_input_size: Option<&str>) -> Result<u64, UserError> {
    match max_input_size {
        None => Ok(crate::input::MAX_INPUT_BYTES),
        Some(text) => crate::input::parse_size(text)
            .map_err(|m| UserError::new(ErrorKind::Usage, format!("--max-input-size {m}"))),
    }
}

/// What a command's configuration flags ask for, checked, each wrong input a one-line error of
/// its own kind: the variant, the preset with its `--domain` file (at most `--max-input-size`)
/// and bound overrides, and the properties to judge (default: all). `check` and `simulate`
/// read their flags through it.
pub fn configured(
    preset_name: &str,
    domain: Option<&std::path::Path>,
    max_input_size: Option<&str>,
    bounds: &BoundArgs,
    variant_name: &str,
    property_keys: &[String],
) -> Result<(Config, Vec<&'static PropertyDef>), UserError> {
    let variant =
        variant(variant_name).map_err(|m| UserError::new(ErrorKind::UnknownVariant, m))?;
    let cfg = config_with_domain(
        preset_name,
        domain,
        input_limit(max_input_size)?,
        bounds,
        variant,
    )
    .map_err(|m| UserError::new(ErrorKind::InvalidConfig, m))?;
    let selected = properties(property_keys, &cfg.preset)
        .map_err(|m| UserError::new(ErrorKind::UnknownProperty, m))?;
    Ok((cfg, selected))
}

/// The preset's configuration with the bound overrides applied, validated.
pub fn config(preset_name: &str, bounds: &BoundArgs, variant: Variant) -> Result<Config, String> {
    config_with_domain(preset_name, None, MAX_DOMAIN_FILE_BYTES, bounds, variant)
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

/// Parses a memory budget (a size as [`crate::input::parse_size`] reads it) and refuses budgets larger than this machine's
/// memory or too small to explore anything.
pub fn memory(text: &str) -> Result<u64, String> {
    let bytes = crate::input::parse_size(text).map_err(|m| format!("--max-memory {m}"))?;
    let shown = crate::input::cut(text);
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

/// Parses a duration such as `30s`, `5m`, `1h`, `250ms` or `0s` (a whole number and a unit).
pub fn duration(text: &str) -> Result<std::time::Duration, String> {
    let shown = crate::input::cut(text);
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: u64 = number.parse().map_err(|_| {
        format!("{shown:?} is not a duration: give a whole number and a unit, e.g. 30s, 5m, 1h")
    })?;
    let millis = match unit {
        "ms" => Some(value),
        "s" => value.checked_mul(1000),
        "m" => value.checked_mul(60_000),
        "h" => value.checked_mul(3_600_000),
        _ => None,
    }
    .ok_or_else(|| format!("{shown:?} is not a duration: give a whole number and a unit (ms, s, m or h), e.g. 30s, 5m, 1h"))?;
    Ok(std::time::Duration::from_millis(millis))
}

/// [`duration`] for a budget of work (`simulate --time`, `--simulate`): zero is refused, since
/// it would run one batch of walks per thread and report it as if a budget had been spent.
pub fn budget(text: &str) -> Result<std::time::Duration, String> {
    let d = duration(text)?;
    if d.is_zero() {
        return Err(format!(
            "{:?} is no time at all: give a positive duration, e.g. 30s, 5m",
            crate::input::cut(text)
        ));
    }
    Ok(d)
}
