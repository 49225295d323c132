//! The operations of docs/protocol.md §5: the model's actions.
//!
//! [`Op`] is a serialisable enum with stable field names (traces are actions replayed). [`apply`]
//! checks an operation's enabling condition and performs its effect; a disabled operation is
//! refused with a [`Refusal`] that says why, and changes nothing.
//!
//! One file per family of operations, each operation one function: `txn.rs` (`Begin`, `Commit`,
//! `Abort`), `write.rs` (`Observe`, `Stage`, `Adopt`, `CallTool`), `session.rs` (`Read`,
//! `EndSession`), `repair.rs` (revocation, `Revalidate`, `Rebuild`, `Resolve`). This file holds
//! [`Op`] and [`Refusal`], the dispatch, `Tick` (the clock) and the parts of enabling conditions
//! the operations share. `family.rs` names the operations' kinds ([`Family`]) for whoever picks
//! among them.

mod family;
mod repair;
mod session;
mod txn;
mod write;

pub use family::{Families, Family};
pub use txn::begin_isolation;

use crate::config::Config;
use crate::evidence::Confidence;
use crate::gate::GateBlock;
use crate::lifecycle::{IllegalMove, Life};
use crate::record::{Kind, Record, RecordId, RecordSet, Scope, Validity};
use crate::rules::{fire, Rule};
use crate::state::State;
use crate::txn::{Isolation, Tier, Txn};
use serde::{Deserialize, Serialize};

/// One protocol operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Op {
    /// Advance the logical clock.
    Tick,
    /// A raw tool result, recorded outside any transaction.
    Observe {
        /// Source id.
        source: u8,
        /// Slot.
        slot: u8,
        /// Value.
        value: u8,
        /// Confidence attached to the observation.
        confidence: Confidence,
        /// Scope.
        scope: Scope,
        /// Owning agent.
        owner: u8,
    },
    /// Open a transaction and capture its snapshot.
    Begin {
        /// Agent.
        agent: u8,
        /// Tier (harness configuration).
        tier: Tier,
        /// Isolation (ignored for external-action, which reads action-safe).
        isolation: Isolation,
    },
    /// Stage a new Tentative record in the agent's transaction.
    Stage {
        /// Agent.
        agent: u8,
        /// Belief, Summary or Profile.
        kind: Kind,
        /// Slot.
        slot: u8,
        /// Value.
        value: u8,
        /// Source id.
        source: u8,
        /// Writer confidence.
        confidence: Confidence,
        /// Scope.
        scope: Scope,
        /// Declared parents (must be visible).
        parents: RecordSet,
        /// Validity interval.
        validity: Validity,
    },
    /// Stage's second form: adopt a visible Raw record into the agent's transaction.
    Adopt {
        /// Agent.
        agent: u8,
        /// The Raw record.
        record: RecordId,
    },
    /// Run the commit pipeline over the transaction's staged records and close it.
    Commit {
        /// Agent.
        agent: u8,
    },
    /// Retract every staged record (with cascade) and close the transaction.
    Abort {
        /// Agent.
        agent: u8,
    },
    /// Call a tool; irreversible calls pass the action gate first.
    CallTool {
        /// Agent.
        agent: u8,
        /// Reversible (no gate) or irreversible (gated).
        reversible: bool,
        /// Declared support records (must be visible); they become the action's parents.
        support: RecordSet,
    },
    /// An external correction asks to revoke a committed record.
    RequestRevocation {
        /// The record.
        record: RecordId,
    },
    /// Apply a pending revocation: revoke and cascade.
    ApplyRevocation {
        /// The record.
        record: RecordId,
    },
    /// Send a quarantined belief back through the pipeline in its owner's transaction.
    Revalidate {
        /// The record.
        record: RecordId,
    },
    /// Rebuild a quarantined view from its surviving parents in its owner's transaction.
    Rebuild {
        /// The view.
        view: RecordId,
    },
    /// Serve a visible record to the agent (revision 3): it joins the transaction's read set
    /// and the agent's context.
    Read {
        /// Agent.
        agent: u8,
        /// The record.
        record: RecordId,
    },
    /// End the agent's session (revision 3): its context is cleared.
    EndSession {
        /// Agent.
        agent: u8,
    },
    /// The reviewer's verdict on an equal-authority conflict, or on a scope review.
    Resolve {
        /// The record quarantined for review or scope review.
        record: RecordId,
        /// Keep it (it commits, its rivals are Superseded) or reject it (Revoked, cascaded).
        keep: bool,
    },
}

/// Why an operation was not performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refusal {
    /// Its enabling condition does not hold (the reason says which part).
    Disabled(&'static str),
    /// The action gate blocked an irreversible call.
    Blocked(GateBlock),
    /// The protocol attempted a lifecycle move outside the table ([memtx internal bug]).
    Illegal(IllegalMove),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Disabled(why) => write!(f, "not enabled: {why}"),
            Refusal::Blocked(block) => write!(f, "{block}"),
            Refusal::Illegal(m) => write!(f, "[memtx internal bug] {m}"),
        }
    }
}

