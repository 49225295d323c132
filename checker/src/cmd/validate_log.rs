//! `memtx validate-log LOG [--variant NAME] [--scenarios DIR] [--json]`: an implementation's
//! event log (docs/event-log.md) checked against the model, run by run.
//!
//! Exit 0 when every run conforms and every invariant holds along it; 1 when a run diverges
//! (its first divergence is named in the implementation's words, and the events before it are
//! written as a scenario that `memtx replay` replays) or conforms while the protocol's state
//! breaks an invariant (possible under a variant other than `memtx`); 2 when the log is
//! malformed (one line naming the line at fault).

use crate::cli::ValidateLogArgs;
use crate::error::{ErrorKind, UserError};
use crate::log::names::{LogOptions, MISSABLE};
use crate::log::{name_map, validate_log, Run};
use crate::output;
use crate::setup;
use crate::trace::{replay_command, shell_quote};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A file name for run `name`: letters, digits, `-` and `_` kept, the rest `_`.
fn file_stem(name: &str, index: usize) -> String {
    let mut s: String = name
        .chars()
        .take(60)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        s = "run".into();
    }
    format!("{index:03}-{s}")
}

/// Runs `memtx validate-log`; returns the exit code.
pub fn validate_log_command(args: &ValidateLogArgs) -> Result<u8, UserError> {
    let variant =
        setup::variant(&args.variant).map_err(|m| UserError::new(ErrorKind::UnknownVariant, m))?;
    let options = options(args, variant)?;
    let shown = crate::input::user_path(&args.log.to_string_lossy());
    let mut runs: Vec<Value> = Vec::new();
    let (mut total, mut diverging, mut breaking, mut events) = (0usize, 0usize, 0usize, 0usize);
    if !args.json {
        output::println(&format!(
            "Event log {shown}, against the protocol variant {}",
            crate::trace::scenario::serde_name(&variant)
        ))?;
    }
    validate_log(&args.log, &options, |run| {
        total += 1;
        events += run.events;
        let scenario = if run.clean() {
            None
        } else {
            Some(write_scenario(&args.scenarios, run, total)?)
        };
        diverging += usize::from(run.result.divergence.is_some());
        breaking += usize::from(!run.result.broken.is_empty());
        if args.json {
            runs.push(run_json(run, scenario.as_deref()));
            Ok(())
        } else {
            output::print(&run_text(run, scenario.as_deref()))
        }
    })?;
    let clean = diverging == 0 && breaking == 0;
    if args.json {
        let out = json!({
            "log": shown,
            "variant": variant,
            "runs": runs,
            "events": events,
            "conforms": diverging == 0,
            "invariants_hold": breaking == 0,
        });
        output::println(&crate::fsutil::json_pretty(&out))?;
    } else {
        let verdict = if clean {
            format!(
                "every run conforms ({total} run{}, {events} events), every invariant holds",
                if total == 1 { "" } else { "s" }
            )
        } else {
            let mut parts = Vec::new();
            if diverging > 0 {
                parts.push(format!("{diverging} of {total} runs diverge"));
            }
            if breaking > 0 {
                parts.push(format!("{breaking} of {total} runs break an invariant"));
            }
            parts.join("; ")
        };
        output::println(&format!("Result: {verdict}"))?;
    }
    Ok(if clean { 0 } else { 1 })
}

