//! `memtx conformance --out DIR [--preset P]... [--budget STATES] [--regressions DIR]`: the
//! conformance suite generated from the model ([`crate::conformance`]), written under DIR.
//!
//! Exit 0 when every rule has a witness; 1 when some rule has none (the index and the output
//! name them); 2 on bad input.

use crate::cli::ConformanceArgs;
use crate::conformance::{generate, CaseKind};
use crate::error::{ErrorKind, UserError};
use crate::output;

/// Runs `memtx conformance`; returns the exit code.
pub fn conformance_command(args: &ConformanceArgs) -> Result<u8, UserError> {
    if !(1..=100_000_000).contains(&args.budget) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--budget must be between 1 and 100000000 states",
        ));
    }
    crate::fsutil::check_writable_dir(&args.out, "--out")?;
    let presets: Vec<String> = if args.presets.is_empty() {
        memtx_model::presets::SUITE
            .iter()
            .map(|e| e.name.to_string())
            .collect()
    } else {
        args.presets.clone()
    };
    let start = std::time::Instant::now();
    let regressions = args
        .regressions
        .is_dir()
        .then_some(args.regressions.as_path());
    let suite = generate(&presets, args.budget, regressions)?;
    suite.write(&args.out)?;
    let count = |k: CaseKind| suite.cases.iter().filter(|c| c.kind == k).count();
    let total = memtx_model::rules::RULES.len();
    let mut text = format!(
        "Conformance suite in {} ({} cases: {} rule witnesses, {} traps, {} controls, {} harms, {} bound; {:.1} s)\n",
        crate::input::user_path(&args.out.to_string_lossy()),
        suite.cases.len(),
        count(CaseKind::Witness),
        count(CaseKind::Trap),
        count(CaseKind::Control),
        count(CaseKind::Harm),
        count(CaseKind::Bound),
        start.elapsed().as_secs_f64()
    );
    for s in &suite.searched {
        text.push_str(&format!(
            "  preset {}: {} states searched{}\n",
            s.preset,
            s.states,
            if s.complete {
                " (all, up to symmetry)"
            } else {
                " (stopped at --budget)"
            }
        ));
    }
    if regressions.is_none() {
        text.push_str(&format!(
            "  no {} folder: no scripted traps and controls, no harms\n",
            crate::input::user_path(&args.regressions.to_string_lossy())
        ));
    }
    text.push_str(&format!(
        "Rules witnessed: {} of {total} ({} of them, {}, refusals of the bounded model, by cases of kind bound that an implementation without such bounds skips)",
        total - suite.unreached.len(),
        crate::conformance::MODEL_BOUNDS.len(),
        crate::conformance::MODEL_BOUNDS.join(", ")
    ));
    if suite.unreached.is_empty() {
        text.push('\n');
    } else {
        text.push_str(&format!(
            "; NOT reached by any preset searched: {}\n",
            suite.unreached.join(", ")
        ));
    }
    output::print(&text)?;
    Ok(if suite.unreached.is_empty() { 0 } else { 1 })
}
