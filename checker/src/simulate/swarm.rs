//! Swarm diversification (Holzmann, Joshi and Groce, "Swarm verification", 2008): each walk
//! draws, from its own seed, which operation families it favours and how deep it may go, so
//! that a family most walks rarely take gets long runs in some of them. Also the walks'
//! random numbers: a seed per walk derived from the run's seed and the walk's index, so that a
//! walk is the same whichever thread takes it.

use memtx_model::ops::Op;

/// The operation families a walk weighs (one per kind of operation of docs/protocol.md §5).
pub const FAMILIES: [&str; 15] = [
    "Tick",
    "Observe",
    "Begin",
    "Stage",
    "Adopt",
    "Commit",
    "Abort",
    "CallTool",
    "RequestRevocation",
    "ApplyRevocation",
    "Revalidate",
    "Rebuild",
    "Read",
    "EndSession",
    "Resolve",
];

/// The family of `op`: its index in [`FAMILIES`].
pub fn family(op: &Op) -> usize {
    match op {
        Op::Tick => 0,
        Op::Observe { .. } => 1,
        Op::Begin { .. } => 2,
        Op::Stage { .. } => 3,
        Op::Adopt { .. } => 4,
        Op::Commit { .. } => 5,
        Op::Abort { .. } => 6,
        Op::CallTool { .. } => 7,
        Op::RequestRevocation { .. } => 8,
        Op::ApplyRevocation { .. } => 9,
        Op::Revalidate { .. } => 10,
        Op::Rebuild { .. } => 11,
        Op::Read { .. } => 12,
        Op::EndSession { .. } => 13,
        Op::Resolve { .. } => 14,
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): small, fast and good enough to choose among a
/// few dozen operations; every walk owns one.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator of walk `walk` of a run seeded with `seed`.
    pub fn for_walk(seed: u64, walk: u64) -> Rng {
        let mut r = Rng(seed ^ 0x6a09_e667_f3bc_c909);
        let mixed = r.next_u64() ^ walk.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Rng(mixed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0), without modulo bias worth the name for small `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// What one walk favours: a weight per family (0: never chosen while another family is
/// enabled) and its depth bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swarm {
    /// Weight per family of [`FAMILIES`], 0 to 8.
    pub weights: [u32; FAMILIES.len()],
    /// The most steps this walk takes.
    pub depth: usize,
}

impl Swarm {
    /// Draws a walk's swarm: each family is left out with probability 1/3, otherwise weighed
    /// 1 to 8; the depth bound is uniform between a quarter of `max_depth` and `max_depth`.
    /// Walk 0 of every run weighs every family alike and goes to `max_depth` (plain random
    /// walk), so that a run of one walk is not at the mercy of one draw.
    pub fn draw(rng: &mut Rng, walk: u64, max_depth: usize) -> Swarm {
        if walk == 0 {
            return Swarm {
                weights: [1; FAMILIES.len()],
                depth: max_depth,
            };
        }
        let mut weights = [0; FAMILIES.len()];
        for w in &mut weights {
            *w = match rng.below(3) {
                0 => 0,
                _ => 1 + rng.below(8) as u32,
            };
        }
        let low = (max_depth / 4).max(1).min(max_depth);
        let depth = low + rng.below((max_depth - low + 1) as u64) as usize;
        Swarm { weights, depth }
    }

    /// Chooses one of `ops` (not empty) by the swarm's weights; uniformly when every
    /// proposed family weighs 0.
    pub fn choose(&self, rng: &mut Rng, ops: &[Op]) -> usize {
        let total: u64 = ops
            .iter()
            .map(|op| u64::from(self.weights[family(op)]))
            .sum();
        if total == 0 {
            return rng.below(ops.len() as u64) as usize;
        }
        let mut pick = rng.below(total);
        for (i, op) in ops.iter().enumerate() {
            let w = u64::from(self.weights[family(op)]);
            if pick < w {
                return i;
            }
            pick -= w;
        }
        ops.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_have_their_own_streams_and_repeat_exactly() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_walk(7, 1).next_u64()).collect();
        assert!(
            a.windows(2).all(|w| w[0] == w[1]),
            "same seed, same walk, same numbers"
        );
        let firsts: std::collections::HashSet<u64> =
            (0..1000).map(|w| Rng::for_walk(7, w).next_u64()).collect();
        assert_eq!(firsts.len(), 1000, "walks differ");
        assert_ne!(
            Rng::for_walk(7, 1).next_u64(),
            Rng::for_walk(8, 1).next_u64()
        );
    }

    #[test]
    fn swarms_leave_families_out_and_vary_the_depth() {
        let mut left_out = [0u32; FAMILIES.len()];
        let mut depths = std::collections::BTreeSet::new();
        for walk in 1..2000 {
            let s = Swarm::draw(&mut Rng::for_walk(1, walk), walk, 40);
            assert!((10..=40).contains(&s.depth), "{}", s.depth);
            depths.insert(s.depth);
            for (f, &w) in s.weights.iter().enumerate() {
                assert!(w <= 8);
                left_out[f] += u32::from(w == 0);
            }
        }
        // About a third of the walks leave each family out.
        assert!(
            left_out.iter().all(|&n| (500..850).contains(&n)),
            "{left_out:?}"
        );
        assert!(depths.len() > 25, "{depths:?}");
        let first = Swarm::draw(&mut Rng::for_walk(1, 0), 0, 40);
        assert_eq!((first.weights, first.depth), ([1; FAMILIES.len()], 40));
    }

    #[test]
    fn choice_follows_the_weights_and_falls_back_to_uniform() {
        let ops = [Op::Tick, Op::Commit { agent: 0 }];
        let mut s = Swarm {
            weights: [0; FAMILIES.len()],
            depth: 1,
        };
        s.weights[family(&ops[1])] = 3;
        let mut rng = Rng::for_walk(3, 3);
        assert!(
            (0..200).all(|_| s.choose(&mut rng, &ops) == 1),
            "Tick weighs 0"
        );
        s.weights[family(&ops[1])] = 0;
        let ones = (0..2000).filter(|_| s.choose(&mut rng, &ops) == 1).count();
        assert!(
            (800..1200).contains(&ones),
            "uniform when all weigh 0: {ones}"
        );
    }
}
