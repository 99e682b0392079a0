//! 3-D convolution and transposed convolution (Burn's `conv3d`,
//! `conv_transpose3d`), forward and backward, on the vol2col kernels.
//!
//! Layouts follow Burn: input `[batch, channels_in, depth, height, width]`;
//! conv weight `[channels_out, channels_in / groups, kd, kh, kw]`;
//! transposed-conv weight `[channels_in, channels_out / groups, kd, kh, kw]`.
//! A transposed convolution is the input gradient of the convolution that
//! maps its output back to its input, so it reuses those kernels.

use crate::autodiff::{record, FnBackward, Var};
use crate::error::{Error, Result};
use crate::kernels::vol2col::{backward_input, backward_weight, channel_sums, forward, Geom3};
use crate::ops::conv::{check_conv, operands, transpose_shape, values, ConvOptions, ConvTransposeOptions};
use crate::shape::checked_numel;
use crate::tensor::Tensor;
use crate::with_float;

fn interrupted<T>(r: Option<T>) -> Result<T> {
    r.ok_or(Error::Interrupted)
}

fn conv_geom(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, o: &ConvOptions<3>) -> Result<(Geom3, Vec<usize>)> {
    let c_out = check_conv(op, x, w, bias, o)?;
    let (xs, ws, groups, c_in) = (x.shape(), w.shape(), o.groups, x.shape()[1]);
    if o.padding.iter().any(|&(a, b)| a != b) {
        return Err(Error::invalid(op, format!("3-d padding is the same on both sides of each dim, found {:?}", o.padding)));
    }
    let mut out = [0; 3];
    for d in 0..3 {
        let (n, k, p) = (xs[2 + d], ws[2 + d], o.padding[d].0);
        let span = o.dilation[d] * (k - 1) + 1;
        if n + 2 * p < span {
            return Err(Error::shapes(op, xs, ws, format!("spatial dim {d} of size {n} padded by {p} is smaller than the kernel ({k}, dilation {}: span {span})", o.dilation[d])));
        }
        out[d] = (n + 2 * p - span) / o.stride[d] + 1;
    }
    let shape = vec![xs[0], c_out, out[0], out[1], out[2]];
    checked_numel(op, &shape, x.dtype().size_in_bytes())?;
    let g = Geom3 {
        batch: xs[0],
        c_in,
        c_out,
        input: [xs[2], xs[3], xs[4]],
        output: out,
        kernel: [ws[2], ws[3], ws[4]],
        stride: o.stride,
        pad: o.padding.map(|p| p.0),
        dilation: o.dilation,
        groups,
    };
    Ok((g, shape))
}

/// The geometry of the convolution whose input gradient is `conv_transpose3d(x, w)`.
fn transpose_geom(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, o: &ConvTransposeOptions<3>) -> Result<(Geom3, Vec<usize>)> {
    let shape = transpose_shape(op, x, w, bias, o)?;
    let (xs, ws, groups, c_in, c_out) = (x.shape(), w.shape(), o.groups, x.shape()[1], shape[1]);
    let full = [shape[2], shape[3], shape[4]];
    checked_numel(op, &shape, x.dtype().size_in_bytes())?;
    let g = Geom3 {
        batch: xs[0],
        c_in: c_out,
        c_out: c_in,
        input: full,
        output: [xs[2], xs[3], xs[4]],
        kernel: [ws[2], ws[3], ws[4]],
        stride: o.stride,
        pad: o.padding,
        dilation: o.dilation,
        groups,
    };
    Ok((g, shape))
}

fn run_forward(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, g: &Geom3, shape: &[usize]) -> Result<Tensor> {
    with_float!(op, x.dtype(), T => {
        let b = bias.map(|b| values::<T>(op, b)).transpose()?;
        Tensor::from_vec(interrupted(forward::<T>(&values::<T>(op, x)?, &values::<T>(op, w)?, b.as_deref(), g))?, shape)
    })
}

fn run_input_grad(op: &'static str, gy: &Tensor, w: &Tensor, bias: Option<&Tensor>, g: &Geom3, shape: &[usize]) -> Result<Tensor> {
    with_float!(op, gy.dtype(), T => {
        let mut gx = interrupted(backward_input::<T>(&values::<T>(op, gy)?, &values::<T>(op, w)?, g))?;
        if let Some(b) = bias {
            let b = values::<T>(op, b)?;
            for (i, plane) in gx.chunks_mut(g.vol().max(1)).enumerate() {
                let bv = b[i % g.c_in];
                plane.iter_mut().for_each(|v| *v += bv);
            }
        }
        Tensor::from_vec(gx, shape)
    })
}

