//! PReLU: a leaky ReLU whose slope is learned, one per channel.

use crate::autodiff::{record, sum_to_shape, FnBackward, Var};
use crate::kernels::copy::contiguous_values;
use crate::ops::binary::BinaryOp;
use crate::ops::compare::CompareOp;
use crate::Scalar;
use rayon::prelude::*;

use crate::element::FloatElement;
use crate::error::{Error, Result};
use crate::kernels::elementwise::map_same;
use crate::kernels::parallel::{go_parallel, simd, CHUNK, PAR_CHEAP};
use crate::tensor::Tensor;
use crate::with_float;

#[inline(always)]
fn prelu_of<T: FloatElement>(x: T, a: T) -> T {
    if x < T::zero() { x * a } else { x }
}

impl Tensor {
    /// `x` where `x >= 0`, else `alpha_c * x`. `alpha` is rank 1 holding one
    /// weight, or one per channel: dim 1 of the input. A rank-1 input has
    /// no channel dim (one channel), as in Burn and PyTorch.
    pub fn prelu(&self, alpha: &Tensor) -> Result<Tensor> {
        let op = "prelu";
        with_float!(op, self.dtype(), T => {
            self.expect_same_dtype(op, alpha)?;
            if alpha.rank() != 1 {
                return Err(Error::invalid(op, format!("alpha must have rank 1, found shape {:?}", alpha.shape())));
            }
            let w = alpha.try_to_vec::<T>(op)?;
            if w.len() == 1 {
                let a = w[0];
                return map_same(op, self.clone(), PAR_CHEAP, move |x: T| prelu_of(x, a));
            }
            let channel_dim = 1;
            let channels = self.shape().get(channel_dim).copied();
            if channels != Some(w.len()) {
                let expected = if self.rank() < 2 {
                    "expected 1: an input of rank below 2 has one channel".to_string()
                } else {
                    format!("expected 1 or the size of dim {channel_dim} (the channels)")
                };
                return Err(Error::invalid(op, format!("alpha has {} weights, {expected}; input shape {:?}", w.len(), self.shape())));
            }
            let inner: usize = self.shape()[channel_dim + 1..].iter().product();
            let values = contiguous_values::<T>(op, self)?;
            let src: &[T] = &values;
            Tensor::from_vec(per_channel(src, &w, inner), self.shape())
        })
    }
}

/// PReLU on `[outer, channels, inner]` with one weight per channel.
fn per_channel<T: FloatElement>(src: &[T], w: &[T], inner: usize) -> Vec<T> {
    let mut out = vec![T::ZERO; src.len()];
    if src.is_empty() {
        return out;
    }
    let parallel = go_parallel(src.len(), PAR_CHEAP);
    if inner == 1 {
        // Rows of `channels` values line up with the weights.
        let c = w.len();
        let run = |x: &[T], d: &mut [T]| {
            simd(
                #[inline(always)]
                || {
                    for (x, d) in x.chunks_exact(c).zip(d.chunks_exact_mut(c)) {
                        for ((o, &v), &a) in d.iter_mut().zip(x).zip(w) {
                            *o = prelu_of(v, a);
                        }
                    }
                },
            )
        };
        if parallel {
            let per_task = CHUNK.div_ceil(c) * c;
            out.par_chunks_mut(per_task).zip(src.par_chunks(per_task)).for_each(|(d, x)| run(x, d));
        } else {
            run(src, &mut out);
        }
    } else {
        // Each run of `inner` values shares one weight; row r is channel r % c.
        let run = |first_row: usize, x: &[T], d: &mut [T]| {
            simd(
                #[inline(always)]
                || {
                    for (r, (x, d)) in x.chunks_exact(inner).zip(d.chunks_exact_mut(inner)).enumerate() {
                        let a = w[(first_row + r) % w.len()];
                        for (o, &v) in d.iter_mut().zip(x) {
                            *o = prelu_of(v, a);
                        }
                    }
                },
            )
        };
        if parallel {
            let rows_per_task = CHUNK.div_ceil(inner);
            let per_task = rows_per_task * inner;
            out.par_chunks_mut(per_task)
                .zip(src.par_chunks(per_task))
                .enumerate()
                .for_each(|(t, (d, x))| run(t * rows_per_task, x, d));
        } else {
            run(0, src, &mut out);
        }
    }
    out
}

