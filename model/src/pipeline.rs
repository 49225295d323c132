//! The commit pipeline: four ordered checks per staged record (docs/protocol.md §6).
//!
//! [`run`] applies them to one record in order; the first failing check decides the [`Verdict`]
//! and its reason code. Each check is one function, named as the spec names it.

use crate::config::{Config, Variant};
use crate::evidence::evidence_suffices;
use crate::lifecycle::Life;
use crate::record::{Kind, Reason, RecordId, RecordSet};
use crate::rules::{fire, Rule};
use crate::state::State;
use crate::txn::permitted;

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
    match checks(cfg, state, id, ctx) {
        Ok(pass) | Err(pass) => pass,
    }
}

/// The checks in order; `Err` holds the verdict of the first that fails.
fn checks(
    cfg: &Config,
    state: &State,
    id: RecordId,
    ctx: CommitContext,
) -> Result<Verdict, Verdict> {
    check_evidence(cfg, state, id)?;
    check_validity(state, id, ctx.now)?;
    let (outranked, corrected) = check_semantic_conflict(cfg, state, id, ctx)?;
    let later = check_lineage(cfg, state, id)
        .and_then(|()| check_permission_inheritance(cfg, state, id))
        .and_then(|()| check_dependency_stability(cfg, state, id));
    if later.is_err() && !outranked.union(corrected).is_empty() {
        // Decided (§6): an adjudication's effect on a rival takes place only if the record
        // itself commits; here it does not, and its rivals stay as they are.
        fire(Rule::PipeDeferredEffect);
    }
    later?;
    Ok(Verdict::Pass {
        outranked,
        corrected,
    })
}

/// Check 1, evidence: confidence ≥ 0.6 or source authority ≥ 0.9.
pub fn check_evidence(cfg: &Config, state: &State, id: RecordId) -> Result<(), Verdict> {
    let r = state.record(id);
    let authority = cfg.authority(r.source);
    if evidence_suffices(r.confidence, authority) {
        if !evidence_suffices(r.confidence, crate::evidence::Authority::Low) {
            fire(Rule::PipeEvidenceByAuthority);
        }
        Ok(())
    } else {
        fire(Rule::PipeEvidenceFail);
        Err(Verdict::Quarantine(Reason::Evidence))
    }
}

/// Check 2, validity: `from ≤ now < until`.
pub fn check_validity(state: &State, id: RecordId, now: u8) -> Result<(), Verdict> {
    if state.record(id).validity.contains(now) {
        Ok(())
    } else {
        fire(Rule::PipeValidityFail);
        Err(Verdict::Quarantine(Reason::Expired))
    }
}

/// The rivals of belief `id`: the committed beliefs that contradict it (same slot, different
/// value, overlapping validity; non-overlapping validity coexists, no conflict) and that its
/// writer is permitted to see (revision 3, scope non-interference (a): another agent's Private
/// record neither aborts, outranks nor sends it to review, so a commit's outcome reveals nothing
/// its writer may not read). Under `rev2-scopes` every contradicting record is a rival.
pub fn rivals(cfg: &Config, state: &State, id: RecordId) -> RecordSet {
    let (seen, hidden) = contradicting(state, id);
    if cfg.variant == Variant::Rev2Scopes {
        return seen.union(hidden);
    }
    if !hidden.is_empty() {
        fire(Rule::PipeConflictHiddenRival);
    }
    seen
}

/// Scope non-interference (c): the committed beliefs contradicting `id` that its writer may not
/// see and that are narrower than it (another agent's Private record under a Shared or Public
/// one). When `id` commits they go to `Quarantined(scope-review)` for their owners: knowledge
/// flows from wider to narrower, never back. Two Private records of different owners are not
/// narrower than each other: both stand. None under `rev2-scopes`.
pub fn hidden_narrower_rivals(cfg: &Config, state: &State, id: RecordId) -> RecordSet {
    if cfg.variant == Variant::Rev2Scopes {
        return RecordSet::EMPTY;
    }
    let scope = state.record(id).scope;
    contradicting(state, id)
        .1
        .iter()
        .filter(|&x| state.record(x).scope < scope)
        .collect()
}

