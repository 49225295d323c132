//! `--report DIR`: a check's `<name>.json` (the full [`CheckResult`]) and `<name>.md`.

use crate::check::{render_text, CheckResult, Verdict};
use crate::error::UserError;
use crate::fsutil::{json_pretty, write_atomic};
use std::path::Path;

/// Markdown form of a check: configuration and domain choices, counts, states per depth,
/// verdicts with trace links.
pub fn markdown(r: &CheckResult) -> String {
    let mut md = format!(
        "# memtx check: preset `{}`, variant `{}`\n\n",
        r.config.preset,
        r.config.variant.name()
    );
    md.push_str(&format!(
        "Command: `{}`  \nTool: {}  \nEngine: {} ({} threads{}{})\n\n",
        r.command,
        r.tool,
        r.engine.name(),
        r.threads,
        if r.symmetry { ", symmetry" } else { "" },
        if r.exact { ", exact" } else { "" }
    ));
    md.push_str(&format!("**Coverage: {}.**\n\n", r.coverage));
    md.push_str("| unique states | total states | max depth | seconds | states/s | peak memory (MiB) |\n|---|---|---|---|---|---|\n");
    md.push_str(&format!(
        "| {} | {} | {} | {:.2} | {:.0} | {} |\n\n",
        r.unique_states,
        r.total_states,
        r.max_depth,
        r.seconds,
        r.states_per_second,
        r.peak_memory_bytes
            .map(|b| (b >> 20).to_string())
            .unwrap_or_else(|| "-".into())
    ));
    md.push_str("## Configuration and domain choices\n\n```json\n");
    md.push_str(&json_pretty(&r.config));
    md.push_str("\n```\n\n## Verdicts\n\n| property | kind | verdict | steps | trace |\n|---|---|---|---|---|\n");
    for p in &r.properties {
        let v = match p.verdict {
            Verdict::Holds => "holds",
            Verdict::Violated => "**violated**",
            Verdict::ExampleFound => "example found",
            Verdict::ExampleNotFound => "**example not found**",
        };
        let trace = p
            .trace
            .as_ref()
            .map(|t| {
                format!(
                    "`{}` (`{}`)",
                    t.display(),
                    p.replay.clone().unwrap_or_default()
                )
            })
            .unwrap_or_default();
        md.push_str(&format!(
            "| {} | {} | {v} | {} | {trace} |\n",
            p.name,
            p.kind,
            p.length.map(|l| l.to_string()).unwrap_or_default()
        ));
    }
    if !r.states_per_depth.is_empty() {
        md.push_str("\n## Distinct states per depth\n\n| depth | states |\n|---|---|\n");
        for (d, n) in r.states_per_depth.iter().enumerate() {
            md.push_str(&format!("| {} | {n} |\n", d + 1));
        }
    }
    md.push_str("\n## Summary as printed\n\n```\n");
    md.push_str(&render_text(r));
    md.push_str("```\n");
    md
}

/// Writes `<dir>/<name>.json` and `<dir>/<name>.md` atomically.
pub fn write_check_report(r: &CheckResult, dir: &Path, name: &str) -> Result<(), UserError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| UserError::io("create the report directory", dir, &e))?;
    write_atomic(&dir.join(format!("{name}.json")), json_pretty(r).as_bytes())?;
    write_atomic(&dir.join(format!("{name}.md")), markdown(r).as_bytes())
}
