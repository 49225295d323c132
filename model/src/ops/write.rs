//! What enters the store (docs/protocol.md §5): a raw tool result (`Observe`), a staged record
//! (`Stage`, with its readable parents and the labels the middleware puts on it), an adopted
//! raw record (`Adopt`) and an executed tool call (`CallTool`, behind the action gate).

use super::{
    agent_ok, all_parts, evidence_ok, free_record, guard, open_txn, record_ok, require, Applied,
    Refusal,
};
use crate::config::Config;
use crate::evidence::Confidence;
use crate::gate;
use crate::lifecycle::Life;
use crate::provenance;
use crate::record::{Effect, Kind, Record, RecordId, RecordSet, Scope, Validity, FOREVER};
use crate::rules::{fire, Rule};
use crate::state::State;
use crate::txn::{snapshot_seq, visible, Tier};

#[allow(clippy::too_many_arguments)]
pub(super) fn observe(
    cfg: &Config,
    state: &mut State,
    source: u8,
    slot: u8,
    value: u8,
    confidence: Confidence,
    scope: Scope,
    owner: u8,
) -> Applied {
    agent_ok(cfg, owner)?;
    evidence_ok(cfg, source, slot, value)?;
    free_record(cfg, state, Rule::EnObserveFree)?;
    state.push_record(Record {
        kind: Kind::Belief,
        slot,
        value,
        source,
        confidence,
        owner,
        scope,
        validity: Validity::open(state.clock),
        life: Life::Raw,
        ..Record::default()
    });
    fire(Rule::OpObserve);
    Ok(())
}

/// The declared parents of a staged record are readable: visible to the transaction
/// (§4), not Revoked (a branch state is never visible; Superseded and Quarantined parents
/// of the snapshot are left to the lineage check, model/README.md), and not tool actions
/// (nothing is derived from an effect).
fn parents_readable(cfg: &Config, state: &State, agent: u8, parents: RecordSet) -> Applied {
    for p in parents.iter() {
        record_ok(state, p)?;
    }
    let all = |ok: &dyn Fn(RecordId) -> bool| parents.iter().all(ok);
    let visible_all = all(&|p| visible(cfg, state, agent, p));
    let none_revoked = all(&|p| state.record(p).life() != Life::Revoked);
    let none_action = all(&|p| !state.record(p).kind.is_action());
    // Every failing part fires its rule; the first one is the reason given.
    let parts = [
        (visible_all, Rule::EnStageParentVisible),
        (none_revoked, Rule::EnStageParentRevoked),
        (none_action, Rule::EnStageParentAction),
    ];
    all_parts(&parts)
}

pub(super) fn stage(cfg: &Config, state: &mut State, agent: u8, record: Record) -> Applied {
    guard(
        !record.kind.is_action(),
        "tool actions are created by CallTool, not staged",
    )?;
    evidence_ok(cfg, record.source, record.slot, record.value)?;
    guard(
        record.validity.from < record.validity.until,
        "empty validity interval",
    )?;
    let tx = open_txn(cfg, state, agent, Rule::EnStageNoTxn)?;
    free_record(cfg, state, Rule::EnStageFree)?;
    require(
        !record.kind.is_view() || !record.parents.is_empty(),
        Rule::EnStageViewParent,
    )?;
    parents_readable(cfg, state, agent, record.parents)?;
    // The middleware labels the record with what its writer holds (revision 3, §4).
    let id = state.push_record(Record {
        implicit: state.context(agent),
        transcribed: provenance::transcribed(state, agent, &record),
        ..record
    });
    let observed = provenance::observation(state, id, snapshot_seq(cfg, state, &tx));
    state.record_mut(id).observed = observed;
    provenance::serve(state, agent, record.parents.union(RecordSet::single(id)));
    fire(Rule::OpStage);
    Ok(())
}

pub(super) fn adopt(cfg: &Config, state: &mut State, agent: u8, id: RecordId) -> Applied {
    let tx = open_txn(cfg, state, agent, Rule::EnAdoptNoTxn)?;
    record_ok(state, id)?;
    require(state.record(id).life() == Life::Raw, Rule::EnAdoptNotRaw)?;
    require(visible(cfg, state, agent, id), Rule::EnAdoptNotVisible)?;
    state.move_record(id, Life::Tentative)?;
    // Its content is itself (what the tool returned), observed at the adopting snapshot.
    let observed = snapshot_seq(cfg, state, &tx);
    let r = state.record_mut(id);
    r.writer = Some(agent);
    r.observed = Some(observed);
    forget_in_snapshots(state, id);
    provenance::serve(state, agent, RecordSet::single(id));
    fire(Rule::OpAdopt);
    Ok(())
}

/// A record that re-enters the lifecycle as `Tentative` (adopted, revalidated, rebuilt) is a new,
/// uncommitted version that no open snapshot captured: it leaves every snapshot, so it is read
/// only by the transaction that stages it, and it is "in flight outside the snapshot" for the
/// action gate (the caller's own staging included, docs/protocol.md §4, §7).
pub(super) fn forget_in_snapshots(state: &mut State, id: RecordId) {
    for agent in 0..state.txns().len() as u8 {
        if let Some(mut tx) = state.txn(agent).copied() {
            tx.snapshot.remove(id);
            state.set_txn(agent, Some(tx));
        }
    }
}

pub(super) fn call_tool(
    cfg: &Config,
    state: &mut State,
    agent: u8,
    reversible: bool,
    support: RecordSet,
) -> Applied {
    let tx = open_txn(cfg, state, agent, Rule::EnCallNoTxn)?;
    free_record(cfg, state, Rule::EnCallFree)?;
    for s in support.iter() {
        record_ok(state, s)?;
    }
    all_parts(&[
        (
            support.iter().all(|s| visible(cfg, state, agent, s)),
            Rule::EnCallSupportVisible,
        ),
        (
            support.iter().all(|s| !state.record(s).kind.is_action()),
            Rule::EnCallSupportAction,
        ),
    ])?;
    if reversible {
        // A reversible call has no gate: on support not in force it is not enabled (a
        // cascade cannot repair an action created after it ran, model/README.md).
        require(
            support
                .iter()
                .all(|s| state.record(s).life().is_committed()),
            Rule::EnCallReversibleNotInForce,
        )?;
    } else {
        // The gate is the one place that answers an irreversible call (§7, revision 2).
        gate::check(cfg, state, agent, support).map_err(Refusal::Blocked)?;
    }
    // An executed action enters the lifecycle as Committed (ActionSafe in an external-action txn).
    let life = if tx.tier == Tier::ExternalAction {
        Life::ActionSafe
    } else {
        Life::Committed
    };
    state.push_record(Record {
        kind: if reversible {
            Kind::ReversibleAction
        } else {
            Kind::IrreversibleAction
        },
        owner: agent,
        scope: Scope::Private,
        parents: support,
        validity: Validity {
            from: state.clock,
            until: FOREVER,
        },
        life,
        effect: Some(Effect::Executed),
        ..Record::default()
    });
    // An executed call was served its support; a blocked one served nothing (revision 3.2).
    provenance::serve(state, agent, support);
    fire(if reversible {
        Rule::OpCallReversible
    } else {
        Rule::OpCallIrreversible
    });
    Ok(())
}
