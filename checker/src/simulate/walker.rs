//! One thread's walker: a walk from the initial state, each step a family drawn by the walk's
//! swarm and then one of its operations, every state judged and fingerprinted into the sketch.

use super::swarm::{Rng, Swarm};
use super::{BatchResult, Sighting, WalkViolation};
use crate::explore::fingerprint_packed;
use memtx_model::ops::{Families, Family, Op};
use memtx_model::rules::take_fired;
use memtx_model::state::State;
use memtx_model::MemTx;
use stateright::Model;

/// The families with many operations in most states (`Stage`, `Observe`): a swarm walk's step
/// proposes them only when it chooses one of them.
const BULKY: Families = Families::only(Family::Stage).with(Family::Observe);

/// One thread's reusable buffers.
pub(super) struct Walker<'m> {
    model: &'m MemTx,
    initial: State,
    state: State,
    next: State,
    actions: Vec<Op>,
    ops: Vec<Op>,
    bytes: Vec<u8>,
    /// Per property: is it judged on the walks' states (invariants always; an example until
    /// sighted, in this batch or an earlier one).
    pub(super) open: Vec<bool>,
}

impl<'m> Walker<'m> {
    pub(super) fn new(model: &'m MemTx) -> Self {
        let initial = model
            .init_states()
            .into_iter()
            .next()
            .unwrap_or_else(State::initial);
        Walker {
            model,
            next: initial.clone(),
            state: initial.clone(),
            initial,
            actions: Vec::new(),
            ops: Vec::new(),
            bytes: Vec::new(),
            open: vec![true; model.selected.len()],
        }
    }

