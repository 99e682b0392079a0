//! Sorting along one dim: stable sorts (values, indices, or both) and top-k.
//! NaN sorts last ascending and first descending, as in NumPy and torch, and
//! equal values keep their order in both directions.
//!
//! The sorted dim is swapped to the innermost position (a copy unless it is
//! there already), so each row is a contiguous slice; rows sort on threads,
//! or one long row sorts with a parallel sort.

use crate::autodiff::{record, FnBackward, Var};
use rayon::prelude::*;

use crate::dtype::DType;

use crate::element::NumElement;
use crate::error::Result;
use crate::kernels::copy::contiguous_values;
use crate::kernels::parallel::{go_parallel, CHUNK, PAR_CHEAP};
use crate::ops::reduce::tensor_from;
use crate::tensor::Tensor;
use crate::{bail, with_num};

/// Elements with an unsigned key that orders like the values, NaN above
/// every number and -0.0 equal to 0.0. Sorting (key, index) pairs packed in
/// one integer is a plain integer sort, and since every pair is distinct an
/// unstable sort of them gives exactly the stable order.
trait SortKey: NumElement {
    /// Bits the key uses: 32 lets a key and an index share a `u64`.
    const KEY_MASK: u64;
    fn key(self) -> u64;

    /// The key, inverted for a descending order (NaN then comes first).
    #[inline(always)]
    fn directed_key(self, descending: bool) -> u64 {
        if descending {
            !self.key() & Self::KEY_MASK
        } else {
            self.key()
        }
    }
}

impl SortKey for f32 {
    const KEY_MASK: u64 = u32::MAX as u64;
    #[inline(always)]
    fn key(self) -> u64 {
        if self.is_nan() {
            return Self::KEY_MASK;
        }
        // Adding 0.0 turns -0.0 into 0.0; flipping makes the bits ascend.
        let b = (self + 0.0).to_bits();
        (if b >> 31 == 1 { !b } else { b | 1 << 31 }) as u64
    }
}

impl SortKey for f64 {
    const KEY_MASK: u64 = u64::MAX;
    #[inline(always)]
    fn key(self) -> u64 {
        if self.is_nan() {
            return Self::KEY_MASK;
        }
        let b = (self + 0.0).to_bits();
        if b >> 63 == 1 {
            !b
        } else {
            b | 1 << 63
        }
    }
}

impl SortKey for i64 {
    const KEY_MASK: u64 = u64::MAX;
    #[inline(always)]
    fn key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
}

/// A key and an index packed into one integer, the key in the high bits.
trait Packed: Ord + Copy + Send + Sync {
    fn pack(key: u64, index: usize) -> Self;
    fn index(self) -> usize;
}

/// For 32-bit keys and rows shorter than 2^32.
impl Packed for u64 {
    #[inline(always)]
    fn pack(key: u64, index: usize) -> Self {
        key << 32 | index as u64
    }
    #[inline(always)]
    fn index(self) -> usize {
        (self & u32::MAX as u64) as usize
    }
}

