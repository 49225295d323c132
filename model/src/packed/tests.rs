//! The packed encoding's unit tests: round trips of every field, and bytes no pack writes refused.

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
fn every_value_of_the_fields_that_share_a_byte_round_trips() {
    let mut r = Record::default();
    let mut back = Record::default();
    let writers = [None, Some(0), Some(MAX_AGENTS as u8 - 1)];
    let effects = [None].into_iter().chain(EFFECTS.map(Some));
    for (kind, scope, confidence) in KINDS.iter().flat_map(|&k| {
        SCOPES
            .iter()
            .flat_map(move |&s| CONFIDENCES.map(|c| (k, s, c)))
    }) {
        (r.kind, r.scope, r.confidence) = (kind, scope, confidence);
        assert!(unpack_record(&pack_record(&r), &mut back).is_some());
        assert_eq!(back, r);
    }
    for (life, pending, effect) in Life::ALL.iter().flat_map(|&l| {
        effects
            .clone()
            .flat_map(move |e| [false, true].map(|p| (l, p, e)))
    }) {
        (r.life, r.pending_revocation, r.effect) = (life, pending, effect);
        assert!(unpack_record(&pack_record(&r), &mut back).is_some());
        assert_eq!(back, r);
    }
    for (reason, writer) in [None]
        .into_iter()
        .chain(REASONS.map(Some))
        .flat_map(|x| writers.map(|w| (x, w)))
    {
        (r.reason, r.writer) = (reason, writer);
        assert!(unpack_record(&pack_record(&r), &mut back).is_some());
        assert_eq!(back, r);
    }
    // Codes no value has are refused, not decoded as a neighbour.
    let good = pack_record(&r);
    for (at, byte) in [(0, 3 << 4), (0, 5), (9, 4 << 4), (10, 25), (10, 4 << 5)] {
        let mut bad = good;
        bad[at] = byte;
        assert_eq!(
            unpack_record(&bad, &mut back),
            None,
            "byte {at} = {byte:#x}"
        );
    }
}

#[test]
fn locality_reads_the_creation_bytes_and_never_panics() {
    let mut s = State::initial();
    let empty = s.locality();
    s.push_record(Record {
        kind: Kind::Summary,
        ..Record::default()
    });
    let one = s.locality();
    assert_ne!(one, empty);
    // A lifecycle move leaves the key alone; a creation field changes it.
    s.move_record(0, Life::Tentative)
        .expect("Raw -> Tentative is allowed");
    assert_eq!(s.locality(), one);
    s.record_mut(0).slot = 1;
    assert_ne!(s.locality(), one);
    // Not encodings: some key, no panic.
    for bytes in [&[][..], &[0, 0, 5], &[0, 0, 1, 0, 0, 1, 2, 3]] {
        let _ = locality(bytes);
    }
}

