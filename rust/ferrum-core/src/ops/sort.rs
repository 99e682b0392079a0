//! Sorting along one dim: stable sorts (values, indices, or both) and top-k.
//! NaN sorts last ascending and first descending, as in NumPy and torch, and
//! equal values keep their order in both directions.
//!
//! The sorted dim is swapped to the innermost position and copied, so each
//! row is a contiguous slice; rows sort on threads, or one long row sorts
//! with a parallel sort.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::dtype::{Kind, NumElement};
use crate::error::Result;
use crate::kernels::parallel::{go_parallel, CHUNK, PAR_CHEAP};
use crate::ops::reduce::tensor_from;
use crate::tensor::Tensor;
use crate::{bail, with_num};

/// Ascending order with NaN above every number (and NaNs equal).
#[inline(always)]
fn ascending<T: NumElement>(a: &T, b: &T) -> Ordering {
    if a < b {
        Ordering::Less
    } else if a > b {
        Ordering::Greater
    } else {
        a.is_nan_value().cmp(&b.is_nan_value())
    }
}

#[inline(always)]
fn directed<T: NumElement, const DESC: bool>(a: &T, b: &T) -> Ordering {
    if DESC {
        ascending(b, a)
    } else {
        ascending(a, b)
    }
}

/// The order of (value, index) pairs: by value, ties by index. Every key is
/// distinct, so an unstable sort by it equals a stable sort by value.
#[inline(always)]
fn pair_order<T: NumElement, const DESC: bool>(p: &(T, i64), q: &(T, i64)) -> Ordering {
    directed::<T, DESC>(&p.0, &q.0).then(p.1.cmp(&q.1))
}

/// Rows of `n` elements: how to spread them over threads. `Inside` means a
/// few long rows, each sorted with a parallel sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spread {
    Serial,
    Rows(usize),
    Inside,
}

fn spread(total: usize, n: usize) -> Spread {
    if !go_parallel(total, PAR_CHEAP) {
        return Spread::Serial;
    }
    if total / n >= 2 * rayon::current_num_threads() {
        Spread::Rows((CHUNK / n).max(1))
    } else {
        Spread::Inside
    }
}

/// Sort one row of values in place.
fn sort_values<T: NumElement, const DESC: bool>(row: &mut [T], parallel: bool) {
    let cmp = directed::<T, DESC>;
    // Equal ints are indistinguishable, so an unstable sort is as good as a
    // stable one there; floats keep -0.0/0.0 and NaN payloads in order.
    match (T::DTYPE.kind() == Kind::Int, parallel) {
        (true, false) => row.sort_unstable_by(cmp),
        (true, true) => row.par_sort_unstable_by(cmp),
        (false, false) => row.sort_by(cmp),
        (false, true) => row.par_sort_by(cmp),
    }
}

/// Sort one row of values in place, writing the original positions to `idx`.
fn sort_indexed<T: NumElement, const DESC: bool>(row: &mut [T], idx: &mut [i64], pairs: &mut Vec<(T, i64)>, parallel: bool) {
    pairs.clear();
    pairs.extend(row.iter().enumerate().map(|(i, &v)| (v, i as i64)));
    if parallel {
        pairs.par_sort_unstable_by(pair_order::<T, DESC>);
    } else {
        pairs.sort_unstable_by(pair_order::<T, DESC>);
    }
    for ((v, i), &(pv, pi)) in row.iter_mut().zip(idx.iter_mut()).zip(pairs.iter()) {
        *v = pv;
        *i = pi;
    }
}

/// The `k` largest of `row` in descending order (ties by first position).
fn top_row<T: NumElement>(row: &[T], vals: &mut [T], idx: &mut [i64], pairs: &mut Vec<(T, i64)>) {
    let k = vals.len();
    pairs.clear();
    pairs.extend(row.iter().enumerate().map(|(i, &v)| (v, i as i64)));
    if k < pairs.len() {
        pairs.select_nth_unstable_by(k, pair_order::<T, true>);
    }
    pairs[..k].sort_unstable_by(pair_order::<T, true>);
    for ((v, i), &(pv, pi)) in vals.iter_mut().zip(idx.iter_mut()).zip(pairs.iter()) {
        *v = pv;
        *i = pi;
    }
}

fn sort_all_rows<T: NumElement, const DESC: bool>(vals: &mut [T], n: usize) {
    match spread(vals.len(), n) {
        Spread::Serial => vals.chunks_mut(n).for_each(|r| sort_values::<T, DESC>(r, false)),
        Spread::Rows(min) => vals.par_chunks_mut(n).with_min_len(min).for_each(|r| sort_values::<T, DESC>(r, false)),
        Spread::Inside => vals.chunks_mut(n).for_each(|r| sort_values::<T, DESC>(r, true)),
    }
}

