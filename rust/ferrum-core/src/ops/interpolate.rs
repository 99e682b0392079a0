//! Resizing `[batch, channels, height, width]` to a new height and width,
//! as Burn's `interpolate` on its CPU backend: nearest (source index
//! `floor(i * in / out)`), bilinear and bicubic (corners aligned: the first
//! and last pixels map onto each other; bicubic with `a = -0.75` and indices
//! clamped at the edges). Both dims resample independently, so each output
//! pixel is a weighted sum of a few source pixels ("taps") per dim; backward
//! scatters the gradient through the same taps.

use crate::autodiff::{record, FnBackward, Var};
use crate::element::FloatElement;
use crate::error::{Error, Result};
use crate::kernels::team::for_each_chunk_mut;
use crate::ops::conv::values;
use crate::shape::checked_numel;
use crate::tensor::Tensor;
use crate::{with_float, Kind};

/// How [`Tensor::interpolate`] resamples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpolateMode {
    Nearest,
    Bilinear,
    Bicubic,
}

/// The source pixels (index, weight) that make up each output index of one dim.
fn taps(input: usize, output: usize, mode: InterpolateMode) -> Vec<Vec<(usize, f64)>> {
    let last = input - 1;
    match mode {
        InterpolateMode::Nearest => {
            let ratio = input as f64 / output as f64;
            (0..output).map(|i| vec![(((ratio * i as f64).floor() as usize).min(last), 1.0)]).collect()
        }
        InterpolateMode::Bilinear | InterpolateMode::Bicubic => {
            // Corners aligned: output `i` reads input position `ratio * i`.
            let ratio = last as f64 / output.saturating_sub(1).max(1) as f64;
            (0..output)
                .map(|i| {
                    let frac = ratio * i as f64;
                    let lo = frac.floor();
                    let t = frac - lo;
                    if mode == InterpolateMode::Bilinear {
                        let hi = frac.ceil().min(last as f64);
                        vec![((lo as usize).min(last), 1.0 - t), (hi as usize, t)]
                    } else {
                        let base = lo as usize;
                        let idx = [base.saturating_sub(1), base, base + 1, base + 2].map(|k| k.min(last));
                        idx.into_iter().zip(cubic_weights(t)).collect()
                    }
                })
                .collect()
        }
    }
}

/// Keys' cubic convolution weights with `a = -0.75` at fraction `t`.
fn cubic_weights(t: f64) -> [f64; 4] {
    const A: f64 = -0.75;
    let near = |x: f64| ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
    let far = |x: f64| ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A;
    [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]
}

struct Plan {
    rows: Vec<Vec<(usize, f64)>>,
    cols: Vec<Vec<(usize, f64)>>,
    planes: usize,
    ih: usize,
    iw: usize,
    oh: usize,
    ow: usize,
}

fn plan(op: &'static str, x: &Tensor, size: [usize; 2], mode: InterpolateMode) -> Result<Plan> {
    x.expect_kind(op, Kind::Float)?;
    x.expect_rank(op, 4)?;
    let s = x.shape();
    let (ih, iw) = (s[2], s[3]);
    let [oh, ow] = size;
    if ih == 0 || iw == 0 || oh == 0 || ow == 0 {
        return Err(Error::invalid(op, format!("cannot resize {ih}x{iw} to {oh}x{ow}: every size must be at least 1 (input shape {s:?})")));
    }
    checked_numel(op, &[s[0], s[1], oh, ow], x.dtype().size_in_bytes())?;
    Ok(Plan { rows: taps(ih, oh, mode), cols: taps(iw, ow, mode), planes: s[0] * s[1], ih, iw, oh, ow })
}

fn forward<T: FloatElement>(x: &[T], p: &Plan) -> Vec<T> {
    let mut out = vec![T::zero(); p.planes * p.oh * p.ow];
    for_each_chunk_mut(&mut out, p.oh * p.ow, |plane, dst| {
        let src = &x[plane * p.ih * p.iw..][..p.ih * p.iw];
        for (h, row_taps) in p.rows.iter().enumerate() {
            for (w, col_taps) in p.cols.iter().enumerate() {
                let mut acc = 0.0f64;
                for &(r, wy) in row_taps {
                    for &(c, wx) in col_taps {
                        acc += wy * wx * src[r * p.iw + c].to_f64();
                    }
                }
                dst[h * p.ow + w] = T::from_f64(acc);
            }
        }
    });
    out
}

fn backward<T: FloatElement>(g: &[T], p: &Plan) -> Vec<T> {
    let mut gx = vec![T::zero(); p.planes * p.ih * p.iw];
    for_each_chunk_mut(&mut gx, p.ih * p.iw, |plane, dst| {
        let src = &g[plane * p.oh * p.ow..][..p.oh * p.ow];
        let mut acc = vec![0.0f64; p.ih * p.iw];
        for (h, row_taps) in p.rows.iter().enumerate() {
            for (w, col_taps) in p.cols.iter().enumerate() {
                let gv = src[h * p.ow + w].to_f64();
                for &(r, wy) in row_taps {
                    for &(c, wx) in col_taps {
                        acc[r * p.iw + c] += wy * wx * gv;
                    }
                }
            }
        }
        for (d, a) in dst.iter_mut().zip(acc) {
            *d = T::from_f64(a);
        }
    });
    gx
}

