//! Element-wise loops: unary maps and broadcasting binary zips. Contiguous
//! inputs take a flat SIMD loop, large ones split across threads, and an input
//! whose buffer is uniquely owned is overwritten instead of allocating.

use std::mem::MaybeUninit;

use super::alloc::new_filled;
use super::parallel::{go_parallel, simd, CHUNK};
use super::strided::for_each_row2;
use super::team::for_each_chunk_mut;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::Result;
use crate::layout::Layout;
use crate::shape::broadcast_shape;
use crate::tensor::Tensor;

/// Write `f(x)` for each `x` of `src` into `dst` (same length): every
/// element of `dst` is written.
#[inline(always)]
fn map_into<T: Element, U: Element>(src: &[T], dst: &mut [MaybeUninit<U>], gate: usize, f: &(impl Fn(T) -> U + Sync)) {
    if go_parallel(src.len(), gate) {
        for_each_chunk_mut(dst, CHUNK, |i, d| {
            let s = &src[i * CHUNK..][..d.len()];
            simd(#[inline(always)] || map_slice(d, s, f))
        });
    } else {
        simd(#[inline(always)] || map_slice(dst, src, f));
    }
}

// The loops below are `for` loops, not `for_each`: `for_each` on a zip goes
// through `Zip::fold`, which LLVM left out of line for a costly `f` (GELU's
// erfc), so the loop ran as baseline SSE2 code instead of inside `simd`'s
// AVX function.

#[inline(always)]
fn map_slice<T: Element, U: Element>(dst: &mut [MaybeUninit<U>], src: &[T], f: &impl Fn(T) -> U) {
    for (o, &x) in dst.iter_mut().zip(src) {
        o.write(f(x));
    }
}

#[inline(always)]
fn map_slice_in_place<T: Element>(buf: &mut [T], f: &impl Fn(T) -> T) {
    for x in buf.iter_mut() {
        *x = f(*x);
    }
}

#[inline(always)]
fn zip_slice_in_place<T: Element>(dst: &mut [T], src: &[T], f: &impl Fn(T, T) -> T) {
    for (x, &y) in dst.iter_mut().zip(src) {
        *x = f(*x, y);
    }
}

#[inline(always)]
fn map_in_place<T: Element>(buf: &mut [T], gate: usize, f: &(impl Fn(T) -> T + Sync)) {
    if go_parallel(buf.len(), gate) {
        for_each_chunk_mut(buf, CHUNK, |_, d| simd(#[inline(always)] || map_slice_in_place(d, f)));
    } else {
        simd(#[inline(always)] || map_slice_in_place(buf, f));
    }
}

/// `f` applied to every element, into a new tensor of another dtype, or an
/// error naming `op` when the output (or the copy of a view) cannot be
/// allocated.
pub fn map<T: Element, U: Element>(op: &'static str, x: &Tensor, gate: usize, f: impl Fn(T) -> U + Sync) -> Result<Tensor> {
    let src_owned;
    let src: &[T] = match x.as_slice::<T>() {
        Some(s) => s,
        None => {
            src_owned = x.try_to_vec::<T>(op)?;
            &src_owned
        }
    };
    // SAFETY: map_into writes every element.
    let out = unsafe { new_filled(op, src.len(), |out| map_into(src, out, gate, &f))? };
    Tensor::from_vec(out, x.shape())
}

/// `f` applied to every element, keeping the dtype; writes in place when the
/// tensor owns its buffer alone.
pub fn map_same<T: Element>(op: &'static str, mut x: Tensor, gate: usize, f: impl Fn(T) -> T + Sync) -> Result<Tensor> {
    if let Some(buf) = x.try_mut_slice::<T>() {
        map_in_place(buf, gate, &f);
        return Ok(x);
    }
    map(op, &x, gate, f)
}

/// A unary op's operand: owned, so the result may take over its buffer when
/// nothing else holds it, or borrowed, so the result gets a new one (without
/// cloning the operand first).
pub trait Operand {
    fn dtype(&self) -> DType;
    fn map<T: Element>(self, op: &'static str, gate: usize, f: impl Fn(T) -> T + Sync) -> Result<Tensor>;
}

impl Operand for Tensor {
    fn dtype(&self) -> DType {
        Tensor::dtype(self)
    }
    fn map<T: Element>(self, op: &'static str, gate: usize, f: impl Fn(T) -> T + Sync) -> Result<Tensor> {
        map_same(op, self, gate, f)
    }
}

impl Operand for &Tensor {
    fn dtype(&self) -> DType {
        Tensor::dtype(self)
    }
    fn map<T: Element>(self, op: &'static str, gate: usize, f: impl Fn(T) -> T + Sync) -> Result<Tensor> {
        map(op, self, gate, f)
    }
}

/// A binary op's two operands: owned, so the result may take over a buffer
/// held by nothing else, or borrowed, so the result gets a new one (without
/// cloning the operands first, which costs more than a tiny op).
pub trait Operands {
    fn zip<T: Element>(self, op: &'static str, gate: usize, f: impl Fn(T, T) -> T + Sync) -> Result<Tensor>;
}

impl Operands for (Tensor, Tensor) {
    fn zip<T: Element>(self, op: &'static str, gate: usize, f: impl Fn(T, T) -> T + Sync) -> Result<Tensor> {
        zip_same(op, self.0, self.1, gate, f)
    }
}

impl Operands for (&Tensor, &Tensor) {
    fn zip<T: Element>(self, op: &'static str, gate: usize, f: impl Fn(T, T) -> T + Sync) -> Result<Tensor> {
        zip(op, self.0, self.1, gate, f)
    }
}

/// `f(a, b)` with broadcasting, into a new tensor of dtype `U`.
pub fn zip<T: Element, U: Element>(
    op: &'static str,
    a: &Tensor,
    b: &Tensor,
    gate: usize,
    f: impl Fn(T, T) -> U + Sync,
) -> Result<Tensor> {
    if a.shape() == b.shape() {
        if let (Some(sa), Some(sb)) = (a.as_slice::<T>(), b.as_slice::<T>()) {
            return zip_flat(op, sa, sb, a.shape(), gate, &f);
        }
    }
    let shape = broadcast_shape(op, a.shape(), b.shape())?;
    let n: usize = shape.iter().product();
    // The general (strided) walk needs both layouts broadcast to the output
    // shape; the flat fast paths do not, and tiny ops skip building them.
    let layouts = if has_fast_path::<T>(a, b, &shape) {
        None
    } else {
        Some((a.layout().broadcast_to("broadcast", &shape)?, b.layout().broadcast_to("broadcast", &shape)?))
    };
    // SAFETY: zip_into writes every element of the output.
    let out = unsafe { new_filled(op, n, |out| zip_into(a, b, layouts.as_ref(), &shape, out, gate, &f))? };
    Tensor::from_vec(out, &shape)
}

/// `f(a, b)` with broadcasting, keeping the dtype; reuses `a`'s (or `b`'s)
/// buffer when it is uniquely owned and already has the output's shape.
pub fn zip_same<T: Element>(
    op: &'static str,
    mut a: Tensor,
    mut b: Tensor,
    gate: usize,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Tensor> {
    // Two contiguous operands of one shape, the common case, go straight to
    // the flat loop: for tiny tensors the checks below cost more than the op.
    if a.shape() == b.shape() {
        if let Some(sb) = b.as_slice::<T>() {
            if let Some(da) = a.try_mut_slice::<T>() {
                zip_in_place(da, sb, gate, &f);
                return Ok(a);
            }
            if let Some(sa) = a.as_slice::<T>() {
                return zip_flat(op, sa, sb, a.shape(), gate, &f);
            }
        }
    }
    let shape = broadcast_shape(op, a.shape(), b.shape())?;
    if b.shape() == shape.as_slice() && a.numel() == 1 {
        let av = a.buffer::<T>()[a.layout().offset];
        if let Some(db) = b.try_mut_slice::<T>() {
            map_in_place(db, gate, &|y| f(av, y));
            return Ok(b);
        }
    }
    if a.shape() == shape.as_slice() && b.numel() == 1 {
        let bv = b.buffer::<T>()[b.layout().offset];
        if let Some(da) = a.try_mut_slice::<T>() {
            map_in_place(da, gate, &|x| f(x, bv));
            return Ok(a);
        }
        return map(op, &a, gate, |x| f(x, bv));
    }
    zip(op, &a, &b, gate, f)
}

#[inline(always)]
fn zip_in_place<T: Element>(dst: &mut [T], src: &[T], gate: usize, f: &(impl Fn(T, T) -> T + Sync)) {
    if go_parallel(dst.len(), gate) {
        for_each_chunk_mut(dst, CHUNK, |i, d| {
            let s = &src[i * CHUNK..][..d.len()];
            simd(#[inline(always)] || zip_slice_in_place(d, s, f))
        });
    } else {
        simd(#[inline(always)] || zip_slice_in_place(dst, src, f));
    }
}

/// Whether [`zip_into`] takes a flat path: same-shape contiguous operands,
/// or one single value and one contiguous operand of the output's shape.
fn has_fast_path<T: Element>(a: &Tensor, b: &Tensor, shape: &[usize]) -> bool {
    let flat = |t: &Tensor| t.shape() == shape && t.as_slice::<T>().is_some();
    (flat(a) && flat(b)) || (b.numel() == 1 && flat(a)) || (a.numel() == 1 && flat(b))
}

/// `f(a[i], b[i])` of two contiguous operands of one `shape`, into a new tensor.
fn zip_flat<T: Element, U: Element>(op: &'static str, sa: &[T], sb: &[T], shape: &[usize], gate: usize, f: &(impl Fn(T, T) -> U + Sync)) -> Result<Tensor> {
    // SAFETY: zip3_flat writes every element of the output.
    let out = unsafe { new_filled(op, sa.len(), |out| zip3_flat(out, sa, sb, gate, f))? };
    Tensor::from_vec(out, shape)
}

/// `out[i] = f(a[i], b[i])` over equal-length slices, split between threads
/// above `gate` elements.
#[inline(always)]
fn zip3_flat<T: Element, U: Element>(out: &mut [MaybeUninit<U>], sa: &[T], sb: &[T], gate: usize, f: &(impl Fn(T, T) -> U + Sync)) {
    if go_parallel(out.len(), gate) {
        for_each_chunk_mut(out, CHUNK, |i, o| {
            let (x, y) = (&sa[i * CHUNK..][..o.len()], &sb[i * CHUNK..][..o.len()]);
            simd(#[inline(always)] || zip3(o, x, y, f))
        });
    } else {
        simd(#[inline(always)] || zip3(out, sa, sb, f));
    }
}

/// Write `f(a, b)` into every element of `out`. `layouts` are the operands'
/// layouts broadcast to `shape`, given whenever no flat path applies.
fn zip_into<T: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    layouts: Option<&(Layout, Layout)>,
    shape: &[usize],
    out: &mut [MaybeUninit<U>],
    gate: usize,
    f: &(impl Fn(T, T) -> U + Sync),
) {
    let (ba, bb) = (a.buffer::<T>(), b.buffer::<T>());
    // Fast paths: same-shape contiguous operands, or one single value.
    if a.shape() == shape && b.shape() == shape {
        if let (Some(sa), Some(sb)) = (a.as_slice::<T>(), b.as_slice::<T>()) {
            zip3_flat(out, sa, sb, gate, f);
            return;
        }
    }
    if b.numel() == 1 && a.shape() == shape {
        if let Some(sa) = a.as_slice::<T>() {
            let y = bb[b.layout().offset];
            map_into(sa, out, gate, &|x| f(x, y));
            return;
        }
    }
    if a.numel() == 1 && b.shape() == shape {
        if let Some(sb) = b.as_slice::<T>() {
            let x = ba[a.layout().offset];
            map_into(sb, out, gate, &|y| f(x, y));
            return;
        }
    }
    // General case: broadcast both layouts to the output shape (stride 0 on
    // stretched dims) and walk rows.
    let (la, lb) = layouts.expect("zip: broadcast layouts are built whenever no flat path applies");
    simd(#[inline(always)] || {
        for_each_row2(la, lb, |o, (oa, sa), (ob, sb), len| {
            let dst = &mut out[o..o + len];
            match (sa, sb) {
                (1, 1) => zip3(dst, &ba[oa..oa + len], &bb[ob..ob + len], f),
                (1, 0) => {
                    let y = bb[ob];
                    dst.iter_mut().zip(&ba[oa..oa + len]).for_each(|(d, &x)| {
                        d.write(f(x, y));
                    });
                }
                (0, 1) => {
                    let x = ba[oa];
                    dst.iter_mut().zip(&bb[ob..ob + len]).for_each(|(d, &y)| {
                        d.write(f(x, y));
                    });
                }
                _ => {
                    let (mut ia, mut ib) = (oa as isize, ob as isize);
                    for d in dst.iter_mut() {
                        d.write(f(ba[ia as usize], bb[ib as usize]));
                        ia += sa;
                        ib += sb;
                    }
                }
            }
        })
    });
}

#[inline(always)]
fn zip3<T: Element, U: Element>(out: &mut [MaybeUninit<U>], a: &[T], b: &[T], f: &impl Fn(T, T) -> U) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        o.write(f(x, y));
    }
}