fn run_weight_grad(op: &'static str, x: &Tensor, gy: &Tensor, g: &Geom3, shape: &[usize]) -> Result<Tensor> {
    with_float!(op, x.dtype(), T => Tensor::from_vec(interrupted(backward_weight::<T>(&values::<T>(op, x)?, &values::<T>(op, gy)?, g))?, shape))
}

fn run_bias_grad(op: &'static str, gy: &Tensor, channels: usize) -> Result<Tensor> {
    let per = gy.numel() / (gy.shape()[0] * channels).max(1);
    with_float!(op, gy.dtype(), T => Tensor::from_vec(channel_sums::<T>(&values::<T>(op, gy)?, gy.shape()[0], channels, per), &[channels]))
}

impl Tensor {
    /// 3-d convolution: input `[batch, channels_in, d, h, w]`, weight `[channels_out, channels_in / groups, kd, kh, kw]`.
    pub fn conv3d(&self, weight: &Tensor, bias: Option<&Tensor>, options: &ConvOptions<3>) -> Result<Tensor> {
        let (g, shape) = conv_geom("conv3d", self, weight, bias, options)?;
        run_forward("conv3d", self, weight, bias, &g, &shape)
    }

    /// 3-d transposed convolution: weight `[channels_in, channels_out / groups, kd, kh, kw]`.
    pub fn conv_transpose3d(&self, weight: &Tensor, bias: Option<&Tensor>, options: &ConvTransposeOptions<3>) -> Result<Tensor> {
        let (g, shape) = transpose_geom("conv_transpose3d", self, weight, bias, options)?;
        run_input_grad("conv_transpose3d", self, weight, bias, &g, &shape)
    }
}

/// Record a 3-d convolution with geometry `g`, or with `transposed` the
/// transposed convolution (its adjoint: the input gradient is then the
/// convolution of `gy`, the weight gradient the conv's with `gy` and `x`
/// swapped).
fn record3(op: &'static str, y: Tensor, x: &Var, w: &Var, bias: Option<&Var>, g: Geom3, transposed: bool) -> Var {
    let (xv, wv) = (x.value.clone(), w.value.clone());
    record(y, &operands(x, w, bias), move || {
        FnBackward::new(op, move |gy, needs| {
            let (x, w) = (&xv, &wv);
            let mut grads = vec![
                match (needs[0], transposed) {
                    (false, _) => None,
                    (true, false) => Some(run_input_grad(op, &gy, w, None, &g, x.shape())?),
                    (true, true) => Some(run_forward(op, &gy, w, None, &g, x.shape())?),
                },
                match (needs[1], transposed) {
                    (false, _) => None,
                    (true, false) => Some(run_weight_grad(op, x, &gy, &g, w.shape())?),
                    (true, true) => Some(run_weight_grad(op, &gy, x, &g, w.shape())?),
                },
            ];
            if needs.len() > 2 {
                let channels = if transposed { g.c_in } else { g.c_out };
                grads.push(if needs[2] { Some(run_bias_grad(op, &gy, channels)?) } else { None });
            }
            Ok(grads)
        })
    })
}

impl Var {
    pub fn conv3d(&self, weight: &Var, bias: Option<&Var>, options: &ConvOptions<3>) -> Result<Var> {
        let op = "conv3d";
        let (g, shape) = conv_geom(op, &self.value, &weight.value, bias.map(|b| &b.value), options)?;
        let y = run_forward(op, &self.value, &weight.value, bias.map(|b| &b.value), &g, &shape)?;
        Ok(record3(op, y, self, weight, bias, g, false))
    }

