//! Reductions: sums, means, products and extrema over the whole tensor (a
//! shape `[1]` result), over one dim or several dims (kept with size 1);
//! arg-extrema; and the any/all truth tests, which take every kind.

use crate::autodiff::{record, FnBackward, Var};
use crate::ops::binary::BinaryOp;

use crate::dtype::{DType, Kind, Scalar};
use crate::element::{Element, FloatLanes, NumElement};
use crate::error::Result;
use crate::kernels::copy::contiguous_values;
use crate::kernels::elementwise::map_same;
use crate::kernels::parallel::PAR_CHEAP;
use crate::kernels::reduce::{fold_all, fold_axis, fold_seq, reduce_axis, Axis};
use crate::shape::try_zeroed;
use crate::tensor::Tensor;
use crate::{bail, with_dtype, with_num};

/// Numeric elements as reductions combine them: Int arithmetic wraps on
/// overflow (as Burn's release builds do) instead of trapping.
pub(crate) trait Accumulate: NumElement {
    fn add_wrapping(self, rhs: Self) -> Self;
    fn mul_wrapping(self, rhs: Self) -> Self;
    fn abs_wrapping(self) -> Self;
    /// The larger value, NaN winning from either side. Written as a select
    /// on the incoming value, which vectorises where `max_of` does not.
    fn max_nan(self, rhs: Self) -> Self;
    /// The smaller value, NaN winning from either side.
    fn min_nan(self, rhs: Self) -> Self;
}

macro_rules! float_accumulate {
    ($t:ty) => {
        impl Accumulate for $t {
            #[inline(always)]
            fn add_wrapping(self, rhs: Self) -> Self {
                self + rhs
            }
            #[inline(always)]
            fn mul_wrapping(self, rhs: Self) -> Self {
                self * rhs
            }
            #[inline(always)]
            fn abs_wrapping(self) -> Self {
                self.abs()
            }
            #[inline(always)]
            fn max_nan(self, rhs: Self) -> Self {
                if rhs > self || rhs.is_nan() { rhs } else { self }
            }
            #[inline(always)]
            fn min_nan(self, rhs: Self) -> Self {
                if rhs < self || rhs.is_nan() { rhs } else { self }
            }
        }
    };
}

float_accumulate!(f32);
float_accumulate!(f64);

impl Accumulate for i64 {
    #[inline(always)]
    fn add_wrapping(self, rhs: Self) -> Self {
        self.wrapping_add(rhs)
    }
    #[inline(always)]
    fn mul_wrapping(self, rhs: Self) -> Self {
        self.wrapping_mul(rhs)
    }
    #[inline(always)]
    fn abs_wrapping(self) -> Self {
        self.wrapping_abs()
    }
    #[inline(always)]
    fn max_nan(self, rhs: Self) -> Self {
        self.max(rhs)
    }
    #[inline(always)]
    fn min_nan(self, rhs: Self) -> Self {
        self.min(rhs)
    }
}

/// A contiguous tensor over `data`, whose length the caller made match
/// `shape` (a reduced shape of an existing tensor, so its count fits).
pub(crate) fn tensor_from<T: Element>(data: Vec<T>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(data, shape).expect("tensor_from: the data fills a reduced shape of an existing tensor")
}

/// `shape` with `dim` reduced to size 1.
pub(crate) fn keep_dim(shape: &[usize], dim: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s[dim] = 1;
    s
}

/// Each value divided by the element count `n` (Int truncates).
pub(crate) fn divide_by_count<T: NumElement>(op: &'static str, sums: Tensor, n: usize) -> Result<Tensor> {
    let n = T::from_scalar(Scalar::Int(n as i64));
    map_same(op, sums, PAR_CHEAP, move |v: T| v.div_of(n))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    Sum,
    Prod,
    Max,
    Min,
    MaxAbs,
}

impl Fold {
    fn name(self, per_dim: bool) -> &'static str {
        match (self, per_dim) {
            (Fold::Sum, false) => "sum",
            (Fold::Sum, true) => "sum_dim",
            (Fold::Prod, false) => "prod",
            (Fold::Prod, true) => "prod_dim",
            (Fold::Max, false) => "max",
            (Fold::Max, true) => "max_dim",
            (Fold::Min, false) => "min",
            (Fold::Min, true) => "min_dim",
            (Fold::MaxAbs, false) => "max_abs",
            (Fold::MaxAbs, true) => "max_abs_dim",
        }
    }

    /// Extrema have no value over zero elements.
    fn needs_elements(self) -> bool {
        matches!(self, Fold::Max | Fold::Min | Fold::MaxAbs)
    }
}

/// Run `$body` with `$id`, `$op` and `$map` bound to the identity, the
/// combining function and the per-element map of `$fold` for type `$T`.
macro_rules! with_fold {
    ($fold:expr, $T:ty, |$id:ident, $op:ident, $map:ident| $body:expr) => {
        match $fold {
            Fold::Sum => {
                let ($id, $op, $map) = (<$T>::ZERO, <$T>::add_wrapping, |v: $T| v);
                $body
            }
            Fold::Prod => {
                let ($id, $op, $map) = (<$T>::ONE, <$T>::mul_wrapping, |v: $T| v);
                $body
            }
            Fold::Max => {
                let ($id, $op, $map) = (<$T>::MIN_VALUE, <$T>::max_nan, |v: $T| v);
                $body
            }
            Fold::Min => {
                let ($id, $op, $map) = (<$T>::MAX_VALUE, <$T>::min_nan, |v: $T| v);
                $body
            }
            Fold::MaxAbs => {
                let ($id, $op, $map) = (<$T>::MIN_VALUE, <$T>::max_nan, <$T>::abs_wrapping);
                $body
            }
        }
    };
}

fn fold_full<T: Accumulate>(name: &'static str, x: &Tensor, f: Fold) -> Result<Tensor> {
    let all: Vec<usize> = (0..x.rank()).collect();
    let (x, repeats) = unbroadcast(x, &all, f);
    let data = contiguous_values::<T>(name, &x)?;
    let v = with_fold!(f, T, |id, op, map| fold_all(&data, PAR_CHEAP, id, op, map));
    scale_by_repeats::<T>(name, tensor_from(vec![v], &[1]), &repeats)
}

