//! `memtx replay TRACE [--variant NAME] [--preset NAME] [--json] [--write-states OUT]
//! [--max-input-size SIZE]`: re-execute a saved trace or a scenario file and judge it.
//!
//! Exit 0 when the trace's recorded expectation and every step's expectation are met (or, under
//! `--variant` naming another variant than the trace's, when every invariant holds at every
//! step); 1 when not (the first unmet expectation is named: `step 4: r1: expected life
//! Committed, got Quarantined`); 2 when the file is too large, not JSON, malformed (a
//! malformed expectation included), of an unknown version, or a step is not enabled without
//! expecting to be refused (which step and why).

use crate::cli::ReplayArgs;
use crate::error::{ErrorKind, UserError};
use crate::output;
use crate::setup;
use crate::trace::replay::replay;
use crate::trace::{Expectation, Trace};

/// Runs `memtx replay`; returns the exit code.
pub fn replay_command(args: &ReplayArgs) -> Result<u8, UserError> {
    let limit = setup::input_limit(args.max_input_size.as_deref())?;
    let trace = Trace::read_limited(&args.trace, limit)?;
    let variant = match &args.variant {
        Some(name) => {
            Some(setup::variant(name).map_err(|m| UserError::new(ErrorKind::UnknownVariant, m))?)
        }
        None => None,
    };
    let overridden = variant.is_some_and(|v| v != trace.config.variant);
    if overridden && args.write_states.is_some() {
        return Err(UserError::with_fix(
            ErrorKind::Usage,
            "--write-states writes the states of the trace's own variant",
            "leave out --variant (or name the trace's own variant)",
        ));
    }
    if let Some(name) = &args.preset {
        let expected = setup::config(name, &Default::default(), trace.config.variant)
            .map_err(|m| UserError::new(ErrorKind::Usage, m))?;
        let mut recorded = trace.config.clone();
        recorded.preset = expected.preset.clone();
        trace.check_config(&expected).or_else(|e| {
            if recorded == expected {
                Ok(())
            } else {
                Err(e)
            }
        })?;
    }
    let input = (args.trace.as_path(), "the trace being replayed");
    for (out, what) in [
        (&args.html, "--html"),
        (&args.write_states, "--write-states"),
    ] {
        if let Some(out) = out {
            crate::fsutil::check_writable_file(out, what)?;
            crate::fsutil::check_not_input(out, what, input.0, input.1)?;
        }
    }
    if let (Some(html), Some(states)) = (&args.html, &args.write_states) {
        if html == states || crate::fsutil::same_file(html, states) {
            return Err(UserError::with_fix(
                ErrorKind::Usage,
                format!("--html and --write-states both name {}", html.display()),
                "give each its own file",
            ));
        }
    }
    let report = replay(&trace, variant).map_err(|e| e.for_trace(&trace))?;
    if let Some(out) = &args.html {
        let page =
            crate::report::html::trace_page(&trace, &report, &args.trace.display().to_string());
        crate::fsutil::write_atomic(out, page.as_bytes())?;
    }
    if let Some(out) = &args.write_states {
        report.completed(&trace).write(out)?;
    }
    let met = if overridden {
        report.meets(&Expectation::all_hold())
    } else {
        report.expectation_met()
    };
    if args.json {
        let mut json = report.to_json();
        if let Some(obj) = json.as_object_mut() {
            obj.insert("expectation_met".into(), met.into());
        }
        output::println(&crate::fsutil::json_pretty(&json))?;
    } else {
        output::print(&report.render_text())?;
        if overridden {
            output::println(&format!(
                "under variant {} (trace recorded under {}): {}",
                variant.map(|v| v.name()).unwrap_or_default(),
                trace.config.variant.name(),
                if met {
                    "every invariant holds at every step"
                } else {
                    "an invariant fails"
                }
            ))?;
        }
        if let Some(out) = &args.write_states {
            output::println(&format!("completed trace written to {}", out.display()))?;
        }
        if let Some(out) = &args.html {
            output::println(&format!("trace page written to {}", out.display()))?;
        }
    }
    Ok(if met { 0 } else { 1 })
}
