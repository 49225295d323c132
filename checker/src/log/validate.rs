//! One run of a log replayed on the model, event by event: each event's operation is performed
//! (or refused) by the protocol's own step function and compared with what the implementation
//! says it did; the first difference is the run's divergence, in the implementation's names.
//! The invariants are judged on every state along the way.
//!
//! What is compared: every event is an operation the implementation performed unless its
//! outcome says `refused`, so whether the protocol performs it is always compared; the
//! refusal's reason, and each record's state, reason, effect and pending revocation, only where
//! the outcome gives them.

use super::event::{Event, EventOp, RecordOutcome};
use super::names::{confidence_level, event_name, life_name, validity_of, Inferred, LogOptions};
use crate::trace::scenario::{serde_name, RecordExpect, RefusalSeen, StepExpect};
use crate::trace::{Step, Trace};
use memtx_model::display::op_line;
use memtx_model::evidence::{AUTHORITY_THRESHOLD, CONFIDENCE_THRESHOLD};
use memtx_model::machine::{candidate_ops, step, MemTx};
use memtx_model::properties::PROPERTIES;
use memtx_model::record::{Reason, Record, RecordId, RecordSet};
use memtx_model::rules::take_fired;
use memtx_model::{Op, State};
use std::collections::BTreeMap;

/// The first event where the implementation and the protocol disagree.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Divergence {
    /// The event's position in its run (1 = the first event).
    pub event: usize,
    /// Its line in the file.
    pub line: usize,
    /// The event, in the implementation's names.
    pub action: String,
    /// What the implementation did and what the protocol does, in the implementation's names.
    pub what: String,
}

/// An invariant the protocol's state breaks along a run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Broken {
    /// The invariant's key (`I18`).
    pub key: String,
    /// Its name.
    pub name: String,
    /// The first event after which it fails (1-based).
    pub event: usize,
    /// That event's line.
    pub line: usize,
}

/// A run's verdict.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Events compared (up to and including a divergence).
    pub compared: usize,
    /// The first divergence, if any.
    pub divergence: Option<Divergence>,
    /// Invariants broken along the run (on the events before any divergence).
    pub broken: Vec<Broken>,
    /// Steps the log left out, found by the search (`--missing`), in order.
    pub inserted: Vec<Inserted>,
    /// The run's events before its divergence (all of them when it conforms) as a memtx
    /// scenario: the inferred configuration, each operation, each outcome as the step's
    /// expectation; it replays with `memtx replay`.
    pub scenario: Trace,
}

/// A log that cannot be validated: its line and a one-line reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// The line at fault.
    pub line: usize,
    /// Why.
    pub why: String,
}

/// The records of a run so far: names by model id.
struct Records<'a> {
    names: Vec<String>,
    created_at: BTreeMap<&'a str, usize>,
}

impl<'a> Records<'a> {
    fn id(&self, name: &str, line: usize) -> Result<RecordId, Malformed> {
        match self.names.iter().position(|n| n == name) {
            Some(i) => Ok(i as RecordId),
            None => Err(Malformed {
                line,
                why: format!(
                    "record {} is used before it exists (no earlier observe, stage or call-tool of this run created it)",
                    crate::input::cut(name)
                ),
            }),
        }
    }

    fn set(&self, names: &[String], line: usize) -> Result<RecordSet, Malformed> {
        let mut set = RecordSet::default();
        for n in names {
            set.insert(self.id(n, line)?);
        }
        Ok(set)
    }
}

