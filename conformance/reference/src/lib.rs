//! # memtx-reference: a small reference implementation of MemTX that logs what it does
//!
//! An implementation of the protocol of `docs/protocol.md`, written as an agent-memory service
//! would be (records with names, agents with names, real-valued authority and confidence), that
//! does **not** depend on `memtx-model`: it shares no code with the model memtx checks, so a
//! log it writes that `memtx validate-log` accepts is evidence that the two agree, and each of
//! its switchable [`Defect`]s is a defect a real service could have.
//!
//! It runs a *script*: an event log (`docs/event-log.md`) whose events have no outcomes (any
//! outcome given is ignored). It performs each event (or refuses it) and writes the log with
//! the outcome it decided: whether it refused and why, and every record the event created or
//! changed (`"all_changes": true`). [`run_script`] is the whole interface.
//!
//! Scope: every operation of the protocol (`tick`, `observe`, `begin`, `stage` of beliefs and
//! views, `adopt`, `commit`, `abort`, `call-tool`, `request-revocation`, `apply-revocation`,
//! `revalidate`, `rebuild`, `read`, `end-session`, `resolve`), any number of agents. An event of
//! another kind is logged refused.

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A deliberate defect, switched on by name: one per pipeline check, the gate and the cascade.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Defect {
    /// Check 1 skipped: a belief without evidence commits.
    NoEvidenceCheck,
    /// Check 2 skipped: an expired belief commits.
    NoValidityCheck,
    /// Check 3, in part: a rival committed after the snapshot does not abort a write.
    NoStaleWriteCheck,
    /// The lineage part of check 4 skipped: a record over a revoked or uncommitted parent commits.
    NoLineageCheck,
    /// Permission inheritance skipped: a Shared record over Private content commits.
    NoPermissionCheck,
    /// Dependency stability skipped: a record over a parent pending revocation commits.
    NoStabilityCheck,
    /// The gate's condition 1 skipped: an irreversible call runs while a record is in flight.
    GateIgnoresInFlight,
    /// The cascade stops at the retracted record: its descendants stay as they were.
    NoCascade,
}

impl Defect {
    /// Every defect.
    pub const ALL: [Defect; 8] = [
        Defect::NoEvidenceCheck,
        Defect::NoValidityCheck,
        Defect::NoStaleWriteCheck,
        Defect::NoLineageCheck,
        Defect::NoPermissionCheck,
        Defect::NoStabilityCheck,
        Defect::GateIgnoresInFlight,
        Defect::NoCascade,
    ];

    /// Its name (`no-evidence-check`).
    pub fn name(self) -> &'static str {
        match self {
            Defect::NoEvidenceCheck => "no-evidence-check",
            Defect::NoValidityCheck => "no-validity-check",
            Defect::NoStaleWriteCheck => "no-stale-write-check",
            Defect::NoLineageCheck => "no-lineage-check",
            Defect::NoPermissionCheck => "no-permission-check",
            Defect::NoStabilityCheck => "no-stability-check",
            Defect::GateIgnoresInFlight => "gate-ignores-in-flight",
            Defect::NoCascade => "no-cascade",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Belief,
    Summary,
    Profile,
    Reversible,
    Irreversible,
}

impl Kind {
    fn is_view(self) -> bool {
        matches!(self, Kind::Summary | Kind::Profile)
    }
    fn is_action(self) -> bool {
        matches!(self, Kind::Reversible | Kind::Irreversible)
    }
}

/// Lifecycle states, in the log's spelling; the main path in rank order first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    Raw,
    Tentative,
    Committed,
    ActionSafe,
    Quarantined,
    Superseded,
    Revoked,
}

impl Life {
    fn name(self) -> &'static str {
        match self {
            Life::Raw => "raw",
            Life::Tentative => "tentative",
            Life::Committed => "committed",
            Life::ActionSafe => "action-safe",
            Life::Quarantined => "quarantined",
            Life::Superseded => "superseded",
            Life::Revoked => "revoked",
        }
    }
    /// Rank on the main path (raw 0, tentative 1, validated 2, committed 3, action-safe 4).
    fn rank(self) -> Option<u8> {
        match self {
            Life::Raw => Some(0),
            Life::Tentative => Some(1),
            Life::Committed => Some(3),
            Life::ActionSafe => Some(4),
            _ => None,
        }
    }
    fn in_force(self) -> bool {
        matches!(self, Life::Committed | Life::ActionSafe)
    }
    fn active(self) -> bool {
        !matches!(self, Life::Quarantined | Life::Superseded | Life::Revoked)
    }
}

/// Scopes, narrowest first.
fn scope_rank(s: &str) -> u8 {
    match s {
        "private" => 0,
        "shared" => 1,
        _ => 2,
    }
}

