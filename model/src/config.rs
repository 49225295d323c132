//! The configuration of a run: bounds, enumerated domains, variant (docs/protocol.md §1, §5, §10).
//!
//! A [`Config`] is one serialisable value. It is written into every report and trace, and a trace
//! is only replayed against the configuration it was made with.

use crate::evidence::{Authority, Confidence};
use crate::record::{Kind, Scope, MAX_RECORDS};
use crate::state::MAX_AGENTS;
use crate::txn::{Isolation, Tier};
use serde::{Deserialize, Serialize};

/// The protocol variants of docs/protocol.md §10: the fixed protocol, ablations and a seeded defect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// The protocol as docs/protocol.md specifies it (with its "Decided" rules).
    #[default]
    Memtx,
    /// Removes semantic-conflict adjudication.
    NoConflictCheck,
    /// Removes the permission-inheritance (scope) check.
    NoPermissionInheritance,
    /// Removes cascading repair.
    NoCascade,
    /// Removes the action gate.
    NoActionGate,
    /// Staged records are visible to every transaction.
    NoVisibilityScoping,
    /// Reads see the latest state instead of the snapshot.
    NoSnapshotReads,
    /// The paper's exact gate: no action-time check of support records and their ancestors.
    PaperGate,
    /// The paper's defect class: the cascade walk stops at a quarantined view.
    MissedCascade,
    /// The paper's defect class, second form: the cascade walk skips staged descendants of
    /// other transactions, and the lineage check judges only direct parents.
    MissedCascadeStaged,
    /// The adjudication of revision 1: the conflict check returns at the first decisive
    /// rival in id order, and `Resolve(keep)` supersedes every rival whatever its authority
    /// or commit time.
    Rev1Adjudication,
    /// Revision 2's lineage (revision 3 step 2 off): a parent still Raw, Tentative or Validated
    /// counts as active, and the gate checks neither the ancestors of its support nor, below
    /// the external-action tier, the support's validity.
    Rev2Lineage,
    /// Revision 2's scope rules (revision 3 step 3 off): every contradicting record is a rival
    /// whoever may see it, a narrower record displaces a wider one, no hidden narrower rival is
    /// sent to scope review, and the gate's condition 2 counts another agent's Private
    /// ActionSafe records.
    Rev2Scopes,
    /// The paper's provenance (revision 3 step 4 off): permission inheritance over declared
    /// parents only, staleness judged by the transaction's snapshot, transcribed records are
    /// not parents, and visibility ignores content (both blind spots of §11 open).
    PaperProvenance,
    /// Provenance that follows content within one transaction only: the context is forgotten
    /// when a transaction begins (a plausible half-fix).
    TxnProvenance,
}

/// One row of the variant table: name, what it removes, which properties it should break.
#[derive(Clone, Copy, Debug)]
pub struct VariantInfo {
    /// The variant.
    pub variant: Variant,
    /// Its CLI name.
    pub name: &'static str,
    /// What it removes from the protocol.
    pub removes: &'static str,
    /// Property keys docs/protocol.md §10 expects it to break.
    pub expected_to_break: &'static [&'static str],
    /// Focused presets of the suite on which it is also checked by `memtx reference`, its
    /// violations saved in `regressions/<preset>/`: those that show what `quick` and `paper`
    /// cannot.
    pub shown_by: &'static [&'static str],
}