impl From<IllegalMove> for Refusal {
    fn from(m: IllegalMove) -> Self {
        Refusal::Illegal(m)
    }
}

type Applied = Result<(), Refusal>;

/// One part of an enabling condition: `Ok` when `cond` holds, else a refusal that fires
/// `rule` (an `enable.*` rule of [`crate::rules`]) and gives its statement as the reason.
fn require(cond: bool, rule: Rule) -> Applied {
    if cond {
        Ok(())
    } else {
        fire(rule);
        Err(Refusal::Disabled(rule.statement()))
    }
}

/// A malformed operation (an id outside the configuration's bounds): not a rule of the
/// protocol but a guard against user input (a hand-written trace), so it fires nothing.
fn guard(cond: bool, why: &'static str) -> Applied {
    if cond {
        Ok(())
    } else {
        Err(Refusal::Disabled(why))
    }
}

/// Checks `op`'s enabling condition in `state` and, if it holds, performs it.
/// On `Err`, `state` may be partly changed and must be discarded (callers apply to a clone).
pub fn apply(cfg: &Config, state: &mut State, op: &Op) -> Applied {
    match *op {
        Op::Tick => tick(cfg, state),
        Op::Observe {
            source,
            slot,
            value,
            confidence,
            scope,
            owner,
        } => write::observe(cfg, state, source, slot, value, confidence, scope, owner),
        Op::Begin {
            agent,
            tier,
            isolation,
        } => txn::begin(cfg, state, agent, tier, isolation),
        Op::Stage {
            agent,
            kind,
            slot,
            value,
            source,
            confidence,
            scope,
            parents,
            validity,
        } => {
            let record = Record {
                kind,
                slot,
                value,
                source,
                confidence,
                owner: agent,
                scope,
                parents,
                validity,
                life: Life::Tentative,
                writer: Some(agent),
                ..Record::default()
            };
            write::stage(cfg, state, agent, record)
        }
        Op::Adopt { agent, record } => write::adopt(cfg, state, agent, record),
        Op::Commit { agent } => txn::commit(cfg, state, agent),
        Op::Abort { agent } => txn::abort(cfg, state, agent),
        Op::CallTool {
            agent,
            reversible,
            support,
        } => write::call_tool(cfg, state, agent, reversible, support),
        Op::RequestRevocation { record } => repair::request_revocation(state, record),
        Op::ApplyRevocation { record } => repair::apply_revocation(cfg, state, record),
        Op::Revalidate { record } => repair::revalidate(state, record),
        Op::Rebuild { view } => repair::rebuild(state, view),
        Op::Resolve { record, keep } => repair::resolve(cfg, state, record, keep),
        Op::Read { agent, record } => session::read(cfg, state, agent, record),
        Op::EndSession { agent } => session::end_session(cfg, state, agent),
    }
}

fn tick(cfg: &Config, state: &mut State) -> Applied {
    require(state.clock < cfg.bounds.ticks, Rule::EnTickBound)?;
    state.clock += 1;
    fire(Rule::OpTick);
    Ok(())
}

/// A free record id (`rule` names the operation that needs one).
fn free_record(cfg: &Config, state: &State, rule: Rule) -> Applied {
    require(state.len() < cfg.bounds.records as usize, rule)
}

fn agent_ok(cfg: &Config, agent: u8) -> Applied {
    guard(agent < cfg.bounds.agents, "no such agent")
}

/// The agent's open transaction (`rule` names the operation that needs one).
fn open_txn(cfg: &Config, state: &State, agent: u8, rule: Rule) -> Result<Txn, Refusal> {
    agent_ok(cfg, agent)?;
    let tx = state.txn(agent).copied();
    require(tx.is_some(), rule)?;
    tx.ok_or(Refusal::Disabled(rule.statement()))
}

fn record_ok(state: &State, id: RecordId) -> Applied {
    guard(state.exists(id), "no such record")
}

fn evidence_ok(cfg: &Config, source: u8, slot: u8, value: u8) -> Applied {
    guard(
        (source as usize) < cfg.bounds.sources.len(),
        "no such source",
    )?;
    guard(slot < cfg.bounds.slots, "no such slot")?;
    guard(value < cfg.bounds.values, "no such value")
}

/// Fires the rule of every part that fails and refuses with the first; `Ok` if all hold.
fn all_parts(parts: &[(bool, Rule)]) -> Applied {
    let mut first = Ok(());
    for &(holds, rule) in parts {
        let refused = require(holds, rule);
        if first.is_ok() {
            first = refused;
        }
    }
    first
}
