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
pub use crate::report::suite::SuiteReport;
use memtx_model::presets::SUITE;

/// The check arguments of one preset of the suite: a reference check of the protocol.
fn preset_args(name: &str, args: &SuiteArgs) -> CheckArgs {
    CheckArgs {
        threads: args.threads,
        ..crate::cmd::reference::reference_args(name, "memtx", args.traces.clone())
    }
}

/// Runs the suite (or its `--quick` subset).
pub fn run_suite(args: &SuiteArgs, command: &str) -> Result<SuiteReport, UserError> {
    // Checked before the first preset starts (each check would refuse it, after the suite
    // had announced its first preset).
    if args.threads == 0 || args.threads > 256 {
        return Err(UserError::new(
            crate::error::ErrorKind::Usage,
            format!("--threads {} is out of range: use 1 to 256", args.threads),
        ));
    }
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
        crate::output::println(&crate::fsutil::json_pretty(&report))?;
    } else {
        crate::output::print(&report.render_text())?;
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
