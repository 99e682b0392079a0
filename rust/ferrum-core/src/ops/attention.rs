//! Attention weights in one pass: `softmax(where(mask, fill, scale * x))`
//! along the last dim, as multi-head attention computes them from its
//! scores (Burn's `mask_fill` with `min_float`, then `softmax`). Scaling,
//! masking and the softmax read and write each row once instead of three
//! separate ops each making a full copy; backward is fused the same way.

use std::borrow::Cow;

use crate::autodiff::{record, FnBackward, Var};
use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::kernels::parallel::{go_parallel, simd, CHUNK, PAR_COSTLY};
use crate::kernels::team::for_each_chunk_mut;
use crate::layout::{DimVec, Layout};
use crate::ops::conv::values;
use crate::tensor::Tensor;
use crate::{with_float, Kind};

/// A tensor broadcast onto the scores' shape (same rank, dims equal or 1),
/// read row by row: where each row starts and its stride along the last dim.
struct Rows<'a, E> {
    data: &'a [E],
    starts: Vec<usize>,
    step: isize,
}

impl<E: Copy> Rows<'_, E> {
    #[inline(always)]
    fn at(&self, row: usize, k: usize) -> E {
        self.data[(self.starts[row] as isize + k as isize * self.step) as usize]
    }
}

/// `t` (the mask or the bias, named `what` in errors) read as rows of `shape`.
fn rows_onto<'a, E: Element>(op: &'static str, what: &str, t: &'a Tensor, shape: &[usize]) -> Result<Rows<'a, E>> {
    if t.rank() != shape.len() {
        return Err(Error::shapes(op, t.shape(), shape, format!("the {what} has rank {}, the scores rank {}", t.rank(), shape.len())));
    }
    let full = t.layout().broadcast_to(op, shape)?;
    let r = shape.len();
    let lead = Layout { shape: DimVec::from_slice(&full.shape[..r - 1]), strides: DimVec::from_slice(&full.strides[..r - 1]), offset: full.offset };
    let starts = if r == 1 { vec![full.offset] } else { lead.offsets().collect() };
    Ok(Rows { data: t.buffer::<E>(), starts, step: full.strides[r - 1] })
}

fn mask_rows<'a>(op: &'static str, mask: &'a Tensor, shape: &[usize]) -> Result<Rows<'a, bool>> {
    mask.expect_kind(op, Kind::Bool)?;
    rows_onto(op, "mask", mask, shape)
}

/// Rows of `n` split across threads, `f(first_row, rows_out)`.
fn over_rows<T: FloatElement>(out: &mut [T], n: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    if n == 0 || out.is_empty() {
        return;
    }
    if !go_parallel(out.len(), PAR_COSTLY) {
        return f(0, out);
    }
    let per = CHUNK.div_ceil(n) * n;
    for_each_chunk_mut(out, per, |i, d| f(i * per / n, d));
}

/// The softmax of each row of `n` after `scores(r, row, x_row)` wrote its
/// scores into it; with `nan_to_zero`, a NaN weight (a row of `-inf`) becomes 0.
fn weights<T: FloatElement>(x: &[T], n: usize, nan_to_zero: bool, scores: impl Fn(usize, &mut [T], &[T]) + Sync) -> Vec<T> {
    let mut y = vec![T::zero(); x.len()];
    over_rows(&mut y, n, |first, rows| {
        for (i, row) in rows.chunks_exact_mut(n).enumerate() {
            let r = first + i;
            scores(r, row, &x[r * n..(r + 1) * n]);
            simd(#[inline(always)] || normalise(row));
            if nan_to_zero {
                row.iter_mut().filter(|v| v.is_nan_value()).for_each(|v| *v = T::zero());
            }
        }
    });
    y
}

#[inline(always)]
fn scaled<T: FloatElement>(row: &mut [T], src: &[T], scale: T) {
    simd(
        #[inline(always)]
        || {
            for (d, &v) in row.iter_mut().zip(src) {
                *d = v * scale;
            }
        },
    );
}

fn forward<T: FloatElement>(x: &[T], mask: Option<&Rows<'_, bool>>, n: usize, scale: T, fill: T) -> Vec<T> {
    weights(x, n, false, |r, row, src| match mask {
        Some(m) => {
            for (k, (d, &v)) in row.iter_mut().zip(src).enumerate() {
                *d = if m.at(r, k) { fill } else { v * scale };
            }
        }
        None => scaled(row, src, scale),
    })
}

/// Independent accumulators, so that float maxima and sums fill SIMD registers.
const LANES: usize = 16;
/// Exponentials summed per block before joining the row's total, so that
/// rounding grows with the number of blocks rather than the row length.
const BLOCK: usize = 1024;

/// Softmax of one row in place: max, exponentials and their sum, division.
#[inline(always)]
fn normalise<T: FloatElement>(row: &mut [T]) {
    let mut acc = [T::neg_infinity(); LANES];
    let mut chunks = row.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = if v > *a { v } else { *a };
        }
    }
    let m = chunks.remainder().iter().chain(&acc).fold(T::neg_infinity(), |m, &v| if v > m { v } else { m });
    let mut total = T::zero();
    for block in row.chunks_mut(BLOCK) {
        let mut sums = [T::zero(); LANES];
        let mut chunks = block.chunks_exact_mut(LANES);
        for c in &mut chunks {
            for (s, v) in sums.iter_mut().zip(c.iter_mut()) {
                *v = (*v - m).simd_exp();
                *s = *s + *v;
            }
        }
        for v in chunks.into_remainder() {
            *v = (*v - m).simd_exp();
            sums[0] = sums[0] + *v;
        }
        total = total + sums.iter().fold(T::zero(), |a, &b| a + b);
    }
    let inv = T::one() / total;
    row.iter_mut().for_each(|v| *v = *v * inv);
}