/// The committed beliefs that contradict belief `id`, split into those its writer is
/// permitted to see and those it is not.
fn contradicting(state: &State, id: RecordId) -> (RecordSet, RecordSet) {
    let r = state.record(id);
    let (mut seen, mut hidden) = (RecordSet::EMPTY, RecordSet::EMPTY);
    if r.kind != Kind::Belief {
        return (seen, hidden);
    }
    for x in state.ids().filter(|&x| x != id) {
        let o = state.record(x);
        if o.kind != Kind::Belief || !o.life().is_committed() || o.slot != r.slot {
            continue;
        }
        if o.value == r.value {
            continue;
        }
        if !o.validity.overlaps(r.validity) {
            // Decided (§6): values whose validity intervals do not overlap coexist.
            fire(Rule::PipeConflictDisjoint);
        } else if permitted(writer(r), o) {
            seen.insert(x);
        } else {
            hidden.insert(x);
        }
    }
    (seen, hidden)
}

/// The writer of a record being judged: the agent whose transaction staged it (an adopted
/// observation may be owned by another agent), or its owner when it is judged outside a
/// transaction (`Resolve(keep)`).
fn writer(r: &crate::record::Record) -> u8 {
    r.writer.unwrap_or(r.owner)
}

/// Scope non-interference (b): would record `id` displace a rival in `displaced` that is wider
/// in scope than itself? Then it goes to `Quarantined(scope-review)` instead (never under
/// `rev2-scopes`). `Resolve(keep)`'s enabling condition asks the same question.
pub fn displaces_wider(cfg: &Config, state: &State, id: RecordId, displaced: RecordSet) -> bool {
    let scope = state.record(id).scope;
    cfg.variant != Variant::Rev2Scopes && displaced.iter().any(|x| state.record(x).scope > scope)
}

/// Check 3a, semantic conflict adjudication. Every rival is judged before anything is
/// decided, and the outcomes rank (revision 2): any rival committed after the snapshot →
/// abort (a stale late write); else any rival of higher authority → abort; else any rival of
/// equal authority from another source → review; else the record wins, and the rivals of
/// lower authority (outranked) and of its own source (corrected) are returned, to be
/// superseded only if the record commits, unless one of them is wider in scope than the
/// record (revision 3, scope non-interference (b): scope review instead). The order of record ids never changes the outcome.
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
    let rivals = rivals(cfg, state, id);
    // Provenance follows content (§6 (iii)): rivals committed after the observation of what
    // the record asserts are stale too, not only those after its transaction's snapshot.
    let observed = crate::provenance::stale_from(cfg, r, ctx.snapshot_seq);
    let (mut stale, mut stale_content, mut higher, mut review) = (false, false, false, false);
    // The outcome classes the rivals fell into (one bit each, in the order above): the
    // ranking of several rivals decides something only when they disagree.
    let mut classes = 0u8;
    for x in rivals.iter() {
        let rival = state.record(x);
        let seq = rival.seq.unwrap_or(0);
        let theirs = cfg.authority(rival.source);
        let outcome = if seq >= ctx.snapshot_seq && seq < ctx.commit_start {
            classes |= 1;
            &mut stale
        } else if seq >= observed && seq < ctx.commit_start {
            classes |= 1;
            &mut stale_content
        } else if theirs > mine {
            classes |= 2;
            &mut higher
        } else if theirs == mine && rival.source != r.source {
            classes |= 4;
            &mut review
        } else if theirs < mine {
            classes |= 8;
            outranked.insert(x);
            continue;
        } else {
            classes |= 16;
            corrected.insert(x);
            continue;
        };
        *outcome = true;
        if cfg.variant == Variant::Rev1Adjudication {
            // Revision 1: the first decisive rival in id order decides.
            break;
        }
    }
    if classes.count_ones() > 1 {
        fire(Rule::PipeConflictSeveral);
    }
    if stale {
        fire(Rule::PipeConflictStale);
        return Err(Verdict::Abort(Reason::StaleWrite));
    }
    if stale_content {
        fire(Rule::PipeConflictStaleContent);
        return Err(Verdict::Abort(Reason::StaleContent));
    }
    if higher {
        fire(Rule::PipeConflictOutranked);
        return Err(Verdict::Abort(Reason::Outranked));
    }
    if review {
        fire(Rule::PipeConflictReview);
        return Err(Verdict::Quarantine(Reason::Review));
    }
    if displaces_wider(cfg, state, id, outranked.union(corrected)) {
        // To contest a shared truth, write a record as wide.
        fire(Rule::PipeConflictWiderRival);
        return Err(Verdict::Quarantine(Reason::ScopeReview));
    }
    if !outranked.is_empty() {
        fire(Rule::PipeConflictSupersede);
    }
    if !corrected.is_empty() {
        fire(Rule::PipeConflictCorrection);
    }
    Ok((outranked, corrected))
}

