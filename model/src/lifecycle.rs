//! The 8-state record lifecycle and its transition table (docs/protocol.md §3).
//!
//! `Raw → Tentative → Validated → Committed → ActionSafe` is the main path; `Quarantined`,
//! `Superseded` and `Revoked` are branch states. Every move not in [`allowed`] is illegal:
//! [`crate::State::move_record`] refuses it with [`IllegalMove`] instead of performing it.

use serde::{Deserialize, Serialize};

/// A record's lifecycle state.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Life {
    /// An observation recorded outside any transaction (a tool result); not yet a belief.
    #[default]
    Raw,
    /// Staged in an open transaction, not yet through the commit pipeline.
    Tentative,
    /// Passed the pipeline's checks (only ever seen inside the atomic commit step).
    Validated,
    /// Committed: a belief others may read at committed-read.
    Committed,
    /// Committed inside an external-action transaction: fit to support irreversible actions.
    ActionSafe,
    /// Failed a check (or cascaded, for views); may be re-validated or rebuilt.
    Quarantined,
    /// Displaced by a rival in adjudication.
    Superseded,
    /// Terminal: aborted, revoked or cascaded.
    Revoked,
}

impl Life {
    /// Every lifecycle state, in declaration order.
    pub const ALL: [Life; 8] = [
        Life::Raw,
        Life::Tentative,
        Life::Validated,
        Life::Committed,
        Life::ActionSafe,
        Life::Quarantined,
        Life::Superseded,
        Life::Revoked,
    ];

    /// Position on the main path (`Raw` = 0 … `ActionSafe` = 4); `None` for branch states.
    pub fn main_path_rank(self) -> Option<u8> {
        match self {
            Life::Raw => Some(0),
            Life::Tentative => Some(1),
            Life::Validated => Some(2),
            Life::Committed => Some(3),
            Life::ActionSafe => Some(4),
            Life::Quarantined | Life::Superseded | Life::Revoked => None,
        }
    }

    /// Committed or ActionSafe: a belief that is in force.
    pub fn is_committed(self) -> bool {
        matches!(self, Life::Committed | Life::ActionSafe)
    }

    /// Not Revoked, Superseded or Quarantined (docs/protocol.md §6 check 3, lineage).
    pub fn is_active(self) -> bool {
        !matches!(self, Life::Revoked | Life::Superseded | Life::Quarantined)
    }
}

/// A refused lifecycle move: `from → to` is not in the table of docs/protocol.md §3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IllegalMove {
    /// The record that was to move.
    pub record: u8,
    /// Its state.
    pub from: Life,
    /// The refused target state.
    pub to: Life,
}

impl std::fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "illegal lifecycle move of r{}: {:?} -> {:?}",
            self.record, self.from, self.to
        )
    }
}

/// The transition table of docs/protocol.md §3: is `from → to` a legal move?
pub fn allowed(from: Life, to: Life) -> bool {
    use Life::*;
    match (from, to) {
        (Raw, Tentative) => true,                                    // staging
        (Tentative, Validated) => true,                              // pipeline passed
        (Validated, Committed) => true,                              // commit
        (Committed, ActionSafe) => true,                             // external-action commit
        (Tentative | Validated, Quarantined) => true,                // failed check
        (Quarantined, Tentative) => true,                            // revalidate / rebuild
        (Quarantined, Validated) => true,                            // Resolve(keep)
        (Committed | ActionSafe, Superseded) => true,                // adjudication lost
        (Committed | ActionSafe | Quarantined, Quarantined) => true, // view cascade, scope review
        (Revoked, _) => false,
        (_, Revoked) => true, // abort, revocation, cascade
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revoked_is_terminal() {
        for to in Life::ALL {
            assert!(
                !allowed(Life::Revoked, to),
                "Revoked -> {to:?} must be refused"
            );
        }
    }

    #[test]
    fn main_path_cannot_be_skipped() {
        assert!(!allowed(Life::Raw, Life::Committed));
        assert!(!allowed(Life::Tentative, Life::Committed));
        assert!(!allowed(Life::Tentative, Life::ActionSafe));
        assert!(!allowed(Life::Raw, Life::Validated));
    }

    #[test]
    fn no_move_backwards_on_the_main_path() {
        assert!(!allowed(Life::Committed, Life::Tentative));
        assert!(!allowed(Life::ActionSafe, Life::Committed));
        assert!(!allowed(Life::Validated, Life::Tentative));
    }

    #[test]
    fn superseded_only_from_committed_states() {
        assert!(!allowed(Life::Tentative, Life::Superseded));
        assert!(!allowed(Life::Quarantined, Life::Superseded));
        assert!(!allowed(Life::Superseded, Life::Committed));
        assert!(allowed(Life::ActionSafe, Life::Superseded));
    }

    #[test]
    fn raw_is_only_staged_or_revoked() {
        for to in Life::ALL {
            let ok = allowed(Life::Raw, to);
            assert_eq!(
                ok,
                matches!(to, Life::Tentative | Life::Revoked),
                "Raw -> {to:?}"
            );
        }
    }
}
