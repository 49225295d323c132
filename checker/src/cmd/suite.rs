//! `memtx suite`: every preset of the suite, each checked exhaustively, and the union of
//! their rule coverage (docs/protocol.md §1, revision 2).
//!
//! "Exhaustive" is only worth what the enumerated domain lets happen, and no single preset
//! within this machine's reach lets every rule of the protocol fire. The suite is the set of
//! presets that together do ([`memtx_model::presets::SUITE`]). It passes when every preset
//! is complete within its bounds, no invariant is violated, every preset reaches the examples
//! it must reach, every example of §9 is reached by some preset, and **every rule of the
//! protocol is exercised by some preset**; otherwise it names what failed and exits 1.

use crate::cli::{CheckArgs, SuiteArgs};
use crate::cmd::check::check;
use crate::error::UserError;
use crate::report::{RuleCoverage, RunReport, Verdict};
use memtx_model::presets::SUITE;
use memtx_model::properties::PROPERTIES;
use serde::Serialize;
use std::fmt::Write as _;

/// The outcome of a suite run.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteReport {
    /// `memtx <version>`.
    pub tool: String,
    /// The command line.
    pub command: String,
    /// `--quick`: the subset run by `cargo test`.
    pub quick: bool,
    /// One check per preset, in suite order.
    pub presets: Vec<RunReport>,
    /// The union of the presets' rule coverage.
    pub union: RuleCoverage,
    /// Examples of §9 reached by no preset.
    pub examples_missing: Vec<String>,
    /// `pass` or `fail`.
    pub result: String,
    /// What failed, one item per cause (empty on a pass).
    pub failures: Vec<String>,
}

/// The check arguments of one preset of the suite: a reference check of the protocol.
fn preset_args(name: &str, args: &SuiteArgs) -> CheckArgs {
    CheckArgs {
        threads: args.threads,
        ..crate::cmd::reference::reference_args(name, "memtx", args.traces.clone())
    }
}

/// Runs the suite (or its `--quick` subset).
pub fn run_suite(args: &SuiteArgs, command: &str) -> Result<SuiteReport, UserError> {
    let mut presets = Vec::new();
    for entry in SUITE.iter().filter(|e| e.quick || !args.quick) {
        if !args.json {
            eprintln!("memtx suite: checking {} ({})", entry.name, entry.focus);
        }
        presets.push(check(&preset_args(entry.name, args), command)?);
        if crate::interrupt::interrupted() {
            break;
        }
    }
    Ok(SuiteReport::from_reports(presets, args.quick, command))
}

impl SuiteReport {
    /// The suite's verdict over the checks of its presets (in suite order).
    pub fn from_reports(presets: Vec<RunReport>, quick: bool, command: &str) -> SuiteReport {
        let union = RuleCoverage::union(presets.iter().filter_map(|r| r.rules.as_ref()));
        let mut failures = Vec::new();
        for r in &presets {
            if !r.coverage.is_exhaustive() {
                failures.push(format!("{}: {}", r.config.preset, r.coverage));
            }
            for p in r.properties.iter().filter(|p| p.verdict.is_failure()) {
                failures.push(format!("{}: {} {}", r.config.preset, p.key, p.verdict));
            }
        }
        let examples_missing: Vec<String> = PROPERTIES
            .iter()
            .filter(|p| !p.is_invariant())
            .filter(|p| {
                !presets.iter().any(|r| {
                    r.property(p.key)
                        .is_some_and(|o| o.verdict == Verdict::ExampleFound)
                })
            })
            .map(|p| p.key.to_string())
            .collect();
        if !examples_missing.is_empty() {
            failures.push(format!(
                "examples reached by no preset: {}",
                examples_missing.join(", ")
            ));
        }
        let never = union.never();
        if !never.is_empty() {
            failures.push(format!(
                "rules exercised by no preset: {}",
                never.join(", ")
            ));
        }
        SuiteReport {
            tool: crate::trace::tool_id(),
            command: command.to_string(),
            quick,
            presets,
            union,
            examples_missing,
            result: if failures.is_empty() { "pass" } else { "fail" }.into(),
            failures,
        }
    }

