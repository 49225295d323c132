//! The protocol state: records in a fixed-capacity array, one optional transaction per agent,
//! the rollback log, and the ghost fields that history properties read.
//!
//! The state is small, fixed-size and `Copy`-cheap to clone and hash: no `String`, no `HashMap`,
//! sets of ids are machine words. Records never disappear, so the used prefix `0..len` is all
//! there is; unused slots stay at their default value.

use crate::lifecycle::{allowed, IllegalMove, Life};
use crate::record::{Record, RecordId, RecordSet, MAX_RECORDS};
use crate::txn::Txn;
use serde::{Deserialize, Serialize};

/// The most agents one state can hold.
pub const MAX_AGENTS: usize = 4;

/// A repair or retraction kind, as written into the rollback log (docs/protocol.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Repair {
    /// The root of a retraction (abort, revocation, pipeline abort, rejected review).
    Retracted,
    /// A descendant belief revoked.
    Revoked,
    /// A descendant view quarantined for rebuild.
    Quarantined,
    /// A reversible effect compensated.
    Compensated,
    /// An irreversible effect leaked (recorded).
    Leaked,
}

impl Repair {
    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// The rollback log, kept per record: which repairs the record underwent and the retracted
/// record that caused the latest one. (An abstraction of an append-only list of
/// `(record, repair, cause)` entries: order across records is dropped, so that two histories that
/// repaired the same records the same way are one state.)
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct AuditEntry {
    repairs: u8,
    /// The retracted record whose cascade caused the latest repair.
    pub cause: Option<RecordId>,
}

impl AuditEntry {
    /// Was a repair of this kind logged for the record?
    pub fn has(&self, repair: Repair) -> bool {
        self.repairs & repair.bit() != 0
    }
    /// The logged repair kinds as a bit mask (for packing).
    pub fn repairs_bits(&self) -> u8 {
        self.repairs
    }
    /// Rebuilds an entry from its packed parts.
    pub fn from_parts(repairs: u8, cause: Option<RecordId>) -> Self {
        AuditEntry { repairs, cause }
    }
    /// Every repair kind logged, in declaration order.
    pub fn repairs(&self) -> impl Iterator<Item = Repair> + '_ {
        [
            Repair::Retracted,
            Repair::Revoked,
            Repair::Quarantined,
            Repair::Compensated,
            Repair::Leaked,
        ]
        .into_iter()
        .filter(|r| self.has(*r))
    }
}

/// The ghost's own copy of an open transaction's snapshot, taken by the ghost observer when
/// the transaction began (docs/protocol.md §9, revision 2): the history properties that talk
/// about "the snapshot" (I1, I5, I7) judge against this copy, never the protocol's field.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct GhostTxn {
    /// The records the transaction's level read when it began (less re-staged records).
    pub snapshot: RecordSet,
    /// The commit sequence number when it began.
    pub seq: u8,
    /// The isolation level it reads at, as the spec assigns it (external-action: action-safe).
    pub level: u8,
}

/// Bytes of [`Verdicts`]: one bit per invariant number `In`, sized by the property table
/// ([`crate::properties::HIGHEST_INVARIANT`]): a new invariant's row grows it, nothing else.
pub const VERDICT_BYTES: usize = crate::properties::HIGHEST_INVARIANT / 8 + 1;

/// The bits of [`Verdicts`] that name an invariant of the property table.
const KNOWN_VERDICTS: [u8; VERDICT_BYTES] = {
    let mut known = [0u8; VERDICT_BYTES];
    let mut i = 0;
    while i < crate::properties::INVARIANTS {
        let n = crate::properties::number_of(crate::properties::PROPERTIES[i].key);
        known[n / 8] |= 1 << (n % 8);
        i += 1;
    }
    known
};

/// The ghost's verdicts: which invariants `In` some step so far has violated (bit `n` for
/// `In`; bit 0 is unused). Sized by the property table, so every invariant it lists can be
/// stored, packed, serialised and displayed.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Verdicts([u8; VERDICT_BYTES]);