#[derive(Clone, Debug)]
struct Rec {
    name: String,
    kind: Kind,
    key: Option<(String, String)>,
    value: Option<String>,
    source: Option<String>,
    confidence: f64,
    owner: String,
    scope: u8,
    parents: BTreeSet<usize>,
    from: u64,
    until: Option<u64>,
    life: Life,
    reason: Option<&'static str>,
    effect: Option<&'static str>,
    pending: bool,
    /// The agent whose open transaction staged it.
    writer: Option<String>,
    /// Its commit sequence number.
    seq: Option<u64>,
    /// What its writer held when it was staged (its context).
    implicit: BTreeSet<usize>,
    /// The records of that context it transcribes (same key and value, another transaction).
    transcribed: BTreeSet<usize>,
    /// The commit sequence number as of which what it asserts was observed.
    observed: Option<u64>,
    /// While in review: the snapshot its reviewer judges it against.
    review_seq: Option<u64>,
}

impl Rec {
    fn valid_at(&self, t: u64) -> bool {
        self.from <= t && self.until.is_none_or(|u| t < u)
    }
    fn overlaps(&self, o: &Rec) -> bool {
        self.until.is_none_or(|u| o.from < u) && o.until.is_none_or(|u| self.from < u)
    }
    fn permitted_to(&self, agent: &str) -> bool {
        self.scope != 0 || self.owner == agent
    }
}

#[derive(Clone, Debug)]
struct Txn {
    external: bool,
    snapshot: BTreeSet<usize>,
    snapshot_seq: u64,
}

/// What the pipeline decides for one record.
enum Verdict {
    Pass {
        outranked: Vec<usize>,
        corrected: Vec<usize>,
    },
    Quarantine(&'static str),
    Abort(&'static str),
}

/// The store of one run.
struct Store {
    defects: BTreeSet<Defect>,
    recs: Vec<Rec>,
    clock: u64,
    next_seq: u64,
    txns: BTreeMap<String, Txn>,
    contexts: BTreeMap<String, BTreeSet<usize>>,
    authority: BTreeMap<String, f64>,
}

type Refused = &'static str;

impl Store {
    fn on(&self, d: Defect) -> bool {
        self.defects.contains(&d)
    }

    fn authority(&self, r: &Rec) -> f64 {
        r.source
            .as_ref()
            .and_then(|s| self.authority.get(s))
            .copied()
            .unwrap_or(0.8)
    }

    fn context(&self, agent: &str) -> BTreeSet<usize> {
        self.contexts.get(agent).cloned().unwrap_or_default()
    }

    fn serve(&mut self, agent: &str, ids: impl IntoIterator<Item = usize>) {
        self.contexts
            .entry(agent.to_string())
            .or_default()
            .extend(ids);
    }

    /// Records reachable from `id` over `edges`, `id` excluded.
    fn closure(&self, id: usize, edges: impl Fn(&Rec) -> BTreeSet<usize>) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<usize> = edges(&self.recs[id]).into_iter().collect();
        while let Some(p) = todo.pop() {
            if p != id && out.insert(p) {
                todo.extend(edges(&self.recs[p]));
            }
        }
        out
    }

    /// Declared ancestors.
    fn ancestors(&self, id: usize) -> BTreeSet<usize> {
        self.closure(id, |r| r.parents.clone())
    }

    /// Ancestors for lineage, stability and the gate: declared parents and transcribed records.
    fn lineage(&self, id: usize) -> BTreeSet<usize> {
        self.closure(id, |r| r.parents.union(&r.transcribed).copied().collect())
    }

    /// The content of `roots`: themselves, their parents and implicit provenance, transitively.
    fn content_of(&self, roots: &BTreeSet<usize>) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<usize> = roots.iter().copied().collect();
        while let Some(x) = todo.pop() {
            if out.insert(x) {
                let r = &self.recs[x];
                todo.extend(r.parents.iter().chain(r.implicit.iter()));
            }
        }
        out
    }

    fn content(&self, id: usize) -> BTreeSet<usize> {
        self.content_of(&BTreeSet::from([id]))
    }

    fn visible(&self, agent: &str, id: usize) -> bool {
        let Some(tx) = self.txns.get(agent) else {
            return false;
        };
        let r = &self.recs[id];
        let own = r.writer.as_deref() == Some(agent);
        (own || tx.snapshot.contains(&id))
            && r.permitted_to(agent)
            && self
                .content(id)
                .iter()
                .all(|&x| self.recs[x].permitted_to(agent))
    }

    fn staged_by(&self, agent: &str) -> Vec<usize> {
        (0..self.recs.len())
            .filter(|&i| self.recs[i].writer.as_deref() == Some(agent))
            .collect()
    }