#[test]
fn ghost_fields_that_part_from_the_protocol_round_trip_through_the_trailer() {
    let mut s = State::initial();
    s.push_record(Record {
        review_seq: Some(2),
        ghost_review_seq: Some(2),
        ..Record::default()
    });
    s.set_txn(
        1,
        Some(Txn {
            tier: Tier::Medium,
            isolation: Isolation::CommittedRead,
            snapshot: RecordSet(1),
            snapshot_seq: 3,
        }),
    );
    s.ghost.txns[1] = mirror(s.txns()[1]);
    let mut plain = Vec::new();
    s.pack(&mut plain);
    assert_eq!(
        plain.last(),
        Some(&0),
        "mirrored ghost fields cost one byte"
    );
    assert_eq!(State::unpack(&plain), Some(s.clone()));
    // A defective protocol: the ghost saw another snapshot, and a review seq of its own.
    s.ghost.txns[1] = Some(GhostTxn {
        snapshot: RecordSet(0),
        seq: 3,
        level: Isolation::CommittedRead as u8,
    });
    s.ghost.txns[2] = Some(GhostTxn::default());
    s.record_mut(0).ghost_review_seq = None;
    let mut parted = Vec::new();
    s.pack(&mut parted);
    assert_eq!(parted.len(), plain.len() + 3 * GHOST_ENTRY_BYTES);
    assert_eq!(State::unpack(&parted), Some(s.clone()));
    // An entry that repeats the mirror is not canonical, and is refused.
    let mut redundant = plain.clone();
    *redundant.last_mut().unwrap() = 1;
    redundant.extend([GHOST_RECORD, 0, 2, 0, 0, NONE, 0, 0, 0]);
    assert_eq!(State::unpack(&redundant), None);
    // Revision 3: the ghost's own context of an agent and its labels of a record.
    s.set_context(1, RecordSet(1));
    s.ghost.contexts[0] = RecordSet(1);
    s.record_mut(0).ghost_observed = Some(1);
    let mut labelled = Vec::new();
    s.pack(&mut labelled);
    assert_eq!(State::unpack(&labelled), Some(s.clone()));
    let mirrored_context = [GHOST_CONTEXT, 1, 0, 0, 0, 0, 0, 0, 0];
    let mut redundant = plain.clone();
    *redundant.last_mut().unwrap() = 1;
    redundant.extend(mirrored_context);
    assert_eq!(
        State::unpack(&redundant),
        None,
        "a context entry equal to its mirror"
    );
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

/// A named way of parting a ghost field from its mirror.
type Parting<T> = (&'static str, fn(&mut T));

/// A state that packs and unpacks to itself, and packs differently from `from`.
fn assert_round_trips_apart(s: &State, from: &State, what: &str) {
    let (mut bytes, mut before) = (Vec::new(), Vec::new());
    s.pack(&mut bytes);
    from.pack(&mut before);
    assert_ne!(bytes, before, "{what}: two states, one encoding");
    assert_eq!(State::unpack(&bytes).as_ref(), Some(s), "{what}");
}

/// Each ghost field that can part from its mirror, parted *alone*: the encoding keeps it
/// (a defective protocol's states that differ only there are not merged).
#[test]
fn each_ghost_field_parted_alone_is_kept() {
    let mut base = State::initial();
    base.push_record(Record::default());
    base.push_record(Record::default());
    let txn = Txn {
        tier: Tier::Medium,
        isolation: Isolation::CommittedRead,
        snapshot: RecordSet(1),
        snapshot_seq: 3,
    };
    base.set_txn(1, Some(txn));
    base.ghost.txns[1] = mirror(Some(txn));
    base.set_context(2, RecordSet(2));
    base.ghost.contexts[2] = RecordSet(2);
    let mut plain = Vec::new();
    base.pack(&mut plain);
    // Two records, one transaction, one context, no trailer entry (an entry's last byte is
    // also 0: the length says there is none).
    assert_eq!(
        plain.len(),
        packed_len(2, 1, 1, 0),
        "the base mirrors every ghost field"
    );

    let record_fields: [Parting<Record>; 4] = [
        ("review snapshot", |r| r.ghost_review_seq = Some(5)),
        ("implicit provenance", |r| r.ghost_implicit = RecordSet(1)),
        ("observation", |r| r.ghost_observed = Some(0)),
        ("transcriptions", |r| r.ghost_transcribed = RecordSet(1)),
    ];
    for (what, part) in record_fields {
        let mut s = base.clone();
        part(s.record_mut(1));
        assert_round_trips_apart(&s, &base, what);
    }
    let txn_fields: [Parting<State>; 5] = [
        ("snapshot", |s| {
            s.ghost.txns[1].as_mut().unwrap().snapshot = RecordSet(3)
        }),
        ("snapshot seq", |s| {
            s.ghost.txns[1].as_mut().unwrap().seq = 4
        }),
        ("level", |s| s.ghost.txns[1].as_mut().unwrap().level = 0),
        ("no ghost transaction", |s| s.ghost.txns[1] = None),
        ("a ghost transaction only", |s| {
            s.ghost.txns[3] = Some(GhostTxn::default())
        }),
    ];
    for (what, part) in txn_fields {
        let mut s = base.clone();
        part(&mut s);
        assert_round_trips_apart(&s, &base, what);
    }
    let mut s = base.clone();
    s.ghost.contexts[2] = RecordSet(3);
    assert_round_trips_apart(&s, &base, "context");
}

/// The most records a state holds round-trip; a count above it, or a transaction or context
/// mask naming an agent past the last, is refused (never a panic), even with the length
/// such a count would give.
#[test]
fn counts_and_masks_past_the_bounds_are_refused() {
    let mut full = State::initial();
    for _ in 0..MAX_RECORDS {
        full.push_record(Record::default());
    }
    let mut bytes = Vec::new();
    full.pack(&mut bytes);
    assert_eq!(State::unpack(&bytes), Some(full.clone()));
    // One record more, with its bytes and its log entry.
    let len_at = 2;
    let mut over = bytes.clone();
    over[len_at] += 1;
    let mask_at = 3 + VERDICT_BYTES + RECORD_BYTES * MAX_RECORDS;
    over.splice(
        mask_at..mask_at,
        bytes[3 + VERDICT_BYTES..][..RECORD_BYTES].to_vec(),
    );
    let end = over.len() - 1;
    over.splice(end..end, [0, NONE]);
    assert_eq!(over.len(), bytes.len() + RECORD_BYTES + 2);
    assert_eq!(State::unpack(&over), None, "17 records");

    let empty = State::initial();
    let mut bytes = Vec::new();
    empty.pack(&mut bytes);
    let mask_at = 3 + VERDICT_BYTES;
    let mut phantom_txn = bytes.clone();
    phantom_txn[mask_at] = 1 << MAX_AGENTS;
    phantom_txn.splice(mask_at + 1..mask_at + 1, [1, 3, 0, 0, 0]);
    assert_eq!(
        State::unpack(&phantom_txn),
        None,
        "a transaction of agent 4"
    );
    let mut phantom_context = bytes.clone();
    phantom_context[mask_at + 1] = 1 << MAX_AGENTS;
    phantom_context.splice(mask_at + 2..mask_at + 2, [1, 0]);
    assert_eq!(
        State::unpack(&phantom_context),
        None,
        "a context of agent 4"
    );
}

/// Ghost trailer entries a pack never writes are refused: a record past the count, an agent
/// past the last, padding that is not zero, a level past the last.
#[test]
fn trailer_entries_no_pack_writes_are_refused() {
    let mut s = State::initial();
    s.push_record(Record::default());
    let txn = Txn {
        tier: Tier::Low,
        isolation: Isolation::RawRead,
        snapshot: RecordSet(1),
        snapshot_seq: 0,
    };
    s.set_txn(2, Some(txn));
    s.ghost.txns[2] = mirror(Some(txn));
    let mut plain = Vec::new();
    s.pack(&mut plain);
    let with = |entry: [u8; GHOST_ENTRY_BYTES]| {
        let mut b = plain.clone();
        *b.last_mut().unwrap() = 1;
        b.extend(entry);
        State::unpack(&b)
    };
    // Accepted as written: each entry below differs from one of these in one byte.
    assert!(with([GHOST_RECORD, 0, 5, 0, 0, NONE, 0, 0, 0]).is_some());
    assert!(with([GHOST_CONTEXT, 3, 1, 0, 0, 0, 0, 0, 0]).is_some());
    assert!(with([GHOST_TXN, 3, 1, 1, 0, 2, 4, 0, 0]).is_some());
    assert!(with([GHOST_TXN, 2, 0, 0, 0, 0, 0, 0, 0]).is_some());
    let refused = [
        (
            "a record past the count",
            [GHOST_RECORD, 1, 5, 0, 0, NONE, 0, 0, 0],
        ),
        ("record padding", [GHOST_RECORD, 0, 5, 0, 0, NONE, 0, 0, 1]),
        (
            "a context of agent 4",
            [GHOST_CONTEXT, 4, 1, 0, 0, 0, 0, 0, 0],
        ),
        ("context padding", [GHOST_CONTEXT, 3, 1, 0, 0, 0, 0, 0, 1]),
        (
            "a transaction of agent 4",
            [GHOST_TXN, 4, 1, 1, 0, 2, 4, 0, 0],
        ),
        ("transaction padding", [GHOST_TXN, 3, 1, 1, 0, 2, 4, 0, 1]),
        ("a level past the last", [GHOST_TXN, 3, 1, 1, 0, 2, 5, 0, 0]),
        (
            "an absent transaction's bytes",
            [GHOST_TXN, 2, 0, 1, 0, 0, 0, 0, 0],
        ),
    ];
    for (what, entry) in refused {
        assert_eq!(with(entry), None, "{what}");
    }
}
