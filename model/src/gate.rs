//! The action gate in front of irreversible tool calls (docs/protocol.md §7).
//!
//! Weak form (low and medium tiers): condition 1 only. Strong form (external-action): conditions
//! 1 and 2. Both forms also apply the "Decided" support checks of §7: every record of the
//! support closure (the declared support and its transitive ancestors) is in force (revision 3),
//! the action-time stability check unless the variant is `paper-gate`, the closure's ancestors
//! unless it is `rev2-lineage`; `no-action-gate` removes the gate. A blocked call gets a
//! [`GateBlock`] saying which condition blocked it.

use crate::config::{Config, Variant};
use crate::lifecycle::Life;
use crate::record::{Record, RecordId, RecordSet};
use crate::rules::{fire, Rule};
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
    /// Condition 2, revision 3: the snapshot's only ActionSafe records are ones the caller may
    /// not see (another agent's Private records do not make an empty view action-safe).
    NoPermittedActionSafe,
    /// Condition 2 (strong form): a support record is not ActionSafe.
    SupportNotActionSafe {
        /// The support record.
        record: RecordId,
    },
    /// A support record is not valid now (revision 3: in force includes valid now, in every
    /// tier; revision 2 checked it in the strong form only).
    SupportExpired {
        /// The support record.
        record: RecordId,
    },
    /// Decided (revision 2): a support record is not in force: staged, quarantined,
    /// superseded, revoked, or pending revocation.
    SupportNotInForce {
        /// The support record.
        record: RecordId,
        /// Its lifecycle state.
        life: Life,
        /// Whether a revocation of it is pending.
        pending_revocation: bool,
    },
    /// Decided: an ancestor of a support record has a pending revocation.
    UnstableSupport {
        /// The support record.
        record: RecordId,
        /// Its ancestor pending revocation.
        ancestor: RecordId,
    },
    /// Revision 3: an ancestor of a support record is not in force (not Committed or
    /// ActionSafe, or not valid now): a belief that never validated cannot reach an action
    /// through a committed child.
    AncestorNotInForce {
        /// The support record.
        record: RecordId,
        /// Its ancestor that is not in force.
        ancestor: RecordId,
        /// The ancestor's lifecycle state.
        life: Life,
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
            GateBlock::NoPermittedActionSafe => write!(
                f,
                "blocked (condition 2): no ActionSafe record of the snapshot is one the caller may see"
            ),
            GateBlock::SupportNotActionSafe { record } => write!(
                f,
                "blocked (condition 2): support r{record} is not ActionSafe"
            ),
            GateBlock::SupportExpired { record } => {
                write!(f, "blocked: support r{record} is not valid now")
            }
            GateBlock::SupportNotInForce {
                record,
                life,
                pending_revocation,
            } => {
                let pending = if *pending_revocation {
                    ", pending revocation"
                } else {
                    ""
                };
                write!(
                    f,
                    "blocked: support r{record} is not in force ({life:?}{pending})"
                )
            }
            GateBlock::UnstableSupport { record, ancestor } => write!(
                f,
                "blocked: r{ancestor}, an ancestor of support r{record}, is pending revocation"
            ),
            GateBlock::AncestorNotInForce {
                record,
                ancestor,
                life,
            } => {
                let why = if life.is_committed() {
                    "not valid now".to_string()
                } else {
                    format!("{life:?}")
                };
                write!(
                    f,
                    "blocked: r{ancestor}, an ancestor of support r{record}, is not in force ({why})"
                )
            }
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
    let strong = tx.tier == Tier::ExternalAction;
    let verdict = (|| -> Result<(), GateBlock> {
        check_no_tentative_in_flight(cfg, state, agent)?;
        if strong {
            check_action_safe_support(cfg, state, agent, support)?;
        }
        check_support_in_force(cfg, state, support, strong)?;
        if cfg.variant != Variant::PaperGate {
            check_support_stable(cfg, state, support)?;
        }
        if cfg.variant != Variant::Rev2Lineage {
            check_ancestors_in_force(cfg, state, support)?;
        }
        Ok(())
    })();
    fire(match verdict {
        Ok(()) if strong => Rule::GatePassStrong,
        Ok(()) => Rule::GatePassWeak,
        Err(block) => block.rule(),
    });
    verdict
}