fn backward<T: FloatElement>(g: &[T], y: &[T], mask: Option<&Rows<'_, bool>>, n: usize, scale: T) -> Vec<T> {
    let mut gx = vec![T::zero(); y.len()];
    over_rows(&mut gx, n, |first, rows| {
        for (i, row) in rows.chunks_exact_mut(n).enumerate() {
            let r = first + i;
            let (g, y) = (&g[r * n..(r + 1) * n], &y[r * n..(r + 1) * n]);
            simd(
                #[inline(always)]
                || {
                    let dot = g.iter().zip(y).fold(T::zero(), |s, (&g, &y)| s + g * y);
                    for ((d, &g), &y) in row.iter_mut().zip(g).zip(y) {
                        *d = scale * y * (g - dot);
                    }
                },
            );
            if let Some(m) = mask {
                // A masked score was replaced by the fill: no gradient reaches it.
                for (k, d) in row.iter_mut().enumerate() {
                    if m.at(r, k) {
                        *d = T::zero();
                    }
                }
            }
        }
    });
    gx
}

fn check(op: &'static str, x: &Tensor, scale: f64) -> Result<()> {
    x.expect_kind(op, Kind::Float)?;
    if x.rank() == 0 {
        return Err(Error::invalid(op, "the scores need at least one dim"));
    }
    if !scale.is_finite() {
        return Err(Error::invalid(op, format!("scale must be finite, found {scale}")));
    }
    Ok(())
}

impl Tensor {
    /// `softmax(where(mask, fill, scale * self))` along the last dim; the
    /// Bool `mask` (true = not attended) broadcasts onto this shape.
    pub fn masked_softmax(&self, mask: Option<&Tensor>, scale: f64, fill: f64) -> Result<Tensor> {
        let op = "masked_softmax";
        check(op, self, scale)?;
        let rows = mask.map(|m| mask_rows(op, m, self.shape())).transpose()?;
        let n = self.shape()[self.rank() - 1];
        with_float!(op, self.dtype(), T => {
            let x: Cow<'_, [T]> = values(op, self)?;
            Tensor::from_vec(forward(&x, rows.as_ref(), n, T::from_f64(scale), T::from_f64(fill)), self.shape())
        })
    }
}

fn forward_biased<T: FloatElement>(x: &[T], bias: Option<&Rows<'_, T>>, n: usize, scale: T, nan_to_zero: bool) -> Vec<T> {
    weights(x, n, nan_to_zero, |r, row, src| match bias {
        Some(b) if b.step == 1 => {
            let add = &b.data[b.starts[r]..b.starts[r] + n];
            simd(
                #[inline(always)]
                || {
                    for ((d, &v), &a) in row.iter_mut().zip(src).zip(add) {
                        *d = v * scale + a;
                    }
                },
            );
        }
        Some(b) => {
            for (k, (d, &v)) in row.iter_mut().zip(src).enumerate() {
                *d = v * scale + b.at(r, k);
            }
        }
        None => scaled(row, src, scale),
    })
}

impl Tensor {
    /// `softmax(scale * self + bias)` along the last dim, each row read and written once: the
    /// attention weights of an exported graph (`MatMul` scores, scaled, plus an additive mask),
    /// forward only. `bias` (this dtype, this rank, each dim equal or 1) broadcasts onto this shape.
    /// With `nan_to_zero`, a NaN weight (a row of `-inf` scores) becomes 0, as the exports'
    /// `Where(IsNaN(p), 0, p)` guard makes it.
    pub fn biased_softmax(&self, bias: Option<&Tensor>, scale: f64, nan_to_zero: bool) -> Result<Tensor> {
        let op = "biased_softmax";
        check(op, self, scale)?;
        if let Some(b) = bias {
            self.expect_same_dtype(op, b)?;
        }
        let n = self.shape()[self.rank() - 1];
        with_float!(op, self.dtype(), T => {
            let rows = bias.map(|b| rows_onto::<T>(op, "bias", b, self.shape())).transpose()?;
            let x: Cow<'_, [T]> = values(op, self)?;
            Tensor::from_vec(forward_biased(&x, rows.as_ref(), n, T::from_f64(scale), nan_to_zero), self.shape())
        })
    }
}

