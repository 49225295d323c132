//! Symmetry: the renamings that leave the protocol unchanged, and the canonical representative
//! of a state under them.
//!
//! Symmetry reduction explores one state per *orbit*: two states that differ only by renaming
//! interchangeable things are explored once. A renaming is a symmetry when it commutes with
//! the protocol (renaming a state and then taking a step gives the same states as taking the
//! step and then renaming) and every property judges a renamed state as it judges the
//! original. Three kinds of names qualify, each for a reason the model guarantees or the
//! domain shows:
//!
//! * **Agents** are always interchangeable: every agent has the same permissions, and the
//!   enumerated operations are the same for each (docs/protocol.md §1).
//! * **Values** are interchangeable within each slot: the protocol only ever compares two
//!   values of one slot for equality (a conflict is "same slot, different value"), and the
//!   domain stages and observes every value of every slot with the same write shapes. Each slot
//!   may be renamed on its own. Only beliefs carry a value and a source: views and tool
//!   calls hold fixed placeholders there (slot 0, value 0, source 0), which are never renamed
//!   (renaming them would make a state no step can reach, whose successors are not the
//!   renamed successors: the reduction would then lose states).
//! * **Sources** are interchangeable when they have the same authority *and* the domain writes
//!   through them alike: the same (confidence, scope) write shapes, as a multiset. This is
//!   detected from the domain ([`Symmetry::of`]), never assumed: in `paper`, `src0` and `src1`
//!   are both mid authority but `src1` writes only private records, so they are not.
//!
//! # The representative
//!
//! [`Symmetry::canonical`] is the least state, in `State`'s order, among the states obtained
//! by every agent permutation followed by a *relabelling by first appearance*: within each
//! slot, values are renamed 0, 1, 2, … in the order in which the beliefs (in record order)
//! first use them; within each class of interchangeable sources, sources are renamed to the
//! class's members in ascending order, in the order of first use. Two states of one orbit give
//! the same set of candidates (renaming agents does not touch values or sources, and a
//! relabelling by first appearance forgets any renaming of values or sources), so they get the
//! same representative; and the representative is in the orbit. That costs `agents!`
//! relabellings per state instead of the group's full order (`agents! · (values!)^slots · …`).
//! `checker/tests/symmetry.rs` checks the reduced counts against orbits counted by brute force
//! over the whole group (one agent, one slot: what a state space small enough to count
//! allows); `model/tests/symmetry.rs` judges the representative itself against the whole group
//! of three agents, two slots of three values and a source class (432 renamings).

use crate::config::Config;
use crate::evidence::{Authority, Confidence};
use crate::record::{Kind, Scope};
use crate::state::State;

/// The symmetries a configuration allows; see the [module documentation](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symmetry {
    /// Agents `0..agents` are interchangeable.
    pub agents: u8,
    /// Values `0..values` are interchangeable within each of `slots` slots (1 value: none).
    pub values: u8,
    /// Slots whose values are renamed.
    pub slots: u8,
    /// Classes of interchangeable sources, each of at least two, members ascending.
    pub source_classes: Vec<Vec<u8>>,
}

impl Symmetry {
    /// No renaming at all: the trivial group.
    pub fn none() -> Symmetry {
        Symmetry {
            agents: 1,
            values: 1,
            slots: 0,
            source_classes: Vec::new(),
        }
    }

    /// Agents only: the reduction `memtx` applied before values and sources were detected.
    pub fn agents_only(cfg: &Config) -> Symmetry {
        Symmetry {
            agents: cfg.bounds.agents,
            values: 1,
            slots: cfg.bounds.slots,
            source_classes: Vec::new(),
        }
    }