    fn begin(&mut self, agent: &str, tier: &str, isolation: &str) -> Result<(), Refused> {
        if self.txns.contains_key(agent) {
            return Err("enable.begin.txn-open");
        }
        let external = tier == "external-action";
        let level = if external {
            4
        } else {
            match isolation {
                "raw-read" => 0,
                "tentative-read" => 1,
                "validated-read" => 2,
                "committed-read" => 3,
                _ => 4,
            }
        };
        let snapshot = (0..self.recs.len())
            .filter(|&i| self.recs[i].life.rank().is_some_and(|r| r >= level))
            .collect();
        self.txns.insert(
            agent.to_string(),
            Txn {
                external,
                snapshot,
                snapshot_seq: self.next_seq,
            },
        );
        Ok(())
    }

    fn stage(&mut self, agent: &str, mut rec: Rec) -> Result<(), Refused> {
        let Some(tx) = self.txns.get(agent).cloned() else {
            return Err("enable.stage.no-txn");
        };
        if rec.kind.is_view() && rec.parents.is_empty() {
            return Err("enable.stage.view-parent");
        }
        if !rec.parents.iter().all(|&p| self.visible(agent, p)) {
            return Err("enable.stage.parent-visible");
        }
        if rec
            .parents
            .iter()
            .any(|&p| self.recs[p].life == Life::Revoked)
        {
            return Err("enable.stage.parent-revoked");
        }
        if rec.parents.iter().any(|&p| self.recs[p].kind.is_action()) {
            return Err("enable.stage.parent-action");
        }
        let context = self.context(agent);
        rec.implicit = context.clone();
        if rec.kind == Kind::Belief {
            rec.transcribed = context
                .iter()
                .copied()
                .filter(|&x| {
                    let o = &self.recs[x];
                    o.writer.as_deref() != Some(agent)
                        && o.kind == Kind::Belief
                        && o.key == rec.key
                        && o.value == rec.value
                })
                .collect();
            // The observation: the freshest of its content's records asserting the same over
            // a validity covering its own, else the snapshot.
            let roots: BTreeSet<usize> = rec.parents.union(&rec.implicit).copied().collect();
            let freshest = self
                .content_of(&roots)
                .iter()
                .map(|&x| &self.recs[x])
                .filter(|x| {
                    x.kind == Kind::Belief
                        && x.key == rec.key
                        && x.value == rec.value
                        && x.from <= rec.from
                        && match (rec.until, x.until) {
                            (_, None) => true,
                            (None, Some(_)) => false,
                            (Some(a), Some(b)) => a <= b,
                        }
                })
                .filter_map(|x| x.observed)
                .max();
            rec.observed = Some(freshest.unwrap_or(tx.snapshot_seq));
        }
        rec.writer = Some(agent.to_string());
        rec.owner = agent.to_string();
        rec.life = Life::Tentative;
        let id = self.recs.len();
        let parents = rec.parents.clone();
        self.recs.push(rec);
        self.serve(agent, parents.into_iter().chain([id]));
        Ok(())
    }

    /// The committed beliefs contradicting belief `id` (same key, other value, overlapping
    /// validity): those its writer may see, and those it may not.
    fn contradicting(&self, id: usize) -> (Vec<usize>, Vec<usize>) {
        let r = &self.recs[id];
        let (mut seen, mut hidden) = (Vec::new(), Vec::new());
        if r.kind != Kind::Belief {
            return (seen, hidden);
        }
        let writer = r.writer.clone().unwrap_or_else(|| r.owner.clone());
        for (x, o) in self.recs.iter().enumerate() {
            if x == id
                || o.kind != Kind::Belief
                || !o.life.in_force()
                || o.key != r.key
                || o.value == r.value
                || !o.overlaps(r)
            {
                continue;
            }
            if o.permitted_to(&writer) {
                seen.push(x);
            } else {
                hidden.push(x);
            }
        }
        (seen, hidden)
    }

