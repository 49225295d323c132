//! The named presets of docs/protocol.md §1: `quick`, `paper`, `large`.
//!
//! Names are normative; bounds and domains are calibrated here and documented in
//! `model/README.md` with the state counts they give (pinned in `reports/manifest.json`).

use crate::config::{
    all_writes, default_authority, Bounds, Config, Domain, Enumeration, ValidityShape, Variant,
    WriteShape,
};
use crate::evidence::{Authority, Confidence};
use crate::record::{Kind, Scope};
use crate::txn::{Isolation, Tier};

/// The preset names: the general presets in order of size, then the focused presets of the
/// suite.
pub const PRESETS: &[&str] = &[
    "quick",
    "paper",
    "large",
    "full",
    "expiry",
    "evidence",
    "lineage",
    "observations",
    "isolation",
    "scopes",
    "interference",
    "provenance",
    "content",
];

/// One preset of the suite (docs/protocol.md §1, revision 2): its name, what it is for, and
/// whether `memtx suite --quick` runs it too.
#[derive(Clone, Copy, Debug)]
pub struct SuiteEntry {
    /// Preset name.
    pub name: &'static str,
    /// The family of rules it exists to exercise.
    pub focus: &'static str,
    /// Part of `memtx suite --quick` (and of `cargo test`).
    pub quick: bool,
}

/// The examples (§9 "sometimes" properties) a check of preset `name` must reach by default.
/// The general presets must reach all of them (non-vacuity). A focused preset's domain is
/// cut to one family of rules, so it must reach the examples of that family only; its
/// measure of non-vacuity is rule coverage, and the suite requires every example to be
/// reached by some preset.
pub fn examples(name: &str) -> &'static [&'static str] {
    const ALL: &[&str] = &[
        "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11",
    ];
    match name {
        "expiry" => &["E1", "E3", "E5", "E10", "E11"],
        "evidence" => &["E1", "E4"],
        "lineage" => &["E2", "E3", "E4", "E5", "E6", "E7", "E11"],
        // Not E8 (revision 3): its domain has no revocations, so an effect could leak only
        // through an ancestor that was never committed (a summary over a raw observation,
        // then the observation adopted and aborted), the harm lineage over committed
        // parents and the gate's support closure now block.
        "observations" => &["E1", "E2", "E4", "E6"],
        "isolation" => &["E1", "E2", "E3"],
        "scopes" => &["E1", "E6"],
        "interference" => &["E1", "E4", "E5", "E10"],
        "provenance" => &["E3"],
        "content" => &["E1", "E3", "E5"],
        _ => ALL,
    }
}

/// The suite: presets that together exercise every rule of the protocol, each exhaustively
/// (`memtx suite` runs them and fails when a rule is exercised by none). The focused presets
/// propose every operation of their domain in every state ([`Enumeration::Wide`]), so that
/// every part of every enabling condition gets its chance to refuse.
pub const SUITE: &[SuiteEntry] = &[
    SuiteEntry {
        name: "quick",
        focus: "the paper's domain with one agent: every example of §9, every variant's violation",
        quick: true,
    },
    SuiteEntry {
        name: "paper",
        focus: "the paper's domain with two agents: stale writes and isolation across agents",
        quick: false,
    },
    SuiteEntry {
        name: "expiry",
        focus: "the clock: ticks, short and future validities, expired support and reviews",
        quick: true,
    },
    SuiteEntry {
        name: "evidence",
        focus: "low-confidence writes from low, mid and high sources; the low tier",
        quick: true,
    },
    SuiteEntry {
        name: "lineage",
        focus: "parented beliefs, Profiles, revocations under review; every enabling refusal",
        quick: true,
    },
    SuiteEntry {
        name: "observations",
        focus: "raw observations, Adopt, raw-read isolation",
        quick: true,
    },
    SuiteEntry {
        name: "isolation",
        focus: "two agents reading each other's staging at every isolation level",
        quick: true,
    },
    SuiteEntry {
        name: "scopes",
        focus: "Private, Shared and Public scopes and their inheritance",
        quick: true,
    },
    SuiteEntry {
        name: "interference",
        focus: "two agents' Private, Shared and Public writes on one slot; external-action calls",
        quick: true,
    },
    SuiteEntry {
        name: "provenance",
        focus: "Read and EndSession: what each agent holds, transcribed across transactions",
        quick: true,
    },
    SuiteEntry {
        name: "content",
        focus: "another agent's Tentative records at tentative-read: visible only with their whole content permitted",
        quick: true,
    },
];

