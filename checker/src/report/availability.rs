//! The price of revision 3 in availability (`reports/availability.md`, issue 35): per preset,
//! the protocol (`memtx`) beside the paper's protocol (`paper-provenance`) and revision 2's
//! rules (`rev2-lineage`, `rev2-scopes`), on the same bounded universe.
//!
//! Everything here is computed from [`RunReport`]s of exhaustive runs that checked every
//! example: which examples each protocol reaches and at what shortest depth, and how many
//! irreversible calls each executes and how many its gate blocks. A call is counted once per
//! distinct state it is attempted from (the rule-coverage tally of `op.call-irreversible` and
//! of the `gate.block.*` rules: every distinct state is expanded once, each call once from it).
//! The two protocols reach different states, so these are totals over each protocol's own
//! reachable space, not a pairing of one call under both; the prose verdict says so.

use super::{RunReport, Verdict};
use memtx_model::properties::PROPERTIES;

/// The variants the protocol is compared with, in table order after `memtx`.
pub const COMPARED: [&str; 3] = ["paper-provenance", "rev2-lineage", "rev2-scopes"];

/// The rule that fires when an irreversible call executes.
const EXECUTED: &str = "op.call-irreversible";
/// The prefix of the rules that fire when the gate blocks an irreversible call.
const BLOCKED: &str = "gate.block.";

/// One protocol on one preset, as the table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The variant's name.
    pub variant: String,
    /// Distinct states.
    pub states: u64,
    /// Per example (E1, E2, … in table order): the shortest depth that reaches it, if any.
    pub examples: Vec<(String, Option<usize>)>,
    /// Irreversible calls executed (distinct state × call).
    pub executed: u64,
    /// Irreversible calls the gate blocked (distinct state × call).
    pub blocked: u64,
}

impl Row {
    /// The row of one run; `None` if the run stopped early or did not collect rule coverage
    /// (its counts would not be totals).
    pub fn of(r: &RunReport) -> Option<Row> {
        if !r.coverage.is_exhaustive() {
            return None;
        }
        let rules = r.rules.as_ref()?;
        let fired = |p: &dyn Fn(&str) -> bool| -> u64 {
            rules
                .rules
                .iter()
                .filter(|x| p(&x.id))
                .map(|x| x.fired)
                .sum()
        };
        let examples = PROPERTIES
            .iter()
            .filter(|p| !p.is_invariant())
            .map(|p| {
                let depth = r
                    .property(p.key)
                    .filter(|o| o.verdict == Verdict::ExampleFound)
                    .and_then(|o| o.trace_len);
                (p.key.to_string(), depth)
            })
            .collect();
        Some(Row {
            variant: r.variant.name().to_string(),
            states: r.unique_states,
            examples,
            executed: fired(&|id| id == EXECUTED),
            blocked: fired(&|id| id.starts_with(BLOCKED)),
        })
    }

    /// The share of attempted irreversible calls that executed, if any was attempted.
    fn share(&self) -> Option<f64> {
        let attempted = self.executed + self.blocked;
        (attempted > 0).then(|| self.executed as f64 / attempted as f64)
    }

    /// The Markdown table row.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("| `{}` | {} |", self.variant, self.states);
        for (_, depth) in &self.examples {
            match depth {
                Some(d) => out.push_str(&format!(" {d} |")),
                None => out.push_str(" — |"),
            }
        }
        let share = self
            .share()
            .map_or("—".to_string(), |s| format!("{:.1} %", s * 100.0));
        out.push_str(&format!(
            " {} | {} | {share} |",
            self.executed, self.blocked
        ));
        out
    }
}

/// The Markdown table of one preset: `rows[0]` is `memtx`.
pub fn table(rows: &[Row]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let keys: Vec<&str> = first.examples.iter().map(|(k, _)| k.as_str()).collect();
    let mut out = format!(
        "| protocol | states | {} | calls executed | calls blocked | executed of attempted |\n|---|---:|{}---:|---:|---:|\n",
        keys.join(" | "),
        "---:|".repeat(keys.len())
    );
    for row in rows {
        out.push_str(&row.to_markdown());
        out.push('\n');
    }
    out
}

/// The examples `other` reaches that `ours` does not, and those `ours` reaches later, as
/// (key, our depth, their depth).
fn differences<'a>(ours: &'a Row, other: &'a Row) -> (Vec<&'a str>, Vec<(&'a str, usize, usize)>) {
    let mut lost = Vec::new();
    let mut later = Vec::new();
    for ((key, mine), (_, theirs)) in ours.examples.iter().zip(&other.examples) {
        match (mine, theirs) {
            (None, Some(_)) => lost.push(key.as_str()),
            (Some(m), Some(t)) if m > t => later.push((key.as_str(), *m, *t)),
            _ => {}
        }
    }
    (lost, later)
}

