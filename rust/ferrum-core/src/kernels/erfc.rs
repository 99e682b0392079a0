//! A branch-free `erfc` for f32, so loops using it (GELU) vectorise; libm's
//! `erfcf` is an opaque call per element. Like `exp_f32` its multiply-adds
//! are `mul_add`, one FMA each inside `simd` and a libm call outside it, so
//! callers inline it into `simd` loops.

use super::exp::exp_f32;

/// Chebyshev fit of `ln(erfc(z) / t) + z^2` in `t = 1 / (1 + z/2)`, with
/// fractional error below 1.2e-7 over all z >= 0 (Numerical Recipes, erfcc).
const C: [f32; 10] = [
    -1.265_512_2,
    1.000_023_7,
    0.374_091_96,
    0.096_784_18,
    -0.186_288_06,
    0.278_868_07,
    -1.135_204,
    1.488_515_9,
    -0.822_152_2,
    0.170_872_77,
];

/// `erfc(x)` for f32. Relative error below 5e-7 (~4 ulp) while the result
/// is above ~1e-4; further out, rounding `z^2` to f32 inside the exponential
/// adds about `6e-8 * z^2` (1e-5 at erfc ~ 1e-35), the same order as the
/// error any f32 caller already gets from rounding its own argument.
#[inline(always)]
pub fn erfc_f32(x: f32) -> f32 {
    let z = x.abs();
    let t = 1.0 / 0.5f32.mul_add(z, 1.0);
    let p = C[1..9].iter().rev().fold(C[9], |acc, &c| acc.mul_add(t, c));
    let tail = t * exp_f32((-z).mul_add(z, t.mul_add(p, C[0])));
    // erfc(-z) = 2 - erfc(z); NaN fails the test and stays NaN either way.
    if x >= 0.0 { tail } else { 2.0 - tail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::parallel::simd;

    #[test]
    fn dense_sweep_against_f64_erfc() {
        // Every 2^-13 over [-10, 10]; results below the f32 normal range are
        // subnormal and carry less precision by design.
        let xs: Vec<f32> = (0..=20 * 8192).map(|i| -10.0 + i as f32 / 8192.0).collect();
        let mut got = vec![0f32; xs.len()];
        simd(#[inline(always)] || got.iter_mut().zip(&xs).for_each(|(o, &x)| *o = erfc_f32(x)));
        for (&x, &g) in xs.iter().zip(&got) {
            let want = libm::erfc(x as f64);
            if want < f32::MIN_POSITIVE as f64 {
                continue;
            }
            let z2 = (x as f64) * (x as f64);
            let bound = 5e-7 + 1.5e-7 * z2;
            let rel = ((g as f64 - want) / want).abs();
            assert!(rel < bound, "erfc({x}) = {g:e}, expected {want:e} (relative error {rel:e})");
        }
    }

    #[test]
    fn edges() {
        assert!((erfc_f32(0.0) - 1.0).abs() <= f32::EPSILON);
        assert_eq!(erfc_f32(f32::INFINITY), 0.0);
        assert_eq!(erfc_f32(f32::NEG_INFINITY), 2.0);
        assert_eq!(erfc_f32(-1e4), 2.0);
        assert_eq!(erfc_f32(1e4), 0.0);
        assert!(erfc_f32(f32::NAN).is_nan());
    }
}
