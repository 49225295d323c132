//! From one run's names to the model's ids and bounds: agents, slots (entity, attribute), values
//! and sources numbered in order of appearance; real-valued authority and confidence
//! discretised by the protocol's thresholds; the configuration (bounds and a domain wide enough
//! for every event) inferred from the run.
//!
//! Discretisation is exact, not an approximation: the protocol reads confidence only through
//! the evidence threshold (≥ 0.6), and authority through the evidence threshold (≥ 0.9) and the
//! order of two sources' authorities. So confidence maps to low (0.4) or high (0.8), and the
//! run's distinct authorities map, in order, to the model's low (0.5) and mid (0.8) below 0.9
//! and high (0.95) at or above it. A run whose sources need more levels than that (three
//! distinct authorities below 0.9, or two at or above it) cannot be represented and is refused.

use super::event::{EventOp, Key, Span, ValueName};
use memtx_model::config::{
    Bounds, Config, Domain, Enumeration, ValidityShape, Variant, WriteShape,
};
use memtx_model::evidence::{Authority, Confidence, AUTHORITY_THRESHOLD, CONFIDENCE_THRESHOLD};
use memtx_model::lifecycle::Life;
use memtx_model::record::{Kind, Scope, Validity, MAX_RECORDS};
use memtx_model::state::MAX_AGENTS;
use memtx_model::txn::{Isolation, Tier};

/// The lifecycle states as the log spells them.
pub const LIVES: [(&str, Life); 8] = [
    ("raw", Life::Raw),
    ("tentative", Life::Tentative),
    ("validated", Life::Validated),
    ("committed", Life::Committed),
    ("action-safe", Life::ActionSafe),
    ("quarantined", Life::Quarantined),
    ("superseded", Life::Superseded),
    ("revoked", Life::Revoked),
];

/// The log's name of lifecycle state `life`.
pub fn life_name(life: Life) -> &'static str {
    LIVES
        .iter()
        .find(|(_, l)| *l == life)
        .map(|(n, _)| *n)
        .unwrap_or("?")
}

/// The log's name of a record kind (`summary`).
pub fn kind_name(kind: Kind) -> String {
    crate::trace::scenario::serde_name(&kind)
}

/// A source of the run: its name, its real authority and the model's level for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// The implementation's name.
    pub name: String,
    /// The authority the log gives it.
    pub authority: f64,
    /// The model's level (order kept, threshold respected).
    pub level: Authority,
    /// Its id in the configuration (`src0`, ...).
    pub id: u8,
}

/// The names of one run, each list indexed by the model's id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Names {
    /// Agents `a0`, `a1`, ...
    pub agents: Vec<String>,
    /// Slots `s0`, `s1`, ...
    pub keys: Vec<Key>,
    /// Values `v0`, `v1`, ...
    pub values: Vec<ValueName>,
    /// Sources `src0`, `src1`, ...
    pub sources: Vec<Source>,
}

fn id_of<T: PartialEq>(list: &mut Vec<T>, item: &T, make: impl FnOnce() -> T) -> usize {
    match list.iter().position(|x| x == item) {
        Some(i) => i,
        None => {
            list.push(make());
            list.len() - 1
        }
    }
}

impl Names {
    /// The agent id of `name` (known: [`infer`] numbered every agent).
    pub fn agent(&self, name: &str) -> u8 {
        self.agents.iter().position(|a| a == name).unwrap_or(0) as u8
    }

    /// The slot id of `key`.
    pub fn slot(&self, key: &Key) -> u8 {
        self.keys.iter().position(|k| k == key).unwrap_or(0) as u8
    }

    /// The value id of `value`.
    pub fn value(&self, value: &str) -> u8 {
        self.values.iter().position(|v| v == value).unwrap_or(0) as u8
    }

    /// The source id of `name`.
    pub fn source(&self, name: &str) -> u8 {
        self.sources
            .iter()
            .find(|s| s.name == name)
            .map_or(0, |s| s.id)
    }