impl Verdicts {
    /// Is `n` the number of an invariant of the property table?
    pub fn names_invariant(n: u8) -> bool {
        let n = n as usize;
        n <= crate::properties::HIGHEST_INVARIANT && KNOWN_VERDICTS[n / 8] & (1 << (n % 8)) != 0
    }
    /// Marks invariant `In` as violated. A number the property table does not have is a bug
    /// of the ghost, not of the protocol.
    pub fn violate(&mut self, n: u8) {
        assert!(
            Self::names_invariant(n),
            "[memtx internal bug] the ghost judged I{n}, which the property table does not have"
        );
        self.0[n as usize / 8] |= 1 << (n % 8);
    }
    /// Has invariant `In` been violated? (`false` for a number the table does not have.)
    pub fn is_violated(&self, n: u8) -> bool {
        Self::names_invariant(n) && self.0[n as usize / 8] & (1 << (n % 8)) != 0
    }
    /// No invariant violated.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; VERDICT_BYTES]
    }
    /// The numbers `n` of the violated invariants `In`, ascending.
    pub fn numbers(&self) -> impl Iterator<Item = u8> + '_ {
        (1..=crate::properties::HIGHEST_INVARIANT as u8).filter(|&n| self.is_violated(n))
    }
    /// These verdicts on the invariants `keep` accepts only (the others cleared): what a trace
    /// recorded under an older property table can be compared on.
    pub fn restricted_to(self, keep: impl Fn(u8) -> bool) -> Verdicts {
        let mut out = Verdicts::default();
        for n in self.numbers().filter(|&n| keep(n)) {
            out.0[n as usize / 8] |= 1 << (n % 8);
        }
        out
    }
    /// The verdicts as bytes (for packing).
    pub fn to_bytes(self) -> [u8; VERDICT_BYTES] {
        self.0
    }
    /// Verdicts from packed bytes; `None` if a bit names no invariant.
    pub fn from_bytes(bytes: [u8; VERDICT_BYTES]) -> Option<Self> {
        let unknown = (0..VERDICT_BYTES).any(|i| bytes[i] & !KNOWN_VERDICTS[i] != 0);
        (!unknown).then_some(Verdicts(bytes))
    }
}

/// Ghost fields: history, written by [`crate::ghost`] from independent predicates.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Ghost {
    /// The invariants some step so far has violated.
    pub violated: Verdicts,
    /// The ghost's copy of each agent's open transaction (index = agent).
    pub txns: [Option<GhostTxn>; MAX_AGENTS],
    /// The ghost's own record of each agent's context (I15, I16): every record it saw served
    /// to the agent since the agent's last `EndSession` (index = agent).
    pub contexts: [RecordSet; MAX_AGENTS],
}

impl Ghost {
    /// Marks invariant `In` as violated.
    pub fn violate(&mut self, n: u8) {
        self.violated.violate(n);
    }
    /// Has invariant `In` been violated?
    pub fn is_violated(&self, n: u8) -> bool {
        self.violated.is_violated(n)
    }
}

/// Number of record slots that [`State`]'s `clone_from` copies when no more are used: the
/// record bound of every preset (at most 4).
const FEW_RECORDS: usize = 4;
const _: () = assert!(FEW_RECORDS <= MAX_RECORDS);

/// One protocol state.
///
/// Invariant: record and log slots past `len` hold their default values (records are only
/// ever appended), which lets [`Clone::clone_from`] copy only a fixed prefix that covers the
/// used slots, and decoding touch the used prefix only.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub struct State {
    /// Logical clock.
    pub clock: u8,
    /// The next commit sequence number.
    pub next_seq: u8,
    len: u8,
    records: [Record; MAX_RECORDS],
    txns: [Option<Txn>; MAX_AGENTS],
    log: [AuditEntry; MAX_RECORDS],
    /// Each agent's context (revision 3, docs/protocol.md §4): every record served to it since
    /// its session began (index = agent).
    contexts: [RecordSet; MAX_AGENTS],
    /// History (ghost) variables.
    pub ghost: Ghost,
}

impl Clone for State {
    fn clone(&self) -> Self {
        State {
            records: self.records,
            txns: self.txns,
            log: self.log,
            ..*self
        }
    }

    /// Copies the fields and the record and log slots used by either state, as the first
    /// `FEW_RECORDS` (4) slots when that covers them and all slots otherwise: the slots past
    /// both lengths are at their default values in both (the type's invariant), so copying
    /// them changes nothing. The explorer's in-place successor
    /// ([`crate::MemTx::next_state_into`]) copies a state this way once per generated state.
    ///
    /// Both copies have a length known at compile time, so they compile to a few vector
    /// moves. Copying exactly the used slots was a call to `memcpy` with a variable length
    /// for the records and another for the log, and `paper` ran 6–7 % slower on 1 and 2
    /// threads (medians of 8 interleaved runs each).
    fn clone_from(&mut self, source: &Self) {
        let used = self.len.max(source.len) as usize;
        if used <= FEW_RECORDS {
            self.records[..FEW_RECORDS].copy_from_slice(&source.records[..FEW_RECORDS]);
            self.log[..FEW_RECORDS].copy_from_slice(&source.log[..FEW_RECORDS]);
        } else {
            self.records = source.records;
            self.log = source.log;
        }
        self.txns = source.txns;
        self.contexts = source.contexts;
        self.clock = source.clock;
        self.next_seq = source.next_seq;
        self.len = source.len;
        self.ghost = source.ghost;
    }
}