/// Does preset `name` run with symmetry reduction (interchangeable agents) unless the user
/// turns it off? Only `large`: its three agents make the unreduced space about six times the
/// 217 million canonical states, more than 24 GiB can hold, while every property of §9 is
/// invariant under renaming agents (they are judged over all agents alike).
pub fn symmetric_by_default(name: &str) -> bool {
    name == "large"
}

fn sources(n: usize) -> Vec<Authority> {
    (0..n).map(default_authority).collect()
}

/// Bounds shared by the presets: 1 slot, 2 values, 3 sources (mid, mid, high).
fn bounds(agents: u8, records: u8, ticks: u8) -> Bounds {
    Bounds {
        agents,
        records,
        ticks,
        slots: 1,
        values: 2,
        sources: sources(3),
    }
}

/// The configuration of preset `name` under `variant`, or `None` for an unknown name.
///
/// `quick`, `paper` and `large` share one domain and differ only in the number of agents.
pub fn preset(name: &str, variant: Variant) -> Option<Config> {
    let (bounds, domain) = match name {
        "quick" => (bounds(1, 3, 0), quick_domain()),
        "paper" => (bounds(2, 3, 0), quick_domain()),
        "large" => (bounds(3, 3, 0), quick_domain()),
        "full" => (bounds(2, 4, 1), full_domain(3)),
        "expiry" => (bounds(1, 3, 1), expiry_domain()),
        "evidence" => (
            Bounds {
                sources: vec![Authority::Low, Authority::Mid, Authority::High],
                ..bounds(1, 3, 0)
            },
            evidence_domain(),
        ),
        "lineage" => (bounds(1, 3, 0), lineage_domain()),
        "observations" => (bounds(1, 3, 0), observations_domain()),
        "isolation" => (bounds(2, 3, 0), isolation_domain()),
        "scopes" => (bounds(1, 3, 0), scopes_domain()),
        "interference" => (bounds(2, 3, 0), interference_domain()),
        "provenance" => (bounds(2, 3, 0), provenance_domain()),
        "content" => (bounds(2, 3, 0), content_domain()),
        _ => return None,
    };
    Some(Config {
        preset: name.to_string(),
        bounds,
        domain,
        variant,
    })
}

fn shape(source: u8, confidence: Confidence, scope: Scope) -> WriteShape {
    WriteShape {
        source,
        confidence,
        scope,
    }
}

fn shared(source: u8) -> WriteShape {
    shape(source, Confidence::High, Scope::Shared)
}

/// A focused domain: nothing enumerated but what `f` sets, every operation proposed.
fn focused(f: impl FnOnce(&mut Domain)) -> Domain {
    let mut d = Domain {
        tiers: vec![Tier::Medium, Tier::ExternalAction],
        isolations: vec![Isolation::CommittedRead],
        stage_kinds: vec![Kind::Belief],
        writes: vec![shared(0), shared(1)],
        view_scopes: vec![Scope::Shared],
        validities: vec![ValidityShape::Open],
        belief_parents: 0,
        view_parents: 1,
        support: 1,
        observe: false,
        reversible_calls: false,
        revocations: false,
        reviews: false,
        reads: false,
        sessions: false,
        enumeration: Enumeration::Wide,
    };
    f(&mut d);
    d
}

