//! Copying between strided views: a source view into a region of a
//! destination buffer, or a value into a region. Dims that are contiguous
//! with each other in both layouts are merged first, so rows are as long as
//! possible and each one moves with one `copy_from_slice` (a memcpy).

use std::borrow::Cow;

use super::strided::{for_each_row, for_each_row2};
use crate::element::Element;
use crate::error::Result;
use crate::layout::{DimVec, Layout};
use crate::tensor::Tensor;

/// The elements in row-major order, borrowed when already contiguous; an
/// error naming `op` when a view's copy does not fit in memory. A storage
/// dtype read as its compute dtype is converted (see [`Tensor::try_to_vec`]).
pub fn contiguous_values<'a, T: Element>(op: &'static str, t: &'a Tensor) -> Result<Cow<'a, [T]>> {
    Ok(match t.as_slice::<T>() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(t.try_to_vec::<T>(op)?),
    })
}

/// Merge adjacent dims that step through both layouts as one (and drop
/// size-1 dims). Both layouts must have the same shape and no zero-size dim.
fn coalesce(a: &Layout, b: &Layout) -> (Layout, Layout) {
    let mut shape: DimVec<usize> = DimVec::new();
    let (mut sa, mut sb): (DimVec<isize>, DimVec<isize>) = (DimVec::new(), DimVec::new());
    for d in 0..a.rank() {
        let n = a.shape[d];
        if n == 1 {
            continue;
        }
        let (da, db) = (a.strides[d], b.strides[d]);
        if let (Some(last), Some(la), Some(lb)) = (shape.last_mut(), sa.last_mut(), sb.last_mut()) {
            if *la == da * n as isize && *lb == db * n as isize {
                *last *= n;
                *la = da;
                *lb = db;
                continue;
            }
        }
        shape.push(n);
        sa.push(da);
        sb.push(db);
    }
    if shape.is_empty() {
        shape.push(1);
        sa.push(1);
        sb.push(1);
    }
    (
        Layout { shape: shape.clone(), strides: sa, offset: a.offset },
        Layout { shape, strides: sb, offset: b.offset },
    )
}

/// Copy the view `src_layout` of `src` into the view `dst_layout` of `dst`
/// (same shape). The destination view must not overlap itself.
pub fn copy_strided<T: Element>(src: &[T], src_layout: &Layout, dst: &mut [T], dst_layout: &Layout) {
    debug_assert_eq!(src_layout.shape, dst_layout.shape);
    if src_layout.numel() == 0 {
        return;
    }
    let (ls, ld) = coalesce(src_layout, dst_layout);
    for_each_row2(&ls, &ld, |_, (os, ss), (od, sd), len| {
        if ss == 1 && sd == 1 {
            dst[od..od + len].copy_from_slice(&src[os..os + len]);
        } else {
            let (mut i, mut o) = (os as isize, od as isize);
            for _ in 0..len {
                dst[o as usize] = src[i as usize];
                i += ss;
                o += sd;
            }
        }
    });
}

/// Set every element of the view `layout` of `dst` to `value`.
pub fn fill_strided<T: Element>(dst: &mut [T], layout: &Layout, value: T) {
    if layout.numel() == 0 {
        return;
    }
    let (l, _) = coalesce(layout, layout);
    for_each_row(&l, |start, stride, len| {
        if stride == 1 {
            dst[start..start + len].fill(value);
        } else {
            let mut o = start as isize;
            for _ in 0..len {
                dst[o as usize] = value;
                o += stride;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_region_is_one_row() {
        let (a, _) = coalesce(&Layout::contiguous(&[2, 3, 4]), &Layout::contiguous(&[2, 3, 4]));
        assert_eq!(a.shape(), [24]);
        let dst = Layout::contiguous(&[2, 5]).narrow_step(1, 1, 3, 1);
        let (a, b) = coalesce(&Layout::contiguous(&[2, 3]), &dst);
        assert_eq!((a.shape(), b.strides()), (&[2, 3][..], &[5, 1][..]));
    }

    #[test]
    fn copies_a_transposed_view_into_a_region() {
        let src: Vec<i64> = (0..6).collect();
        let sl = Layout::contiguous(&[2, 3]).transpose(0, 1);
        let mut dst = vec![0i64; 12];
        let dl = Layout::contiguous(&[4, 3]).narrow_step(0, 1, 3, 1).narrow_step(1, 1, 2, 1);
        copy_strided(&src, &sl, &mut dst, &dl);
        assert_eq!(dst, vec![0, 0, 0, 0, 0, 3, 0, 1, 4, 0, 2, 5]);
    }

    #[test]
    fn fills_a_reversed_strided_region() {
        let mut dst = vec![0i64; 6];
        let l = Layout::contiguous(&[6]).narrow_step(0, 5, 3, -2);
        fill_strided(&mut dst, &l, 7);
        assert_eq!(dst, vec![0, 7, 0, 7, 0, 7]);
    }

    #[test]
    fn size_one_and_empty_views() {
        let mut dst = vec![0i64; 2];
        copy_strided(&[5i64], &Layout::contiguous(&[1, 1]), &mut dst, &Layout::contiguous(&[1, 1]));
        assert_eq!(dst, vec![5, 0]);
        copy_strided(&[] as &[i64], &Layout::contiguous(&[0, 3]), &mut dst, &Layout::contiguous(&[0, 3]));
        fill_strided(&mut dst, &Layout::contiguous(&[]), 9);
        assert_eq!(dst, vec![9, 0]);
    }
}