fn sort_all_rows_indexed<T: NumElement, const DESC: bool>(vals: &mut [T], idx: &mut [i64], n: usize) {
    match spread(vals.len(), n) {
        Spread::Serial => {
            let mut pairs = Vec::with_capacity(n);
            vals.chunks_mut(n).zip(idx.chunks_mut(n)).for_each(|(v, i)| sort_indexed::<T, DESC>(v, i, &mut pairs, false));
        }
        Spread::Rows(min) => vals
            .par_chunks_mut(n)
            .zip(idx.par_chunks_mut(n))
            .with_min_len(min)
            .for_each_init(|| Vec::with_capacity(n), |pairs, (v, i)| sort_indexed::<T, DESC>(v, i, pairs, false)),
        Spread::Inside => {
            let mut pairs = Vec::with_capacity(n);
            vals.chunks_mut(n).zip(idx.chunks_mut(n)).for_each(|(v, i)| sort_indexed::<T, DESC>(v, i, &mut pairs, true));
        }
    }
}

/// `x` with dim `d` swapped to the innermost position, as an owned
/// row-major buffer, and the shape of that view.
fn rows_along<T: NumElement>(x: &Tensor, d: usize) -> (Vec<T>, Vec<usize>) {
    let moved = x.with_layout(x.layout().transpose(d, x.rank() - 1));
    let shape = moved.shape().to_vec();
    (moved.into_vec::<T>(), shape)
}

/// Undo [`rows_along`]: a contiguous tensor in the original dim order.
fn from_rows<T: NumElement>(data: Vec<T>, shape: &[usize], d: usize) -> Tensor {
    let t = tensor_from(data, shape);
    t.with_layout(t.layout().transpose(d, shape.len() - 1)).contiguous()
}

fn sort_along<T: NumElement>(x: &Tensor, d: usize, descending: bool) -> Tensor {
    let (mut vals, shape) = rows_along::<T>(x, d);
    let n = shape[shape.len() - 1];
    if n > 1 {
        if descending {
            sort_all_rows::<T, true>(&mut vals, n);
        } else {
            sort_all_rows::<T, false>(&mut vals, n);
        }
    }
    from_rows(vals, &shape, d)
}

fn sort_along_indexed<T: NumElement>(x: &Tensor, d: usize, descending: bool) -> (Tensor, Tensor) {
    let (mut vals, shape) = rows_along::<T>(x, d);
    let n = shape[shape.len() - 1];
    let mut idx = vec![0i64; vals.len()];
    if n > 0 {
        if descending {
            sort_all_rows_indexed::<T, true>(&mut vals, &mut idx, n);
        } else {
            sort_all_rows_indexed::<T, false>(&mut vals, &mut idx, n);
        }
    }
    (from_rows(vals, &shape, d), from_rows(idx, &shape, d))
}

fn topk_along<T: NumElement>(x: &Tensor, k: usize, d: usize) -> (Tensor, Tensor) {
    let (src, mut shape) = rows_along::<T>(x, d);
    let last = shape.len() - 1;
    let n = shape[last];
    shape[last] = k;
    let rows = src.len().checked_div(n).unwrap_or(0);
    let mut vals = vec![T::ZERO; rows * k];
    let mut idx = vec![0i64; rows * k];
    if k > 0 {
        let src_rows = src.par_chunks(n).zip(vals.par_chunks_mut(k)).zip(idx.par_chunks_mut(k));
        if go_parallel(src.len(), PAR_CHEAP) {
            let min = (CHUNK / n).max(1);
            src_rows.with_min_len(min).for_each_init(|| Vec::with_capacity(n), |pairs, ((s, v), i)| top_row(s, v, i, pairs));
        } else {
            let mut pairs = Vec::with_capacity(n);
            for ((s, v), i) in src.chunks(n).zip(vals.chunks_mut(k)).zip(idx.chunks_mut(k)) {
                top_row(s, v, i, &mut pairs);
            }
        }
    }
    (from_rows(vals, &shape, d), from_rows(idx, &shape, d))
}

impl Tensor {
    /// Values sorted along `dim` (stable).
    pub fn sort(&self, dim: isize, descending: bool) -> Result<Tensor> {
        let op = "sort";
        with_num!(op, self.dtype(), T => {
            let d = self.dim(op, dim)?;
            Ok(sort_along::<T>(self, d, descending))
        })
    }