    /// Judges the state reached after `step` steps of walk `walk`: the first invariant it
    /// breaks, if any (examples are recorded in `out`).
    fn judge(&mut self, walk: u64, step: usize, out: &mut BatchResult) -> Option<&'static str> {
        self.bytes.clear();
        self.state.pack(&mut self.bytes);
        out.sketch.insert(fingerprint_packed(&self.bytes));
        for (i, def) in self.model.selected.iter().enumerate() {
            if def.is_invariant() {
                if !(def.holds)(self.model, &self.state) {
                    return Some(def.key);
                }
            } else if self.open[i] && (def.holds)(self.model, &self.state) {
                // An example sighted is not judged again in this batch.
                out.examples[i] = Some(Sighting { walk, step });
                self.open[i] = false;
            }
        }
        None
    }

    /// Walk `walk`: its swarm, then steps until its depth bound, a state where nothing
    /// proposed is enabled, or a violation (returned).
    pub(super) fn walk(
        &mut self,
        seed: u64,
        walk: u64,
        max_depth: usize,
        out: &mut BatchResult,
    ) -> Option<WalkViolation> {
        let mut rng = Rng::for_walk(seed, walk);
        let swarm = Swarm::draw(&mut rng, walk, max_depth);
        self.state.clone_from(&self.initial);
        self.ops.clear();
        if let Some(key) = self.judge(walk, 0, out) {
            return Some(self.violation(key, walk));
        }
        let mut length = 0;
        let favoured = swarm.favoured();
        for step in 0..swarm.depth {
            out.tally.start_level(step);
            let taken = if swarm.plain {
                self.step_plain(&mut rng, out)
            } else {
                self.step_swarm(&swarm, favoured, &mut rng, out)
            };
            if !taken {
                out.stuck += 1;
                break;
            }
            out.steps += 1;
            length = step + 1;
            if let Some(key) = self.judge(walk, length, out) {
                Self::count_length(out, length);
                return Some(self.violation(key, walk));
            }
        }
        Self::count_length(out, length);
        None
    }

    /// A step of a plain walk: every proposed operation alike. `false` if none is performed.
    fn step_plain(&mut self, rng: &mut Rng, out: &mut BatchResult) -> bool {
        self.actions.clear();
        self.model.actions(&self.state, &mut self.actions);
        self.take_any(rng, out)
    }

    /// A step of a swarm walk: a family by the swarm's weights among those with an operation
    /// the protocol performs, then one of its operations uniformly; the families without a
    /// weight only when no other has one. `false` if no operation is performed.
    ///
    /// The operations of every family but the [`BULKY`] ones are proposed at once (they are
    /// few, and most families have none in a given state); a bulky family's only when it is
    /// chosen.
    fn step_swarm(
        &mut self,
        swarm: &Swarm,
        favoured: Families,
        rng: &mut Rng,
        out: &mut BatchResult,
    ) -> bool {
        self.actions.clear();
        self.model
            .actions_of(&self.state, Families::ALL.minus(BULKY), &mut self.actions);
        // Families that may still have an operation: those proposed, and the bulky ones
        // until proposed.
        let mut open = BULKY;
        let mut proposed = [0usize; Family::ALL.len()];
        for op in &self.actions {
            open = open.with(op.family());
            proposed[op.family().index()] += 1;
        }
        let mut unproposed = BULKY;
        while let Some(f) = swarm.choose_family(rng, open.intersection(favoured)) {
            if unproposed.contains(f) {
                unproposed = unproposed.without(f);
                let before = self.actions.len();
                self.model
                    .actions_of(&self.state, Families::only(f), &mut self.actions);
                proposed[f.index()] = self.actions.len() - before;
            }
            let of_f = proposed[f.index()];
            if of_f == 0 {
                open = open.without(f);
                continue;
            }
            proposed[f.index()] -= 1;
            let k = rng.below(of_f as u64) as usize;
            let i = self
                .actions
                .iter()
                .enumerate()
                .filter(|(_, op)| op.family() == f)
                .nth(k)
                .map(|(i, _)| i)
                .expect("[memtx internal bug] a family's count of proposed operations is off");
            if self.try_op(i, out) {
                return true;
            }
        }
        // No family with a weight has an operation the protocol performs: every remaining
        // operation alike (the bulky families' too).
        let rest = unproposed.minus(favoured);
        if !rest.is_empty() {
            self.model.actions_of(&self.state, rest, &mut self.actions);
        }
        self.take_any(rng, out)
    }

    /// Tries the proposed operations in a uniformly random order until the protocol performs
    /// one (`true`) or none is left (`false`).
    fn take_any(&mut self, rng: &mut Rng, out: &mut BatchResult) -> bool {
        while !self.actions.is_empty() {
            let i = rng.below(self.actions.len() as u64) as usize;
            if self.try_op(i, out) {
                return true;
            }
        }
        false
    }

    /// Takes `self.actions[i]` out of the proposed operations and tries it: `true` if the
    /// protocol performs it (the walk moves on), `false` if it refuses it.
    fn try_op(&mut self, i: usize, out: &mut BatchResult) -> bool {
        let op = self.actions.swap_remove(i);
        let taken = self
            .model
            .next_state_into(&self.state, op.clone(), &mut self.next);
        out.tally.count(take_fired());
        if taken {
            std::mem::swap(&mut self.state, &mut self.next);
            self.ops.push(op);
        } else {
            out.refused += 1;
        }
        taken
    }

    fn count_length(out: &mut BatchResult, length: usize) {
        if out.lengths.len() <= length {
            out.lengths.resize(length + 1, 0);
        }
        out.lengths[length] += 1;
    }

    fn violation(&self, key: &'static str, walk: u64) -> WalkViolation {
        WalkViolation {
            key,
            walk,
            ops: self.ops.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtx_model::presets::preset;
    use memtx_model::Variant;

    fn favouring(families: &[Family]) -> Swarm {
        let mut weights = [0; Family::ALL.len()];
        for f in families {
            weights[f.index()] = 1;
        }
        Swarm {
            weights,
            depth: 64,
            plain: false,
        }
    }

    /// A step takes a favoured family's operation when it has one the protocol performs, and
    /// another family's only when it has none; a bulky family (`Stage`) is proposed when
    /// chosen.
    #[test]
    fn a_step_takes_the_favoured_family_and_another_only_when_it_cannot_move() {
        let model = MemTx::new(preset("full", Variant::Memtx).expect("full"));
        let mut walker = Walker::new(&model);
        let mut out = BatchResult::new(model.selected.len());
        let mut rng = Rng::for_walk(1, 1);
        let mut step = |walker: &mut Walker<'_>, swarm: &Swarm| {
            assert!(walker.step_swarm(swarm, swarm.favoured(), &mut rng, &mut out));
            walker.ops.last().cloned().expect("a step was taken")
        };
        // `full` has one tick: Tick moves once, then the walk falls back to the others.
        let ticks = favouring(&[Family::Tick]);
        assert_eq!(step(&mut walker, &ticks), Op::Tick);
        assert_ne!(step(&mut walker, &ticks).family(), Family::Tick);
        // Stage needs an open transaction: until a Begin the others move; once a transaction
        // is open, every step stages.
        let stages = favouring(&[Family::Stage]);
        let mut open = false;
        for _ in 0..20 {
            let op = step(&mut walker, &stages);
            if open {
                assert_eq!(op.family(), Family::Stage, "{op:?}");
            }
            open |= matches!(op, Op::Begin { .. });
            if walker.state.len() >= 3 {
                break;
            }
        }
        assert!(open, "no transaction began in 20 steps");
        assert_eq!(out.stuck, 0);
    }
}
