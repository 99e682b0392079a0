//! Statistics over one dim of Float tensors: variance (with or without
//! Bessel's correction), variance with mean, and covariance.

use crate::autodiff::{record, FnBackward, Var};
use crate::dtype::{DType, Kind, Scalar};
use crate::element::{FloatElement, FloatLanes};
use crate::error::Result;
use crate::kernels::parallel::PAR_CHEAP;
use crate::kernels::reduce::{fold_seq, fold_tile, fold_tile_with, reduce_axis, Axis};
use crate::ops::binary::BinaryOp;
use crate::kernels::copy::contiguous_values;
use crate::ops::reduce::{keep_dim, tensor_from};
use crate::tensor::Tensor;
use crate::{bail, with_float};

/// `(variance, mean)` along `d`, the squared deviations divided by
/// `n - correction`. Two passes (mean, then deviations from it) keep the
/// cancellation error of a one-pass sum of squares out. No elements: NaN.
/// Elements of `S` are read as `T` (f16 and bf16 as f32, in place) and the
/// results are of `T`.
fn var_mean_along<S: FloatLanes<Compute = T>, T: FloatElement>(op: &'static str, x: &Tensor, d: usize, correction: usize) -> Result<(Tensor, Tensor)> {
    let data = contiguous_values::<S>(op, x)?;
    let ax = Axis::new(x.shape(), d);
    let count = T::from_f64(ax.n as f64);
    let denom = T::from_f64(ax.n as f64 - correction as f64);
    let add = |a: T, b: T| a + b;
    let mut out = crate::shape::try_zeroed(op, ax.outer * ax.inner, (T::zero(), T::zero()))?;
    reduce_axis(
        &data,
        ax,
        &mut out,
        PAR_CHEAP,
        #[inline(always)]
        |row| {
            if row.is_empty() {
                return (T::nan(), T::nan());
            }
            let mean = fold_seq(row, T::zero(), &add, &|v: S| v.widen()) / count;
            let squares = fold_seq(row, T::zero(), &add, &|v: S| (v.widen() - mean) * (v.widen() - mean));
            (squares / denom, mean)
        },
        #[inline(always)]
        |src, stride, dst| {
            let w = dst.len();
            let mut means = vec![T::zero(); w];
            fold_tile(src, stride, ax.n, &mut means, T::zero(), &add, &|v: S| v.widen());
            means.iter_mut().for_each(|m| *m = *m / count);
            let mut squares = vec![T::zero(); w];
            fold_tile_with(src, stride, ax.n, &means, &mut squares, T::zero(), &add, &|v: S, m| (v.widen() - m) * (v.widen() - m));
            for ((o, &s), &m) in dst.iter_mut().zip(&squares).zip(&means) {
                *o = (s / denom, m);
            }
        },
    );
    let (var, mean): (Vec<T>, Vec<T>) = out.into_iter().unzip();
    let shape = keep_dim(x.shape(), d);
    Ok((tensor_from(var, &shape), tensor_from(mean, &shape)))
}

impl Tensor {
    fn var_mean_with(&self, op: &'static str, dim: isize, correction: usize) -> Result<(Tensor, Tensor)> {
        let d = self.dim(op, dim)?;
        let round_back = |(var, mean): (Tensor, Tensor)| Ok((var.cast(self.dtype())?, mean.cast(self.dtype())?));
        match self.dtype() {
            // As f32, rounded back once: the values of widening the tensor first.
            DType::BF16 => round_back(var_mean_along::<half::bf16, f32>(op, self, d, correction)?),
            DType::F16 => round_back(var_mean_along::<half::f16, f32>(op, self, d, correction)?),
            _ => with_float!(op, self.dtype(), T => var_mean_along::<T, T>(op, self, d, correction)),
        }
    }

    /// Unbiased variance along `dim` (divides by n - 1), keeping the dim.
    pub fn var(&self, dim: isize) -> Result<Tensor> {
        Ok(self.var_mean_with("var", dim, 1)?.0)
    }

    /// Biased variance along `dim` (divides by n).
    pub fn var_bias(&self, dim: isize) -> Result<Tensor> {
        Ok(self.var_mean_with("var_bias", dim, 0)?.0)
    }

    /// `(unbiased variance, mean)` along `dim`.
    pub fn var_mean(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        self.var_mean_with("var_mean", dim, 1)
    }

    /// `(biased variance, mean)` along `dim`.
    pub fn var_mean_bias(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        self.var_mean_with("var_mean_bias", dim, 0)
    }

