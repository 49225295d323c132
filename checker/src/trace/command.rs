//! `memtx replay TRACE [--variant NAME] [--json]`: re-execute a saved trace and judge it.
//!
//! Exit 0 when the trace's recorded expectation is met (or, under `--variant` naming another
//! variant than the trace's, when every invariant holds at every step); 1 when not; 2 when the
//! file is malformed, of an unknown version, or a step is not enabled (which step and why).

use crate::cli::ReplayArgs;
use crate::error::{ErrorKind, UserError};
use crate::setup;
use crate::trace::replay::replay;
use crate::trace::{Expectation, Trace};

/// Runs `memtx replay`; returns the exit code.
pub fn replay_command(args: &ReplayArgs) -> Result<u8, UserError> {
    let trace = Trace::read(&args.trace)?;
    let variant = match &args.variant {
        Some(name) => {
            Some(setup::variant(name).map_err(|m| UserError::new(ErrorKind::UnknownVariant, m))?)
        }
        None => None,
    };
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
    let overridden = variant.is_some_and(|v| v != trace.config.variant);
    let report = replay(&trace, variant)?;
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
        println!("{}", crate::fsutil::json_pretty(&json));
    } else {
        print!("{}", report.render_text());
        if overridden {
            println!(
                "under variant {} (trace recorded under {}): {}",
                variant.map(|v| v.name()).unwrap_or_default(),
                trace.config.variant.name(),
                if met {
                    "every invariant holds at every step"
                } else {
                    "an invariant fails"
                }
            );
        }
    }
    Ok(if met { 0 } else { 1 })
}
