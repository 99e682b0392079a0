//! Random numbers: one seedable generator for the process, so that
//! `B.seed(n)` makes initialisation, dropout and shuffling reproducible,
//! and whose exact position can be saved and restored (a training
//! checkpoint resumes the same stream of dropout masks).

use std::mem::MaybeUninit;
use std::sync::{LazyLock, Mutex};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
// rand's StdRng is this generator; named here because its position is saved and restored.
use rand_chacha::ChaCha12Rng;
use rand_distr::{Distribution as _, Normal, Uniform};

use crate::error::{Error, Result};
use crate::kernels::{parallel::simd, team};

mod lanes;
use lanes::{bernoulli_threshold, unit_f32, unit_f64, Lanes};

/// Burn's `Distribution`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Uniform on [0, 1).
    Default,
    /// 1 with probability p, else 0.
    Bernoulli(f64),
    /// Uniform on [low, high).
    Uniform(f64, f64),
    /// Normal with mean and standard deviation.
    Normal(f64, f64),
}

static RNG: LazyLock<Mutex<ChaCha12Rng>> = LazyLock::new(|| Mutex::new(ChaCha12Rng::from_os_rng()));

/// Reset the process generator to a known state.
pub fn seed(seed: u64) {
    *RNG.lock().unwrap_or_else(|p| p.into_inner()) = ChaCha12Rng::seed_from_u64(seed);
}

/// Run `f` with the process generator.
pub fn with_rng<R>(f: impl FnOnce(&mut ChaCha12Rng) -> R) -> R {
    let mut guard = RNG.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut guard)
}

/// Length of a saved generator state: the 32-byte key, the 8-byte stream
/// and the 16-byte word position, little-endian.
pub const STATE_LEN: usize = 56;

/// The process generator's exact position, for `set_state` to return to.
pub fn state() -> [u8; STATE_LEN] {
    with_rng(|rng| encode_state(rng))
}

/// Put the process generator back where `state()` found it.
pub fn set_state(state: &[u8]) -> Result<()> {
    let rng = decode_state(state)?;
    *RNG.lock().unwrap_or_else(|p| p.into_inner()) = rng;
    Ok(())
}

fn encode_state(rng: &ChaCha12Rng) -> [u8; STATE_LEN] {
    let mut out = [0u8; STATE_LEN];
    out[..32].copy_from_slice(&rng.get_seed());
    out[32..40].copy_from_slice(&rng.get_stream().to_le_bytes());
    out[40..].copy_from_slice(&rng.get_word_pos().to_le_bytes());
    out
}