impl Packed for u128 {
    #[inline(always)]
    fn pack(key: u64, index: usize) -> Self {
        (key as u128) << 64 | index as u128
    }
    #[inline(always)]
    fn index(self) -> usize {
        self as u64 as usize
    }
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

/// Sort `src` into `vals`, writing each value's position in `src` to `idx`.
fn sort_row<T: SortKey, P: Packed>(src: &[T], vals: &mut [T], idx: &mut [i64], descending: bool, keys: &mut Vec<P>, parallel: bool) {
    keys.clear();
    keys.extend(src.iter().enumerate().map(|(i, &v)| P::pack(v.directed_key(descending), i)));
    if parallel {
        keys.par_sort_unstable();
    } else {
        keys.sort_unstable();
    }
    for ((v, i), &k) in vals.iter_mut().zip(idx.iter_mut()).zip(keys.iter()) {
        *v = src[k.index()];
        *i = k.index() as i64;
    }
}

/// The `vals.len()` largest of `src` in descending order, ties by position.
fn top_row<T: SortKey, P: Packed>(src: &[T], vals: &mut [T], idx: &mut [i64], keys: &mut Vec<P>) {
    let k = vals.len();
    keys.clear();
    keys.extend(src.iter().enumerate().map(|(i, &v)| P::pack(v.directed_key(true), i)));
    if k < keys.len() {
        keys.select_nth_unstable(k);
    }
    keys[..k].sort_unstable();
    for ((v, i), &p) in vals.iter_mut().zip(idx.iter_mut()).zip(keys.iter()) {
        *v = src[p.index()];
        *i = p.index() as i64;
    }
}

/// Each row of `n` in `src`, sorted into `vals` and `idx`.
fn sort_rows<T: SortKey, P: Packed>(src: &[T], vals: &mut [T], idx: &mut [i64], n: usize, descending: bool) {
    let rows = src.chunks(n).zip(vals.chunks_mut(n)).zip(idx.chunks_mut(n));
    match spread(src.len(), n) {
        Spread::Rows(min) => src
            .par_chunks(n)
            .zip(vals.par_chunks_mut(n))
            .zip(idx.par_chunks_mut(n))
            .with_min_len(min)
            .for_each_init(|| Vec::with_capacity(n), |keys, ((s, v), i)| sort_row::<T, P>(s, v, i, descending, keys, false)),
        spread => {
            let mut keys = Vec::with_capacity(n);
            rows.for_each(|((s, v), i)| sort_row::<T, P>(s, v, i, descending, &mut keys, spread == Spread::Inside));
        }
    }
}

/// Each row of `n` in `src`, its top `k` into `vals` and `idx` (rows of `k`).
fn top_rows<T: SortKey, P: Packed>(src: &[T], vals: &mut [T], idx: &mut [i64], n: usize, k: usize) {
    if go_parallel(src.len(), PAR_CHEAP) {
        let min = (CHUNK / n).max(1);
        src.par_chunks(n)
            .zip(vals.par_chunks_mut(k))
            .zip(idx.par_chunks_mut(k))
            .with_min_len(min)
            .for_each_init(|| Vec::with_capacity(n), |keys, ((s, v), i)| top_row::<T, P>(s, v, i, keys));
    } else {
        let mut keys = Vec::with_capacity(n);
        for ((s, v), i) in src.chunks(n).zip(vals.chunks_mut(k)).zip(idx.chunks_mut(k)) {
            top_row::<T, P>(s, v, i, &mut keys);
        }
    }
}

/// Whether (key, index) pairs of rows of `n` fit a `u64`.
fn narrow<T: SortKey>(n: usize) -> bool {
    T::KEY_MASK == u32::MAX as u64 && n <= u32::MAX as usize
}

/// `x` with dim `d` swapped to the innermost position, so that its
/// row-major elements are the rows to sort, one after another.
fn rows_along(x: &Tensor, d: usize) -> Tensor {
    x.subview(x.layout().transpose(d, x.rank() - 1))
}

/// Undo [`rows_along`]: a contiguous tensor in the original dim order.
fn from_rows<T: NumElement>(op: &'static str, data: Vec<T>, shape: &[usize], d: usize) -> Result<Tensor> {
    let t = tensor_from(data, shape);
    t.subview(t.layout().transpose(d, shape.len() - 1)).try_contiguous(op)
}

/// Values only, for Int: equal ints cannot be told apart, so a plain
/// in-place unstable sort is as good as a stable one.
fn sort_ints(op: &'static str, x: &Tensor, d: usize, descending: bool) -> Result<Tensor> {
    let moved = rows_along(x, d);
    let shape = moved.shape().to_vec();
    let n = shape[shape.len() - 1];
    let mut vals = moved.into_vec::<i64>(op)?;
    if n > 1 {
        let sort = |r: &mut [i64], parallel: bool| {
            if parallel {
                r.par_sort_unstable();
            } else {
                r.sort_unstable();
            }
            if descending {
                r.reverse();
            }
        };
        match spread(vals.len(), n) {
            Spread::Rows(min) => vals.par_chunks_mut(n).with_min_len(min).for_each(|r| sort(r, false)),
            spread => vals.chunks_mut(n).for_each(|r| sort(r, spread == Spread::Inside)),
        }
    }
    from_rows(op, vals, &shape, d)
}

/// Sorted values and their source indices, laid out as [`rows_along`]'s
/// view, whose shape comes third.
fn sort_along<T: SortKey>(op: &'static str, x: &Tensor, d: usize, descending: bool) -> Result<(Vec<T>, Vec<i64>, Vec<usize>)> {
    let moved = rows_along(x, d);
    let shape = moved.shape().to_vec();
    let n = shape[shape.len() - 1];
    let src = contiguous_values::<T>(op, &moved)?;
    let mut vals = vec![T::ZERO; src.len()];
    let mut idx = vec![0i64; src.len()];
    if n > 0 {
        if narrow::<T>(n) {
            sort_rows::<T, u64>(&src, &mut vals, &mut idx, n, descending);
        } else {
            sort_rows::<T, u128>(&src, &mut vals, &mut idx, n, descending);
        }
    }
    Ok((vals, idx, shape))
}

fn topk_along<T: SortKey>(op: &'static str, x: &Tensor, k: usize, d: usize) -> Result<(Tensor, Tensor)> {
    let moved = rows_along(x, d);
    let mut shape = moved.shape().to_vec();
    let last = shape.len() - 1;
    let n = shape[last];
    shape[last] = k;
    let src = contiguous_values::<T>(op, &moved)?;
    let rows = src.len().checked_div(n).unwrap_or(0);
    let mut vals = vec![T::ZERO; rows * k];
    let mut idx = vec![0i64; rows * k];
    if k > 0 {
        if narrow::<T>(n) {
            top_rows::<T, u64>(&src, &mut vals, &mut idx, n, k);
        } else {
            top_rows::<T, u128>(&src, &mut vals, &mut idx, n, k);
        }
    }
    Ok((from_rows(op, vals, &shape, d)?, from_rows(op, idx, &shape, d)?))
}

impl Tensor {
    /// Values sorted along `dim` (stable).
    pub fn sort(&self, dim: isize, descending: bool) -> Result<Tensor> {
        let op = "sort";
        with_num!(op, self.dtype(), T => {
            let d = self.dim(op, dim)?;
            if self.dtype() == DType::I64 {
                return sort_ints(op, self, d, descending);
            }
            let (vals, _, shape) = sort_along::<T>(op, self, d, descending)?;
            from_rows(op, vals, &shape, d)
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
            let (vals, idx, shape) = sort_along::<T>(op, self, d, descending)?;
            Ok((from_rows(op, vals, &shape, d)?, from_rows(op, idx, &shape, d)?))
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
            topk_along::<T>(op, self, k, d)
        })
    }
}

impl Var {
    /// Sorted values' gradients go back to where each value came from.
    fn permuted(&self, name: &'static str, dim: isize, values: Tensor, indices: Tensor) -> Var {
        let (shape, dtype) = (self.value.shape().to_vec(), self.value.dtype());
        record(values, &[self], move || {
            FnBackward::new(name, move |g, _| Ok(vec![Some(Tensor::zeros(&shape, dtype).scatter(dim, &indices, &g)?)]))
        })
    }