/// A view of `x` in which each of the reduced `dims` that is broadcast
/// (stride 0, so every element along it is the same one) keeps a single
/// element, and the sizes so dropped. Reducing the view is reducing `x`
/// without materialising the broadcast: extrema are unchanged, a sum is
/// scaled by the sizes dropped ([`scale_by_repeats`]). A product would need a
/// power, so it keeps the whole view.
fn unbroadcast(x: &Tensor, dims: &[usize], f: Fold) -> (Tensor, Vec<usize>) {
    let l = x.layout();
    let broadcast: Vec<usize> = dims.iter().copied().filter(|&d| l.strides[d] == 0 && l.shape[d] > 1).collect();
    if f == Fold::Prod || broadcast.is_empty() {
        return (x.clone(), Vec::new());
    }
    let view = broadcast.iter().fold(l.clone(), |v, &d| v.narrow_step(d, 0, 1, 1));
    let repeats = if f == Fold::Sum { broadcast.iter().map(|&d| l.shape[d]).collect() } else { Vec::new() };
    (x.subview(view), repeats)
}

/// Sums over an [`unbroadcast`] view times the number of times each element
/// was repeated (Int wraps, as the sum itself would).
fn scale_by_repeats<T: Accumulate>(op: &'static str, sums: Tensor, repeats: &[usize]) -> Result<Tensor> {
    if repeats.is_empty() {
        return Ok(sums);
    }
    let k = repeats.iter().fold(T::ONE, |k, &n| k.mul_wrapping(T::from_scalar(Scalar::Int(n as i64))));
    map_same(op, sums, PAR_CHEAP, move |v: T| v.mul_wrapping(k))
}

/// Fold along `ax` of the contiguous elements of `x`, giving a tensor of `shape`.
fn fold_along<T: Accumulate>(name: &'static str, x: &Tensor, ax: Axis, shape: &[usize], f: Fold) -> Result<Tensor> {
    let data = contiguous_values::<T>(name, x)?;
    let mut out = try_zeroed(name, ax.outer * ax.inner, T::ZERO)?;
    with_fold!(f, T, |id, op, map| fold_axis(&data, ax, &mut out, PAR_CHEAP, id, op, map));
    Ok(tensor_from(out, shape))
}

/// Fold over the sorted, distinct dims `ds`, keeping them. Each run of
/// adjacent dims is one axis of the contiguous buffer, reduced in one pass.
fn fold_dims<T: Accumulate>(name: &'static str, x: &Tensor, ds: &[usize], f: Fold) -> Result<Tensor> {
    let (mut t, repeats) = unbroadcast(x, ds, f);
    let mut i = 0;
    while i < ds.len() {
        let start = ds[i];
        while i + 1 < ds.len() && ds[i + 1] == ds[i] + 1 {
            i += 1;
        }
        let end = ds[i];
        i += 1;
        let shape = t.shape();
        let ax = Axis {
            outer: shape[..start].iter().product(),
            n: shape[start..=end].iter().product(),
            inner: shape[end + 1..].iter().product(),
        };
        let mut out_shape = shape.to_vec();
        out_shape[start..=end].fill(1);
        t = fold_along::<T>(name, &t, ax, &out_shape, f)?;
    }
    scale_by_repeats::<T>(name, t, &repeats)
}

/// [`fold_full`] of a half-float tensor, reading its elements in place and
/// folding them as f32: the f32 result of widening the whole tensor first,
/// without writing that copy (a fresh buffer of twice the tensor's bytes).
fn fold_full_half<S: FloatLanes<Compute = f32>>(name: &'static str, x: &Tensor, f: Fold) -> Result<Tensor> {
    let all: Vec<usize> = (0..x.rank()).collect();
    let (x, repeats) = unbroadcast(x, &all, f);
    let data = contiguous_values::<S>(name, &x)?;
    let v = with_fold!(f, f32, |id, op, map| fold_all(&data, PAR_CHEAP, id, op, move |s: S| map(s.widen())));
    scale_by_repeats::<f32>(name, tensor_from(vec![v], &[1]), &repeats)
}

/// [`fold_dims`] of a half-float tensor, as f32 (not yet rounded back):
/// the first run of dims folds the half elements in place, the rest fold
/// its f32 result, so the values are those of widening the tensor first.
fn fold_dims_half<S: FloatLanes<Compute = f32>>(name: &'static str, x: &Tensor, ds: &[usize], f: Fold) -> Result<Tensor> {
    let (x, repeats) = unbroadcast(x, ds, f);
    let Some(&start) = ds.first() else {
        return x.cast(DType::F32);
    };
    let run = ds.iter().zip(start..).take_while(|&(&d, want)| d == want).count();
    let end = start + run - 1;
    let shape = x.shape();
    let ax = Axis { outer: shape[..start].iter().product(), n: shape[start..=end].iter().product(), inner: shape[end + 1..].iter().product() };
    let mut out_shape = shape.to_vec();
    out_shape[start..=end].fill(1);
    let data = contiguous_values::<S>(name, &x)?;
    let mut out = try_zeroed(name, ax.outer * ax.inner, 0f32)?;
    with_fold!(f, f32, |id, op, map| fold_axis(&data, ax, &mut out, PAR_CHEAP, id, op, move |s: S| map(s.widen())));
    let t = fold_dims::<f32>(name, &tensor_from(out, &out_shape), &ds[run..], f)?;
    scale_by_repeats::<f32>(name, t, &repeats)
}

/// Run `$body` with `$S` bound to the half type of `$dtype`, when it is one.
macro_rules! if_half {
    ($dtype:expr, $S:ident => $body:expr) => {
        match $dtype {
            DType::BF16 => {
                type $S = half::bf16;
                Some($body)
            }
            DType::F16 => {
                type $S = half::f16;
                Some($body)
            }
            _ => None,
        }
    };
}

