//! Records: the governed objects of docs/protocol.md §2, and sets of record ids.

use crate::evidence::Confidence;
use crate::lifecycle::Life;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Index of a record slot; ids are allocated in increasing order.
pub type RecordId = u8;

/// The most records one state can hold (the `--records` bound may not exceed it).
pub const MAX_RECORDS: usize = 16;

/// A set of record ids as a machine word (bit `i` = record `i`).
///
/// Serialises as a sorted list of ids, so traces stay readable.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordSet(pub u16);

impl RecordSet {
    /// The empty set.
    pub const EMPTY: RecordSet = RecordSet(0);

    /// The set holding one id.
    pub fn single(id: RecordId) -> Self {
        RecordSet(1 << id)
    }
    /// Does the set hold `id`?
    pub fn contains(self, id: RecordId) -> bool {
        (id as usize) < MAX_RECORDS && self.0 & (1 << id) != 0
    }
    /// Adds `id`.
    pub fn insert(&mut self, id: RecordId) {
        self.0 |= 1 << id;
    }
    /// Removes `id`.
    pub fn remove(&mut self, id: RecordId) {
        self.0 &= !(1 << id);
    }
    /// True when no id is in the set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Number of ids.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    /// Set union.
    pub fn union(self, other: RecordSet) -> RecordSet {
        RecordSet(self.0 | other.0)
    }
    /// Is every id of this set in `other`?
    pub fn is_subset_of(self, other: RecordSet) -> bool {
        self.0 & !other.0 == 0
    }
    /// Set intersection.
    pub fn intersection(self, other: RecordSet) -> RecordSet {
        RecordSet(self.0 & other.0)
    }
    /// The ids, ascending.
    pub fn iter(self) -> impl Iterator<Item = RecordId> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let id = bits.trailing_zeros() as RecordId;
            bits &= bits - 1;
            Some(id)
        })
    }
    /// The largest id, if any.
    pub fn max(self) -> Option<RecordId> {
        (self.0 != 0).then(|| (15 - self.0.leading_zeros()) as RecordId)
    }
}

impl FromIterator<RecordId> for RecordSet {
    fn from_iter<I: IntoIterator<Item = RecordId>>(iter: I) -> Self {
        let mut s = RecordSet::EMPTY;
        for id in iter {
            s.insert(id);
        }
        s
    }
}

impl std::fmt::Debug for RecordSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{{")?;
        for (i, id) in self.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "r{id}")?;
        }
        write!(f, "}}")
    }
}

impl Serialize for RecordSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for RecordSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ids = Vec::<u8>::deserialize(d)?;
        if let Some(bad) = ids.iter().find(|&&id| id as usize >= MAX_RECORDS) {
            return Err(serde::de::Error::custom(format!(
                "record id {bad} is out of range (at most {} records)",
                MAX_RECORDS
            )));
        }
        Ok(ids.into_iter().collect())
    }
}

/// What a record is (docs/protocol.md §2).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A belief: asserts `value` for `slot`.
    #[default]
    Belief,
    /// A derived view: a summary of its parents.
    Summary,
    /// A derived view: a profile built from its parents.
    Profile,
    /// An executed tool call that can be undone (compensated).
    ReversibleAction,
    /// An executed tool call that cannot be undone; its repair is a recorded leak.
    IrreversibleAction,
}

impl Kind {
    /// Summary or Profile (derived views, repaired by quarantine and rebuild).
    pub fn is_view(self) -> bool {
        matches!(self, Kind::Summary | Kind::Profile)
    }
    /// A tool action record.
    pub fn is_action(self) -> bool {
        matches!(self, Kind::ReversibleAction | Kind::IrreversibleAction)
    }
}

/// Who may see a record: `Private < Shared < Public` (docs/protocol.md §2, §4).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Only the owner.
    #[default]
    Private,
    /// Every agent.
    Shared,
    /// Every agent (and outside readers): wider than Shared for inheritance.
    Public,
}

/// Sentinel for an unbounded `until`.
pub const FOREVER: u8 = u8::MAX;

/// A logical-clock validity interval `[from, until)`; `until == FOREVER` is unbounded.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Validity {
    /// First tick at which the record holds.
    pub from: u8,
    /// First tick at which it no longer holds (`255` = never).
    pub until: u8,
}

impl Validity {
    /// `[from, ∞)`.
    pub fn open(from: u8) -> Self {
        Validity {
            from,
            until: FOREVER,
        }
    }
    /// Does the interval contain `now`?
    pub fn contains(self, now: u8) -> bool {
        self.from <= now && now < self.until
    }
    /// Do the two intervals share a tick?
    pub fn overlaps(self, other: Validity) -> bool {
        self.from < other.until && other.from < self.until
    }
}

/// What an executed tool action's effect has become (docs/protocol.md §2, §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// The call happened and stands.
    Executed,
    /// A reversible call undone by cascade.
    Compensated,
    /// An irreversible call whose basis was retracted: a realised harm, recorded.
    Leaked,
}