    pub fn sort_with_indices(&self, dim: isize, descending: bool) -> Result<(Var, Tensor)> {
        let (v, i) = self.value.sort_with_indices(dim, descending)?;
        Ok((self.permuted("sort", dim, v, i.clone()), i))
    }

    pub fn sort(&self, dim: isize, descending: bool) -> Result<Var> {
        Ok(self.sort_with_indices(dim, descending).map_err(|e| e.with_op("sort"))?.0)
    }

    pub fn topk_with_indices(&self, k: usize, dim: isize) -> Result<(Var, Tensor)> {
        let (v, i) = self.value.topk_with_indices(k, dim)?;
        Ok((self.permuted("topk", dim, v, i.clone()), i))
    }

    pub fn topk(&self, k: usize, dim: isize) -> Result<Var> {
        Ok(self.topk_with_indices(k, dim).map_err(|e| e.with_op("topk"))?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{f32s, i64s};

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
    fn keys_order_like_the_values() {
        let v = [f64::NEG_INFINITY, -1e300, -1.0, -1e-310, 0.0, 1e-310, 1.0, 1e300, f64::INFINITY, f64::NAN];
        assert!(v.windows(2).all(|w| w[0].key() < w[1].key()));
        assert_eq!((-0.0f64).key(), 0.0f64.key());
        let v32 = v.map(|x| x as f32);
        assert!(v32.windows(2).all(|w| w[0].key() <= w[1].key() && (w[0] == w[1] || w[0].key() < w[1].key())));
        assert!(v32.iter().all(|x| x.key() <= u32::MAX as u64));
        assert!([i64::MIN, -1, 0, 1, i64::MAX].windows(2).all(|w| w[0].key() < w[1].key()));
    }

    #[test]
    fn wide_keys_sort_f64_with_nan_and_zeros() {
        let x = Tensor::from_vec(vec![0.0f64, f64::NAN, -0.0, -2.0, f64::INFINITY], &[5]).unwrap();
        let (v, i) = x.sort_with_indices(0, true).unwrap();
        let v: Vec<String> = v.to_vec::<f64>().iter().map(|v| format!("{v:?}")).collect();
        assert_eq!(v, ["NaN", "inf", "0.0", "-0.0", "-2.0"]);
        assert_eq!(i.to_vec::<i64>(), vec![1, 4, 0, 2, 3]);
        assert_eq!(x.argsort(0, false).unwrap().to_vec::<i64>(), vec![3, 0, 2, 4, 1]);
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
