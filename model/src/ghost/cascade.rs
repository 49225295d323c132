//! I2 cascade-repair completeness, on the step that retracts (docs/protocol.md §8, §9).

use super::ghost_ancestors;
use crate::lifecycle::Life;
use crate::record::{Effect, Kind, RecordSet};
use crate::state::State;

/// I2, strengthened: the step that retracts a record leaves every transitive descendant of it
/// repaired by type, the staged records of other open transactions included: a belief Revoked,
/// a view Quarantined (or already Revoked), a reversible action compensated, an irreversible
/// one recorded as leaked.
pub(super) fn judge_retractions(retracted: RecordSet, post: &mut State) {
    let unrepaired = post.ids().any(|d| {
        if ghost_ancestors(post, d).intersection(retracted).is_empty() {
            return false;
        }
        let r = post.record(d);
        match r.kind {
            Kind::Belief => r.life() != Life::Revoked,
            Kind::Summary | Kind::Profile => !matches!(r.life(), Life::Quarantined | Life::Revoked),
            Kind::ReversibleAction => r.effect != Some(Effect::Compensated),
            Kind::IrreversibleAction => r.effect != Some(Effect::Leaked),
        }
    });
    if unrepaired {
        post.ghost.violate(2);
    }
}
