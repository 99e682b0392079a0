//! Integer matrices for ONNX's integer products (`MatMulInteger`,
//! `QLinearMatMul`): an int8 weight packed once with its zero points, times
//! u8 inputs at each call, exact in i32 on the int8 tiles.

use std::borrow::Cow;

use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::kernels::copy::contiguous_values;
use super::dynamic::dynamic_quantize_params;
use crate::kernels::qgemm::{self, PackedQ8, Rows};
use crate::tensor::Tensor;

/// Products below this many multiply-adds run on one thread.
const PAR_FLOPS: usize = 1 << 18;

/// A `[k, n]` matrix of int8 values (held as integers in -128..=127) and
/// its zero points (one, or one per column), packed for the int8 tiles.
#[derive(Clone, Debug)]
pub struct Int8Matrix {
    packed: PackedQ8,
    zero: Vec<i32>,
}

/// An Int tensor's values as i64.
pub(super) fn ints(op: &'static str, t: &Tensor) -> Result<Vec<i64>> {
    t.expect_kind(op, Kind::Int)?;
    let t = if t.dtype() == DType::I64 { t.clone() } else { t.cast(DType::I64)? };
    Ok(contiguous_values::<i64>(op, &t)?.into_owned())
}

fn all_in(values: &[i64], lo: i64, hi: i64) -> bool {
    // A fold without early exit, so that the check vectorizes.
    values.iter().fold(true, |ok, v| ok & (lo..=hi).contains(v))
}

/// An Int tensor's values as u8 (u8 tensors borrowed, others checked and
/// narrowed in one pass); `None` when a value is outside 0..=255.
pub(super) fn u8_values<'a>(op: &'static str, t: &'a Tensor) -> Result<Option<Cow<'a, [u8]>>> {
    t.expect_kind(op, Kind::Int)?;
    if t.dtype() == DType::U8 {
        return Ok(Some(contiguous_values::<u8>(op, t)?));
    }
    let wide;
    let v: &[i64] = if t.dtype() == DType::I64 {
        wide = contiguous_values::<i64>(op, t)?;
        &wide
    } else {
        wide = Cow::Owned(ints(op, t)?);
        &wide
    };
    Ok(all_in(v, 0, 255).then(|| Cow::Owned(v.iter().map(|&x| x as u8).collect())))
}

/// An Int tensor's values as i8; `None` when a value is outside -128..=127.
pub(super) fn i8_values(op: &'static str, t: &Tensor) -> Result<Option<Vec<i8>>> {
    let v = ints(op, t)?;
    Ok(all_in(&v, -128, 127).then(|| v.iter().map(|&x| x as i8).collect()))
}

impl Int8Matrix {
    /// Packs `values` (an Int tensor `[k, n]`) with `zero` (1 or `n` zero
    /// points); `None` when a value or zero point is outside int8's range
    /// (the caller computes such products another way).
    pub fn new(values: &Tensor, zero: &[i64]) -> Result<Option<Int8Matrix>> {
        let op = "integer matmul";
        let shape = values.shape();
        if shape.len() != 2 {
            return Err(Error::RankMismatch { op, expected: 2, found: shape.len(), shape: shape.to_vec() });
        }
        let (k, n) = (shape[0], shape[1]);
        if zero.len() != 1 && zero.len() != n {
            return Err(Error::invalid(op, format!("a [{k}, {n}] weight takes 1 or {n} zero points, found {}", zero.len())));
        }
        let v = ints(op, values)?;
        if k == 0 || n == 0 || k > qgemm::MAX_K || !all_in(&v, -128, 127) || !all_in(zero, -128, 127) {
            return Ok(None);
        }
        let q: Vec<i8> = v.iter().map(|&x| x as i8).collect();
        let packed = qgemm::pack_weights(&q, &vec![1.0; n], k, n)?;
        Ok(Some(Int8Matrix { packed, zero: zero.iter().map(|&z| z as i32).collect() }))
    }

    /// `[k, n]`.
    pub fn shape(&self) -> [usize; 2] {
        [self.packed.k, self.packed.n]
    }

