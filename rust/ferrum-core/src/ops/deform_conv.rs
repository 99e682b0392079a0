//! `deform_conv2d` (Burn's module op, torchvision's `deform_conv2d`):
//! convolution whose taps read at learned offsets, optionally modulated by
//! a mask; forward and backward for the input, offset, mask, weight and
//! bias. Kernels in `crate::kernels::deform`.

use crate::autodiff::{record, FnBackward, Var};
use crate::error::{Error, Result};
use crate::kernels::deform::{backward, forward, DeformGeom};
use crate::ops::conv::values;
use crate::shape::checked_numel;
use crate::tensor::Tensor;
use crate::{with_float, Kind};

/// Burn's `DeformConvOptions<2>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeformConvOptions {
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
    pub weight_groups: usize,
    pub offset_groups: usize,
}

impl Default for DeformConvOptions {
    fn default() -> Self {
        DeformConvOptions { stride: [1, 1], padding: [0, 0], dilation: [1, 1], weight_groups: 1, offset_groups: 1 }
    }
}

/// The operands of one deformable convolution.
pub struct DeformInputs<'a> {
    pub x: &'a Tensor,
    pub offset: &'a Tensor,
    pub weight: &'a Tensor,
    pub mask: Option<&'a Tensor>,
    pub bias: Option<&'a Tensor>,
}

fn expect_shape(op: &'static str, what: &str, t: &Tensor, want: &[usize]) -> Result<()> {
    if t.shape() != want {
        return Err(Error::shapes(op, t.shape(), want, format!("the {what} must be {want:?}")));
    }
    Ok(())
}

fn geometry(op: &'static str, i: &DeformInputs<'_>, o: &DeformConvOptions) -> Result<DeformGeom> {
    let (x, w) = (i.x, i.weight);
    x.expect_kind(op, Kind::Float)?;
    x.expect_rank(op, 4)?;
    w.expect_rank(op, 4)?;
    for t in [Some(i.offset), Some(w), i.mask, i.bias].into_iter().flatten() {
        x.expect_same_dtype(op, t)?;
    }
    for (name, v) in [("stride", o.stride), ("dilation", o.dilation)] {
        if v.contains(&0) {
            return Err(Error::invalid(op, format!("{name} must be at least 1 in every dim, found {v:?}")));
        }
    }
    let (xs, ws) = (x.shape(), w.shape());
    let (c_in, c_out, kh, kw) = (xs[1], ws[0], ws[2], ws[3]);
    let (wg, og) = (o.weight_groups, o.offset_groups);
    if kh == 0 || kw == 0 {
        return Err(Error::invalid(op, format!("kernel size must be at least 1 in every dim, found {:?}", &ws[2..])));
    }
    if wg == 0 || c_in % wg != 0 || c_out % wg != 0 || ws[1] * wg != c_in {
        return Err(Error::shapes(op, xs, ws, format!("weight_groups ({wg}) must divide channels_in ({c_in}) and channels_out ({c_out}), with {} input channels per group in the weight", ws[1])));
    }
    if og == 0 || c_in % og != 0 {
        return Err(Error::invalid(op, format!("offset_groups ({og}) must divide channels_in ({c_in})")));
    }
    let mut out = [0; 2];
    for d in 0..2 {
        let (n, k, p) = (xs[2 + d], ws[2 + d], o.padding[d]);
        let span = o.dilation[d] * (k - 1) + 1;
        if n + 2 * p < span {
            return Err(Error::shapes(op, xs, ws, format!("spatial dim {d} of size {n} padded by {p} is smaller than the kernel span {span}")));
        }
        out[d] = (n + 2 * p - span) / o.stride[d] + 1;
    }
    let (b, taps) = (xs[0], kh * kw);
    expect_shape(op, "offset [batch, 2 * offset_groups * kh * kw, out_h, out_w]", i.offset, &[b, 2 * og * taps, out[0], out[1]])?;
    if let Some(m) = i.mask {
        expect_shape(op, "mask [batch, offset_groups * kh * kw, out_h, out_w]", m, &[b, og * taps, out[0], out[1]])?;
    }
    if let Some(bias) = i.bias {
        expect_shape(op, "bias", bias, &[c_out])?;
    }
    checked_numel(op, &[b, c_out, out[0], out[1]], x.dtype().size_in_bytes())?;
    checked_numel(op, &[c_in * taps, out[0] * out[1]], x.dtype().size_in_bytes())?;
    Ok(DeformGeom {
        batch: b,
        c_in,
        c_out,
        h: xs[2],
        w: xs[3],
        oh: out[0],
        ow: out[1],
        kh,
        kw,
        stride: o.stride,
        pad: o.padding,
        dilation: o.dilation,
        weight_groups: wg,
        offset_groups: og,
    })
}

