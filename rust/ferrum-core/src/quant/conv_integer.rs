//! ONNX's integer 2-d convolution (`ConvInteger`, and the sum inside
//! `QLinearConv`) on the int8 product: each image's receptive fields
//! (im2col of the u8 input, padded with its zero point so that padding adds
//! nothing once the zero point is taken out) are the rows of a u8 matrix,
//! times each group's weight packed as a `[c_in / groups * kh * kw,
//! c_out / groups]` s8 matrix; the zero points come out after the exact
//! i32 sum as in `MatMulInteger`.

use super::integer::{i8_values, u8_values};
use crate::error::{Error, Result};
use crate::kernels::qgemm;
use crate::tensor::Tensor;

/// Products below this many multiply-adds run on one thread.
const PAR_FLOPS: usize = 1 << 18;
/// The most bytes of receptive fields gathered for one product.
const ROWS_BYTES: usize = 16 << 20;

/// Stride, padding (top, left, bottom, right), dilation and groups of an
/// integer 2-d convolution.
#[derive(Clone, Copy, Debug)]
pub struct IntConv2d {
    pub stride: [usize; 2],
    pub pads: [usize; 4],
    pub dilation: [usize; 2],
    pub groups: usize,
}

/// The rows of one image's receptive fields for one group: `rows[p][k]` with
/// `p` the output position (row-major) and `k` (channel, ky, kx) of the
/// group's channels, `zero` where the field reaches into the padding.
#[allow(clippy::too_many_arguments)]
fn im2col_u8(img: &[u8], (h, w): (usize, usize), c0: usize, cg: usize, (kh, kw): (usize, usize), (oh, ow): (usize, usize), g: &IntConv2d, zero: u8, rows: &mut [u8]) {
    let k = cg * kh * kw;
    for oy in 0..oh {
        for ox in 0..ow {
            let row = &mut rows[(oy * ow + ox) * k..(oy * ow + ox + 1) * k];
            let mut idx = 0;
            for c in c0..c0 + cg {
                let plane = &img[c * h * w..(c + 1) * h * w];
                for ky in 0..kh {
                    let iy = (oy * g.stride[0] + ky * g.dilation[0]).wrapping_sub(g.pads[0]);
                    for kx in 0..kw {
                        let ix = (ox * g.stride[1] + kx * g.dilation[1]).wrapping_sub(g.pads[1]);
                        row[idx] = if iy < h && ix < w { plane[iy * w + ix] } else { zero };
                        idx += 1;
                    }
                }
            }
        }
    }
}