    /// Did the suite pass?
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// One cell of the preset × property matrix.
    fn cell(r: &RunReport, key: &str) -> &'static str {
        match r.property(key).map(|p| p.verdict) {
            Some(Verdict::Holds) => "ok",
            Some(Verdict::Violated) => "FAIL",
            Some(Verdict::ExampleFound) => "yes",
            Some(Verdict::ExampleNotFound) => "MISS",
            Some(Verdict::NotChecked) | None => "·",
        }
    }

    /// The text summary: the preset × property matrix, the union coverage, the result.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "memtx suite{}: {} presets, each exhaustive within its bounds unless marked",
            if self.quick { " --quick" } else { "" },
            self.presets.len()
        );
        let keys: Vec<&str> = PROPERTIES.iter().map(|p| p.key).collect();
        let _ = write!(
            out,
            "{:<13} {:>11} {:>5} {:>7}",
            "preset", "states", "depth", "secs"
        );
        for k in &keys {
            let _ = write!(out, " {k:>4}");
        }
        let _ = writeln!(out, "  rules");
        for r in &self.presets {
            let _ = write!(
                out,
                "{:<13} {:>11} {:>5} {:>7.1}",
                r.config.preset, r.unique_states, r.max_depth, r.seconds
            );
            for k in &keys {
                let _ = write!(out, " {:>4}", Self::cell(r, k));
            }
            let rules = r
                .rules
                .as_ref()
                .map_or("-".into(), |c| format!("{}/{}", c.exercised, c.total));
            let complete = if r.coverage.is_exhaustive() {
                String::new()
            } else {
                format!("  ({})", r.coverage)
            };
            let _ = writeln!(out, "  {rules}{complete}");
        }
        let _ = writeln!(
            out,
            "(ok: invariant holds; yes: example reached; ·: example not required of this preset)"
        );
        for r in &self.presets {
            for p in r.properties.iter().filter(|p| p.verdict.is_failure()) {
                match (&p.trace, &p.replay_command) {
                    (Some(trace), Some(replay)) => {
                        let _ = writeln!(
                            out,
                            "{} {} {}: counterexample of {} steps saved to {trace}\n  replay: {replay}",
                            r.config.preset,
                            p.key,
                            p.verdict,
                            p.trace_len.unwrap_or_default()
                        );
                    }
                    _ => {
                        let _ = writeln!(out, "{} {} {}", r.config.preset, p.key, p.verdict);
                    }
                }
            }
        }
        let _ = writeln!(out, "union: {}", self.union.summary_line());
        let _ = writeln!(out, "{}", self.result_line());
        out
    }

    /// `result: PASS (…)` or `result: FAIL (what failed)`.
    pub fn result_line(&self) -> String {
        if self.passed() {
            "result: PASS (every invariant holds on every preset, every example and every rule is exercised)".into()
        } else {
            format!("result: FAIL ({})", self.failures.join("; "))
        }
    }

    /// The suite as Markdown (`--report DIR` writes it as `suite.md`).
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# memtx suite{}\n",
            if self.quick { " --quick" } else { "" }
        );
        let _ = writeln!(
            s,
            "**{}.** Command: `{}`. {}\n",
            if self.passed() { "PASS" } else { "FAIL" },
            self.command,
            self.union.summary_line()
        );
        let keys: Vec<&str> = PROPERTIES.iter().map(|p| p.key).collect();
        let _ = write!(s, "| preset | states | depth | seconds |");
        for k in &keys {
            let _ = write!(s, " {k} |");
        }
        let _ = writeln!(s, " rules |");
        let _ = write!(s, "|---|---:|---:|---:|");
        for _ in &keys {
            let _ = write!(s, "---|");
        }
        let _ = writeln!(s, "---:|");
        for r in &self.presets {
            let _ = write!(
                s,
                "| [`{}`]({}-memtx.md) | {} | {} | {:.1} |",
                r.config.preset, r.config.preset, r.unique_states, r.max_depth, r.seconds
            );
            for k in &keys {
                let _ = write!(s, " {} |", Self::cell(r, k));
            }
            let rules = r
                .rules
                .as_ref()
                .map_or("-".into(), |c| format!("{}/{}", c.exercised, c.total));
            let _ = writeln!(s, " {rules} |");
        }
        if !self.failures.is_empty() {
            let _ = writeln!(s, "\n## Failures\n");
            for f in &self.failures {
                let _ = writeln!(s, "- {f}");
            }
        }
        let _ = writeln!(s, "\n## Union rule coverage\n");
        s.push_str(&self.union.table_markdown());
        s
    }
}

/// `memtx suite`: runs, prints, writes reports; exit 0 on a pass, 130 when interrupted, 1
/// otherwise.
pub fn suite_command(args: &SuiteArgs, command: &str) -> Result<u8, UserError> {
    if let Some(dir) = &args.report {
        crate::fsutil::check_writable_dir(dir, "--report")?;
    }
    crate::fsutil::check_writable_dir(&args.traces, "--traces")?;
    crate::interrupt::install()?;
    let report = run_suite(args, command)?;
    if let Some(dir) = &args.report {
        for r in &report.presets {
            let name = format!("{}-memtx", r.config.preset);
            r.write_json(&dir.join(format!("{name}.json")))?;
            r.write_markdown(&dir.join(format!("{name}.md")))?;
            r.write_html(&dir.join(format!("{name}.html")))?;
        }
        crate::fsutil::write_atomic(
            &dir.join("index.html"),
            crate::report::html::suite_page(&report).as_bytes(),
        )?;
        crate::fsutil::write_atomic(&dir.join("suite.md"), report.to_markdown().as_bytes())?;
        crate::fsutil::write_atomic(
            &dir.join("suite.json"),
            crate::fsutil::json_pretty(&report).as_bytes(),
        )?;
    }
    if args.json {
        println!("{}", crate::fsutil::json_pretty(&report));
    } else {
        print!("{}", report.render_text());
    }
    if crate::interrupt::interrupted() {
        eprintln!(
            "memtx suite: interrupted after {} of its presets: the suite is incomplete",
            report.presets.len()
        );
        return Ok(crate::interrupt::EXIT_CODE);
    }
    Ok(if report.passed() { 0 } else { 1 })
}