impl std::hash::Hash for State {
    /// Hashes the canonical packed encoding ([`State::pack`]) in one `write`: equal states pack
    /// to equal bytes, and one pass over ~100 bytes is several times cheaper than hashing every
    /// field of every record separately (the explorer's hot path).
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        thread_local! {
            static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        BUF.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf.clear();
            self.pack(&mut buf);
            h.write(&buf);
        });
    }
}

impl Default for State {
    fn default() -> Self {
        State {
            clock: 0,
            next_seq: 0,
            len: 0,
            records: [Record::default(); MAX_RECORDS],
            txns: [None; MAX_AGENTS],
            log: [AuditEntry::default(); MAX_RECORDS],
            contexts: [RecordSet::EMPTY; MAX_AGENTS],
            ghost: Ghost::default(),
        }
    }
}

impl State {
    /// The initial state: no records, no transactions, clock 0.
    pub fn initial() -> Self {
        State::default()
    }
    /// Number of records allocated.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// True when no record exists.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Ids of all allocated records, ascending.
    pub fn ids(&self) -> impl Iterator<Item = RecordId> {
        0..self.len
    }
    /// The allocated records, by id.
    pub fn records(&self) -> &[Record] {
        &self.records[..self.len as usize]
    }
    /// One record. Panics (internal bug) on an unallocated id: callers check ids first.
    pub fn record(&self, id: RecordId) -> &Record {
        assert!(
            id < self.len,
            "[memtx internal bug] record r{id} is not allocated"
        );
        &self.records[id as usize]
    }
    /// Mutable access to every field but `life` (which only [`State::move_record`] changes).
    pub fn record_mut(&mut self, id: RecordId) -> &mut Record {
        assert!(
            id < self.len,
            "[memtx internal bug] record r{id} is not allocated"
        );
        &mut self.records[id as usize]
    }
    /// Does `id` name an allocated record?
    pub fn exists(&self, id: RecordId) -> bool {
        id < self.len
    }
    /// Allocates the next record id with `record` (its `life` is the entry state).
    pub fn push_record(&mut self, record: Record) -> RecordId {
        let id = self.len;
        assert!(
            (id as usize) < MAX_RECORDS,
            "[memtx internal bug] record capacity exceeded"
        );
        self.records[id as usize] = record;
        self.len += 1;
        id
    }
    /// Decoding only: makes the state hold `len` records (at most [`MAX_RECORDS`]) and
    /// returns them with their rollback log entries, for the decoder to overwrite every field.
    /// Slots past `len` that were in use are reset, so the type's invariant holds whatever
    /// the decoder then writes.
    pub(crate) fn records_for_decoding(
        &mut self,
        len: usize,
    ) -> (&mut [Record], &mut [AuditEntry]) {
        let used = self.len as usize;
        if used > len {
            self.records[len..used].fill(Record::default());
            self.log[len..used].fill(AuditEntry::default());
        }
        self.len = len as u8;
        (&mut self.records[..len], &mut self.log[..len])
    }
    /// Moves record `id` to `to`, refusing any move outside docs/protocol.md §3's table.
    ///
    /// This is the only code that changes a record's lifecycle state. It also lets the ghost
    /// observer judge the move with its own, independent copy of the table (property I4).
    pub fn move_record(&mut self, id: RecordId, to: Life) -> Result<(), IllegalMove> {
        let from = self.record(id).life;
        if !allowed(from, to) {
            return Err(IllegalMove {
                record: id,
                from,
                to,
            });
        }
        crate::ghost::observe_move(&mut self.ghost, from, to);
        crate::rules::fire(lifecycle_rule(from, to));
        self.records[id as usize].life = to;
        let r = &mut self.records[id as usize];
        if to == Life::Revoked {
            r.pending_revocation = false;
        }
        // The review snapshot exists only while quarantined (docs/protocol.md §5): a record
        // that leaves review forgets it, so states that differ only in a dead number are one.
        if from == Life::Quarantined {
            r.review_seq = None;
        }
        Ok(())
    }
    /// The allocated records, mutable, for the ghost observer's own fields (it never moves a
    /// record: `life` stays private).
    pub(crate) fn records_mut_ghost(&mut self) -> &mut [Record] {
        &mut self.records[..self.len as usize]
    }
    /// The open transaction of `agent`, if any.
    pub fn txn(&self, agent: u8) -> Option<&Txn> {
        self.txns.get(agent as usize)?.as_ref()
    }
    /// Opens or closes `agent`'s transaction.
    pub fn set_txn(&mut self, agent: u8, txn: Option<Txn>) {
        self.txns[agent as usize] = txn;
    }
    /// All transaction slots (index = agent).
    pub fn txns(&self) -> &[Option<Txn>; MAX_AGENTS] {
        &self.txns
    }
    /// The context of `agent` (revision 3, docs/protocol.md §4): every record served to it
    /// since its session began.
    pub fn context(&self, agent: u8) -> RecordSet {
        self.contexts[agent as usize]
    }
    /// Sets the context of `agent` (serving records adds to it; `EndSession` clears it).
    pub fn set_context(&mut self, agent: u8, context: RecordSet) {
        self.contexts[agent as usize] = context;
    }
    /// Every agent's context (index = agent).
    pub fn contexts(&self) -> &[RecordSet; MAX_AGENTS] {
        &self.contexts
    }
    /// Records staged by `agent`'s open transaction (writer = agent), ascending.
    pub fn staged_by(&self, agent: u8) -> RecordSet {
        self.ids_where(|r| r.writer == Some(agent))
    }
    /// Ids of the allocated records that satisfy `keep`.
    pub fn ids_where(&self, keep: impl Fn(&Record) -> bool) -> RecordSet {
        let mut set = RecordSet::EMPTY;
        for (id, r) in self.records().iter().enumerate() {
            if keep(r) {
                set.insert(id as RecordId);
            }
        }
        set
    }
    /// Transitive ancestors of `id` (not including `id`).
    pub fn ancestors(&self, id: RecordId) -> RecordSet {
        self.closure(id, |r| r.parents)
    }
    /// The records reachable from `id` over `edges` (each record's edges to earlier records),
    /// not including `id`: the one walk behind [`State::ancestors`] and lineage over content
    /// ([`crate::provenance::lineage_ancestors`]).
    pub fn closure(&self, id: RecordId, edges: impl Fn(&Record) -> RecordSet) -> RecordSet {
        let mut out = RecordSet::EMPTY;
        let mut todo = edges(self.record(id));
        while let Some(p) = todo.max() {
            todo.remove(p);
            if p != id && !out.contains(p) {
                out.insert(p);
                todo = todo.union(edges(self.record(p)));
            }
        }
        out
    }
    /// The rollback log entry of record `id`.
    pub fn audit(&self, id: RecordId) -> &AuditEntry {
        &self.log[id as usize]
    }
    /// Appends `(record, repair, cause)` to the rollback log.
    pub fn log_repair(&mut self, id: RecordId, repair: Repair, cause: RecordId) {
        crate::rules::fire(match repair {
            Repair::Retracted => crate::rules::Rule::AuditRetracted,
            Repair::Revoked => crate::rules::Rule::AuditRevoked,
            Repair::Quarantined => crate::rules::Rule::AuditQuarantined,
            Repair::Compensated => crate::rules::Rule::AuditCompensated,
            Repair::Leaked => crate::rules::Rule::AuditLeaked,
        });
        let entry = &mut self.log[id as usize];
        entry.repairs |= repair.bit();
        entry.cause = Some(cause);
    }
    /// The state's locality key: [`crate::packed::locality`] of its encoding (which says
    /// what the key is and what it is for). The explorer computes it from the successor's
    /// bytes, which it has packed anyway; this packs first.
    pub fn locality(&self) -> u64 {
        let mut bytes = Vec::new();
        self.pack(&mut bytes);
        crate::packed::locality(&bytes)
    }

