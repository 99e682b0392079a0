//! Softmax, log-softmax, softmin and quiet softmax along one dim, each a
//! single fused kernel (`kernels::softmax`) over a contiguous copy.

use crate::autodiff::{record, FnBackward, Var};
use crate::kernels::copy::contiguous_values;
use crate::ops::binary::BinaryOp;
use crate::element::FloatElement;
use crate::error::Result;
use std::cell::RefCell;

use crate::element::Element;
use crate::kernels::gemm_half::HalfFloat;
use crate::kernels::parallel::{CHUNK, PAR_COSTLY};
use crate::kernels::softmax::{softmax, Normalise, SoftmaxOp};
use crate::kernels::team::for_each_chunk_mut;
use crate::shape::try_zeroed;
use crate::tensor::Tensor;
use crate::{with_float, DType};

impl Tensor {
    /// `exp(x - max) / sum exp(x - max)` along `dim`.
    pub fn softmax(&self, dim: isize) -> Result<Tensor> {
        softmax_family(self, "softmax", dim, SoftmaxOp { kind: Normalise::Softmax, negate: false })
    }

    /// `x - max - log(sum exp(x - max))` along `dim`.
    pub fn log_softmax(&self, dim: isize) -> Result<Tensor> {
        softmax_family(self, "log_softmax", dim, SoftmaxOp { kind: Normalise::LogSoftmax, negate: false })
    }

    /// `softmax(-x)` along `dim`.
    pub fn softmin(&self, dim: isize) -> Result<Tensor> {
        softmax_family(self, "softmin", dim, SoftmaxOp { kind: Normalise::Softmax, negate: true })
    }

    /// Burn's quiet softmax: `exp(x) / (1 + sum exp(x))` along `dim`, so a
    /// row can put little weight everywhere; computed as `exp(x - max) /
    /// (exp(-max) + sum exp(x - max))`, which cannot overflow.
    pub fn quiet_softmax(&self, dim: isize) -> Result<Tensor> {
        softmax_family(self, "quiet_softmax", dim, SoftmaxOp { kind: Normalise::Quiet, negate: false })
    }
}

fn softmax_family(x: &Tensor, name: &'static str, dim: isize, op: SoftmaxOp) -> Result<Tensor> {
    match x.dtype() {
        DType::BF16 => run_half::<half::bf16>(x, name, dim, op),
        DType::F16 => run_half::<half::f16>(x, name, dim, op),
        _ => with_float!(name, x.dtype(), T => run::<T>(x, name, dim, op)),
    }
}

/// A half-float softmax as f32 in blocks of whole lines: each block is
/// widened into a per-thread buffer, normalised by the f32 kernel and
/// rounded back, so the values are those of widening the tensor first
/// without writing (and page-faulting in) two whole f32 copies. A line too
/// long for one block widens the whole tensor.
fn run_half<S: HalfFloat + Element + Default>(x: &Tensor, name: &'static str, dim: isize, op: SoftmaxOp) -> Result<Tensor> {
    let d = x.dim(name, dim)?;
    let line: usize = x.shape()[d..].iter().product();
    if line >= CHUNK {
        return run::<f32>(&x.cast(DType::F32)?, name, dim, op)?.cast(x.dtype());
    }
    let (n, inner) = (x.shape()[d], x.shape()[d + 1..].iter().product::<usize>());
    let src = contiguous_values::<S>(name, x)?;
    let mut out = try_zeroed(name, src.len(), S::default())?;
    // Below PAR_COSTLY elements a block runs the f32 kernel on one thread.
    let block = (CHUNK - 1) / line * line;
    let each = |i: usize, dst: &mut [S]| {
        with_f32_scratch(dst.len(), |wide, result| {
            S::widen_slice(&src[i * block..][..dst.len()], wide);
            softmax(wide, result, n, inner, op);
            S::narrow_slice(result, dst);
        })
    };
    if src.len() >= PAR_COSTLY && rayon::current_num_threads() > 1 {
        for_each_chunk_mut(&mut out, block, each);
    } else {
        out.chunks_mut(block).enumerate().for_each(|(i, dst)| each(i, dst));
    }
    Tensor::from_vec(out, x.shape())
}

