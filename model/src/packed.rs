//! A compact, canonical byte encoding of [`State`] for explorers' frontiers and exact mode.
//!
//! Layout: `clock, next_seq, len`, the ghost's verdicts ([`VERDICT_BYTES`], sized by the property
//! table), then per used record 20 bytes (small enumerations share a byte, see
//! `record_words`), then a presence mask
//! of transactions and 5 bytes per open one, then a mask of the agents whose context is not
//! empty and 2 bytes per such context, then 2 bytes of rollback log per used record, then
//! the *ghost trailer*: a count and 9 bytes per ghost field that differs from the protocol field
//! it mirrors. The ghost's copy of a transaction and of a record's review snapshot equal the
//! protocol's in every state a correct protocol reaches, so the trailer is one zero byte there;
//! it exists so that a defective protocol, whose ghost and protocol fields part, still packs
//! losslessly.
//! Equal states give equal bytes and different states different bytes; [`State::unpack`] refuses
//! anything that is not such an encoding (it never panics on bad bytes).

use crate::evidence::Confidence;
use crate::lifecycle::Life;
use crate::record::{Effect, Kind, Reason, Record, RecordSet, Scope, Validity, MAX_RECORDS};
use crate::state::{AuditEntry, GhostTxn, State, MAX_AGENTS};
use crate::state::{Verdicts, VERDICT_BYTES};
use crate::txn::{Isolation, Tier, Txn};

const NONE: u8 = u8::MAX;

fn opt(v: Option<u8>) -> u8 {
    v.unwrap_or(NONE)
}

fn from_opt(b: u8) -> Option<u8> {
    (b != NONE).then_some(b)
}

/// Decodes an enum from its declaration index (encoding is `value as u8`; the tables below list
/// every value in declaration order, which `tables_are_in_declaration_order` checks).
fn pick<T: Copy>(all: &[T], b: u8) -> Option<T> {
    all.get(b as usize).copied()
}

const KINDS: [Kind; 5] = [
    Kind::Belief,
    Kind::Summary,
    Kind::Profile,
    Kind::ReversibleAction,
    Kind::IrreversibleAction,
];
const SCOPES: [Scope; 3] = [Scope::Private, Scope::Shared, Scope::Public];
const CONFIDENCES: [Confidence; 2] = [Confidence::Low, Confidence::High];
const EFFECTS: [Effect; 3] = [Effect::Executed, Effect::Compensated, Effect::Leaked];
const TIERS: [Tier; 3] = [Tier::Low, Tier::Medium, Tier::ExternalAction];
const ISOLATIONS: [Isolation; 5] = Isolation::ALL;
const REASONS: [Reason; 21] = [
    Reason::Evidence,
    Reason::Expired,
    Reason::Review,
    Reason::InactiveParent,
    Reason::Permission,
    Reason::UnstableDependency,
    Reason::Rebuild,
    Reason::StaleWrite,
    Reason::Outranked,
    Reason::RevokedParent,
    Reason::Aborted,
    Reason::Revocation,
    Reason::Cascade,
    Reason::ReviewRejected,
    Reason::SupersededByAuthority,
    Reason::SupersededByCorrection,
    Reason::SupersededByReview,
    Reason::UncommittedParent,
    Reason::ScopeReview,
    Reason::ContentPermission,
    Reason::StaleContent,
];

/// Bytes per packed record.
const RECORD_BYTES: usize = 20;
/// Bytes per packed open transaction.
const TXN_BYTES: usize = 5;
/// Bytes per entry of the ghost trailer.
const GHOST_ENTRY_BYTES: usize = 9;
/// Ghost trailer entry tags.
const GHOST_RECORD: u8 = 0;
const GHOST_TXN: u8 = 1;
const GHOST_CONTEXT: u8 = 2;
/// Bytes of the header (`clock, next_seq, len`, then the ghost's verdicts).
const HEADER_BYTES: usize = 3 + VERDICT_BYTES;
/// Length of the encoding of a state with `records` records, `open` open transactions,
/// `contexts` non-empty contexts and `exceptions` ghost fields that differ from their protocol
/// mirror.
fn packed_len(records: usize, open: usize, contexts: usize, exceptions: usize) -> usize {
    HEADER_BYTES
        + (RECORD_BYTES + 2) * records
        + 3
        + TXN_BYTES * open
        + 2 * contexts
        + GHOST_ENTRY_BYTES * exceptions
}

/// Does a ghost field of `r` differ from the protocol field it mirrors?
fn ghost_parted(r: &Record) -> bool {
    r.ghost_review_seq != r.review_seq
        || r.ghost_implicit != r.implicit
        || r.ghost_observed != r.observed
        || r.ghost_transcribed != r.transcribed
}

