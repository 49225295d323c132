//! Run reports, the ablation matrix and the manifest of pinned state counts.
//!
//! A check is only as useful as what it says it proved. [`RunReport`] is the engine-agnostic
//! record of one check: which memtx ran which command with which engine, the **whole**
//! configuration (bounds and the enumerated domains: the domain choices decide what
//! "exhaustive" covers, so they are always printed), how many states were visited and how fast,
//! whether the search was **exhaustive within these bounds** or **stopped early** (and why), and
//! for each property its verdict, its trace and the exact command that replays it. It is written
//! as JSON (for tools and CI) and as Markdown (for people), both atomically.
//!
//! [`Matrix`] lays several reports side by side: the ablation matrix of docs/protocol.md §10, one row
//! per variant, one column per invariant, each cell `holds` or `violated (len N)`, followed by
//! the cells that disagree with §10's "expected to break" column.
//!
//! [`Manifest`] (`reports/manifest.json`) pins the state counts (unique, total, depth) of each
//! preset × variant, so that CI notices when a change to the model or to an engine changes what is
//! explored ([`Manifest::compare`] lists the drifts), as the tlaplus/Examples repository does.
//!
//! One room each: `run.rs` ([`RunReport`] and its parts), `matrix.rs`, `manifest.rs`,
//! `config.rs` (the configuration's tables and line), `text.rs` (number and Markdown helpers);
//! the pages (`html.rs`, `plot.rs`, `dag.rs`), `rule_coverage.rs`, `availability.rs` and the
//! suite's report (`suite.rs`) beside them.

pub mod availability;
mod config;
pub mod dag;
pub mod html;
mod manifest;
mod matrix;
pub mod plot;
pub mod rule_coverage;
mod run;
pub mod simulation;
pub mod suite;
mod text;

pub(crate) use config::domain_rows;
pub(crate) use config::serde_name;
pub use config::{bounds_phrase, config_markdown, domain_line, domain_markdown};
pub use manifest::{Drift, Manifest, ManifestEntry, MANIFEST_FORMAT, MANIFEST_VERSION};
pub use matrix::{Matrix, MatrixCell, MatrixRow};
pub use rule_coverage::RuleCoverage;
pub use run::{Coverage, Outcome, PropertyOutcome, RunReport, Sample, Verdict};

/// Where the protocol is written down, in the repository (the rules, their ids, the
/// properties' full statements).
pub const PROTOCOL_DOC: &str = "docs/protocol.md";