/// `conv2d(x - x_zero, w - w_zero)` exactly, wrapped to i32 as ONNX's int32
/// output holds it, as an I64 tensor `[batch, c_out, oh, ow]`: `x` an Int
/// tensor `[batch, c_in, h, w]` of u8 values, `w` `[c_out, c_in / groups,
/// kh, kw]` of s8 values, `w_zero` 1 or `c_out` values. `None` when a value
/// or zero point is outside those ranges (the caller computes such
/// convolutions another way).
pub fn conv2d_u8s8(x: &Tensor, x_zero: i64, w: &Tensor, w_zero: &[i64], g: &IntConv2d) -> Result<Option<Tensor>> {
    let op = "integer conv2d";
    let (xs, ws) = (x.shape(), w.shape());
    if xs.len() != 4 {
        return Err(Error::RankMismatch { op, expected: 4, found: xs.len(), shape: xs.to_vec() });
    }
    if ws.len() != 4 {
        return Err(Error::RankMismatch { op, expected: 4, found: ws.len(), shape: ws.to_vec() });
    }
    let (batch, c_in, h, wd) = (xs[0], xs[1], xs[2], xs[3]);
    let (c_out, cg, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
    let groups = g.groups;
    if groups == 0 || c_in % groups != 0 || c_out % groups != 0 || cg * groups != c_in {
        return Err(Error::shapes(op, xs, ws, format!("{groups} groups need c_in ({c_in}) = groups * the weight's dim 1 ({cg}) and c_out ({c_out}) divisible by groups")));
    }
    if g.stride.contains(&0) || g.dilation.contains(&0) {
        return Err(Error::invalid(op, format!("strides and dilations must be positive, found {:?} and {:?}", g.stride, g.dilation)));
    }
    if w_zero.len() != 1 && w_zero.len() != c_out {
        return Err(Error::invalid(op, format!("a weight of {c_out} output channels takes 1 or {c_out} zero points, found {}", w_zero.len())));
    }
    let span = |size: usize, pad: usize, k: usize, d: usize, s: usize| -> Option<usize> {
        let reach = d * (k - 1) + 1;
        (size + pad >= reach).then(|| (size + pad - reach) / s + 1)
    };
    let (Some(oh), Some(ow)) = (span(h, g.pads[0] + g.pads[2], kh, g.dilation[0], g.stride[0]), span(wd, g.pads[1] + g.pads[3], kw, g.dilation[1], g.stride[1])) else {
        return Err(Error::shapes(op, xs, ws, format!("the kernel {kh} x {kw} (dilation {:?}) is larger than the padded input", g.dilation)));
    };
    if kh == 0 || kw == 0 || cg * kh * kw > qgemm::MAX_K {
        return Ok(None);
    }
    if !(0..=255).contains(&x_zero) || w_zero.iter().any(|z| !(-128..=127).contains(z)) {
        return Ok(None);
    }
    let Some(xv) = u8_values(op, x)? else { return Ok(None) };
    let Some(wv) = i8_values(op, w)? else { return Ok(None) };
    let (k, p, co_g) = (cg * kh * kw, oh * ow, c_out / groups);
    let mut out = vec![0i64; batch * c_out * p];
    if out.is_empty() {
        return Ok(Some(Tensor::from_vec(out, &[batch, c_out, oh, ow])?));
    }
    // Each group's weight as the [k, c_out / groups] right-hand matrix, with its zero points.
    let mut packed = Vec::with_capacity(groups);
    for gi in 0..groups {
        let mut t = vec![0i8; k * co_g];
        for o in 0..co_g {
            let filter = &wv[(gi * co_g + o) * k..(gi * co_g + o + 1) * k];
            for (kk, &v) in filter.iter().enumerate() {
                t[kk * co_g + o] = v;
            }
        }
        let zero: Vec<i32> = if w_zero.len() == 1 { vec![w_zero[0] as i32] } else { w_zero[gi * co_g..(gi + 1) * co_g].iter().map(|&z| z as i32).collect() };
        packed.push((qgemm::pack_weights(&t, &vec![1.0; co_g], k, co_g)?, zero));
    }
    // Several images' receptive fields in one product (one team loop for all of
    // them), up to ROWS_BYTES of rows at a time.
    let per_chunk = (ROWS_BYTES / (p * k).max(1)).clamp(1, batch);
    let image = c_in * h * wd;
    let (mut rows, mut y) = (vec![0u8; per_chunk * p * k], vec![0i32; per_chunk * p * co_g]);
    for n0 in (0..batch).step_by(per_chunk) {
        let images = per_chunk.min(batch - n0);
        let m = images * p;
        let threads = if m.saturating_mul(k).saturating_mul(co_g) >= PAR_FLOPS { rayon::current_num_threads() } else { 1 };
        for (gi, (pw, zero)) in packed.iter().enumerate() {
            for i in 0..images {
                let img = &xv[(n0 + i) * image..(n0 + i + 1) * image];
                im2col_u8(img, (h, wd), gi * cg, cg, (kh, kw), (oh, ow), g, x_zero as u8, &mut rows[i * p * k..(i + 1) * p * k]);
            }
            qgemm::matmul_u8s8(&rows[..m * k], m, &[x_zero as i32], pw, zero, &mut y[..m * co_g], threads)?;
            // Each image's [p, c_out / groups] into its [c_out, p] planes.
            for i in 0..images {
                let n = n0 + i;
                let dst = &mut out[(n * c_out + gi * co_g) * p..(n * c_out + (gi + 1) * co_g) * p];
                for (pos, ys) in y[i * p * co_g..(i + 1) * p * co_g].chunks_exact(co_g).enumerate() {
                    for (o, &v) in ys.iter().enumerate() {
                        dst[o * p + pos] = i64::from(v);
                    }
                }
            }
        }
    }
    Ok(Some(Tensor::from_vec(out, &[batch, c_out, oh, ow])?))
}
