//! Coverage tallies: which of the model's rules each attempted step exercised.
//!
//! A model that can say which of its rules a step exercised supplies a *probe*
//! ([`super::ExploreOptions::coverage`]): a function called right after every attempted
//! step (`next_state` or the in-place successor function, refused steps included) that
//! returns the set of rules the step fired, as bits of a `u128`, and forgets them. The
//! explorer counts, per bit, how many attempted steps fired it and the level at which it first
//! fired.
//!
//! Both numbers are properties of the model, not of the schedule: every state of a level is
//! expanded exactly once, whoever expands it, with the same actions, so the counts and
//! first levels are the same on any number of threads (a test checks this on two-phase
//! commit's and MemTX's models).

use serde::Serialize;

/// The probe: returns (and clears) the set of rules fired by the step just attempted.
pub type CoverageProbe = fn() -> u128;

/// How often one rule (one bit of the probe's sets) fired, and how early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CoverageTally {
    /// The rule's bit.
    pub bit: u8,
    /// Attempted steps that fired it.
    pub steps: u64,
    /// The fewest steps from an initial state after which it fired: the length of the
    /// shortest run that exercises it (1 for a step from an initial state).
    pub first_step: usize,
}

/// One worker's tally (see the [module documentation](self)).
#[derive(Clone)]
///
/// Counting is on the hot path (once per attempted step): a step adds one to the counter of
/// each bit of its set (a few bits, 128 counters in one kilobyte that stays in the L1 cache),
/// and records the step number for bits it is the first to set. (Adding a run-length cache
/// of the last set in front measured 0.3 % more instructions on `quick`: runs are short.) A first version counted whole
/// sets in a direct-mapped cache backed by a hash map; on `paper` the sets outnumbered the
/// cache and it cost about 15 % at one thread.
pub(crate) struct Tally {
    counts: Box<[u64; 128]>,
    first: Box<[usize; 128]>,
    /// Bits set by some step so far.
    seen: u128,
    /// 1-based number of the step being taken from the level being expanded.
    step: usize,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            counts: Box::new([0; 128]),
            first: Box::new([usize::MAX; 128]),
            seen: 0,
            step: 0,
        }
    }
}

impl Tally {
    /// Starts counting the steps taken from level `level` (0-based).
    pub(crate) fn start_level(&mut self, level: usize) {
        self.step = level + 1;
    }

    /// Counts one attempted step that fired `set`.
    #[inline(always)]
    pub(crate) fn count(&mut self, set: u128) {
        let new = set & !self.seen;
        if new != 0 {
            self.first_seen(new);
        }
        let mut bits = set;
        while bits != 0 {
            let bit = bits.trailing_zeros() as usize;
            self.counts[bit] += 1;
            bits &= bits - 1;
        }
    }

    #[cold]
    fn first_seen(&mut self, new: u128) {
        self.seen |= new;
        let mut bits = new;
        while bits != 0 {
            let bit = bits.trailing_zeros() as usize;
            self.first[bit] = self.first[bit].min(self.step);
            bits &= bits - 1;
        }
    }

    /// Adds this tally into `into` (merging workers): counts add up, first steps take the
    /// minimum.
    pub(crate) fn merge_into(self, into: &mut Tally) {
        for bit in 0..128 {
            into.counts[bit] += self.counts[bit];
            into.first[bit] = into.first[bit].min(self.first[bit]);
        }
        into.seen |= self.seen;
    }

    /// How many bits have fired so far.
    pub(crate) fn exercised(&self) -> u32 {
        self.seen.count_ones()
    }

    /// Per bit: the steps that fired it and the first step that did (`usize::MAX`: none),
    /// for a checkpoint.
    pub(crate) fn raw(&self) -> (&[u64; 128], &[usize; 128]) {
        (&self.counts, &self.first)
    }

    /// A tally restored from [`Tally::raw`]'s arrays.
    pub(crate) fn from_raw(counts: [u64; 128], first: [usize; 128]) -> Tally {
        let mut seen = 0u128;
        for bit in 0..128 {
            if counts[bit] > 0 || first[bit] != usize::MAX {
                seen |= 1 << bit;
            }
        }
        Tally {
            counts: Box::new(counts),
            first: Box::new(first),
            seen,
            step: 0,
        }
    }

    /// The bits that fired, in bit order (deterministic).
    pub(crate) fn finish(&self) -> Vec<CoverageTally> {
        (0..128u8)
            .filter(|&bit| self.counts[bit as usize] > 0)
            .map(|bit| CoverageTally {
                bit,
                steps: self.counts[bit as usize],
                first_step: self.first[bit as usize],
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_counted_with_their_first_step_and_merged() {
        let mut a = Tally::default();
        a.start_level(0);
        a.count(0b01);
        a.count(0b11);
        a.start_level(3);
        a.count(0b101);
        let mut b = Tally::default();
        b.start_level(1);
        b.count(0b10);
        b.count(0);
        let mut all = Tally::default();
        a.merge_into(&mut all);
        b.merge_into(&mut all);
        let t = |bit, steps, first_step| CoverageTally {
            bit,
            steps,
            first_step,
        };
        assert_eq!(all.finish(), vec![t(0, 3, 1), t(1, 2, 1), t(2, 1, 4)]);
    }
}