impl Tensor {
    /// `[batch, channels, height, width]` resampled to `[.., size[0], size[1]]`.
    pub fn interpolate(&self, size: [usize; 2], mode: InterpolateMode) -> Result<Tensor> {
        let op = "interpolate";
        let p = plan(op, self, size, mode)?;
        let shape = [self.shape()[0], self.shape()[1], p.oh, p.ow];
        with_float!(op, self.dtype(), T => Tensor::from_vec(forward::<T>(&values::<T>(op, self)?, &p), &shape))
    }
}

impl Var {
    /// [`Tensor::interpolate`], differentiable (every mode).
    pub fn interpolate(&self, size: [usize; 2], mode: InterpolateMode) -> Result<Var> {
        let op = "interpolate";
        let y = self.value.interpolate(size, mode)?;
        let in_shape = self.value.shape().to_vec();
        let p = plan(op, &self.value, size, mode)?;
        Ok(record(y, &[self], move || {
            FnBackward::new(op, move |g, _| with_float!(op, g.dtype(), T => Ok(vec![Some(Tensor::from_vec(backward::<T>(&values::<T>(op, &g)?, &p), &in_shape)?)])))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: Vec<f64>, shape: &[usize]) -> Tensor {
        Tensor::from_vec(v, shape).unwrap()
    }

    #[test]
    fn nearest_repeats_and_picks_like_burn() {
        let x = t(vec![1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
        let y = x.interpolate([4, 4], InterpolateMode::Nearest).unwrap().to_vec::<f64>();
        assert_eq!(&y[..4], &[1.0, 1.0, 2.0, 2.0]);
        let x = t((0..5).map(f64::from).collect(), &[1, 1, 1, 5]);
        // 5 -> 2: source indices floor(0 * 2.5) = 0 and floor(1 * 2.5) = 2.
        assert_eq!(x.interpolate([1, 2], InterpolateMode::Nearest).unwrap().to_vec::<f64>(), vec![0.0, 2.0]);
    }

    #[test]
    fn bilinear_aligns_corners() {
        let x = t(vec![0.0, 3.0], &[1, 1, 1, 2]);
        let y = x.interpolate([1, 4], InterpolateMode::Bilinear).unwrap().to_vec::<f64>();
        assert_eq!(y, vec![0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn bicubic_keeps_a_linear_ramp_inside() {
        let x = t((0..8).map(f64::from).collect(), &[1, 1, 1, 8]);
        let y = x.interpolate([1, 15], InterpolateMode::Bicubic).unwrap().to_vec::<f64>();
        // Away from the clamped edges the cubic reproduces a line exactly.
        for (i, v) in y.iter().enumerate().take(12).skip(3) {
            assert!((v - i as f64 * 0.5).abs() < 1e-12, "{i}: {v}");
        }
    }

    #[test]
    fn backward_is_the_adjoint() {
        // <interpolate(x), g> == <x, backward(g)> for every mode.
        for mode in [InterpolateMode::Nearest, InterpolateMode::Bilinear, InterpolateMode::Bicubic] {
            let x: Vec<f64> = (0..2 * 3 * 4).map(|i| (i as f64 * 0.37).sin()).collect();
            let g: Vec<f64> = (0..2 * 5 * 7).map(|i| (i as f64 * 0.11).cos()).collect();
            let leaf = Var::leaf(t(x.clone(), &[1, 2, 3, 4]));
            let y = leaf.interpolate([5, 7], mode).unwrap();
            let gt = Var::constant(t(g.clone(), &[1, 2, 5, 7]));
            let loss = y.binary(crate::ops::binary::BinaryOp::Mul, &gt).unwrap().sum().unwrap();
            let grads = crate::autodiff::backward(&loss).unwrap();
            let gx = grads.get(leaf.id().unwrap()).unwrap().to_vec::<f64>();
            let lhs: f64 = y.value.to_vec::<f64>().iter().zip(&g).map(|(a, b)| a * b).sum();
            let rhs: f64 = x.iter().zip(&gx).map(|(a, b)| a * b).sum();
            assert!((lhs - rhs).abs() < 1e-10, "{mode:?}: {lhs} vs {rhs}");
        }
    }

    #[test]
    fn errors() {
        let x = Tensor::zeros(&[1, 1, 2, 2], crate::DType::F32);
        assert!(x.interpolate([0, 2], InterpolateMode::Nearest).unwrap_err().to_string().contains("at least 1"));
        assert!(Tensor::zeros(&[2, 2], crate::DType::F32).interpolate([1, 1], InterpolateMode::Nearest).is_err());
    }
}