impl Var {
    /// gx = g where x > 0, else g α; gα = Σ g x over x <= 0, per channel.
    pub fn prelu(&self, alpha: &Var) -> Result<Var> {
        let y = self.value.prelu(&alpha.value)?;
        let (x, a) = (self.value.clone(), alpha.value.clone());
        Ok(record(y, &[self, alpha], move || {
            FnBackward::new("prelu", move |g, needs| {
                let neg = x.compare_scalar(CompareOp::LowerEqual, Scalar::Float(0.0))?;
                // alpha laid out along the channel dim 1 (one shared weight
                // is all a rank-1 input takes).
                let mut shape = vec![1isize; x.rank()];
                if a.numel() > 1 {
                    shape[1] = a.numel() as isize;
                }
                let a_b = a.reshape(&shape)?;
                let gx = if needs[0] {
                    let slope = Tensor::ones(x.shape(), x.dtype()).mask_where(&neg, &a_b.expand(&x.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())?)?;
                    Some(g.binary(BinaryOp::Mul, &slope)?)
                } else {
                    None
                };
                let ga = if needs[1] {
                    let contrib = g.binary(BinaryOp::Mul, &x)?.mask_fill(&neg.bool_not()?, Scalar::Float(0.0))?;
                    let per = sum_to_shape(contrib, &shape.iter().map(|&d| d as usize).collect::<Vec<_>>())?;
                    Some(sum_to_shape(per.reshape(&[-1])?, a.shape())?)
                } else {
                    None
                };
                Ok(vec![gx, ga])
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn reference(x: &[f64], shape: &[usize], w: &[f64]) -> Vec<f64> {
        let inner: usize = if shape.len() >= 2 { shape[2..].iter().product() } else { 1 };
        x.iter()
            .enumerate()
            .map(|(i, &v)| {
                let a = if w.len() == 1 { w[0] } else { w[(i / inner) % w.len()] };
                if v >= 0.0 { v } else { a * v }
            })
            .collect()
    }

    fn values(n: usize) -> Vec<f64> {
        (0..n).map(|i| ((i * 37) % 23) as f64 - 11.5).collect()
    }

    fn check(shape: &[usize], w: &[f64]) {
        let n: usize = shape.iter().product();
        let x = values(n);
        let t = Tensor::from_vec(x.clone(), shape).unwrap();
        let a = Tensor::from_vec(w.to_vec(), &[w.len()]).unwrap();
        assert_eq!(t.prelu(&a).unwrap().to_vec::<f64>(), reference(&x, shape, w), "{shape:?}");
    }

    #[test]
    fn per_channel_and_shared_weights() {
        check(&[2, 3, 4], &[0.1, 0.2, 0.3]);
        check(&[2, 3], &[0.1, 0.2, 0.3]);
        check(&[2, 3, 2, 2], &[0.25]);
        check(&[7], &[0.5]);
        check(&[3, 1, 4], &[0.5]);
    }

    #[test]
    fn large_inputs_take_the_parallel_paths() {
        check(&[4, 8, 64, 80], &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]);
        check(&[40_000, 5], &[0.1, 0.2, 0.3, 0.4, 0.5]);
    }

    #[test]
    fn transposed_input() {
        // [4, 3] view of a [3, 4] buffer: channels are the 3 columns.
        let t = Tensor::from_vec(values(12), &[3, 4]).unwrap().transpose();
        let a = Tensor::from_vec(vec![0.5, -1.0, 2.0], &[3]).unwrap();
        let got = t.prelu(&a).unwrap().to_vec::<f64>();
        assert_eq!(got, reference(&t.to_vec::<f64>(), &[4, 3], &[0.5, -1.0, 2.0]));
    }

    #[test]
    fn nan_and_empty() {
        let t = Tensor::from_vec(vec![f32::NAN, -2.0], &[1, 2]).unwrap();
        let a = Tensor::from_vec(vec![0.5f32, 0.25], &[2]).unwrap();
        let y = t.prelu(&a).unwrap().to_vec::<f32>();
        assert!(y[0].is_nan());
        assert_eq!(y[1], -0.5);
        let e = Tensor::zeros(&[0, 2, 3], DType::F32);
        assert_eq!(e.prelu(&a).unwrap().shape(), &[0, 2, 3]);
    }

    #[test]
    fn bad_alpha_is_an_error() {
        let t = Tensor::zeros(&[2, 3, 4], DType::F32);
        let e = t.prelu(&Tensor::zeros(&[4], DType::F32)).unwrap_err().to_string();
        assert_eq!(e, "prelu: alpha has 4 weights, expected 1 or the size of dim 1 (the channels); input shape [2, 3, 4]");
        // Burn's test_prelu_single_dim_multi_weight: a rank-1 input has one channel.
        let v = Tensor::zeros(&[5], DType::F32);
        let e = v.prelu(&Tensor::zeros(&[5], DType::F32)).unwrap_err().to_string();
        assert_eq!(e, "prelu: alpha has 5 weights, expected 1: an input of rank below 2 has one channel; input shape [5]");
        let e = t.prelu(&Tensor::zeros(&[3, 1], DType::F32)).unwrap_err().to_string();
        assert_eq!(e, "prelu: alpha must have rank 1, found shape [3, 1]");
        let e = t.prelu(&Tensor::zeros(&[3], DType::F64)).unwrap_err().to_string();
        assert!(e.starts_with("prelu: dtypes differ: f32 and f64; convert one with .cast(DType.F64)"), "{e}");
        let i = Tensor::zeros(&[2, 3], DType::I64);
        assert_eq!(i.prelu(&i).unwrap_err().to_string(), "prelu: expected a Float tensor, found Int");
    }
}
