//! A branch-free `exp` for f32. libm's `expf` is an opaque call per element,
//! which stops LLVM from vectorising any loop that uses it; this version is
//! plain arithmetic and selects, so inside `simd(|| ...)` it runs 8 or 16
//! lanes at a time. Its multiply-adds are written as `mul_add`, which inside
//! `simd`'s AVX2/AVX-512 function are single FMA instructions: written as a
//! product and a sum they stayed two instructions each (Rust does not fuse
//! them), and exp of 1M floats took 1.7x as long. Outside such a function
//! `mul_add` is a libm call, so callers inline this into `simd` loops, as
//! every caller in the engine does (the built extension has no call to
//! `fmaf`). Accuracy on [-87, 88]: max relative error 8e-8 against the exact
//! value and 1.2e-7 (1 ulp) against `f32::exp`; the test holds it below 3e-7
//! on a dense sweep.

/// Above this every f32 `exp` overflows; clamping here keeps the exponent
/// arithmetic in range and still gives +inf.
const HI: f32 = 88.8;
/// Below this every f32 `exp` rounds to 0 (the smallest subnormal is
/// `exp(-103.28)`); clamping here keeps the exponent in range.
const LO: f32 = -104.0;
/// Adding 1.5 * 2^23 rounds to the nearest integer, which then sits in the
/// low mantissa bits of the sum (no float-to-int conversion needed).
const ROUND: f32 = 12_582_912.0;
/// ln 2 split so that `n * LN2_HI` is exact for every `n` reached here
/// (Cody-Waite reduction).
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// Minimax polynomial for `(exp(r) - 1 - r) / r^2` on [-ln2/2, ln2/2] (Cephes).
const P: [f32; 6] = [1.987_569_2e-4, 1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5];

/// `e^x` for f32: +inf above ~88.72, subnormals and then 0 below ~-87.3,
/// NaN for NaN.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // NaN passes through the clamp.
    let x = x.clamp(LO, HI);
    // x = n ln2 + r with n an integer and |r| <= ln2 / 2.
    let t = x.mul_add(std::f32::consts::LOG2_E, ROUND);
    let n = t.to_bits() as i32 - ROUND.to_bits() as i32;
    let nf = t - ROUND;
    let r = (-nf).mul_add(LN2_LO, (-nf).mul_add(LN2_HI, x));
    let p = P[0].mul_add(r, P[1]).mul_add(r, P[2]).mul_add(r, P[3]).mul_add(r, P[4]).mul_add(r, P[5]);
    let er = p.mul_add(r * r, r) + 1.0;
    // 2^n in two factors: n spans [-150, 128], beyond one normal exponent,
    // and the two-step product rounds to subnormals or overflows correctly.
    let n1 = n >> 1;
    let n2 = n - n1;
    er * pow2(n1) * pow2(n2)
}

/// 2^n for n in the normal exponent range [-126, 127].
#[inline(always)]
fn pow2(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::parallel::simd;

    fn rel_err(got: f32, want: f32) -> f64 {
        ((got as f64 - want as f64) / want as f64).abs()
    }

    #[test]
    fn dense_sweep_matches_std_within_3e_7() {
        // Every 2^-14 (~6e-5) over [-87, 88]: ~2.9M points, plus the exact
        // integers and half-integers where range reduction switches n.
        let step = 1.0f64 / 16384.0;
        let count = (175.0 / step) as usize;
        let xs: Vec<f32> = (0..=count).map(|i| (-87.0 + i as f64 * step) as f32).collect();
        let mut got = vec![0f32; xs.len()];
        simd(#[inline(always)] || got.iter_mut().zip(&xs).for_each(|(o, &x)| *o = exp_f32(x)));
        let (worst, at) = xs
            .iter()
            .zip(&got)
            .map(|(&x, &g)| (rel_err(g, x.exp()), x))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        assert!(worst < 3e-7, "max relative error {worst:e} at x = {at}");
    }

    #[test]
    fn scalar_and_vector_paths_agree() {
        let xs: Vec<f32> = (0..1000).map(|i| -80.0 + i as f32 * 0.161).collect();
        let mut v = vec![0f32; xs.len()];
        simd(#[inline(always)] || v.iter_mut().zip(&xs).for_each(|(o, &x)| *o = exp_f32(x)));
        let s: Vec<f32> = xs.iter().map(|&x| exp_f32(x)).collect();
        assert_eq!(v, s);
    }

    #[test]
    fn edges() {
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(exp_f32(1.0), std::f32::consts::E);
        assert_eq!(exp_f32(89.0), f32::INFINITY);
        assert_eq!(exp_f32(1e4), f32::INFINITY);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(-104.0), 0.0);
        assert_eq!(exp_f32(-1e4), 0.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        // Largest finite result and the subnormal range.
        assert_eq!(exp_f32(88.72), 88.72f32.exp());
        for x in [-88.0f32, -95.0, -100.0, -103.0] {
            let (g, w) = (exp_f32(x), x.exp());
            assert!(g > 0.0 && (g - w).abs() <= f32::from_bits(1), "{x}: {g:e} vs {w:e}");
        }
    }
}
