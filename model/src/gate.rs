//! The action gate in front of irreversible tool calls (PROTOCOL.md §7).
//!
//! Weak form (low and medium tiers): condition 1 only. Strong form (external-action): conditions
//! 1 and 2. Both forms also apply the "Decided" support checks of §7 unless the variant is
//! `paper-gate`; `no-action-gate` removes the gate. A blocked call gets a [`GateBlock`] saying which
//! condition blocked it.

use crate::config::{Config, Variant};
use crate::lifecycle::Life;
use crate::record::{RecordId, RecordSet};
use crate::state::State;
use crate::txn::{in_snapshot, Tier};
use serde::{Deserialize, Serialize};

/// Why the gate blocked an irreversible call: the structured reply to the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "condition")]
pub enum GateBlock {
    /// Condition 1: a Tentative record outside the snapshot is in flight (own staging included).
    InFlightTentative {
        /// The record in flight.
        record: RecordId,
    },
    /// Condition 2: the external-action snapshot holds no ActionSafe record.
    NoActionSafeInSnapshot,
    /// Condition 2 (strong form): a support record is not ActionSafe.
    SupportNotActionSafe {
        /// The support record.
        record: RecordId,
    },
    /// Condition 2 (strong form): a support record is not valid now.
    SupportExpired {
        /// The support record.
        record: RecordId,
    },
    /// Decided: a support record is no longer active or has a pending revocation.
    SupportInactive {
        /// The support record.
        record: RecordId,
    },
    /// Decided: an ancestor of a support record has a pending revocation.
    UnstableSupport {
        /// The support record.
        record: RecordId,
        /// Its ancestor pending revocation.
        ancestor: RecordId,
    },
}

impl std::fmt::Display for GateBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateBlock::InFlightTentative { record } => write!(
                f,
                "blocked (condition 1): tentative r{record} is in flight outside the snapshot"
            ),
            GateBlock::NoActionSafeInSnapshot => write!(
                f,
                "blocked (condition 2): the snapshot holds no ActionSafe record"
            ),
            GateBlock::SupportNotActionSafe { record } => write!(
                f,
                "blocked (condition 2): support r{record} is not ActionSafe"
            ),
            GateBlock::SupportExpired { record } => write!(
                f,
                "blocked (condition 2): support r{record} is not valid now"
            ),
            GateBlock::SupportInactive { record } => write!(
                f,
                "blocked: support r{record} is inactive or pending revocation"
            ),
            GateBlock::UnstableSupport { record, ancestor } => write!(
                f,
                "blocked: r{ancestor}, an ancestor of support r{record}, is pending revocation"
            ),
        }
    }
}

/// Decides whether `agent` may execute an irreversible call declaring `support` now.
pub fn check(cfg: &Config, state: &State, agent: u8, support: RecordSet) -> Result<(), GateBlock> {
    if cfg.variant == Variant::NoActionGate {
        return Ok(());
    }
    let Some(tx) = state.txn(agent) else {
        return Ok(()); // not reachable: CallTool is only enabled inside a transaction
    };
    check_no_tentative_in_flight(cfg, state, agent)?;
    if tx.tier == Tier::ExternalAction {
        check_action_safe_support(state, agent, support)?;
    }
    if cfg.variant != Variant::PaperGate {
        check_support_stable(state, support)?;
    }
    Ok(())
}

/// Condition 1: no Tentative record outside the caller's snapshot is in flight.
pub fn check_no_tentative_in_flight(
    cfg: &Config,
    state: &State,
    agent: u8,
) -> Result<(), GateBlock> {
    let Some(tx) = state.txn(agent) else {
        return Ok(());
    };
    match state
        .ids()
        .find(|&id| state.record(id).life() == Life::Tentative && !in_snapshot(cfg, state, tx, id))
    {
        Some(record) => Err(GateBlock::InFlightTentative { record }),
        None => Ok(()),
    }
}

/// Condition 2, strong form: the snapshot holds an ActionSafe record, and every support record is
/// ActionSafe and valid now.
pub fn check_action_safe_support(
    state: &State,
    agent: u8,
    support: RecordSet,
) -> Result<(), GateBlock> {
    let Some(tx) = state.txn(agent) else {
        return Ok(());
    };
    if !tx
        .snapshot
        .iter()
        .any(|id| state.record(id).life() == Life::ActionSafe)
    {
        return Err(GateBlock::NoActionSafeInSnapshot);
    }
    for record in support.iter() {
        let r = state.record(record);
        if r.life() != Life::ActionSafe {
            return Err(GateBlock::SupportNotActionSafe { record });
        }
        if !r.validity.contains(state.clock) {
            return Err(GateBlock::SupportExpired { record });
        }
    }
    Ok(())
}

/// Decided rule of §7: support must be active and not pending revocation, and so must every
/// transitive ancestor's revocation status be clear (dependency stability at action time).
pub fn check_support_stable(state: &State, support: RecordSet) -> Result<(), GateBlock> {
    for record in support.iter() {
        let r = state.record(record);
        if !r.life().is_active() || r.pending_revocation {
            return Err(GateBlock::SupportInactive { record });
        }
        if let Some(ancestor) = state
            .ancestors(record)
            .iter()
            .find(|&a| state.record(a).pending_revocation)
        {
            return Err(GateBlock::UnstableSupport { record, ancestor });
        }
    }
    Ok(())
}
