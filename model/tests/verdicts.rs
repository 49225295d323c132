//! The ghost's verdicts are a table sized by the property table (docs/protocol.md §9): every
//! invariant `memtx list` names can be stored in a state, survives packing and serialising,
//! and is named by the state's display. Adding `I19` needs only its own row.

use memtx_model::properties::{invariant, number_of, HIGHEST_INVARIANT, INVARIANTS, PROPERTIES};
use memtx_model::state::Verdicts;
use memtx_model::State;

/// The invariants of the table, with their numbers.
fn invariants() -> impl Iterator<Item = (u8, &'static str)> {
    PROPERTIES
        .iter()
        .filter(|p| p.is_invariant())
        .map(|p| (number_of(p.key) as u8, p.key))
}

#[test]
fn invariants_come_first_in_ascending_number_order() {
    assert_eq!(invariants().count(), INVARIANTS);
    let numbers: Vec<u8> = invariants().map(|(n, _)| n).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    for (n, key) in invariants() {
        assert_eq!(key, format!("I{n}"));
        assert_eq!(invariant(n).map(|p| p.key), Some(key));
    }
    assert_eq!(HIGHEST_INVARIANT, *numbers.last().unwrap() as usize);
    assert!(PROPERTIES[INVARIANTS..].iter().all(|p| !p.is_invariant()));
}

#[test]
fn every_invariant_can_be_stored_packed_serialised_and_displayed() {
    for (n, key) in invariants() {
        let mut s = State::initial();
        s.ghost.violate(n);
        assert!(s.ghost.is_violated(n));
        assert_eq!(s.ghost.violated.numbers().collect::<Vec<_>>(), vec![n]);
        let shown = format!("{s:?}");
        assert!(
            shown.contains(&format!("ghost: violated {key}\n")),
            "{key} not named in the display:\n{shown}"
        );
        let mut bytes = Vec::new();
        s.pack(&mut bytes);
        let back = State::unpack(&bytes).expect("a packed state unpacks");
        assert!(back.ghost.is_violated(n), "{key} lost by packing");
        assert_eq!(back.ghost.violated, s.ghost.violated);
        let json = serde_json::to_string(&s).unwrap();
        let read: State = serde_json::from_str(&json).unwrap();
        assert!(read.ghost.is_violated(n), "{key} lost by serialising");
    }
    // All at once: every name, in order.
    let mut s = State::initial();
    invariants().for_each(|(n, _)| s.ghost.violate(n));
    let all: Vec<String> = invariants().map(|(_, k)| k.to_string()).collect();
    assert!(format!("{s:?}").contains(&format!("ghost: violated {}\n", all.join(", "))));
}

#[test]
fn numbers_outside_the_table_are_refused_not_stored() {
    let past = HIGHEST_INVARIANT as u8 + 1;
    assert!(!Verdicts::names_invariant(0));
    assert!(!Verdicts::names_invariant(past));
    assert!(!Verdicts::default().is_violated(past));
    let json = serde_json::to_string(&State::initial()).unwrap().replace(
        "\"ghost_violated\":[]",
        &format!("\"ghost_violated\":[{past}]"),
    );
    let err = serde_json::from_str::<State>(&json)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("I{past}")), "{err}");
    // A packed state whose verdict bits name no invariant is not an encoding.
    let mut bytes = Vec::new();
    State::initial().pack(&mut bytes);
    let bits = memtx_model::state::VERDICT_BYTES * 8;
    if (past as usize) < bits {
        bytes[3 + past as usize / 8] |= 1 << (past % 8);
        assert!(State::unpack(&bytes).is_none());
    }
    bytes = Vec::new();
    State::initial().pack(&mut bytes);
    bytes[3] |= 1; // bit 0 is I0, which does not exist
    assert!(State::unpack(&bytes).is_none());
    // A number inside the range that the table skips (revision 3 lands in steps) is refused
    // the same way.
    if let Some(gap) = (1..HIGHEST_INVARIANT as u8).find(|&n| invariant(n).is_none()) {
        assert!(!Verdicts::names_invariant(gap));
        let mut bytes = Vec::new();
        State::initial().pack(&mut bytes);
        bytes[3 + gap as usize / 8] |= 1 << (gap % 8);
        assert!(State::unpack(&bytes).is_none(), "I{gap} unpacked");
    }
}
