//! The properties of docs/protocol.md §9, each a plain function of (model, state), registered in
//! [`PROPERTIES`]: the `always` invariants I1–I18 and the non-vacuity examples
//! E1–E11.
//!
//! History properties (I1, I2's retracting-step half, I4, I5, I7, I9–I13, I15–I18) read ghost fields written by [`crate::ghost`], which
//! re-states each condition independently of the code it judges. State properties (I2, I3, I6,
//! I8) read the state directly. To add a property: write one function here and one row in
//! [`PROPERTIES`] (see docs/extending.md).

use crate::lifecycle::Life;
use crate::machine::MemTx;
use crate::record::{Effect, Kind, Reason, Scope};
use crate::state::{Repair, State};
use stateright::{Expectation, Property};

/// One registered property.
#[derive(Debug)]
pub struct PropertyDef {
    /// Short key used on the command line and in reports (`I1` … `I18`, `E1` … `E11`).
    pub key: &'static str,
    /// The property as a sentence (its name in stateright and in traces).
    pub name: &'static str,
    /// `Always` (an invariant) or `Sometimes` (an example that must be reached).
    pub expectation: Expectation,
    /// Does the state satisfy it (always) / exemplify it (sometimes)?
    pub holds: fn(&MemTx, &State) -> bool,
}

impl PropertyDef {
    /// The stateright form of this property.
    pub fn to_stateright(&self) -> Property<MemTx> {
        match self.expectation {
            Expectation::Sometimes => Property::sometimes(self.name, self.holds),
            _ => Property::always(self.name, self.holds),
        }
    }
    /// An invariant (`always`), as opposed to an example (`sometimes`).
    pub fn is_invariant(&self) -> bool {
        !matches!(self.expectation, Expectation::Sometimes)
    }
    /// Finds a property by key (case-insensitive) or by its full name.
    pub fn find(key_or_name: &str) -> Option<&'static PropertyDef> {
        PROPERTIES
            .iter()
            .find(|p| p.key.eq_ignore_ascii_case(key_or_name) || p.name == key_or_name)
    }
}

macro_rules! always {
    ($key:literal, $name:literal, $f:path) => {
        PropertyDef {
            key: $key,
            name: concat!($key, " ", $name),
            expectation: Expectation::Always,
            holds: $f,
        }
    };
}
macro_rules! sometimes {
    ($key:literal, $name:literal, $f:path) => {
        PropertyDef {
            key: $key,
            name: concat!($key, " ", $name),
            expectation: Expectation::Sometimes,
            holds: $f,
        }
    };
}

/// How many invariants [`PROPERTIES`] holds: its first rows, in ascending number order (a test
/// holds the table to it). Numbers are the spec's and may skip (revision 3 lands in steps: I18
/// before I15).
pub const INVARIANTS: usize = {
    let mut n = 0;
    while n < PROPERTIES.len() && matches!(PROPERTIES[n].expectation, Expectation::Always) {
        n += 1;
    }
    n
};

/// The number `n` of a key `In` or `En` (0 for a key that is not a letter and digits).
pub const fn number_of(key: &str) -> usize {
    let b = key.as_bytes();
    let mut i = 1;
    let mut n = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            return 0;
        }
        n = n * 10 + (b[i] - b'0') as usize;
        i += 1;
    }
    n
}

/// The highest invariant number of the table: the ghost's verdicts
/// ([`crate::state::Verdicts`]) hold one bit per number up to it.
pub const HIGHEST_INVARIANT: usize = {
    let (mut i, mut max) = (0, 0);
    while i < INVARIANTS {
        let n = number_of(PROPERTIES[i].key);
        if n > max {
            max = n;
        }
        i += 1;
    }
    max
};

/// The invariant `In`'s row, if the table has one.
pub fn invariant(n: u8) -> Option<&'static PropertyDef> {
    PROPERTIES[..INVARIANTS]
        .iter()
        .find(|p| number_of(p.key) == n as usize)
}

