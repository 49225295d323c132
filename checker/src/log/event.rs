//! One line of an event log: the run header and the events, in the implementation's own names
//! (docs/event-log.md); [`super::read`] reads them. Nothing here knows the model's ids.

use memtx_model::lifecycle::Life;
use memtx_model::record::{Effect, Kind, Reason, Scope};
use memtx_model::txn::{Isolation, Tier};
use std::collections::BTreeMap;

/// The `format` tag of a run header.
pub const LOG_FORMAT: &str = "memtx-event-log";
/// The version of the format this memtx reads and documents.
pub const LOG_VERSION: u64 = 1;

/// A line of the log: a run header, or an event of the current run.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// `{"format": "memtx-event-log", "version": 1, ...}`: a run begins.
    Header(Header),
    /// An operation the implementation performed (or refused).
    Event(Box<Event>),
}

/// The first line of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// The run's name (for messages and the scenario file); absent: `run N`.
    pub run: Option<String>,
    /// Who wrote the log, in its own words (informational).
    pub service: Option<String>,
    /// Sources declared up front, with their real-valued authority.
    pub sources: Vec<(String, f64)>,
}

/// A value of a belief: any JSON scalar, kept as its JSON text (so `1` and `"1"` differ).
pub type ValueName = String;

/// An entity and an attribute: one slot of the model.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The entity (`order-17`).
    pub entity: String,
    /// The attribute (`refund-eligible`).
    pub attribute: String,
}

/// What a write asserts and on what evidence (a belief or an observation).
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    /// The slot written.
    pub key: Key,
    /// The value asserted.
    pub value: ValueName,
    /// The source's name.
    pub source: String,
    /// The source's authority when the event gives it (it must match any earlier one).
    pub authority: Option<f64>,
    /// The writer's confidence, 0 to 1.
    pub confidence: f64,
    /// Who may read it.
    pub scope: Scope,
}

/// A validity interval in the log's ticks: `[from, until)`, `until` absent for ever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The first tick at which it holds.
    pub from: u64,
    /// The first tick at which it no longer holds.
    pub until: Option<u64>,
}

/// The operation of an event (docs/event-log.md lists each with its fields).
#[derive(Clone, Debug, PartialEq)]
pub enum EventOp {
    /// The logical clock advances.
    Tick,
    /// A raw tool result is recorded as `record`, owned by `owner`.
    Observe {
        /// The new record's name.
        record: String,
        /// Its owner.
        owner: String,
        /// What it says.
        write: Write,
    },
    /// `agent` opens a transaction.
    Begin {
        /// The agent.
        agent: String,
        /// Its tier.
        tier: Tier,
        /// Its isolation level.
        isolation: Isolation,
    },
    /// `agent` stages a belief (`write` given) or a view (`kind` summary or profile).
    Stage {
        /// The agent.
        agent: String,
        /// The new record's name.
        record: String,
        /// Belief, summary or profile.
        kind: Kind,
        /// A belief's content and evidence (`None` for a view).
        write: Option<Write>,
        /// A view's scope (a belief's is in `write`).
        view_scope: Scope,
        /// Declared parents, by name.
        parents: Vec<String>,
        /// Validity (a belief's; absent: from now, for ever).
        validity: Option<Span>,
    },
    /// `agent` adopts the raw record `record` into its transaction.
    Adopt {
        /// The agent.
        agent: String,
        /// The raw record.
        record: String,
    },
    /// `agent` commits its transaction.
    Commit {
        /// The agent.
        agent: String,
    },
    /// `agent` aborts its transaction.
    Abort {
        /// The agent.
        agent: String,
    },
    /// `agent` calls a tool; the executed action is recorded as `record`.
    CallTool {
        /// The agent.
        agent: String,
        /// The action record's name.
        record: String,
        /// Reversible (not gated) or irreversible (gated).
        reversible: bool,
        /// Declared support, by name.
        support: Vec<String>,
    },
    /// A correction asks to revoke `record`.
    RequestRevocation {
        /// The record.
        record: String,
    },
    /// The revocation of `record` is applied (revoke and cascade).
    ApplyRevocation {
        /// The record.
        record: String,
    },
    /// A quarantined belief goes back through the pipeline.
    Revalidate {
        /// The record.
        record: String,
    },
    /// A quarantined view is rebuilt.
    Rebuild {
        /// The view.
        record: String,
    },
    /// `record` is served to `agent`.
    Read {
        /// The agent.
        agent: String,
        /// The record.
        record: String,
    },
    /// `agent`'s session ends.
    EndSession {
        /// The agent.
        agent: String,
    },
    /// The reviewer keeps or rejects `record`.
    Resolve {
        /// The record under review.
        record: String,
        /// Keep (true) or reject.
        keep: bool,
    },
}