    /// Every symmetry the configuration allows: agents, values within each slot, and the
    /// classes of sources with equal authority and identical write shapes.
    pub fn of(cfg: &Config) -> Symmetry {
        // Sources with the same class key (authority, sorted write shapes) are interchangeable.
        type ClassKey = (Authority, Vec<(Confidence, Scope)>);
        let mut classes: Vec<(ClassKey, Vec<u8>)> = Vec::new();
        for (source, &authority) in cfg.bounds.sources.iter().enumerate() {
            let source = source as u8;
            let mut shapes: Vec<(Confidence, Scope)> = cfg
                .domain
                .writes
                .iter()
                .filter(|w| w.source == source)
                .map(|w| (w.confidence, w.scope))
                .collect();
            shapes.sort();
            let key = (authority, shapes);
            match classes.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(source),
                None => classes.push((key, vec![source])),
            }
        }
        Symmetry {
            agents: cfg.bounds.agents,
            values: cfg.bounds.values,
            slots: cfg.bounds.slots,
            source_classes: classes
                .into_iter()
                .map(|(_, members)| members)
                .filter(|members| members.len() > 1)
                .collect(),
        }
    }

    /// The order of the symmetry group: how many renamings it holds (at most `u64::MAX`).
    pub fn order(&self) -> u64 {
        let fact = |n: u64| (1..=n).fold(1u64, |a, b| a.saturating_mul(b));
        let mut order = fact(u64::from(self.agents));
        for _ in 0..self.slots {
            order = order.saturating_mul(fact(u64::from(self.values)));
        }
        for class in &self.source_classes {
            order = order.saturating_mul(fact(class.len() as u64));
        }
        order
    }

    /// What is renamed, in words, e.g. `agents (2), values within each of 1 slot (2),
    /// sources {src0, src1}: 4 renamings`.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("agents ({})", self.agents)];
        if self.values > 1 {
            parts.push(format!(
                "values within each of {} slot(s) ({})",
                self.slots, self.values
            ));
        }
        for class in &self.source_classes {
            let names: Vec<String> = class.iter().map(|s| format!("src{s}")).collect();
            parts.push(format!("sources {{{}}}", names.join(", ")));
        }
        format!("{}: {} renamings", parts.join(", "), self.order())
    }

    /// The representative of `state`'s orbit; see the [module documentation](self).
    pub fn canonical(&self, state: &State) -> State {
        let agents = self.agents as usize;
        let mut perm: Vec<u8> = (0..self.agents).collect();
        let mut best = self.relabel(state.clone());
        if agents > 1 {
            while next_permutation(&mut perm) {
                let candidate = self.relabel(state.permute_agents(&perm));
                if candidate < best {
                    best = candidate;
                }
            }
        }
        best
    }

    /// Renames values (per slot) and sources (per class) by first appearance among the
    /// beliefs, in record order.
    fn relabel(&self, mut state: State) -> State {
        const NONE: u8 = u8::MAX;
        let rename_values = self.values > 1;
        if !rename_values && self.source_classes.is_empty() {
            return state;
        }
        // value_map[slot][value], next_value[slot]; source_map[source], next_in_class[class].
        let mut value_map = [[NONE; 256]; 16];
        let mut next_value = [0u8; 16];
        let mut source_map = [NONE; 256];
        let mut next_in_class = vec![0usize; self.source_classes.len()];
        let ids: Vec<_> = state.ids().collect();
        for id in ids {
            let r = state.record_mut(id);
            if r.kind != Kind::Belief {
                continue;
            }
            if rename_values {
                let slot = r.slot as usize % 16;
                let v = &mut value_map[slot][r.value as usize];
                if *v == NONE {
                    *v = next_value[slot];
                    next_value[slot] += 1;
                }
                r.value = *v;
            }
            if let Some(c) = self
                .source_classes
                .iter()
                .position(|class| class.contains(&r.source))
            {
                let s = &mut source_map[r.source as usize];
                if *s == NONE {
                    *s = self.source_classes[c][next_in_class[c]];
                    next_in_class[c] += 1;
                }
                r.source = *s;
            }
        }
        state
    }
}

/// Advances `p` to the next permutation in lexicographic order; false after the last one.
fn next_permutation(p: &mut [u8]) -> bool {
    let Some(i) = p.windows(2).rposition(|w| w[0] < w[1]) else {
        return false;
    };
    let j = p.iter().rposition(|&x| x > p[i]).unwrap_or(i);
    p.swap(i, j);
    p[i + 1..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::next_permutation;

    /// From the identity, every permutation once, in strictly increasing lexicographic order,
    /// then `false` (with three agents and more, `canonical` relies on all of them).
    #[test]
    fn next_permutation_visits_every_permutation_in_order() {
        for n in 0..=5u8 {
            let mut p: Vec<u8> = (0..n).collect();
            let mut seen = vec![p.clone()];
            while next_permutation(&mut p) {
                assert!(p > *seen.last().unwrap(), "{p:?} after {seen:?}");
                seen.push(p.clone());
            }
            let factorial = (1..=n as usize).product::<usize>();
            assert_eq!(seen.len(), factorial, "n = {n}");
            let last: Vec<u8> = (0..n).rev().collect();
            assert_eq!(seen.last(), Some(&last));
        }
    }
}
