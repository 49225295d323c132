//! Records and transactions as this implementation keeps them.

use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Belief,
    Summary,
    Profile,
    Reversible,
    Irreversible,
}

impl Kind {
    pub(crate) fn is_view(self) -> bool {
        matches!(self, Kind::Summary | Kind::Profile)
    }
    pub(crate) fn is_action(self) -> bool {
        matches!(self, Kind::Reversible | Kind::Irreversible)
    }
}

/// Lifecycle states, in the log's spelling; the main path in rank order first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Life {
    Raw,
    Tentative,
    Committed,
    ActionSafe,
    Quarantined,
    Superseded,
    Revoked,
}

impl Life {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Life::Raw => "raw",
            Life::Tentative => "tentative",
            Life::Committed => "committed",
            Life::ActionSafe => "action-safe",
            Life::Quarantined => "quarantined",
            Life::Superseded => "superseded",
            Life::Revoked => "revoked",
        }
    }
    /// Rank on the main path (raw 0, tentative 1, validated 2, committed 3, action-safe 4).
    pub(crate) fn rank(self) -> Option<u8> {
        match self {
            Life::Raw => Some(0),
            Life::Tentative => Some(1),
            Life::Committed => Some(3),
            Life::ActionSafe => Some(4),
            _ => None,
        }
    }
    pub(crate) fn in_force(self) -> bool {
        matches!(self, Life::Committed | Life::ActionSafe)
    }
    pub(crate) fn active(self) -> bool {
        !matches!(self, Life::Quarantined | Life::Superseded | Life::Revoked)
    }
}

/// Scopes, narrowest first.
pub(crate) fn scope_rank(s: &str) -> u8 {
    match s {
        "private" => 0,
        "shared" => 1,
        _ => 2,
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Rec {
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) key: Option<(String, String)>,
    pub(crate) value: Option<String>,
    pub(crate) source: Option<String>,
    pub(crate) confidence: f64,
    pub(crate) owner: String,
    pub(crate) scope: u8,
    pub(crate) parents: BTreeSet<usize>,
    pub(crate) from: u64,
    pub(crate) until: Option<u64>,
    pub(crate) life: Life,
    pub(crate) reason: Option<&'static str>,
    pub(crate) effect: Option<&'static str>,
    pub(crate) pending: bool,
    /// The agent whose open transaction staged it.
    pub(crate) writer: Option<String>,
    /// Its commit sequence number.
    pub(crate) seq: Option<u64>,
    /// What its writer held when it was staged (its context).
    pub(crate) implicit: BTreeSet<usize>,
    /// The records of that context it transcribes (same key and value, another transaction).
    pub(crate) transcribed: BTreeSet<usize>,
    /// The commit sequence number as of which what it asserts was observed.
    pub(crate) observed: Option<u64>,
    /// While in review: the snapshot its reviewer judges it against.
    pub(crate) review_seq: Option<u64>,
}

impl Rec {
    /// A record named `name` of `kind`, valid from `from` for ever, with nothing else said
    /// (a view's evidence is high confidence; its scope, owner and parents are set after).
    pub(crate) fn new(name: String, kind: Kind, from: u64) -> Rec {
        Rec {
            name,
            kind,
            key: None,
            value: None,
            source: None,
            confidence: 1.0,
            owner: String::new(),
            scope: 0,
            parents: BTreeSet::new(),
            from,
            until: None,
            life: Life::Tentative,
            reason: None,
            effect: None,
            pending: false,
            writer: None,
            seq: None,
            implicit: BTreeSet::new(),
            transcribed: BTreeSet::new(),
            observed: None,
            review_seq: None,
        }
    }

    pub(crate) fn valid_at(&self, t: u64) -> bool {
        self.from <= t && self.until.is_none_or(|u| t < u)
    }
    pub(crate) fn overlaps(&self, o: &Rec) -> bool {
        self.until.is_none_or(|u| o.from < u) && o.until.is_none_or(|u| self.from < u)
    }
    pub(crate) fn permitted_to(&self, agent: &str) -> bool {
        self.scope != 0 || self.owner == agent
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Txn {
    pub(crate) external: bool,
    pub(crate) snapshot: BTreeSet<usize>,
    pub(crate) snapshot_seq: u64,
}