/// What the implementation says an event did (every field optional).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The implementation refused the operation: `Some(None)` without saying why, `Some(Some(r))`
    /// for reason `r` (a rule id or a gate condition, as in a scenario's `expect.refused`).
    pub refused: Option<Option<String>>,
    /// Records by name and what they are after the event.
    pub records: BTreeMap<String, RecordOutcome>,
    /// `records` names every record the event changed (`"all_changes": true`): a record the
    /// protocol changes that it does not name is a divergence (a missed repair shows).
    pub all_changes: bool,
}

/// What a record is after an event, as the implementation says; `None` fields are not compared.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordOutcome {
    /// Its lifecycle state.
    pub state: Option<Life>,
    /// Its reason code (`Some(None)`: none).
    pub reason: Option<Option<Reason>>,
    /// A tool action's effect (`Some(None)`: none).
    pub effect: Option<Option<Effect>>,
    /// Whether a revocation of it is pending.
    pub pending_revocation: Option<bool>,
}

/// One event: its operation, its optional outcome and where it is in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Its line in the file (1-based).
    pub line: usize,
    /// The operation.
    pub op: EventOp,
    /// What the implementation says it did (absent: performed, nothing more said).
    pub outcome: Option<Outcome>,
}

impl EventOp {
    /// The operation's name as the log spells it (`call-tool`).
    pub fn name(&self) -> &'static str {
        match self {
            EventOp::Tick => "tick",
            EventOp::Observe { .. } => "observe",
            EventOp::Begin { .. } => "begin",
            EventOp::Stage { .. } => "stage",
            EventOp::Adopt { .. } => "adopt",
            EventOp::Commit { .. } => "commit",
            EventOp::Abort { .. } => "abort",
            EventOp::CallTool { .. } => "call-tool",
            EventOp::RequestRevocation { .. } => "request-revocation",
            EventOp::ApplyRevocation { .. } => "apply-revocation",
            EventOp::Revalidate { .. } => "revalidate",
            EventOp::Rebuild { .. } => "rebuild",
            EventOp::Read { .. } => "read",
            EventOp::EndSession { .. } => "end-session",
            EventOp::Resolve { .. } => "resolve",
        }
    }

    /// The record this event creates when performed (observe, stage, call-tool).
    pub fn creates(&self) -> Option<&str> {
        match self {
            EventOp::Observe { record, .. }
            | EventOp::Stage { record, .. }
            | EventOp::CallTool { record, .. } => Some(record),
            _ => None,
        }
    }

    /// The agent acting, if any.
    pub fn agent(&self) -> Option<&str> {
        match self {
            EventOp::Observe { owner: agent, .. }
            | EventOp::Begin { agent, .. }
            | EventOp::Stage { agent, .. }
            | EventOp::Adopt { agent, .. }
            | EventOp::Commit { agent }
            | EventOp::Abort { agent }
            | EventOp::CallTool { agent, .. }
            | EventOp::Read { agent, .. }
            | EventOp::EndSession { agent } => Some(agent),
            _ => None,
        }
    }

    /// A one-line rendering in the implementation's names (`planner stage refund-eligible#17
    /// (order-17.refund-eligible = true)`).
    pub fn describe(&self) -> String {
        let name = self.name();
        match self {
            EventOp::Tick => "tick".into(),
            EventOp::Observe {
                record,
                owner,
                write,
            } => format!(
                "{owner} observe {record} ({}.{} = {} from {})",
                write.key.entity, write.key.attribute, write.value, write.source
            ),
            EventOp::Begin { agent, .. }
            | EventOp::Commit { agent }
            | EventOp::Abort { agent }
            | EventOp::EndSession { agent } => format!("{agent} {name}"),
            EventOp::Stage {
                agent,
                record,
                write: Some(w),
                ..
            } => format!(
                "{agent} stage {record} ({}.{} = {})",
                w.key.entity, w.key.attribute, w.value
            ),
            EventOp::Stage {
                agent,
                record,
                kind,
                parents,
                ..
            } => format!(
                "{agent} stage {record} ({} of {})",
                super::names::kind_name(*kind),
                parents.join(", ")
            ),
            EventOp::CallTool {
                agent,
                record,
                reversible,
                support,
            } => format!(
                "{agent} call-tool {record} ({}, support: {})",
                if *reversible {
                    "reversible"
                } else {
                    "irreversible"
                },
                if support.is_empty() {
                    "none".to_string()
                } else {
                    support.join(", ")
                }
            ),
            EventOp::Adopt { agent, record } | EventOp::Read { agent, record } => {
                format!("{agent} {name} {record}")
            }
            EventOp::Resolve { record, keep } => {
                format!(
                    "resolve {record} ({})",
                    if *keep { "keep" } else { "reject" }
                )
            }
            EventOp::RequestRevocation { record }
            | EventOp::ApplyRevocation { record }
            | EventOp::Revalidate { record }
            | EventOp::Rebuild { record } => format!("{name} {record}"),
        }
    }
}
