//! Rule coverage: how often each rule of the protocol fired in a run, and which never did.
//!
//! The model gives every rule of docs/protocol.md §3–§8 a stable id
//! ([`memtx_model::rules::RULES`]) and records, per attempted step, the set of rules it fired;
//! the fast explorer tallies those sets ([`crate::explore::CoverageTally`]). This module turns
//! the tallies into one row per rule: the attempted steps that fired it, and the fewest steps
//! after which it first fired (the length of the shortest run that exercises it). A rule
//! with no firing is **never exercised**: whatever the run proves, it proves nothing about
//! that rule. TLC reports the same per action; this is per rule of the protocol.

use crate::explore::CoverageTally;
use memtx_model::rules::{Family, RULES};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The widest line [`RuleCoverage::summary_text`] writes (a terminal's 100 columns).
pub const TEXT_WIDTH: usize = 100;

/// One rule's row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleCount {
    /// The rule's stable id (`pipe.evidence.fail`).
    pub id: String,
    /// docs/protocol.md section.
    pub section: String,
    /// Attempted steps that fired it.
    pub fired: u64,
    /// The fewest steps after which it first fired, if it did.
    pub first_step: Option<usize>,
}

/// Per-rule coverage of one run, or the union of several.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleCoverage {
    /// Rules that fired at least once.
    pub exercised: usize,
    /// Rules in the table.
    pub total: usize,
    /// One row per rule, in table order.
    pub rules: Vec<RuleCount>,
}

impl RuleCoverage {
    /// Coverage from the explorer's tallies.
    pub fn from_tallies(tallies: &[CoverageTally]) -> Self {
        let mut rules = Self::unfired();
        for t in tallies {
            if let Some(row) = rules.get_mut(t.bit as usize) {
                row.fired += t.steps;
                row.first_step = Some(row.first_step.map_or(t.first_step, |f| f.min(t.first_step)));
            }
        }
        Self::of(rules)
    }

    /// One row per rule of the table, none fired yet.
    fn unfired() -> Vec<RuleCount> {
        RULES
            .iter()
            .map(|r| RuleCount {
                id: r.id.to_string(),
                section: r.section.to_string(),
                fired: 0,
                first_step: None,
            })
            .collect()
    }

    fn of(rules: Vec<RuleCount>) -> Self {
        RuleCoverage {
            exercised: rules.iter().filter(|r| r.fired > 0).count(),
            total: rules.len(),
            rules,
        }
    }