    /// How the run's authorities and confidences were discretised, in one line.
    pub fn discretisation(&self) -> String {
        let sources: Vec<String> = self
            .sources
            .iter()
            .map(|s| {
                format!(
                    "{} {} -> {}",
                    s.name,
                    s.authority,
                    crate::trace::scenario::serde_name(&s.level)
                )
            })
            .collect();
        format!(
            "authority {} (at or above {AUTHORITY_THRESHOLD}: high; below, in order: low, mid); confidence at or above {CONFIDENCE_THRESHOLD}: high (0.8), below: low (0.4)",
            sources.join(", ")
        )
    }
}

/// The model's confidence level for a real confidence.
pub fn confidence_level(confidence: f64) -> Confidence {
    if confidence >= f64::from(CONFIDENCE_THRESHOLD) {
        Confidence::High
    } else {
        Confidence::Low
    }
}

/// The model's validity for a span staged at tick `now`, if it is one of the shapes the model
/// has (`[now, ∞)`, `[now, now + 1)`, `[now + 1, ∞)`).
pub fn validity_of(span: Option<Span>, now: u8) -> Result<(Validity, ValidityShape), String> {
    let now64 = u64::from(now);
    let Some(span) = span else {
        return Ok((Validity::open(now), ValidityShape::Open));
    };
    let shape = match (span.from, span.until) {
        (f, None) if f == now64 => ValidityShape::Open,
        (f, Some(u)) if f == now64 && u == now64 + 1 => ValidityShape::OneTick,
        (f, None) if f == now64 + 1 => ValidityShape::FromNextTick,
        _ => {
            return Err(format!(
                "validity [{}, {}) staged at tick {now} is none of the model's shapes ([now, for ever), [now, now + 1), [now + 1, for ever))",
                span.from,
                span.until.map_or("for ever".to_string(), |u| u.to_string())
            ))
        }
    };
    let validity = shape.at(now);
    Ok((validity, shape))
}

/// The events a log may leave out (`validate-log --missing`): operations that create no
/// record (a record is named by the event that creates it, so creations cannot be missing).
pub const MISSABLE: [&str; 12] = [
    "tick",
    "begin",
    "adopt",
    "commit",
    "abort",
    "request-revocation",
    "apply-revocation",
    "revalidate",
    "rebuild",
    "read",
    "end-session",
    "resolve",
];

/// The log's name of the operation `op` (`call-tool`).
pub fn event_name(op: &memtx_model::Op) -> &'static str {
    use memtx_model::Op;
    match op {
        Op::Tick => "tick",
        Op::Observe { .. } => "observe",
        Op::Begin { .. } => "begin",
        Op::Stage { .. } => "stage",
        Op::Adopt { .. } => "adopt",
        Op::Commit { .. } => "commit",
        Op::Abort { .. } => "abort",
        Op::CallTool { .. } => "call-tool",
        Op::RequestRevocation { .. } => "request-revocation",
        Op::ApplyRevocation { .. } => "apply-revocation",
        Op::Revalidate { .. } => "revalidate",
        Op::Rebuild { .. } => "rebuild",
        Op::Read { .. } => "read",
        Op::EndSession { .. } => "end-session",
        Op::Resolve { .. } => "resolve",
    }
}

/// How a log is validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogOptions {
    /// The protocol the implementation claims to follow.
    pub variant: Variant,
    /// Operations the log may leave out (names of [`MISSABLE`]); empty: a complete log.
    pub missing: Vec<&'static str>,
    /// The most left-out steps searched for before one event.
    pub max_missing: usize,
    /// A configuration to hold every run to (and its name), instead of inferring one.
    pub config: Option<(Config, String)>,
}

impl LogOptions {
    /// A complete log under `variant`.
    pub fn complete(variant: Variant) -> Self {
        LogOptions {
            variant,
            missing: Vec::new(),
            max_missing: 0,
            config: None,
        }
    }

