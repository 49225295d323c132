//! After a retraction or a review (docs/protocol.md §5): revocation requested and applied,
//! a quarantined belief revalidated, a quarantined view rebuilt, a review resolved (`Resolve`,
//! whose keep has its own enabling condition).

use super::txn::{promote, send_to_scope_review, supersede};
use super::write::forget_in_snapshots;
use super::{all_parts, record_ok, require, Applied};
use crate::cascade::retract;
use crate::config::{Config, Variant};
use crate::lifecycle::Life;
use crate::pipeline;
use crate::provenance;
use crate::record::{Kind, Reason, RecordId, RecordSet};
use crate::rules::{fire, Rule};
use crate::state::State;
use crate::txn::Tier;

pub(super) fn request_revocation(state: &mut State, id: RecordId) -> Applied {
    record_ok(state, id)?;
    let r = state.record(id);
    require(!r.kind.is_action(), Rule::EnRequestAction)?;
    require(r.life().is_committed(), Rule::EnRequestNotCommitted)?;
    require(!r.pending_revocation, Rule::EnRequestPending)?;
    state.record_mut(id).pending_revocation = true;
    fire(Rule::OpRequestRevocation);
    Ok(())
}

pub(super) fn apply_revocation(cfg: &Config, state: &mut State, id: RecordId) -> Applied {
    record_ok(state, id)?;
    require(state.record(id).pending_revocation, Rule::EnApplyNotPending)?;
    retract(cfg, state, id, Reason::Revocation)?;
    fire(Rule::OpApplyRevocation);
    Ok(())
}

/// Stages quarantined record `id` back as Tentative in its owner's open transaction
/// (`rule` names the operation that needs one).
fn restage(state: &mut State, id: RecordId, rule: Rule) -> Applied {
    let owner = state.record(id).owner;
    require(state.txn(owner).is_some(), rule)?;
    state.move_record(id, Life::Tentative)?;
    let r = state.record_mut(id);
    r.writer = Some(owner);
    r.reason = None;
    r.review_seq = None;
    forget_in_snapshots(state, id);
    // It is the owner's staging again (it keeps its labels: content and observation).
    provenance::serve(state, owner, RecordSet::single(id));
    Ok(())
}

pub(super) fn revalidate(state: &mut State, id: RecordId) -> Applied {
    record_ok(state, id)?;
    let r = state.record(id);
    require(r.kind == Kind::Belief, Rule::EnRevalidateNotBelief)?;
    require(
        r.life() == Life::Quarantined,
        Rule::EnRevalidateNotQuarantined,
    )?;
    require(
        state
            .ancestors(id)
            .iter()
            .all(|a| state.record(a).life().is_active()),
        Rule::EnRevalidateAncestor,
    )?;
    restage(state, id, Rule::EnRevalidateNoTxn)?;
    fire(Rule::OpRevalidate);
    Ok(())
}

pub(super) fn rebuild(state: &mut State, view: RecordId) -> Applied {
    record_ok(state, view)?;
    let v = state.record(view);
    require(v.kind.is_view(), Rule::EnRebuildNotView)?;
    require(v.life() == Life::Quarantined, Rule::EnRebuildNotQuarantined)?;
    let surviving: RecordSet = v
        .parents
        .iter()
        .filter(|&p| state.record(p).life().is_active())
        .collect();
    require(!surviving.is_empty(), Rule::EnRebuildNoParent)?;
    let dropped = RecordSet(v.parents.0 & !surviving.0);
    restage(state, view, Rule::EnRebuildNoTxn)?;
    // A rebuilt view keeps the content it had (revision 3.2, §4): what it dropped as parents
    // it still carries as implicit provenance.
    let v = state.record_mut(view);
    v.parents = surviving;
    v.implicit = v.implicit.union(dropped);
    fire(Rule::OpRebuild);
    Ok(())
}

pub(super) fn resolve(cfg: &Config, state: &mut State, id: RecordId, keep: bool) -> Applied {
    record_ok(state, id)?;
    let r = state.record(id);
    require(
        r.life() == Life::Quarantined
            && matches!(r.reason, Some(Reason::Review | Reason::ScopeReview)),
        Rule::EnResolveNotReview,
    )?;
    if !keep {
        retract(cfg, state, id, Reason::ReviewRejected)?;
        fire(Rule::OpResolveReject);
        return Ok(());
    }
    let parts = keep_refusals(cfg, state, id);
    if cfg.variant == Variant::Rev1Adjudication {
        // Revision 1 had no enabling condition for keep; revision 3's scope rule is not
        // adjudication, and the variant keeps it (it restores revision 1's adjudication only).
        let scope_rule = parts
            .iter()
            .filter(|&&(_, rule)| rule == Rule::EnKeepWiderRival);
        all_parts(&scope_rule.copied().collect::<Vec<_>>())?;
    } else {
        all_parts(&parts)?;
    }
    // The verdict stands in for the review outcomes of the conflict check only: the record
    // supersedes exactly the rivals it wins against, which (keep being enabled) are every
    // rival left, all of equal or lower authority and none wider than it; and, committing, it
    // sends the narrower rivals its owner may not see to their owners' review.
    let narrower = pipeline::hidden_narrower_rivals(cfg, state, id);
    supersede(
        state,
        pipeline::rivals(cfg, state, id),
        Reason::SupersededByReview,
    )?;
    // A reviewer's verdict is not an external-action commit: Committed, never ActionSafe.
    promote(state, id, Tier::Medium)?;
    send_to_scope_review(state, narrower)?;
    fire(Rule::OpResolveKeep);
    Ok(())
}

/// The enabling condition of `Resolve(keep)` (docs/protocol.md §5, revision 2): the record would
/// pass every check of the pipeline now but the review outcome of the conflict check, the
/// conflict check judged against the snapshot of the transaction that staged it, and (revision
/// 3, scope non-interference (b)) no rival wider than the record stands.
///
/// Evidence is not among the parts: it is fixed when the record is staged, and a record only
/// reaches review after passing the evidence check, so that part could never refuse.
fn keep_refusals(cfg: &Config, state: &State, id: RecordId) -> [(bool, Rule); 7] {
    let r = state.record(id);
    let lineage = provenance::lineage_ancestors(cfg, state, id);
    // Revision 3.2: under provenance follows content, against the record's observation.
    let staged_from = provenance::stale_from(cfg, r, r.review_seq.unwrap_or(0));
    let mine = cfg.authority(r.source);
    let rivals = pipeline::rivals(cfg, state, id);
    [
        (r.validity.contains(state.clock), Rule::EnKeepExpired),
        (
            lineage
                .iter()
                .all(|a| pipeline::ancestor_passes_lineage(cfg, state.record(a).life())),
            Rule::EnKeepLineage,
        ),
        (
            pipeline::check_permission_inheritance(cfg, state, id).is_ok(),
            Rule::EnKeepPermission,
        ),
        (
            lineage.iter().all(|a| !state.record(a).pending_revocation),
            Rule::EnKeepUnstable,
        ),
        // Named before staleness: a record in scope review is there because of the wider
        // rival, which (committed after it) is also newer than its snapshot.
        (
            !pipeline::displaces_wider(cfg, state, id, rivals),
            Rule::EnKeepWiderRival,
        ),
        (
            rivals
                .iter()
                .all(|x| !matches!(state.record(x).seq, Some(seq) if seq >= staged_from)),
            Rule::EnKeepStale,
        ),
        (
            rivals
                .iter()
                .all(|x| cfg.authority(state.record(x).source) <= mine),
            Rule::EnKeepOutranked,
        ),
    ]
}
