//! The compact, validated JSON form of a [`State`] (used by traces and reports).
//!
//! In memory a state is a fixed-capacity array: [`MAX_RECORDS`] record slots of which only the
//! prefix `0..len` is used, one transaction slot per possible agent, and bit masks for the
//! rollback log and the ghost variables. A derived serialisation would print every unused slot
//! and every mask as a number. The form here prints only what a reader needs:
//!
//! ```text
//! {
//!   "clock": 0,
//!   "next_seq": 1,
//!   "records": [ { "kind": "belief", "slot": 0, "value": 1, "...": "...", "life": "Committed" } ],
//!   "txns": [ null, { "tier": "medium", "isolation": "committed-read", "snapshot": [0], "snapshot_seq": 1 }, null, null ],
//!   "log": [ { "repairs": [], "cause": null } ],
//!   "contexts": [ [0], [], [], [] ],
//!   "ghost_violated": []
//! }
//! ```
//!
//! * `records`: only the allocated records, in id order (the id is the position); each with all
//!   of its fields, including its lifecycle state `life`.
//! * `txns`: one entry per agent slot (index = agent), `null` when the agent has no open
//!   transaction.
//! * `log`: one rollback-log entry per record (same positions as `records`): the repair kinds
//!   logged for it and the retracted record that caused the latest one.
//! * `contexts`: one entry per agent slot: the records served to the agent since its session
//!   began (revision 3; absent in older traces: all empty).
//! * `ghost_violated`: the numbers `n` of the history properties `In` some step has violated.
//!
//! Reading is **validated**: a state that the model could not hold (more than [`MAX_RECORDS`]
//! records, a parent id that is not an older record, an agent beyond [`MAX_AGENTS`], a log entry
//! naming a record that does not exist, ...) is refused with a serde error that names the field,
//! never with a panic, because traces are user input.
//!
//! Writing then reading gives back an equal state (`checker/tests/trace_state_serde.rs` checks
//! this for every state of `quick` up to depth 5, and that each kind of invalid input is refused).

use crate::record::{Record, RecordId, RecordSet, MAX_RECORDS};
use crate::state::{GhostTxn, Repair, State, MAX_AGENTS};
use crate::txn::Txn;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One rollback-log entry in its readable form.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LogEntry {
    repairs: Vec<Repair>,
    cause: Option<RecordId>,
}

/// The serialised shape, borrowed for writing.
#[derive(Serialize)]
struct CompactRef<'a> {
    clock: u8,
    next_seq: u8,
    records: &'a [Record],
    txns: &'a [Option<Txn>],
    log: Vec<LogEntry>,
    contexts: &'a [RecordSet],
    ghost_violated: Vec<u8>,
    ghost_txns: &'a [Option<GhostTxn>],
    ghost_contexts: &'a [RecordSet],
}

/// The serialised shape, owned for reading (then validated).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactOwned {
    clock: u8,
    next_seq: u8,
    records: Vec<Record>,
    txns: Vec<Option<Txn>>,
    log: Vec<LogEntry>,
    /// Absent in traces written before revision 3: every context empty.
    #[serde(default)]
    contexts: Vec<RecordSet>,
    ghost_violated: Vec<u8>,
    /// Absent in traces written before revision 2: no ghost transaction.
    #[serde(default)]
    ghost_txns: Vec<Option<GhostTxn>>,
    /// Absent in traces written before revision 3: the ghost's contexts mirror the protocol's.
    #[serde(default)]
    ghost_contexts: Option<Vec<RecordSet>>,
}