    /// May the log leave out ticks (so the model's clock is not the count of logged ticks)?
    pub fn ticks_missing(&self) -> bool {
        self.missing.contains(&"tick")
    }
}

/// One run's names and the configuration that replays it.
#[derive(Clone, Debug, PartialEq)]
pub struct Inferred {
    /// The names, by model id.
    pub names: Names,
    /// Bounds that fit the run and a domain that admits every event (wide enumeration), or
    /// the configuration given (`--preset`, `--domain`).
    pub config: Config,
    /// The given configuration's name, when the run is held to it: each event must then be
    /// one it explores.
    pub fixed: Option<String>,
}

fn push_unique<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// Numbers the names of a run's events (in order of appearance) and infers its configuration
/// under `variant`. `declared` are the header's sources. The error is one line, prefixed by the
/// event's position when one event is at fault (`(index, message)`, index into `events`).
pub fn infer(
    declared: &[(String, f64)],
    events: &[&EventOp],
    refused: &[Option<&str>],
    options: &LogOptions,
) -> Result<Inferred, (Option<usize>, String)> {
    let variant = options.variant;
    let mut names = Names::default();
    let mut authorities: Vec<(String, f64)> = declared.to_vec();
    let mut domain = Domain {
        tiers: Vec::new(),
        isolations: Vec::new(),
        stage_kinds: Vec::new(),
        writes: Vec::new(),
        view_scopes: Vec::new(),
        validities: Vec::new(),
        belief_parents: 0,
        view_parents: 1,
        support: 0,
        observe: false,
        reversible_calls: false,
        revocations: false,
        reviews: false,
        reads: false,
        sessions: false,
        enumeration: Enumeration::Wide,
    };
    let mut ticks: u64 = 0;
    let mut created = 0usize;
    let mut performed = 0usize;
    let mut full = false;
    let mut writes: Vec<(String, Confidence, Scope)> = Vec::new();
    for (i, op) in events.iter().enumerate() {
        let at = |m: String| (Some(i), m);
        if let Some(agent) = op.agent() {
            id_of(&mut names.agents, &agent.to_string(), || agent.to_string());
            if names.agents.len() > MAX_AGENTS {
                return Err(at(format!(
                    "a run has at most {MAX_AGENTS} agents in the model; {agent} is the {}th",
                    names.agents.len()
                )));
            }
        }
        if op.creates().is_some() {
            // Room for every record the run may create: a refused creation is refused for its
            // own reason, never for want of a free id.
            created += 1;
            performed += usize::from(refused[i].is_none());
            // The implementation says it ran out of room: the run's capacity is what it
            // created (the model's free-id refusal is then the one it gave).
            full |= refused[i].is_some_and(|r| r.ends_with(".free-id"));
            if performed > MAX_RECORDS {
                return Err(at(format!(
                    "a run creates at most {MAX_RECORDS} records in the model; this is the {performed}th (split the log into runs, each opened by a header)"
                )));
            }
        }
        let mut write = |w: &super::event::Write| -> Result<(), (Option<usize>, String)> {
            id_of(&mut names.keys, &w.key, || w.key.clone());
            id_of(&mut names.values, &w.value, || w.value.clone());
            match (authorities.iter().find(|(n, _)| *n == w.source), w.authority) {
                (Some((_, known)), Some(a)) if *known != a => {
                    return Err(at(format!(
                        "source {} has authority {known} and here {a}: a source's authority is fixed",
                        w.source
                    )))
                }
                (None, Some(a)) => authorities.push((w.source.clone(), a)),
                (None, None) => {
                    return Err(at(format!(
                        "source {} has no authority: give \"authority\" on its first write or in the run header's \"sources\"",
                        w.source
                    )))
                }
                _ => {}
            }
            push_unique(
                &mut writes,
                (w.source.clone(), confidence_level(w.confidence), w.scope),
            );
            Ok(())
        };
        match op {
            // The clock's bound is the ticks performed: a tick logged refused is one the
            // implementation's clock had no room for (the only reason a tick is refused).
            EventOp::Tick => ticks += u64::from(refused[i].is_none()),
            EventOp::Observe { write: w, .. } => {
                domain.observe = true;
                write(w)?;
            }
            EventOp::Begin {
                tier, isolation, ..
            } => {
                push_unique(&mut domain.tiers, *tier);
                if *tier != Tier::ExternalAction {
                    push_unique(&mut domain.isolations, *isolation);
                }
            }
            EventOp::Stage {
                kind,
                write: w,
                view_scope,
                parents,
                validity,
                ..
            } => {
                push_unique(&mut domain.stage_kinds, *kind);
                let n = parents.len().min(MAX_RECORDS) as u8;
                if let Some(w) = w {
                    write(w)?;
                    domain.belief_parents = domain.belief_parents.max(n);
                    if options.ticks_missing() {
                        // The clock is not the count of logged ticks: every shape may occur.
                        for shape in [
                            ValidityShape::Open,
                            ValidityShape::OneTick,
                            ValidityShape::FromNextTick,
                        ] {
                            push_unique(&mut domain.validities, shape);
                        }
                    } else {
                        let now = ticks.min(u64::from(u8::MAX)) as u8;
                        let (_, shape) = validity_of(*validity, now).map_err(at)?;
                        push_unique(&mut domain.validities, shape);
                    }
                } else {
                    push_unique(&mut domain.view_scopes, *view_scope);
                    domain.view_parents = domain.view_parents.max(n);
                }
            }
            EventOp::Adopt { .. } => domain.observe = true,
            EventOp::CallTool {
                reversible,
                support,
                ..
            } => {
                domain.reversible_calls |= *reversible;
                domain.support = domain.support.max(support.len().min(MAX_RECORDS) as u8);
            }
            EventOp::RequestRevocation { .. } | EventOp::ApplyRevocation { .. } => {
                domain.revocations = true
            }
            EventOp::Resolve { .. } => domain.reviews = true,
            EventOp::Read { .. } => domain.reads = true,
            EventOp::EndSession { .. } => domain.sessions = true,
            EventOp::Commit { .. }
            | EventOp::Abort { .. }
            | EventOp::Revalidate { .. }
            | EventOp::Rebuild { .. } => {}
        }
    }
    // What the left-out steps need: their families enabled, the clock room to advance.
    for name in &options.missing {
        match *name {
            "tick" => ticks = 16,
            "request-revocation" | "apply-revocation" => domain.revocations = true,
            "read" => domain.reads = true,
            "end-session" => domain.sessions = true,
            "resolve" => domain.reviews = true,
            "adopt" => domain.observe = true,
            _ => {}
        }
    }
    if ticks > 16 {
        return Err((
            None,
            format!(
                "the run has {ticks} ticks; the model's clock goes to 16 (split the log into runs)"
            ),
        ));
    }
    names.sources = levels(&authorities).map_err(|m| (None, m))?;
    if names.sources.is_empty() {
        // Views are staged with source 0; a run without any write still needs one source.
        names.sources.push(Source {
            name: "(no source)".into(),
            authority: 0.8,
            level: Authority::Mid,
            id: 0,
        });
    }
    for (i, s) in names.sources.iter_mut().enumerate() {
        s.id = i as u8;
    }
    if let Some((fixed, label)) = &options.config {
        let config = fit(&mut names, fixed, label, ticks, performed, options)?;
        return Ok(Inferred {
            names,
            config,
            fixed: Some(label.clone()),
        });
    }
    for (source, confidence, scope) in writes {
        domain.writes.push(WriteShape {
            source: names.source(&source),
            confidence,
            scope,
        });
    }
    if domain.tiers.is_empty() {
        domain.tiers.push(Tier::Medium);
    }
    if domain.isolations.is_empty() {
        domain.isolations.push(Isolation::CommittedRead);
    }
    if domain.stage_kinds.is_empty() {
        domain.stage_kinds.push(Kind::Belief);
    }
    if domain.writes.is_empty() {
        domain.writes.push(WriteShape {
            source: 0,
            confidence: Confidence::High,
            scope: Scope::Shared,
        });
    }
    if domain.view_scopes.is_empty() {
        domain.view_scopes.push(Scope::Shared);
    }
    if domain.validities.is_empty() {
        domain.validities.push(ValidityShape::Open);
    }
    let count = |n: usize| n.clamp(1, u8::MAX as usize) as u8;
    let config = Config {
        preset: "event-log".into(),
        bounds: Bounds {
            agents: count(names.agents.len()),
            records: count(if full { performed } else { created }.min(MAX_RECORDS)),
            ticks: ticks as u8,
            slots: count(names.keys.len()),
            values: count(names.values.len()),
            sources: names.sources.iter().map(|s| s.level).collect(),
        },
        domain,
        variant,
    };
    config
        .validate()
        .map_err(|e| (None, format!("the run does not fit the model: {e}")))?;
    Ok(Inferred {
        names,
        config,
        fixed: None,
    })
}

