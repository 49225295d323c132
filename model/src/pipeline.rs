//! The commit pipeline: four ordered checks per staged record (PROTOCOL.md §6).
//!
//! [`run`] applies them to one record in order; the first failing check decides the [`Verdict`]
//! and its reason code. Each check is one function, named as the spec names it.

use crate::config::{Config, Variant};
use crate::evidence::evidence_suffices;
use crate::lifecycle::Life;
use crate::record::{Kind, Reason, RecordId, RecordSet};
use crate::state::State;

/// What the pipeline decides for one staged record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every check passed: commit, and supersede the rivals it won against.
    Pass {
        /// Rivals of lower authority it displaces.
        outranked: RecordSet,
        /// Older records of the same source and authority it corrects.
        corrected: RecordSet,
    },
    /// A check failed: quarantine with this reason (re-validatable).
    Quarantine(Reason),
    /// A check failed fatally: revoke and cascade.
    Abort(Reason),
}

/// The transaction context a record is judged in.
#[derive(Clone, Copy, Debug)]
pub struct CommitContext {
    /// Logical time of the commit.
    pub now: u8,
    /// Records committed with a sequence number ≥ this were committed after the snapshot.
    pub snapshot_seq: u8,
    /// The first sequence number of this commit (records of this commit are not "stale" rivals).
    pub commit_start: u8,
}

/// Runs the four checks on staged record `id`, in order.
pub fn run(cfg: &Config, state: &State, id: RecordId, ctx: CommitContext) -> Verdict {
    let checks = || -> Result<(RecordSet, RecordSet), Verdict> {
        check_evidence(cfg, state, id)?;
        check_validity(state, id, ctx.now)?;
        let won = check_semantic_conflict(cfg, state, id, ctx)?;
        check_lineage(state, id)?;
        check_permission_inheritance(cfg, state, id)?;
        check_dependency_stability(state, id)?;
        Ok(won)
    };
    match checks() {
        Ok((outranked, corrected)) => Verdict::Pass {
            outranked,
            corrected,
        },
        Err(verdict) => verdict,
    }
}

/// Check 1, evidence: confidence ≥ 0.6 or source authority ≥ 0.9.
pub fn check_evidence(cfg: &Config, state: &State, id: RecordId) -> Result<(), Verdict> {
    let r = state.record(id);
    if evidence_suffices(r.confidence, cfg.authority(r.source)) {
        Ok(())
    } else {
        Err(Verdict::Quarantine(Reason::Evidence))
    }
}

/// Check 2, validity: `from ≤ now < until`.
pub fn check_validity(state: &State, id: RecordId, now: u8) -> Result<(), Verdict> {
    if state.record(id).validity.contains(now) {
        Ok(())
    } else {
        Err(Verdict::Quarantine(Reason::Expired))
    }
}

/// The committed beliefs that contradict belief `id`: same slot, different value, overlapping
/// validity. (Non-overlapping validity coexists: no conflict.)
pub fn rivals(state: &State, id: RecordId) -> RecordSet {
    let r = state.record(id);
    if r.kind != Kind::Belief {
        return RecordSet::EMPTY;
    }
    state
        .ids()
        .filter(|&x| x != id)
        .filter(|&x| {
            let o = state.record(x);
            o.kind == Kind::Belief
                && o.life().is_committed()
                && o.slot == r.slot
                && o.value != r.value
                && o.validity.overlaps(r.validity)
        })
        .collect()
}

/// Check 3a, semantic conflict adjudication against each rival, in id order. Returns the rivals
/// won against (outranked, corrected); they are superseded only if the record commits.
pub fn check_semantic_conflict(
    cfg: &Config,
    state: &State,
    id: RecordId,
    ctx: CommitContext,
) -> Result<(RecordSet, RecordSet), Verdict> {
    let (mut outranked, mut corrected) = (RecordSet::EMPTY, RecordSet::EMPTY);
    if cfg.variant == Variant::NoConflictCheck {
        return Ok((outranked, corrected));
    }
    let r = state.record(id);
    let mine = cfg.authority(r.source);
    for x in rivals(state, id).iter() {
        let rival = state.record(x);
        let seq = rival.seq.unwrap_or(0);
        if seq >= ctx.snapshot_seq && seq < ctx.commit_start {
            return Err(Verdict::Abort(Reason::StaleWrite));
        }
        let theirs = cfg.authority(rival.source);
        if theirs < mine {
            outranked.insert(x);
        } else if theirs > mine {
            return Err(Verdict::Abort(Reason::Outranked));
        } else if rival.source != r.source {
            return Err(Verdict::Quarantine(Reason::Review));
        } else {
            corrected.insert(x);
        }
    }
    Ok((outranked, corrected))
}

/// Check 3b, lineage: a revoked parent aborts; a superseded or quarantined parent quarantines.
///
/// The revoked case is judged over the transitive ancestors: a committed parent never has a
/// revoked ancestor (the cascade repairs it), but a parent read at tentative-read or raw-read may
/// be a record staged after a retraction under a parent the cascade had quarantined, and its own
/// lineage check has not run yet (I2).
pub fn check_lineage(state: &State, id: RecordId) -> Result<(), Verdict> {
    let parents = state.record(id).parents;
    if state
        .ancestors(id)
        .iter()
        .any(|p| state.record(p).life() == Life::Revoked)
    {
        return Err(Verdict::Abort(Reason::RevokedParent));
    }
    if parents.iter().any(|p| !state.record(p).life().is_active()) {
        return Err(Verdict::Quarantine(Reason::InactiveParent));
    }
    Ok(())
}

/// Check 3c, permission inheritance: a scope wider than the narrowest parent's is laundering.
///
/// Judged over the transitive ancestors: for committed parents this is the parents' rule (their
/// own commit enforced it), but a parent read at tentative-read or raw-read has not been through
/// this check yet, and a Shared child of a Shared tentative parent of a Private record would
/// otherwise launder the Private scope (I3).
pub fn check_permission_inheritance(
    cfg: &Config,
    state: &State,
    id: RecordId,
) -> Result<(), Verdict> {
    if cfg.variant == Variant::NoPermissionInheritance {
        return Ok(());
    }
    let r = state.record(id);
    match state
        .ancestors(id)
        .iter()
        .map(|p| state.record(p).scope)
        .min()
    {
        Some(narrowest) if r.scope > narrowest => Err(Verdict::Quarantine(Reason::Permission)),
        _ => Ok(()),
    }
}

/// Check 4, dependency stability: no transitive ancestor may have a pending revocation.
pub fn check_dependency_stability(state: &State, id: RecordId) -> Result<(), Verdict> {
    if state
        .ancestors(id)
        .iter()
        .any(|a| state.record(a).pending_revocation)
    {
        Err(Verdict::Quarantine(Reason::UnstableDependency))
    } else {
        Ok(())
    }
}