/// Every property, invariants first.
pub const PROPERTIES: &[PropertyDef] = &[
    always!(
        "I1",
        "irreversible calls run only on validated state",
        action_safety_gating
    ),
    always!(
        "I2",
        "every descendant of a retracted record is repaired",
        cascade_repair_completeness
    ),
    always!(
        "I3",
        "no record is visible more widely than its ancestry allows",
        no_permission_laundering
    ),
    always!(
        "I4",
        "records enter and move only along the lifecycle table",
        lifecycle_legality
    ),
    always!("I5", "no transaction reads outside its snapshot", isolation),
    always!(
        "I6",
        "one truth per slot in every agent's view",
        one_truth_per_slot
    ),
    always!(
        "I7",
        "no write commits over a rival newer than its snapshot",
        no_stale_override
    ),
    always!(
        "I8",
        "every repair and leak is in the rollback log",
        audit_completeness
    ),
    always!(
        "I9",
        "no irreversible harm from a retraction already requested",
        no_harm_from_known_doubt
    ),
    always!(
        "I10",
        "no record commits without evidence, or is quarantined despite it",
        evidence_at_commit
    ),
    always!(
        "I11",
        "no record commits outside its validity, or is quarantined as expired inside it",
        validity_at_commit
    ),
    always!(
        "I12",
        "a record is superseded only by a rival entitled to win",
        adjudication
    ),
    always!(
        "I13",
        "no record commits under an inactive or doubted ancestor",
        sound_lineage_at_commit
    ),
    always!(
        "I14",
        "every external-action transaction reads at action-safe-read",
        tier_isolation
    ),
    always!(
        "I15",
        "no record carries content that someone permitted to see it may not see",
        content_scope
    ),
    always!(
        "I16",
        "no record commits over a rival newer than what it observed",
        no_stale_content
    ),
    always!(
        "I17",
        "nothing narrower displaces a wider truth; nothing hidden decides a commit or a call",
        scope_non_interference
    ),
    always!(
        "I18",
        "no irreversible call executes on anything not in force or not the caller's to see",
        zero_downstream_harm
    ),
    sometimes!(
        "E1",
        "an irreversible call executes",
        example_irreversible_call
    ),
    sometimes!(
        "E2",
        "a cascade reaches a descendant two edges away",
        example_deep_cascade
    ),
    sometimes!(
        "E3",
        "a stale late write aborts",
        example_stale_write_aborted
    ),
    sometimes!(
        "E4",
        "a higher-authority write supersedes",
        example_authority_supersedes
    ),
    sometimes!(
        "E5",
        "an equal-authority conflict is quarantined",
        example_review_quarantine
    ),
    sometimes!(
        "E6",
        "permission laundering is blocked",
        example_laundering_blocked
    ),
    sometimes!(
        "E7",
        "a reversible effect is compensated",
        example_compensated
    ),
    sometimes!(
        "E8",
        "an irreversible effect leaks and is recorded",
        example_leak_recorded
    ),
    sometimes!(
        "E9",
        "a quarantined view is rebuilt and recommitted",
        example_view_rebuilt
    ),
    sometimes!(
        "E10",
        "an external-action irreversible call executes on declared support",
        example_external_call_on_support
    ),
    sometimes!(
        "E11",
        "review keeps a record over a rival, which it supersedes",
        example_review_keep_supersedes
    ),
];

/// I1 action-safety gating (ghost: judged when each irreversible call executed).
pub fn action_safety_gating(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(1)
}

/// I2 cascade-repair completeness: no record in force (Committed or ActionSafe: beliefs and views)
/// has a Revoked transitive ancestor; every executed action with one is compensated (reversible)
/// or leaked (irreversible).
///
/// Reading of the spec: "no non-quarantined view" is judged on views in force. A view *staged*
/// after the retraction from a snapshot that still holds its (now quarantined) parent is Tentative
/// with a revoked ancestor; the pipeline's lineage check decides it at commit, and from then on
/// this property judges it (see model/README.md, "Readings").
///
/// Strengthened (revision 2): the step that retracts a record leaves every transitive
/// descendant repaired by type, the staged records of other open transactions included
/// (ghost: judged on each retracting step).
pub fn cascade_repair_completeness(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(2)
        && s.ids().all(|id| {
            let r = s.record(id);
            let tainted = s
                .ancestors(id)
                .iter()
                .any(|a| s.record(a).life() == Life::Revoked);
            if !tainted {
                return true;
            }
            match r.kind {
                Kind::ReversibleAction => r.effect == Some(Effect::Compensated),
                Kind::IrreversibleAction => r.effect == Some(Effect::Leaked),
                Kind::Belief | Kind::Summary | Kind::Profile => !r.life().is_committed(),
            }
        })
}

/// I3 no permission laundering: a committed record's scope is no wider than the narrowest scope
/// among its transitive ancestors.
///
/// And (ghost) no record was quarantined for permission laundering that had no narrower
/// ancestor: the reason a commit gives must be true.
pub fn no_permission_laundering(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(3)
        && s.ids().all(|id| {
            let r = s.record(id);
            !r.life().is_committed() || s.ancestors(id).iter().all(|a| s.record(a).scope >= r.scope)
        })
}

