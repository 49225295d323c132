//! The commit pipeline, commit and abort, the review verdict, and the typed cascade.

use crate::record::{Kind, Life};
use crate::store::{Refused, Store};
use crate::Defect;
use std::collections::BTreeSet;

/// What the pipeline decides for one record.
pub(crate) enum Verdict {
    Pass {
        outranked: Vec<usize>,
        corrected: Vec<usize>,
    },
    Quarantine(&'static str),
    Abort(&'static str),
}

/// The store of one run.
impl Store {
    /// The committed beliefs contradicting belief `id` (same key, other value, overlapping
    /// validity): those its writer may see, and those it may not.
    pub(crate) fn contradicting(&self, id: usize) -> (Vec<usize>, Vec<usize>) {
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
    pub(crate) fn permission_fails(&self, id: usize) -> Option<&'static str> {
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

    pub(crate) fn pipeline(&self, id: usize, snapshot_seq: u64, commit_start: u64) -> Verdict {
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

    pub(crate) fn commit(&mut self, agent: &str) -> Result<(), Refused> {
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
    pub(crate) fn promote(&mut self, id: usize, external: bool, narrower: Vec<usize>) {
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
    pub(crate) fn narrower_hidden(&self, id: usize) -> Vec<usize> {
        let scope = self.recs[id].scope;
        self.contradicting(id)
            .1
            .into_iter()
            .filter(|&x| self.recs[x].scope < scope)
            .collect()
    }

    pub(crate) fn resolve(&mut self, id: usize, keep: bool) -> Result<(), Refused> {
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

    pub(crate) fn close(&mut self, agent: &str) {
        for id in self.staged_by(agent) {
            self.recs[id].writer = None;
        }
        self.txns.remove(agent);
    }

    pub(crate) fn abort(&mut self, agent: &str) -> Result<(), Refused> {
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
    pub(crate) fn retract(&mut self, root: usize, reason: &'static str) {
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
}
