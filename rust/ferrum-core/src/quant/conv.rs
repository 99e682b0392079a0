//! A quantized 2-d convolution weight applied on the int8 product: each
//! image's receptive fields (im2col) become the rows of a matrix, quantized
//! per row as a linear layer's inputs are, times the weight packed once as a
//! `[c_in * kh * kw, c_out]` matrix.

use std::borrow::Cow;

use super::qtensor::{floats, QTensor};
use super::QuantLevel;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::im2col::im2col;
use crate::kernels::qgemm;
use crate::ops::conv::{conv_geom, ConvOptions};
use crate::tensor::Tensor;
use crate::Kind;

impl QTensor {
    /// Whether `conv2d` runs on the int8 product: a rank-4 weight with 8-bit
    /// values and one scale, in one group (grouped convolutions dequantize).
    pub fn has_int8_conv(&self, groups: usize) -> bool {
        let s = self.shape();
        s.len() == 4 && groups == 1 && self.scheme().value.bits() == 8 && self.scheme().level == QuantLevel::Tensor && s[1] * s[2] * s[3] <= qgemm::MAX_K
    }

    /// `conv2d(x, self) + bias` for `x` `[batch, c_in, h, w]` and this tensor a
    /// `[c_out, c_in / groups, kh, kw]` weight, in `x`'s dtype: on the int8
    /// product where [`QTensor::has_int8_conv`], else on the dequantized weight.
    pub fn conv2d(&self, x: &Tensor, bias: Option<&Tensor>, options: &ConvOptions<2>) -> Result<Tensor> {
        let op = "quantized conv2d";
        x.expect_kind(op, Kind::Float)?;
        if x.dtype().is_storage_only() {
            return Err(Error::StorageDType { op, dtype: x.dtype() });
        }
        if self.shape().len() != 4 {
            return Err(Error::RankMismatch { op, expected: 4, found: self.shape().len(), shape: self.shape().to_vec() });
        }
        let weight = self.dequantize()?;
        let weight = if x.dtype() == DType::F32 { weight } else { weight.cast(x.dtype())? };
        if !self.has_int8_conv(options.groups) {
            return x.conv2d(&weight, bias, options);
        }
        let (g, out_shape) = conv_geom(op, x, &weight, bias, options)?;
        let (k, p, c_out) = (g.k(), g.p(), g.c_out);
        let xs = floats(op, x)?;
        let bias: Option<Cow<'_, [f32]>> = bias.map(|b| floats(op, b)).transpose()?;
        let packed = self.cached_packed(|values, scales| {
            // [c_out, k] as stored, packed as the [k, c_out] right-hand matrix.
            let mut t = vec![0i8; k * c_out];
            for (o, row) in values.chunks_exact(k).enumerate() {
                for (kk, &v) in row.iter().enumerate() {
                    t[kk * c_out + o] = v;
                }
            }
            qgemm::pack_weights(&t, &vec![scales[0]; c_out], k, c_out)
        })?;
        let image = g.c_in * g.hw();
        let mut out = vec![0f32; g.batch * c_out * p];
        let (mut col, mut rows, mut y) = (vec![0f32; k * p], vec![0f32; p * k], vec![0f32; p * c_out]);
        let threads = if p.saturating_mul(k).saturating_mul(c_out) >= PAR_FLOPS { rayon::current_num_threads() } else { 1 };
        for (n, dst) in out.chunks_exact_mut(c_out * p).enumerate() {
            im2col(&xs[n * image..(n + 1) * image], &g, 0..g.oh, &mut col);
            transpose(&col, k, p, &mut rows);
            qgemm::linear_q8(&rows, p, packed, bias.as_deref(), &mut y, threads)?;
            transpose(&y, p, c_out, dst);
        }
        let y = Tensor::from_vec(out, &out_shape)?;
        if x.dtype() == DType::F32 {
            Ok(y)
        } else {
            y.cast(x.dtype())
        }
    }
}

/// Products below this many multiply-adds run on one thread.
const PAR_FLOPS: usize = 1 << 18;

/// `dst[c][r] = src[r][c]` for a row-major `rows x cols` `src`, in tiles so
/// that both sides stay in cache.
fn transpose(src: &[f32], rows: usize, cols: usize, dst: &mut [f32]) {
    const TILE: usize = 32;
    for r0 in (0..rows).step_by(TILE) {
        for c0 in (0..cols).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                for c in c0..(c0 + TILE).min(cols) {
                    dst[c * rows + r] = src[r * cols + c];
                }
            }
        }
    }
}