/// The reason code kept on a record when a check or a repair moves it (docs/protocol.md §6, §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Quarantined: confidence and authority both under threshold.
    Evidence,
    /// Quarantined: validity interval does not contain the commit tick.
    Expired,
    /// Quarantined: equal-authority conflict with a different source, awaiting review.
    Review,
    /// Quarantined: a parent is superseded or quarantined.
    InactiveParent,
    /// Quarantined: scope wider than its narrowest parent (permission laundering).
    Permission,
    /// Quarantined: a transitive ancestor has a pending revocation.
    UnstableDependency,
    /// Quarantined by cascade: a derived view awaiting rebuild.
    Rebuild,
    /// Revoked by the pipeline: a rival committed after the transaction's snapshot.
    StaleWrite,
    /// Revoked by the pipeline: a rival of higher authority stands.
    Outranked,
    /// Revoked by the pipeline: a parent is revoked.
    RevokedParent,
    /// Revoked: its transaction aborted.
    Aborted,
    /// Revoked: a requested revocation was applied.
    Revocation,
    /// Revoked (or effect repaired) by a cascade from a retracted ancestor.
    Cascade,
    /// Revoked: the reviewer rejected it.
    ReviewRejected,
    /// Superseded by a higher-authority write.
    SupersededByAuthority,
    /// Superseded by a newer record from the same source.
    SupersededByCorrection,
    /// Superseded by the reviewer's verdict for its rival.
    SupersededByReview,
    /// Quarantined (revision 3, lineage over committed parents): an ancestor is not yet
    /// committed (Raw, Tentative or Validated: another transaction's staging, read at raw- or
    /// tentative-read).
    UncommittedParent,
    /// Quarantined (revision 3, scope non-interference (b) and (c)): the record would displace a
    /// rival wider in scope than itself, or a wider record committed over it by a writer who may
    /// not see it; its owner reviews it (`Resolve`; `keep` only once no wider rival stands).
    ScopeReview,
    /// Quarantined (revision 3, provenance follows content, §6 (i)): an agent permitted to see
    /// the record is not permitted to see a record of its content (declared or transcribed).
    ContentPermission,
    /// Revoked by the pipeline (revision 3, provenance follows content, §6 (iii)): a rival was
    /// committed after the observation of what the record asserts (a retry of a stale write).
    StaleContent,
}

/// One governed record (docs/protocol.md §2).
///
/// `life` is private: every lifecycle move goes through [`crate::State::move_record`], which
/// refuses moves outside the table of docs/protocol.md §3.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Record {
    /// Belief, view or tool action.
    pub kind: Kind,
    /// Entity/attribute key (beliefs; 0 for views and actions).
    pub slot: u8,
    /// Asserted value (beliefs; 0 for views and actions).
    pub value: u8,
    /// Source id (its authority comes from the configuration).
    pub source: u8,
    /// Writer confidence.
    pub confidence: Confidence,
    /// Owning agent.
    pub owner: u8,
    /// Visibility scope.
    pub scope: Scope,
    /// Provenance: parent ids (always smaller than this record's id).
    pub parents: RecordSet,
    /// Validity interval.
    pub validity: Validity,
    pub(crate) life: Life,
    /// Reason code of the last check or repair that moved it.
    pub reason: Option<Reason>,
    /// The agent whose open transaction staged it (while staged).
    pub writer: Option<u8>,
    /// Commit sequence number (once committed through the pipeline or a review).
    pub seq: Option<u8>,
    /// Tool actions: what became of the effect.
    pub effect: Option<Effect>,
    /// An external correction has requested its revocation.
    pub pending_revocation: bool,
    /// Ghost (I9): ancestors that were pending revocation when this irreversible action ran.
    pub doubted_at_execution: RecordSet,
    /// While quarantined for review: the snapshot sequence number of the transaction that
    /// staged it (`Resolve(keep)` judges rivals against that snapshot, docs/protocol.md §5).
    #[serde(default)]
    pub review_seq: Option<u8>,
    /// Ghost (I7): the same number, as the ghost observer recorded it from its own copy of
    /// the transaction's snapshot (never read by the protocol).
    #[serde(default)]
    pub ghost_review_seq: Option<u8>,
    /// The middleware's label (revision 3, docs/protocol.md §4): its writer's context when it
    /// was staged, what it may transcribe without declaring it (empty for observations,
    /// adopted records and tool actions; a rebuilt view adds the parents it dropped, so it
    /// keeps its content).
    #[serde(default)]
    pub implicit: RecordSet,
    /// The middleware's label (revision 3.2, docs/protocol.md §6 (iii)): the commit sequence
    /// number of the observation of what a staged belief asserts; kept when it is restaged.
    /// `None` for raw observations not yet adopted, views and tool actions.
    #[serde(default)]
    pub observed: Option<u8>,
    /// The middleware's label (revision 3.2, docs/protocol.md §6 (ii)): the records of its
    /// writer's context, staged by another transaction, that assert what this belief asserts
    /// (same slot and value). Lineage and the gate's support closure count them as parents.
    #[serde(default)]
    pub transcribed: RecordSet,
    /// Ghost (I15, I16, I18): the writer's context at staging, as the ghost observer recorded it
    /// from what it saw served (never read by the protocol).
    #[serde(default)]
    pub ghost_implicit: RecordSet,
    /// Ghost (I16): the observation of what the record asserts, restated by the ghost observer
    /// (never read by the protocol).
    #[serde(default)]
    pub ghost_observed: Option<u8>,
    /// Ghost (the truth of lineage reasons, §6 (ii)): the records of the writer's context at
    /// staging, staged by another transaction, asserting the same slot and value, as the ghost
    /// observer recorded them (never read by the protocol).
    #[serde(default)]
    pub ghost_transcribed: RecordSet,
}

impl Record {
    /// The lifecycle state.
    pub fn life(&self) -> Life {
        self.life
    }
}
