//! Transactions: tiers, isolation levels, snapshots and visibility (docs/protocol.md §4).

use crate::config::{Config, Variant};
use crate::lifecycle::Life;
use crate::record::{Record, RecordId, RecordSet, Scope};
use crate::state::State;
use serde::{Deserialize, Serialize};

/// The harness tier of a transaction, chosen at `Begin` and never changed by the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// Low tier: weak action gate.
    Low,
    /// Medium tier: weak action gate.
    Medium,
    /// External-action tier: strict isolation, strong action gate, commits are ActionSafe.
    ExternalAction,
}

/// The five isolation levels: a transaction reads records at or above its level on the main path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// Sees Raw and above.
    RawRead,
    /// Sees Tentative and above.
    TentativeRead,
    /// Sees Validated and above.
    ValidatedRead,
    /// Sees Committed and above.
    CommittedRead,
    /// Sees only ActionSafe.
    ActionSafeRead,
}

impl Isolation {
    /// Every level, weakest first.
    pub const ALL: [Isolation; 5] = [
        Isolation::RawRead,
        Isolation::TentativeRead,
        Isolation::ValidatedRead,
        Isolation::CommittedRead,
        Isolation::ActionSafeRead,
    ];
    /// The lowest main-path rank this level reads (see [`Life::main_path_rank`]).
    pub fn min_rank(self) -> u8 {
        self as u8
    }
    /// Does this level read a record in state `life`? Branch states are never visible.
    pub fn reads(self, life: Life) -> bool {
        life.main_path_rank()
            .is_some_and(|rank| rank >= self.min_rank())
    }
}

/// An open transaction (at most one per agent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Txn {
    /// Harness tier.
    pub tier: Tier,
    /// Isolation level (ActionSafeRead for external-action transactions).
    pub isolation: Isolation,
    /// Records visible at the isolation level when the transaction began.
    pub snapshot: RecordSet,
    /// The global commit sequence number when it began.
    pub snapshot_seq: u8,
}

/// May `agent` see `record` at all? `Private` records only by their owner (docs/protocol.md §4).
pub fn permitted(agent: u8, record: &Record) -> bool {
    record.scope != Scope::Private || record.owner == agent
}

/// The snapshot a transaction at `isolation` captures now: every record the level reads.
pub fn capture_snapshot(state: &State, isolation: Isolation) -> RecordSet {
    state.ids_where(|r| isolation.reads(r.life()))
}

/// Is `id` part of what `agent`'s transaction reads as its snapshot?
///
/// This is the one place the variants `no-snapshot-reads` (reads see the latest state) and
/// `no-visibility-scoping` (staged records visible to all) change what a transaction reads; the
/// action gate's "outside the snapshot" uses the same notion.
pub fn in_snapshot(cfg: &Config, state: &State, tx: &Txn, id: RecordId) -> bool {
    let life = state.record(id).life();
    match cfg.variant {
        Variant::NoSnapshotReads => tx.isolation.reads(life),
        Variant::NoVisibilityScoping => tx.snapshot.contains(id) || life == Life::Tentative,
        _ => tx.snapshot.contains(id),
    }
}

/// The commit sequence number that separates "before" from "after" this transaction's snapshot.
pub fn snapshot_seq(cfg: &Config, state: &State, tx: &Txn) -> u8 {
    match cfg.variant {
        Variant::NoSnapshotReads => state.next_seq,
        _ => tx.snapshot_seq,
    }
}

/// Visibility = (in snapshot ∨ staged by this transaction) ∧ permitted (docs/protocol.md §4),
/// and (revision 3.2, provenance follows content) every record of its content permitted.
pub fn visible(cfg: &Config, state: &State, agent: u8, id: RecordId) -> bool {
    in_view(cfg, state, agent, id) && crate::provenance::content_permitted(cfg, state, agent, id)
}

/// Visibility before revision 3.2: (in snapshot ∨ staged by this transaction) ∧ permitted,
/// the record alone judged (`Read` refuses for it and for its content with separate rules).
pub fn in_view(cfg: &Config, state: &State, agent: u8, id: RecordId) -> bool {
    let Some(tx) = state.txn(agent) else {
        return false;
    };
    let record = state.record(id);
    let own_staged = record.writer == Some(agent);
    (own_staged || in_snapshot(cfg, state, tx, id)) && permitted(agent, record)
}
