//! `memtx reference`: regenerates the reference runs in `reports/` and the regression traces in
//! `regressions/`: the `quick` check of the protocol and of every variant (the ablation matrix),
//! optionally `paper`, and `reports/manifest.json` pinning unique/total/depth per preset × variant.

use crate::check::{check, CheckResult, Verdict};
use crate::cli::{CheckArgs, EngineArg, ReferenceArgs};
use crate::error::UserError;
use crate::fsutil::{json_pretty, write_atomic};
use crate::reporting::write_check_report;
use memtx_model::config::VARIANTS;
use memtx_model::properties::PROPERTIES;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One pinned count (as tlaplus/Examples pins its models).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// Preset.
    pub preset: String,
    /// Variant.
    pub variant: String,
    /// Distinct states.
    pub unique: u64,
    /// Generated states.
    pub total: u64,
    /// Maximum depth.
    pub depth: usize,
    /// Property keys violated.
    pub violated: Vec<String>,
}

/// `reports/manifest.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Entries, in the order they were produced.
    pub entries: Vec<ManifestEntry>,
}

impl Manifest {
    /// Reads a manifest file.
    pub fn read(path: &Path) -> Result<Manifest, UserError> {
        let text = crate::fsutil::read_text(path, "manifest")?;
        serde_json::from_str(&text).map_err(|e| {
            UserError::new(
                crate::error::ErrorKind::Malformed,
                format!("{}: not a memtx manifest ({e})", path.display()),
            )
        })
    }
    /// The entry of `preset` × `variant`.
    pub fn get(&self, preset: &str, variant: &str) -> Option<&ManifestEntry> {
        self.entries
            .iter()
            .find(|e| e.preset == preset && e.variant == variant)
    }
}

/// The manifest entry of a check result.
pub fn entry(r: &CheckResult) -> ManifestEntry {
    ManifestEntry {
        preset: r.config.preset.clone(),
        variant: r.config.variant.name().to_string(),
        unique: r.unique_states,
        total: r.total_states,
        depth: r.max_depth,
        violated: r
            .properties
            .iter()
            .filter(|p| p.verdict == Verdict::Violated)
            .map(|p| p.key.to_string())
            .collect(),
    }
}

/// Arguments of a reference check of `preset` under `variant`.
pub fn reference_args(preset: &str, variant: &str, traces: PathBuf) -> CheckArgs {
    CheckArgs {
        preset: preset.into(),
        bounds: Default::default(),
        variant: variant.into(),
        properties: Vec::new(),
        threads: 2,
        engine: EngineArg::Fast,
        symmetry: false,
        exact: false,
        max_memory: None,
        max_states: None,
        max_depth: None,
        report: None,
        name: None,
        traces,
        examples: false,
        itf: false,
        json: false,
    }
}

/// The ablation matrix: variants × invariants, each cell "holds" or "violated (N steps)".
pub fn matrix(results: &[CheckResult]) -> String {
    let invariants: Vec<_> = PROPERTIES.iter().filter(|p| p.is_invariant()).collect();
    let mut md = String::from("| variant | expected to break |");
    for p in &invariants {
        md.push_str(&format!(" {} |", p.key));
    }
    md.push_str(" unique states |\n|---|---|");
    md.push_str(&"---|".repeat(invariants.len() + 1));
    md.push('\n');
    for r in results {
        let info = r.config.variant.info();
        md.push_str(&format!(
            "| `{}` | {} |",
            info.name,
            info.expected_to_break.join(", ")
        ));
        for p in &invariants {
            let cell = match r.properties.iter().find(|x| x.key == p.key) {
                Some(x) if x.verdict == Verdict::Violated => {
                    format!("**violated** ({} steps)", x.length.unwrap_or(0))
                }
                Some(_) => "holds".to_string(),
                None => "-".to_string(),
            };
            md.push_str(&format!(" {cell} |"));
        }
        md.push_str(&format!(" {} |\n", r.unique_states));
    }
    md
}

/// Runs `memtx reference`.
pub fn reference_command(args: &ReferenceArgs) -> Result<u8, UserError> {
    let command = "cargo run --release -- reference";
    let mut results = Vec::new();
    for v in VARIANTS {
        eprintln!("reference: quick × {}", v.name);
        let r = check(
            &reference_args("quick", v.name, args.traces.clone()),
            &format!("memtx check --preset quick --variant {}", v.name),
        )?;
        write_check_report(&r, &args.out, &format!("quick-{}", v.name))?;
        results.push(r);
    }
    let mut manifest = Manifest {
        entries: results.iter().map(entry).collect(),
    };
    if args.paper {
        eprintln!("reference: paper × memtx");
        let r = check(
            &reference_args("paper", "memtx", args.traces.clone()),
            "memtx check --preset paper",
        )?;
        write_check_report(&r, &args.out, "paper-memtx")?;
        manifest.entries.push(entry(&r));
    }
    let md = format!(
        "# Ablation matrix (preset quick)\n\nRegenerate with `{command}`.\n\nEach cell: does the invariant hold in every reachable state of the `quick` preset under the variant? \
         Violations come with a shortest counterexample saved in `regressions/`.\n\n{}",
        matrix(&results)
    );
    write_atomic(&args.out.join("ablation-matrix.md"), md.as_bytes())?;
    write_atomic(
        &args.out.join("manifest.json"),
        json_pretty(&manifest).as_bytes(),
    )?;
    print!("{md}");
    Ok(0)
}
