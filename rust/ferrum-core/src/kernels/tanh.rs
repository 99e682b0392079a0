//! A branch-free `tanh` for f32, so loops using it (`tanh`, LSTM and GRU
//! cells, mish's gradient) vectorise; libm's `tanhf` is an opaque call per
//! element. Its multiply-adds are `mul_add`, one FMA each inside `simd` and
//! a libm call outside it, so callers inline it into `simd` loops.

use crate::element::FloatElement;

/// Cephes' `tanhf` polynomial for |x| < 0.625: `tanh(x) = x + x z p(z)` with
/// `z = x^2` and `p(z) = P[0] z^4 + P[1] z^3 + ... + P[4]`.
const P: [f64; 5] = [-5.704_988_727_45e-3, 2.063_908_879_54e-2, -5.373_971_555_31e-2, 1.333_144_220_36e-1, -3.333_328_194_22e-1];

/// `tanh(v)`: for f32 a polynomial below |v| = 0.625 and `1 - 2 / (e^2|v| + 1)`
/// above, both computed and one selected (about 1 ulp); libm's for f64.
#[inline(always)]
pub fn tanh<T: FloatElement>(v: T) -> T {
    if std::mem::size_of::<T>() != 4 {
        return v.tanh();
    }
    let c = T::from_f64;
    let a = v.abs();
    let z = v * v;
    let p = P[1..].iter().fold(c(P[0]), |acc, &k| acc.mul_add(z, c(k)));
    let poly = (p * z).mul_add(v, v);
    // e^2a overflows to +inf past a ~ 44, and 2 / inf = 0 gives exactly 1.
    let e = (a + a).simd_exp();
    let big = T::one() - (T::one() + T::one()) / (e + T::one());
    let big = if v < T::zero() { -big } else { big };
    if a < c(0.625) { poly } else { big }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::parallel::simd;

    #[test]
    fn dense_sweep_against_f64() {
        // Every 2^-12 over [-12, 12], inside `simd` where the multiply-adds fuse.
        let xs: Vec<f32> = (-12 * 4096..=12 * 4096).map(|i| i as f32 / 4096.0).collect();
        let mut got = vec![0f32; xs.len()];
        simd(#[inline(always)] || got.iter_mut().zip(&xs).for_each(|(o, &x)| *o = tanh(x)));
        for (&x, &g) in xs.iter().zip(&got) {
            let want = (x as f64).tanh();
            let rel = (g as f64 - want).abs() / want.abs().max(1e-30);
            assert!(rel < 4e-7, "tanh({x}) = {g:e}, expected {want:e} (relative error {rel:e})");
        }
    }

    #[test]
    fn edges() {
        assert_eq!(tanh(0.0f32), 0.0);
        assert_eq!(tanh(1e-30f32), 1e-30);
        assert_eq!(tanh(1e6f32), 1.0);
        assert_eq!(tanh(-1e6f32), -1.0);
        assert_eq!(tanh(f32::INFINITY), 1.0);
        assert_eq!(tanh(f32::NEG_INFINITY), -1.0);
        assert!(tanh(f32::NAN).is_nan());
        assert_eq!(tanh(0.3f64), 0.3f64.tanh());
    }
}
