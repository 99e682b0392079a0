//! Indexing along one dim with Int index tensors: `select`/`take` pick whole
//! slices (index_select), `gather` picks element-wise; `select_assign` and
//! `scatter` are their adding writes (index_add, scatter_add). Indices are
//! checked once up front, never wrapped, so the loops index freely.

use crate::autodiff::{record, FnBackward, Var};
use std::borrow::Cow;

use rayon::prelude::*;

use crate::dtype::Kind;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::copy::{contiguous_values, copy_strided};
use crate::kernels::parallel::{go_parallel, simd, PAR_CHEAP};
use crate::layout::Layout;
use crate::shape::{contiguous_strides, try_zeroed};
use crate::tensor::views::SliceSpec;
use crate::tensor::Tensor;
use crate::with_dtype;

/// How the adding writes combine: a sum for numbers, OR for Bool (Burn adds
/// bools as ints and keeps what is non-zero).
trait Accumulate: Element {
    fn accumulate(self, other: Self) -> Self;
}

impl Accumulate for f32 {
    #[inline(always)]
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
}

impl Accumulate for f64 {
    #[inline(always)]
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
}

impl Accumulate for i64 {
    #[inline(always)]
    fn accumulate(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

// Half floats add in f32 and round, as `half` does; i32 and u8 never get
// here (their sums are made in i64 and narrowed, checked).
impl Accumulate for half::f16 {
    #[inline(always)]
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
}

impl Accumulate for half::bf16 {
    #[inline(always)]
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
}

impl Accumulate for i32 {
    #[inline(always)]
    fn accumulate(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

impl Accumulate for u8 {
    #[inline(always)]
    fn accumulate(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

impl Accumulate for bool {
    #[inline(always)]
    fn accumulate(self, other: Self) -> Self {
        self | other
    }
}

impl Tensor {
    /// Slices of `dim` at the rank-1 `indices`, in their order (torch.index_select).
    pub fn select(&self, dim: isize, indices: &Tensor) -> Result<Tensor> {
        let op = "select";
        indices.expect_kind(op, Kind::Int)?;
        indices.expect_rank(op, 1)?;
        let d = self.dim(op, dim)?;
        let idx = checked_indices(op, indices, d, self.shape()[d])?;
        select_unchecked(op, self, d, &idx)
    }

    /// `select` with indices of any shape, which replace `dim` in the output
    /// shape (numpy.take along an axis).
    pub fn take(&self, dim: isize, indices: &Tensor) -> Result<Tensor> {
        let op = "take";
        indices.expect_kind(op, Kind::Int)?;
        let d = self.dim(op, dim)?;
        let idx = checked_indices(op, indices, d, self.shape()[d])?;
        let picked = select_unchecked(op, self, d, &idx)?;
        let mut shape = self.shape()[..d].to_vec();
        shape.extend_from_slice(indices.shape());
        shape.extend_from_slice(&self.shape()[d + 1..]);
        picked.view(op, Layout::contiguous(&shape))
    }

    /// A copy with `values[.., i, ..]` added into `self[.., indices[i], ..]`
    /// along `dim` (Burn's select_assign, torch's index_add).
    pub fn select_assign(&self, dim: isize, indices: &Tensor, values: &Tensor) -> Result<Tensor> {
        let op = "select_assign";
        indices.expect_kind(op, Kind::Int)?;
        indices.expect_rank(op, 1)?;
        self.expect_same_dtype(op, values)?;
        let d = self.dim(op, dim)?;
        let mut expected = self.shape().to_vec();
        expected[d] = indices.numel();
        if values.shape() != expected.as_slice() {
            return Err(Error::shapes(
                op,
                self.shape(),
                values.shape(),
                format!("the values must have shape {expected:?}: the tensor's shape with dim {d} resized to the {} indices", indices.numel()),
            ));
        }
        let idx = checked_indices(op, indices, d, self.shape()[d])?;
        let (outer, n, inner) = split_at_dim(self.shape(), d);
        self.expect_not_storage_int(op)?;
        with_dtype!(self.dtype(), T => {
            let mut out = self.try_to_vec::<T>(op)?;
            add_rows(&mut out, &contiguous_values::<T>(op, values)?, outer, n, inner, &idx);
            Tensor::from_vec(out, self.shape())
        })
    }

    /// `out[i][j][k] = self[i][indices[i][j][k]][k]` for `dim` 1, and so on
    /// (torch.gather). The output has the indices' shape; along the other
    /// dims the indices may be shorter than self.
    pub fn gather(&self, dim: isize, indices: &Tensor) -> Result<Tensor> {
        let op = "gather";
        indices.expect_kind(op, Kind::Int)?;
        let d = self.dim(op, dim)?;
        check_index_shape(op, self, indices, d)?;
        let idx = checked_indices(op, indices, d, self.shape()[d])?;
        with_dtype!(self.dtype(), T => {
            let out = gather_rows(&contiguous_values::<T>(op, self)?, self.shape(), indices.shape(), d, &idx);
            Tensor::from_vec(out, indices.shape())
        })
    }

    /// A copy with each `values[p]` added at the position of `p` with its
    /// `dim` coordinate replaced by `indices[p]` (Burn's scatter, torch's
    /// scatter_add). `values` may be larger than `indices` along any dim.
    pub fn scatter(&self, dim: isize, indices: &Tensor, values: &Tensor) -> Result<Tensor> {
        let op = "scatter";
        indices.expect_kind(op, Kind::Int)?;
        self.expect_same_dtype(op, values)?;
        let d = self.dim(op, dim)?;
        check_index_shape(op, self, indices, d)?;
        if values.rank() != indices.rank() {
            return Err(Error::shapes(op, indices.shape(), values.shape(), "indices and values must have the same rank"));
        }
        if let Some(e) = (0..indices.rank()).find(|&e| indices.shape()[e] > values.shape()[e]) {
            return Err(Error::shapes(
                op,
                indices.shape(),
                values.shape(),
                format!("indices dim {e} has size {}, larger than the values' {}", indices.shape()[e], values.shape()[e]),
            ));
        }
        let idx = checked_indices(op, indices, d, self.shape()[d])?;
        self.expect_not_storage_int(op)?;
        with_dtype!(self.dtype(), T => {
            let mut out = self.try_to_vec::<T>(op)?;
            let vals = contiguous_values::<T>(op, values)?;
            scatter_rows(&mut out, self.shape(), &vals, values.shape(), indices.shape(), d, &idx);
            Tensor::from_vec(out, self.shape())
        })
    }
}

/// The index values, each checked to lie in `[0, size)` of `dim`.
fn checked_indices<'a>(op: &'static str, indices: &'a Tensor, dim: usize, size: usize) -> Result<Cow<'a, [i64]>> {
    let idx = contiguous_values::<i64>(op, indices)?;
    // A negative index cast to u64 is huge, so one comparison covers both ends.
    if let Some(&index) = idx.iter().find(|&&i| i as u64 >= size as u64) {
        return Err(Error::IndexOutOfBounds { op, index, dim, size });
    }
    Ok(idx)
}

/// For gather and scatter: indices of self's rank, no longer than self
/// along the dims other than `d`.
fn check_index_shape(op: &'static str, t: &Tensor, indices: &Tensor, d: usize) -> Result<()> {
    if indices.rank() != t.rank() {
        return Err(Error::shapes(
            op,
            t.shape(),
            indices.shape(),
            format!("indices have rank {}, the tensor rank {}; they must match", indices.rank(), t.rank()),
        ));
    }
    if let Some(e) = (0..t.rank()).find(|&e| e != d && indices.shape()[e] > t.shape()[e]) {
        return Err(Error::shapes(
            op,
            t.shape(),
            indices.shape(),
            format!("indices dim {e} has size {}, larger than the tensor's {}", indices.shape()[e], t.shape()[e]),
        ));
    }
    Ok(())
}

/// A shape seen as `[outer, shape[d], inner]`.
fn split_at_dim(shape: &[usize], d: usize) -> (usize, usize, usize) {
    (shape[..d].iter().product(), shape[d], shape[d + 1..].iter().product())
}

fn select_unchecked(op: &'static str, t: &Tensor, d: usize, idx: &[i64]) -> Result<Tensor> {
    let (outer, n, inner) = split_at_dim(t.shape(), d);
    let mut shape = t.shape().to_vec();
    shape[d] = idx.len();
    let full = Layout::contiguous(&shape);
    with_dtype!(t.dtype(), T => {
        let out = if t.is_contiguous() || idx.len() >= n {
            select_rows(op, &contiguous_values::<T>(op, t)?, outer, n, inner, idx)?
        } else {
            // Picking fewer slices than the dim holds: walking each picked
            // slice in place beats first copying the whole strided tensor.
            let mut out = try_zeroed(op, full.numel(), T::ZERO)?;
            for (k, &i) in idx.iter().enumerate() {
                let src = t.layout().narrow_step(d, i as usize, 1, 1);
                copy_strided(t.buffer::<T>(), &src, &mut out, &full.narrow_step(d, k, 1, 1));
            }
            out
        };
        Tensor::from_parts(T::wrap_vec(out), full)
    })
}

/// `[outer, n, inner]` -> `[outer, idx.len(), inner]`: whole inner rows are
/// copied (an embedding lookup is one memcpy per token); on the last dim
/// (inner == 1) each outer row is a tight pick loop.
fn select_rows<T: Element>(op: &'static str, src: &[T], outer: usize, n: usize, inner: usize, idx: &[i64]) -> Result<Vec<T>> {
    let m = idx.len();
    let mut out = try_zeroed(op, outer * m * inner, T::ZERO)?;
    if out.is_empty() {
        return Ok(out);
    }
    let par = go_parallel(out.len(), PAR_CHEAP);
    if inner == 1 {
        let pick = |(o, dst): (usize, &mut [T])| {
            let row = &src[o * n..(o + 1) * n];
            dst.iter_mut().zip(idx).for_each(|(v, &i)| *v = row[i as usize]);
        };
        if par {
            out.par_chunks_mut(m).enumerate().for_each(pick);
        } else {
            out.chunks_mut(m).enumerate().for_each(pick);
        }
    } else {
        let copy = |(r, dst): (usize, &mut [T])| {
            let start = ((r / m) * n + idx[r % m] as usize) * inner;
            dst.copy_from_slice(&src[start..start + inner]);
        };
        if par {
            out.par_chunks_mut(inner).enumerate().for_each(copy);
        } else {
            out.chunks_mut(inner).enumerate().for_each(copy);
        }
    }
    Ok(out)
}

/// `dst[o, idx[k], :] += vals[o, k, :]` over `[outer, n, inner]`. Outer
/// blocks are disjoint, so they may run in parallel; within one, repeated
/// indices accumulate in order.
fn add_rows<T: Accumulate>(dst: &mut [T], vals: &[T], outer: usize, n: usize, inner: usize, idx: &[i64]) {
    if vals.is_empty() {
        return;
    }
    let m = idx.len();
    let block = |(d, v): (&mut [T], &[T])| {
        simd(#[inline(always)] || {
            for (k, &i) in idx.iter().enumerate() {
                let row = &mut d[i as usize * inner..(i as usize + 1) * inner];
                row.iter_mut().zip(&v[k * inner..(k + 1) * inner]).for_each(|(a, &b)| *a = a.accumulate(b));
            }
        })
    };
    if outer > 1 && go_parallel(vals.len(), PAR_CHEAP) {
        dst.par_chunks_mut(n * inner).zip(vals.par_chunks(m * inner)).for_each(block);
    } else {
        dst.chunks_mut(n * inner).zip(vals.chunks(m * inner)).for_each(block);
    }
}

/// Buffer offsets of the first element of each last-dim row of `shape`,
/// stepping with `strides` (one per dim of `shape`).
fn row_bases(shape: &[usize], strides: &[usize]) -> Vec<usize> {
    let rows: usize = shape.iter().product();
    let mut bases = Vec::with_capacity(rows);
    let mut index = vec![0usize; shape.len()];
    let mut base = 0usize;
    for _ in 0..rows {
        bases.push(base);
        for e in (0..shape.len()).rev() {
            index[e] += 1;
            base += strides[e];
            if index[e] < shape[e] {
                break;
            }
            base -= strides[e] * shape[e];
            index[e] = 0;
        }
    }
    bases
}

/// Strides of a contiguous `shape` for its leading dims (all but the last),
/// with dim `d` zeroed when `zero_d` so its coordinate comes from the index.
fn outer_strides(shape: &[usize], d: usize, zero_d: bool) -> Vec<usize> {
    let r = shape.len();
    let mut s: Vec<usize> = contiguous_strides(shape)[..r - 1].iter().map(|&v| v as usize).collect();
    if zero_d && d < r - 1 {
        s[d] = 0;
    }
    s
}

/// Gather over rows of the index tensor's last dim. Element `j` of a row
/// reads `base + idx[j] * stride(d) + j * stride(last)`, where the last term
/// vanishes when `d` is the last dim itself (cross-entropy's pick of one
/// class per row).
fn gather_rows<T: Element>(src: &[T], shape: &[usize], ishape: &[usize], d: usize, idx: &[i64]) -> Vec<T> {
    let mut out = vec![T::ZERO; idx.len()];
    if out.is_empty() {
        return out;
    }
    let r = shape.len();
    let len = ishape[r - 1];
    let bases = row_bases(&ishape[..r - 1], &outer_strides(shape, d, true));
    let sd = contiguous_strides(shape)[d] as usize;
    let sj = usize::from(d != r - 1);
    let row = |((dst, ix), &base): ((&mut [T], &[i64]), &usize)| {
        for (j, (v, &i)) in dst.iter_mut().zip(ix).enumerate() {
            *v = src[base + i as usize * sd + j * sj];
        }
    };
    if go_parallel(out.len(), PAR_CHEAP) {
        out.par_chunks_mut(len).zip(idx.par_chunks(len)).zip(bases.par_iter()).for_each(row);
    } else {
        out.chunks_mut(len).zip(idx.chunks(len)).zip(bases.iter()).for_each(row);
    }
    out
}

/// The adding inverse of [`gather_rows`]; sequential because two indices
/// may hit the same element.
fn scatter_rows<T: Accumulate>(
    dst: &mut [T],
    shape: &[usize],
    vals: &[T],
    vshape: &[usize],
    ishape: &[usize],
    d: usize,
    idx: &[i64],
) {
    if idx.is_empty() {
        return;
    }
    let r = shape.len();
    let len = ishape[r - 1];
    let dst_bases = row_bases(&ishape[..r - 1], &outer_strides(shape, d, true));
    let val_bases = row_bases(&ishape[..r - 1], &outer_strides(vshape, d, false));
    let sd = contiguous_strides(shape)[d] as usize;
    let sj = usize::from(d != r - 1);
    for ((ix, &db), &vb) in idx.chunks(len).zip(&dst_bases).zip(&val_bases) {
        for (j, (&i, &v)) in ix.iter().zip(&vals[vb..vb + len]).enumerate() {
            let o = db + i as usize * sd + j * sj;
            dst[o] = dst[o].accumulate(v);
        }
    }
}

/// Gradients of indexing: what was read is scattered back (added) into
/// zeros shaped like the source; what was added is read back.
impl Var {
    pub fn select(&self, dim: isize, indices: &Tensor) -> Result<Var> {
        let y = self.value.select(dim, indices)?;
        let (shape, dtype, idx) = (self.value.shape().to_vec(), self.value.dtype(), indices.clone());
        Ok(record(y, &[self], move || {
            FnBackward::new("select", move |g, _| Ok(vec![Some(Tensor::zeros(&shape, dtype).select_assign(dim, &idx, &g)?)]))
        }))
    }

    pub fn select_assign(&self, dim: isize, indices: &Tensor, values: &Var) -> Result<Var> {
        let y = self.value.select_assign(dim, indices, &values.value)?;
        let idx = indices.clone();
        Ok(record(y, &[self, values], move || {
            FnBackward::new("select_assign", move |g, needs| {
                let gv = if needs[1] { Some(g.select(dim, &idx)?) } else { None };
                Ok(vec![needs[0].then_some(g), gv])
            })
        }))
    }

    pub fn gather(&self, dim: isize, indices: &Tensor) -> Result<Var> {
        let y = self.value.gather(dim, indices)?;
        let (shape, dtype, idx) = (self.value.shape().to_vec(), self.value.dtype(), indices.clone());
        Ok(record(y, &[self], move || {
            FnBackward::new("gather", move |g, _| Ok(vec![Some(Tensor::zeros(&shape, dtype).scatter(dim, &idx, &g)?)]))
        }))
    }

    pub fn scatter(&self, dim: isize, indices: &Tensor, values: &Var) -> Result<Var> {
        let y = self.value.scatter(dim, indices, &values.value)?;
        let (idx, vshape) = (indices.clone(), values.value.shape().to_vec());
        Ok(record(y, &[self, values], move || {
            FnBackward::new("scatter", move |g, needs| {
                let gv = if needs[1] {
                    // Only the part of `values` covered by `indices` was used.
                    let read = g.gather(dim, &idx)?;
                    Some(if read.shape() == vshape.as_slice() {
                        read
                    } else {
                        let specs: Vec<SliceSpec> = read.shape().iter().map(|&n| SliceSpec::range(0, n as isize)).collect();
                        Tensor::zeros(&vshape, g.dtype()).slice_assign(&specs, &read)?
                    })
                } else {
                    None
                };
                Ok(vec![needs[0].then_some(g), gv])
            })
        }))
    }

    pub fn take(&self, dim: isize, indices: &Tensor) -> Result<Var> {
        let y = self.value.take(dim, indices)?;
        let d = self.value.dim("take", dim)?;
        let (shape, dtype) = (self.value.shape().to_vec(), self.value.dtype());
        let flat = indices.reshape(&[-1])?;
        let mut g_shape: Vec<isize> = shape.iter().map(|&s| s as isize).collect();
        g_shape[d] = flat.numel() as isize;
        Ok(record(y, &[self], move || {
            FnBackward::new("take", move |g, _| {
                Ok(vec![Some(Tensor::zeros(&shape, dtype).select_assign(d as isize, &flat, &g.reshape(&g_shape)?)?)])
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, Scalar};

    fn ints(v: &[i64], shape: &[usize]) -> Tensor {
        Tensor::from_vec(v.to_vec(), shape).unwrap()
    }

    fn range(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec((0..n as i64).map(|v| v as f32).collect::<Vec<_>>(), shape).unwrap()
    }

    /// Row-major multi-index of flat position `p` in `shape`.
    fn unravel(mut p: usize, shape: &[usize]) -> Vec<usize> {
        let mut ix = vec![0; shape.len()];
        for e in (0..shape.len()).rev() {
            ix[e] = p % shape[e];
            p /= shape[e];
        }
        ix
    }

    fn at(t: &Tensor, ix: &[usize]) -> f64 {
        t.get(ix).unwrap().to_f64()
    }

    #[test]
    fn select_rows_like_an_embedding() {
        let table = range(&[4, 3]);
        let s = table.select(0, &ints(&[2, 0, 2], &[3])).unwrap();
        assert_eq!(s.shape(), &[3, 3]);
        assert_eq!(s.to_vec::<f32>(), vec![6.0, 7.0, 8.0, 0.0, 1.0, 2.0, 6.0, 7.0, 8.0]);
    }

    #[test]
    fn select_on_the_last_dim_of_a_view() {
        // [3, 4] transposed to [4, 3]: columns 2 then 0 of each row.
        let x = range(&[3, 4]).transpose();
        let s = x.select(-1, &ints(&[2, 0], &[2])).unwrap();
        assert_eq!(s.shape(), &[4, 2]);
        assert_eq!(s.to_vec::<f32>(), vec![8.0, 0.0, 9.0, 1.0, 10.0, 2.0, 11.0, 3.0]);
    }

    #[test]
    fn select_matches_a_naive_reference_on_a_middle_dim() {
        let x = range(&[2, 5, 3]);
        let idx = [4i64, 1, 1, 0];
        let s = x.select(1, &ints(&idx, &[4])).unwrap();
        assert_eq!(s.shape(), &[2, 4, 3]);
        for p in 0..s.numel() {
            let ix = unravel(p, s.shape());
            let src = [ix[0], idx[ix[1]] as usize, ix[2]];
            assert_eq!(at(&s, &ix), at(&x, &src));
        }
        assert_eq!(x.select(1, &ints(&[], &[0])).unwrap().shape(), &[2, 0, 3]);
    }

    #[test]
    fn select_from_strided_views_either_way() {
        // Fewer picks than the dim holds walk the view in place; as many or
        // more go through a contiguous copy. Both must agree with the data.
        let x = range(&[3, 4]).transpose();
        let few = x.select(0, &ints(&[3], &[1])).unwrap();
        assert_eq!(few.to_vec::<f32>(), vec![3.0, 7.0, 11.0]);
        let many = x.select(0, &ints(&[3, 3, 0, 1, 2], &[5])).unwrap();
        assert_eq!(many.shape(), &[5, 3]);
        assert_eq!(many.to_vec::<f32>(), vec![3.0, 7.0, 11.0, 3.0, 7.0, 11.0, 0.0, 4.0, 8.0, 1.0, 5.0, 9.0, 2.0, 6.0, 10.0]);
    }

    #[test]
    fn select_errors() {
        let x = range(&[2, 3]);
        let e = x.select(1, &ints(&[0, 3], &[2])).unwrap_err();
        assert_eq!(e, Error::IndexOutOfBounds { op: "select", index: 3, dim: 1, size: 3 });
        assert_eq!(e.to_string(), "select: index 3 is out of bounds for dim 1 of size 3");
        let e = x.select(0, &ints(&[-1], &[1])).unwrap_err();
        assert_eq!(e, Error::IndexOutOfBounds { op: "select", index: -1, dim: 0, size: 2 });
        assert!(matches!(x.select(0, &range(&[1])), Err(Error::KindMismatch { op: "select", expected: Kind::Int, found: Kind::Float })));
        assert!(matches!(x.select(0, &ints(&[0], &[1, 1])), Err(Error::RankMismatch { op: "select", expected: 1, found: 2, .. })));
        assert!(matches!(x.select(2, &ints(&[0], &[1])), Err(Error::DimOutOfRange { op: "select", dim: 2, rank: 2 })));
    }

    #[test]
    fn take_keeps_the_index_shape() {
        let x = range(&[2, 4]);
        let t = x.take(1, &ints(&[3, 0, 1, 1], &[2, 2])).unwrap();
        assert_eq!(t.shape(), &[2, 2, 2]);
        assert_eq!(t.to_vec::<f32>(), vec![3.0, 0.0, 1.0, 1.0, 7.0, 4.0, 5.0, 5.0]);
        let e = x.take(0, &ints(&[2], &[1])).unwrap_err().to_string();
        assert_eq!(e, "take: index 2 is out of bounds for dim 0 of size 2");
    }

    #[test]
    fn select_assign_adds_with_repeats() {
        let x = Tensor::zeros(&[3, 2], DType::F32);
        let v = Tensor::from_vec(vec![1.0f32, 2.0, 10.0, 20.0, 100.0, 200.0], &[3, 2]).unwrap();
        let y = x.select_assign(0, &ints(&[2, 0, 2], &[3]), &v).unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![10.0, 20.0, 0.0, 0.0, 101.0, 202.0]);
        // Along the last dim of a transposed tensor.
        let x = ints(&[1, 2, 3, 4, 5, 6], &[2, 3]).transpose();
        let v = ints(&[10, 20, 30], &[3, 1]);
        let y = x.select_assign(1, &ints(&[1], &[1]), &v).unwrap();
        assert_eq!(y.to_vec::<i64>(), vec![1, 14, 2, 25, 3, 36]);
    }

    #[test]
    fn select_assign_on_bools_is_or() {
        let x = Tensor::from_vec(vec![true, false, false], &[3]).unwrap();
        let v = Tensor::from_vec(vec![false, true], &[2]).unwrap();
        let y = x.select_assign(0, &ints(&[0, 2], &[2]), &v).unwrap();
        assert_eq!(y.to_vec::<bool>(), vec![true, false, true]);
    }

    #[test]
    fn select_assign_errors() {
        let x = range(&[3, 2]);
        let e = x.select_assign(0, &ints(&[0], &[1]), &range(&[2, 2])).unwrap_err().to_string();
        assert_eq!(
            e,
            "select_assign: incompatible shapes [3, 2] and [2, 2]: the values must have shape [1, 2]: the tensor's shape with dim 0 resized to the 1 indices"
        );
        let e = x.select_assign(0, &ints(&[3], &[1]), &range(&[1, 2])).unwrap_err();
        assert_eq!(e, Error::IndexOutOfBounds { op: "select_assign", index: 3, dim: 0, size: 3 });
        assert!(matches!(x.select_assign(0, &ints(&[0], &[1]), &ints(&[0, 0], &[1, 2])), Err(Error::DTypeMismatch { .. })));
    }

    #[test]
    fn gather_picks_one_class_per_row() {
        let logits = range(&[3, 4]);
        let g = logits.gather(1, &ints(&[3, 0, 2], &[3, 1])).unwrap();
        assert_eq!(g.shape(), &[3, 1]);
        assert_eq!(g.to_vec::<f32>(), vec![3.0, 4.0, 10.0]);
    }

    #[test]
    fn gather_matches_a_naive_reference() {
        // Every dim of a [3, 4, 2] source (a transposed view), with index
        // tensors shorter than the source along the other dims.
        let x = range(&[2, 4, 3]).permute(&[2, 1, 0]).unwrap();
        assert_eq!(x.shape(), &[3, 4, 2]);
        for d in 0..3 {
            let mut ishape = vec![2usize, 3, 2];
            ishape[d] = 5;
            let n: usize = ishape.iter().product();
            let size = x.shape()[d] as i64;
            let vals: Vec<i64> = (0..n as i64).map(|p| (p * 7 + 3) % size).collect();
            let idx = ints(&vals, &ishape);
            let g = x.gather(d as isize - 3, &idx).unwrap();
            assert_eq!(g.shape(), ishape.as_slice());
            for (p, &k) in vals.iter().enumerate() {
                let ix = unravel(p, &ishape);
                let mut src = ix.clone();
                src[d] = k as usize;
                assert_eq!(at(&g, &ix), at(&x, &src), "dim {d} position {ix:?}");
            }
        }
    }

    #[test]
    fn gather_errors() {
        let x = range(&[2, 3]);
        let e = x.gather(1, &ints(&[0, 1, 2], &[3])).unwrap_err().to_string();
        assert_eq!(e, "gather: incompatible shapes [2, 3] and [3]: indices have rank 1, the tensor rank 2; they must match");
        let e = x.gather(1, &ints(&[0, 1, 2], &[3, 1])).unwrap_err().to_string();
        assert_eq!(e, "gather: incompatible shapes [2, 3] and [3, 1]: indices dim 0 has size 3, larger than the tensor's 2");
        let e = x.gather(0, &ints(&[0, 2], &[1, 2])).unwrap_err();
        assert_eq!(e, Error::IndexOutOfBounds { op: "gather", index: 2, dim: 0, size: 2 });
        assert_eq!(x.gather(0, &ints(&[], &[0, 3])).unwrap().shape(), &[0, 3]);
    }

    #[test]
    fn scatter_adds_like_torch_scatter_add() {
        // torch.zeros(3, 5).scatter_add(0, [[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]], ones(2, 5))
        let x = Tensor::zeros(&[3, 5], DType::I64);
        let idx = ints(&[0, 1, 2, 0, 0, 2, 0, 0, 1, 2], &[2, 5]);
        let v = Tensor::ones(&[2, 5], DType::I64);
        let y = x.scatter(0, &idx, &v).unwrap();
        assert_eq!(y.to_vec::<i64>(), vec![1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn scatter_matches_a_naive_reference() {
        let x = range(&[3, 4, 2]).transpose();
        let v = range(&[3, 5, 4]).binary_scalar(crate::ops::binary::BinaryOp::Mul, Scalar::Float(10.0)).unwrap();
        for d in 0..3 {
            let ishape = [2usize, 2, 2];
            let size = x.shape()[d] as i64;
            let vals: Vec<i64> = (0..8).map(|p| (p * 5 + 1) % size).collect();
            let y = x.scatter(d as isize, &ints(&vals, &ishape), &v).unwrap();
            let mut expect = x.to_vec::<f32>();
            for (p, &k) in vals.iter().enumerate() {
                let ix = unravel(p, &ishape);
                let mut dst = ix.clone();
                dst[d] = k as usize;
                let o = dst[0] * 8 + dst[1] * 4 + dst[2];
                expect[o] += at(&v, &ix) as f32;
            }
            assert_eq!(y.to_vec::<f32>(), expect, "dim {d}");
        }
    }

    #[test]
    fn scatter_errors() {
        let x = range(&[2, 3]);
        let e = x.scatter(1, &ints(&[0, 1], &[1, 2]), &range(&[1, 1])).unwrap_err().to_string();
        assert_eq!(e, "scatter: incompatible shapes [1, 2] and [1, 1]: indices dim 1 has size 2, larger than the values' 1");
        let e = x.scatter(1, &ints(&[0, 1], &[1, 2]), &range(&[2])).unwrap_err().to_string();
        assert_eq!(e, "scatter: incompatible shapes [1, 2] and [2]: indices and values must have the same rank");
        let e = x.scatter(1, &ints(&[0, -2], &[1, 2]), &range(&[1, 2])).unwrap_err();
        assert_eq!(e, Error::IndexOutOfBounds { op: "scatter", index: -2, dim: 1, size: 3 });
        let b = Tensor::from_vec(vec![false, false], &[2]).unwrap();
        let y = b.scatter(0, &ints(&[1, 1], &[2]), &Tensor::from_vec(vec![true, false], &[2]).unwrap()).unwrap();
        assert_eq!(y.to_vec::<bool>(), vec![false, true]);
    }
}