/// What the ghost's copy of `txn` is when it mirrors the protocol's transaction.
fn mirror(txn: Option<Txn>) -> Option<GhostTxn> {
    txn.map(|tx| GhostTxn {
        snapshot: tx.snapshot,
        seq: tx.snapshot_seq,
        level: tx.isolation as u8,
    })
}

/// Writes fixed-size pieces into a byte slice of exactly the right length, front to back.
struct Writer<'a>(&'a mut [u8]);

impl Writer<'_> {
    #[inline(always)]
    fn put<const N: usize>(&mut self, piece: [u8; N]) {
        let (head, tail) = std::mem::take(&mut self.0)
            .split_first_chunk_mut::<N>()
            .expect("[memtx internal bug] packed length miscounted");
        *head = piece;
        self.0 = tail;
    }
}

/// Bytes at the start of a record's encoding that hold what the record was created with.
const CREATED_BYTES: usize = 9;

/// The code of "none" in the four-bit field of an effect (effects are 0..=2).
const NO_EFFECT: u8 = 3;
/// The code of "none" in the five-bit field of a reason (reasons are 0..=20).
const NO_REASON: u8 = 31;
/// The code of "none" in the three-bit field of a writer (agents are below [`MAX_AGENTS`]).
const NO_WRITER: u8 = 7;

/// The *locality key* of an encoded state: a hash of its record count and of what every
/// record was created with (the first `CREATED_BYTES` = 9 bytes of each record's encoding).
///
/// Only the operations that add a record (Observe, Stage, CallTool) and Rebuild (which
/// drops a view's revoked parents) change it; beginning, committing, aborting, revoking and
/// reviewing do not. The checker's parallel explorer gives all states with one key to one
/// worker, so that most successors stay with the worker that expanded their parent
/// (`ExploreOptions::locality` in the checker explains why that pays). It reads the bytes
/// the explorer has just packed (two loads per record), and it is not a fingerprint: many
/// states share a key, and it decides nothing but who does the work. Bytes that are not an
/// encoding give some key; nothing panics.
pub fn locality(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    // The header is `clock, next_seq, len, verdicts`, as `decode` reads it.
    let records = bytes
        .first_chunk::<HEADER_BYTES>()
        .map_or(0, |header| header[2] as usize);
    let mut key = (records as u64).wrapping_mul(K);
    for i in 0..records {
        let created = bytes.get(HEADER_BYTES + RECORD_BYTES * i..);
        let head = created.and_then(|c| c.first_chunk::<8>());
        let tail = created.and_then(|c| c.get(CREATED_BYTES - 4..)?.first_chunk::<4>());
        let (Some(head), Some(tail)) = (head, tail) else {
            break;
        };
        let word = u64::from_le_bytes(*head) ^ u64::from(u32::from_le_bytes(*tail)).rotate_left(17);
        key = (key.rotate_left(5) ^ word).wrapping_mul(K);
    }
    key
}

/// A record's 20 bytes as three little-endian words (bytes 0-7, 8-15 and 16-19), built in
/// registers: what it was created with first (kind, confidence and scope in one byte; slot,
/// value, source, owner, parents, validity: the `CREATED_BYTES` bytes [`locality`] hashes),
/// then its lifecycle (life, a pending revocation and its effect in one byte; its reason and
/// writer in one), its commit sequence number, the supports in doubt when it executed, its
/// review snapshot and its labels (implicit provenance, observation, transcriptions). Sharing
/// bytes saves 5 of 25 per record, which every successor's packing, fingerprint, batch and
/// frontier entry pays.
///
/// Words, not an array of bytes: a `[u8; 20]` built byte by byte and then copied with wider
/// loads stalls each load on its byte stores (no store forwarding); measured on `paper`, that
/// stall was half of [`State::pack`]'s time.
#[inline(always)]
fn record_words(r: &Record) -> (u64, u64, u32) {
    debug_assert!(
        r.writer.is_none_or(|w| (w as usize) < MAX_AGENTS),
        "[memtx internal bug] a writer outside the agents"
    );
    let kcs = r.kind as u8 | (r.confidence as u8) << 3 | (r.scope as u8) << 4;
    let effect = r.effect.map_or(NO_EFFECT, |e| e as u8);
    let reason = r.reason.map_or(NO_REASON, |x| x as u8);
    let writer = r.writer.map_or(NO_WRITER, |w| w & NO_WRITER);
    let life = r.life() as u8 | (r.pending_revocation as u8) << 3 | effect << 4;
    let byte = |b: u8, at: u32| u64::from(b) << (8 * at);
    let first = byte(kcs, 0)
        | byte(r.slot, 1)
        | byte(r.value, 2)
        | byte(r.source, 3)
        | byte(r.owner, 4)
        | u64::from(r.parents.0) << 40
        | byte(r.validity.from, 7);
    let [i0, i1] = r.implicit.0.to_le_bytes();
    let second = byte(r.validity.until, 0)
        | byte(life, 1)
        | byte(reason | writer << 5, 2)
        | byte(opt(r.seq), 3)
        | u64::from(r.doubted_at_execution.0) << 32
        | byte(opt(r.review_seq), 6)
        | byte(i0, 7);
    let third = u32::from(i1) | u32::from(opt(r.observed)) << 8 | u32::from(r.transcribed.0) << 16;
    (first, second, third)
}