/// `expiry`: one tick; beliefs valid now, for one tick, or from the next tick; two equal
/// sources (a review that expires before the reviewer keeps it); ActionSafe support that
/// expires, or is revoked, before an irreversible call.
fn expiry_domain() -> Domain {
    focused(|d| {
        d.validities = vec![
            ValidityShape::Open,
            ValidityShape::OneTick,
            ValidityShape::FromNextTick,
        ];
        d.reviews = true;
        d.revocations = true;
    })
}

/// `evidence`: low-confidence writes from a low, a mid and a high source (the evidence check
/// fails, or passes on authority alone), one confident mid write, the low tier, and
/// revalidation of what the check quarantined.
fn evidence_domain() -> Domain {
    focused(|d| {
        d.tiers = vec![Tier::Low, Tier::ExternalAction];
        d.writes = vec![
            shape(0, Confidence::Low, Scope::Shared),
            shape(1, Confidence::Low, Scope::Shared),
            shape(2, Confidence::Low, Scope::Shared),
            shared(1),
        ];
        d.support = 0;
    })
}

/// `lineage`: beliefs with a parent, Summaries and Profiles, a private source, revocations and
/// reviews: lineage and dependency-stability outcomes, permission laundering through a
/// belief, the cascade below a view, and every refusal of `Resolve(keep)` but expiry.
fn lineage_domain() -> Domain {
    focused(|d| {
        d.stage_kinds = vec![Kind::Belief, Kind::Summary, Kind::Profile];
        d.writes = vec![
            shared(0),
            shape(1, Confidence::High, Scope::Private),
            shared(2),
        ];
        d.belief_parents = 1;
        d.revocations = true;
        d.reviews = true;
        d.reversible_calls = true;
        d.tiers = vec![Tier::Medium];
    })
}

/// `observations`: raw observations (a shared one from the high source and a private one from a
/// mid source, so that a higher-authority write supersedes without a narrower record displacing
/// a wider one), adopted at raw-read or refused at committed-read.
fn observations_domain() -> Domain {
    focused(|d| {
        d.observe = true;
        d.isolations = vec![Isolation::RawRead, Isolation::CommittedRead];
        d.writes = vec![
            shape(2, Confidence::High, Scope::Shared),
            shape(0, Confidence::High, Scope::Private),
        ];
        d.stage_kinds = vec![Kind::Belief, Kind::Summary];
        d.tiers = vec![Tier::Medium];
    })
}

/// `isolation`: two agents; every isolation level but action-safe-read for the medium tier;
/// views over another agent's staging; revocations (a cascade reaching another transaction's
/// staged records).
fn isolation_domain() -> Domain {
    focused(|d| {
        d.isolations = vec![
            Isolation::RawRead,
            Isolation::TentativeRead,
            Isolation::ValidatedRead,
            Isolation::CommittedRead,
        ];
        d.stage_kinds = vec![Kind::Belief, Kind::Summary];
        d.writes = vec![shared(0)];
        d.revocations = true;
        d.tiers = vec![Tier::Medium];
        d.support = 0;
    })
}

/// `interference`: two agents, each able to write a Private belief (from a mid or the high
/// source), a Shared one (the other mid source) or a Public one (high) on one slot, to call
/// irreversibly in either tier, and to resolve reviews: every scope against every scope, two
/// owners of Private records, a narrower record of higher authority (or a correction from the
/// same source) against a wider one (scope review, `keep` refused while the wider rival
/// stands), and the gate's condition 2 over what the caller may see (revision 3 step 3, scope
/// non-interference). The three shapes of its first version (step 3's gate part) are kept, so
/// scenarios written against it still replay.
fn interference_domain() -> Domain {
    focused(|d| {
        d.writes = vec![
            shape(0, Confidence::High, Scope::Private),
            shape(2, Confidence::High, Scope::Private),
            shared(1),
            shape(2, Confidence::High, Scope::Public),
        ];
        d.stage_kinds = vec![Kind::Belief];
        d.reviews = true;
    })
}