/// I4 lifecycle legality (ghost: every move judged against the spec's table as it happened).
pub fn lifecycle_legality(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(4)
}

/// I5 isolation (ghost: every read judged against the reader's level when it happened).
pub fn isolation(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(5)
}

/// I6 one truth per slot, in every agent's view (revision 3): among the committed beliefs an
/// agent is permitted to see (a Private record by its owner only; Shared and Public by every
/// agent), no two assert different values for one slot over overlapping validity. Two agents'
/// Private records may disagree: neither sees the other's.
pub fn one_truth_per_slot(m: &MemTx, s: &State) -> bool {
    (0..m.cfg.bounds.agents).all(|agent| {
        let seen = || {
            s.records().iter().filter(move |r| {
                r.kind == Kind::Belief
                    && r.life().is_committed()
                    && (r.scope != Scope::Private || r.owner == agent)
            })
        };
        seen().all(|a| {
            seen()
                .all(|b| a.slot != b.slot || a.value == b.value || !a.validity.overlaps(b.validity))
        })
    })
}

/// I7 no stale override (ghost: every commit judged against the rivals newer than its snapshot).
pub fn no_stale_override(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(7)
}

/// I8 audit completeness: every leaked or compensated effect, every cascade repair and every
/// retraction has its entry in the rollback log.
pub fn audit_completeness(_: &MemTx, s: &State) -> bool {
    s.ids().all(|id| {
        let r = s.record(id);
        let log = s.audit(id);
        let effect_logged = match r.effect {
            Some(Effect::Leaked) => log.has(Repair::Leaked),
            Some(Effect::Compensated) => log.has(Repair::Compensated),
            _ => true,
        };
        let repair_logged = match (r.life(), r.reason) {
            (Life::Revoked, Some(Reason::Cascade)) => {
                log.has(Repair::Revoked) || log.has(Repair::Compensated) || log.has(Repair::Leaked)
            }
            (Life::Quarantined, Some(Reason::Rebuild)) => log.has(Repair::Quarantined),
            (Life::Revoked, Some(_)) => log.has(Repair::Retracted),
            _ => true,
        };
        effect_logged && repair_logged
    })
}

/// I9 no harm from known doubt: no irreversible effect has leaked through the retraction of a
/// record that was already pending revocation when the call executed.
pub fn no_harm_from_known_doubt(_: &MemTx, s: &State) -> bool {
    s.records().iter().all(|r| {
        r.effect != Some(Effect::Leaked)
            || r.doubted_at_execution
                .iter()
                .all(|d| s.record(d).life() != Life::Revoked)
    })
}

/// I10 evidence at commit (ghost: every record committed by Commit or `Resolve(keep)` judged
/// against the thresholds confidence ≥ 0.6 or authority ≥ 0.9 as it committed; and, the other
/// way, every record quarantined for evidence did not meet them).
pub fn evidence_at_commit(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(10)
}

/// I11 validity at commit (ghost: every record committed had `from ≤ now < until`; every
/// record quarantined as expired did not).
pub fn validity_at_commit(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(11)
}

/// I12 adjudication (ghost: every supersession judged against its winner, and its reason
/// against the entitlement that won; no commit over an equal-authority rival of another source
/// or a higher-authority one).
pub fn adjudication(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(12)
}

/// I13 sound lineage at commit (ghost: no transitive ancestor of a record that committed was
/// Revoked, Superseded, Quarantined or pending revocation after the step, and no declared
/// parent was not yet committed when it was judged).
pub fn sound_lineage_at_commit(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(13)
}

/// I15 content scope (ghost): every agent permitted to see a committed record may see every
/// record of its content (itself, its declared parents' content and the content of its
/// writer's context at staging), and no agent is served a record whose content it may not see.
pub fn content_scope(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(15)
}

/// I16 no stale content (ghost): no record commits while a rival its writer may see, committed
/// after the record's observation, stands beside it or is superseded by it (a retry re-asserts
/// what the agent saw before the correction).
pub fn no_stale_content(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(16)
}

/// I17 scope non-interference (ghost): no record is Superseded by a narrower one; no commit is
/// aborted, outranked or sent to review by a rival its writer may not see (the outcome must
/// follow from the rivals it may see), nor given a later check's reason while a wider rival it
/// would displace stood; no external-action call passes the gate's condition 2 on an
/// ActionSafe record its caller may not see.
pub fn scope_non_interference(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(17)
}