    /// Burn's covariance: samples along `dim`, divided by
    /// `n - correction_factor`. For a `[V, N]` input and `dim = 1` this is
    /// the `[V, V]` matrix of `np.cov(x, ddof=correction_factor)`.
    pub fn cov(&self, dim: isize, correction_factor: usize) -> Result<Tensor> {
        let op = "cov";
        self.expect_kind(op, Kind::Float)?;
        let d = self.dim(op, dim)?;
        let n = self.shape()[d];
        if correction_factor > n {
            bail!(op, "correction factor {} exceeds the {} samples along dim {} (shape {:?})", correction_factor, n, d, self.shape());
        }
        let centered = self.binary(BinaryOp::Sub, &self.mean_dim(dim)?)?.swap_dims(d as isize, 0)?;
        let products = centered.transpose().matmul(&centered)?;
        products.binary_scalar_owned(BinaryOp::Div, Scalar::Float((n - correction_factor) as f64))
    }
}

impl Var {
    /// d var / d x = 2 (x - mean) / (n - correction).
    fn variance(&self, dim: isize, correction: f64) -> Result<Var> {
        let d = self.value.dim("var", dim)?;
        let n = self.value.shape()[d] as f64;
        let y = if correction == 0.0 { self.value.var_bias(dim)? } else { self.value.var(dim)? };
        Ok(record(y, &[self], move || {
            let x = self.saved();
            FnBackward::new("var", move |g, _| {
                let x = x.get()?;
                // A half input's gradient is computed in f32 and rounded once.
                let dtype = g.dtype();
                let wide = matches!(dtype, DType::BF16 | DType::F16);
                let (x, g) = if wide { (x.cast(DType::F32)?, g.cast(DType::F32)?) } else { (x, g) };
                let centered = x.binary(BinaryOp::Sub, &x.mean_dim(dim)?)?;
                let scale = 2.0 / (n - correction);
                let gx = centered.binary_scalar_owned(BinaryOp::Mul, Scalar::Float(scale))?.binary_owned(BinaryOp::Mul, g)?;
                Ok(vec![Some(if wide { gx.cast(dtype)? } else { gx })])
            })
        }))
    }

    pub fn var(&self, dim: isize) -> Result<Var> {
        self.variance(dim, 1.0)
    }

    pub fn var_bias(&self, dim: isize) -> Result<Var> {
        self.variance(dim, 0.0)
    }

    pub fn var_mean(&self, dim: isize) -> Result<(Var, Var)> {
        Ok((self.var(dim)?, self.mean_dim(dim)?))
    }

    pub fn var_mean_bias(&self, dim: isize) -> Result<(Var, Var)> {
        Ok((self.var_bias(dim)?, self.mean_dim(dim)?))
    }

    /// Built from differentiable ops, so its gradient needs no formula.
    pub fn cov(&self, dim: isize, correction_factor: usize) -> Result<Var> {
        self.value.expect_kind("cov", Kind::Float)?;
        let d = self.value.dim("cov", dim)?;
        let n = self.value.shape()[d];
        if correction_factor > n {
            bail!("cov", "correction factor {} exceeds the {} samples along dim {} (shape {:?})", correction_factor, n, d, self.value.shape());
        }
        let centered = self.binary(BinaryOp::Sub, &self.mean_dim(dim)?)?.swap_dims(dim, 0)?;
        let denom = n as f64 - correction_factor as f64;
        centered.transpose().matmul(&centered)?.binary_scalar(BinaryOp::Div, Scalar::Float(denom))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn naive_var(x: &[f64], ax: Axis, correction: usize) -> Vec<f64> {
        let mut out = vec![];
        for o in 0..ax.outer {
            for c in 0..ax.inner {
                let vals: Vec<f64> = (0..ax.n).map(|j| x[(o * ax.n + j) * ax.inner + c]).collect();
                let m = vals.iter().sum::<f64>() / ax.n as f64;
                out.push(vals.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (ax.n - correction) as f64);
            }
        }
        out
    }

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
    }

