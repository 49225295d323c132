//! Event logs of MemTX implementations, validated against the model (`memtx validate-log`).
//!
//! An implementation logs what it did in its own names, one JSON event per line
//! (docs/event-log.md): [`event`] holds a line's types and [`read`] reads one strictly; [`names`] numbers one run's names in
//! order of appearance, discretises authority and confidence by the protocol's thresholds and
//! infers a configuration that fits the run; [`validate`] replays the run on the model's step
//! function and reports the first event where the implementation and the protocol disagree;
//! [`emit`] writes a path through the model as a log (round trips, benchmarks, conformance).
//!
//! A log holds one or more runs, each opened by a header line; runs are independent (each
//! starts from the model's initial state) and are read one at a time, so a long log of short
//! runs is validated in memory proportional to its longest run.

pub mod emit;
pub mod event;
pub mod names;
pub mod read;
pub mod validate;

use crate::error::{ErrorKind, UserError};
use event::{Event, Header, Line};
use names::{Inferred, LogOptions};
use read::parse_line;
use std::io::{BufRead, Read};
use std::path::Path;
use validate::{validate_run, Malformed, RunResult};

/// The longest line memtx reads (a longer one is refused, not buffered).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// One run of a log, validated.
#[derive(Clone, Debug)]
pub struct Run {
    /// Its name (the header's `run`, or `run N`).
    pub name: String,
    /// The line of its header.
    pub line: usize,
    /// Its events.
    pub events: usize,
    /// Its names and configuration.
    pub inferred: Inferred,
    /// The verdict.
    pub result: RunResult,
}

impl Run {
    /// Does the run conform, with every invariant holding?
    pub fn clean(&self) -> bool {
        self.result.divergence.is_none() && self.result.broken.is_empty()
    }
}

fn malformed(origin: &str, line: usize, why: &str) -> UserError {
    UserError::with_fix(
        ErrorKind::Malformed,
        format!("{origin}: line {line}: {}", crate::error::one_line(why)),
        "see docs/event-log.md for the format",
    )
}

/// Reads the log at `path` and validates each run as `options` say, calling `each` with every
/// run as soon as it is judged. Malformed input (a line that is not an event, a record used
/// before it exists, a run the model cannot hold) is a one-line [`UserError`] naming the line.
pub fn validate_log(
    path: &Path,
    options: &LogOptions,
    mut each: impl FnMut(&Run) -> Result<(), UserError>,
) -> Result<(), UserError> {
    let origin = crate::input::user_path(&path.to_string_lossy());
    if let Some(what) = crate::fsutil::not_regular(path) {
        return Err(UserError::with_fix(
            ErrorKind::Io,
            format!("cannot read the event log {origin}: it is {what}"),
            "name a log file",
        ));
    }
    let file = std::fs::File::open(path)
        .map_err(|e| UserError::io("cannot read the event log", path, &e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut number = 0usize;
    let mut current: Option<(Header, usize, Vec<Event>)> = None;
    let mut runs = 0usize;
    let mut finish = |run: Option<(Header, usize, Vec<Event>)>, runs: &mut usize| {
        let Some((header, line, events)) = run else {
            return Ok(());
        };
        *runs += 1;
        let run = judge_run(&origin, header, line, events, options, *runs)?;
        each(&run)
    };
    loop {
        buf.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| UserError::io("cannot read the event log", path, &e))?;
        if read == 0 {
            break;
        }
        number += 1;
        if buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
            return Err(malformed(
                &origin,
                number,
                &format!(
                    "the line is longer than {} (an event is one short line)",
                    crate::input::show_size(MAX_LINE_BYTES as u64)
                ),
            ));
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            return Err(malformed(&origin, number, "the line is not UTF-8 text"));
        };
        if text.trim().is_empty() {
            continue;
        }
        match parse_line(text, number).map_err(|why| malformed(&origin, number, &why))? {
            Line::Header(h) => {
                finish(current.take(), &mut runs)?;
                current = Some((h, number, Vec::new()));
            }
            Line::Event(e) => match &mut current {
                Some((_, _, events)) => events.push(*e),
                None => {
                    return Err(malformed(
                        &origin,
                        number,
                        "an event before any run header: a log begins with {\"format\": \"memtx-event-log\", \"version\": 1}",
                    ))
                }
            },
        }
    }
    finish(current.take(), &mut runs)?;
    if runs == 0 {
        return Err(malformed(
            &origin,
            number.max(1),
            "the log holds no run (it is empty): a log begins with {\"format\": \"memtx-event-log\", \"version\": 1}",
        ));
    }
    Ok(())
}

fn judge_run(
    origin: &str,
    header: Header,
    line: usize,
    events: Vec<Event>,
    options: &LogOptions,
    index: usize,
) -> Result<Run, UserError> {
    let name = header.run.clone().unwrap_or_else(|| format!("run {index}"));
    let ops: Vec<&event::EventOp> = events.iter().map(|e| &e.op).collect();
    // Each event's refusal as the log gives it: `None` performed, `Some("")` refused for a
    // reason not said.
    let refused: Vec<Option<&str>> = events
        .iter()
        .map(|e| {
            e.outcome
                .as_ref()
                .and_then(|o| o.refused.as_ref())
                .map(|r| r.as_deref().unwrap_or(""))
        })
        .collect();
    let inferred =
        names::infer(&header.sources, &ops, &refused, options).map_err(|(at, why)| {
            let at_line = at.map_or(line, |i| events[i].line);
            malformed(
                origin,
                at_line,
                &format!("run {}: {why}", crate::input::cut(&name)),
            )
        })?;
    let description = format!(
        "Run {} of event log {origin} (line {line}), as a memtx scenario: names numbered in order of appearance ({}); {}",
        crate::input::cut(&name),
        name_map(&inferred),
        inferred.names.discretisation()
    );
    let result = validate_run(&events, &inferred, description, options)
        .map_err(|Malformed { line, why }| malformed(origin, line, &why))?;
    Ok(Run {
        name,
        line,
        events: events.len(),
        inferred,
        result,
    })
}

/// `agents a0 planner, a1 critic; slots s0 order-17.refund-eligible; ...` (the run's names).
pub fn name_map(inf: &Inferred) -> String {
    let n = &inf.names;
    let list = |prefix: &str, items: Vec<String>| {
        items
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{prefix}{i} {s}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = vec![format!("agents {}", list("a", n.agents.clone()))];
    if !n.keys.is_empty() {
        parts.push(format!(
            "slots {}",
            list(
                "s",
                n.keys
                    .iter()
                    .map(|k| format!("{}.{}", k.entity, k.attribute))
                    .collect()
            )
        ));
        parts.push(format!("values {}", list("v", n.values.clone())));
    }
    let sources: Vec<String> = n
        .sources
        .iter()
        .map(|s| format!("src{} {}", s.id, s.name))
        .collect();
    parts.push(format!("sources {}", sources.join(", ")));
    parts.join("; ")
}
