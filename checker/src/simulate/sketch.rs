//! How many distinct states the walks saw, estimated in constant memory: a HyperLogLog
//! sketch (Flajolet, Fusy, Gandouet and Meunier, 2007) over the explorer's 64-bit state
//! fingerprints, with the small-range correction. Sketches merge by taking each register's
//! maximum, so the estimate does not depend on which thread saw which state.

/// Index bits: 2^12 registers, a standard error of about 1.04 / 64 = 1.6 %.
const BITS: u32 = 12;
const REGISTERS: usize = 1 << BITS;

/// A HyperLogLog sketch of fingerprints (see the [module documentation](self)).
#[derive(Clone)]
pub struct Sketch {
    registers: Box<[u8; REGISTERS]>,
}

impl Default for Sketch {
    fn default() -> Self {
        Sketch {
            registers: Box::new([0; REGISTERS]),
        }
    }
}

impl Sketch {
    /// The estimate's standard error (relative), as stated in reports.
    pub const STANDARD_ERROR: f64 = 1.04 / 64.0;
    /// The number of registers, as stated in reports.
    pub const REGISTERS: usize = REGISTERS;

    /// Adds a fingerprint (well mixed: its bits are used as they are).
    #[inline]
    pub fn insert(&mut self, fingerprint: u64) {
        let index = (fingerprint >> (64 - BITS)) as usize;
        let rest = fingerprint << BITS;
        let rank = (rest.leading_zeros() + 1).min(64 - BITS + 1) as u8;
        let r = &mut self.registers[index];
        if rank > *r {
            *r = rank;
        }
    }

    /// Folds `other` into this sketch.
    pub fn merge(&mut self, other: &Sketch) {
        for (a, &b) in self.registers.iter_mut().zip(other.registers.iter()) {
            *a = (*a).max(b);
        }
    }

    /// The estimated number of distinct fingerprints inserted.
    pub fn estimate(&self) -> f64 {
        let m = REGISTERS as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self.registers.iter().map(|&r| 2f64.powi(-(r as i32))).sum();
        let raw = alpha * m * m / sum;
        let zeros = self.registers.iter().filter(|&&r| r == 0).count();
        if raw <= 2.5 * m && zeros > 0 {
            // Linear counting while many registers are still empty.
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(i: u64) -> u64 {
        let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn estimates_within_a_few_standard_errors_and_ignores_repeats() {
        for n in [10u64, 1_000, 50_000, 1_000_000] {
            let mut s = Sketch::default();
            for i in 0..n {
                s.insert(mix(i));
                s.insert(mix(i));
            }
            let e = s.estimate();
            let err = (e - n as f64).abs() / n as f64;
            assert!(err < 4.0 * Sketch::STANDARD_ERROR, "n {n}: estimate {e}");
        }
        assert_eq!(Sketch::default().estimate(), 0.0);
    }

    #[test]
    fn merging_is_the_union() {
        let (mut a, mut b, mut both) = (Sketch::default(), Sketch::default(), Sketch::default());
        for i in 0..30_000 {
            a.insert(mix(i));
            both.insert(mix(i));
        }
        for i in 20_000..60_000 {
            b.insert(mix(i));
            both.insert(mix(i));
        }
        a.merge(&b);
        assert_eq!(a.estimate(), both.estimate());
    }
}