    /// Sorted values and, for each, its index along `dim` in the input (i64).
    pub fn sort_with_indices(&self, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        self.sort_indexed("sort_with_indices", dim, descending)
    }

    /// The indices that sort `dim` (stable).
    pub fn argsort(&self, dim: isize, descending: bool) -> Result<Tensor> {
        Ok(self.sort_indexed("argsort", dim, descending)?.1)
    }

    fn sort_indexed(&self, op: &'static str, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        with_num!(op, self.dtype(), T => {
            let d = self.dim(op, dim)?;
            Ok(sort_along_indexed::<T>(self, d, descending))
        })
    }

    /// The `k` largest values along `dim`, in descending order.
    pub fn topk(&self, k: usize, dim: isize) -> Result<Tensor> {
        Ok(self.top_indexed("topk", k, dim)?.0)
    }

    /// The `k` largest values along `dim` and their indices (i64); equal
    /// values come in order of position, NaN counts as the largest.
    pub fn topk_with_indices(&self, k: usize, dim: isize) -> Result<(Tensor, Tensor)> {
        self.top_indexed("topk_with_indices", k, dim)
    }

    fn top_indexed(&self, op: &'static str, k: usize, dim: isize) -> Result<(Tensor, Tensor)> {
        with_num!(op, self.dtype(), T => {
            let d = self.dim(op, dim)?;
            let n = self.shape()[d];
            if k > n {
                bail!(op, "k = {} exceeds the size {} of dim {} (shape {:?})", k, n, d, self.shape());
            }
            Ok(topk_along::<T>(self, k, d))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn f32s(v: &[f32], shape: &[usize]) -> Tensor {
        Tensor::from_vec(v.to_vec(), shape).unwrap()
    }

    fn i64s(v: &[i64], shape: &[usize]) -> Tensor {
        Tensor::from_vec(v.to_vec(), shape).unwrap()
    }

    /// Render floats so NaN compares equal to NaN in assertions.
    fn show(t: &Tensor) -> Vec<String> {
        t.to_vec::<f32>().iter().map(|v| format!("{v:?}")).collect()
    }

    #[test]
    fn nan_sorts_last_ascending_first_descending() {
        let x = f32s(&[3.0, f32::NAN, -1.0, 2.0], &[4]);
        assert_eq!(show(&x.sort(0, false).unwrap()), ["-1.0", "2.0", "3.0", "NaN"]);
        assert_eq!(show(&x.sort(0, true).unwrap()), ["NaN", "3.0", "2.0", "-1.0"]);
        assert_eq!(x.argsort(0, false).unwrap().to_vec::<i64>(), vec![2, 3, 0, 1]);
        assert_eq!(x.argsort(0, true).unwrap().to_vec::<i64>(), vec![1, 0, 3, 2]);
    }

    #[test]
    fn equal_values_keep_their_order_both_ways() {
        let x = i64s(&[2, 1, 2, 1, 2], &[5]);
        let (v, i) = x.sort_with_indices(0, false).unwrap();
        assert_eq!((v.to_vec::<i64>(), i.to_vec::<i64>()), (vec![1, 1, 2, 2, 2], vec![1, 3, 0, 2, 4]));
        let (v, i) = x.sort_with_indices(0, true).unwrap();
        assert_eq!((v.to_vec::<i64>(), i.to_vec::<i64>()), (vec![2, 2, 2, 1, 1], vec![0, 2, 4, 1, 3]));
        // -0.0 and 0.0 compare equal: a stable sort keeps them as given.
        let z = f32s(&[0.0, -0.0, -1.0], &[3]);
        assert_eq!(show(&z.sort(0, false).unwrap()), ["-1.0", "0.0", "-0.0"]);
        assert_eq!(show(&z.sort(0, true).unwrap()), ["0.0", "-0.0", "-1.0"]);
    }

    #[test]
    fn sorts_along_outer_dims_and_views() {
        let x = i64s(&[5, 1, 4, 2, 6, 0], &[2, 3]);
        let (v, i) = x.sort_with_indices(0, false).unwrap();
        assert_eq!((v.to_vec::<i64>(), i.to_vec::<i64>()), (vec![2, 1, 0, 5, 6, 4], vec![1, 0, 1, 0, 1, 0]));
        assert_eq!(v.shape(), &[2, 3]);
        let t = x.transpose(); // [[5, 2], [1, 6], [4, 0]]
        assert_eq!(t.sort(-1, true).unwrap().to_vec::<i64>(), vec![5, 2, 6, 1, 4, 0]);
        assert_eq!(t.argsort(0, false).unwrap().to_vec::<i64>(), vec![1, 2, 2, 0, 0, 1]);
    }

    #[test]
    fn matches_a_naive_stable_sort_on_a_3d_tensor() {
        let shape = [3, 50, 4];
        let v: Vec<i64> = (0..600).map(|i| (i * 7919 % 13) - 6).collect();
        let t = i64s(&v, &shape);
        let (vals, idx) = t.sort_with_indices(1, true).unwrap();
        let (vals, idx) = (vals.to_vec::<i64>(), idx.to_vec::<i64>());
        for o in 0..3 {
            for c in 0..4 {
                let at = |j: usize| (o * 50 + j) * 4 + c;
                let mut want: Vec<(i64, i64)> = (0..50).map(|j| (v[at(j)], j as i64)).collect();
                want.sort_by_key(|p| std::cmp::Reverse(p.0));
                let got: Vec<(i64, i64)> = (0..50).map(|j| (vals[at(j)], idx[at(j)])).collect();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn long_rows_sort_like_a_short_one() {
        let n = 300_000;
        let v: Vec<f32> = (0..n).map(|i| ((i * 7919 % 100_003) as f32 * 0.01).sin()).collect();
        let t = f32s(&v, &[n]);
        let (vals, idx) = t.sort_with_indices(0, false).unwrap();
        let mut want: Vec<(f32, i64)> = v.iter().enumerate().map(|(i, &x)| (x, i as i64)).collect();
        want.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        assert_eq!(vals.to_vec::<f32>(), want.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(idx.to_vec::<i64>(), want.iter().map(|p| p.1).collect::<Vec<_>>());
        assert_eq!(t.sort(0, false).unwrap().to_vec::<f32>(), vals.to_vec::<f32>());
    }

    #[test]
    fn topk_picks_the_largest_first_positions_on_ties() {
        let x = f32s(&[1.0, 5.0, 3.0, 5.0, f32::NAN, 0.0, 2.0, 2.0], &[2, 4]);
        let (v, i) = x.topk_with_indices(2, 1).unwrap();
        assert_eq!(v.shape(), &[2, 2]);
        assert_eq!(show(&v), ["5.0", "5.0", "NaN", "2.0"]);
        assert_eq!(i.to_vec::<i64>(), vec![1, 3, 0, 2]);
        let y = i64s(&[4, 9, 1, 7, 3, 8], &[3, 2]);
        let (v, i) = y.topk_with_indices(2, 0).unwrap();
        assert_eq!((v.to_vec::<i64>(), i.to_vec::<i64>()), (vec![4, 9, 3, 8], vec![0, 0, 2, 2]));
        assert_eq!(y.topk(3, -2).unwrap().to_vec::<i64>(), vec![4, 9, 3, 8, 1, 7]);
        assert_eq!(y.topk(0, 1).unwrap().shape(), &[3, 0]);
    }

    #[test]
    fn topk_matches_a_full_sort() {
        let v: Vec<i64> = (0..2000).map(|i| (i * 7919) % 101).collect();
        let t = i64s(&v, &[4, 500]);
        let (tv, ti) = t.topk_with_indices(17, 1).unwrap();
        let (sv, si) = t.sort_with_indices(1, true).unwrap();
        assert_eq!(tv.to_vec::<i64>(), sv.narrow(1, 0, 17).unwrap().to_vec::<i64>());
        assert_eq!(ti.to_vec::<i64>(), si.narrow(1, 0, 17).unwrap().to_vec::<i64>());
    }

    #[test]
    fn empty_and_errors() {
        let e = Tensor::zeros(&[0, 3], DType::F32);
        assert_eq!(e.sort(0, false).unwrap().shape(), &[0, 3]);
        assert_eq!(e.argsort(1, true).unwrap().shape(), &[0, 3]);
        assert_eq!(e.topk(2, 1).unwrap().shape(), &[0, 2]);
        let x = f32s(&[1.0, 2.0, 3.0], &[1, 3]);
        assert_eq!(x.topk(4, 1).unwrap_err().to_string(), "topk: k = 4 exceeds the size 3 of dim 1 (shape [1, 3])");
        assert_eq!(x.sort(2, false).unwrap_err().to_string(), "sort: dim 2 is out of range for a tensor of rank 2");
        let b = Tensor::from_vec(vec![true], &[1]).unwrap();
        assert_eq!(b.argsort(0, false).unwrap_err().to_string(), "argsort: expected a Float tensor, found Bool");
    }
}