/// `provenance`: two agents that read what they may see, end their sessions, and write a
/// Private belief (mid source) or a Shared one (the other mid source) on one slot, at
/// committed-read: content carried from one transaction of a session into the
/// next, a Private record transcribed into a Shared one, a stale write retried (revision 3
/// step 4, provenance follows content).
fn provenance_domain() -> Domain {
    focused(|d| {
        d.writes = vec![shape(0, Confidence::High, Scope::Private), shared(1)];
        d.tiers = vec![Tier::Medium];
        d.support = 0;
        d.reads = true;
        d.sessions = true;
    })
}

/// `content`: `provenance`'s writes and `Read` at tentative-read, no sessions: one agent stages
/// a Private belief and then a Shared one that carries it (its context at staging), and the
/// other agent may read the Shared one while both are Tentative. Visibility needs the whole
/// content permitted (docs/protocol.md §4, revision 3.2), which `provenance`, reading at
/// committed-read, never puts to the test: there another agent's record is visible only once
/// committed, and permission inheritance has refused the Shared one by then.
fn content_domain() -> Domain {
    focused(|d| {
        d.writes = vec![shape(0, Confidence::High, Scope::Private), shared(1)];
        d.isolations = vec![Isolation::TentativeRead];
        d.tiers = vec![Tier::Medium];
        d.support = 0;
        d.reads = true;
    })
}

/// `scopes`: Private, Shared and Public writes and views, and their inheritance.
fn scopes_domain() -> Domain {
    focused(|d| {
        d.writes = vec![
            shape(0, Confidence::High, Scope::Private),
            shape(0, Confidence::High, Scope::Public),
        ];
        d.stage_kinds = vec![Kind::Belief, Kind::Summary];
        d.view_scopes = vec![Scope::Shared, Scope::Public];
        d.tiers = vec![Tier::Medium];
        d.support = 0;
    })
}

/// `quick`: the smallest domain in which every example of §9 is reachable and every variant
/// of §10 shows its violation. Four belief write shapes: the two equal mid-authority sources
/// (equal-authority conflict), the high-authority source (supersession), and one private write
/// (the parent a laundering view needs).
fn quick_domain() -> Domain {
    let shared = |source| WriteShape {
        source,
        confidence: Confidence::High,
        scope: Scope::Shared,
    };
    Domain {
        tiers: vec![Tier::Medium, Tier::ExternalAction],
        isolations: vec![Isolation::CommittedRead],
        stage_kinds: vec![Kind::Belief, Kind::Summary],
        writes: vec![
            shared(0),
            shared(2),
            WriteShape {
                source: 1,
                confidence: Confidence::High,
                scope: Scope::Private,
            },
        ],
        view_scopes: vec![Scope::Shared],
        validities: vec![ValidityShape::Open],
        belief_parents: 0,
        view_parents: 2,
        support: 1,
        observe: false,
        reversible_calls: true,
        revocations: true,
        reviews: true,
        reads: false,
        sessions: false,
        enumeration: Enumeration::Filtered,
    }
}

/// `full`: beyond exhaustive reach on this machine (billions of states); for bounded-depth runs
/// and simulation. Every source × confidence × {Private, Shared}, raw observations, both
/// validity shapes, three isolation levels.
fn full_domain(sources: usize) -> Domain {
    let scopes = [Scope::Private, Scope::Shared];
    Domain {
        tiers: vec![Tier::Medium, Tier::ExternalAction],
        isolations: vec![
            Isolation::RawRead,
            Isolation::TentativeRead,
            Isolation::CommittedRead,
        ],
        stage_kinds: vec![Kind::Belief, Kind::Summary],
        writes: all_writes(sources, &[Confidence::Low, Confidence::High], &scopes),
        view_scopes: scopes.to_vec(),
        validities: vec![ValidityShape::Open, ValidityShape::OneTick],
        belief_parents: 1,
        view_parents: 2,
        support: 1,
        observe: true,
        reversible_calls: true,
        revocations: true,
        reviews: true,
        reads: true,
        sessions: true,
        enumeration: Enumeration::Filtered,
    }
}
