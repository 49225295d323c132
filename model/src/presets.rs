//! The named presets of PROTOCOL.md §1: `quick`, `paper`, `large`.
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

/// The preset names, in order of size.
pub const PRESETS: &[&str] = &["quick", "paper", "large", "full"];

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
        _ => return None,
    };
    Some(Config {
        preset: name.to_string(),
        bounds,
        domain,
        variant,
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
        enumeration: Enumeration::Filtered,
    }
}