    /// Permission inheritance: scope rank over declared ancestors, then who may read the
    /// content. The reason it fails for, if it does.
    fn permission_fails(&self, id: usize) -> Option<&'static str> {
        let r = &self.recs[id];
        let narrowest = self.ancestors(id).iter().map(|&p| self.recs[p].scope).min();
        if narrowest.is_some_and(|n| r.scope > n) {
            return Some("permission");
        }
        let readable = self.content(id).iter().all(|&x| {
            let o = &self.recs[x];
            o.scope != 0 || (r.scope == 0 && o.owner == r.owner)
        });
        (!readable).then_some("content-permission")
    }

    fn pipeline(&self, id: usize, snapshot_seq: u64, commit_start: u64) -> Verdict {
        let r = &self.recs[id];
        // 1. Evidence.
        if r.kind == Kind::Belief
            && !self.on(Defect::NoEvidenceCheck)
            && !(r.confidence >= 0.6 || self.authority(r) >= 0.9)
        {
            return Verdict::Quarantine("evidence");
        }
        // 2. Validity.
        if !self.on(Defect::NoValidityCheck) && !r.valid_at(self.clock) {
            return Verdict::Quarantine("expired");
        }
        // 3. Semantic conflict, ranked over every rival the writer may see.
        let mine = self.authority(r);
        let observed = r.observed.map_or(snapshot_seq, |o| o.min(snapshot_seq));
        let (mut stale, mut stale_content, mut higher, mut review) = (false, false, false, false);
        let (mut outranked, mut corrected) = (Vec::new(), Vec::new());
        for x in self.contradicting(id).0 {
            let o = &self.recs[x];
            let seq = o.seq.unwrap_or(0);
            let theirs = self.authority(o);
            if seq >= snapshot_seq && seq < commit_start && !self.on(Defect::NoStaleWriteCheck) {
                stale = true;
            } else if seq >= observed && seq < commit_start && !self.on(Defect::NoStaleWriteCheck) {
                stale_content = true;
            } else if theirs > mine {
                higher = true;
            } else if theirs == mine && o.source != r.source {
                review = true;
            } else if theirs < mine {
                outranked.push(x);
            } else {
                corrected.push(x);
            }
        }
        if stale {
            return Verdict::Abort("stale-write");
        }
        if stale_content {
            return Verdict::Abort("stale-content");
        }
        if higher {
            return Verdict::Abort("outranked");
        }
        if review {
            return Verdict::Quarantine("review");
        }
        if outranked
            .iter()
            .chain(&corrected)
            .any(|&x| self.recs[x].scope > r.scope)
        {
            return Verdict::Quarantine("scope-review");
        }
        // 4. Lineage over committed parents (declared and transcribed).
        let lineage = self.lineage(id);
        if !self.on(Defect::NoLineageCheck) {
            if lineage.iter().any(|&p| self.recs[p].life == Life::Revoked) {
                return Verdict::Abort("revoked-parent");
            }
            if lineage.iter().any(|&p| !self.recs[p].life.active()) {
                return Verdict::Quarantine("inactive-parent");
            }
            if lineage.iter().any(|&p| !self.recs[p].life.in_force()) {
                return Verdict::Quarantine("uncommitted-parent");
            }
        }
        if !self.on(Defect::NoPermissionCheck) {
            if let Some(reason) = self.permission_fails(id) {
                return Verdict::Quarantine(reason);
            }
        }
        // Dependency stability.
        if !self.on(Defect::NoStabilityCheck) && lineage.iter().any(|&p| self.recs[p].pending) {
            return Verdict::Quarantine("unstable-dependency");
        }
        Verdict::Pass {
            outranked,
            corrected,
        }
    }

    fn commit(&mut self, agent: &str) -> Result<(), Refused> {
        let Some(tx) = self.txns.get(agent).cloned() else {
            return Err("enable.commit.no-txn");
        };
        let commit_start = self.next_seq;
        for id in self.staged_by(agent) {
            if self.recs[id].life != Life::Tentative {
                continue;
            }
            match self.pipeline(id, tx.snapshot_seq, commit_start) {
                Verdict::Pass {
                    outranked,
                    corrected,
                } => {
                    let narrower = self.narrower_hidden(id);
                    for x in outranked {
                        self.recs[x].life = Life::Superseded;
                        self.recs[x].reason = Some("superseded-by-authority");
                    }
                    for x in corrected {
                        self.recs[x].life = Life::Superseded;
                        self.recs[x].reason = Some("superseded-by-correction");
                    }
                    self.promote(id, tx.external, narrower);
                }
                Verdict::Quarantine(reason) => {
                    self.recs[id].life = Life::Quarantined;
                    self.recs[id].reason = Some(reason);
                    if reason == "review" || reason == "scope-review" {
                        self.recs[id].review_seq = Some(tx.snapshot_seq);
                    }
                }
                Verdict::Abort(reason) => self.retract(id, reason),
            }
        }
        self.close(agent);
        Ok(())
    }

    /// `id` commits (ActionSafe when `external`), taking the next commit sequence number; the
    /// `narrower` rivals its writer may not see leave force for their owners' review.
    fn promote(&mut self, id: usize, external: bool, narrower: Vec<usize>) {
        let r = &mut self.recs[id];
        r.life = if external {
            Life::ActionSafe
        } else {
            Life::Committed
        };
        r.seq = Some(self.next_seq);
        r.reason = None;
        r.review_seq = None;
        self.next_seq += 1;
        for x in narrower {
            let r = &mut self.recs[x];
            r.life = Life::Quarantined;
            r.reason = Some("scope-review");
            r.review_seq = r.seq;
        }
    }

    /// The rivals of `id` its writer may not see and that are narrower than it.
    fn narrower_hidden(&self, id: usize) -> Vec<usize> {
        let scope = self.recs[id].scope;
        self.contradicting(id)
            .1
            .into_iter()
            .filter(|&x| self.recs[x].scope < scope)
            .collect()
    }

    fn observe(&mut self, mut rec: Rec) -> Result<(), Refused> {
        rec.life = Life::Raw;
        rec.from = self.clock;
        rec.until = None;
        self.recs.push(rec);
        Ok(())
    }

    /// `id` leaves every open snapshot: a new uncommitted version.
    fn forget_in_snapshots(&mut self, id: usize) {
        for tx in self.txns.values_mut() {
            tx.snapshot.remove(&id);
        }
    }

    fn adopt(&mut self, agent: &str, id: usize) -> Result<(), Refused> {
        let Some(tx) = self.txns.get(agent).cloned() else {
            return Err("enable.adopt.no-txn");
        };
        if self.recs[id].life != Life::Raw {
            return Err("enable.adopt.not-raw");
        }
        if !self.visible(agent, id) {
            return Err("enable.adopt.not-visible");
        }
        let r = &mut self.recs[id];
        r.life = Life::Tentative;
        r.writer = Some(agent.to_string());
        r.observed = Some(tx.snapshot_seq);
        self.forget_in_snapshots(id);
        self.serve(agent, [id]);
        Ok(())
    }

    /// A quarantined record staged again in its owner's open transaction.
    fn restage(&mut self, id: usize, no_txn: Refused) -> Result<(), Refused> {
        let owner = self.recs[id].owner.clone();
        if !self.txns.contains_key(&owner) {
            return Err(no_txn);
        }
        let r = &mut self.recs[id];
        r.life = Life::Tentative;
        r.writer = Some(owner.clone());
        r.reason = None;
        r.review_seq = None;
        self.forget_in_snapshots(id);
        self.serve(&owner, [id]);
        Ok(())
    }

    fn revalidate(&mut self, id: usize) -> Result<(), Refused> {
        let r = &self.recs[id];
        if r.kind != Kind::Belief {
            return Err("enable.revalidate.not-belief");
        }
        if r.life != Life::Quarantined {
            return Err("enable.revalidate.not-quarantined");
        }
        if !self
            .ancestors(id)
            .iter()
            .all(|&a| self.recs[a].life.active())
        {
            return Err("enable.revalidate.ancestor-inactive");
        }
        self.restage(id, "enable.revalidate.no-txn")
    }

    fn rebuild(&mut self, id: usize) -> Result<(), Refused> {
        let v = &self.recs[id];
        if !v.kind.is_view() {
            return Err("enable.rebuild.not-view");
        }
        if v.life != Life::Quarantined {
            return Err("enable.rebuild.not-quarantined");
        }
        let (surviving, dropped): (BTreeSet<usize>, BTreeSet<usize>) =
            v.parents.iter().partition(|&&p| self.recs[p].life.active());
        if surviving.is_empty() {
            return Err("enable.rebuild.no-active-parent");
        }
        self.restage(id, "enable.rebuild.no-txn")?;
        // It keeps its content: what it drops as parents it still carries.
        let v = &mut self.recs[id];
        v.parents = surviving;
        v.implicit.extend(dropped);
        Ok(())
    }

    fn resolve(&mut self, id: usize, keep: bool) -> Result<(), Refused> {
        let r = &self.recs[id];
        if r.life != Life::Quarantined || !matches!(r.reason, Some("review" | "scope-review")) {
            return Err("enable.resolve.not-review");
        }
        if !keep {
            self.retract(id, "review-rejected");
            return Ok(());
        }
        // Keep: the record would pass every other check now, judged against the snapshot it
        // was staged from (or, in scope review, its own commit), and no wider rival stands.
        let lineage = self.lineage(id);
        let rivals = self.contradicting(id).0;
        let staged_from = {
            let seq = r.review_seq.unwrap_or(0);
            r.observed.map_or(seq, |o| o.min(seq))
        };
        let mine = self.authority(r);
        let parts = [
            (r.valid_at(self.clock), "enable.keep.expired"),
            (
                lineage.iter().all(|&a| self.recs[a].life.in_force()),
                "enable.keep.lineage",
            ),
            (
                self.permission_fails(id).is_none(),
                "enable.keep.permission",
            ),
            (
                lineage.iter().all(|&a| !self.recs[a].pending),
                "enable.keep.unstable",
            ),
            (
                rivals.iter().all(|&x| self.recs[x].scope <= r.scope),
                "enable.keep.wider-rival",
            ),
            (
                rivals
                    .iter()
                    .all(|&x| self.recs[x].seq.is_none_or(|s| s < staged_from)),
                "enable.keep.stale",
            ),
            (
                rivals
                    .iter()
                    .all(|&x| self.authority(&self.recs[x]) <= mine),
                "enable.keep.outranked",
            ),
        ];
        if let Some((_, refused)) = parts.iter().find(|(holds, _)| !holds) {
            return Err(refused);
        }
        let narrower = self.narrower_hidden(id);
        for x in rivals {
            self.recs[x].life = Life::Superseded;
            self.recs[x].reason = Some("superseded-by-review");
        }
        // A reviewer's verdict is not an external-action commit.
        self.promote(id, false, narrower);
        Ok(())
    }

    fn close(&mut self, agent: &str) {
        for id in self.staged_by(agent) {
            self.recs[id].writer = None;
        }
        self.txns.remove(agent);
    }

    fn abort(&mut self, agent: &str) -> Result<(), Refused> {
        if !self.txns.contains_key(agent) {
            return Err("enable.abort.no-txn");
        }
        for id in self.staged_by(agent) {
            if self.recs[id].life != Life::Revoked {
                self.retract(id, "aborted");
            }
        }
        self.close(agent);
        Ok(())
    }

    /// Retracts `root` and repairs every descendant by its kind.
    fn retract(&mut self, root: usize, reason: &'static str) {
        // A revoked record has nothing left to revoke: no revocation is pending on it.
        self.recs[root].life = Life::Revoked;
        self.recs[root].pending = false;
        self.recs[root].reason = Some(reason);
        if self.on(Defect::NoCascade) {
            return;
        }
        let mut reached = BTreeSet::from([root]);
        for id in root + 1..self.recs.len() {
            if self.recs[id].parents.is_disjoint(&reached) {
                continue;
            }
            reached.insert(id);
            let r = &mut self.recs[id];
            if r.life == Life::Revoked {
                continue;
            }
            match r.kind {
                Kind::Belief => {
                    r.life = Life::Revoked;
                    r.pending = false;
                    r.reason = Some("cascade");
                }
                Kind::Summary | Kind::Profile => {
                    r.life = Life::Quarantined;
                    r.reason = Some("rebuild");
                }
                Kind::Reversible | Kind::Irreversible => {
                    r.effect = Some(if r.kind == Kind::Reversible {
                        "compensated"
                    } else {
                        "leaked"
                    });
                    r.life = Life::Revoked;
                    r.pending = false;
                    r.reason = Some("cascade");
                }
            }
        }
    }

    fn gate(&self, agent: &str, tx: &Txn, support: &BTreeSet<usize>) -> Result<(), Refused> {
        let in_flight = (0..self.recs.len())
            .any(|i| self.recs[i].life == Life::Tentative && !tx.snapshot.contains(&i));
        if in_flight && !self.on(Defect::GateIgnoresInFlight) {
            return Err("gate.block.in-flight");
        }
        if tx.external {
            let safe: Vec<&Rec> = tx
                .snapshot
                .iter()
                .map(|&i| &self.recs[i])
                .filter(|r| r.life == Life::ActionSafe)
                .collect();
            if safe.is_empty() {
                return Err("gate.block.no-action-safe");
            }
            if !safe.iter().any(|r| r.permitted_to(agent)) {
                return Err("gate.block.no-permitted-action-safe");
            }
            if support
                .iter()
                .any(|&s| self.recs[s].life != Life::ActionSafe)
            {
                return Err("gate.block.support-not-action-safe");
            }
        }
        if support
            .iter()
            .any(|&s| !self.recs[s].life.in_force() || self.recs[s].pending)
        {
            return Err("gate.block.support-not-in-force");
        }
        if support.iter().any(|&s| !self.recs[s].valid_at(self.clock)) {
            return Err("gate.block.support-expired");
        }
        for &s in support {
            if self.lineage(s).iter().any(|&a| self.recs[a].pending) {
                return Err("gate.block.unstable-support");
            }
        }
        for &s in support {
            if self.lineage(s).iter().any(|&a| {
                let r = &self.recs[a];
                !r.life.in_force() || !r.valid_at(self.clock)
            }) {
                return Err("gate.block.ancestor-not-in-force");
            }
        }
        Ok(())
    }

    fn call_tool(
        &mut self,
        agent: &str,
        name: &str,
        reversible: bool,
        support: BTreeSet<usize>,
    ) -> Result<(), Refused> {
        let Some(tx) = self.txns.get(agent).cloned() else {
            return Err("enable.call.no-txn");
        };
        if !support.iter().all(|&s| self.visible(agent, s)) {
            return Err("enable.call.support-visible");
        }
        if support.iter().any(|&s| self.recs[s].kind.is_action()) {
            return Err("enable.call.support-action");
        }
        if reversible {
            if !support.iter().all(|&s| self.recs[s].life.in_force()) {
                return Err("enable.call.reversible-not-in-force");
            }
        } else {
            self.gate(agent, &tx, &support)?;
        }
        self.recs.push(Rec {
            name: name.to_string(),
            kind: if reversible {
                Kind::Reversible
            } else {
                Kind::Irreversible
            },
            key: None,
            value: None,
            source: None,
            confidence: 0.0,
            owner: agent.to_string(),
            scope: 0,
            parents: support.clone(),
            from: self.clock,
            until: None,
            life: if tx.external {
                Life::ActionSafe
            } else {
                Life::Committed
            },
            reason: None,
            effect: Some("executed"),
            pending: false,
            writer: None,
            seq: None,
            implicit: BTreeSet::new(),
            transcribed: BTreeSet::new(),
            observed: None,
            review_seq: None,
        });
        self.serve(agent, support);
        Ok(())
    }

    fn request_revocation(&mut self, id: usize) -> Result<(), Refused> {
        let r = &mut self.recs[id];
        if r.kind.is_action() {
            return Err("enable.request.action");
        }
        if !r.life.in_force() {
            return Err("enable.request.not-committed");
        }
        if r.pending {
            return Err("enable.request.pending");
        }
        r.pending = true;
        Ok(())
    }

    fn apply_revocation(&mut self, id: usize) -> Result<(), Refused> {
        if !self.recs[id].pending {
            return Err("enable.apply.not-pending");
        }
        self.retract(id, "revocation");
        Ok(())
    }

    fn read(&mut self, agent: &str, id: usize) -> Result<(), Refused> {
        if !self.txns.contains_key(agent) {
            return Err("enable.read.no-txn");
        }
        if !self.visible(agent, id) {
            return Err("enable.read.not-visible");
        }
        if self.recs[id].kind.is_action() {
            return Err("enable.read.action");
        }
        self.serve(agent, [id]);
        Ok(())
    }

    fn end_session(&mut self, agent: &str) -> Result<(), Refused> {
        if self.txns.contains_key(agent) {
            return Err("enable.end-session.txn-open");
        }
        if self.context(agent).is_empty() {
            return Err("enable.end-session.empty");
        }
        self.contexts.remove(agent);
        Ok(())
    }

    /// What a record looks like in a log outcome.
    fn outcome_of(&self, r: &Rec) -> Value {
        let mut o = Map::new();
        o.insert("state".into(), json!(r.life.name()));
        o.insert("reason".into(), r.reason.map_or(Value::Null, |x| json!(x)));
        if r.kind.is_action() {
            o.insert("effect".into(), r.effect.map_or(Value::Null, |x| json!(x)));
        }
        o.insert("pending_revocation".into(), json!(r.pending));
        Value::Object(o)
    }

    /// Performs one event; the error is a refusal reason.
    fn perform(&mut self, e: &Map<String, Value>) -> Result<Result<(), Refused>, String> {
        let text = |k: &str| -> Result<String, String> {
            e.get(k)
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| format!("an event without \"{k}\""))
        };
        let id_of = |store: &Store, name: &str| -> Result<usize, String> {
            store
                .recs
                .iter()
                .position(|r| r.name == name)
                .ok_or_else(|| format!("unknown record {name}"))
        };
        let set_of = |store: &Store, k: &str| -> Result<BTreeSet<usize>, String> {
            let mut out = BTreeSet::new();
            for v in e.get(k).and_then(Value::as_array).into_iter().flatten() {
                out.insert(id_of(store, v.as_str().unwrap_or_default())?);
            }
            Ok(out)
        };
        let event = text("event")?;
        Ok(match event.as_str() {
            "tick" => {
                self.clock += 1;
                Ok(())
            }
            "begin" => self.begin(&text("agent")?, &text("tier")?, &text("isolation")?),
            "stage" => {
                let kind = match text("kind")?.as_str() {
                    "belief" => Kind::Belief,
                    "summary" => Kind::Summary,
                    _ => Kind::Profile,
                };
                let belief = kind == Kind::Belief;
                if let (true, Some(source), Some(a)) = (
                    belief,
                    e.get("source").and_then(Value::as_str),
                    e.get("authority").and_then(Value::as_f64),
                ) {
                    self.authority.entry(source.to_string()).or_insert(a);
                }
                let validity = e.get("validity");
                let from = validity
                    .and_then(|v| v["from"].as_u64())
                    .unwrap_or(self.clock);
                let until = validity.and_then(|v| v["until"].as_u64());
                let rec = Rec {
                    name: text("record")?,
                    kind,
                    key: belief
                        .then(|| Ok::<_, String>((text("entity")?, text("attribute")?)))
                        .transpose()?,
                    value: belief.then(|| e.get("value").map(Value::to_string).unwrap_or_default()),
                    source: belief.then(|| text("source")).transpose()?,
                    confidence: if belief {
                        e.get("confidence").and_then(Value::as_f64).unwrap_or(0.0)
                    } else {
                        1.0
                    },
                    owner: String::new(),
                    scope: scope_rank(&text("scope")?),
                    parents: set_of(self, "parents")?,
                    from: if belief { from } else { self.clock },
                    until: if belief { until } else { None },
                    life: Life::Tentative,
                    reason: None,
                    effect: None,
                    pending: false,
                    writer: None,
                    seq: None,
                    implicit: BTreeSet::new(),
                    transcribed: BTreeSet::new(),
                    observed: None,
                    review_seq: None,
                };
                self.stage(&text("agent")?, rec)
            }
            "commit" => self.commit(&text("agent")?),
            "abort" => self.abort(&text("agent")?),
            "call-tool" => {
                let support = set_of(self, "support")?;
                let reversible = e
                    .get("reversible")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                self.call_tool(&text("agent")?, &text("record")?, reversible, support)
            }
            "request-revocation" => {
                let id = id_of(self, &text("record")?)?;
                self.request_revocation(id)
            }
            "apply-revocation" => {
                let id = id_of(self, &text("record")?)?;
                self.apply_revocation(id)
            }
            "read" => {
                let id = id_of(self, &text("record")?)?;
                self.read(&text("agent")?, id)
            }
            "end-session" => self.end_session(&text("agent")?),
            "observe" => {
                if let (Some(source), Some(a)) = (
                    e.get("source").and_then(Value::as_str),
                    e.get("authority").and_then(Value::as_f64),
                ) {
                    self.authority.entry(source.to_string()).or_insert(a);
                }
                let rec = Rec {
                    name: text("record")?,
                    kind: Kind::Belief,
                    key: Some((text("entity")?, text("attribute")?)),
                    value: Some(e.get("value").map(Value::to_string).unwrap_or_default()),
                    source: Some(text("source")?),
                    confidence: e.get("confidence").and_then(Value::as_f64).unwrap_or(0.0),
                    owner: text("agent")?,
                    scope: scope_rank(&text("scope")?),
                    parents: BTreeSet::new(),
                    from: self.clock,
                    until: None,
                    life: Life::Raw,
                    reason: None,
                    effect: None,
                    pending: false,
                    writer: None,
                    seq: None,
                    implicit: BTreeSet::new(),
                    transcribed: BTreeSet::new(),
                    observed: None,
                    review_seq: None,
                };
                self.observe(rec)
            }
            "adopt" => {
                let id = id_of(self, &text("record")?)?;
                self.adopt(&text("agent")?, id)
            }
            "revalidate" => {
                let id = id_of(self, &text("record")?)?;
                self.revalidate(id)
            }
            "rebuild" => {
                let id = id_of(self, &text("record")?)?;
                self.rebuild(id)
            }
            "resolve" => {
                let id = id_of(self, &text("record")?)?;
                let keep = e.get("keep").and_then(Value::as_bool).unwrap_or(false);
                self.resolve(id, keep)
            }
            _ => Err("unsupported"),
        })
    }
}

