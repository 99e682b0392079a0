//! Random numbers: one seedable generator for the process, so that
//! `B.seed(n)` makes initialisation, dropout and shuffling reproducible.

use std::sync::{LazyLock, Mutex};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Bernoulli, Distribution as _, Normal, Uniform};

use crate::error::{Error, Result};

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

static RNG: LazyLock<Mutex<StdRng>> = LazyLock::new(|| Mutex::new(StdRng::from_os_rng()));

/// Reset the process generator to a known state.
pub fn seed(seed: u64) {
    *RNG.lock().unwrap_or_else(|p| p.into_inner()) = StdRng::seed_from_u64(seed);
}

/// Run `f` with the process generator.
pub fn with_rng<R>(f: impl FnOnce(&mut StdRng) -> R) -> R {
    let mut guard = RNG.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut guard)
}

impl Distribution {
    pub fn validate(&self) -> Result<()> {
        let bad = |r: String| Err(Error::invalid("random", r));
        match *self {
            Distribution::Bernoulli(p) if !(0.0..=1.0).contains(&p) => bad(format!("Bernoulli probability must be in [0, 1], found {p}")),
            Distribution::Uniform(lo, hi) if lo >= hi || !lo.is_finite() || !hi.is_finite() => {
                bad(format!("Uniform needs finite low < high, found low={lo}, high={hi}"))
            }
            Distribution::Normal(m, s) if s < 0.0 || !m.is_finite() || !s.is_finite() => {
                bad(format!("Normal needs a finite mean and std >= 0, found mean={m}, std={s}"))
            }
            _ => Ok(()),
        }
    }

    /// `n` samples as f64, in memory reserved up front (an error, not an
    /// abort, when it cannot be had).
    pub fn sample_f64(&self, n: usize) -> Result<Vec<f64>> {
        self.validate()?;
        let mut out: Vec<f64> = crate::shape::try_with_capacity("random", n)?;
        with_rng(|rng| match *self {
            Distribution::Default => out.extend((0..n).map(|_| rng.random::<f64>())),
            Distribution::Bernoulli(p) => {
                let d = Bernoulli::new(p).expect("validated");
                out.extend((0..n).map(|_| d.sample(rng) as u8 as f64));
            }
            Distribution::Uniform(lo, hi) => {
                let d = Uniform::new(lo, hi).expect("validated");
                out.extend((0..n).map(|_| d.sample(rng)));
            }
            Distribution::Normal(m, s) => {
                let d = Normal::new(m, s).expect("validated");
                out.extend((0..n).map(|_| d.sample(rng)));
            }
        });
        Ok(out)
    }

    /// `n` samples as f32 (sampled in f32 where that keeps them in range).
    pub fn sample_f32(&self, n: usize) -> Result<Vec<f32>> {
        self.validate()?;
        let mut out: Vec<f32> = crate::shape::try_with_capacity("random", n)?;
        with_rng(|rng| match *self {
            Distribution::Default => out.extend((0..n).map(|_| rng.random::<f32>())),
            Distribution::Uniform(lo, hi) => {
                let d = Uniform::new(lo as f32, hi as f32).expect("validated");
                // Rounding lo..hi to f32 can land exactly on hi; keep [lo, hi).
                out.extend((0..n).map(|_| d.sample(rng).min(f32_below(hi))));
            }
            Distribution::Normal(m, s) => {
                let d = Normal::new(m as f32, s as f32).expect("validated");
                out.extend((0..n).map(|_| d.sample(rng)));
            }
            Distribution::Bernoulli(p) => {
                let d = Bernoulli::new(p).expect("validated");
                out.extend((0..n).map(|_| d.sample(rng) as u8 as f32));
            }
        });
        Ok(out)
    }
}

/// The largest f32 strictly below `x`.
fn f32_below(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) < x { f } else { f.next_down() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeding_reproduces() {
        seed(7);
        let a = Distribution::Normal(0.0, 1.0).sample_f32(5).unwrap();
        seed(7);
        let b = Distribution::Normal(0.0, 1.0).sample_f32(5).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(Distribution::Uniform(1.0, 0.0).sample_f32(1).is_err());
        assert!(Distribution::Bernoulli(1.5).sample_f32(1).is_err());
    }
}