/// The model's operation of event `e`, given the records named so far and the clock.
fn to_op(e: &Event, inf: &Inferred, records: &Records, now: u8) -> Result<Op, Malformed> {
    let n = &inf.names;
    let line = e.line;
    let record = |name: &str| records.id(name, line);
    Ok(match &e.op {
        EventOp::Tick => Op::Tick,
        EventOp::Observe { owner, write, .. } => Op::Observe {
            source: n.source(&write.source),
            slot: n.slot(&write.key),
            value: n.value(&write.value),
            confidence: confidence_level(write.confidence),
            scope: write.scope,
            owner: n.agent(owner),
        },
        EventOp::Begin {
            agent,
            tier,
            isolation,
        } => Op::Begin {
            agent: n.agent(agent),
            tier: *tier,
            isolation: *isolation,
        },
        EventOp::Stage {
            agent,
            kind,
            write,
            view_scope,
            parents,
            validity,
            ..
        } => {
            let parents = records.set(parents, line)?;
            match write {
                Some(w) => Op::Stage {
                    agent: n.agent(agent),
                    kind: *kind,
                    slot: n.slot(&w.key),
                    value: n.value(&w.value),
                    source: n.source(&w.source),
                    confidence: confidence_level(w.confidence),
                    scope: w.scope,
                    parents,
                    validity: validity_of(*validity, now)
                        .map_err(|why| Malformed { line, why })?
                        .0,
                },
                None => Op::Stage {
                    agent: n.agent(agent),
                    kind: *kind,
                    slot: 0,
                    value: 0,
                    source: 0,
                    confidence: memtx_model::evidence::Confidence::High,
                    scope: *view_scope,
                    parents,
                    validity: memtx_model::record::Validity::open(now),
                },
            }
        }
        EventOp::Adopt { agent, record: r } => Op::Adopt {
            agent: n.agent(agent),
            record: record(r)?,
        },
        EventOp::Commit { agent } => Op::Commit {
            agent: n.agent(agent),
        },
        EventOp::Abort { agent } => Op::Abort {
            agent: n.agent(agent),
        },
        EventOp::CallTool {
            agent,
            reversible,
            support,
            ..
        } => Op::CallTool {
            agent: n.agent(agent),
            reversible: *reversible,
            support: records.set(support, line)?,
        },
        EventOp::RequestRevocation { record: r } => Op::RequestRevocation { record: record(r)? },
        EventOp::ApplyRevocation { record: r } => Op::ApplyRevocation { record: record(r)? },
        EventOp::Revalidate { record: r } => Op::Revalidate { record: record(r)? },
        EventOp::Rebuild { record: r } => Op::Rebuild { view: record(r)? },
        EventOp::Read { agent, record: r } => Op::Read {
            agent: n.agent(agent),
            record: record(r)?,
        },
        EventOp::EndSession { agent } => Op::EndSession {
            agent: n.agent(agent),
        },
        EventOp::Resolve { record: r, keep } => Op::Resolve {
            record: record(r)?,
            keep: *keep,
        },
    })
}

/// A record as the log would say it: `quarantined (evidence)`, `committed, executed`.
fn record_words(r: &Record) -> String {
    let mut s = life_name(r.life()).to_string();
    if let Some(reason) = r.reason {
        s.push_str(&format!(" ({})", serde_name(&reason)));
    }
    if let Some(effect) = r.effect {
        s.push_str(&format!(", {}", serde_name(&effect)));
    }
    if r.pending_revocation {
        s.push_str(", revocation pending");
    }
    s
}

/// What the implementation said of a record, in the same words.
fn outcome_words(o: &RecordOutcome) -> String {
    let mut parts = Vec::new();
    if let Some(l) = o.state {
        parts.push(life_name(l).to_string());
    }
    match &o.reason {
        Some(Some(r)) => parts.push(format!("reason {}", serde_name(r))),
        Some(None) => parts.push("no reason".into()),
        None => {}
    }
    match &o.effect {
        Some(Some(e)) => parts.push(serde_name(e)),
        Some(None) => parts.push("no effect".into()),
        None => {}
    }
    if let Some(p) = o.pending_revocation {
        parts.push(if p {
            "revocation pending".into()
        } else {
            "no revocation pending".into()
        });
    }
    parts.join(", ")
}