    /// The union of several runs' coverage (a rule fired if it fired in any of them).
    pub fn union<'a>(all: impl IntoIterator<Item = &'a RuleCoverage>) -> Self {
        let mut rules = Self::unfired();
        for cov in all {
            for (row, other) in rules.iter_mut().zip(&cov.rules) {
                row.fired += other.fired;
                row.first_step = match (row.first_step, other.first_step) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
        }
        Self::of(rules)
    }

    /// The ids of the rules that never fired, in table order.
    pub fn never(&self) -> Vec<&str> {
        self.rules
            .iter()
            .filter(|r| r.fired == 0)
            .map(|r| r.id.as_str())
            .collect()
    }

    /// `rules exercised 87/93; never: a, b, c` (or `rules exercised 93/93`).
    pub fn summary_line(&self) -> String {
        let never = self.never();
        if never.is_empty() {
            format!("rules exercised {}/{}", self.exercised, self.total)
        } else {
            format!(
                "rules exercised {}/{}; never: {}",
                self.exercised,
                self.total,
                never.join(", ")
            )
        }
    }

    /// The terminal's form of [`Self::summary_line`]: the count, then the rules never
    /// exercised on lines of their own, one group per id prefix (`enable`, `pipe`, ...) with
    /// the prefix written once, wrapped so that no line is wider than [`TEXT_WIDTH`] unless a
    /// single id is. Ends with a newline.
    ///
    /// ```text
    /// rules exercised 59/117; never exercised (58):
    ///   op       tick, observe, adopt
    ///   enable   tick.clock-bound, observe.free-id, begin.txn-open, ...
    /// ```
    pub fn summary_text(&self) -> String {
        let never = self.never();
        if never.is_empty() {
            return format!("rules exercised {}/{}\n", self.exercised, self.total);
        }
        let mut out = format!(
            "rules exercised {}/{}; never exercised ({}):\n",
            self.exercised,
            self.total,
            never.len()
        );
        // Prefixes in the order of their first rule in the table, each with its rules'
        // remaining names.
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for id in never {
            let (prefix, name) = id.split_once('.').unwrap_or((id, ""));
            match groups.iter_mut().find(|(p, _)| *p == prefix) {
                Some((_, names)) => names.push(name),
                None => groups.push((prefix, vec![name])),
            }
        }
        let indent = 2 + groups.iter().map(|(p, _)| p.len()).max().unwrap_or(0) + 2;
        for (prefix, names) in groups {
            let mut line = format!("  {prefix:<width$}", width = indent - 2);
            let mut first = true;
            for (i, name) in names.iter().enumerate() {
                let piece = if i + 1 < names.len() {
                    format!("{name},")
                } else {
                    name.to_string()
                };
                if !first && line.len() + 1 + piece.len() > TEXT_WIDTH {
                    out.push_str(line.trim_end());
                    out.push('\n');
                    line = " ".repeat(indent);
                    first = true;
                }
                if !first {
                    line.push(' ');
                }
                line.push_str(&piece);
                first = false;
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// The whole table as text: one line per rule with its count and first step.
    pub fn table_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "  {:<40} {:<6} {:>14} {:>6}",
            "rule", "§", "steps fired", "first"
        );
        for (r, def) in self.rules.iter().zip(RULES) {
            let first = r.first_step.map_or("-".to_string(), |f| f.to_string());
            let mark = if r.fired == 0 { "  NEVER" } else { "" };
            let _ = writeln!(
                out,
                "  {:<40} {:<6} {:>14} {:>6}{mark}  {}",
                r.id, r.section, r.fired, first, def.statement
            );
        }
        out
    }

    /// The whole table as Markdown, grouped by family.
    pub fn table_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "| rule | § | steps that fired it | first fired after | statement |\n|---|---|---:|---:|---|"
        );
        for (r, def) in self.rules.iter().zip(RULES) {
            let first = r
                .first_step
                .map_or("**never**".to_string(), |f| format!("{f} steps"));
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} |",
                r.id,
                r.section,
                r.fired,
                first,
                def.statement.replace('|', "\\|")
            );
        }
        s
    }

    /// Rules of `family` that never fired.
    pub fn never_in(&self, family: Family) -> Vec<&str> {
        self.rules
            .iter()
            .zip(RULES)
            .filter(|(r, def)| r.fired == 0 && def.family == family)
            .map(|(r, _)| r.id.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtx_model::rules::Rule;

    #[test]
    fn tallies_become_rows_and_unions_add_up() {
        let a = RuleCoverage::from_tallies(&[
            CoverageTally {
                bit: Rule::OpTick as u8,
                steps: 5,
                first_step: 2,
            },
            CoverageTally {
                bit: Rule::AuditLeaked as u8,
                steps: 1,
                first_step: 7,
            },
        ]);
        assert_eq!(a.exercised, 2);
        let row = |c: &RuleCoverage, id: &str| c.rules.iter().find(|r| r.id == id).cloned();
        let t = row(&a, "op.tick").expect("op.tick has a row");
        assert_eq!((t.fired, t.first_step), (5, Some(2)));
        assert!(a
            .summary_line()
            .starts_with(&format!("rules exercised 2/{}; never: ", RULES.len())));
        let b = RuleCoverage::from_tallies(&[CoverageTally {
            bit: Rule::OpBegin as u8,
            steps: 3,
            first_step: 1,
        }]);
        let u = RuleCoverage::union([&a, &b]);
        assert_eq!(u.exercised, 3);
        assert!(!u.never().contains(&"op.begin"));
        assert!(u.never().contains(&"op.commit"));
    }

    /// Reads the rule ids back out of [`RuleCoverage::summary_text`]'s group lines.
    fn ids_in(text: &str) -> Vec<String> {
        let mut ids = Vec::new();
        let mut prefix = String::new();
        for line in text.lines().skip(1) {
            let body = line.strip_prefix("  ").expect("an indented line");
            let names = if body.starts_with(' ') {
                body
            } else {
                let (p, rest) = body.split_once(' ').expect("a prefix, then names");
                prefix = p.to_string();
                rest
            };
            for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                ids.push(format!("{prefix}.{name}"));
            }
        }
        ids
    }

    #[test]
    fn the_terminal_lists_each_rule_never_exercised_once_by_prefix_within_the_width() {
        let few = RuleCoverage::from_tallies(&[CoverageTally {
            bit: Rule::OpBegin as u8,
            steps: 3,
            first_step: 1,
        }]);
        let text = few.summary_text();
        let never = few.never();
        assert!(
            text.starts_with(&format!(
                "rules exercised 1/{}; never exercised ({}):\n",
                RULES.len(),
                never.len()
            )),
            "{text}"
        );
        let (mut listed, mut want) = (ids_in(&text), never.clone());
        listed.sort();
        want.sort();
        assert_eq!(listed, want, "every rule never exercised, once");
        assert!(
            text.lines().all(|l| l.chars().count() <= TEXT_WIDTH),
            "{text}"
        );
        // A prefix is written once: the number of group lines is the number of prefixes.
        let prefixes: std::collections::BTreeSet<&str> = never
            .iter()
            .filter_map(|id| id.split_once('.'))
            .map(|(p, _)| p)
            .collect();
        let group_lines = text
            .lines()
            .skip(1)
            .filter(|l| !l[2..].starts_with(' '))
            .count();
        assert_eq!(group_lines, prefixes.len(), "{text}");
        assert!(
            text.lines().count() > group_lines + 1,
            "long groups wrap: {text}"
        );
        let all: Vec<CoverageTally> = RULES
            .iter()
            .map(|def| CoverageTally {
                bit: def.rule as u8,
                steps: 1,
                first_step: 1,
            })
            .collect();
        assert_eq!(
            RuleCoverage::from_tallies(&all).summary_text(),
            format!("rules exercised {0}/{0}\n", RULES.len())
        );
    }
}
