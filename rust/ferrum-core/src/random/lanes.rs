//! Eight xoshiro256++ generators stepped side by side, for the uniform and
//! Bernoulli draws behind `Tensor.random` and dropout masks.
//!
//! One generator's next state depends on its last, so a single stream is
//! bound by that chain (2.6 ns per Bernoulli sample in a dropout mask, the
//! largest serial cost of the guide CNN's step). Eight independent streams
//! let the core overlap their chains. The compiler keeps them scalar; an
//! explicit SIMD step (one register per state word) is the next gain.

/// Generators stepped together; element `i` of a piece comes from lane `i % LANES`.
pub const LANES: usize = 8;

/// The four state words of each lane, word-major so that one word of every
/// lane is one vector.
pub struct Lanes {
    s: [[u64; LANES]; 4],
}

/// SplitMix64, the generator rand seeds xoshiro from a single `u64` with.
fn splitmix(z: &mut u64) -> u64 {
    *z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut x = *z;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Lanes {
    /// Lanes seeded from consecutive SplitMix64 outputs. SplitMix64's output
    /// step is a bijection of distinct inputs, so no lane's four words are all
    /// zero (the one state xoshiro cannot leave).
    pub fn new(seed: u64) -> Self {
        let mut z = seed;
        let mut s = [[0u64; LANES]; 4];
        for lane in 0..LANES {
            for word in &mut s {
                word[lane] = splitmix(&mut z);
            }
        }
        Self { s }
    }

    /// The next output of every lane.
    #[cfg(test)]
    pub fn next(&mut self) -> [u64; LANES] {
        step(&mut self.s)
    }

    /// Fill `out` with `map` of successive outputs, lane by lane.
    #[inline(always)]
    pub fn fill<T>(&mut self, out: &mut [std::mem::MaybeUninit<T>], map: impl Fn(u64) -> T) {
        // The state as a local for the loop, so that it lives in registers
        // rather than behind `self`.
        let mut s = self.s;
        let mut blocks = out.chunks_exact_mut(LANES);
        for block in &mut blocks {
            let v = step(&mut s);
            for (slot, &x) in block.iter_mut().zip(&v) {
                slot.write(map(x));
            }
        }
        let rest = blocks.into_remainder();
        if !rest.is_empty() {
            let v = step(&mut s);
            for (slot, &x) in rest.iter_mut().zip(&v) {
                slot.write(map(x));
            }
        }
        self.s = s;
    }
}

/// One xoshiro256++ step of every lane: each lane's output, and its state advanced.
#[inline(always)]
fn step(s: &mut [[u64; LANES]; 4]) -> [u64; LANES] {
    let [s0, s1, s2, s3] = s;
    let mut out = [0u64; LANES];
    for l in 0..LANES {
        out[l] = s0[l].wrapping_add(s3[l]).rotate_left(23).wrapping_add(s0[l]);
        let t = s1[l] << 17;
        s2[l] ^= s0[l];
        s3[l] ^= s1[l];
        s1[l] ^= s2[l];
        s0[l] ^= s3[l];
        s2[l] ^= t;
        s3[l] = s3[l].rotate_left(45);
    }
    out
}

/// A uniform f32 in [0, 1) from the top 24 bits (every value a multiple of 2^-24).
#[inline(always)]
pub fn unit_f32(x: u64) -> f32 {
    ((x >> 40) as u32) as f32 * (1.0 / (1u32 << 24) as f32)
}

/// A uniform f64 in [0, 1) from the top 53 bits.
#[inline(always)]
pub fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The threshold a draw must be below to count as a success of probability
/// `p` in [0, 1]; `None` for p = 1, which every draw passes.
pub fn bernoulli_threshold(p: f64) -> Option<u64> {
    // 2^64 · p, exact for p < 1 up to f64's rounding.
    (p < 1.0).then_some((p * 18_446_744_073_709_551_616.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xoshiro256++ stepped one number at a time, from the reference
    /// description (Blackman and Vigna), for the lanes to agree with.
    fn scalar(s: &mut [u64; 4]) -> u64 {
        let out = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    #[test]
    fn each_lane_is_xoshiro256plusplus() {
        // rand's SmallRng on 64-bit targets is xoshiro256++; its state from
        // these four words must give the same stream as our lane.
        use rand::{RngCore, SeedableRng};
        let mut lanes = Lanes::new(99);
        let mut states: Vec<[u64; 4]> = (0..LANES).map(|l| std::array::from_fn(|w| lanes.s[w][l])).collect();
        let mut theirs: Vec<rand::rngs::SmallRng> = states
            .iter()
            .map(|st| {
                let mut seed = [0u8; 32];
                for (w, bytes) in seed.chunks_exact_mut(8).enumerate() {
                    bytes.copy_from_slice(&st[w].to_le_bytes());
                }
                rand::rngs::SmallRng::from_seed(seed)
            })
            .collect();
        for _ in 0..100 {
            let v = lanes.next();
            for l in 0..LANES {
                assert_eq!(v[l], scalar(&mut states[l]));
                assert_eq!(v[l], theirs[l].next_u64());
            }
        }
    }

    #[test]
    fn splitmix_matches_its_published_first_outputs() {
        // SplitMix64 seeded with 0 (the values in Vigna's reference code's test vectors).
        let mut z = 0u64;
        assert_eq!(splitmix(&mut z), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix(&mut z), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn fill_writes_every_slot_including_a_short_tail() {
        for n in [0, 1, 7, 8, 9, 100] {
            let mut v: Vec<f32> = Vec::with_capacity(n);
            Lanes::new(1).fill(&mut v.spare_capacity_mut()[..n], unit_f32);
            // SAFETY: fill wrote the first n slots.
            unsafe { v.set_len(n) };
            assert!(v.iter().all(|x| (0.0..1.0).contains(x)), "n = {n}");
        }
    }

    #[test]
    fn unit_draws_reach_their_ends_and_stay_below_one() {
        assert_eq!(unit_f32(0), 0.0);
        assert_eq!(unit_f32(u64::MAX), 1.0 - 2f32.powi(-24));
        assert_eq!(unit_f64(u64::MAX), 1.0 - 2f64.powi(-53));
        assert_eq!(bernoulli_threshold(1.0), None);
        assert_eq!(bernoulli_threshold(0.0), Some(0));
        assert_eq!(bernoulli_threshold(0.5), Some(1 << 63));
    }
}