/// What the protocol (`rows[0]`) costs against each other row, in sentences computed from the
/// table: examples lost or reached later, and the executed share of attempted calls.
pub fn verdict(preset: &str, rows: &[Row]) -> Vec<String> {
    let Some((ours, others)) = rows.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for other in others {
        let (lost, later) = differences(ours, other);
        let later: Vec<String> = later
            .iter()
            .map(|(key, m, t)| format!("{key} at {m} steps, not {t}"))
            .collect();
        let examples = match (lost.is_empty(), later.is_empty()) {
            (true, true) => format!(
                "reaches every example `{}` reaches, each as early",
                other.variant
            ),
            _ => {
                let mut parts = Vec::new();
                if !lost.is_empty() {
                    parts.push(format!("loses {}", lost.join(", ")));
                }
                if !later.is_empty() {
                    parts.push(format!("reaches {}", later.join(", ")));
                }
                parts.join(" and ")
            }
        };
        let calls = match (ours.share(), other.share()) {
            (Some(a), Some(b)) => format!(
                "executes {:.1} % of the irreversible calls it is asked for, against {:.1} %",
                a * 100.0,
                b * 100.0
            ),
            _ => "no irreversible call is attempted under one of them".to_string(),
        };
        out.push(format!(
            "`{preset}`, against `{}`: `memtx` {examples}; it {calls}.",
            other.variant
        ));
    }
    out
}

/// The verdict on top: per compared variant, over every preset, the examples `memtx` loses or
/// reaches later and the executed share of all attempted irreversible calls.
pub fn summary(presets: &[(String, Vec<Row>)]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, variant) in COMPARED.iter().enumerate() {
        let mut lost = Vec::new();
        let mut later = 0;
        let (mut ours, mut theirs) = ((0u64, 0u64), (0u64, 0u64));
        for (preset, rows) in presets {
            let (Some(a), Some(b)) = (rows.first(), rows.get(i + 1)) else {
                continue;
            };
            let (l, slower) = differences(a, b);
            lost.extend(l.iter().map(|key| format!("{key} on `{preset}`")));
            later += slower.len();
            ours = (ours.0 + a.executed, ours.1 + a.executed + a.blocked);
            theirs = (theirs.0 + b.executed, theirs.1 + b.executed + b.blocked);
        }
        let pct = |(x, n): (u64, u64)| {
            if n == 0 {
                "—".to_string()
            } else {
                format!("{:.1} %", x as f64 * 100.0 / n as f64)
            }
        };
        let examples = if lost.is_empty() {
            "loses no example".to_string()
        } else {
            format!("loses {}", lost.join(", "))
        };
        out.push(format!(
            "Against `{variant}`, over {} presets: `memtx` {examples}, reaches {later} example(s) \
             later, and executes {} of {} attempted irreversible calls ({}), against {} of {} ({}).",
            presets.len(),
            ours.0,
            ours.1,
            pct(ours),
            theirs.0,
            theirs.1,
            pct(theirs)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(variant: &str, examples: &[Option<usize>], executed: u64, blocked: u64) -> Row {
        Row {
            variant: variant.into(),
            states: 10,
            examples: examples
                .iter()
                .enumerate()
                .map(|(i, d)| (format!("E{}", i + 1), *d))
                .collect(),
            executed,
            blocked,
        }
    }

    #[test]
    fn the_verdict_names_lost_and_later_examples_and_the_call_shares() {
        let ours = row("memtx", &[Some(2), None, Some(5)], 1, 3);
        let theirs = row("paper-provenance", &[Some(2), Some(4), Some(3)], 3, 1);
        let v = verdict("quick", &[ours.clone(), theirs]);
        assert_eq!(
            v,
            [
                "`quick`, against `paper-provenance`: `memtx` loses E2 and reaches E3 at 5 steps, \
              not 3; it executes 25.0 % of the irreversible calls it is asked for, against 75.0 %."
            ]
        );
        let same = row("rev2-scopes", &[Some(2), None, Some(5)], 0, 0);
        let v = verdict("quick", &[ours.clone(), same]);
        assert!(v[0].contains("reaches every example `rev2-scopes` reaches, each as early"));
        assert!(v[0].contains("no irreversible call is attempted"));
        assert_eq!(
            ours.to_markdown(),
            "| `memtx` | 10 | 2 | — | 5 | 1 | 3 | 25.0 % |"
        );
        assert!(table(&[ours]).starts_with("| protocol | states | E1 | E2 | E3 | calls executed"));
    }
}
