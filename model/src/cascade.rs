//! Typed cascading repair (docs/protocol.md §8).
//!
//! [`retract`] revokes a root record and walks **all** its transitive descendants in the
//! derivation DAG (staged records of open transactions included), repairing each by type
//! ([`repair_for`]) and appending every step to the rollback log; a repair counts its rule only
//! when it is made.
//!
//! The walk is a single ascending pass over ids: a parent always has a smaller id than its child,
//! so by the time a record is visited every path into it has been seen.

use crate::config::{Config, Variant};
use crate::lifecycle::{IllegalMove, Life};
use crate::record::{Effect, Kind, Reason, RecordId, RecordSet};
use crate::rules::{fire, Rule};
use crate::state::{Repair, State};

/// How a descendant of a retracted record is repaired, by its kind (the table of §8).
pub fn repair_for(kind: Kind) -> Repair {
    match kind {
        Kind::Belief => Repair::Revoked,
        Kind::Summary | Kind::Profile => Repair::Quarantined,
        Kind::ReversibleAction => Repair::Compensated,
        Kind::IrreversibleAction => Repair::Leaked,
    }
}

/// The rule a repair of this kind exercises (fired only when the repair is made).
fn repair_rule(repair: Repair) -> Rule {
    match repair {
        Repair::Revoked => Rule::CascadeRevokeBelief,
        Repair::Quarantined => Rule::CascadeQuarantineView,
        Repair::Compensated => Rule::CascadeCompensate,
        Repair::Leaked => Rule::CascadeLeak,
        Repair::Retracted => {
            unreachable!("[memtx internal bug] a descendant is repaired, not retracted")
        }
    }
}

/// Retracts `root` (abort, revocation, pipeline abort or rejected review, named by `reason`),
/// then cascades to its descendants.
pub fn retract(
    cfg: &Config,
    state: &mut State,
    root: RecordId,
    reason: Reason,
) -> Result<(), IllegalMove> {
    state.move_record(root, Life::Revoked)?;
    state.record_mut(root).reason = Some(reason);
    state.log_repair(root, Repair::Retracted, root);
    if cfg.variant == Variant::NoCascade {
        return Ok(());
    }
    let root_writer = state.record(root).writer;
    let mut reached = RecordSet::single(root);
    let mut views = RecordSet::EMPTY;
    for id in root + 1..state.len() as RecordId {
        let parents = state.record(id).parents;
        if parents.intersection(reached).is_empty() {
            continue;
        }
        let writer = state.record(id).writer;
        let staged_elsewhere = writer.is_some() && writer != root_writer;
        if staged_elsewhere && cfg.variant == Variant::MissedCascadeStaged {
            continue; // the defect: a staged descendant of another transaction is skipped
        }
        let repair = repair_for(state.record(id).kind);
        // A descendant already Revoked needs no repair: the visit decides nothing, and no
        // rule counts it (rule coverage counts what a rule decided).
        if state.record(id).life() != Life::Revoked {
            if parents.intersection(reached).is_subset_of(views) {
                fire(Rule::CascadeBelowView); // reached only through quarantined views
            }
            if staged_elsewhere {
                fire(Rule::CascadeStagedDescendant);
            }
            apply_repair(state, id, repair, root)?;
        }
        let walk_stops_here =
            cfg.variant == Variant::MissedCascade && repair == Repair::Quarantined;
        if !walk_stops_here {
            reached.insert(id);
            if repair == Repair::Quarantined {
                views.insert(id);
            }
        }
    }
    Ok(())
}

/// Repairs one descendant, logs the step and counts the rule that decided it.
fn apply_repair(
    state: &mut State,
    id: RecordId,
    repair: Repair,
    cause: RecordId,
) -> Result<(), IllegalMove> {
    match repair {
        Repair::Revoked => {
            state.move_record(id, Life::Revoked)?;
            state.record_mut(id).reason = Some(Reason::Cascade);
        }
        Repair::Quarantined => {
            state.move_record(id, Life::Quarantined)?;
            state.record_mut(id).reason = Some(Reason::Rebuild);
        }
        Repair::Compensated | Repair::Leaked => {
            let effect = if repair == Repair::Compensated {
                Effect::Compensated
            } else {
                Effect::Leaked
            };
            state.record_mut(id).effect = Some(effect);
            state.move_record(id, Life::Revoked)?;
            state.record_mut(id).reason = Some(Reason::Cascade);
        }
        Repair::Retracted => {
            unreachable!("[memtx internal bug] a descendant is repaired, not retracted")
        }
    }
    state.log_repair(id, repair, cause);
    fire(repair_rule(repair));
    Ok(())
}