/// A record's 20 bytes ([`record_words`]) as an array.
#[cfg(test)]
fn pack_record(r: &Record) -> [u8; RECORD_BYTES] {
    let (a, b, c) = record_words(r);
    let mut out = [0; RECORD_BYTES];
    out[..8].copy_from_slice(&a.to_le_bytes());
    out[8..16].copy_from_slice(&b.to_le_bytes());
    out[16..].copy_from_slice(&c.to_le_bytes());
    out
}

/// Decodes one record into `r`, field by field (no temporary record is built and copied);
/// `None` if a field's bits are out of its range (so that only [`record_words`]' bytes decode).
fn unpack_record(b: &[u8; RECORD_BYTES], r: &mut Record) -> Option<()> {
    r.kind = pick(&KINDS, b[0] & 7)?;
    r.confidence = pick(&CONFIDENCES, (b[0] >> 3) & 1)?;
    r.scope = pick(&SCOPES, b[0] >> 4)?;
    r.slot = b[1];
    r.value = b[2];
    r.source = b[3];
    r.owner = b[4];
    r.parents = RecordSet(u16::from_le_bytes([b[5], b[6]]));
    r.validity = Validity {
        from: b[7],
        until: b[8],
    };
    r.life = pick(&Life::ALL, b[9] & 7)?;
    r.pending_revocation = (b[9] >> 3) & 1 == 1;
    r.effect = match b[9] >> 4 {
        NO_EFFECT => None,
        e => Some(pick(&EFFECTS, e)?),
    };
    r.reason = match b[10] & 31 {
        NO_REASON => None,
        x => Some(pick(&REASONS, x)?),
    };
    r.writer = match b[10] >> 5 {
        NO_WRITER => None,
        w if (w as usize) < MAX_AGENTS => Some(w),
        _ => return None,
    };
    r.seq = from_opt(b[11]);
    r.doubted_at_execution = RecordSet(u16::from_le_bytes([b[12], b[13]]));
    r.review_seq = from_opt(b[14]);
    r.implicit = RecordSet(u16::from_le_bytes([b[15], b[16]]));
    r.observed = from_opt(b[17]);
    r.transcribed = RecordSet(u16::from_le_bytes([b[18], b[19]]));
    // The ghost's copies mirror them unless the ghost trailer says otherwise.
    r.ghost_review_seq = r.review_seq;
    r.ghost_implicit = r.implicit;
    r.ghost_observed = r.observed;
    r.ghost_transcribed = r.transcribed;
    Some(())
}