/// The validation options of the command line; unknown or record-creating kinds refused.
fn options(args: &ValidateLogArgs, variant: memtx_model::Variant) -> Result<LogOptions, UserError> {
    let mut missing = Vec::new();
    for kind in &args.missing {
        let kind = kind.trim();
        match MISSABLE.iter().find(|m| **m == kind) {
            Some(m) => {
                if !missing.contains(m) {
                    missing.push(*m)
                }
            }
            None if ["observe", "stage", "call-tool"].contains(&kind) => {
                return Err(UserError::with_fix(
                    ErrorKind::Usage,
                    format!("--missing {kind}: a {kind} creates a record the log names, so it cannot be left out"),
                    format!("choose among {}", MISSABLE.join(", ")),
                ))
            }
            None => {
                return Err(UserError::with_fix(
                    ErrorKind::Usage,
                    format!("--missing: unknown operation \"{}\"", crate::input::cut(kind)),
                    format!("choose among {}", MISSABLE.join(", ")),
                ))
            }
        }
    }
    if !missing.is_empty() && !(1..=8).contains(&args.max_missing) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--max-missing must be between 1 and 8",
        ));
    }
    let config = match (&args.preset, &args.domain) {
        (None, None) => None,
        (preset, domain) => {
            let name = preset.as_deref().unwrap_or("full");
            let cfg = setup::config_with_domain(
                name,
                domain.as_deref(),
                crate::input::MAX_INPUT_BYTES,
                &Default::default(),
                variant,
            )
            .map_err(|m| UserError::new(ErrorKind::InvalidConfig, m))?;
            let label = match domain {
                Some(d) => format!("{name}+{}", crate::input::user_path(&d.to_string_lossy())),
                None => name.to_string(),
            };
            Some((cfg, label))
        }
    };
    Ok(LogOptions {
        variant,
        missing,
        max_missing: args.max_missing,
        config,
    })
}

fn write_scenario(dir: &Path, run: &Run, index: usize) -> Result<PathBuf, UserError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| UserError::io("cannot create the scenarios directory", dir, &e))?;
    let path = dir.join(format!("{}.scenario.json", file_stem(&run.name, index)));
    crate::fsutil::write_atomic(&path, run.result.scenario.to_json_string().as_bytes())?;
    Ok(path)
}

fn run_text(run: &Run, scenario: Option<&Path>) -> String {
    let r = &run.result;
    let mut out = format!(
        "run {} (line {}, {} events): {}\n",
        crate::input::cut(&run.name),
        run.line,
        run.events,
        match &r.divergence {
            None => "conforms".to_string(),
            Some(d) => format!(
                "DIVERGES at event {} (line {}, {}): {}",
                d.event, d.line, d.action, d.what
            ),
        }
    );
    if !r.inserted.is_empty() {
        let steps: Vec<String> = r
            .inserted
            .iter()
            .map(|s| {
                format!(
                    "{} before event {} (line {})",
                    s.action, s.before_event, s.line
                )
            })
            .collect();
        out.push_str(&format!(
            "  {} step(s) the log leaves out, found by search: {}\n",
            r.inserted.len(),
            steps.join("; ")
        ));
    }
    for b in &r.broken {
        out.push_str(&format!(
            "  after event {} (line {}) the protocol's state breaks {} {}\n",
            b.event, b.line, b.key, b.name
        ));
    }
    if let Some(path) = scenario {
        let before = r.divergence.as_ref().map_or(run.events, |d| d.event - 1);
        let what = match &r.divergence {
            Some(_) => format!("the {before} events before it"),
            None => format!("its {before} events"),
        };
        out.push_str(&format!(
            "  names: {}\n  {}\n  {what}, as a scenario: {}\n",
            name_map(&run.inferred),
            run.inferred.names.discretisation(),
            replay_command(path)
        ));
    }
    out
}

fn run_json(run: &Run, scenario: Option<&Path>) -> Value {
    let r = &run.result;
    json!({
        "run": run.name,
        "line": run.line,
        "events": run.events,
        "compared": r.compared,
        "conforms": r.divergence.is_none(),
        "divergence": r.divergence,
        "broken": r.broken,
        "inserted": r.inserted,
        "names": name_map(&run.inferred),
        "discretisation": run.inferred.names.discretisation(),
        "scenario": scenario.map(|p| p.to_string_lossy().to_string()),
        "replay": scenario.map(|p| format!("memtx replay {}", shell_quote(&p.to_string_lossy()))),
    })
}