    #[test]
    fn variance_matches_naive_along_every_dim() {
        let shape = [3, 5, 40];
        let v: Vec<f64> = (0..600).map(|i| ((i * 31 % 97) as f64) * 0.3 - 9.0).collect();
        let t = Tensor::from_vec(v.clone(), &shape).unwrap();
        for d in 0..3 {
            let ax = Axis::new(&shape, d);
            let got = t.var(d as isize).unwrap();
            assert_eq!(got.shape(), keep_dim(&shape, d).as_slice());
            assert!(close(&got.to_vec::<f64>(), &naive_var(&v, ax, 1), 1e-12));
            assert!(close(&t.var_bias(d as isize - 3).unwrap().to_vec::<f64>(), &naive_var(&v, ax, 0), 1e-12));
        }
    }

    #[test]
    fn variance_of_a_transposed_view() {
        let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 6.0, 8.0], &[2, 3]).unwrap().transpose();
        // Rows of the view: [1, 4], [2, 6], [3, 8].
        assert_eq!(x.var(1).unwrap().to_vec::<f32>(), vec![4.5, 8.0, 12.5]);
        let (var, mean) = x.var_mean_bias(-1).unwrap();
        assert_eq!(var.to_vec::<f32>(), vec![2.25, 4.0, 6.25]);
        assert_eq!(mean.to_vec::<f32>(), vec![2.5, 4.0, 5.5]);
        let (var, mean) = x.var_mean(0).unwrap();
        assert_eq!((var.to_vec::<f32>(), mean.to_vec::<f32>()), (vec![1.0, 4.0], vec![2.0, 6.0]));
    }

    #[test]
    fn long_columns_with_a_large_offset_stay_accurate() {
        // 1000 + alternating +-1 down 20000 rows: variance 1 (biased).
        let rows = 20_000;
        let v: Vec<f32> = (0..rows * 3).map(|i| 1000.0 + if (i / 3) % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let x = Tensor::from_vec(v, &[rows, 3]).unwrap();
        let got = x.var_bias(0).unwrap().to_vec::<f32>();
        assert!(got.iter().all(|&g| (g - 1.0).abs() < 1e-4), "{got:?}");
        let rowwise = x.transpose().var_bias(1).unwrap().to_vec::<f32>();
        assert!(rowwise.iter().all(|&g| (g - 1.0).abs() < 1e-4), "{rowwise:?}");
    }

    #[test]
    fn degenerate_sizes_give_nan() {
        let one = Tensor::from_vec(vec![3.0f64, 4.0], &[2, 1]).unwrap();
        assert!(one.var(1).unwrap().to_vec::<f64>().iter().all(|v| v.is_nan()));
        assert_eq!(one.var_bias(1).unwrap().to_vec::<f64>(), vec![0.0, 0.0]);
        let empty = Tensor::zeros(&[2, 0], DType::F32);
        let (var, mean) = empty.var_mean(1).unwrap();
        assert!(var.to_vec::<f32>().iter().chain(&mean.to_vec::<f32>()).all(|v| v.is_nan()));
    }

    #[test]
    fn errors_name_the_op() {
        let i = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        assert_eq!(i.var(0).unwrap_err().to_string(), "var: expected a Float tensor, found Int");
        assert_eq!(i.cov(0, 1).unwrap_err().to_string(), "cov: expected a Float tensor, found Int");
        let f = Tensor::zeros(&[2, 3], DType::F32);
        assert_eq!(f.var_mean(2).unwrap_err().to_string(), "var_mean: dim 2 is out of range for a tensor of rank 2");
        assert_eq!(
            f.cov(1, 4).unwrap_err().to_string(),
            "cov: correction factor 4 exceeds the 3 samples along dim 1 (shape [2, 3])"
        );
    }

    #[test]
    fn covariance_matrix() {
        let x = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 2.0, 1.0, 0.0], &[2, 3]).unwrap();
        let c = x.cov(1, 1).unwrap();
        assert_eq!(c.shape(), &[2, 2]);
        assert_eq!(c.to_vec::<f64>(), vec![1.0, -1.0, -1.0, 1.0]);
        // np.cov([[1, 2, 4], [3, 1, 2]], ddof=0): means 7/3 and 2.
        let y = Tensor::from_vec(vec![1.0f64, 2.0, 4.0, 3.0, 1.0, 2.0], &[2, 3]).unwrap();
        let want = [14.0 / 9.0, -1.0 / 3.0, -1.0 / 3.0, 2.0 / 3.0];
        assert!(close(&y.cov(-1, 0).unwrap().to_vec::<f64>(), &want, 1e-12));
        // Samples along dim 0 of the transposed view give the same matrix.
        assert!(close(&y.transpose().cov(0, 0).unwrap().transpose().to_vec::<f64>(), &want, 1e-12));
    }
}