/// The variant table of docs/protocol.md §10 (plus the fixed protocol, first).
pub const VARIANTS: &[VariantInfo] = &[
    VariantInfo {
        variant: Variant::Memtx,
        name: "memtx",
        removes: "nothing: the protocol as specified",
        expected_to_break: &[],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::NoConflictCheck,
        name: "no-conflict-check",
        removes: "semantic-conflict adjudication",
        expected_to_break: &["I6", "I7"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::NoPermissionInheritance,
        name: "no-permission-inheritance",
        removes: "the scope check",
        expected_to_break: &["I3"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::NoCascade,
        name: "no-cascade",
        removes: "cascading repair",
        expected_to_break: &["I2"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::NoActionGate,
        name: "no-action-gate",
        removes: "the action gate",
        expected_to_break: &["I1"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::NoVisibilityScoping,
        name: "no-visibility-scoping",
        removes: "visibility scoping: staged records visible to all",
        expected_to_break: &["I5", "I1"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::NoSnapshotReads,
        name: "no-snapshot-reads",
        removes: "snapshot reads: reads see the latest state",
        expected_to_break: &["I7"],
        // Revision 3 step 4: on one agent a stale override needs Resolve(keep) of a record
        // whose equal-authority rival is quick's Private write, which provenance follows
        // content now keeps out of a Shared record's session; two agents show it.
        shown_by: &["provenance"],
    },
    VariantInfo {
        variant: Variant::PaperGate,
        name: "paper-gate",
        removes: "the gate's action-time check of support and its ancestors (the paper's gate)",
        expected_to_break: &["I9"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::MissedCascade,
        name: "missed-cascade",
        removes: "the cascade walk below a quarantined view (the paper's defect)",
        expected_to_break: &["I2"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::MissedCascadeStaged,
        name: "missed-cascade-staged",
        removes: "the cascade of staged descendants of other transactions, and lineage beyond direct parents (the paper's defect, second form)",
        expected_to_break: &["I2"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::Rev1Adjudication,
        name: "rev1-adjudication",
        removes: "revision 2's adjudication: several rivals ranked, and Resolve(keep)'s checks (first rival decides; keep supersedes every rival)",
        expected_to_break: &["I7", "I12"],
        shown_by: &[],
    },
    VariantInfo {
        variant: Variant::Rev2Lineage,
        name: "rev2-lineage",
        removes: "revision 3's lineage over committed parents (an uncommitted parent passes) and the gate's check of the support closure",
        expected_to_break: &["I13", "I18"],
        // Neither quick nor paper reads below committed-read: the harms need a raw or
        // tentative read (a summary over a raw observation that reaches a refund; a summary
        // committed over another agent's staging).
        shown_by: &["observations", "isolation"],
    },
    VariantInfo {
        variant: Variant::Rev2Scopes,
        name: "rev2-scopes",
        removes: "revision 3's scope rules: rivals over what the writer may see, no narrower record displacing a wider one, scope review of hidden narrower rivals, condition 2 over what the caller may see",
        // §10 lists I6 and I17 ("I6 or I17"). Judging every rival whoever may see it keeps one
        // truth per slot everywhere, so I6 holds under this variant; its harms are I17's
        // (docs/protocol.md, Variants).
        expected_to_break: &["I17"],
        // quick has one agent: another agent's Private record needs two.
        shown_by: &["interference"],
    },
    VariantInfo {
        variant: Variant::PaperProvenance,
        name: "paper-provenance",
        removes: "revision 3's provenance follows content: permission inheritance over declared parents only, staleness by the transaction's snapshot (the paper's protocol, both blind spots open)",
        expected_to_break: &["I15", "I16"],
        // The retry of a stale write needs a second agent to commit the correction.
        shown_by: &["provenance"],
    },
    VariantInfo {
        variant: Variant::TxnProvenance,
        name: "txn-provenance",
        removes: "the context beyond the current transaction (content carried across two transactions of one session is forgotten)",
        expected_to_break: &["I15", "I16"],
        shown_by: &["provenance"],
    },
];

impl Variant {
    /// This variant's row of [`VARIANTS`].
    pub fn info(self) -> &'static VariantInfo {
        VARIANTS
            .iter()
            .find(|v| v.variant == self)
            .expect("[memtx internal bug] every variant has a row in VARIANTS")
    }
    /// The CLI name.
    pub fn name(self) -> &'static str {
        self.info().name
    }
    /// Looks a variant up by its CLI name.
    pub fn from_name(name: &str) -> Option<Variant> {
        VARIANTS.iter().find(|v| v.name == name).map(|v| v.variant)
    }
}

/// The sizes of the bounded universe (docs/protocol.md §1).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    /// Agents `0..agents`.
    pub agents: u8,
    /// Record slots `0..records`.
    pub records: u8,
    /// Logical clock `0..=ticks`.
    pub ticks: u8,
    /// Entity/attribute keys `0..slots`.
    pub slots: u8,
    /// Values `0..values`.
    pub values: u8,
    /// Authority of each source `0..sources.len()`.
    pub sources: Vec<Authority>,
}

/// The authority of source `i` when only a source count is given: mid, mid, high, low, repeating.
/// Two equal sources come first, so an equal-authority conflict with a different source exists
/// as soon as there are two sources; a higher one with three.
pub fn default_authority(i: usize) -> Authority {
    [
        Authority::Mid,
        Authority::Mid,
        Authority::High,
        Authority::Low,
    ][i % 4]
}

/// Validity shapes a `Stage` may choose, relative to the current tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValidityShape {
    /// `[now, ∞)`.
    Open,
    /// `[now, now + 1)`: expires at the next tick.
    OneTick,
    /// `[now + 1, ∞)`: not yet valid.
    FromNextTick,
}

impl ValidityShape {
    /// The validity this shape gives a belief staged at tick `now`.
    pub fn at(self, now: u8) -> crate::record::Validity {
        use crate::record::{Validity, FOREVER};
        match self {
            ValidityShape::Open => Validity::open(now),
            ValidityShape::OneTick => Validity {
                from: now,
                until: now + 1,
            },
            ValidityShape::FromNextTick => Validity {
                from: now + 1,
                until: FOREVER,
            },
        }
    }
}

/// The evidence and scope of one enumerated belief write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteShape {
    /// Source id.
    pub source: u8,
    /// Writer confidence.
    pub confidence: Confidence,
    /// Scope.
    pub scope: Scope,
}

/// Every combination of the given sources, confidences and scopes (the full product).
pub fn all_writes(sources: usize, confidences: &[Confidence], scopes: &[Scope]) -> Vec<WriteShape> {
    let mut out = Vec::new();
    for source in 0..sources as u8 {
        for &confidence in confidences {
            for &scope in scopes {
                out.push(WriteShape {
                    source,
                    confidence,
                    scope,
                });
            }
        }
    }
    out
}

/// How the state machine proposes operations (docs/protocol.md §5: a disabled operation is not an
/// action; the protocol's `ops::apply` decides which are enabled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enumeration {
    /// Proposes only operations whose cheap preconditions hold (an open transaction, a
    /// readable parent, ...): fast. Each pre-filter is implied by the enabling condition in
    /// `ops` (a test checks that every operation it drops is refused), so the reachable
    /// states are the same as with `Wide`.
    #[default]
    Filtered,
    /// Proposes every operation of the domain in every state, and lets the protocol refuse:
    /// every part of every enabling condition gets its chance to refuse (rule coverage).
    Wide,
}

/// Which values of each nondeterministic operation parameter the state machine enumerates
/// (docs/protocol.md §5 "Free"). These choices decide what "exhaustive" covers; every report prints them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Domain {
    /// Tiers a `Begin` may choose (low and medium behave identically in every rule).
    pub tiers: Vec<Tier>,
    /// Isolation levels a low or medium `Begin` may choose. An external-action `Begin` is offered
    /// at every level and always reads action-safe (§4).
    pub isolations: Vec<Isolation>,
    /// Kinds a `Stage` may write (beliefs and views).
    pub stage_kinds: Vec<Kind>,
    /// Write shapes (source, confidence, scope) a staged belief or an observation may take.
    pub writes: Vec<WriteShape>,
    /// Scopes a staged view may take.
    pub view_scopes: Vec<Scope>,
    /// Validity shapes enumerated for staged beliefs.
    pub validities: Vec<ValidityShape>,
    /// Largest parent set of a staged belief (0 = beliefs have no parents).
    pub belief_parents: u8,
    /// Largest parent set of a staged view (views always have at least one parent).
    pub view_parents: u8,
    /// Largest declared support set of a tool call.
    pub support: u8,
    /// Enumerate `Observe` (raw tool results) and adopting them into transactions.
    pub observe: bool,
    /// Enumerate reversible tool calls.
    pub reversible_calls: bool,
    /// Enumerate `RequestRevocation` / `ApplyRevocation`.
    pub revocations: bool,
    /// Enumerate `Resolve` of review quarantines.
    pub reviews: bool,
    /// Enumerate `Read` (revision 3): serving a visible record to an agent.
    #[serde(default)]
    pub reads: bool,
    /// Enumerate `EndSession` (revision 3): clearing an agent's context.
    #[serde(default)]
    pub sessions: bool,
    /// How operations are proposed (default: filtered).
    #[serde(default)]
    pub enumeration: Enumeration,
}

/// One check's whole configuration.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Config {
    /// The preset it started from (informational).
    pub preset: String,
    /// Bounds.
    pub bounds: Bounds,
    /// Enumerated domains.
    pub domain: Domain,
    /// Protocol variant.
    pub variant: Variant,
}

