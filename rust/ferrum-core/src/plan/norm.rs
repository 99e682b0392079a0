//! Normalizations and reductions: softmax, LayerNormalization, mean over dims.

use super::attrs::Attrs;
use super::elementwise::to_rank;
use super::Op;
use rayon::prelude::*;

use crate::dtype::DType;
use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::ops::unary::FloatUnary;
use crate::tensor::Tensor;
use crate::Scalar;

pub(super) fn softmax(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Softmax(a.int("dim")? as isize))
}

pub(super) fn layer_norm(a: &Attrs<'_>) -> Result<Op> {
    let start = usize::try_from(a.int("start")?).map_err(|_| Error::invalid("Plan.build", "layer_norm: start must be non-negative"))?;
    Ok(Op::LayerNorm { start, epsilon: a.float("epsilon")? })
}

pub(super) fn rms_norm(a: &Attrs<'_>) -> Result<Op> {
    let start = usize::try_from(a.int("start")?).map_err(|_| Error::invalid("Plan.build", "rms_norm: start must be non-negative"))?;
    Ok(Op::RmsNorm { start, epsilon: a.float("epsilon")? })
}

/// RMSNorm over the dims from `start` on, times `scale`: fused when the scale holds one value per
/// normalized element, else normalized then multiplied with broadcasting.
pub(super) fn run_rms_norm(start: usize, epsilon: f64, x: Tensor, scale: Option<Tensor>) -> Result<Tensor> {
    let n: usize = x.shape().get(start..).map_or(0, |s| s.iter().product());
    let fits = |t: &Tensor| t.numel() == n && t.shape().iter().rev().zip(x.shape().iter().rev()).all(|(a, b)| a == b);
    match scale {
        Some(s) if !fits(&s) => {
            let rank = x.rank();
            x.rms_norm(start, epsilon, None)?.binary_owned(BinaryOp::Mul, to_rank(s, rank)?)
        }
        s => x.rms_norm(start, epsilon, s.as_ref()),
    }
}

pub(super) fn mean_dims(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::MeanDims { dims: a.dims("dims")?, shape: a.dims("shape")? })
}

/// ONNX LayerNormalization over the dims from `start` on: `(x - mean) / sqrt(var + epsilon) * scale + bias`.
/// With a scale (and bias) of one value per normalized element, one fused pass per row; otherwise
/// (a scale that broadcasts) the op-by-op path's sequence of kernels.
pub(super) fn run_layer_norm(start: usize, epsilon: f64, x: Tensor, scale: Tensor, bias: Option<Tensor>) -> Result<Tensor> {
    let rank = x.rank();
    if start >= rank.max(1) {
        return Err(Error::DimOutOfRange { op: "layer_norm", dim: start as isize, rank });
    }
    let n: usize = x.shape()[start..].iter().product();
    let fits = |t: &Tensor| t.dtype() == x.dtype() && t.numel() == n && t.shape().iter().rev().zip(x.shape().iter().rev()).all(|(a, b)| a == b);
    if n > 0 && fits(&scale) && bias.as_ref().is_none_or(fits) {
        match x.dtype() {
            DType::F32 => return rows::<f32>(&x, n, epsilon, &scale, bias.as_ref()),
            DType::F64 => return rows::<f64>(&x, n, epsilon, &scale, bias.as_ref()),
            _ => {}
        }
    }
    let dims: Vec<isize> = (start as isize..rank as isize).collect();
    let mean = x.mean_dims(&dims)?;
    let centered = x.binary_owned(BinaryOp::Sub, mean)?;
    let var = centered.float_unary(FloatUnary::Square)?.mean_dims(&dims)?;
    let inv_std = var.binary_scalar_owned(BinaryOp::Add, Scalar::Float(epsilon))?.float_unary_owned(FloatUnary::Sqrt)?.float_unary_owned(FloatUnary::Recip)?;
    let y = centered.binary_owned(BinaryOp::Mul, inv_std)?;
    let out = y.binary_owned(BinaryOp::Mul, to_rank(scale, rank)?)?;
    match bias {
        Some(b) => out.binary_owned(BinaryOp::Add, to_rank(b, rank)?),
        None => Ok(out),
    }
}

/// Elements above which the rows are normalized in parallel.
const PAR_ELEMS: usize = 1 << 15;

/// LayerNorm of each contiguous row of `n` elements in one pass over it (two over its values, in
/// f64), `scale` and `bias` holding one value per element of a row.
fn rows<T: FloatElement>(x: &Tensor, n: usize, epsilon: f64, scale: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let x = x.try_contiguous("layer_norm")?;
    let xs = x.as_slice::<T>().ok_or_else(|| Error::Internal { reason: "layer_norm: a contiguous tensor without its slice".into() })?;
    let g: Vec<f64> = scale.try_to_vec::<T>("layer_norm")?.into_iter().map(Element::to_f64).collect();
    let b: Vec<f64> = match bias {
        Some(t) => t.try_to_vec::<T>("layer_norm")?.into_iter().map(Element::to_f64).collect(),
        None => vec![0.0; n],
    };
    let mut out = vec![T::ZERO; xs.len()];
    let row = |(src, dst): (&[T], &mut [T])| {
        let mean = src.iter().map(|v| Element::to_f64(*v)).sum::<f64>() / n as f64;
        let var = src.iter().map(|v| (Element::to_f64(*v) - mean).powi(2)).sum::<f64>() / n as f64;
        let inv = 1.0 / (var + epsilon).sqrt();
        for (((o, v), g), b) in dst.iter_mut().zip(src).zip(&g).zip(&b) {
            *o = <T as Element>::from_f64((Element::to_f64(*v) - mean) * inv * g + b);
        }
    };
    if xs.len() >= PAR_ELEMS {
        xs.par_chunks(n).zip(out.par_chunks_mut(n)).for_each(row);
    } else {
        xs.chunks(n).zip(out.chunks_mut(n)).for_each(row);
    }
    Tensor::from_vec(out, x.shape())
}

pub(super) fn run_mean_dims(dims: &[isize], shape: &[isize], x: Tensor) -> Result<Tensor> {
    x.mean_dims(dims)?.reshape(shape)
}