fn run(op: &'static str, i: &DeformInputs<'_>, g: &DeformGeom) -> Result<Tensor> {
    with_float!(op, i.x.dtype(), T => {
        let mask = i.mask.map(|m| values::<T>(op, m)).transpose()?;
        let bias = i.bias.map(|b| values::<T>(op, b)).transpose()?;
        let out = forward::<T>(&values::<T>(op, i.x)?, &values::<T>(op, i.offset)?, mask.as_deref(), &values::<T>(op, i.weight)?, bias.as_deref(), g)
            .ok_or(Error::Interrupted)?;
        Tensor::from_vec(out, &[g.batch, g.c_out, g.oh, g.ow])
    })
}

impl Tensor {
    /// Deformable convolution of `[batch, channels_in, h, w]` (see the module docs for the layouts).
    pub fn deform_conv2d(&self, offset: &Tensor, weight: &Tensor, mask: Option<&Tensor>, bias: Option<&Tensor>, options: &DeformConvOptions) -> Result<Tensor> {
        let op = "deform_conv2d";
        let i = DeformInputs { x: self, offset, weight, mask, bias };
        let g = geometry(op, &i, options)?;
        run(op, &i, &g)
    }
}

impl Var {
    /// [`Tensor::deform_conv2d`], differentiable in every operand.
    pub fn deform_conv2d(&self, offset: &Var, weight: &Var, mask: Option<&Var>, bias: Option<&Var>, options: &DeformConvOptions) -> Result<Var> {
        let op = "deform_conv2d";
        let i = DeformInputs { x: &self.value, offset: &offset.value, weight: &weight.value, mask: mask.map(|m| &m.value), bias: bias.map(|b| &b.value) };
        let g = geometry(op, &i, options)?;
        let y = run(op, &i, &g)?;
        let mut inputs = vec![self, offset, weight];
        inputs.extend(mask);
        inputs.extend(bias);
        let saved = (self.value.clone(), offset.value.clone(), weight.value.clone(), mask.map(|m| m.value.clone()), bias.is_some());
        Ok(record(y, &inputs, move || {
            FnBackward::new(op, move |gy, _| {
                let (x, off, w, m, has_bias) = &saved;
                with_float!(op, x.dtype(), T => {
                    let mv = m.as_ref().map(|m| values::<T>(op, m)).transpose()?;
                    let gyv = values::<T>(op, &gy)?;
                    let d = backward::<T>(&values::<T>(op, x)?, &values::<T>(op, off)?, mv.as_deref(), &values::<T>(op, w)?, &gyv, &g).ok_or(Error::Interrupted)?;
                    let mut grads = vec![
                        Some(Tensor::from_vec(d.input, x.shape())?),
                        Some(Tensor::from_vec(d.offset, off.shape())?),
                        Some(Tensor::from_vec(d.weight, w.shape())?),
                    ];
                    if let (Some(gm), Some(m)) = (d.mask, m) {
                        grads.push(Some(Tensor::from_vec(gm, m.shape())?));
                    }
                    if *has_bias {
                        grads.push(Some(gy.sum_dims(&[0, 2, 3])?.reshape(&[g.c_out as isize])?));
                    }
                    Ok(grads)
                })
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(n: usize, k: u64, scale: f64) -> Vec<f64> {
        (0..n).map(|i| ((((i as u64 * 7 + k * 13) % 17) as f64) / 8.0 - 1.0) * scale).collect()
    }

    #[test]
    fn zero_offsets_and_no_mask_is_a_convolution() {
        let x = Tensor::from_vec(vals(2 * 4 * 5 * 5, 1, 1.0), &[2, 4, 5, 5]).unwrap();
        let w = Tensor::from_vec(vals(6 * 2 * 3 * 3, 2, 1.0), &[6, 2, 3, 3]).unwrap();
        let b = Tensor::from_vec(vals(6, 3, 1.0), &[6]).unwrap();
        let o = DeformConvOptions { stride: [2, 1], padding: [1, 1], dilation: [1, 2], weight_groups: 2, offset_groups: 2 };
        let offset = Tensor::zeros(&[2, 2 * 2 * 9, 3, 3], crate::DType::F64);
        let got = x.deform_conv2d(&offset, &w, None, Some(&b), &o).unwrap();
        let conv = x.conv2d(&w, Some(&b), &crate::ops::conv::ConvOptions::new([2, 1], [1, 1], [1, 2], 2)).unwrap();
        assert_eq!(got.shape(), conv.shape());
        assert!(got.to_vec::<f64>().iter().zip(conv.to_vec::<f64>()).all(|(a, b)| (a - b).abs() < 1e-12));
    }

    #[test]
    fn gradients_match_finite_differences() {
        let (xs, ws, os, ms) = ([1, 2, 4, 4], [2, 2, 2, 2], [1, 8, 3, 3], [1, 4, 3, 3]);
        // Offsets off the integer grid, where bilinear sampling has kinks.
        let inputs = [vals(32, 1, 1.0), vals(72, 2, 0.7).iter().map(|v| v + 0.013).collect(), vals(16, 3, 1.0), vals(36, 4, 0.5).iter().map(|v| v + 0.6).collect(), vals(2, 5, 1.0)];
        let shapes: [&[usize]; 5] = [&xs, &os, &ws, &ms, &[2]];
        let o = DeformConvOptions::default();
        let loss_of = |vs: &[Vec<f64>]| -> f64 {
            let t: Vec<Tensor> = vs.iter().zip(shapes).map(|(v, s)| Tensor::from_vec(v.clone(), s).unwrap()).collect();
            let y = t[0].deform_conv2d(&t[1], &t[2], Some(&t[3]), Some(&t[4]), &o).unwrap().to_vec::<f64>();
            y.iter().enumerate().map(|(i, v)| v * ((i % 5) as f64 - 2.0)).sum()
        };
        let vars: Vec<Var> = inputs.iter().zip(shapes).map(|(v, s)| Var::leaf(Tensor::from_vec(v.clone(), s).unwrap())).collect();
        let y = vars[0].deform_conv2d(&vars[1], &vars[2], Some(&vars[3]), Some(&vars[4]), &o).unwrap();
        let wts: Vec<f64> = (0..y.value.numel()).map(|i| (i % 5) as f64 - 2.0).collect();
        let wt = Var::constant(Tensor::from_vec(wts, y.value.shape()).unwrap());
        let grads = crate::autodiff::backward(&y.binary(crate::ops::binary::BinaryOp::Mul, &wt).unwrap().sum().unwrap()).unwrap();
        for (k, v) in vars.iter().enumerate() {
            let got = grads.get(v.id().unwrap()).unwrap().to_vec::<f64>();
            for e in 0..inputs[k].len() {
                let mut up = inputs.to_vec();
                up[k][e] += 1e-6;
                let mut down = inputs.to_vec();
                down[k][e] -= 1e-6;
                let want = (loss_of(&up) - loss_of(&down)) / 2e-6;
                assert!((got[e] - want).abs() < 1e-6 * (1.0 + want.abs()), "input {k}[{e}]: {} vs {want}", got[e]);
            }
        }
    }

    #[test]
    fn bad_offset_shape() {
        let x = Tensor::zeros(&[1, 2, 4, 4], crate::DType::F32);
        let w = Tensor::zeros(&[2, 2, 3, 3], crate::DType::F32);
        let off = Tensor::zeros(&[1, 9, 2, 2], crate::DType::F32);
        let e = x.deform_conv2d(&off, &w, None, None, &DeformConvOptions::default()).unwrap_err().to_string();
        assert!(e.contains("offset"), "{e}");
    }
}
