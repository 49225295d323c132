//! Tool calls and the action gate.

use crate::record::{Kind, Life, Rec, Txn};
use crate::store::{Refused, Store};
use crate::Defect;
use std::collections::BTreeSet;

impl Store {
    pub(crate) fn gate(
        &self,
        agent: &str,
        tx: &Txn,
        support: &BTreeSet<usize>,
    ) -> Result<(), Refused> {
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

    pub(crate) fn call_tool(
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
        let kind = if reversible {
            Kind::Reversible
        } else {
            Kind::Irreversible
        };
        let mut rec = Rec::new(name.to_string(), kind, self.clock);
        rec.owner = agent.to_string();
        rec.parents = support.clone();
        rec.life = if tx.external {
            Life::ActionSafe
        } else {
            Life::Committed
        };
        rec.effect = Some("executed");
        self.recs.push(rec);
        self.serve(agent, support);
        Ok(())
    }
}