/// A bound is outside what the model can represent, or the configuration is unusable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Config {
    /// Checks that the bounds fit the state's fixed capacities; the error names the fix.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let b = &self.bounds;
        let err = |m: String| Err(ConfigError(m));
        if b.agents == 0 || b.agents as usize > MAX_AGENTS {
            return err(format!(
                "--agents must be between 1 and {MAX_AGENTS} (got {})",
                b.agents
            ));
        }
        if b.records == 0 || b.records as usize > MAX_RECORDS {
            return err(format!(
                "--records must be between 1 and {MAX_RECORDS} (got {})",
                b.records
            ));
        }
        if b.ticks > 16 {
            return err(format!("--ticks must be at most 16 (got {})", b.ticks));
        }
        if b.slots == 0 || b.slots > 8 {
            return err(format!("--slots must be between 1 and 8 (got {})", b.slots));
        }
        if b.values == 0 || b.values > 8 {
            return err(format!(
                "--values must be between 1 and 8 (got {})",
                b.values
            ));
        }
        if b.sources.is_empty() || b.sources.len() > 8 {
            return err(format!(
                "--sources must be between 1 and 8 (got {})",
                b.sources.len()
            ));
        }
        let d = &self.domain;
        // A domain entry listed twice proposes every operation it names twice: the same
        // states, more transitions (100,000 copies of one tier ran for ever). Refused, naming
        // the field.
        let twice = [
            ("tiers", first_duplicate(&d.tiers)),
            ("isolations", first_duplicate(&d.isolations)),
            ("stage_kinds", first_duplicate(&d.stage_kinds)),
            ("writes", first_duplicate(&d.writes)),
            ("view_scopes", first_duplicate(&d.view_scopes)),
            ("validities", first_duplicate(&d.validities)),
        ];
        if let Some((field, Some(entry))) = twice.into_iter().find(|(_, dup)| dup.is_some()) {
            return err(format!(
                "the domain lists an entry of \"{field}\" twice ({entry}): list each once"
            ));
        }
        if d.tiers.is_empty() {
            return err("the domain enumerates no tier: no transaction could begin".into());
        }
        if d.tiers.iter().any(|t| *t != Tier::ExternalAction) && d.isolations.is_empty() {
            return err("the domain enumerates no isolation level for low/medium tiers".into());
        }
        if d.stage_kinds.iter().any(|k| k.is_action()) {
            return err("tool actions are created by CallTool, not staged".into());
        }
        if d.writes.is_empty() || d.view_scopes.is_empty() || d.validities.is_empty() {
            return err(
                "the domain must enumerate at least one write shape, view scope and validity"
                    .into(),
            );
        }
        if let Some(w) = d
            .writes
            .iter()
            .find(|w| w.source as usize >= b.sources.len())
        {
            return err(format!(
                "a write shape names source {} but there are only {} sources: raise --sources",
                w.source,
                b.sources.len()
            ));
        }
        Ok(())
    }

    /// Authority of `source`.
    pub fn authority(&self, source: u8) -> Authority {
        self.bounds.sources[source as usize]
    }
}

/// The first entry of `list` that an earlier one equals: which (1-based) repeats which.
fn first_duplicate<T: PartialEq + std::fmt::Debug>(list: &[T]) -> Option<String> {
    list.iter().enumerate().find_map(|(i, x)| {
        let earlier = list[..i].iter().position(|y| y == x)?;
        Some(format!(
            "entry {} repeats entry {}, {x:?}",
            i + 1,
            earlier + 1
        ))
    })
}