    /// Renames agents by `perm` (`perm[old] = new`): used by symmetry reduction.
    pub fn permute_agents(&self, perm: &[u8]) -> State {
        let mut out = self.clone();
        for (old, &new) in perm.iter().enumerate() {
            out.txns[new as usize] = self.txns[old];
            out.ghost.txns[new as usize] = self.ghost.txns[old];
            out.contexts[new as usize] = self.contexts[old];
            out.ghost.contexts[new as usize] = self.ghost.contexts[old];
        }
        for r in &mut out.records[..self.len as usize] {
            r.owner = perm[r.owner as usize];
            r.writer = r.writer.map(|w| perm[w as usize]);
        }
        out
    }
}

/// The row of the lifecycle table (docs/protocol.md §3) that the legal move `from -> to` takes.
fn lifecycle_rule(from: Life, to: Life) -> crate::rules::Rule {
    use crate::rules::Rule;
    use Life::*;
    match (from, to) {
        (Raw, Tentative) => Rule::LifeStage,
        (Tentative, Validated) => Rule::LifeValidate,
        (Validated, Committed) => Rule::LifeCommit,
        (Committed, ActionSafe) => Rule::LifeActionSafe,
        (Quarantined, Tentative) => Rule::LifeRequeue,
        (Quarantined, Validated) => Rule::LifeReviewKeep,
        (_, Revoked) => Rule::LifeRevoke,
        (_, Superseded) => Rule::LifeSupersede,
        (Tentative | Validated, Quarantined) => Rule::LifeQuarantine,
        _ => Rule::LifeRequarantine,
    }
}