/// Values and first indices of the extremum along `d` (non-empty). NaN
/// counts as the extremum, as in NumPy.
fn arg_extreme<T: Accumulate, const MAX: bool>(name: &'static str, x: &Tensor, d: usize) -> Result<(Tensor, Tensor)> {
    let data = contiguous_values::<T>(name, x)?;
    let ax = Axis::new(x.shape(), d);
    let id = if MAX { T::MIN_VALUE } else { T::MAX_VALUE };
    let op = |a: T, b: T| if MAX { a.max_nan(b) } else { a.min_nan(b) };
    let better = |v: T, cur: T| (if MAX { v > cur } else { v < cur }) | (v.is_nan_value() & !cur.is_nan_value());
    let mut out = try_zeroed(name, ax.outer * ax.inner, (T::ZERO, 0i64))?;
    reduce_axis(
        &data,
        ax,
        &mut out,
        PAR_CHEAP,
        // A vectorised fold finds the value, then a scan finds its first index.
        #[inline(always)]
        |row| {
            let m = fold_seq(row, id, &op, &|v| v);
            let nan = m.is_nan_value();
            let i = row.iter().position(|&v| v == m || (nan && v.is_nan_value())).unwrap_or(0);
            (m, i as i64)
        },
        #[inline(always)]
        |src, stride, dst| {
            let w = dst.len();
            let mut best = src[..w].to_vec();
            let mut at = vec![0i64; w];
            for j in 1..ax.n {
                let row = &src[j * stride..j * stride + w];
                for ((b, i), &v) in best.iter_mut().zip(at.iter_mut()).zip(row) {
                    // Selects rather than a branch, so the loop vectorises.
                    let take = better(v, *b);
                    *b = if take { v } else { *b };
                    *i = if take { j as i64 } else { *i };
                }
            }
            dst.iter_mut().zip(best.into_iter().zip(at)).for_each(|(o, p)| *o = p);
        },
    );
    let (vals, idx): (Vec<T>, Vec<i64>) = out.into_iter().unzip();
    let shape = keep_dim(x.shape(), d);
    Ok((tensor_from(vals, &shape), tensor_from(idx, &shape)))
}

/// Whether any (`ANY`) or all elements along `ax` are non-zero.
fn truth<T: Element, const ANY: bool>(name: &'static str, x: &Tensor, ax: Option<Axis>, shape: &[usize]) -> Result<Tensor> {
    let data = contiguous_values::<T>(name, x)?;
    let op = |a: bool, b: bool| if ANY { a | b } else { a & b };
    let map = |v: T| v != T::ZERO;
    let out = match ax {
        None => vec![fold_all(&data, PAR_CHEAP, !ANY, op, map)],
        Some(ax) => {
            let mut out = try_zeroed(name, ax.outer * ax.inner, false)?;
            fold_axis(&data, ax, &mut out, PAR_CHEAP, !ANY, op, map);
            out
        }
    };
    Ok(tensor_from(out, shape))
}

impl Tensor {
    fn reduce_all(&self, f: Fold) -> Result<Tensor> {
        let op = f.name(false);
        if let Some(r) = if_half!(self.dtype(), S => self.half_reduced(op, f, |x| fold_full_half::<S>(op, x, f))) {
            return r;
        }
        with_num!(op, self.dtype(), T => {
            if f.needs_elements() && self.numel() == 0 {
                bail!(op, "cannot reduce an empty tensor (shape {:?})", self.shape());
            }
            fold_full::<T>(op, self, f)
        })
    }

    /// A whole-tensor fold of a half tensor by `fold` (as f32), rounded back.
    fn half_reduced(&self, op: &'static str, f: Fold, fold: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
        if f.needs_elements() && self.numel() == 0 {
            bail!(op, "cannot reduce an empty tensor (shape {:?})", self.shape());
        }
        fold(self)?.cast(self.dtype())
    }

    fn reduce_dim(&self, dim: isize, f: Fold) -> Result<Tensor> {
        let op = f.name(true);
        if let Some(r) = if_half!(self.dtype(), S => {
            let d = self.dim(op, dim)?;
            if f.needs_elements() && self.shape()[d] == 0 {
                bail!(op, "cannot reduce dim {} of size 0 (shape {:?})", d, self.shape());
            }
            fold_dims_half::<S>(op, self, &[d], f)?.cast(self.dtype())
        }) {
            return r;
        }
        with_num!(op, self.dtype(), T => {
            let d = self.dim(op, dim)?;
            if f.needs_elements() && self.shape()[d] == 0 {
                bail!(op, "cannot reduce dim {} of size 0 (shape {:?})", d, self.shape());
            }
            fold_dims::<T>(op, self, &[d], f)
        })
    }

    /// The given dims, normalised, sorted and without repeats.
    pub(crate) fn distinct_dims(&self, op: &'static str, dims: &[isize]) -> Result<Vec<usize>> {
        let mut ds = dims.iter().map(|&d| self.dim(op, d)).collect::<Result<Vec<_>>>()?;
        ds.sort_unstable();
        ds.dedup();
        Ok(ds)
    }

    fn reduce_dims(&self, op: &'static str, dims: &[isize], f: Fold) -> Result<Tensor> {
        if let Some(r) = if_half!(self.dtype(), S => fold_dims_half::<S>(op, self, &self.distinct_dims(op, dims)?, f)?.cast(self.dtype())) {
            return r;
        }
        with_num!(op, self.dtype(), T => {
            let ds = self.distinct_dims(op, dims)?;
            fold_dims::<T>(op, self, &ds, f)
        })
    }

    pub fn sum(&self) -> Result<Tensor> {
        self.reduce_all(Fold::Sum)
    }

    /// Sum over the element count; Int truncates, as Burn's `int_mean`.
    pub fn mean(&self) -> Result<Tensor> {
        let op = "mean";
        if let Some(r) = if_half!(self.dtype(), S => divide_by_count::<f32>(op, fold_full_half::<S>(op, self, Fold::Sum)?, self.numel())?.cast(self.dtype())) {
            return r;
        }
        with_num!(op, self.dtype(), T => {
            if self.kind() == Kind::Int && self.numel() == 0 {
                bail!(op, "an Int tensor with no elements has no mean (shape {:?})", self.shape());
            }
            divide_by_count::<T>(op, fold_full::<T>(op, self, Fold::Sum)?, self.numel())
        })
    }

    pub fn prod(&self) -> Result<Tensor> {
        self.reduce_all(Fold::Prod)
    }

    pub fn max(&self) -> Result<Tensor> {
        self.reduce_all(Fold::Max)
    }

    pub fn min(&self) -> Result<Tensor> {
        self.reduce_all(Fold::Min)
    }

