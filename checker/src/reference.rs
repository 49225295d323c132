//! `memtx reference`: regenerates the reference runs in `reports/` and the regression traces in
//! `regressions/`: the `quick` check of the protocol and of every variant (the ablation matrix),
//! optionally `paper`, and `reports/manifest.json` pinning unique/total/depth (and the violated
//! invariants) per preset × variant, as tlaplus/Examples pins its models.

use crate::check::check;
use crate::cli::{CheckArgs, EngineArg, ReferenceArgs};
use crate::error::{ErrorKind, UserError};
use crate::fsutil::write_atomic;
use crate::report::{Manifest, ManifestEntry, Matrix, RunReport};
use memtx_model::config::VARIANTS;
use std::path::{Path, PathBuf};

/// The documented command that regenerates everything this module writes.
pub const REGENERATE: &str = "cargo run --release -- reference";

/// Arguments of a reference check of `preset` under `variant`, saving traces into `traces`.
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

fn run_and_write(
    preset: &str,
    variant: &str,
    args: &ReferenceArgs,
    manifest: &mut Manifest,
) -> Result<RunReport, UserError> {
    eprintln!("reference: {preset} × {variant}");
    let command = format!("memtx check --preset {preset} --variant {variant}");
    let r = check(
        &reference_args(preset, variant, args.traces.clone()),
        &command,
    )?;
    let stem = args.out.join(format!("{preset}-{variant}"));
    r.write_json(&stem.with_extension("json"))?;
    r.write_markdown(&stem.with_extension("md"))?;
    let entry: ManifestEntry = ManifestEntry::from_report(&r).ok_or_else(|| {
        UserError::new(
            ErrorKind::Usage,
            format!(
                "the reference run {preset} × {variant} stopped early: its counts cannot be pinned"
            ),
        )
    })?;
    manifest.upsert(entry);
    Ok(r)
}

/// Runs `memtx reference`.
pub fn reference_command(args: &ReferenceArgs) -> Result<u8, UserError> {
    let manifest_path = args.out.join("manifest.json");
    let mut manifest = if Path::new(&manifest_path).exists() {
        Manifest::load(&manifest_path)?
    } else {
        Manifest::new()
    };
    let mut reports = Vec::new();
    for v in VARIANTS {
        reports.push(run_and_write("quick", v.name, args, &mut manifest)?);
    }
    if args.paper {
        run_and_write("paper", "memtx", args, &mut manifest)?;
    }
    let md = format!(
        "# Ablation matrix (preset quick)\n\nRegenerate with `{REGENERATE}`.\n\nEach cell: does the invariant hold in every reachable state of the `quick` preset under the \
         variant? Violations come with a shortest counterexample saved in `regressions/`.\n\n{}",
        Matrix::from_reports(&reports).to_markdown()
    );
    write_atomic(&args.out.join("ablation-matrix.md"), md.as_bytes())?;
    manifest.save(&manifest_path)?;
    print!("{md}");
    Ok(0)
}