    /// `(a - a_zero) @ (self - zero)` for an Int `a` of shape `[..., k]`, an
    /// Int tensor `[..., n]` (i64 holding ONNX's int32 result); `a_zero` is 1
    /// value, or one per row of a rank-2 `a`. `None` when a value of `a` or
    /// a zero point is outside u8's range.
    pub fn matmul(&self, a: &Tensor, a_zero: &[i64]) -> Result<Option<Tensor>> {
        let op = "integer matmul";
        let [k, n] = self.shape();
        let shape = a.shape();
        if shape.is_empty() || shape[shape.len() - 1] != k {
            return Err(Error::shapes(op, shape, &[k, n], format!("the input's last dim must be the weight's {k} rows")));
        }
        let m: usize = shape[..shape.len() - 1].iter().product();
        if a_zero.len() != 1 && !(shape.len() == 2 && a_zero.len() == m) {
            return Err(Error::invalid(op, format!("an input of shape {shape:?} takes 1 zero point (or one per row of a matrix), found {}", a_zero.len())));
        }
        if !all_in(a_zero, 0, 255) {
            return Ok(None);
        }
        let Some(a8) = u8_values(op, a)? else { return Ok(None) };
        let za: Vec<i32> = a_zero.iter().map(|&z| z as i32).collect();
        let mut out = vec![0i32; m * n];
        let threads = if m.saturating_mul(n).saturating_mul(k) >= PAR_FLOPS { rayon::current_num_threads() } else { 1 };
        qgemm::matmul_u8s8(&a8, m, &za, &self.packed, &self.zero, &mut out, threads)?;
        let mut out_shape = shape.to_vec();
        *out_shape.last_mut().expect("rank checked above") = n;
        Ok(Some(Tensor::from_vec(out.into_iter().map(i64::from).collect::<Vec<i64>>(), &out_shape)?))
    }

    /// onnxruntime's dynamically quantized linear in one call: `x` (F32
    /// `[..., k]`) quantized as `DynamicQuantizeLinear` does (per tensor,
    /// uint8), the exact product with `self`, then `f32(sum) * (x_scale *
    /// w_scale[j]) + bias[j]` and `relu`, every step rounded in f32 as the
    /// graph's Cast, Mul, Add and Relu nodes compute it: an F32 tensor
    /// `[..., n]`. `w_scale` holds 1 or `n` values, `bias` `n`. `None` for
    /// another dtype, an empty `x` or a non-finite value (the caller runs
    /// the nodes).
    pub fn dynamic_linear(&self, x: &Tensor, w_scale: &[f32], bias: Option<&Tensor>, relu: bool) -> Result<Option<Tensor>> {
        let op = "dynamic int8 linear";
        let [k, n] = self.shape();
        let shape = x.shape();
        if x.dtype() != DType::F32 || x.numel() == 0 {
            return Ok(None);
        }
        if shape.is_empty() || shape[shape.len() - 1] != k {
            return Err(Error::shapes(op, shape, &[k, n], format!("the input's last dim must be the weight's {k} rows")));
        }
        if w_scale.len() != 1 && w_scale.len() != n {
            return Err(Error::invalid(op, format!("a [{k}, {n}] weight takes 1 or {n} scales, found {}", w_scale.len())));
        }
        let bias = match bias {
            Some(b) if b.dtype() != DType::F32 || b.shape() != [n] => {
                return Err(Error::invalid(op, format!("expected an f32 bias of shape [{n}], found {:?} of shape {:?}", b.dtype(), b.shape())));
            }
            Some(b) => Some(contiguous_values::<f32>(op, b)?),
            None => None,
        };
        let values = contiguous_values::<f32>(op, x)?;
        let Some((sx, zx)) = dynamic_quantize_params(&values) else { return Ok(None) };
        let m = values.len() / k;
        // The graph multiplies the two scales in its own node, in f32.
        let scale: Vec<f32> = w_scale.iter().map(|&s| sx * s).collect();
        let mut out = vec![0f32; m * n];
        let threads = if m.saturating_mul(n).saturating_mul(k) >= PAR_FLOPS { rayon::current_num_threads() } else { 1 };
        qgemm::matmul_u8s8_scaled(Rows::Quantized { x: &values, scale: sx, zero: zx }, m, i32::from(zx), &self.packed, &self.zero, &scale, bias.as_deref(), relu, &mut out, threads)?;
        let mut out_shape = shape.to_vec();
        *out_shape.last_mut().expect("rank checked above") = n;
        Ok(Some(Tensor::from_vec(out, &out_shape)?))
    }
}