    pub fn max_abs(&self) -> Result<Tensor> {
        self.reduce_all(Fold::MaxAbs)
    }

    pub fn sum_dim(&self, dim: isize) -> Result<Tensor> {
        self.reduce_dim(dim, Fold::Sum)
    }

    pub fn mean_dim(&self, dim: isize) -> Result<Tensor> {
        let op = "mean_dim";
        if let Some(r) = if_half!(self.dtype(), S => {
            let d = self.dim(op, dim)?;
            divide_by_count::<f32>(op, fold_dims_half::<S>(op, self, &[d], Fold::Sum)?, self.shape()[d])?.cast(self.dtype())
        }) {
            return r;
        }
        with_num!(op, self.dtype(), T => {
            let d = self.dim(op, dim)?;
            let n = self.shape()[d];
            if self.kind() == Kind::Int && n == 0 {
                bail!(op, "an Int tensor has no mean over dim {} of size 0 (shape {:?})", d, self.shape());
            }
            let sums = fold_dims::<T>(op, self, &[d], Fold::Sum)?;
            divide_by_count::<T>(op, sums, n)
        })
    }

    pub fn prod_dim(&self, dim: isize) -> Result<Tensor> {
        self.reduce_dim(dim, Fold::Prod)
    }

    pub fn max_dim(&self, dim: isize) -> Result<Tensor> {
        self.reduce_dim(dim, Fold::Max)
    }

    pub fn min_dim(&self, dim: isize) -> Result<Tensor> {
        self.reduce_dim(dim, Fold::Min)
    }

    pub fn max_abs_dim(&self, dim: isize) -> Result<Tensor> {
        self.reduce_dim(dim, Fold::MaxAbs)
    }

    pub fn sum_dims(&self, dims: &[isize]) -> Result<Tensor> {
        self.reduce_dims("sum_dims", dims, Fold::Sum)
    }

    /// Float: one sum over all the dims, divided by their element count.
    /// Int: Burn's fold of `mean_dim` over the dims in the order given, so
    /// each step truncates.
    pub fn mean_dims(&self, dims: &[isize]) -> Result<Tensor> {
        let op = "mean_dims";
        if let Some(r) = if_half!(self.dtype(), S => {
            let ds = self.distinct_dims(op, dims)?;
            let n = ds.iter().map(|&d| self.shape()[d]).product();
            divide_by_count::<f32>(op, fold_dims_half::<S>(op, self, &ds, Fold::Sum)?, n)?.cast(self.dtype())
        }) {
            return r;
        }
        with_num!(op, self.dtype(), T => {
            let ds = self.distinct_dims(op, dims)?;
            if self.kind() == Kind::Int {
                return dims.iter().try_fold(self.clone(), |t, &d| t.mean_dim(d));
            }
            let n = ds.iter().map(|&d| self.shape()[d]).product();
            divide_by_count::<T>(op, fold_dims::<T>(op, self, &ds, Fold::Sum)?, n)
        })
    }

    pub fn prod_dims(&self, dims: &[isize]) -> Result<Tensor> {
        self.reduce_dims("prod_dims", dims, Fold::Prod)
    }

    fn arg_extreme_dim(&self, op: &'static str, dim: isize, max: bool) -> Result<(Tensor, Tensor)> {
        with_num!(op, self.dtype(), T => {
            let d = self.dim(op, dim)?;
            if self.shape()[d] == 0 {
                bail!(op, "cannot reduce dim {} of size 0 (shape {:?})", d, self.shape());
            }
            if max { arg_extreme::<T, true>(op, self, d) } else { arg_extreme::<T, false>(op, self, d) }
        })
    }

    /// Maxima along `dim` and the index of the first of each (i64).
    pub fn max_dim_with_indices(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        self.arg_extreme_dim("max_dim_with_indices", dim, true)
    }

    pub fn min_dim_with_indices(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        self.arg_extreme_dim("min_dim_with_indices", dim, false)
    }

    /// Index of the first maximum along `dim`; a NaN counts as the maximum.
    pub fn argmax(&self, dim: isize) -> Result<Tensor> {
        Ok(self.arg_extreme_dim("argmax", dim, true)?.1)
    }

    /// Index of the first minimum along `dim`; a NaN counts as the minimum.
    pub fn argmin(&self, dim: isize) -> Result<Tensor> {
        Ok(self.arg_extreme_dim("argmin", dim, false)?.1)
    }

    /// Whether any element is non-zero (true); a Bool tensor of shape [1].
    pub fn any(&self) -> Result<Tensor> {
        with_dtype!(self.dtype(), T => truth::<T, true>("any", self, None, &[1]))
    }

    /// Whether every element is non-zero (true for no elements).
    pub fn all(&self) -> Result<Tensor> {
        with_dtype!(self.dtype(), T => truth::<T, false>("all", self, None, &[1]))
    }

    pub fn any_dim(&self, dim: isize) -> Result<Tensor> {
        let d = self.dim("any_dim", dim)?;
        let ax = Some(Axis::new(self.shape(), d));
        with_dtype!(self.dtype(), T => truth::<T, true>("any_dim", self, ax, &keep_dim(self.shape(), d)))
    }

    pub fn all_dim(&self, dim: isize) -> Result<Tensor> {
        let d = self.dim("all_dim", dim)?;
        let ax = Some(Axis::new(self.shape(), d));
        with_dtype!(self.dtype(), T => truth::<T, false>("all_dim", self, ax, &keep_dim(self.shape(), d)))
    }
}

/// Gradients of reductions: a sum spreads its gradient over what it summed,
/// a max/min sends it to the position that won, a product to each factor
/// times the product of the others.
impl Var {
    /// A reduction whose gradient needs only the input's shape: the input
    /// itself is not kept.
    fn reduced(&self, name: &'static str, y: Tensor, back: impl Fn(Tensor, &[usize]) -> Result<Tensor> + Send + Sync + 'static) -> Var {
        let shape = self.value.shape().to_vec();
        record(y, &[self], move || FnBackward::new(name, move |g, _| Ok(vec![Some(back(g, &shape)?)])))
    }

    pub fn sum(&self) -> Result<Var> {
        Ok(self.reduced("sum", self.value.sum()?, |g, x| spread(&g, x)))
    }

