//! Walking strided layouts row by row: the outer dims with a counter, the
//! innermost dim as a tight loop the compiler can vectorise.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::try_with_capacity;

/// Copy the elements of a strided view into a row-major vector. A broadcast
/// view can have far more elements than memory: that is an error naming `op`
/// and the view's shape, checked before anything is allocated.
pub fn gather_strided<T: Element>(op: &'static str, buf: &[T], layout: &Layout) -> Result<Vec<T>> {
    let mut out = try_with_capacity(op, layout.numel()).map_err(|e| match e {
        Error::InvalidArgument { op, reason } => Error::invalid(op, format!("materialising a view of shape {:?}: {reason}", layout.shape)),
        e => e,
    })?;
    for_each_row(layout, |start, stride, len| {
        if stride == 1 {
            out.extend_from_slice(&buf[start..start + len]);
        } else {
            let mut off = start as isize;
            for _ in 0..len {
                out.push(buf[off as usize]);
                off += stride;
            }
        }
    });
    Ok(out)
}

/// Call `f(start, stride, len)` for each innermost row of `layout`, in
/// row-major order. Rank 0 is one row of one element.
pub fn for_each_row(layout: &Layout, mut f: impl FnMut(usize, isize, usize)) {
    let rank = layout.rank();
    if layout.numel() == 0 {
        return;
    }
    if rank == 0 {
        f(layout.offset, 1, 1);
        return;
    }
    let len = layout.shape[rank - 1];
    let stride = layout.strides[rank - 1];
    let outer = &layout.shape[..rank - 1];
    let mut index = vec![0usize; rank - 1];
    let mut off = layout.offset as isize;
    loop {
        f(off as usize, stride, len);
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            off += layout.strides[d];
            if index[d] < outer[d] {
                break;
            }
            off -= layout.strides[d] * outer[d] as isize;
            index[d] = 0;
        }
    }
}

/// Like [`for_each_row`] over two layouts of the same shape at once, also
/// passing the row's index in row-major output order.
pub fn for_each_row2(a: &Layout, b: &Layout, mut f: impl FnMut(usize, (usize, isize), (usize, isize), usize)) {
    debug_assert_eq!(a.shape, b.shape);
    let rank = a.rank();
    if a.numel() == 0 {
        return;
    }
    if rank == 0 {
        f(0, (a.offset, 1), (b.offset, 1), 1);
        return;
    }
    let len = a.shape[rank - 1];
    let (sa, sb) = (a.strides[rank - 1], b.strides[rank - 1]);
    let outer = &a.shape[..rank - 1];
    let mut index = vec![0usize; rank - 1];
    let (mut oa, mut ob) = (a.offset as isize, b.offset as isize);
    let mut out = 0usize;
    loop {
        f(out, (oa as usize, sa), (ob as usize, sb), len);
        out += len;
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            oa += a.strides[d];
            ob += b.strides[d];
            if index[d] < outer[d] {
                break;
            }
            oa -= a.strides[d] * outer[d] as isize;
            ob -= b.strides[d] * outer[d] as isize;
            index[d] = 0;
        }
    }
}
