//! The store of one run: its records, transactions and contexts, what an agent may see, and
//! every operation but commit, the cascade and the gate.

use crate::record::{scope_rank, Kind, Life, Rec, Txn};
use crate::Defect;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) struct Store {
    pub(crate) defects: BTreeSet<Defect>,
    pub(crate) recs: Vec<Rec>,
    pub(crate) clock: u64,
    pub(crate) next_seq: u64,
    pub(crate) txns: BTreeMap<String, Txn>,
    pub(crate) contexts: BTreeMap<String, BTreeSet<usize>>,
    pub(crate) authority: BTreeMap<String, f64>,
}

pub(crate) type Refused = &'static str;

impl Store {
    pub(crate) fn on(&self, d: Defect) -> bool {
        self.defects.contains(&d)
    }

    pub(crate) fn authority(&self, r: &Rec) -> f64 {
        r.source
            .as_ref()
            .and_then(|s| self.authority.get(s))
            .copied()
            .unwrap_or(0.8)
    }

    pub(crate) fn context(&self, agent: &str) -> BTreeSet<usize> {
        self.contexts.get(agent).cloned().unwrap_or_default()
    }

    pub(crate) fn serve(&mut self, agent: &str, ids: impl IntoIterator<Item = usize>) {
        self.contexts
            .entry(agent.to_string())
            .or_default()
            .extend(ids);
    }