fn decode_state(state: &[u8]) -> Result<ChaCha12Rng> {
    if state.len() != STATE_LEN {
        return Err(Error::invalid(
            "set_random_state",
            format!("a generator state is {STATE_LEN} bytes (from random_state()), found {}", state.len()),
        ));
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(&state[..32]);
    let stream = u64::from_le_bytes(state[32..40].try_into().expect("8 bytes"));
    let word_pos = u128::from_le_bytes(state[40..].try_into().expect("16 bytes"));
    let mut rng = ChaCha12Rng::from_seed(key);
    rng.set_stream(stream);
    rng.set_word_pos(word_pos);
    Ok(rng)
}

impl Distribution {
    pub fn validate(&self) -> Result<()> {
        let bad = |r: String| Err(Error::invalid("random", r));
        match *self {
            Distribution::Bernoulli(p) if !(0.0..=1.0).contains(&p) => bad(format!("Bernoulli probability must be in [0, 1], found {p}")),
            Distribution::Uniform(lo, hi) if lo >= hi || !(hi - lo).is_finite() => {
                bad(format!("Uniform needs finite low < high, found low={lo}, high={hi} (high - low must be finite too)"))
            }
            Distribution::Normal(m, s) if s < 0.0 || !m.is_finite() || !s.is_finite() => {
                bad(format!("Normal needs a finite mean and std >= 0, found mean={m}, std={s}"))
            }
            _ => Ok(()),
        }
    }

    /// A distribution its sampler refuses (beyond what `validate` checks).
    fn refused(&self, dtype: &str, err: impl std::fmt::Display) -> Error {
        Error::invalid("random", format!("cannot sample {self:?} in {dtype}: {err}"))
    }

    /// `n` samples as f64, in memory reserved up front (an error, not an
    /// abort, when it cannot be had).
    pub fn sample_f64(&self, n: usize) -> Result<Vec<f64>> {
        self.validate()?;
        let mut out: Vec<f64> = crate::shape::try_with_capacity("random", n)?;
        match *self {
            Distribution::Default => fill_lanes(&mut out, n, unit_f64),
            Distribution::Bernoulli(p) => match bernoulli_threshold(p) {
                Some(below) => fill_lanes(&mut out, n, move |x| (x < below) as u8 as f64),
                None => out.resize(n, 1.0),
            },
            Distribution::Uniform(lo, hi) => {
                let d = Uniform::new(lo, hi).map_err(|e| self.refused("f64", e))?;
                fill(&mut out, n, |rng| d.sample(rng));
            }
            Distribution::Normal(m, s) => {
                let d = Normal::new(m, s).map_err(|e| self.refused("f64", e))?;
                fill(&mut out, n, |rng| d.sample(rng));
            }
        }
        Ok(out)
    }

    /// `n` samples as f32 (sampled in f32 where that keeps them in range).
    pub fn sample_f32(&self, n: usize) -> Result<Vec<f32>> {
        self.validate()?;
        let mut out: Vec<f32> = crate::shape::try_with_capacity("random", n)?;
        match *self {
            Distribution::Default => fill_lanes(&mut out, n, unit_f32),
            Distribution::Uniform(lo, hi) => {
                // Rounding lo..hi to f32 can land exactly on hi; keep [lo, hi).
                let top = f32_below(hi);
                match Uniform::new(lo as f32, hi as f32) {
                    Ok(d) => fill(&mut out, n, |rng| d.sample(rng).min(top)),
                    // The range is empty or too wide in f32 (low and high round to the same
                    // f32, or high - low overflows it): sample in f64 and round.
                    Err(_) => {
                        let d = Uniform::new(lo, hi).map_err(|e| self.refused("f32", e))?;
                        fill(&mut out, n, |rng| (d.sample(rng) as f32).min(top));
                    }
                }
            }
            Distribution::Normal(m, s) => {
                let d = Normal::new(m as f32, s as f32).map_err(|e| self.refused("f32", e))?;
                fill(&mut out, n, |rng| d.sample(rng));
            }
            Distribution::Bernoulli(p) => match bernoulli_threshold(p) {
                Some(below) => fill_lanes(&mut out, n, move |x| (x < below) as u8 as f32),
                None => out.resize(n, 1.0),
            },
        }
        Ok(out)
    }
}

/// Samples drawn from one generator (or one set of lanes). Fixed, so a
/// seeded run gives the same numbers whatever the number of threads.
const PIECE: usize = 1 << 14;

/// One seed per piece of `n` samples, from the process generator: it only
/// seeds small fast generators, because drawing every sample from the
/// shared, locked ChaCha generator cost ~10 ns each.
fn piece_seeds(n: usize) -> Vec<u64> {
    with_rng(|rng| (0..n.div_ceil(PIECE)).map(|_| rng.random()).collect())
}

/// Write `n` samples into `out` (which has room for them): `piece(seed, slots)`
/// fills each piece of `PIECE` slots from its own seed, the pieces in
/// parallel on the team.
///
/// # Safety
/// `piece` writes every slot it is given: `out`'s length becomes `n`
/// without any other check that the slots were initialised.
unsafe fn fill_pieces<T: Send>(out: &mut Vec<T>, n: usize, piece: impl Fn(u64, &mut [MaybeUninit<T>]) + Sync) {
    let seeds = piece_seeds(n);
    team::for_each_chunk_mut(&mut out.spare_capacity_mut()[..n], PIECE, |i, slots| piece(seeds[i], slots));
    // SAFETY: the pieces cover the first n slots and the caller's `piece`
    // wrote every slot it was given.
    unsafe { out.set_len(n) };
}

/// [`fill_pieces`] with one rand generator per piece.
fn fill<T: Send>(out: &mut Vec<T>, n: usize, sample: impl Fn(&mut SmallRng) -> T + Sync) {
    // SAFETY: the loop writes every slot of the piece.
    unsafe {
        fill_pieces(out, n, |seed, slots| {
            let mut rng = SmallRng::seed_from_u64(seed);
            for slot in slots {
                slot.write(sample(&mut rng));
            }
        })
    };
}

/// [`fill_pieces`] for samples that are a function of one 64-bit draw
/// (uniform on [0, 1), Bernoulli): each piece from eight generators stepped
/// together, whose independent chains the core overlaps. On two threads a
/// 590K-element dropout mask took 1.5 ms with one rand generator per piece,
/// 0.5 ms this way.
fn fill_lanes<T: Send>(out: &mut Vec<T>, n: usize, map: impl Fn(u64) -> T + Sync) {
    // SAFETY: `Lanes::fill` writes every slot it is given, the tail past the
    // last whole step of the lanes too.
    unsafe {
        fill_pieces(out, n, |seed, slots| {
            let mut lanes = Lanes::new(seed);
            let map = &map;
            // Inlined into `simd`'s frame, compiled for the CPU's widest instruction
            // set: outside it the same fill measured 3x slower.
            simd(#[inline(always)] || lanes.fill(slots, map));
        })
    };
}

/// The largest f32 strictly below `x`.
fn f32_below(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) < x { f } else { f.next_down() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by every test that draws from the process generator: tests run
    /// in parallel, and a draw landing between another test's `seed` and its
    /// samples broke that test's reproducibility check (1 run in ~6).
    static PROCESS_RNG: Mutex<()> = Mutex::new(());

    fn process_rng() -> std::sync::MutexGuard<'static, ()> {
        PROCESS_RNG.lock().unwrap_or_else(|p| p.into_inner())
    }

    // These reached rand's constructors' errors through `expect` (a panic at the boundary).
    #[test]
    fn ranges_f32_cannot_hold_are_sampled_or_refused() {
        let _rng = process_rng();
        let err = Distribution::Uniform(-1e308, 1e308).sample_f64(4).unwrap_err().to_string();
        assert!(err.contains("high - low must be finite"), "{err}");
        assert!(Distribution::Uniform(-1e308, 1e308).sample_f32(4).is_err());
        let narrow = Distribution::Uniform(1.0, 1.0 + 1e-12).sample_f32(8).unwrap();
        assert!(narrow.iter().all(|&x| x == 1.0), "{narrow:?}");
        assert_eq!(Distribution::Uniform(-1e39, 1e39).sample_f32(16).unwrap().len(), 16);
        let err = Distribution::Normal(0.0, 1e300).sample_f32(4).unwrap_err().to_string();
        assert!(err.contains("in f32") && err.contains("non-finite"), "{err}");
    }

    #[test]
    fn seeding_reproduces() {
        let _rng = process_rng();
        seed(7);
        let a = Distribution::Normal(0.0, 1.0).sample_f32(5).unwrap();
        seed(7);
        let b = Distribution::Normal(0.0, 1.0).sample_f32(5).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn large_draws_reproduce_and_fill_every_piece() {
        let _rng = process_rng();
        let n = 3 * PIECE + 5;
        seed(11);
        let a = Distribution::Uniform(-1.0, 1.0).sample_f32(n).unwrap();
        seed(11);
        let b = Distribution::Uniform(-1.0, 1.0).sample_f32(n).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), n);
        // Pieces get different seeds: no two pieces repeat each other.
        assert_ne!(a[..PIECE], a[PIECE..2 * PIECE]);
        let mean = a.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02 && a.iter().all(|v| (-1.0..1.0).contains(v)), "mean {mean}");
        let kept = Distribution::Bernoulli(0.25).sample_f64(n).unwrap();
        let rate = kept.iter().sum::<f64>() / n as f64;
        assert!((rate - 0.25).abs() < 0.01 && kept.iter().all(|&v| v == 0.0 || v == 1.0), "rate {rate}");
    }

    #[test]
    fn lane_draws_are_uniform_and_bernoulli_at_their_rates() {
        let _rng = process_rng();
        let n = 5 * PIECE + 3;
        let u = Distribution::Default.sample_f32(n).unwrap();
        // 16 equal bins, each within 5 standard deviations of n / 16.
        let mut bins = [0usize; 16];
        for &x in &u {
            assert!((0.0..1.0).contains(&x), "{x}");
            bins[(x * 16.0) as usize] += 1;
        }
        let (mean, sd) = (n as f64 / 16.0, (n as f64 * (1.0 / 16.0) * (15.0 / 16.0)).sqrt());
        assert!(bins.iter().all(|&b| (b as f64 - mean).abs() < 5.0 * sd), "{bins:?}");
        // Neighbours come from different lanes, and a lane's successive
        // outputs sit LANES apart: neither pair is correlated.
        for gap in [1, lanes::LANES] {
            let c = correlation(&u[..n - gap], &u[gap..]);
            assert!(c.abs() < 0.01, "correlation at gap {gap}: {c}");
        }
        let b = Distribution::Bernoulli(0.1).sample_f32(n).unwrap();
        let rate = b.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        assert!((rate - 0.1).abs() < 0.005 && b.iter().all(|&v| v == 0.0 || v == 1.0), "rate {rate}");
        assert!(Distribution::Bernoulli(1.0).sample_f32(20).unwrap().iter().all(|&v| v == 1.0));
        assert!(Distribution::Bernoulli(0.0).sample_f64(20).unwrap().iter().all(|&v| v == 0.0));
        let d = Distribution::Default.sample_f64(n).unwrap();
        let mean = d.iter().sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005 && d.iter().all(|v| (0.0..1.0).contains(v)), "mean {mean}");
    }

    fn correlation(a: &[f32], b: &[f32]) -> f64 {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().map(|&x| x as f64).sum::<f64>() / n, b.iter().map(|&x| x as f64).sum::<f64>() / n);
        let cov: f64 = a.iter().zip(b).map(|(&x, &y)| (x as f64 - ma) * (y as f64 - mb)).sum();
        let va: f64 = a.iter().map(|&x| (x as f64 - ma).powi(2)).sum();
        let vb: f64 = b.iter().map(|&y| (y as f64 - mb).powi(2)).sum();
        cov / (va * vb).sqrt()
    }

    #[test]
    fn a_saved_state_resumes_the_same_stream() {
        // A local generator: the process one is shared with tests running in parallel.
        let mut rng = ChaCha12Rng::seed_from_u64(5);
        // Odd draws leave the position inside a ChaCha block and mid-buffer.
        let _: [u32; 3] = std::array::from_fn(|_| rng.random());
        let _: u64 = rng.random();
        let saved = encode_state(&rng);
        let a: Vec<u64> = (0..200).map(|_| rng.random()).collect();
        let mut back = decode_state(&saved).unwrap();
        assert_eq!(encode_state(&back), saved);
        let b: Vec<u64> = (0..200).map(|_| back.random()).collect();
        assert_eq!(a, b);
        // Another stream of the same key is another sequence, and is restored as such.
        let mut other = ChaCha12Rng::seed_from_u64(5);
        other.set_stream(3);
        let first: u64 = other.random();
        let mut other_back = decode_state(&encode_state(&ChaCha12Rng::seed_from_u64(5))).unwrap();
        other_back.set_stream(3);
        assert_eq!(first, other_back.random::<u64>());
    }

    #[test]
    fn seeding_gives_rand_std_rng_stream() {
        // Values drawn before the generator was named ChaCha12Rng stay the same.
        let mut ours = ChaCha12Rng::seed_from_u64(42);
        let mut theirs = rand::rngs::StdRng::seed_from_u64(42);
        let a: [u64; 4] = std::array::from_fn(|_| ours.random());
        let b: [u64; 4] = std::array::from_fn(|_| theirs.random());
        assert_eq!(a, b);
    }

    #[test]
    fn a_state_of_the_wrong_length_is_an_error() {
        let err = set_state(&[0u8; 10]).unwrap_err().to_string();
        assert!(err.contains("56 bytes") && err.contains("found 10"), "{err}");
    }

    #[test]
    fn bad_parameters_are_errors() {
        let _rng = process_rng();
        assert!(Distribution::Uniform(1.0, 0.0).sample_f32(1).is_err());
        assert!(Distribution::Bernoulli(1.5).sample_f32(1).is_err());
    }
}