fn record_expect(o: &RecordOutcome) -> RecordExpect {
    RecordExpect {
        life: o.state,
        reason: o.reason,
        effect: o.effect,
        pending_revocation: o.pending_revocation,
    }
}

/// Why the protocol gives `r` its reason, with the log's own numbers where the reason is the
/// evidence check's (`confidence` is the one the log gave the record).
fn because(r: &Record, inf: &Inferred, confidence: Option<f64>) -> String {
    if r.reason != Some(Reason::Evidence) {
        return String::new();
    }
    let source = &inf.names.sources[r.source as usize];
    format!(
        ": confidence {} < {CONFIDENCE_THRESHOLD} and authority {} < {AUTHORITY_THRESHOLD}",
        confidence.map_or("?".to_string(), |c| c.to_string()),
        source.authority
    )
}

/// What an event did on the model, when it matched the log.
struct Matched {
    /// The state after it (the same state when it was refused).
    post: State,
    /// The log's outcome as the scenario step's expectation.
    expect: StepExpect,
    /// The operation.
    op: Op,
}

/// Performs event `e` in `state` and compares with the log: the match, or the divergence in
/// the log's words. `Ok(Err(..))` is a divergence; `Err(..)` malformed input.
fn attempt(
    e: &Event,
    inf: &Inferred,
    records: &Records,
    confidences: &BTreeMap<RecordId, f64>,
    state: &State,
) -> Result<Result<Matched, String>, Malformed> {
    let cfg = &inf.config;
    let op = to_op(e, inf, records, state.clock)?;
    if let Some(label) = &inf.fixed {
        let mut proposed = Vec::new();
        candidate_ops(cfg, state, &mut proposed);
        if !proposed.contains(&op) {
            let why = crate::trace::domain_fault(cfg, &op, state.clock)
                .unwrap_or_else(|| "it is not proposed in this state".into());
            return Ok(Err(format!(
                "the configuration {label} does not explore it ({}): {why}",
                op_line(&op)
            )));
        }
    }
    let outcome = e.outcome.clone().unwrap_or_default();
    take_fired();
    let result = step(cfg, state, &op);
    let fired = take_fired();
    let mut expect = StepExpect::default();
    let post = match (result, outcome.refused) {
        (Err(refusal), None) => {
            let seen = RefusalSeen::new(&refusal, fired);
            return Ok(Err(format!(
                "the implementation performed it; the protocol refuses it: {}",
                seen.describe()
            )));
        }
        (Ok(_), Some(reason)) => {
            return Ok(Err(format!(
                "the implementation refused it{}; the protocol performs it",
                reason.map_or(String::new(), |r| format!(" ({r})"))
            )));
        }
        (Err(refusal), Some(reason)) => {
            let seen = RefusalSeen::new(&refusal, fired);
            match reason {
                Some(r) if !seen.matches(&r) => {
                    return Ok(Err(format!(
                        "the implementation refused it for {r}; the protocol refuses it for {}",
                        seen.describe()
                    )));
                }
                Some(r) => expect.refused = Some(r),
                None => expect.refused = seen.rules.first().cloned().or(seen.condition.clone()),
            }
            state.clone()
        }
        (Ok(post), None) => {
            let created = e.op.creates();
            for (name, said) in &outcome.records {
                let id = match created {
                    Some(c) if c == name => records.names.len() as RecordId,
                    _ => records.id(name, e.line)?,
                };
                let r = post.record(id);
                let want = record_expect(said);
                if !want.differences(r).is_empty() {
                    let confidence = match (&e.op, created) {
                        (
                            EventOp::Stage { write: Some(w), .. }
                            | EventOp::Observe { write: w, .. },
                            Some(c),
                        ) if c == name => Some(w.confidence),
                        _ => confidences.get(&id).copied(),
                    };
                    return Ok(Err(format!(
                        "the implementation has {name} {}; the protocol has it {}{}",
                        outcome_words(said),
                        record_words(r),
                        because(r, inf, confidence)
                    )));
                }
                expect.records.insert(id, want);
            }
            if outcome.all_changes {
                let named = |id: RecordId| {
                    let name = match created {
                        Some(c) if id as usize == records.names.len() => c,
                        _ => records.names.get(id as usize).map_or("?", String::as_str),
                    };
                    (outcome.records.contains_key(name), name.to_string())
                };
                for id in crate::trace::changed_records(state, &post).iter() {
                    let (said, name) = named(id);
                    if !said {
                        return Ok(Err(format!(
                            "the implementation says it changed only {}; the protocol also makes {name} {}",
                            if outcome.records.is_empty() {
                                "nothing".to_string()
                            } else {
                                outcome.records.keys().cloned().collect::<Vec<_>>().join(", ")
                            },
                            record_words(post.record(id))
                        )));
                    }
                }
            }
            post
        }
    };
    Ok(Ok(Matched { post, expect, op }))
}