impl Var {
    /// [`Tensor::masked_softmax`], differentiable in `self`.
    pub fn masked_softmax(&self, mask: Option<&Tensor>, scale: f64, fill: f64) -> Result<Var> {
        let op = "masked_softmax";
        let y = self.value.masked_softmax(mask, scale, fill)?;
        let (yy, mask) = (y.clone(), mask.cloned());
        Ok(record(y, &[self], move || {
            FnBackward::new(op, move |g, _| {
                let rows = mask.as_ref().map(|m| mask_rows(op, m, yy.shape())).transpose()?;
                let n = yy.shape()[yy.rank() - 1];
                with_float!(op, yy.dtype(), T => {
                    let gx = backward(&values::<T>(op, &g)?, &values::<T>(op, &yy)?, rows.as_ref(), n, T::from_f64(scale));
                    Ok(vec![Some(Tensor::from_vec(gx, yy.shape())?)])
                })
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn reference(x: &[f64], mask: &[bool], n: usize, scale: f64, fill: f64) -> Vec<f64> {
        x.chunks(n)
            .zip(mask.chunks(n))
            .flat_map(|(row, m)| {
                let v: Vec<f64> = row.iter().zip(m).map(|(&x, &m)| if m { fill } else { x * scale }).collect();
                let mx = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let s: f64 = v.iter().map(|&a| (a - mx).exp()).sum();
                v.into_iter().map(move |a| (a - mx).exp() / s).collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn broadcast_mask_matches_the_reference() {
        let (b, h, q, k) = (2, 3, 4, 5);
        let x: Vec<f64> = (0..b * h * q * k).map(|i| ((i * 37) % 23) as f64 * 0.3 - 3.0).collect();
        // A padding mask [b, 1, 1, k]: the last key of batch 0, the last two of batch 1.
        let pad: Vec<bool> = (0..b * k).map(|i| (i / k == 0 && i % k == 4) || (i / k == 1 && i % k >= 3)).collect();
        let mask = Tensor::from_vec(pad.clone(), &[b, 1, 1, k]).unwrap();
        let t = Tensor::from_vec(x.clone(), &[b, h, q, k]).unwrap();
        let got = t.masked_softmax(Some(&mask), 0.5, -1e4).unwrap().to_vec::<f64>();
        let full: Vec<bool> = (0..b * h * q * k).map(|i| pad[(i / (h * q * k)) * k + i % k]).collect();
        let want = reference(&x, &full, k, 0.5, -1e4);
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12));
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let (rows, n) = (3, 4);
        let x: Vec<f64> = (0..rows * n).map(|i| (i as f64 * 0.7).sin()).collect();
        let m: Vec<bool> = (0..rows * n).map(|i| i % 5 == 2).collect();
        let w: Vec<f64> = (0..rows * n).map(|i| (i as f64 * 1.3).cos()).collect();
        let mask = Tensor::from_vec(m.clone(), &[rows, n]).unwrap();
        let leaf = Var::leaf(Tensor::from_vec(x.clone(), &[rows, n]).unwrap());
        let y = leaf.masked_softmax(Some(&mask), 0.8, -1e4).unwrap();
        let wt = Var::constant(Tensor::from_vec(w.clone(), &[rows, n]).unwrap());
        let loss = y.binary(crate::ops::binary::BinaryOp::Mul, &wt).unwrap().sum().unwrap();
        let grads = crate::autodiff::backward(&loss).unwrap();
        let got = grads.get(leaf.id().unwrap()).unwrap().to_vec::<f64>();
        let f = |x: &[f64]| reference(x, &m, n, 0.8, -1e4).iter().zip(&w).map(|(a, b)| a * b).sum::<f64>();
        for i in 0..x.len() {
            let (mut up, mut down) = (x.clone(), x.clone());
            up[i] += 1e-6;
            down[i] -= 1e-6;
            let want = (f(&up) - f(&down)) / 2e-6;
            assert!((got[i] - want).abs() < 1e-8, "{i}: {} vs {want}", got[i]);
        }
    }

    #[test]
    fn no_mask_long_rows_and_errors() {
        let t = Tensor::from_vec((0..3 * 40000).map(|i| (i % 7) as f32).collect::<Vec<_>>(), &[3, 40000]).unwrap();
        let y = t.masked_softmax(None, 1.0, 0.0).unwrap();
        let want = t.softmax(-1).unwrap().to_vec::<f32>();
        let worst = y.to_vec::<f32>().iter().zip(&want).map(|(a, b)| ((a - b) / b).abs()).fold(0.0f32, f32::max);
        assert!(worst < 1e-5, "{worst}");
        let bad = Tensor::zeros(&[3, 2], DType::Bool);
        let e = t.masked_softmax(Some(&bad), 1.0, 0.0).unwrap_err().to_string();
        assert!(e.contains("only size 1 expands"), "{e}");
        let e = t.masked_softmax(Some(&Tensor::zeros(&[3, 1], DType::F32)), 1.0, 0.0).unwrap_err().to_string();
        assert!(e.contains("Bool"), "{e}");
    }
}
