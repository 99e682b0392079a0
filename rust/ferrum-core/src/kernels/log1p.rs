//! A branch-free `ln(1 + u)` for f32 on `u` in [0, 1], the range softplus-style
//! formulas need (`u = exp(-|x|)`); libm's `log1pf` is an opaque call per
//! element and stops vectorisation. Its multiply-adds are `mul_add`, one FMA
//! each inside `simd` and a libm call outside it, so callers inline it into
//! `simd` loops.

/// `ln(1 + u) = 2 atanh(s)` with `s = u / (2 + u)` in [0, 1/3]; these are
/// the series coefficients `1 / (2k + 1)` of `atanh(s) / s` in `s^2`,
/// truncated where the next term is below 2e-9 relative.
const C: [f32; 8] = [1.0, 1.0 / 3.0, 1.0 / 5.0, 1.0 / 7.0, 1.0 / 9.0, 1.0 / 11.0, 1.0 / 13.0, 1.0 / 15.0];

/// `ln(1 + u)` for `u` in [0, 1] within ~2 ulp; accurate relative to the
/// result even for tiny `u` (no `1 + u` cancellation). NaN stays NaN.
#[inline(always)]
pub fn ln_1p_unit_f32(u: f32) -> f32 {
    let s = u / (2.0 + u);
    let s2 = s * s;
    let p = C[..7].iter().rev().fold(C[7], |acc, &c| acc.mul_add(s2, c));
    2.0 * s * p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::parallel::simd;

    #[test]
    fn dense_sweep_against_f64() {
        // Every 2^-20 over [0, 1], plus tiny values down to the subnormals.
        let mut us: Vec<f32> = (0..=1 << 20).map(|i| i as f32 / (1 << 20) as f32).collect();
        us.extend((0..140).map(|e| 2f32.powi(-e) * 0.7));
        let mut got = vec![0f32; us.len()];
        simd(#[inline(always)] || got.iter_mut().zip(&us).for_each(|(o, &u)| *o = ln_1p_unit_f32(u)));
        for (&u, &g) in us.iter().zip(&got) {
            let want = (u as f64).ln_1p();
            if want < f32::MIN_POSITIVE as f64 {
                assert!((g as f64 - want).abs() <= f32::from_bits(1) as f64, "ln_1p({u:e}) = {g:e}, expected {want:e}");
                continue;
            }
            let rel = ((g as f64 - want) / want).abs();
            assert!(rel < 2.5e-7, "ln_1p({u:e}) = {g:e}, expected {want:e} (relative error {rel:e})");
        }
    }

    #[test]
    fn edges() {
        assert_eq!(ln_1p_unit_f32(0.0), 0.0);
        assert_eq!(ln_1p_unit_f32(1.0), std::f32::consts::LN_2);
        assert!(ln_1p_unit_f32(f32::NAN).is_nan());
    }
}