/// The most states the search for left-out steps visits before one event.
pub const SEARCH_STATES: usize = 200_000;

/// The shortest sequence of at most `options.max_missing` left-out operations (of the kinds
/// `options.missing`) from `state` after which event `e` matches the log, breadth first, the
/// first in the model's order among the shortest; with the match.
fn complete(
    e: &Event,
    inf: &Inferred,
    records: &Records,
    confidences: &BTreeMap<RecordId, f64>,
    state: &State,
    options: &LogOptions,
) -> Option<(Vec<Op>, Matched)> {
    let cfg = &inf.config;
    let mut seen: std::collections::HashSet<State> = std::collections::HashSet::new();
    seen.insert(state.clone());
    let mut level: Vec<(State, Vec<Op>)> = vec![(state.clone(), Vec::new())];
    let mut candidates = Vec::new();
    for _ in 0..options.max_missing {
        let mut next = Vec::new();
        for (s, path) in &level {
            candidates.clear();
            candidate_ops(cfg, s, &mut candidates);
            for op in candidates
                .iter()
                .filter(|op| options.missing.contains(&event_name(op)))
            {
                let Ok(post) = step(cfg, s, op) else {
                    continue;
                };
                if !seen.insert(post.clone()) {
                    continue;
                }
                let mut p = path.clone();
                p.push(op.clone());
                if let Ok(Ok(m)) = attempt(e, inf, records, confidences, &post) {
                    return Some((p, m));
                }
                if seen.len() > SEARCH_STATES {
                    return None;
                }
                next.push((post, p));
            }
        }
        level = next;
    }
    None
}

/// `op` in the model's words, with the log's name of the record it names, if any.
fn in_log_words(op: &Op, records: &Records) -> String {
    let named = match *op {
        Op::Adopt { record, .. }
        | Op::RequestRevocation { record }
        | Op::ApplyRevocation { record }
        | Op::Revalidate { record }
        | Op::Read { record, .. }
        | Op::Resolve { record, .. } => Some(record),
        Op::Rebuild { view } => Some(view),
        _ => None,
    };
    match named.and_then(|id| records.names.get(id as usize)) {
        Some(name) => format!("{} ({name})", op_line(op)),
        None => op_line(op),
    }
}

/// A step the log left out, found by the search.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Inserted {
    /// The event it comes before (1-based).
    pub before_event: usize,
    /// That event's line.
    pub line: usize,
    /// The operation, in the model's words with the log's name of the record it names
    /// (`Tick`, `RequestRevocation r0 (eligible#17)`).
    pub action: String,
}