impl GateBlock {
    /// The rule of [`crate::rules`] this block reason is.
    pub fn rule(&self) -> Rule {
        match self {
            GateBlock::InFlightTentative { .. } => Rule::GateInFlight,
            GateBlock::NoActionSafeInSnapshot => Rule::GateNoActionSafe,
            GateBlock::NoPermittedActionSafe => Rule::GateNoPermittedActionSafe,
            GateBlock::SupportNotActionSafe { .. } => Rule::GateSupportNotActionSafe,
            GateBlock::SupportExpired { .. } => Rule::GateSupportExpired,
            GateBlock::SupportNotInForce { .. } => Rule::GateSupportNotInForce,
            GateBlock::UnstableSupport { .. } => Rule::GateUnstableSupport,
            GateBlock::AncestorNotInForce { .. } => Rule::GateAncestorNotInForce,
        }
    }
}

/// Is `r` in force: Committed or ActionSafe, and not pending revocation?
pub fn in_force(r: &Record) -> bool {
    r.life().is_committed() && !r.pending_revocation
}

/// Decided (revision 2): every declared support record is in force. The gate, not the
/// operation's enabling condition, answers a call on support that is not, and names the
/// record and its state. The paper's gate (`paper-gate`) checks dependency stability only at
/// commit: it lets a call through on Committed or ActionSafe support pending revocation.
/// Revision 3: in force includes valid now, in every tier (`rev2-lineage`: in the strong form
/// only, as revision 2's condition 2).
pub fn check_support_in_force(
    cfg: &Config,
    state: &State,
    support: RecordSet,
    strong: bool,
) -> Result<(), GateBlock> {
    let ok = |r: &Record| {
        if cfg.variant == Variant::PaperGate {
            r.life().is_committed()
        } else {
            in_force(r)
        }
    };
    if let Some(record) = support.iter().find(|&s| !ok(state.record(s))) {
        let r = state.record(record);
        return Err(GateBlock::SupportNotInForce {
            record,
            life: r.life(),
            pending_revocation: r.pending_revocation,
        });
    }
    if strong || cfg.variant != Variant::Rev2Lineage {
        if let Some(record) = support
            .iter()
            .find(|&s| !state.record(s).validity.contains(state.clock))
        {
            return Err(GateBlock::SupportExpired { record });
        }
    }
    Ok(())
}

/// Revision 3, the support closure: in every tier, each transitive ancestor of each support
/// record is committed (Committed or ActionSafe) and valid now (its pending revocation is
/// [`check_support_stable`]'s). A belief that never validated cannot reach an action through a
/// committed child. Under provenance follows content the closure also holds the records each
/// of them transcribes (§6 (ii), [`crate::provenance::lineage_ancestors`]). `rev2-lineage`
/// omits it.
pub fn check_ancestors_in_force(
    cfg: &Config,
    state: &State,
    support: RecordSet,
) -> Result<(), GateBlock> {
    for record in support.iter() {
        let closure = crate::provenance::lineage_ancestors(cfg, state, record);
        if let Some(ancestor) = closure.iter().find(|&a| {
            let r = state.record(a);
            !r.life().is_committed() || !r.validity.contains(state.clock)
        }) {
            return Err(GateBlock::AncestorNotInForce {
                record,
                ancestor,
                life: state.record(ancestor).life(),
            });
        }
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

/// Condition 2, strong form: the snapshot holds an ActionSafe record the caller is permitted to
/// see (revision 3, §4 "permitted"; `rev2-scopes` counts any), and every support record is
/// ActionSafe (valid now is [`check_support_in_force`]'s, in every tier).
pub fn check_action_safe_support(
    cfg: &Config,
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
    if cfg.variant != Variant::Rev2Scopes
        && !tx.snapshot.iter().any(|id| {
            let r = state.record(id);
            r.life() == Life::ActionSafe && crate::txn::permitted(agent, r)
        })
    {
        return Err(GateBlock::NoPermittedActionSafe);
    }
    for record in support.iter() {
        let r = state.record(record);
        if r.life() != Life::ActionSafe {
            return Err(GateBlock::SupportNotActionSafe { record });
        }
    }
    Ok(())
}

/// Decided rule of §7: no transitive ancestor of a support record is pending revocation
/// (dependency stability at action time; the paper's gate, `paper-gate`, omits it). Under
/// provenance follows content the closure holds the records each transcribes (§6 (ii)).
pub fn check_support_stable(
    cfg: &Config,
    state: &State,
    support: RecordSet,
) -> Result<(), GateBlock> {
    for record in support.iter() {
        if let Some(ancestor) = crate::provenance::lineage_ancestors(cfg, state, record)
            .iter()
            .find(|&a| state.record(a).pending_revocation)
        {
            return Err(GateBlock::UnstableSupport { record, ancestor });
        }
    }
    Ok(())
}