/// Check 3b, lineage: a revoked ancestor aborts; a superseded or quarantined one quarantines.
///
/// Judged over the transitive ancestors (revision 2's I13: no record commits while any
/// transitive ancestor is inactive). A committed parent never has a revoked ancestor (the
/// cascade repairs it), but a parent read at tentative-read or raw-read may be a record staged
/// after a retraction under a parent the cascade had quarantined, and its own lineage check has
/// not run yet (I2); and a parent may have superseded its own parent earlier in this commit (a
/// correction from the same source), leaving a grandparent Superseded (found by I13 on
/// `lineage`).
///
/// Revision 3, lineage over committed parents: an ancestor still Raw, Tentative or Validated
/// (another transaction's staging, read at raw- or tentative-read) quarantines the record as
/// `uncommitted-parent`: a belief that never validated must never reach an action through a
/// committed child. A parent staged in the same transaction was decided earlier in this
/// commit (ids ascend), so it is committed by now if it passed. Judged over the same ancestors
/// as the rest of lineage, so that the pipeline and the gate's support closure agree. Under
/// `rev2-lineage` an uncommitted parent passes, as it did in revision 2.
///
/// Revision 3.2, provenance follows content (§6 (ii)): the records a belief transcribes from
/// its writer's context (staged by another transaction, asserting the same slot and value)
/// count as its parents here: transcribing a Tentative belief into one's own does not launder
/// it.
///
/// Under `missed-cascade-staged` only the direct parents are judged (the paper's defect,
/// second form).
pub fn check_lineage(cfg: &Config, state: &State, id: RecordId) -> Result<(), Verdict> {
    let judged = if cfg.variant == Variant::MissedCascadeStaged {
        state.record(id).parents
    } else {
        crate::provenance::lineage_ancestors(cfg, state, id)
    };
    if judged
        .iter()
        .any(|p| state.record(p).life() == Life::Revoked)
    {
        fire(Rule::PipeLineageRevoked);
        return Err(Verdict::Abort(Reason::RevokedParent));
    }
    if judged.iter().any(|p| !state.record(p).life().is_active()) {
        fire(Rule::PipeLineageInactive);
        return Err(Verdict::Quarantine(Reason::InactiveParent));
    }
    if judged
        .iter()
        .any(|p| !ancestor_passes_lineage(cfg, state.record(p).life()))
    {
        fire(Rule::PipeLineageUncommitted);
        return Err(Verdict::Quarantine(Reason::UncommittedParent));
    }
    Ok(())
}

/// Does an ancestor in state `life` pass lineage? Committed (revision 3), or active under
/// `rev2-lineage`. `check_lineage` names the reason; `Resolve(keep)`'s enabling condition asks
/// the same question.
pub fn ancestor_passes_lineage(cfg: &Config, life: Life) -> bool {
    if cfg.variant == Variant::Rev2Lineage {
        life.is_active()
    } else {
        life.is_committed()
    }
}

/// Check 3c, permission inheritance: a scope wider than the narrowest parent's is laundering;
/// and (revision 3, provenance follows content, §6 (i)) every agent permitted to see the record
/// must be permitted to see every record of its content, declared or not
/// (`Quarantined(content-permission)`).
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
        Some(narrowest) if r.scope > narrowest => {
            fire(Rule::PipePermissionFail);
            Err(Verdict::Quarantine(Reason::Permission))
        }
        _ if crate::provenance::follows_content(cfg)
            && !crate::provenance::content_readable_by_all_readers(state, id) =>
        {
            fire(Rule::PipePermissionContent);
            Err(Verdict::Quarantine(Reason::ContentPermission))
        }
        _ => Ok(()),
    }
}

/// Check 4, dependency stability: no transitive ancestor may have a pending revocation; under
/// provenance follows content the records it transcribes count as ancestors (§6 (ii)), as for
/// lineage.
pub fn check_dependency_stability(
    cfg: &Config,
    state: &State,
    id: RecordId,
) -> Result<(), Verdict> {
    if crate::provenance::lineage_ancestors(cfg, state, id)
        .iter()
        .any(|a| state.record(a).pending_revocation)
    {
        fire(Rule::PipeStabilityFail);
        Err(Verdict::Quarantine(Reason::UnstableDependency))
    } else {
        Ok(())
    }
}