impl State {
    /// Appends the canonical encoding of this state to `out`.
    ///
    /// The explorers pack every generated successor, so this is one of the hottest functions
    /// of a run: it computes the encoding's length, extends `out` once, and writes
    /// fixed-size pieces into the new bytes (no capacity check per piece).
    pub fn pack(&self, out: &mut Vec<u8>) {
        let txns = self.txns();
        let mask = txns
            .iter()
            .enumerate()
            .fold(0u8, |m, (i, t)| m | ((t.is_some() as u8) << i));
        let contexts = self.contexts();
        let cmask = contexts
            .iter()
            .enumerate()
            .fold(0u8, |m, (i, c)| m | ((!c.is_empty() as u8) << i));
        let len = self.len();
        let start = out.len();
        // Written as if every ghost field mirrored its protocol field (the trailer count is the
        // last byte, 0); the rare exceptions are appended afterwards and the count patched.
        out.resize(
            start
                + packed_len(
                    len,
                    mask.count_ones() as usize,
                    cmask.count_ones() as usize,
                    0,
                ),
            0,
        );
        let mut w = Writer(&mut out[start..]);
        w.put([self.clock, self.next_seq, len as u8]);
        w.put(self.ghost.violated.to_bytes());
        let mut parted = false;
        for r in self.records() {
            let (first, second, third) = record_words(r);
            w.put(first.to_le_bytes());
            w.put(second.to_le_bytes());
            w.put(third.to_le_bytes());
            parted |= ghost_parted(r);
        }
        w.put([mask]);
        for (tx, g) in txns.iter().zip(&self.ghost.txns) {
            match (tx, g) {
                (Some(tx), Some(g)) => {
                    let [s0, s1] = tx.snapshot.0.to_le_bytes();
                    w.put([tx.tier as u8, tx.isolation as u8, s0, s1, tx.snapshot_seq]);
                    parted |= g.snapshot != tx.snapshot
                        || g.seq != tx.snapshot_seq
                        || g.level != tx.isolation as u8;
                }
                (Some(tx), None) => {
                    let [s0, s1] = tx.snapshot.0.to_le_bytes();
                    w.put([tx.tier as u8, tx.isolation as u8, s0, s1, tx.snapshot_seq]);
                    parted = true;
                }
                (None, g) => parted |= g.is_some(),
            }
        }
        w.put([cmask]);
        for c in contexts.iter().filter(|c| !c.is_empty()) {
            w.put(c.0.to_le_bytes());
        }
        parted |= self.ghost.contexts != *contexts;
        for id in self.ids() {
            let a = self.audit(id);
            w.put([a.repairs_bits(), opt(a.cause)]);
        }
        w.put([0]);
        debug_assert!(
            w.0.is_empty(),
            "[memtx internal bug] packed length miscounted"
        );
        if parted {
            self.pack_ghost_trailer(out);
        }
    }

    /// Appends the ghost trailer's entries (the ghost fields that differ from their protocol
    /// mirror) and patches its count, the last byte written so far.
    #[cold]
    fn pack_ghost_trailer(&self, out: &mut Vec<u8>) {
        let count_at = out.len() - 1;
        let mut count = 0u8;
        for (id, r) in self.records().iter().enumerate() {
            if ghost_parted(r) {
                let [g0, g1] = r.ghost_implicit.0.to_le_bytes();
                let [t0, t1] = r.ghost_transcribed.0.to_le_bytes();
                out.extend([
                    GHOST_RECORD,
                    id as u8,
                    opt(r.ghost_review_seq),
                    g0,
                    g1,
                    opt(r.ghost_observed),
                    t0,
                    t1,
                    0,
                ]);
                count += 1;
            }
        }
        for (agent, g) in self.ghost.txns.iter().enumerate() {
            if *g != mirror(self.txns()[agent]) {
                let (present, [s0, s1], seq, level) = match g {
                    Some(g) => (1, g.snapshot.0.to_le_bytes(), g.seq, g.level),
                    None => (0, [0, 0], 0, 0),
                };
                out.extend([GHOST_TXN, agent as u8, present, s0, s1, seq, level, 0, 0]);
                count += 1;
            }
        }
        for (agent, g) in self.ghost.contexts.iter().enumerate() {
            if *g != self.contexts()[agent] {
                let [c0, c1] = g.0.to_le_bytes();
                out.extend([GHOST_CONTEXT, agent as u8, c0, c1, 0, 0, 0, 0, 0]);
                count += 1;
            }
        }
        out[count_at] = count;
    }

    /// Decodes exactly the bytes [`State::pack`] wrote; `None` for anything else.
    pub fn unpack(bytes: &[u8]) -> Option<State> {
        let mut s = State::initial();
        s.unpack_into(bytes).then_some(s)
    }

    /// [`State::unpack`] into an existing value, without moving a whole state around (the
    /// explorer decodes every state it expands this way). Returns `false`, leaving `self`
    /// unspecified, for bytes that are not an encoding.
    pub fn unpack_into(&mut self, bytes: &[u8]) -> bool {
        self.decode(bytes).is_some()
    }

