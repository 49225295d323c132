//! The configuration as the reports print it: bounds and the enumerated domain choices (what
//! "exhaustive" covers), as Markdown tables and as one line.

use super::text::{escape, yes_no};
use memtx_model::config::{Domain, ValidityShape, WriteShape};
use memtx_model::Config;
use serde::Serialize;
use std::fmt::Write as _;

/// The serde name of an enum value (`committed-read`), as in traces and reports: one
/// function, the trace format's.
pub(crate) use crate::trace::scenario::serde_name;

fn list<T: Serialize>(items: &[T]) -> String {
    if items.is_empty() {
        return "none".into();
    }
    items.iter().map(serde_name).collect::<Vec<_>>().join(", ")
}

fn write_shape(w: &WriteShape) -> String {
    format!(
        "src{} {} {}",
        w.source,
        serde_name(&w.confidence),
        serde_name(&w.scope)
    )
}

fn validity_shape(v: &ValidityShape) -> &'static str {
    match v {
        ValidityShape::Open => "[now,∞)",
        ValidityShape::OneTick => "[now,now+1)",
        ValidityShape::FromNextTick => "[now+1,∞)",
    }
}

/// The configuration as Markdown: a bounds table and a table of the enumerated domain choices.
pub fn config_markdown(cfg: &Config) -> String {
    let b = &cfg.bounds;
    let mut s = String::new();
    let sources: Vec<String> = b
        .sources
        .iter()
        .enumerate()
        .map(|(i, a)| format!("src{i} {}", a.label()))
        .collect();
    let _ = writeln!(
        s,
        "Preset `{}`, variant `{}`.\n",
        cfg.preset,
        cfg.variant.name()
    );
    let _ = writeln!(s, "| bound | value |\n|---|---|");
    for (k, v) in [
        ("agents", b.agents.to_string()),
        ("records", b.records.to_string()),
        ("ticks", b.ticks.to_string()),
        ("slots", b.slots.to_string()),
        ("values", b.values.to_string()),
        ("sources (authority)", sources.join(", ")),
    ] {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    s.push('\n');
    s.push_str(&domain_markdown(&cfg.domain));
    s
}

/// The enumerated domain choices, one row each: what "exhaustive" covers.
pub(crate) fn domain_rows(d: &Domain) -> Vec<(&'static str, String)> {
    let writes: Vec<String> = d.writes.iter().map(write_shape).collect();
    let validities: Vec<&str> = d.validities.iter().map(validity_shape).collect();
    vec![
        ("tiers", list(&d.tiers)),
        ("isolation levels (non-external tiers)", list(&d.isolations)),
        ("staged kinds", list(&d.stage_kinds)),
        ("write shapes (source confidence scope)", writes.join(", ")),
        ("view scopes", list(&d.view_scopes)),
        ("validities of staged beliefs", validities.join(", ")),
        ("largest belief parent set", d.belief_parents.to_string()),
        ("largest view parent set", d.view_parents.to_string()),
        ("largest tool-call support set", d.support.to_string()),
        (
            "raw observations (Observe, Adopt)",
            yes_no(d.observe).into(),
        ),
        ("reversible tool calls", yes_no(d.reversible_calls).into()),
        ("revocations", yes_no(d.revocations).into()),
        ("review resolutions", yes_no(d.reviews).into()),
        ("operations proposed", serde_name(&d.enumeration)),
    ]
}

/// The enumerated domain choices as a Markdown table (what "exhaustive" covers).
pub fn domain_markdown(d: &Domain) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| domain choice | enumerated |\n|---|---|");
    for (k, v) in domain_rows(d) {
        let _ = writeln!(s, "| {k} | {} |", escape(&v));
    }
    s
}

/// The enumerated domain choices on one line, for the summary printed before a run.
/// `agents 1, records 3, ticks 0, slots 1, values 2, sources 3`: the bounds in one phrase, as
/// the first line of a check's and a simulation's summary gives them.
pub fn bounds_phrase(cfg: &Config) -> String {
    let b = &cfg.bounds;
    format!(
        "agents {}, records {}, ticks {}, slots {}, values {}, sources {}",
        b.agents,
        b.records,
        b.ticks,
        b.slots,
        b.values,
        b.sources.len()
    )
}

/// The domain in one line.
pub fn domain_line(d: &Domain) -> String {
    domain_rows(d)
        .into_iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join("; ")
}