    pub fn mean(&self) -> Result<Var> {
        let n = self.value.numel() as f64;
        Ok(self.reduced("mean", self.value.mean()?, move |g, x| spread(&g.binary_scalar(BinaryOp::Div, Scalar::Float(n))?, x)))
    }

    pub fn sum_dim(&self, dim: isize) -> Result<Var> {
        Ok(self.reduced("sum_dim", self.value.sum_dim(dim)?, |g, x| expand_to(&g, x)))
    }

    pub fn mean_dim(&self, dim: isize) -> Result<Var> {
        let n = self.value.shape()[self.value.dim("mean_dim", dim)?] as f64;
        Ok(self.reduced("mean_dim", self.value.mean_dim(dim)?, move |g, x| expand_to(&g.binary_scalar(BinaryOp::Div, Scalar::Float(n))?, x)))
    }

    pub fn sum_dims(&self, dims: &[isize]) -> Result<Var> {
        Ok(self.reduced("sum_dims", self.value.sum_dims(dims)?, |g, x| expand_to(&g, x)))
    }

    /// `sum_dims(dims)` then `squeeze_dims(dims)`, as Burn defines it (so an
    /// empty list, which sums nothing, squeezes every size-1 dim).
    pub fn sum_dims_squeeze(&self, dims: &[isize]) -> Result<Var> {
        self.sum_dims(dims)?.squeeze_dims(dims).map_err(|e| e.with_op("sum_dims_squeeze"))
    }

    pub fn mean_dims(&self, dims: &[isize]) -> Result<Var> {
        // Over distinct dims: a dim named twice is averaged once.
        let mut n = 1.0;
        for d in self.value.distinct_dims("mean_dims", dims)? {
            n *= self.value.shape()[d] as f64;
        }
        Ok(self.reduced("mean_dims", self.value.mean_dims(dims)?, move |g, x| expand_to(&g.binary_scalar(BinaryOp::Div, Scalar::Float(n))?, x)))
    }

    /// d prod / d x_i = product of the other elements, computed without
    /// dividing (exact when some x_i is zero).
    pub fn prod_dim(&self, dim: isize) -> Result<Var> {
        let d = self.value.dim("prod_dim", dim)? as isize;
        let y = self.value.prod_dim(dim)?;
        Ok(record(y, &[self], move || {
            let x = self.saved();
            FnBackward::new("prod_dim", move |g, _| {
                let x = x.get()?;
                Ok(vec![Some(expand_to(&g, x.shape())?.binary_owned(BinaryOp::Mul, others_product(&x, d)?)?)])
            })
        }))
    }

    pub fn prod(&self) -> Result<Var> {
        self.reshape(&[-1])?.prod_dim(0).map_err(|e| e.with_op("prod"))
    }

    pub fn prod_dims(&self, dims: &[isize]) -> Result<Var> {
        let mut v = self.clone();
        for &d in dims {
            v = v.prod_dim(d)?;
        }
        Ok(v)
    }

    /// The gradient goes to the winning position (the first, on ties).
    fn winner(&self, name: &'static str, dim: isize, values: Tensor, indices: Tensor) -> Var {
        let (shape, dtype) = (self.value.shape().to_vec(), self.value.dtype());
        record(values, &[self], move || {
            FnBackward::new(name, move |g, _| Ok(vec![Some(Tensor::zeros(&shape, dtype).scatter(dim, &indices, &g)?)]))
        })
    }

    pub fn max_dim(&self, dim: isize) -> Result<Var> {
        Ok(self.max_dim_with_indices(dim).map_err(|e| e.with_op("max_dim"))?.0)
    }

    pub fn min_dim(&self, dim: isize) -> Result<Var> {
        Ok(self.min_dim_with_indices(dim).map_err(|e| e.with_op("min_dim"))?.0)
    }

    pub fn max_dim_with_indices(&self, dim: isize) -> Result<(Var, Tensor)> {
        let (v, i) = self.value.max_dim_with_indices(dim)?;
        Ok((self.winner("max_dim", dim, v, i.clone()), i))
    }

    pub fn min_dim_with_indices(&self, dim: isize) -> Result<(Var, Tensor)> {
        let (v, i) = self.value.min_dim_with_indices(dim)?;
        Ok((self.winner("min_dim", dim, v, i.clone()), i))
    }

    /// An empty tensor fails as the plain op does, not as the `max_dim`
    /// this goes through. Without a graph there is no winner to remember,
    /// and the plain op reduces a broadcast view without materialising it
    /// (flattening one for `max_dim` would copy it whole).
    pub fn max(&self) -> Result<Var> {
        if self.node.is_none() || self.value.numel() == 0 {
            return Ok(Var::constant(self.value.max()?));
        }
        self.reshape(&[-1])?.max_dim(0).map_err(|e| e.with_op("max"))
    }

    pub fn min(&self) -> Result<Var> {
        if self.node.is_none() || self.value.numel() == 0 {
            return Ok(Var::constant(self.value.min()?));
        }
        self.reshape(&[-1])?.min_dim(0).map_err(|e| e.with_op("min"))
    }

    /// |x| at the winner: the gradient carries the winner's sign.
    pub fn max_abs_dim(&self, dim: isize) -> Result<Var> {
        self.abs()?.max_dim(dim).map_err(|e| e.with_op("max_abs_dim"))
    }

    /// `max_dim` over each of `dims` in turn (Burn's `max_dims`): the rank is
    /// kept, every reduced dim has size 1.
    pub fn max_dims(&self, dims: &[isize]) -> Result<Var> {
        self.fold_dims("max_dims", dims, Var::max_dim)
    }

    pub fn min_dims(&self, dims: &[isize]) -> Result<Var> {
        self.fold_dims("min_dims", dims, Var::min_dim)
    }

    pub fn max_abs_dims(&self, dims: &[isize]) -> Result<Var> {
        self.abs()?.fold_dims("max_abs_dims", dims, Var::max_dim)
    }

    fn fold_dims(&self, name: &'static str, dims: &[isize], f: fn(&Var, isize) -> Result<Var>) -> Result<Var> {
        dims.iter().try_fold(self.clone(), |v, &d| f(&v, d)).map_err(|e| e.with_op(name))
    }

    pub fn max_abs(&self) -> Result<Var> {
        if self.node.is_none() || self.value.numel() == 0 {
            return Ok(Var::constant(self.value.max_abs()?));
        }
        self.abs()?.max().map_err(|e| e.with_op("max_abs"))
    }
}