/// The run under a given configuration (`--preset`, `--domain`): its names must fit the bounds,
/// and each source takes the first unused source id of the configuration with its level.
fn fit(
    names: &mut Names,
    fixed: &Config,
    label: &str,
    ticks: u64,
    performed: usize,
    options: &LogOptions,
) -> Result<Config, (Option<usize>, String)> {
    let b = &fixed.bounds;
    let over = |what: &str, have: usize, bound: u8| {
        (have > bound as usize).then(|| {
            (
                None,
                format!("the run has {have} {what}; the configuration {label} has {bound}"),
            )
        })
    };
    if let Some(e) = over("agents", names.agents.len(), b.agents)
        .or_else(|| over("entity/attribute pairs", names.keys.len(), b.slots))
        .or_else(|| over("values", names.values.len(), b.values))
        .or_else(|| over("records", performed, b.records))
        .or_else(|| {
            (!options.ticks_missing())
                .then(|| over("ticks", ticks as usize, b.ticks))
                .flatten()
        })
    {
        return Err(e);
    }
    let mut used = vec![false; b.sources.len()];
    for s in names.sources.iter_mut() {
        let free = (0..b.sources.len()).find(|&i| !used[i] && b.sources[i] == s.level);
        let Some(i) = free else {
            return Err((
                None,
                format!(
                    "source {} ({} -> {}) has no source of that authority left in the configuration {label}",
                    s.name,
                    s.authority,
                    crate::trace::scenario::serde_name(&s.level)
                ),
            ));
        };
        used[i] = true;
        s.id = i as u8;
    }
    Ok(Config {
        variant: options.variant,
        ..fixed.clone()
    })
}

