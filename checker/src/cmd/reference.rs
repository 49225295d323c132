//! `memtx reference`: regenerates the reference runs in `reports/` and the regression traces in
//! `regressions/`: the `quick` check of the protocol and of every variant (the ablation matrix),
//! optionally `paper`, and `reports/manifest.json` pinning unique/total/depth (and the violated
//! invariants) per preset × variant, as tlaplus/Examples pins its models.

use crate::cli::{CheckArgs, EngineArg, ReferenceArgs};
use crate::cmd::check::check;
use crate::error::{ErrorKind, UserError};
use crate::fsutil::write_atomic;
use crate::report::{availability, Manifest, ManifestEntry, Matrix, RunReport};
use memtx_model::config::VARIANTS;
use std::path::{Path, PathBuf};

/// The documented command that regenerates everything this module writes.
pub const REGENERATE: &str = "cargo run --release -- reference";

/// Arguments of a reference check of `preset` under `variant`, saving traces into `traces`.
pub fn reference_args(preset: &str, variant: &str, traces: PathBuf) -> CheckArgs {
    CheckArgs {
        preset: preset.into(),
        bounds: Default::default(),
        domain: None,
        max_input_size: None,
        variant: variant.into(),
        properties: Vec::new(),
        threads: 2,
        engine: EngineArg::Fast,
        symmetry: false,
        no_symmetry: false,
        exact: false,
        max_memory: None,
        max_states: None,
        max_transitions: None,
        max_depth: None,
        until_decided: false,
        report: None,
        name: None,
        traces,
        examples: false,
        itf: false,
        json: false,
        coverage: false,
        checkpoint: None,
        checkpoint_every: None,
        cluster: Default::default(),
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
    // Each preset's traces go in its own folder (`memtx check` names it after the preset).
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
    crate::fsutil::check_writable_dir(&args.out, "--out")?;
    crate::fsutil::check_writable_dir(&args.traces, "--traces")?;
    let manifest_path = args.out.join("manifest.json");
    let mut manifest = if Path::new(&manifest_path).exists() {
        Manifest::load(&manifest_path)?
    } else {
        Manifest::new()
    };
    let presets: &[&str] = if args.paper {
        &["quick", "paper"]
    } else {
        &["quick"]
    };
    let mut md = format!(
        "# Ablation matrix\n\nRegenerate with `{REGENERATE}` (add `--paper` for the paper table, a few minutes).\n\n\
         Each cell: does the invariant hold in every reachable state of the preset under the variant? \
         Violations come with a shortest counterexample saved in `regressions/` (from `quick`, or from \
         `paper` where only two agents show it).\n"
    );
    for preset in presets {
        let mut reports = Vec::new();
        for v in VARIANTS {
            reports.push(run_and_write(preset, v.name, args, &mut manifest)?);
        }
        md.push_str(&format!(
            "\n{} `{preset}`\n\n{}",
            SECTION_PREFIX,
            Matrix::from_reports(&reports).to_markdown()
        ));
    }
    // Variants whose violations only a focused preset shows (VariantInfo::shown_by): checked
    // there too, traces saved in regressions/<preset>/.
    let mut focused: Vec<(&str, Vec<RunReport>)> = Vec::new();
    for v in VARIANTS {
        for &preset in v.shown_by {
            let r = run_and_write(preset, v.name, args, &mut manifest)?;
            match focused.iter_mut().find(|(p, _)| *p == preset) {
                Some((_, reports)) => reports.push(r),
                None => focused.push((preset, vec![r])),
            }
        }
    }
    for (preset, reports) in &focused {
        md.push_str(&format!(
            "\n{SECTION_PREFIX} `{preset}` (variants whose violations `quick` and `paper` cannot show)\n\n{}",
            Matrix::from_reports(reports).to_markdown()
        ));
    }
    // The focused presets of the suite, under the protocol: pinned too, and with --paper the
    // whole suite's report (its union coverage) beside them.
    let mut suite_reports = Vec::new();
    for entry in memtx_model::presets::SUITE {
        let ran = matches!(entry.name, "quick" | "paper");
        if ran && !presets.contains(&entry.name) {
            continue;
        }
        let stem = args.out.join(format!("{}-memtx.json", entry.name));
        let r = if ran {
            RunReport::read_json(&stem)?
        } else {
            run_and_write(entry.name, "memtx", args, &mut manifest)?
        };
        suite_reports.push(r);
    }
    let matrix_path = args.out.join("ablation-matrix.md");
    if !args.paper {
        // Keep the paper table a run without --paper did not regenerate.
        if let Ok(old) = std::fs::read_to_string(&matrix_path) {
            md.push_str(&kept_section(&old, PAPER_SECTION));
        }
    }
    if args.paper {
        write_availability(args)?;
        let suite = crate::cmd::suite::SuiteReport::from_reports(
            suite_reports,
            None,
            false,
            "memtx suite --report reports",
        );
        write_atomic(&args.out.join("suite.md"), suite.to_markdown().as_bytes())?;
    }
    write_atomic(&matrix_path, md.as_bytes())?;
    write_regressions_readme(&args.traces)?;
    manifest.save(&manifest_path)?;
    crate::output::print(&md)?;
    Ok(0)
}

/// Writes `reports/availability.md` (issue 35): every suite preset under `memtx` and each
/// variant of [`availability::COMPARED`], checking every example (no invariant: what is
/// measured is what each protocol lets happen), exhaustive, with rule coverage.
fn write_availability(args: &ReferenceArgs) -> Result<(), UserError> {
    let examples: Vec<String> = memtx_model::properties::PROPERTIES
        .iter()
        .filter(|p| !p.is_invariant())
        .map(|p| p.key.to_string())
        .collect();
    let mut presets = Vec::new();
    let mut paired = Vec::new();
    for entry in memtx_model::presets::SUITE {
        let mut rows = Vec::new();
        for variant in std::iter::once("memtx").chain(availability::COMPARED) {
            eprintln!("reference: availability of {} × {variant}", entry.name);
            let mut check_args = reference_args(entry.name, variant, args.traces.clone());
            check_args.properties = examples.clone();
            let command = format!(
                "memtx check --preset {} --variant {variant} --property {}",
                entry.name,
                examples.join(" --property ")
            );
            let r = check(&check_args, &command)?;
            rows.push(availability::Row::of(&r).ok_or_else(|| {
                UserError::new(
                    ErrorKind::Usage,
                    format!(
                        "the availability run {} × {variant} stopped early: its counts are not totals",
                        entry.name
                    ),
                )
            })?);
        }
        presets.push((entry.name.to_string(), rows));
        let mut pairs = Vec::new();
        for variant in availability::COMPARED {
            eprintln!(
                "reference: availability of {}, memtx paired with {variant}",
                entry.name
            );
            let cfg = |v: &str| {
                memtx_model::Variant::from_name(v)
                    .and_then(|v| memtx_model::presets::preset(entry.name, v))
                    .ok_or_else(|| {
                        UserError::new(
                            ErrorKind::Usage,
                            format!("[memtx internal bug] no preset {} × {v}", entry.name),
                        )
                    })
            };
            let outcome = crate::paired::run(cfg("memtx")?, cfg(variant)?, 2, None)
                .map_err(|e| UserError::new(ErrorKind::Usage, e))?;
            pairs.push(availability::PairedRow {
                variant: variant.to_string(),
                outcome,
            });
        }
        paired.push((entry.name.to_string(), pairs));
    }
    let mut md = format!(
        "# Availability: what revision 3 costs\n\nRegenerated by `{REGENERATE} --paper`. Per suite \
         preset, the protocol (`memtx`) beside the paper's protocol (`paper-provenance`: provenance \
         by declared parents and the snapshot only) and revision 2's rules (`rev2-lineage`, \
         `rev2-scopes`), each an exhaustive run checking every example \
         (`memtx check --preset P --variant V --property E1 … --property E11`).\n\n\
         Columns: distinct states; per example the shortest number of steps that reaches it (— \
         unreachable); irreversible calls executed and blocked by the gate, each counted once per \
         distinct state it is attempted from (the rule-coverage counts of `op.call-irreversible` \
         and `gate.block.*`). Each protocol is counted over its own reachable states: these totals \
         compare what each lets through, not one call under both.\n\n\
         The paired tables pair them: one sequence of operations played under `memtx` and under \
         the other protocol at once (the product of the two, explored exhaustively; an operation \
         either proposes is tried under both). Each irreversible call attempted is counted once \
         per distinct pair of states it is attempted from, by what each protocol does with it: \
         executes it, blocks it at the action gate, or does not enable it (e.g. its support is \
         not visible). The pairing follows operations both perform: the first other operation \
         only one of them performs (a read, a stage, a commit) is counted in the last two \
         columns and ends that pairing, so `states` counts the pairs reached in lockstep. Below \
         each table, the shortest sequence of operations whose last call one protocol executes \
         and the other refuses, as `memtx replay` labels the steps.\n\n\
         ## Verdict\n\n"
    );
    for line in availability::summary(&presets)
        .into_iter()
        .chain(availability::paired_summary(&paired))
    {
        md.push_str(&format!("- {line}\n"));
    }
    for ((preset, rows), (_, pairs)) in presets.iter().zip(&paired) {
        md.push_str(&format!(
            "\n## Preset `{preset}`\n\n{}\n",
            availability::table(rows)
        ));
        for line in availability::verdict(preset, rows) {
            md.push_str(&format!("- {line}\n"));
        }
        md.push_str(&format!(
            "\nPaired, on the same operations:\n\n{}\n",
            availability::paired_table(pairs)
        ));
        for line in availability::paired_verdict(preset, pairs) {
            md.push_str(&format!("- {line}\n"));
        }
    }
    write_atomic(&args.out.join("availability.md"), md.as_bytes())
}

/// How each preset's section of the ablation matrix starts.
const SECTION_PREFIX: &str = "## Preset";
/// The heading of the paper section, kept by a run without `--paper`.
const PAPER_SECTION: &str = "## Preset `paper`";

/// The section of Markdown `text` that starts with the line `heading`, up to the next `## `
/// heading (or the end), with a leading blank line; empty when there is none.
fn kept_section(text: &str, heading: &str) -> String {
    let Some(start) = text.find(&format!("\n{heading}\n")) else {
        return String::new();
    };
    let body = &text[start + 1..];
    let end = body[heading.len()..]
        .find("\n## ")
        .map_or(body.len(), |i| heading.len() + i + 1);
    format!("\n{}", &body[..end])
}

/// Writes `<traces>/README.md`: what the suite is and one table row per saved trace.
fn write_regressions_readme(traces: &Path) -> Result<(), UserError> {
    let mut files = crate::trace::regression_traces(traces);
    files.sort();
    let mut md = format!(
        "# Regression traces\n\nEach file was found and saved by `memtx check` (its `command` field records the \
         command) and is replayed by `cargo test` (`checker/tests/regressions.rs`): under its own variant it must \
         reproduce the recorded violation at the recorded step; under the fixed protocol (`--variant memtx`) the same \
         steps must be refused at a named step or hold every invariant. Each folder is named after the preset whose \
         check found its traces (as `memtx check` saves them, `traces/<preset>/<variant>-<key>.trace.json`): \
         `quick/` holds every variant's violations on one agent, `paper/` the same on two agents, and a folder \
         named after a focused preset (`observations/`, `isolation/`) those only that preset shows. This file and the traces are regenerated by `{REGENERATE} --paper`.\n\n\
         `scenarios/` holds scenario files written by hand (the format: [docs/traces.md](../docs/traces.md)): \
         the twelve scripted cases, a trap and a control per corruption family, replayed by `cargo test` \
         (`checker/tests/trace_scenarios.rs`). `logs/` holds event logs written by hand (the format: \
         [docs/event-log.md](../docs/event-log.md)), validated by `cargo test` (`checker/tests/validate_log.rs`).\n\n\
         | file | variant | property | steps | found by |\n|---|---|---|---|---|\n"
    );
    for f in files {
        let t = crate::trace::Trace::read(&f)?;
        let rel = f.strip_prefix(traces).unwrap_or(&f).display().to_string();
        md.push_str(&format!(
            "| `{rel}` | `{}` | {} | {} | `{}` |\n",
            t.config.variant.name(),
            t.property_key(),
            t.steps.len(),
            t.command
        ));
    }
    write_atomic(&traces.join("README.md"), md.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A regeneration without --paper keeps the paper table and only it.
    #[test]
    fn the_paper_section_is_kept_whole_and_alone() {
        let old = "# Ablation matrix\n\nintro\n\n## Preset `quick`\n\n| q |\n\n## Preset `paper`\n\n| p1 |\n| p2 |\n";
        assert_eq!(
            kept_section(old, PAPER_SECTION),
            "\n## Preset `paper`\n\n| p1 |\n| p2 |\n"
        );
        let with_later = format!("{old}\n## Notes\n\nn\n");
        assert_eq!(
            kept_section(&with_later, PAPER_SECTION),
            "\n## Preset `paper`\n\n| p1 |\n| p2 |\n\n"
        );
        assert_eq!(kept_section("# nothing\n", PAPER_SECTION), "");
    }
}