    /// Records reachable from `id` over `edges`, `id` excluded.
    pub(crate) fn closure(
        &self,
        id: usize,
        edges: impl Fn(&Rec) -> BTreeSet<usize>,
    ) -> BTreeSet<usize> {
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
    pub(crate) fn ancestors(&self, id: usize) -> BTreeSet<usize> {
        self.closure(id, |r| r.parents.clone())
    }

    /// Ancestors for lineage, stability and the gate: declared parents and transcribed records.
    pub(crate) fn lineage(&self, id: usize) -> BTreeSet<usize> {
        self.closure(id, |r| r.parents.union(&r.transcribed).copied().collect())
    }

    /// The content of `roots`: themselves, their parents and implicit provenance, transitively.
    pub(crate) fn content_of(&self, roots: &BTreeSet<usize>) -> BTreeSet<usize> {
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

    pub(crate) fn content(&self, id: usize) -> BTreeSet<usize> {
        self.content_of(&BTreeSet::from([id]))
    }

    /// Visible: in view, and (revision 3.2) the whole content permitted.
    pub(crate) fn visible(&self, agent: &str, id: usize) -> bool {
        self.in_view(agent, id) && self.content_permitted(agent, id)
    }

    /// In the transaction's snapshot (or its own staging) and permitted, the record alone.
    pub(crate) fn in_view(&self, agent: &str, id: usize) -> bool {
        let Some(tx) = self.txns.get(agent) else {
            return false;
        };
        let r = &self.recs[id];
        let own = r.writer.as_deref() == Some(agent);
        (own || tx.snapshot.contains(&id)) && r.permitted_to(agent)
    }

    /// May `agent` see every record of the content of `id`?
    pub(crate) fn content_permitted(&self, agent: &str, id: usize) -> bool {
        self.content(id)
            .iter()
            .all(|&x| self.recs[x].permitted_to(agent))
    }

    pub(crate) fn staged_by(&self, agent: &str) -> Vec<usize> {
        (0..self.recs.len())
            .filter(|&i| self.recs[i].writer.as_deref() == Some(agent))
            .collect()
    }

    pub(crate) fn begin(
        &mut self,
        agent: &str,
        tier: &str,
        isolation: &str,
    ) -> Result<(), Refused> {
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

    pub(crate) fn stage(&mut self, agent: &str, mut rec: Rec) -> Result<(), Refused> {
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

    pub(crate) fn observe(&mut self, mut rec: Rec) -> Result<(), Refused> {
        rec.life = Life::Raw;
        rec.from = self.clock;
        rec.until = None;
        self.recs.push(rec);
        Ok(())
    }

    /// `id` leaves every open snapshot: a new uncommitted version.
    pub(crate) fn forget_in_snapshots(&mut self, id: usize) {
        for tx in self.txns.values_mut() {
            tx.snapshot.remove(&id);
        }
    }

    pub(crate) fn adopt(&mut self, agent: &str, id: usize) -> Result<(), Refused> {
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
    pub(crate) fn restage(&mut self, id: usize, no_txn: Refused) -> Result<(), Refused> {
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

    pub(crate) fn revalidate(&mut self, id: usize) -> Result<(), Refused> {
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

    pub(crate) fn rebuild(&mut self, id: usize) -> Result<(), Refused> {
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

    pub(crate) fn request_revocation(&mut self, id: usize) -> Result<(), Refused> {
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

    pub(crate) fn apply_revocation(&mut self, id: usize) -> Result<(), Refused> {
        if !self.recs[id].pending {
            return Err("enable.apply.not-pending");
        }
        self.retract(id, "revocation");
        Ok(())
    }

    pub(crate) fn read(&mut self, agent: &str, id: usize) -> Result<(), Refused> {
        if !self.txns.contains_key(agent) {
            return Err("enable.read.no-txn");
        }
        if !self.in_view(agent, id) {
            return Err("enable.read.not-visible");
        }
        if !self.content_permitted(agent, id) {
            return Err("enable.read.content-not-permitted");
        }
        if self.recs[id].kind.is_action() {
            return Err("enable.read.action");
        }
        self.serve(agent, [id]);
        Ok(())
    }

    pub(crate) fn end_session(&mut self, agent: &str) -> Result<(), Refused> {
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
    pub(crate) fn outcome_of(&self, r: &Rec) -> Value {
        let mut o = Map::new();
        o.insert("state".into(), json!(r.life.name()));
        o.insert("reason".into(), r.reason.map_or(Value::Null, |x| json!(x)));
        if r.kind.is_action() {
            o.insert("effect".into(), r.effect.map_or(Value::Null, |x| json!(x)));
        }
        o.insert("pending_revocation".into(), json!(r.pending));
        Value::Object(o)
    }

    /// The belief an `observe` or `stage` event writes (content, evidence, scope), valid from
    /// now for ever; the source's authority learnt if the event gives it.
    pub(crate) fn belief_of(&mut self, e: &Map<String, Value>) -> Result<Rec, String> {
        let text = |k: &str| -> Result<String, String> {
            e.get(k)
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| format!("an event without \"{k}\""))
        };
        let source = text("source")?;
        if let Some(a) = e.get("authority").and_then(Value::as_f64) {
            self.authority.entry(source.clone()).or_insert(a);
        }
        let mut rec = Rec::new(text("record")?, Kind::Belief, self.clock);
        rec.key = Some((text("entity")?, text("attribute")?));
        rec.value = Some(e.get("value").map(Value::to_string).unwrap_or_default());
        rec.source = Some(source);
        rec.confidence = e.get("confidence").and_then(Value::as_f64).unwrap_or(0.0);
        rec.scope = scope_rank(&text("scope")?);
        Ok(rec)
    }

    /// Performs one event; the error is a refusal reason.
    pub(crate) fn perform(
        &mut self,
        e: &Map<String, Value>,
    ) -> Result<Result<(), Refused>, String> {
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
                let mut rec = if kind == Kind::Belief {
                    let mut rec = self.belief_of(e)?;
                    if let Some(v) = e.get("validity") {
                        rec.from = v["from"].as_u64().unwrap_or(self.clock);
                        rec.until = v["until"].as_u64();
                    }
                    rec
                } else {
                    let mut rec = Rec::new(text("record")?, kind, self.clock);
                    rec.scope = scope_rank(&text("scope")?);
                    rec
                };
                rec.parents = set_of(self, "parents")?;
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
                let mut rec = self.belief_of(e)?;
                rec.owner = text("agent")?;
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
