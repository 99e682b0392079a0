//! Gradient clipping, as Burn's `GradientClipping`: by value (each element
//! into `[-threshold, threshold]`) or by L2 norm (scale so the norm is at
//! most `max_norm`). Norm clipping takes a list of gradients and measures
//! their joint norm, so one call clips a single tensor (Burn's per-parameter
//! clipping) or a whole model's gradients at once (global-norm clipping).

use rayon::prelude::*;

use super::buffers::{expect_finite, take, wrap};
use crate::dtype::DType;
use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::kernels::copy::contiguous_values;
use crate::kernels::elementwise::map_same;
use crate::kernels::parallel::{go_parallel, simd, CHUNK, PAR_CHEAP};
use crate::tensor::Tensor;
use crate::with_float;

/// Each element clamped into `[-threshold, threshold]`; NaN stays NaN.
pub fn clip_by_value(grad: Tensor, threshold: f64) -> Result<Tensor> {
    const OP: &str = "clip_by_value";
    expect_finite(OP, "threshold", threshold)?;
    if threshold < 0.0 {
        return Err(Error::invalid(OP, format!("threshold must be >= 0, found {threshold}")));
    }
    if let Some(wide) = grad.half_widened() {
        return clip_by_value(wide?, threshold)?.cast(grad.dtype());
    }
    with_float!(OP, grad.dtype(), T => {
        let (hi, lo) = (T::from_f64(threshold), T::from_f64(-threshold));
        map_same(OP, grad, PAR_CHEAP, move |x: T| if x > hi { hi } else if x < lo { lo } else { x })
    })
}

/// The gradients scaled by `min(1, max_norm / (norm + tiny))`, where `norm`
/// is the L2 norm of all their elements together and `tiny` the smallest
/// positive normal float of the dtype (Burn's guard against a zero norm).
pub fn clip_by_norm(grads: Vec<Tensor>, max_norm: f64) -> Result<Vec<Tensor>> {
    const OP: &str = "clip_by_norm";
    expect_finite(OP, "max_norm", max_norm)?;
    if max_norm < 0.0 {
        return Err(Error::invalid(OP, format!("max_norm must be >= 0, found {max_norm}")));
    }
    let Some(first) = grads.first() else { return Ok(grads) };
    let dtype = first.dtype();
    if let Some(other) = grads.iter().find(|g| g.dtype() != dtype) {
        return Err(Error::DTypeMismatch { op: OP, lhs: dtype, rhs: other.dtype() });
    }
    if first.half_widened().is_some() {
        // f16 and bf16 gradients are measured and scaled in f32, each rounded back once.
        let wide = grads.iter().map(|g| g.cast(DType::F32)).collect::<Result<Vec<_>>>()?;
        return clip_by_norm(wide, max_norm)?.into_iter().map(|g| g.cast(dtype)).collect();
    }
    with_float!(OP, dtype, T => {
        let squares: f64 = grads.iter().map(sum_of_squares::<T>).sum::<Result<f64>>()?;
        let tiny = Element::to_f64(<T as num_traits::Float>::min_positive_value());
        let scale = (max_norm / (squares.sqrt() + tiny)).min(1.0);
        if scale >= 1.0 {
            return Ok(grads);
        }
        let s = T::from_f64(scale);
        grads
            .into_iter()
            .map(|g| {
                let shape = g.shape().to_vec();
                let mut buf = take::<T>(OP, g)?;
                scale_in_place(&mut buf, s);
                wrap(buf, &shape)
            })
            .collect()
    })
}

/// Sum of squares accumulated in f64, so long f32 gradients keep precision.
fn sum_of_squares<T: FloatElement>(g: &Tensor) -> Result<f64> {
    let values = contiguous_values::<T>("clip_by_norm", g)?;
    let s: &[T] = &values;
    let chunk_sum = |c: &[T]| simd(#[inline(always)] || c.iter().map(|&x| Element::to_f64(x) * Element::to_f64(x)).sum::<f64>());
    Ok(if go_parallel(s.len(), PAR_CHEAP) { s.par_chunks(CHUNK).map(chunk_sum).sum() } else { chunk_sum(s) })
}

fn scale_in_place<T: FloatElement>(buf: &mut [T], s: T) {
    if go_parallel(buf.len(), PAR_CHEAP) {
        buf.par_chunks_mut(CHUNK).for_each(|c| simd(#[inline(always)] || scale_slice(c, s)));
    } else {
        simd(#[inline(always)] || scale_slice(buf, s));
    }
}

/// A `for` loop: an iterator's `for_each` may stay out of line, outside
/// `simd`'s dispatch to the CPU's vector width.
#[inline(always)]
fn scale_slice<T: FloatElement>(buf: &mut [T], s: T) {
    for x in buf {
        *x = *x * s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::f64_row as t;

    #[test]
    fn value_clipping_clamps_both_sides() {
        let out = clip_by_value(t(&[-2.0, -0.5, 0.0, 0.7, 3.0, f64::NAN]), 1.0).unwrap().to_vec::<f64>();
        assert_eq!(&out[..5], &[-1.0, -0.5, 0.0, 0.7, 1.0]);
        assert!(out[5].is_nan());
    }

    #[test]
    fn norm_clipping_scales_to_the_max_norm() {
        // norm = 5 -> scaled by 2 / 5.
        let out = clip_by_norm(vec![t(&[3.0, 4.0])], 2.0).unwrap();
        let v = out[0].to_vec::<f64>();
        assert!((v[0] - 1.2).abs() < 1e-12 && (v[1] - 1.6).abs() < 1e-12, "{v:?}");
    }

    #[test]
    fn norm_clipping_leaves_small_gradients() {
        let out = clip_by_norm(vec![t(&[0.3, 0.4])], 2.2).unwrap();
        assert_eq!(out[0].to_vec::<f64>(), vec![0.3, 0.4]);
    }

    #[test]
    fn global_norm_spans_every_tensor() {
        // Joint norm = sqrt(9 + 16) = 5: both scaled by 1 / 5.
        let out = clip_by_norm(vec![t(&[3.0]), t(&[0.0, 4.0])], 1.0).unwrap();
        assert!((out[0].to_vec::<f64>()[0] - 0.6).abs() < 1e-12);
        assert!((out[1].to_vec::<f64>()[1] - 0.8).abs() < 1e-12);
    }

    #[test]
    fn zero_gradient_stays_zero() {
        let out = clip_by_norm(vec![t(&[0.0, 0.0])], 1.0).unwrap();
        assert_eq!(out[0].to_vec::<f64>(), vec![0.0, 0.0]);
    }

    #[test]
    fn negative_limits_are_errors() {
        assert!(clip_by_value(t(&[1.0]), -1.0).is_err());
        assert!(clip_by_norm(vec![t(&[1.0])], -1.0).is_err());
    }
}
