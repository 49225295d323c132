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
//! reachable space. The *paired* tables ([`PairedRow`], from [`crate::paired`]) pair them: one
//! sequence of operations under both protocols, each irreversible call classified by what each
//! decides, with the shortest sequence whose last call one protocol executes and the other
//! refuses.

use super::{RunReport, Verdict};
use crate::paired::{Outcome, PairedOutcome};
use memtx_model::display::op_line;
use memtx_model::properties::PROPERTIES;
use memtx_model::Op;

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

/// The paired comparison of `memtx` with one variant on one preset.
#[derive(Clone, Debug)]
pub struct PairedRow {
    /// The variant `memtx` is paired with.
    pub variant: String,
    /// What the product run found.
    pub outcome: PairedOutcome,
}

impl PairedRow {
    /// Calls `memtx` executes and the other refuses (its gate, or not enabled).
    fn ours_only(&self) -> u64 {
        let c = |o| self.outcome.count(o).steps;
        c(Outcome::LeftOnlyGate) + c(Outcome::LeftOnlyDisabled)
    }

    /// Calls the other executes and `memtx` refuses.
    fn theirs_only(&self) -> u64 {
        let c = |o| self.outcome.count(o).steps;
        c(Outcome::RightOnlyGate) + c(Outcome::RightOnlyDisabled)
    }

    /// Calls at least one of the two executes.
    fn executed_by_either(&self) -> u64 {
        self.outcome.count(Outcome::BothExecute).steps + self.ours_only() + self.theirs_only()
    }
}

/// The Markdown table of one preset's paired runs.
pub fn paired_table(rows: &[PairedRow]) -> String {
    let mut out = String::from(
        "| paired with | states | both execute | only `memtx`: the other's gate blocks | only \
         `memtx`: not enabled under the other | only the other: `memtx`'s gate blocks | only the \
         other: not enabled under `memtx` | neither executes | other operations only `memtx` \
         performs | only the other performs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        out.push_str(&format!("| `{}` | {} |", row.variant, row.outcome.states));
        for o in Outcome::ALL {
            out.push_str(&format!(" {} |", row.outcome.count(o).steps));
        }
        out.push('\n');
    }
    out
}

/// A shortest trace in one line: its operations, as `memtx replay` labels them.
fn trace_line(ops: &[Op]) -> String {
    ops.iter()
        .map(|op| format!("`{}`", op_line(op)))
        .collect::<Vec<_>>()
        .join(" → ")
}

/// Per paired run, the calls one protocol executes alone, and the shortest trace of each
/// direction, in sentences computed from the run.
pub fn paired_verdict(preset: &str, rows: &[PairedRow]) -> Vec<String> {
    let mut out = Vec::new();
    for row in rows {
        let other = &row.variant;
        out.push(format!(
            "`{preset}`, paired with `{other}`: of {} irreversible calls at least one of them \
             executes, `memtx` alone executes {} and `{other}` alone {}.",
            row.executed_by_either(),
            row.ours_only(),
            row.theirs_only()
        ));
        for (who, refuses, witness) in [
            ("`memtx`", format!("`{other}`"), &row.outcome.left_only),
            (
                &*format!("`{other}`"),
                "`memtx`".to_string(),
                &row.outcome.right_only,
            ),
        ] {
            if let Some(w) = witness {
                out.push(format!(
                    "shortest call {who} executes and {refuses} refuses ({} steps; {refuses}: \
                     {}): {}",
                    w.ops.len(),
                    w.refusal,
                    trace_line(&w.ops)
                ));
            }
        }
    }
    out
}

/// The paired verdict on top: per compared variant, over every preset, the calls each protocol
/// executes alone on the same operations.
pub fn paired_summary(presets: &[(String, Vec<PairedRow>)]) -> Vec<String> {
    COMPARED
        .iter()
        .map(|variant| {
            let rows = presets
                .iter()
                .flat_map(|(_, rows)| rows.iter().filter(|r| r.variant == *variant));
            let (mut either, mut ours, mut theirs, mut n) = (0, 0, 0, 0);
            for r in rows {
                either += r.executed_by_either();
                ours += r.ours_only();
                theirs += r.theirs_only();
                n += 1;
            }
            format!(
                "Paired with `{variant}` on the same operations, over {n} presets: of {either} \
                 irreversible calls at least one executes, `memtx` alone executes {ours} and \
                 `{variant}` alone {theirs}."
            )
        })
        .collect()
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

    #[test]
    fn the_paired_verdict_counts_each_direction_and_names_its_shortest_trace() {
        use crate::paired::{Count, Witness};
        let count = |steps| Count {
            steps,
            first_step: 1,
        };
        let row = PairedRow {
            variant: "paper-provenance".into(),
            outcome: PairedOutcome {
                states: 7,
                counts: vec![
                    count(10),
                    count(1),
                    count(2),
                    count(3),
                    count(4),
                    count(5),
                    count(6),
                    count(8),
                ],
                left_only: None,
                right_only: Some(Witness {
                    ops: vec![Op::Tick, Op::EndSession { agent: 0 }],
                    refusal: "blocked".into(),
                }),
            },
        };
        let v = paired_verdict("quick", std::slice::from_ref(&row));
        assert_eq!(
            v[0],
            "`quick`, paired with `paper-provenance`: of 20 irreversible calls at least one of \
             them executes, `memtx` alone executes 3 and `paper-provenance` alone 7."
        );
        assert_eq!(v.len(), 2, "no line for a direction without a trace: {v:?}");
        assert!(v[1].starts_with(
            "shortest call `paper-provenance` executes and `memtx` refuses (2 steps; `memtx`: \
             blocked): `Tick` → `"
        ));
        assert!(paired_table(&[row])
            .ends_with("| `paper-provenance` | 7 | 10 | 1 | 2 | 3 | 4 | 5 | 6 | 8 |\n"));
        let s = paired_summary(&[("quick".into(), vec![])]);
        assert_eq!(s.len(), COMPARED.len());
        assert!(s[0].contains("over 0 presets: of 0"));
    }
}
