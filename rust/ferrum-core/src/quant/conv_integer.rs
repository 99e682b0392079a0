//! ONNX's integer 2-d convolution (`ConvInteger`, and the sum inside
//! `QLinearConv`) on tensors: the checks and conversions around
//! [`Int8Conv`], which packs the weight once and runs the product.

use super::integer::{i8_values, u8_values};
use super::qconv::{conv_threads, ConvOut, Int8Conv, IntConv2d, Requant};
use crate::error::{Error, Result};
use crate::kernels::qgemm;
use crate::tensor::Tensor;

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
    let zero: Vec<i32> = w_zero.iter().map(|&z| z as i32).collect();
    let packed = Int8Conv::new(&wv, [c_out, cg, kh, kw], groups, &zero)?;
    let mut sums = vec![0i32; batch * c_out * oh * ow];
    let threads = conv_threads(batch * oh * ow * cg * kh * kw * c_out);
    packed.run(&xv, [batch, c_in, h, wd], x_zero as u8, g, ConvOut::Sums(&mut sums), threads)?;
    let out: Vec<i64> = sums.into_iter().map(i64::from).collect();
    Ok(Some(Tensor::from_vec(out, &[batch, c_out, oh, ow])?))
}

/// A packed filter bank from an Int tensor `[c_out, c_in / groups, kh, kw]`
/// of s8 values and its zero points (1 or `c_out`); `None` when a value or
/// zero point is outside int8 (the caller computes such convolutions another
/// way).
pub fn pack_int8_conv(w: &Tensor, w_zero: &[i64], groups: usize) -> Result<Option<Int8Conv>> {
    let op = "int8 conv2d";
    let ws = w.shape();
    if ws.len() != 4 {
        return Err(Error::RankMismatch { op, expected: 4, found: ws.len(), shape: ws.to_vec() });
    }
    if ws[2] == 0 || ws[3] == 0 || ws[1] * ws[2] * ws[3] > qgemm::MAX_K || w_zero.iter().any(|z| !(-128..=127).contains(z)) {
        return Ok(None);
    }
    let Some(wv) = i8_values(op, w)? else { return Ok(None) };
    let zero: Vec<i32> = w_zero.iter().map(|&z| z as i32).collect();
    Ok(Some(Int8Conv::new(&wv, [ws[0], ws[1], ws[2], ws[3]], groups, &zero)?))
}

/// How [`run_int8_conv`] returns its result.
#[derive(Clone, Copy, Debug)]
pub enum IntConvResult<'a> {
    /// The exact sums, an I64 tensor (ONNX's int32 values).
    Sums,
    /// Requantized: a U8 tensor when the range lies in 0..=255, else I64.
    Requant(Requant<'a>),
}

/// `conv(x - x_zero, packed)` of an Int tensor `[batch, c_in, h, w]` of u8
/// values, as `result` asks; `None` when a value of `x` or `x_zero` is
/// outside u8.
pub fn run_int8_conv(packed: &Int8Conv, x: &Tensor, x_zero: i64, g: &IntConv2d, result: IntConvResult<'_>) -> Result<Option<Tensor>> {
    let op = "int8 conv2d";
    let xs = x.shape();
    if xs.len() != 4 {
        return Err(Error::RankMismatch { op, expected: 4, found: xs.len(), shape: xs.to_vec() });
    }
    if !(0..=255).contains(&x_zero) {
        return Ok(None);
    }
    let Some(xv) = u8_values(op, x)? else { return Ok(None) };
    let (batch, c_in, h, wd) = (xs[0], xs[1], xs[2], xs[3]);
    let (oh, ow) = packed.output_size((h, wd), g)?;
    let [c_out, cg, kh, kw] = packed.shape();
    let shape = [batch, c_out, oh, ow];
    let count = batch * c_out * oh * ow;
    let threads = conv_threads(batch * oh * ow * cg * kh * kw * c_out);
    let dims = [batch, c_in, h, wd];
    let x_zero = x_zero as u8;
    Ok(Some(match result {
        IntConvResult::Sums => {
            let mut sums = vec![0i32; count];
            packed.run(&xv, dims, x_zero, g, ConvOut::Sums(&mut sums), threads)?;
            Tensor::from_vec(sums.into_iter().map(i64::from).collect::<Vec<i64>>(), &shape)?
        }
        IntConvResult::Requant(r) if r.lo >= 0 && r.hi <= 255 => {
            let mut out = vec![0u8; count];
            packed.run(&xv, dims, x_zero, g, ConvOut::U8(r, &mut out), threads)?;
            Tensor::from_vec(out, &shape)?
        }
        IntConvResult::Requant(r) => {
            let mut out = vec![0i32; count];
            packed.run(&xv, dims, x_zero, g, ConvOut::I32(r, &mut out), threads)?;
            Tensor::from_vec(out.into_iter().map(i64::from).collect::<Vec<i64>>(), &shape)?
        }
    }))
}
