//! The record lifecycle of docs/protocol.md §3: the 8 states and the table of legal moves.
//!
//! * `lifecycle::allowed` is compared, over all 64 `(from, to)` pairs, with the table typed here
//!   from the spec (row by row, independently of the model's `match`);
//! * the I4 ghost observer (`ghost::observe_move`) is compared with the same table: it must flag
//!   exactly the moves outside it;
//! * `State::move_record` is driven into every state and asked for every move: an illegal move is
//!   refused with `IllegalMove` and leaves the record (and the whole state) unchanged; a legal one
//!   is performed and not flagged by I4;
//! * the visibility of lifecycle states at each isolation level (§4: "X and above on the main
//!   path; branch states are never visible").

mod common;

use memtx_model::ghost::observe_move;
use memtx_model::lifecycle::{allowed, IllegalMove};
use memtx_model::record::Record;
use memtx_model::state::{Ghost, State};
use memtx_model::txn::Isolation;
use memtx_model::Life::{self, *};

/// docs/protocol.md §3, one entry per row of the table, `from` states expanded.
const SPEC_TABLE: &[(&[Life], Life, &str)] = &[
    (
        &[Raw],
        Tentative,
        "staging (adopting a raw observation into a transaction)",
    ),
    (
        &[Tentative],
        Validated,
        "passing the commit pipeline's checks",
    ),
    (&[Validated], Committed, "commit"),
    (
        &[Committed],
        ActionSafe,
        "commit inside an external-action transaction",
    ),
    (&[Tentative, Validated], Quarantined, "a failed check"),
    (&[Quarantined], Tentative, "re-validation / rebuild"),
    (&[Quarantined], Validated, "Resolve(keep)"),
    (
        &[Committed, ActionSafe],
        Superseded,
        "a higher-authority rival wins adjudication",
    ),
    (
        &[
            Raw,
            Tentative,
            Validated,
            Committed,
            ActionSafe,
            Quarantined,
            Superseded,
        ],
        Revoked,
        "any but Revoked: abort, revocation, or cascade",
    ),
    (
        &[Committed, ActionSafe, Quarantined],
        Quarantined,
        "cascade on a derived view",
    ),
];

fn spec_allows(from: Life, to: Life) -> bool {
    SPEC_TABLE
        .iter()
        .any(|(froms, t, _)| *t == to && froms.contains(&from))
}

#[test]
fn the_spec_table_has_twenty_moves() {
    // 1 + 1 + 1 + 1 + 2 + 1 + 1 + 2 + 7 + 3 rows once expanded: guards the typing of the table.
    let n = Life::ALL
        .iter()
        .flat_map(|&f| Life::ALL.iter().map(move |&t| (f, t)))
        .filter(|&(f, t)| spec_allows(f, t))
        .count();
    assert_eq!(n, 20);
}

#[test]
fn allowed_matches_the_spec_table_on_all_64_pairs() {
    let mut mismatches = Vec::new();
    for from in Life::ALL {
        for to in Life::ALL {
            if allowed(from, to) != spec_allows(from, to) {
                mismatches.push(format!(
                    "{from:?} -> {to:?}: model {}, spec {}",
                    allowed(from, to),
                    spec_allows(from, to)
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_i4_ghost_flags_exactly_the_moves_outside_the_spec_table() {
    for from in Life::ALL {
        for to in Life::ALL {
            let mut ghost = Ghost::default();
            observe_move(&mut ghost, from, to);
            assert_eq!(
                ghost.is_violated(4),
                !spec_allows(from, to),
                "ghost judgement of {from:?} -> {to:?}"
            );
            // It judges only I4.
            assert!(ghost.violated.numbers().all(|n| n == 4));
        }
    }
}

/// A state holding one record, r0, brought into `life` along legal moves.
fn record_in(life: Life) -> State {
    let path: &[Life] = match life {
        Raw => &[],
        Tentative => &[Tentative],
        Validated => &[Tentative, Validated],
        Committed => &[Tentative, Validated, Committed],
        ActionSafe => &[Tentative, Validated, Committed, ActionSafe],
        Quarantined => &[Tentative, Quarantined],
        Superseded => &[Tentative, Validated, Committed, Superseded],
        Revoked => &[Revoked],
    };
    let mut s = State::initial();
    let id = s.push_record(Record::default());
    assert_eq!(s.record(id).life(), Raw, "a new record enters as Raw");
    for &to in path {
        s.move_record(id, to)
            .unwrap_or_else(|e| panic!("legal path to {life:?} refused: {e}"));
    }
    assert_eq!(s.record(id).life(), life);
    s
}

#[test]
fn move_record_refuses_every_illegal_move_and_changes_nothing() {
    let mut refused = 0;
    for from in Life::ALL {
        let before = record_in(from);
        for to in Life::ALL.into_iter().filter(|&to| !spec_allows(from, to)) {
            let mut s = before.clone();
            assert_eq!(
                s.move_record(0, to),
                Err(IllegalMove {
                    record: 0,
                    from,
                    to
                }),
                "{from:?} -> {to:?} must be refused"
            );
            assert_eq!(
                s.record(0),
                before.record(0),
                "record changed by {from:?} -> {to:?}"
            );
            assert!(s == before, "state changed by refused {from:?} -> {to:?}");
            assert!(!s.ghost.is_violated(4));
            refused += 1;
        }
    }
    assert_eq!(refused, 64 - 20);
}

#[test]
fn move_record_performs_every_legal_move() {
    for from in Life::ALL {
        for to in Life::ALL.into_iter().filter(|&to| spec_allows(from, to)) {
            let mut s = record_in(from);
            s.move_record(0, to)
                .unwrap_or_else(|e| panic!("legal move refused: {e}"));
            assert_eq!(s.record(0).life(), to);
            assert!(!s.ghost.is_violated(4), "{from:?} -> {to:?} flagged by I4");
        }
    }
}

#[test]
fn revoked_is_terminal_and_clears_a_pending_revocation() {
    let mut s = record_in(Committed);
    s.record_mut(0).pending_revocation = true;
    s.move_record(0, Revoked).unwrap();
    assert!(!s.record(0).pending_revocation);
    for to in Life::ALL {
        assert!(s.clone().move_record(0, to).is_err(), "Revoked -> {to:?}");
    }
}

#[test]
fn active_and_in_force_states() {
    for life in Life::ALL {
        assert_eq!(
            life.is_active(),
            !matches!(life, Revoked | Superseded | Quarantined),
            "{life:?} active"
        );
        assert_eq!(
            life.is_committed(),
            matches!(life, Committed | ActionSafe),
            "{life:?} in force"
        );
    }
}

#[test]
fn isolation_levels_read_their_state_and_above_on_the_main_path_only() {
    // Spec §4, typed as a table: which states each level reads.
    let reads: &[(Isolation, &[Life])] = &[
        (
            Isolation::RawRead,
            &[Raw, Tentative, Validated, Committed, ActionSafe],
        ),
        (
            Isolation::TentativeRead,
            &[Tentative, Validated, Committed, ActionSafe],
        ),
        (
            Isolation::ValidatedRead,
            &[Validated, Committed, ActionSafe],
        ),
        (Isolation::CommittedRead, &[Committed, ActionSafe]),
        (Isolation::ActionSafeRead, &[ActionSafe]),
    ];
    for &(level, visible) in reads {
        for life in Life::ALL {
            assert_eq!(
                level.reads(life),
                visible.contains(&life),
                "{level:?} reading {life:?}"
            );
        }
    }
}