    /// Overwrites every field of `self` from `bytes`, front to back.
    fn decode(&mut self, bytes: &[u8]) -> Option<()> {
        let (&[clock, next_seq, len], rest) = bytes.split_first_chunk::<3>()?;
        let (&verdicts, rest) = rest.split_first_chunk::<VERDICT_BYTES>()?;
        let len = len as usize;
        if len > MAX_RECORDS {
            return None;
        }
        let (&mask, after_mask) = rest.get(RECORD_BYTES * len..)?.split_first()?;
        let open = mask.count_ones() as usize;
        let &cmask = after_mask.get(TXN_BYTES * open)?;
        let contexts = cmask.count_ones() as usize;
        let &exceptions = after_mask.get(TXN_BYTES * open + 1 + 2 * contexts + 2 * len)?;
        if mask >> MAX_AGENTS != 0
            || cmask >> MAX_AGENTS != 0
            || bytes.len() != packed_len(len, open, contexts, exceptions as usize)
        {
            return None;
        }
        self.clock = clock;
        self.next_seq = next_seq;
        self.ghost.violated = Verdicts::from_bytes(verdicts)?;
        let (records, log) = self.records_for_decoding(len);
        let (record_bytes, rest) = rest.split_at(RECORD_BYTES * len);
        for (r, b) in records
            .iter_mut()
            .zip(record_bytes.chunks_exact(RECORD_BYTES))
        {
            unpack_record(b.try_into().ok()?, r)?;
        }
        let (txn_bytes, rest) = rest[1..].split_at(TXN_BYTES * open);
        let (context_bytes, rest) = rest[1..].split_at(2 * contexts);
        let (log_bytes, trailer) = rest.split_at(2 * len);
        let mut context_bytes = context_bytes.chunks_exact(2);
        let mut decoded = [RecordSet::EMPTY; MAX_AGENTS];
        for (agent, slot) in decoded.iter_mut().enumerate() {
            let context = if cmask & (1 << agent) == 0 {
                RecordSet::EMPTY
            } else {
                let &[c0, c1] = context_bytes.next()? else {
                    return None;
                };
                let c = RecordSet(u16::from_le_bytes([c0, c1]));
                if c.is_empty() {
                    return None;
                }
                c
            };
            *slot = context;
        }
        for (entry, b) in log.iter_mut().zip(log_bytes.chunks_exact(2)) {
            *entry = AuditEntry::from_parts(b[0], from_opt(b[1]));
        }
        for (agent, context) in decoded.into_iter().enumerate() {
            self.set_context(agent as u8, context);
        }
        // The ghost's copy mirrors it unless the ghost trailer says otherwise.
        self.ghost.contexts = decoded;
        let mut txn_bytes = txn_bytes.chunks_exact(TXN_BYTES);
        for agent in 0..MAX_AGENTS as u8 {
            let txn = if mask & (1 << agent) == 0 {
                None
            } else {
                let &[tier, isolation, s0, s1, snapshot_seq] = txn_bytes.next()? else {
                    return None;
                };
                Some(Txn {
                    tier: pick(&TIERS, tier)?,
                    isolation: pick(&ISOLATIONS, isolation)?,
                    snapshot: RecordSet(u16::from_le_bytes([s0, s1])),
                    snapshot_seq,
                })
            };
            self.set_txn(agent, txn);
            self.ghost.txns[agent as usize] = mirror(txn);
        }
        // The ghost trailer: entries in canonical order (records by id, then agents), each
        // naming a field that differs from its mirror.
        let mut last: Option<(u8, u8)> = None;
        for e in trailer[1..].chunks_exact(GHOST_ENTRY_BYTES) {
            let &[tag, index, a, b, c, d, f, g, h] = e else {
                return None;
            };
            if last.is_some_and(|l| l >= (tag, index)) {
                return None;
            }
            last = Some((tag, index));
            match tag {
                GHOST_RECORD if (index as usize) < len && h == 0 => {
                    let r = self.record_mut(index);
                    r.ghost_review_seq = from_opt(a);
                    r.ghost_implicit = RecordSet(u16::from_le_bytes([b, c]));
                    r.ghost_observed = from_opt(d);
                    r.ghost_transcribed = RecordSet(u16::from_le_bytes([f, g]));
                    if !ghost_parted(r) {
                        return None;
                    }
                }
                GHOST_CONTEXT if (index as usize) < MAX_AGENTS && [c, d, f, g, h] == [0; 5] => {
                    let g = RecordSet(u16::from_le_bytes([a, b]));
                    if g == self.context(index) {
                        return None;
                    }
                    self.ghost.contexts[index as usize] = g;
                }
                GHOST_TXN if (index as usize) < MAX_AGENTS && [g, h] == [0; 2] => {
                    let g = match a {
                        0 if [b, c, d, f] == [0; 4] => None,
                        1 if f <= Isolation::ActionSafeRead as u8 => Some(GhostTxn {
                            snapshot: RecordSet(u16::from_le_bytes([b, c])),
                            seq: d,
                            level: f,
                        }),
                        _ => return None,
                    };
                    let slot = &mut self.ghost.txns[index as usize];
                    if *slot == g {
                        return None;
                    }
                    *slot = g;
                }
                _ => return None,
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests;