/// A one-element gradient spread over `x`'s shape.
fn spread(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let ones: Vec<isize> = vec![1; shape.len()];
    expand_to(&g.reshape(&ones)?, shape)
}

/// A gradient with size-1 reduced dims broadcast back over `x`'s shape.
/// It stays a stride-0 view: the ops that read it broadcast it as they go,
/// and copying it out would cost a full pass over `x`'s size (the gradient
/// of `sum()` over a large activation is one value).
fn expand_to(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let shape: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    g.expand(&shape)
}

/// For each element, the product of the others along `dim`: the exclusive
/// prefix product times the exclusive suffix product.
fn others_product(x: &Tensor, dim: isize) -> Result<Tensor> {
    let d = x.dim("prod_dim", dim)?;
    let n = x.shape()[d];
    if n == 0 {
        return Ok(x.clone());
    }
    let exclusive = |t: &Tensor| -> Result<Tensor> {
        let c = t.cumprod(dim)?;
        let mut pads = vec![(0usize, 0usize); x.rank() - d];
        pads[x.rank() - 1 - d] = (1, 0);
        c.narrow(dim, 0, n - 1)?.pad(&pads, Scalar::Float(1.0))
    };
    let prefix = exclusive(x)?;
    let suffix = exclusive(&x.flip(&[dim])?)?.flip(&[dim])?;
    prefix.binary_owned(BinaryOp::Mul, suffix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{f32s, i64s};
    use crate::DType;

    /// `f` folded along `d` by index arithmetic, as the reference.
    fn naive_dim(x: &[f64], shape: &[usize], d: usize, id: f64, f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
        let ax = Axis::new(shape, d);
        let mut out = vec![id; ax.outer * ax.inner];
        for o in 0..ax.outer {
            for j in 0..ax.n {
                for c in 0..ax.inner {
                    let k = o * ax.inner + c;
                    out[k] = f(out[k], x[(o * ax.n + j) * ax.inner + c]);
                }
            }
        }
        out
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-9 * (1.0 + y.abs()))
    }

    #[test]
    fn full_reductions_give_shape_one() {
        let x = f32s(&[1.0, -2.0, 3.0, 4.0], &[2, 2]);
        assert_eq!(x.sum().unwrap().shape(), &[1]);
        assert_eq!(x.sum().unwrap().to_vec::<f32>(), vec![6.0]);
        assert_eq!(x.mean().unwrap().to_vec::<f32>(), vec![1.5]);
        assert_eq!(x.prod().unwrap().to_vec::<f32>(), vec![-24.0]);
        assert_eq!(x.max().unwrap().to_vec::<f32>(), vec![4.0]);
        assert_eq!(x.min().unwrap().to_vec::<f32>(), vec![-2.0]);
        assert_eq!(f32s(&[1.0, -5.0, 3.0], &[3]).max_abs().unwrap().to_vec::<f32>(), vec![5.0]);
    }

    #[test]
    fn large_f32_sum_is_accurate() {
        let n = 2_000_003;
        let v: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.001).sin() + 0.5).collect();
        let exact: f64 = v.iter().map(|&x| x as f64).sum();
        let got = Tensor::from_vec(v, &[n]).unwrap().sum().unwrap().to_vec::<f32>()[0] as f64;
        assert!(((got - exact) / exact).abs() < 1e-6, "{got} vs {exact}");
    }

    #[test]
    fn int_reductions_wrap_and_truncate() {
        let x = i64s(&[i64::MAX, 1, 5], &[3]);
        assert_eq!(x.sum().unwrap().to_vec::<i64>(), vec![i64::MIN.wrapping_add(5)]);
        assert_eq!(i64s(&[1, 2, 2], &[3]).mean().unwrap().to_vec::<i64>(), vec![1]);
        assert_eq!(i64s(&[-5, 0], &[2]).mean().unwrap().to_vec::<i64>(), vec![-2]);
        assert_eq!(i64s(&[3, -4], &[2]).prod().unwrap().to_vec::<i64>(), vec![-12]);
        assert_eq!(i64s(&[3, -4], &[2]).max_abs().unwrap().to_vec::<i64>(), vec![4]);
    }

    #[test]
    fn empty_reductions() {
        let e = Tensor::zeros(&[2, 0], DType::F32);
        assert_eq!(e.sum().unwrap().to_vec::<f32>(), vec![0.0]);
        assert_eq!(e.prod().unwrap().to_vec::<f32>(), vec![1.0]);
        assert!(e.mean().unwrap().to_vec::<f32>()[0].is_nan());
        assert_eq!(e.max().unwrap_err().to_string(), "max: cannot reduce an empty tensor (shape [2, 0])");
        assert_eq!(e.sum_dim(1).unwrap().to_vec::<f32>(), vec![0.0, 0.0]);
        assert_eq!(e.prod_dim(-1).unwrap().to_vec::<f32>(), vec![1.0, 1.0]);
        assert!(e.mean_dim(1).unwrap().to_vec::<f32>().iter().all(|v| v.is_nan()));
        assert_eq!(e.sum_dim(0).unwrap().shape(), &[1, 0]);
        assert_eq!(e.max_dim(1).unwrap_err().to_string(), "max_dim: cannot reduce dim 1 of size 0 (shape [2, 0])");
        assert_eq!(e.argmax(1).unwrap_err().to_string(), "argmax: cannot reduce dim 1 of size 0 (shape [2, 0])");
        assert_eq!(e.max_dim(0).unwrap().shape(), &[1, 0]);
        let ei = Tensor::zeros(&[0], DType::I64);
        assert_eq!(ei.mean().unwrap_err().to_string(), "mean: an Int tensor with no elements has no mean (shape [0])");
    }

    #[test]
    fn kind_and_dim_errors() {
        let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        assert_eq!(b.sum().unwrap_err().to_string(), "sum: expected a Float tensor, found Bool");
        assert_eq!(b.argmax(0).unwrap_err().to_string(), "argmax: expected a Float tensor, found Bool");
        let x = f32s(&[1.0; 6], &[2, 3]);
        assert_eq!(x.sum_dim(2).unwrap_err().to_string(), "sum_dim: dim 2 is out of range for a tensor of rank 2");
        assert_eq!(x.mean_dims(&[0, -3]).unwrap_err().to_string(), "mean_dims: dim -3 is out of range for a tensor of rank 2");
        assert_eq!(x.any_dim(5).unwrap_err().to_string(), "any_dim: dim 5 is out of range for a tensor of rank 2");
    }

    #[test]
    fn dim_reductions_match_naive_on_views() {
        let shape = [3, 4, 70];
        let v: Vec<f64> = (0..840).map(|i| ((i * 37 % 101) as f64 - 50.0) * 0.25).collect();
        let base = Tensor::from_vec(v, &shape).unwrap();
        // The same values as a non-contiguous view: a permuted copy, permuted back.
        let view = base.permute(&[2, 0, 1]).unwrap().contiguous().permute(&[1, 2, 0]).unwrap();
        assert!(!view.is_contiguous());
        let x = view.to_vec::<f64>();
        for t in [&base, &view] {
            for d in 0..3 {
                let keep = keep_dim(&shape, d);
                let check = |got: Tensor, want: Vec<f64>| {
                    assert_eq!(got.shape(), keep.as_slice());
                    assert!(close(&got.to_vec::<f64>(), &want), "dim {d}");
                };
                check(t.sum_dim(d as isize).unwrap(), naive_dim(&x, &shape, d, 0.0, |a, b| a + b));
                check(t.sum_dim(d as isize - 3).unwrap(), naive_dim(&x, &shape, d, 0.0, |a, b| a + b));
                check(t.prod_dim(d as isize).unwrap(), naive_dim(&x, &shape, d, 1.0, |a, b| a * b));
                check(t.max_dim(d as isize).unwrap(), naive_dim(&x, &shape, d, f64::MIN, f64::max));
                check(t.min_dim(d as isize).unwrap(), naive_dim(&x, &shape, d, f64::MAX, f64::min));
                check(t.max_abs_dim(d as isize).unwrap(), naive_dim(&x, &shape, d, 0.0, |a, b| a.max(b.abs())));
                let n = shape[d] as f64;
                check(t.mean_dim(d as isize).unwrap(), naive_dim(&x, &shape, d, 0.0, |a, b| a + b).iter().map(|s| s / n).collect());
            }
        }
    }

    #[test]
    fn long_axes_stay_accurate() {
        // 100k rows summed down dim 0: the runs of rows combine pairwise.
        let rows = 100_000;
        let x = Tensor::full(&[rows, 3], Scalar::Float(0.1), DType::F32);
        let s = x.sum_dim(0).unwrap().to_vec::<f32>();
        assert!(s.iter().all(|&v| ((v as f64 - 10_000.0) / 10_000.0).abs() < 1e-6), "{s:?}");
    }

    #[test]
    fn multi_dim_reductions() {
        let shape = [2, 3, 4, 5];
        let v: Vec<f64> = (0..120).map(|i| i as f64 * 0.5 - 7.0).collect();
        let t = Tensor::from_vec(v.clone(), &shape).unwrap();
        // Reference: one dim after another.
        let mut want = v.clone();
        let mut ws = shape.to_vec();
        for d in [0, 2, 3] {
            want = naive_dim(&want, &ws, d, 0.0, |a, b| a + b);
            ws[d] = 1;
        }
        let got = t.sum_dims(&[3, 0, -2, 2]).unwrap();
        assert_eq!(got.shape(), &[1, 3, 1, 1]);
        assert!(close(&got.to_vec::<f64>(), &want));
        let mean = t.mean_dims(&[0, 2, 3]).unwrap().to_vec::<f64>();
        assert!(close(&mean, &want.iter().map(|s| s / 40.0).collect::<Vec<_>>()));
        assert_eq!(t.sum_dims(&[]).unwrap().shape(), &shape);
        let p = i64s(&[1, 2, 3, 4, 5, 6], &[2, 3]).prod_dims(&[0, 1]).unwrap();
        assert_eq!((p.shape().to_vec(), p.to_vec::<i64>()), (vec![1, 1], vec![720]));
    }

    #[test]
    fn int_mean_dims_truncates_per_dim_like_burn() {
        // mean over dim 1 -> [[1], [3]] (5/3 truncates), then over dim 0 -> 2.
        let x = i64s(&[1, 2, 2, 3, 3, 4], &[2, 3]);
        assert_eq!(x.mean_dims(&[1, 0]).unwrap().to_vec::<i64>(), vec![2]);
        assert_eq!(x.mean_dim(1).unwrap().to_vec::<i64>(), vec![1, 3]);
        // Over dim 0 first: [2, 2, 3] -> 7 / 3 = 2.
        assert_eq!(x.mean_dims(&[0, 1]).unwrap().to_vec::<i64>(), vec![2]);
    }

    #[test]
    fn argmax_takes_the_first_and_nan_wins() {
        let x = f32s(&[1.0, 3.0, 3.0, 0.0, f32::NAN, 2.0, f32::NAN, 1.0, -1.0], &[3, 3]);
        assert_eq!(x.argmax(1).unwrap().to_vec::<i64>(), vec![1, 1, 0]);
        assert_eq!(x.argmin(1).unwrap().to_vec::<i64>(), vec![0, 1, 0]);
        assert_eq!(x.argmax(1).unwrap().shape(), &[3, 1]);
        // Along dim 0 (the column path): the same rules.
        assert_eq!(x.argmax(0).unwrap().to_vec::<i64>(), vec![2, 1, 0]);
        assert_eq!(x.argmin(-2).unwrap().to_vec::<i64>(), vec![2, 1, 2]);
        let (v, i) = x.max_dim_with_indices(0).unwrap();
        let v = v.to_vec::<f32>();
        assert!(v[0].is_nan() && v[1].is_nan() && v[2] == 3.0);
        assert_eq!(i.to_vec::<i64>(), vec![2, 1, 0]);
        let (v, i) = i64s(&[4, 1, 1, 7, 0, 0], &[2, 3]).transpose().min_dim_with_indices(1).unwrap();
        assert_eq!((v.to_vec::<i64>(), i.to_vec::<i64>()), (vec![4, 0, 0], vec![0, 1, 1]));
        assert_eq!(v.shape(), &[3, 1]);
    }

    #[test]
    fn argmax_matches_naive_on_long_rows() {
        let x: Vec<f32> = (0..5000).map(|i| ((i * 7919 % 4999) as f32).sin()).collect();
        let t = f32s(&x, &[2, 2500]);
        for (o, got) in t.argmax(1).unwrap().to_vec::<i64>().into_iter().enumerate() {
            let row = &x[o * 2500..(o + 1) * 2500];
            let best = row.iter().cloned().fold(f32::MIN, f32::max);
            assert_eq!(got as usize, row.iter().position(|&v| v == best).unwrap());
        }
    }

    #[test]
    fn any_and_all_take_every_kind() {
        let f = f32s(&[0.0, f32::NAN, 0.0, 0.0], &[2, 2]);
        assert_eq!(f.any().unwrap().to_vec::<bool>(), vec![true]);
        assert_eq!(f.all().unwrap().to_vec::<bool>(), vec![false]);
        assert_eq!(f.any().unwrap().dtype(), DType::Bool);
        assert_eq!(f.any_dim(1).unwrap().to_vec::<bool>(), vec![true, false]);
        assert_eq!(f.any_dim(0).unwrap().to_vec::<bool>(), vec![false, true]);
        let b = Tensor::from_vec(vec![true, true, false, true], &[2, 2]).unwrap();
        assert_eq!(b.all_dim(0).unwrap().to_vec::<bool>(), vec![false, true]);
        assert_eq!(b.transpose().all_dim(1).unwrap().to_vec::<bool>(), vec![false, true]);
        assert_eq!(b.all_dim(-1).unwrap().shape(), &[2, 1]);
        let i = i64s(&[3, -1], &[2]);
        assert_eq!(i.all().unwrap().to_vec::<bool>(), vec![true]);
        let e = Tensor::zeros(&[0], DType::I64);
        assert_eq!((e.any().unwrap().to_vec::<bool>(), e.all().unwrap().to_vec::<bool>()), (vec![false], vec![true]));
    }

    #[test]
    fn broadcast_dims_reduce_without_materialising() {
        // 3 * 2^40 elements: materialising them would not fit in memory.
        let x = f32s(&[1.0, 2.0, 4.0], &[1, 3]).expand(&[1 << 40, 3]).unwrap();
        assert_eq!(x.sum().unwrap().to_vec::<f32>(), vec![7.0 * (1u64 << 40) as f32]);
        assert_eq!(x.mean().unwrap().to_vec::<f32>(), vec![7.0 / 3.0]);
        assert_eq!(x.max().unwrap().to_vec::<f32>(), vec![4.0]);
        assert_eq!(x.sum_dim(0).unwrap().to_vec::<f32>(), [1.0f32, 2.0, 4.0].map(|v| v * (1u64 << 40) as f32).to_vec());
        assert_eq!(x.mean_dim(0).unwrap().to_vec::<f32>(), vec![1.0, 2.0, 4.0]);
        // A broadcast dim mixed with a real one, against the materialised sum.
        let y = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 1, 3]).expand(&[2, 5, 3]).unwrap();
        let dense = y.contiguous();
        for dims in [&[0isize, 1][..], &[1], &[1, 2], &[0, 1, 2]] {
            assert_eq!(y.sum_dims(dims).unwrap().to_vec::<f32>(), dense.sum_dims(dims).unwrap().to_vec::<f32>(), "{dims:?}");
            assert_eq!(y.mean_dims(dims).unwrap().to_vec::<f32>(), dense.mean_dims(dims).unwrap().to_vec::<f32>(), "{dims:?}");
        }
        assert_eq!(y.prod().unwrap().to_vec::<f32>(), dense.prod().unwrap().to_vec::<f32>());
        // Int sums of a broadcast wrap as the element-wise sum would.
        let z = i64s(&[i64::MAX], &[1]).expand(&[3]).unwrap();
        assert_eq!(z.sum().unwrap().to_vec::<i64>(), vec![i64::MAX.wrapping_mul(3)]);
    }

    #[test]
    fn var_extrema_of_nothing_fail_as_the_plain_ops() {
        let x = Var::constant(Tensor::zeros(&[0, 2], DType::F32));
        for (got, want) in [
            (x.max().unwrap_err(), x.value.max().unwrap_err()),
            (x.min().unwrap_err(), x.value.min().unwrap_err()),
            (x.max_abs().unwrap_err(), x.value.max_abs().unwrap_err()),
        ] {
            assert_eq!(got.to_string(), want.to_string());
            assert!(got.to_string().contains("cannot reduce an empty tensor"), "{got}");
        }
    }

    #[test]
    fn half_sums_accumulate_in_f32_and_round_once() {
        // 1000 ones: a bf16 running sum stops at 256 (256 + 1 rounds back to 256);
        // 1000 itself is a bf16 number (125 * 8), and so is every partial count in f32.
        for dtype in [DType::BF16, DType::F16] {
            let ones = Tensor::ones(&[2, 1000], dtype);
            let by_dims = ones.sum_dims(&[1]).unwrap();
            assert_eq!(by_dims.dtype(), dtype);
            assert_eq!(by_dims.cast(DType::F64).unwrap().to_vec::<f64>(), vec![1000.0, 1000.0], "{dtype}");
            let by_dim = ones.sum_dim(1).unwrap();
            assert_eq!(by_dim.dtype(), dtype);
            assert_eq!(by_dim.cast(DType::F64).unwrap().to_vec::<f64>(), vec![1000.0, 1000.0], "{dtype}");
            let all = ones.sum().unwrap();
            assert_eq!((all.dtype(), all.cast(DType::F64).unwrap().to_vec::<f64>()), (dtype, vec![2000.0]), "{dtype}");
        }
        // Rounded once: 1 + 3 * 2^-9 is 1 + 2^-7 in bf16 (above the midpoint), which three
        // rounded additions of 2^-9 to 1 would each have lost.
        let x = Tensor::from_vec(vec![1.0f32, 2f32.powi(-9), 2f32.powi(-9), 2f32.powi(-9)], &[4]).unwrap().cast(DType::BF16).unwrap();
        assert_eq!(x.sum_dims(&[0]).unwrap().cast(DType::F64).unwrap().to_vec::<f64>(), vec![1.0 + 2f64.powi(-7)]);
    }
}
