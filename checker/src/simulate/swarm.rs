//! Swarm diversification (Holzmann, Joshi and Groce, "Swarm verification", 2008): each walk
//! draws, from its own seed, which operation families it favours and how deep it may go, so
//! that a family most walks rarely take gets long runs in some of them. A step chooses a
//! family by the walk's weights ([`Swarm::choose_family`]), then one of its operations
//! uniformly (Groce et al., "Swarm testing", 2012: a kind of call, then its arguments), so a
//! family's weight means the same whether it has one operation or dozens. Also the walks'
//! random numbers: a seed per walk derived from the run's seed and the walk's index, so that a
//! walk is the same whichever thread takes it.

use memtx_model::ops::{Families, Family};

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

/// What one walk favours: a weight per family (0: tried only when no family with a weight has
/// an operation the protocol performs) and its depth bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swarm {
    /// Weight per family, indexed by [`Family::index`], 0 to 8.
    pub weights: [u32; Family::ALL.len()],
    /// The most steps this walk takes.
    pub depth: usize,
    /// A plain random walk (walk 0): every operation alike, whatever its family.
    pub plain: bool,
}

impl Swarm {
    /// Draws a walk's swarm: each family is left out with probability 1/3, otherwise weighed
    /// 1 to 8; the depth bound is uniform between a quarter of `max_depth` and `max_depth`.
    /// Walk 0 of every run is a plain random walk to `max_depth` (every operation alike), so
    /// that a run of one walk is not at the mercy of one draw.
    pub fn draw(rng: &mut Rng, walk: u64, max_depth: usize) -> Swarm {
        if walk == 0 {
            return Swarm {
                weights: [1; Family::ALL.len()],
                depth: max_depth,
                plain: true,
            };
        }
        let mut weights = [0; Family::ALL.len()];
        for w in &mut weights {
            *w = match rng.below(3) {
                0 => 0,
                _ => 1 + rng.below(8) as u32,
            };
        }
        let low = (max_depth / 4).max(1).min(max_depth);
        let depth = low + rng.below((max_depth - low + 1) as u64) as usize;
        Swarm {
            weights,
            depth,
            plain: false,
        }
    }

    /// The families with a weight.
    pub fn favoured(&self) -> Families {
        Family::ALL
            .into_iter()
            .filter(|f| self.weights[f.index()] > 0)
            .fold(Families::NONE, Families::with)
    }

    /// Chooses one of `among` by the swarm's weights; `None` when none of them weighs
    /// anything.
    pub fn choose_family(&self, rng: &mut Rng, among: Families) -> Option<Family> {
        let weight = |f: Family| u64::from(self.weights[f.index()]);
        let total: u64 = among.iter().map(weight).sum();
        if total == 0 {
            return None;
        }
        let mut pick = rng.below(total);
        among.iter().find(|&f| {
            let w = weight(f);
            let here = pick < w;
            pick = pick.saturating_sub(w);
            here
        })
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
        let n = Family::ALL.len();
        let mut left_out = vec![0u32; n];
        let mut depths = std::collections::BTreeSet::new();
        for walk in 1..2000 {
            let s = Swarm::draw(&mut Rng::for_walk(1, walk), walk, 40);
            assert!((10..=40).contains(&s.depth), "{}", s.depth);
            assert!(!s.plain);
            depths.insert(s.depth);
            for f in Family::ALL {
                let w = s.weights[f.index()];
                assert!(w <= 8);
                assert_eq!(s.favoured().contains(f), w > 0);
                left_out[f.index()] += u32::from(w == 0);
            }
        }
        // About a third of the walks leave each family out.
        assert!(
            left_out.iter().all(|&n| (500..850).contains(&n)),
            "{left_out:?}"
        );
        assert!(depths.len() > 25, "{depths:?}");
        let first = Swarm::draw(&mut Rng::for_walk(1, 0), 0, 40);
        assert_eq!((first.depth, first.plain), (40, true));
        assert_eq!(first.favoured(), Families::ALL);
    }

    #[test]
    fn a_family_is_chosen_by_its_weight_among_those_offered() {
        let mut s = Swarm {
            weights: [0; Family::ALL.len()],
            depth: 1,
            plain: false,
        };
        s.weights[Family::Commit.index()] = 3;
        s.weights[Family::Stage.index()] = 1;
        let mut rng = Rng::for_walk(3, 3);
        let both = Families::only(Family::Commit).with(Family::Stage);
        let commits = (0..4000)
            .filter(|_| s.choose_family(&mut rng, both) == Some(Family::Commit))
            .count();
        assert!((2800..3200).contains(&commits), "3 to 1: {commits}");
        let with_tick = Families::only(Family::Stage).with(Family::Tick);
        assert!(
            (0..200).all(|_| s.choose_family(&mut rng, with_tick) == Some(Family::Stage)),
            "Tick weighs 0"
        );
        assert_eq!(
            s.choose_family(&mut rng, Families::only(Family::Tick)),
            None
        );
        assert_eq!(s.choose_family(&mut rng, Families::NONE), None);
    }
}