/// The model's authority level for each source, in order; an error when the run's distinct
/// authorities cannot be mapped keeping their order and the 0.9 threshold.
fn levels(authorities: &[(String, f64)]) -> Result<Vec<Source>, String> {
    let threshold = f64::from(AUTHORITY_THRESHOLD);
    let mut below: Vec<f64> = Vec::new();
    let mut above: Vec<f64> = Vec::new();
    for &(_, a) in authorities {
        let side = if a >= threshold {
            &mut above
        } else {
            &mut below
        };
        if !side.contains(&a) {
            side.push(a);
        }
    }
    below.sort_by(f64::total_cmp);
    if above.len() > 1 || below.len() > 2 {
        return Err(format!(
            "the run's sources have {} distinct authorities below {AUTHORITY_THRESHOLD} and {} at or above it; the model has two levels below and one above (the protocol compares authorities only by order and by the threshold), so this run cannot be represented",
            below.len(),
            above.len()
        ));
    }
    Ok(authorities
        .iter()
        .map(|(name, a)| {
            let level = if *a >= threshold {
                Authority::High
            } else if below.len() == 2 && *a == below[0] {
                Authority::Low
            } else {
                Authority::Mid
            };
            Source {
                name: name.clone(),
                authority: *a,
                level,
                id: 0,
            }
        })
        .collect())
}