impl Serialize for State {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let log = self
            .ids()
            .map(|id| {
                let entry = self.audit(id);
                LogEntry {
                    repairs: entry.repairs().collect(),
                    cause: entry.cause,
                }
            })
            .collect();
        let ghost_violated = self.ghost.violated.numbers().collect();
        CompactRef {
            clock: self.clock,
            next_seq: self.next_seq,
            records: self.records(),
            txns: self.txns(),
            log,
            contexts: self.contexts(),
            ghost_violated,
            ghost_txns: &self.ghost.txns,
            ghost_contexts: &self.ghost.contexts,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for State {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let compact = CompactOwned::deserialize(d)?;
        compact.into_state().map_err(D::Error::custom)
    }
}

/// The first id of `set` that is not below `bound`, if any.
fn first_at_or_above(set: RecordSet, bound: usize) -> Option<RecordId> {
    set.iter().find(|&id| id as usize >= bound)
}

impl CompactOwned {
    /// Checks every id against the capacities and builds the state through its public API.
    fn into_state(self) -> Result<State, String> {
        let n = self.records.len();
        if n > MAX_RECORDS {
            return Err(format!(
                "a state holds at most {MAX_RECORDS} records (got {n})"
            ));
        }
        if self.log.len() != n {
            return Err(format!(
                "\"log\" must have one entry per record ({n}), got {}",
                self.log.len()
            ));
        }
        if self.txns.len() > MAX_AGENTS {
            return Err(format!(
                "\"txns\" has {} agent slots; at most {MAX_AGENTS} are possible",
                self.txns.len()
            ));
        }
        let mut state = State::initial();
        state.clock = self.clock;
        state.next_seq = self.next_seq;
        for (i, record) in self.records.into_iter().enumerate() {
            if let Some(p) = first_at_or_above(record.parents, i) {
                return Err(format!(
                    "record r{i} names parent r{p}, but parents must be older records (ids below {i})"
                ));
            }
            if let Some(d) = first_at_or_above(record.doubted_at_execution, n) {
                return Err(format!(
                    "record r{i}'s doubted_at_execution names r{d}, which does not exist ({n} records)"
                ));
            }
            if record.owner as usize >= MAX_AGENTS {
                return Err(format!(
                    "record r{i} is owned by agent a{}; agents are a0..a{}",
                    record.owner,
                    MAX_AGENTS - 1
                ));
            }
            for (field, set) in [
                ("implicit", record.implicit),
                ("transcribed", record.transcribed),
                ("ghost_implicit", record.ghost_implicit),
                ("ghost_transcribed", record.ghost_transcribed),
            ] {
                if let Some(x) = first_at_or_above(set, n) {
                    return Err(format!(
                        "record r{i}'s {field} names r{x}, which does not exist ({n} records)"
                    ));
                }
            }
            if let Some(w) = record.writer.filter(|&w| w as usize >= MAX_AGENTS) {
                return Err(format!(
                    "record r{i} is staged by agent a{w}; agents are a0..a{}",
                    MAX_AGENTS - 1
                ));
            }
            state.push_record(record);
        }
        for (agent, txn) in self.txns.into_iter().enumerate() {
            if let Some(tx) = &txn {
                if let Some(id) = first_at_or_above(tx.snapshot, n) {
                    return Err(format!(
                        "the snapshot of agent a{agent} names r{id}, which does not exist ({n} records)"
                    ));
                }
            }
            // `agent < MAX_AGENTS` was checked above.
            state.set_txn(agent as u8, txn);
        }
        for (i, entry) in self.log.into_iter().enumerate() {
            match (entry.repairs.is_empty(), entry.cause) {
                (true, None) => {}
                (false, Some(cause)) if (cause as usize) < n => {
                    for repair in entry.repairs {
                        state.log_repair(i as RecordId, repair, cause);
                    }
                }
                (false, Some(cause)) => {
                    return Err(format!(
                        "the log entry of r{i} names cause r{cause}, which does not exist ({n} records)"
                    ));
                }
                _ => {
                    return Err(format!(
                        "the log entry of r{i} must have both repairs and a cause, or neither"
                    ));
                }
            }
        }
        if self.contexts.len() > MAX_AGENTS {
            return Err(format!(
                "\"contexts\" has {} agent slots; at most {MAX_AGENTS} are possible",
                self.contexts.len()
            ));
        }
        for (agent, context) in self.contexts.into_iter().enumerate() {
            if let Some(id) = first_at_or_above(context, n) {
                return Err(format!(
                    "the context of agent a{agent} names r{id}, which does not exist ({n} records)"
                ));
            }
            state.set_context(agent as u8, context);
        }
        state.ghost.contexts = *state.contexts();
        if let Some(ghost_contexts) = self.ghost_contexts {
            if ghost_contexts.len() > MAX_AGENTS {
                return Err(format!(
                    "\"ghost_contexts\" has {} agent slots; at most {MAX_AGENTS} are possible",
                    ghost_contexts.len()
                ));
            }
            let mut all = [RecordSet::EMPTY; MAX_AGENTS];
            for (agent, context) in ghost_contexts.into_iter().enumerate() {
                if let Some(id) = first_at_or_above(context, n) {
                    return Err(format!(
                        "the ghost context of agent a{agent} names r{id}, which does not exist ({n} records)"
                    ));
                }
                all[agent] = context;
            }
            state.ghost.contexts = all;
        }
        if self.ghost_txns.len() > MAX_AGENTS {
            return Err(format!(
                "\"ghost_txns\" has {} agent slots; at most {MAX_AGENTS} are possible",
                self.ghost_txns.len()
            ));
        }
        for (agent, g) in self.ghost_txns.into_iter().enumerate() {
            if let Some(g) = &g {
                if let Some(id) = first_at_or_above(g.snapshot, n) {
                    return Err(format!(
                        "the ghost snapshot of agent a{agent} names r{id}, which does not exist ({n} records)"
                    ));
                }
                if g.level > 4 {
                    return Err(format!(
                        "the ghost level of agent a{agent} is {}; levels are 0..=4",
                        g.level
                    ));
                }
            }
            state.ghost.txns[agent] = g;
        }
        for number in self.ghost_violated {
            if !crate::state::Verdicts::names_invariant(number) {
                return Err(format!(
                    "\"ghost_violated\" names I{number}, which is not an invariant of the table ({})",
                    crate::properties::PROPERTIES[..crate::properties::INVARIANTS]
                        .iter()
                        .map(|p| p.key)
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
            }
            state.ghost.violate(number);
        }
        Ok(state)
    }
}