    pub fn conv_transpose3d(&self, weight: &Var, bias: Option<&Var>, options: &ConvTransposeOptions<3>) -> Result<Var> {
        let op = "conv_transpose3d";
        let (g, shape) = transpose_geom(op, &self.value, &weight.value, bias.map(|b| &b.value), options)?;
        let y = run_input_grad(op, &self.value, &weight.value, bias.map(|b| &b.value), &g, &shape)?;
        Ok(record3(op, y, self, weight, bias, g, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(n: usize, k: u64) -> Vec<f64> {
        (0..n).map(|i| (((i as u64 * 7 + k * 13) % 17) as f64) / 8.0 - 1.0).collect()
    }

    /// Direct 6-deep loop reference of conv3d (groups 1).
    fn naive(x: &[f64], w: &[f64], xs: [usize; 5], ws: [usize; 5], s: usize, p: usize) -> (Vec<f64>, [usize; 3]) {
        let o: Vec<usize> = (0..3).map(|d| (xs[2 + d] + 2 * p - ws[2 + d]) / s + 1).collect();
        let mut out = vec![0.0; xs[0] * ws[0] * o[0] * o[1] * o[2]];
        for b in 0..xs[0] {
            for co in 0..ws[0] {
                for z in 0..o[0] {
                    for y in 0..o[1] {
                        for xx in 0..o[2] {
                            let mut acc = 0.0;
                            for ci in 0..xs[1] {
                                for a in 0..ws[2] {
                                    for bb in 0..ws[3] {
                                        for e in 0..ws[4] {
                                            let (iz, iy, ix) = ((z * s + a) as isize - p as isize, (y * s + bb) as isize - p as isize, (xx * s + e) as isize - p as isize);
                                            if iz < 0 || iy < 0 || ix < 0 || iz as usize >= xs[2] || iy as usize >= xs[3] || ix as usize >= xs[4] {
                                                continue;
                                            }
                                            let xi = (((b * xs[1] + ci) * xs[2] + iz as usize) * xs[3] + iy as usize) * xs[4] + ix as usize;
                                            let wi = (((co * ws[1] + ci) * ws[2] + a) * ws[3] + bb) * ws[4] + e;
                                            acc += x[xi] * w[wi];
                                        }
                                    }
                                }
                            }
                            out[(((b * ws[0] + co) * o[0] + z) * o[1] + y) * o[2] + xx] = acc;
                        }
                    }
                }
            }
        }
        (out, [o[0], o[1], o[2]])
    }

    #[test]
    fn matches_the_direct_loops() {
        let (xs, ws) = ([2, 3, 4, 5, 3], [2, 3, 2, 3, 2]);
        let (x, w) = (vals(xs.iter().product(), 1), vals(ws.iter().product(), 2));
        let (want, o) = naive(&x, &w, xs, ws, 2, 1);
        let tx = Tensor::from_vec(x, &xs).unwrap();
        let tw = Tensor::from_vec(w, &ws).unwrap();
        let got = tx.conv3d(&tw, None, &ConvOptions::new([2; 3], [1; 3], [1; 3], 1)).unwrap();
        assert_eq!(got.shape(), &[2, 2, o[0], o[1], o[2]]);
        assert!(got.to_vec::<f64>().iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12));
    }

    #[test]
    fn gradients_are_adjoint_and_transpose_inverts_shapes() {
        // <conv(x), gy> = <x, gx> and = <w, gw>.
        let (xs, ws) = ([1, 4, 3, 4, 3], [6, 2, 2, 2, 1]);
        let o = ConvOptions::new([1, 2, 1], [1, 0, 1], [1, 1, 2], 2);
        let x = Var::leaf(Tensor::from_vec(vals(xs.iter().product(), 3), &xs).unwrap());
        let w = Var::leaf(Tensor::from_vec(vals(ws.iter().product(), 4), &ws).unwrap());
        let y = x.conv3d(&w, None, &o).unwrap();
        let gy: Vec<f64> = vals(y.value.numel(), 5);
        let gyt = Var::constant(Tensor::from_vec(gy.clone(), y.value.shape()).unwrap());
        let loss = y.binary(crate::ops::binary::BinaryOp::Mul, &gyt).unwrap().sum().unwrap();
        let grads = crate::autodiff::backward(&loss).unwrap();
        let total: f64 = y.value.to_vec::<f64>().iter().zip(&gy).map(|(a, b)| a * b).sum();
        for v in [&x, &w] {
            let g = grads.get(v.id().unwrap()).unwrap().to_vec::<f64>();
            let dot: f64 = v.value.to_vec::<f64>().iter().zip(&g).map(|(a, b)| a * b).sum();
            assert!((dot - total).abs() < 1e-9, "{dot} vs {total}");
        }
        // The transposed convolution maps the output shape back to the input's.
        let t = ConvTransposeOptions { stride: [1, 2, 1], padding: [1, 0, 1], padding_out: [0, 0, 0], dilation: [1, 1, 2], groups: 2 };
        let back = y.value.conv_transpose3d(&Tensor::from_vec(vals(48, 6), &[6, 2, 2, 2, 1]).unwrap(), None, &t).unwrap();
        assert_eq!(back.shape(), &[1, 4, 3, 4, 3]);
    }

    #[test]
    fn errors() {
        let x = Tensor::zeros(&[1, 2, 2, 2, 2], crate::DType::F32);
        let w = Tensor::zeros(&[1, 2, 3, 3, 3], crate::DType::F32);
        let e = x.conv3d(&w, None, &ConvOptions::default()).unwrap_err().to_string();
        assert!(e.contains("smaller than the kernel"), "{e}");
        let e = x.conv3d(&Tensor::zeros(&[1, 2, 1, 1], crate::DType::F32), None, &ConvOptions::default()).unwrap_err().to_string();
        assert!(e.contains("rank"), "{e}");
    }
}
