//! Coverage tallies: which of the model's rules each attempted step exercised.
//!
//! A model that can say which of its rules a step exercised supplies a *probe*
//! ([`super::ExploreOptions::coverage`]): a function called right after every attempted
//! step (`next_state` or the in-place successor function, refused steps included) that
//! returns the set of rules the step fired, as bits of a `u128`, and forgets them. The
//! explorer counts how many attempted steps fired each set, and the level at which each set
//! first fired. The sets a model produces are few (hundreds), and consecutive steps often
//! produce the same one, so a worker keeps the current run of one set in two registers and
//! touches its hash map only when the set changes.
//!
//! Both numbers are properties of the model, not of the schedule: every state of a level is
//! expanded exactly once, whoever expands it, with the same actions, so the counts and
//! first levels are the same on any number of threads (a test checks this on two-phase
//! commit's and MemTX's models).

use rustc_hash::FxHashMap;
use serde::Serialize;

/// The probe: returns (and clears) the set of rules fired by the step just attempted.
pub type CoverageProbe = fn() -> u128;

/// How often one set of rules fired, and how early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CoverageTally {
    /// The set of rules (bits), as the probe returned it.
    pub fired: u128,
    /// Attempted steps that fired exactly this set.
    pub steps: u64,
    /// The fewest steps from an initial state after which this set fired: the length of the
    /// shortest run that exercises it (1 for a step from an initial state).
    pub first_step: usize,
}

/// One worker's tally (see the [module documentation](self)).
#[derive(Default)]
pub(crate) struct Tally {
    run_set: u128,
    run_steps: u64,
    /// Per set: (steps, first step).
    sets: FxHashMap<u128, (u64, usize)>,
    /// 1-based number of the step being taken from the level being expanded.
    step: usize,
}

impl Tally {
    /// Starts counting the steps taken from level `level` (0-based).
    pub(crate) fn start_level(&mut self, level: usize) {
        self.flush();
        self.step = level + 1;
    }

    /// Counts one attempted step that fired `set`.
    #[inline(always)]
    pub(crate) fn count(&mut self, set: u128) {
        if set == self.run_set {
            self.run_steps += 1;
        } else {
            self.flush();
            self.run_set = set;
            self.run_steps = 1;
        }
    }

    fn flush(&mut self) {
        if self.run_steps > 0 {
            let entry = self.sets.entry(self.run_set).or_insert((0, self.step));
            entry.0 += self.run_steps;
            entry.1 = entry.1.min(self.step);
            self.run_steps = 0;
        }
    }

    /// Adds this tally into `into` (merging workers).
    pub(crate) fn merge_into(mut self, into: &mut FxHashMap<u128, (u64, usize)>) {
        self.flush();
        for (set, (steps, first)) in self.sets {
            let entry = into.entry(set).or_insert((0, first));
            entry.0 += steps;
            entry.1 = entry.1.min(first);
        }
    }
}

/// The merged tallies as a list ordered by set (deterministic).
pub(crate) fn finish(sets: FxHashMap<u128, (u64, usize)>) -> Vec<CoverageTally> {
    let mut out: Vec<CoverageTally> = sets
        .into_iter()
        .filter(|&(fired, _)| fired != 0)
        .map(|(fired, (steps, first_step))| CoverageTally {
            fired,
            steps,
            first_step,
        })
        .collect();
    out.sort_unstable_by_key(|t| t.fired);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_levels_are_counted_and_merged() {
        let mut a = Tally::default();
        a.start_level(0);
        a.count(0b01);
        a.count(0b01);
        a.count(0b10);
        a.start_level(3);
        a.count(0b01);
        let mut b = Tally::default();
        b.start_level(1);
        b.count(0b10);
        b.count(0);
        let mut all = FxHashMap::default();
        a.merge_into(&mut all);
        b.merge_into(&mut all);
        let tallies = finish(all);
        assert_eq!(
            tallies,
            vec![
                CoverageTally {
                    fired: 0b01,
                    steps: 3,
                    first_step: 1
                },
                CoverageTally {
                    fired: 0b10,
                    steps: 2,
                    first_step: 1
                },
            ]
        );
    }
}