/// Replays one run (`events`, configuration and names from [`super::names::infer`]) under the
/// configuration's variant. Stops at the first divergence. With `options.missing`, an event
/// that does not match is tried after the shortest sequence of left-out operations that makes
/// it match, if any (see [`Inserted`]).
pub fn validate_run(
    events: &[Event],
    inf: &Inferred,
    description: String,
    options: &LogOptions,
) -> Result<RunResult, Malformed> {
    let cfg = &inf.config;
    let model = MemTx::new(cfg.clone());
    let mut state = State::initial();
    let mut records = Records {
        names: Vec::new(),
        created_at: BTreeMap::new(),
    };
    let mut confidences: BTreeMap<RecordId, f64> = BTreeMap::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut broken: Vec<Broken> = Vec::new();
    let mut inserted: Vec<Inserted> = Vec::new();
    let mut divergence = None;
    let mut compared = 0;
    let judge = |state: &State, number: usize, line: usize, broken: &mut Vec<Broken>| {
        let mut now_broken = Vec::new();
        for p in PROPERTIES.iter().filter(|p| p.is_invariant()) {
            if broken.iter().any(|b| b.key == p.key) || (p.holds)(&model, state) {
                continue;
            }
            broken.push(Broken {
                key: p.key.to_string(),
                name: p.name.to_string(),
                event: number,
                line,
            });
            now_broken.push(p.key.to_string());
        }
        now_broken
    };
    for (i, e) in events.iter().enumerate() {
        let number = i + 1;
        compared = number;
        if let Some(name) = e.op.creates() {
            if let Some(line) = records.created_at.get(name) {
                return Err(Malformed {
                    line: e.line,
                    why: format!(
                        "record {} already exists (created on line {line}): each record is created once",
                        crate::input::cut(name)
                    ),
                });
            }
        }
        let first = attempt(e, inf, &records, &confidences, &state);
        let matched = match first {
            Ok(Ok(m)) => m,
            Ok(Err(_)) | Err(_) if !options.missing.is_empty() => {
                match complete(e, inf, &records, &confidences, &state, options) {
                    Some((path, m)) => {
                        for op in path {
                            let post = step(cfg, &state, &op).unwrap_or_else(|_| state.clone());
                            state = post;
                            let violates = judge(&state, number, e.line, &mut broken);
                            inserted.push(Inserted {
                                before_event: number,
                                line: e.line,
                                action: in_log_words(&op, &records),
                            });
                            let expect = StepExpect {
                                violates,
                                ..StepExpect::default()
                            };
                            steps.push(Step {
                                label: op_line(&op),
                                action: op,
                                state: None,
                                expect: (expect != StepExpect::default()).then_some(expect),
                            });
                        }
                        m
                    }
                    None => {
                        let why = first?.err().unwrap_or_default();
                        divergence = Some(Divergence {
                            event: number,
                            line: e.line,
                            action: e.op.describe(),
                            what: format!(
                                "{why} (and no sequence of at most {} left-out steps ({}) makes it match)",
                                options.max_missing,
                                options.missing.join(", ")
                            ),
                        });
                        break;
                    }
                }
            }
            Ok(Err(why)) => {
                divergence = Some(Divergence {
                    event: number,
                    line: e.line,
                    action: e.op.describe(),
                    what: why,
                });
                break;
            }
            Err(malformed) => return Err(malformed),
        };
        let Matched {
            post,
            mut expect,
            op,
        } = matched;
        if expect.refused.is_none() {
            if let Some(name) = e.op.creates() {
                let id = records.names.len() as RecordId;
                records.names.push(name.to_string());
                records.created_at.insert(name, e.line);
                if let EventOp::Stage { write: Some(w), .. } | EventOp::Observe { write: w, .. } =
                    &e.op
                {
                    confidences.insert(id, w.confidence);
                }
            }
            state = post;
            expect.violates = judge(&state, number, e.line, &mut broken);
        }
        steps.push(Step {
            label: op_line(&op),
            action: op,
            state: None,
            expect: (expect != StepExpect::default()).then_some(expect),
        });
    }
    let scenario = Trace::scenario(cfg, steps, description);
    Ok(RunResult {
        compared,
        divergence,
        broken,
        inserted,
        scenario,
    })
}
