//! ONNX's `DynamicQuantizeLinear` on f32: the range pass and the
//! quantizing pass, each one vectorized loop over the values.

use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::copy::contiguous_values;
use crate::tensor::Tensor;

const LANES: usize = 16;

/// `(min(x), max(x), all finite)` over [`LANES`] independent lanes.
#[inline(always)]
fn range(x: &[f32]) -> (f32, f32, bool) {
    let (mut lo, mut hi, mut finite) = ([f32::INFINITY; LANES], [f32::NEG_INFINITY; LANES], [true; LANES]);
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for l in 0..LANES {
            lo[l] = lo[l].min(chunk[l]);
            hi[l] = hi[l].max(chunk[l]);
            finite[l] &= chunk[l].is_finite();
        }
    }
    let (mut lo, mut hi, mut finite) = (lo.iter().fold(f32::INFINITY, |a, &b| a.min(b)), hi.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)), finite.iter().all(|&f| f));
    for &v in tail {
        lo = lo.min(v);
        hi = hi.max(v);
        finite &= v.is_finite();
    }
    (lo, hi, finite)
}

/// `clamp(round_half_even(v / scale) + zero, 0, 255)`. The quotient is
/// clamped to ±512 first (the result saturates there either way), so that
/// adding and taking away 1.5 * 2^23 rounds it half to even in the default
/// rounding mode, which vectorizes where a rounding call would not.
#[inline(always)]
fn quantize(v: f32, scale: f32, zero: f32) -> i64 {
    const MAGIC: f32 = 12_582_912.0;
    let q = (v / scale).clamp(-512.0, 512.0);
    (((q + MAGIC) - MAGIC) + zero).clamp(0.0, 255.0) as i64
}

#[inline(always)]
fn quantize_all(x: &[f32], out: &mut [i64], scale: f32, zero: f32) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = quantize(v, scale, zero);
    }
}

/// `(scale, zero)` of `DynamicQuantizeLinear` for values in `lo..=hi`.
fn params(lo: f32, hi: f32) -> (f32, f32) {
    let (top, bottom) = (hi.max(0.0), lo.min(0.0));
    let scale = if top == bottom { 1.0 } else { top - bottom } / 255.0f32;
    let zero = (0.0f32 - bottom / scale).clamp(0.0, 255.0).round_ties_even();
    (scale, zero)
}

/// The `(scale, zero)` [`dynamic_quantize_u8`] takes for `values` (its
/// values are then [`crate::kernels::qgemm::quantize_u8`] of them); `None` for an empty
/// slice or a non-finite value.
pub fn dynamic_quantize_params(values: &[f32]) -> Option<(f32, u8)> {
    if values.is_empty() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: wide() said the CPU has AVX-512 F and DQ.
    let (lo, hi, finite) = if wide() { unsafe { range_avx512(values) } } else { range(values) };
    #[cfg(not(target_arch = "x86_64"))]
    let (lo, hi, finite) = range(values);
    if !finite {
        return None;
    }
    let (scale, zero) = params(lo, hi);
    Some((scale, zero as u8))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn range_avx512(x: &[f32]) -> (f32, f32, bool) {
    range(x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn quantize_all_avx512(x: &[f32], out: &mut [i64], scale: f32, zero: f32) {
    quantize_all(x, out, scale, zero);
}

fn wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::kernels::qgemm::vnni_available() && is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// ONNX's `DynamicQuantizeLinear` of a non-empty f32 tensor: `(y, scale,
/// zero)` with `y` an I64 tensor of `x`'s shape holding uint8 values,
/// `scale = (max(x, 0) - min(x, 0)) / 255` (1 / 255 when both are 0) and
/// `zero = round(clamp(-min(x, 0) / scale, 0, 255))`, every step in f32 as
/// the reference computes it. `None` for another dtype, an empty tensor or
/// a non-finite value (the caller's general path handles those).
pub fn dynamic_quantize_u8(x: &Tensor) -> Result<Option<(Tensor, f32, i64)>> {
    if x.dtype() != DType::F32 || x.numel() == 0 {
        return Ok(None);
    }
    let values = contiguous_values::<f32>("DynamicQuantizeLinear", x)?;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: wide() said the CPU has AVX-512 F and DQ.
    let (lo, hi, finite) = if wide() { unsafe { range_avx512(&values) } } else { range(&values) };
    #[cfg(not(target_arch = "x86_64"))]
    let (lo, hi, finite) = range(&values);
    if !finite {
        return Ok(None);
    }
    let (scale, zero) = params(lo, hi);
    let mut out = vec![0i64; values.len()];
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: as above.
        unsafe { quantize_all_avx512(&values, &mut out, scale, zero) };
    } else {
        quantize_all(&values, &mut out, scale, zero);
    }
    #[cfg(not(target_arch = "x86_64"))]
    quantize_all(&values, &mut out, scale, zero);
    Ok(Some((Tensor::from_vec(out, x.shape())?, scale, zero as i64)))
}
