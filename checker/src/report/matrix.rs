//! [`Matrix`]: the ablation matrix of docs/protocol.md §10, several reports side by side.

use super::run::{RunReport, Verdict};
use memtx_model::properties::PROPERTIES;
use memtx_model::Variant;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One cell of the ablation matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixCell {
    /// Property key.
    pub property: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Length of the counterexample, if any.
    pub trace_len: Option<usize>,
    /// Whether docs/protocol.md §10 expects this variant to break this property.
    pub expected_to_break: bool,
}

impl MatrixCell {
    /// `holds`, `violated (len N)`, `not checked`.
    pub fn text(&self) -> String {
        match (self.verdict, self.trace_len) {
            (Verdict::Violated, Some(n)) => format!("violated (len {n})"),
            (v, _) => v.words().to_string(),
        }
    }
    /// The cell disagrees with §10: expected to break but held, or broke unexpectedly.
    pub fn deviates(&self) -> bool {
        match self.verdict {
            Verdict::Holds => self.expected_to_break,
            Verdict::Violated => !self.expected_to_break,
            _ => false,
        }
    }
}

/// One row (variant) of the ablation matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixRow {
    /// The variant.
    pub variant: Variant,
    /// The preset of its run.
    pub preset: String,
    /// Whether its run was exhaustive.
    pub exhaustive: bool,
    /// One cell per column.
    pub cells: Vec<MatrixCell>,
}

/// The ablation matrix: variants × invariants (docs/protocol.md §10).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matrix {
    /// Column keys (invariants), in registry order.
    pub properties: Vec<String>,
    /// One row per report, in the order given.
    pub rows: Vec<MatrixRow>,
}

impl Matrix {
    /// The matrix of `reports` (one row each), over the invariants any of them lists.
    pub fn from_reports(reports: &[RunReport]) -> Matrix {
        let properties: Vec<String> = PROPERTIES
            .iter()
            .filter(|p| p.is_invariant())
            .filter(|p| reports.iter().any(|r| r.property(p.key).is_some()))
            .map(|p| p.key.to_string())
            .collect();
        let rows = reports
            .iter()
            .map(|r| MatrixRow {
                variant: r.variant,
                preset: r.config.preset.clone(),
                exhaustive: r.coverage.is_exhaustive(),
                cells: properties
                    .iter()
                    .map(|key| {
                        let outcome = r.property(key);
                        MatrixCell {
                            property: key.clone(),
                            verdict: outcome.map_or(Verdict::NotChecked, |o| o.verdict),
                            trace_len: outcome.and_then(|o| o.trace_len),
                            expected_to_break: r
                                .variant
                                .info()
                                .expected_to_break
                                .contains(&key.as_str()),
                        }
                    })
                    .collect(),
            })
            .collect();
        Matrix { properties, rows }
    }

    /// The cells that disagree with docs/protocol.md §10, one sentence each. A variant whose
    /// violations only some focused presets show (`VariantInfo::shown_by`) is not expected to
    /// break anything on the others.
    pub fn deviations(&self) -> Vec<String> {
        let mut out = Vec::new();
        for row in &self.rows {
            let shown_by = row.variant.info().shown_by;
            let shown_elsewhere = !shown_by.is_empty() && !shown_by.contains(&row.preset.as_str());
            for c in row.cells.iter().filter(|c| c.deviates()) {
                if c.expected_to_break && shown_elsewhere {
                    continue;
                }
                out.push(if c.expected_to_break {
                    format!(
                        "{} was expected to break {} but it holds",
                        row.variant.name(),
                        c.property
                    )
                } else {
                    format!(
                        "{} breaks {}, which §10 does not list",
                        row.variant.name(),
                        c.property
                    )
                });
            }
        }
        out
    }

    /// The matrix as a Markdown table, then the deviations from §10 (or a line saying none).
    /// Cells §10 expects to break are marked `*`.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "| variant |");
        for p in &self.properties {
            let _ = write!(s, " {p} |");
        }
        let _ = write!(s, "\n|---|");
        for _ in &self.properties {
            let _ = write!(s, "---|");
        }
        s.push('\n');
        for row in &self.rows {
            let stopped = if row.exhaustive {
                ""
            } else {
                " (stopped early)"
            };
            let _ = write!(s, "| `{}`{stopped} |", row.variant.name());
            for c in &row.cells {
                let mark = if c.expected_to_break { "*" } else { "" };
                let _ = write!(s, " {}{mark} |", c.text());
            }
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "\n`*`: docs/protocol.md §10 expects the variant to break the property.\n"
        );
        let deviations = self.deviations();
        if deviations.is_empty() {
            let _ = writeln!(s, "Every cell agrees with docs/protocol.md §10.");
        } else {
            let _ = writeln!(s, "Cells that disagree with docs/protocol.md §10:\n");
            for d in deviations {
                let _ = writeln!(s, "- {d}");
            }
        }
        s
    }
}
