//! A naive f64 convolution forward with the fused epilogue, the reference
//! the convolution kernels' tests compare against.

use super::epilogue::{Activation, Epilogue};
use super::im2col::ConvGeom;

/// `epilogue(conv(x, w))` summed in f64 straight from the definition:
/// `x` `[batch, c_in, h, w]`, `w` `[c_out, c_in / groups, kh, kw]`, the
/// result `[batch, c_out, oh, ow]`; padding reads as zero.
pub(crate) fn conv_forward_naive_f64(x: &[f32], w: &[f32], epi: Epilogue<'_>, g: &ConvGeom) -> Vec<f64> {
    let (og, cg, p) = (g.og(), g.cg(), g.p());
    let mut y = vec![0.0f64; g.batch * g.c_out * p];
    for b in 0..g.batch {
        for o in 0..g.c_out {
            let grp = o / og;
            for oy in 0..g.oh {
                for ox in 0..g.ow {
                    let mut s = 0.0f64;
                    for c in 0..cg {
                        let ci = grp * cg + c;
                        for ky in 0..g.kh {
                            for kx in 0..g.kw {
                                let iy = (oy * g.stride[0] + ky * g.dilation[0]) as isize - g.pad[0] as isize;
                                let ix = (ox * g.stride[1] + kx * g.dilation[1]) as isize - g.pad[1] as isize;
                                if iy < 0 || ix < 0 || iy >= g.h as isize || ix >= g.w as isize {
                                    continue;
                                }
                                let xv = x[((b * g.c_in + ci) * g.h + iy as usize) * g.w + ix as usize];
                                let wv = w[((o * cg + c) * g.kh + ky) * g.kw + kx];
                                s += f64::from(xv) * f64::from(wv);
                            }
                        }
                    }
                    let at = (b * g.c_out + o) * p + oy * g.ow + ox;
                    let mut v = s * epi.scale.map_or(1.0, |v| f64::from(v[o])) + epi.shift.map_or(0.0, |v| f64::from(v[o]));
                    v += epi.residual.map_or(0.0, |r| f64::from(r[at]));
                    y[at] = activation_f64(epi.act, if epi.relu && v <= 0.0 { 0.0 } else { v });
                }
            }
        }
    }
    y
}

/// Deterministic values in [-1, 1) from `seed`.
pub(crate) fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// The geometry of a convolution with symmetric padding `pad`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn geom(batch: usize, c_in: usize, hw: (usize, usize), c_out: usize, kernel: (usize, usize), stride: [usize; 2], pad: [usize; 2], dilation: [usize; 2], groups: usize) -> ConvGeom {
    let oh = (hw.0 + 2 * pad[0] - dilation[0] * (kernel.0 - 1) - 1) / stride[0] + 1;
    let ow = (hw.1 + 2 * pad[1] - dilation[1] * (kernel.1 - 1) - 1) / stride[1] + 1;
    ConvGeom { batch, c_in, h: hw.0, w: hw.1, c_out, oh, ow, kh: kernel.0, kw: kernel.1, stride, pad, dilation, groups }
}

/// Assert `got` is within f32 rounding of the f64 `expected` for sums of `k` terms.
pub(crate) fn assert_close(got: &[f32], expected: &[f64], k: usize, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: length");
    for (i, (a, b)) in got.iter().zip(expected).enumerate() {
        assert!((f64::from(*a) - b).abs() <= 1e-5 * (1.0 + b.abs()) * (k as f64).sqrt().max(1.0) * 4.0, "{what} at {i}: {a} vs {b}");
    }
}

/// `act(v)` in f64, from each activation's definition.
pub(crate) fn activation_f64(act: Activation, v: f64) -> f64 {
    let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
    match act {
        Activation::None => v,
        Activation::Clip { low, high } => v.max(low.into()).min(high.into()),
        Activation::HardSigmoid { alpha, beta } => (f64::from(alpha) * v + f64::from(beta)).clamp(0.0, 1.0),
        Activation::HardSwish => v * (v + 3.0).clamp(0.0, 6.0) / 6.0,
        Activation::Sigmoid => sigmoid(v),
        Activation::Silu => v * sigmoid(v),
    }
}
