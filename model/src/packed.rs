//! A compact, canonical byte encoding of [`State`] for explorers' frontiers and exact mode.
//!
//! Layout: `clock, next_seq, len, ghost(2)`, then per used record 19 bytes, then a presence mask
//! of transactions and 5 bytes per open one, then 2 bytes of rollback log per used record.
//! Equal states give equal bytes and different states different bytes; [`State::unpack`] refuses
//! anything that is not such an encoding (it never panics on bad bytes).

use crate::evidence::Confidence;
use crate::lifecycle::Life;
use crate::record::{Effect, Kind, Reason, Record, RecordSet, Scope, Validity, MAX_RECORDS};
use crate::state::{AuditEntry, State, MAX_AGENTS};
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
const ISOLATIONS: [Isolation; 5] = [
    Isolation::RawRead,
    Isolation::TentativeRead,
    Isolation::ValidatedRead,
    Isolation::CommittedRead,
    Isolation::ActionSafeRead,
];
const REASONS: [Reason; 17] = [
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
];

impl State {
    /// Appends the canonical encoding of this state to `out`.
    pub fn pack(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[self.clock, self.next_seq, self.len() as u8]);
        out.extend_from_slice(&self.ghost.violated.to_le_bytes());
        for r in self.records() {
            out.extend_from_slice(&[
                r.kind as u8,
                r.slot,
                r.value,
                r.source,
                r.confidence as u8,
                r.owner,
                r.scope as u8,
            ]);
            out.extend_from_slice(&r.parents.0.to_le_bytes());
            out.extend_from_slice(&[
                r.validity.from,
                r.validity.until,
                r.life() as u8,
                opt(r.reason.map(|x| x as u8)),
                opt(r.writer),
                opt(r.seq),
                opt(r.effect.map(|e| e as u8)),
                r.pending_revocation as u8,
            ]);
            out.extend_from_slice(&r.doubted_at_execution.0.to_le_bytes());
        }
        let mask = self
            .txns()
            .iter()
            .enumerate()
            .fold(0u8, |m, (i, t)| m | ((t.is_some() as u8) << i));
        out.push(mask);
        for tx in self.txns().iter().flatten() {
            out.extend_from_slice(&[tx.tier as u8, tx.isolation as u8]);
            out.extend_from_slice(&tx.snapshot.0.to_le_bytes());
            out.push(tx.snapshot_seq);
        }
        for id in self.ids() {
            let a = self.audit(id);
            out.extend_from_slice(&[a.repairs_bits(), opt(a.cause)]);
        }
    }

    /// Decodes exactly the bytes [`State::pack`] wrote; `None` for anything else.
    pub fn unpack(bytes: &[u8]) -> Option<State> {
        let mut it = bytes.iter().copied();
        let mut next = || it.next();
        let mut s = State::initial();
        s.clock = next()?;
        s.next_seq = next()?;
        let len = next()? as usize;
        if len > MAX_RECORDS {
            return None;
        }
        s.ghost.violated = u16::from_le_bytes([next()?, next()?]);
        for _ in 0..len {
            let mut r = Record {
                kind: pick(&KINDS, next()?)?,
                slot: next()?,
                value: next()?,
                source: next()?,
                confidence: pick(&CONFIDENCES, next()?)?,
                owner: next()?,
                scope: pick(&SCOPES, next()?)?,
                parents: RecordSet(u16::from_le_bytes([next()?, next()?])),
                validity: Validity {
                    from: next()?,
                    until: next()?,
                },
                ..Record::default()
            };
            r.life = pick(&Life::ALL, next()?)?;
            r.reason = match from_opt(next()?) {
                Some(i) => Some(pick(&REASONS, i)?),
                None => None,
            };
            r.writer = from_opt(next()?);
            r.seq = from_opt(next()?);
            r.effect = match from_opt(next()?) {
                Some(i) => Some(pick(&EFFECTS, i)?),
                None => None,
            };
            r.pending_revocation = match next()? {
                0 => false,
                1 => true,
                _ => return None,
            };
            r.doubted_at_execution = RecordSet(u16::from_le_bytes([next()?, next()?]));
            s.push_record(r);
        }
        let mask = next()?;
        if mask >> MAX_AGENTS != 0 {
            return None;
        }
        for agent in 0..MAX_AGENTS as u8 {
            if mask & (1 << agent) != 0 {
                let tier = pick(&TIERS, next()?)?;
                let isolation = pick(&ISOLATIONS, next()?)?;
                let snapshot = RecordSet(u16::from_le_bytes([next()?, next()?]));
                let snapshot_seq = next()?;
                s.set_txn(
                    agent,
                    Some(Txn {
                        tier,
                        isolation,
                        snapshot,
                        snapshot_seq,
                    }),
                );
            }
        }
        for id in 0..len as u8 {
            let repairs = next()?;
            let cause = from_opt(next()?);
            *s.audit_mut(id) = AuditEntry::from_parts(repairs, cause);
        }
        if next().is_some() {
            return None;
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_in_declaration_order() {
        assert!(KINDS.iter().enumerate().all(|(i, v)| *v as usize == i));
        assert!(SCOPES.iter().enumerate().all(|(i, v)| *v as usize == i));
        assert!(CONFIDENCES
            .iter()
            .enumerate()
            .all(|(i, v)| *v as usize == i));
        assert!(EFFECTS.iter().enumerate().all(|(i, v)| *v as usize == i));
        assert!(TIERS.iter().enumerate().all(|(i, v)| *v as usize == i));
        assert!(ISOLATIONS.iter().enumerate().all(|(i, v)| *v as usize == i));
        assert!(REASONS.iter().enumerate().all(|(i, v)| *v as usize == i));
        assert!(Life::ALL.iter().enumerate().all(|(i, v)| *v as usize == i));
    }

    #[test]
    fn truncated_or_extended_bytes_are_refused() {
        let mut s = State::initial();
        s.push_record(Record {
            kind: Kind::Summary,
            parents: RecordSet::EMPTY,
            ..Record::default()
        });
        let mut bytes = Vec::new();
        s.pack(&mut bytes);
        assert_eq!(State::unpack(&bytes), Some(s.clone()));
        assert_eq!(State::unpack(&bytes[..bytes.len() - 1]), None);
        bytes.push(0);
        assert_eq!(State::unpack(&bytes), None);
    }
}