thread_local! {
    static SCRATCH: RefCell<(Vec<f32>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// `f` with two f32 buffers of `len` (below [`CHUNK`]) kept by this thread.
fn with_f32_scratch(len: usize, f: impl FnOnce(&mut [f32], &mut [f32])) {
    SCRATCH.with(|cell| {
        let mut guard = cell.borrow_mut();
        let (a, b) = &mut *guard;
        if a.len() < len {
            a.resize(len, 0.0);
            b.resize(len, 0.0);
        }
        f(&mut a[..len], &mut b[..len]);
    })
}

fn run<T: FloatElement>(x: &Tensor, name: &'static str, dim: isize, op: SoftmaxOp) -> Result<Tensor> {
    let d = x.dim(name, dim)?;
    let n = x.shape()[d];
    let inner: usize = x.shape()[d + 1..].iter().product();
    let values = contiguous_values::<T>(name, x)?;
    let src: &[T] = &values;
    let mut out = vec![T::ZERO; src.len()];
    softmax(src, &mut out, n, inner, op);
    Tensor::from_vec(out, x.shape())
}

/// `f(g, y)` in f32 when `g` is a half float (rounded back once), so a
/// backward chaining several ops rounds as the f32 one does.
fn widened_grad(g: &Tensor, y: &Tensor, f: impl FnOnce(&Tensor, &Tensor) -> Result<Tensor>) -> Result<Tensor> {
    if matches!(g.dtype(), DType::BF16 | DType::F16) {
        return f(&g.cast(DType::F32)?, &y.cast(DType::F32)?)?.cast(g.dtype());
    }
    f(g, y)
}

/// `y * (g - sum(g * y, dim))`: the softmax Jacobian applied to `g`.
fn softmax_vjp(g: &Tensor, y: &Tensor, dim: isize) -> Result<Tensor> {
    widened_grad(g, y, |g, y| softmax_vjp_same(g, y, dim))
}

fn softmax_vjp_same(g: &Tensor, y: &Tensor, dim: isize) -> Result<Tensor> {
    let gy = g.binary(BinaryOp::Mul, y)?;
    let s = gy.sum_dim(dim)?;
    gy.binary_owned(BinaryOp::Sub, y.binary(BinaryOp::Mul, &s)?)
}

impl Var {
    pub fn softmax(&self, dim: isize) -> Result<Var> {
        let y = self.value.softmax(dim)?;
        let yy = y.clone();
        Ok(record(y, &[self], move || FnBackward::new("softmax", move |g, _| Ok(vec![Some(softmax_vjp(&g, &yy, dim)?)]))))
    }

    /// softmax(-x): the softmax gradient, negated.
    pub fn softmin(&self, dim: isize) -> Result<Var> {
        let y = self.value.softmin(dim)?;
        let yy = y.clone();
        Ok(record(y, &[self], move || FnBackward::new("softmin", move |g, _| Ok(vec![Some(softmax_vjp(&g, &yy, dim)?.neg()?)]))))
    }

    /// `g - softmax(x) * sum(g, dim)`.
    pub fn log_softmax(&self, dim: isize) -> Result<Var> {
        let y = self.value.log_softmax(dim)?;
        let yy = y.clone();
        Ok(record(y, &[self], move || {
            FnBackward::new("log_softmax", move |g, _| {
                let gx = widened_grad(&g, &yy, |g, y| {
                    let p = y.float_unary(crate::ops::unary::FloatUnary::Exp)?;
                    let s = g.sum_dim(dim)?;
                    g.binary(BinaryOp::Sub, &p.binary_owned(BinaryOp::Mul, s)?)
                })?;
                Ok(vec![Some(gx)])
            })
        }))
    }

    /// `y = exp(x) / (1 + sum exp(x))` has softmax's Jacobian
    /// `diag(y) - y y^T`, so the same vector-Jacobian product.
    pub fn quiet_softmax(&self, dim: isize) -> Result<Var> {
        let y = self.value.quiet_softmax(dim)?;
        let yy = y.clone();
        Ok(record(y, &[self], move || FnBackward::new("quiet_softmax", move |g, _| Ok(vec![Some(softmax_vjp(&g, &yy, dim)?)]))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    /// Straightforward f64 reference on a row-major copy: for every line
    /// along `dim`, apply `f` to the line's values.
    fn along(t: &Tensor, dim: usize, f: impl Fn(&[f64]) -> Vec<f64>) -> Vec<f64> {
        let x = t.cast(DType::F64).unwrap().to_vec::<f64>();
        let shape = t.shape();
        let n = shape[dim];
        let inner: usize = shape[dim + 1..].iter().product();
        let mut out = vec![0.0; x.len()];
        for o in 0..x.len() / (n * inner) {
            for k in 0..inner {
                let idx: Vec<usize> = (0..n).map(|j| o * n * inner + j * inner + k).collect();
                let line: Vec<f64> = idx.iter().map(|&i| x[i]).collect();
                for (&i, v) in idx.iter().zip(f(&line)) {
                    out[i] = v;
                }
            }
        }
        out
    }

    fn softmax_ref(v: &[f64]) -> Vec<f64> {
        let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = v.iter().map(|&x| (x - m).exp()).sum();
        v.iter().map(|&x| (x - m).exp() / s).collect()
    }

    fn log_softmax_ref(v: &[f64]) -> Vec<f64> {
        let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = v.iter().map(|&x| (x - m).exp()).sum();
        v.iter().map(|&x| x - m - s.ln()).collect()
    }

    fn softmin_ref(v: &[f64]) -> Vec<f64> {
        softmax_ref(&v.iter().map(|&x| -x).collect::<Vec<_>>())
    }

    fn quiet_ref(v: &[f64]) -> Vec<f64> {
        // exp(x) / (1 + sum exp(x)), scaled by exp(-max) only where exp would overflow.
        let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max).max(0.0);
        let s: f64 = v.iter().map(|&x| (x - m).exp()).sum();
        v.iter().map(|&x| (x - m).exp() / ((-m).exp() + s)).collect()
    }

    type Op = fn(&Tensor, isize) -> Result<Tensor>;
    type Case = (&'static str, Op, fn(&[f64]) -> Vec<f64>);

    fn cases() -> [Case; 4] {
        [
            ("softmax", |t, d| t.softmax(d), softmax_ref),
            ("log_softmax", |t, d| t.log_softmax(d), log_softmax_ref),
            ("softmin", |t, d| t.softmin(d), softmin_ref),
            ("quiet_softmax", |t, d| t.quiet_softmax(d), quiet_ref),
        ]
    }

    /// A [3, 4, 5] input with a wide spread, including +-100 and +-1e4.
    fn input(dtype: DType) -> Tensor {
        let mut v: Vec<f64> = (0..60).map(|i| ((i * 17) % 29) as f64 * 0.37 - 5.0).collect();
        v[7] = 100.0;
        v[13] = -100.0;
        v[22] = 1e4;
        v[41] = -1e4;
        Tensor::from_vec(v, &[3, 4, 5]).unwrap().cast(dtype).unwrap()
    }

    fn assert_close(name: &str, got: &[f64], want: &[f64], tol: f64) {
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{name} at {i}: {g} vs {w}");
        }
    }

    #[test]
    fn dims_0_1_minus_1_match_reference() {
        for dtype in [DType::F32, DType::F64] {
            let tol = if dtype == DType::F32 { 2e-6 } else { 1e-13 };
            let t = input(dtype);
            for dim in [0isize, 1, -1] {
                let d = t.dim("test", dim).unwrap();
                for (name, op, reference) in cases() {
                    let y = op(&t, dim).unwrap();
                    assert_eq!(y.shape(), &[3, 4, 5]);
                    assert_eq!(y.dtype(), dtype);
                    assert_close(name, &y.cast(DType::F64).unwrap().to_vec::<f64>(), &along(&t, d, reference), tol);
                }
            }
        }
    }

    #[test]
    fn transposed_view_matches_reference() {
        // [3, 5, 4] view over a [3, 4, 5] buffer.
        let t = input(DType::F32).transpose();
        assert!(!t.is_contiguous());
        for dim in [0isize, 1, -1] {
            let d = t.dim("test", dim).unwrap();
            for (name, op, reference) in cases() {
                let y = op(&t, dim).unwrap();
                assert_eq!(y.shape(), &[3, 5, 4]);
                assert_close(name, &y.cast(DType::F64).unwrap().to_vec::<f64>(), &along(&t, d, reference), 2e-6);
            }
        }
    }

    #[test]
    fn softmax_rows_sum_to_one() {
        let t = input(DType::F32);
        for dim in [0isize, 1, 2] {
            let d = dim as usize;
            let sums = along(&t.softmax(dim).unwrap(), d, |v| vec![v.iter().sum(); v.len()]);
            assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-6), "dim {dim}: {sums:?}");
            let sums = along(&t.softmin(dim).unwrap(), d, |v| vec![v.iter().sum(); v.len()]);
            assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-6), "softmin dim {dim}: {sums:?}");
            let sums = along(&t.quiet_softmax(dim).unwrap(), d, |v| vec![v.iter().sum(); v.len()]);
            // Below 1 by 1 / (1 + sum exp(x)): a tiny gap when a line holds a large value.
            assert!(sums.iter().all(|&s| s > 0.0 && s <= 1.0), "quiet dim {dim}: {sums:?}");
        }
    }

    #[test]
    fn log_softmax_is_log_of_softmax() {
        // Moderate values, so softmax stays well above underflow.
        let v: Vec<f32> = (0..60).map(|i| ((i * 13) % 11) as f32 * 0.9 - 4.0).collect();
        let t = Tensor::from_vec(v, &[3, 4, 5]).unwrap();
        for dim in [0isize, 1, -1] {
            let ls = t.log_softmax(dim).unwrap().to_vec::<f32>();
            let s = t.softmax(dim).unwrap().to_vec::<f32>();
            for (&a, &b) in ls.iter().zip(&s) {
                assert!((a - b.ln()).abs() < 1e-5, "dim {dim}: {a} vs ln {b}");
            }
        }
    }

    #[test]
    fn nan_fills_its_line() {
        let t = Tensor::from_vec(vec![0.0f32, f32::NAN, 1.0, 2.0, 3.0, 4.0], &[2, 3]).unwrap();
        for (name, op, _) in cases() {
            let y = op(&t, -1).unwrap().to_vec::<f32>();
            assert!(y[..3].iter().all(|v| v.is_nan()) && y[3..].iter().all(|v| v.is_finite()), "{name}: {y:?}");
        }
    }

    #[test]
    fn empty_and_single_element_lines() {
        let e = Tensor::zeros(&[0, 3], DType::F32);
        assert_eq!(e.softmax(1).unwrap().shape(), &[0, 3]);
        assert_eq!(Tensor::zeros(&[2, 0], DType::F64).log_softmax(1).unwrap().shape(), &[2, 0]);
        let one = Tensor::from_vec(vec![5.0f32, -7.0], &[2, 1]).unwrap();
        assert_eq!(one.softmax(1).unwrap().to_vec::<f32>(), vec![1.0, 1.0]);
        assert_eq!(one.log_softmax(1).unwrap().to_vec::<f32>(), vec![0.0, 0.0]);
        let q = one.quiet_softmax(1).unwrap().to_vec::<f32>();
        let want = [5.0f64.exp() / (1.0 + 5.0f64.exp()), (-7.0f64).exp() / (1.0 + (-7.0f64).exp())];
        assert!(q.iter().zip(want).all(|(&g, w)| (g as f64 - w).abs() <= 1e-6 * w), "{q:?}");
    }

    #[test]
    fn errors_name_the_op() {
        let t = Tensor::zeros(&[2, 3], DType::F32);
        assert_eq!(t.softmax(2).unwrap_err().to_string(), "softmax: dim 2 is out of range for a tensor of rank 2");
        assert_eq!(t.log_softmax(-3).unwrap_err().to_string(), "log_softmax: dim -3 is out of range for a tensor of rank 2");
        let i = Tensor::zeros(&[2, 3], DType::I64);
        assert_eq!(i.softmin(0).unwrap_err().to_string(), "softmin: expected a Float tensor, found Int");
        let b = Tensor::zeros(&[2], DType::Bool);
        assert_eq!(b.quiet_softmax(0).unwrap_err().to_string(), "quiet_softmax: expected a Float tensor, found Bool");
    }
}