/// I18 zero downstream harm (ghost: every irreversible call executed when each record of its
/// support closure, the support and its transitive ancestors, was in force and permitted to the
/// caller, and no Tentative record was in flight outside its snapshot).
pub fn zero_downstream_harm(_: &MemTx, s: &State) -> bool {
    !s.ghost.is_violated(18)
}

/// I14 tier isolation: every open external-action transaction reads at action-safe-read.
pub fn tier_isolation(_: &MemTx, s: &State) -> bool {
    s.txns().iter().flatten().all(|tx| {
        tx.tier != crate::txn::Tier::ExternalAction
            || tx.isolation == crate::txn::Isolation::ActionSafeRead
    })
}

/// E1: an irreversible call has executed.
pub fn example_irreversible_call(_: &MemTx, s: &State) -> bool {
    s.records()
        .iter()
        .any(|r| r.kind == Kind::IrreversibleAction)
}

/// E2: a cascade repaired a record whose retracted cause is an ancestor but not a parent.
pub fn example_deep_cascade(_: &MemTx, s: &State) -> bool {
    s.ids().any(|id| {
        let log = s.audit(id);
        let repaired = log.repairs().any(|r| r != Repair::Retracted);
        match log.cause {
            Some(c) if repaired => !s.record(id).parents.contains(c) && s.ancestors(id).contains(c),
            _ => false,
        }
    })
}

/// E3: a stale late write was aborted.
pub fn example_stale_write_aborted(_: &MemTx, s: &State) -> bool {
    s.records()
        .iter()
        .any(|r| r.reason == Some(Reason::StaleWrite))
}

/// E4: a higher-authority write superseded its rival.
pub fn example_authority_supersedes(_: &MemTx, s: &State) -> bool {
    s.records()
        .iter()
        .any(|r| r.life() == Life::Superseded && r.reason == Some(Reason::SupersededByAuthority))
}

/// E5: an equal-authority conflict went to review.
pub fn example_review_quarantine(_: &MemTx, s: &State) -> bool {
    s.records()
        .iter()
        .any(|r| r.life() == Life::Quarantined && r.reason == Some(Reason::Review))
}

/// E6: permission laundering was blocked.
pub fn example_laundering_blocked(_: &MemTx, s: &State) -> bool {
    s.records()
        .iter()
        .any(|r| r.reason == Some(Reason::Permission))
}

/// E7: a reversible effect was compensated.
pub fn example_compensated(_: &MemTx, s: &State) -> bool {
    s.records()
        .iter()
        .any(|r| r.effect == Some(Effect::Compensated))
}

/// E8: an irreversible effect leaked and the leak is in the rollback log.
pub fn example_leak_recorded(_: &MemTx, s: &State) -> bool {
    s.ids()
        .any(|id| s.record(id).effect == Some(Effect::Leaked) && s.audit(id).has(Repair::Leaked))
}

/// E9: a view quarantined by a cascade was rebuilt and is committed again.
pub fn example_view_rebuilt(_: &MemTx, s: &State) -> bool {
    s.ids().any(|id| {
        let r = s.record(id);
        r.kind.is_view() && r.life().is_committed() && s.audit(id).has(Repair::Quarantined)
    })
}

/// E10: the strong form of the gate let a call through: an irreversible call executed in an
/// external-action transaction (its record entered the lifecycle ActionSafe) on declared
/// support. E1 alone is reached by calls of the weak tiers, so a gate that refused every
/// external-action call would pass it (non-vacuity of condition 2, reports/mutants.md).
pub fn example_external_call_on_support(_: &MemTx, s: &State) -> bool {
    s.records().iter().any(|r| {
        r.kind == Kind::IrreversibleAction && r.life() == Life::ActionSafe && !r.parents.is_empty()
    })
}

/// E11: review decided a conflict: `Resolve(keep)` committed a record over a rival still in
/// force, which it superseded. E5 reaches the quarantine and `op.resolve-keep` fires on a keep
/// with no rival left, so a keep refused whenever a rival stood passed both
/// (reports/mutants.md, `repair.rs:181:64`).
pub fn example_review_keep_supersedes(_: &MemTx, s: &State) -> bool {
    s.records()
        .iter()
        .any(|r| r.life() == Life::Superseded && r.reason == Some(Reason::SupersededByReview))
}

#[cfg(test)]
mod tests;