/// Runs `script` (an event log; outcomes ignored) with the `defects` switched on; the log with
/// this implementation's outcomes, one line per event. The error names the line of a script
/// it cannot read.
pub fn run_script(script: &str, defects: &[Defect]) -> Result<String, String> {
    let mut out = String::new();
    let mut store: Option<Store> = None;
    for (n, line) in script.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| format!("line {}: {m}", n + 1);
        let value: Value = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
        let Value::Object(mut e) = value else {
            return Err(at("not an object".into()));
        };
        if e.contains_key("format") {
            let authority = e
                .get("sources")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(0.8)))
                        .collect()
                })
                .unwrap_or_default();
            store = Some(Store {
                defects: defects.iter().copied().collect(),
                recs: Vec::new(),
                clock: 0,
                next_seq: 0,
                txns: BTreeMap::new(),
                contexts: BTreeMap::new(),
                authority,
            });
            out.push_str(line.trim());
            out.push('\n');
            continue;
        }
        let s = store
            .as_mut()
            .ok_or_else(|| at("an event before a header".into()))?;
        e.remove("outcome");
        let before: Vec<Value> = s.recs.iter().map(|r| s.outcome_of(r)).collect();
        match s.perform(&e).map_err(at)? {
            Err(reason) => {
                // An operation this implementation does not support: refused, no reason.
                let said = if reason == "unsupported" {
                    json!(true)
                } else {
                    json!(reason)
                };
                e.insert("outcome".into(), json!({ "refused": said }));
            }
            Ok(()) => {
                let mut records = Map::new();
                for (i, r) in s.recs.iter().enumerate() {
                    let now = s.outcome_of(r);
                    if before.get(i) != Some(&now) {
                        records.insert(r.name.clone(), now);
                    }
                }
                e.insert(
                    "outcome".into(),
                    json!({ "records": records, "all_changes": true }),
                );
            }
        }
        out.push_str(&Value::Object(e).to_string());
        out.push('\n');
    }
    Ok(out)
}
