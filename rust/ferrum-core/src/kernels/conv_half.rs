//! bf16 and f16 convolutions on the half-precision GEMM: forward, input
//! gradient, weight gradient and bias gradient of a 2-D grouped
//! convolution (1-D as height 1, transposed convolutions with the roles
//! swapped, as in `conv.rs`).
//!
//! The operands stay in their half format: im2col copies two bytes a value
//! and the products run on `gemm_half` (bf16 on AMX tiles or `vdpbf16ps`
//! where the CPU has them), which sums in f32 and rounds each result once.
//! Where a value is the sum of several products, those sums meet in f32 and
//! are rounded once at the end: the input gradient's overlapping windows
//! (col2im), the weight gradient's images and bands, the bias gradient's
//! positions, and the forward's bias (added by the GEMM itself, which adds
//! onto a destination before rounding). So widening to f32 and back, which
//! the half convolutions did before, is never needed, and the results are
//! those of an f32 convolution of the same values up to the rounding of
//! each GEMM product to the half format.

use std::cell::RefCell;

use half::{bf16, f16};

use super::conv_batch::{batch_parallel, batch_sum, flops, PAR_CONV_FLOPS};
use super::gemm::{Dims, GemmElement, Mat};
use super::gemm_half::HalfFloat;
use super::im2col::{col2im, im2col, ConvGeom};
use super::team;
use crate::element::Element;
use crate::error::Result;
use crate::interrupt;
use crate::shape::ensure_fits;

/// Elements of one band of the im2col matrix (as `conv.rs`): the band stays
/// in L2 while the GEMM streams over it.
const BAND_ELEMS: usize = 1 << 16;

/// A thread's buffers: an im2col band in the half format, and two f32
/// buffers (a widened band, and the f32 sums of one group's planes).
#[derive(Default)]
pub(crate) struct Scratch<T> {
    col: Vec<T>,
    wide: Vec<f32>,
    sums: Vec<f32>,
}

/// The half floats these convolutions run on.
pub(crate) trait HalfConv: Element + GemmElement + HalfFloat {
    /// Run `f` with this thread's buffers, kept between calls so a training
    /// loop does not allocate (and page in) fresh ones per image.
    fn with_scratch<R>(f: impl FnOnce(&mut Scratch<Self>) -> R) -> R;
}

macro_rules! half_conv {
    ($t:ty, $scratch:ident) => {
        thread_local! {
            static $scratch: RefCell<Scratch<$t>> = RefCell::new(Scratch::default());
        }

        impl HalfConv for $t {
            fn with_scratch<R>(f: impl FnOnce(&mut Scratch<Self>) -> R) -> R {
                $scratch.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut s) => f(&mut s),
                    // Re-entered on this thread (a worker that took another
                    // convolution's part while waiting): buffers of its own.
                    Err(_) => f(&mut Scratch::default()),
                })
            }
        }
    };
}

half_conv!(bf16, SCRATCH_BF16);
half_conv!(f16, SCRATCH_F16);

/// The first `n` elements of `buf`, grown when shorter (what an earlier
/// call left there is overwritten before it is read).
fn sized<T: Copy>(buf: &mut Vec<T>, n: usize, zero: T) -> &mut [T] {
    if buf.len() < n {
        buf.resize(n, zero);
    }
    &mut buf[..n]
}

/// Output rows per band, so that a band's im2col matrix holds about
/// [`BAND_ELEMS`] values.
fn band_rows(g: &ConvGeom) -> usize {
    (BAND_ELEMS / (g.k() * g.ow).max(1)).clamp(1, g.oh.max(1))
}

fn bands(g: &ConvGeom) -> impl Iterator<Item = std::ops::Range<usize>> {
    let (step, oh) = (band_rows(g), g.oh);
    (0..oh).step_by(step).map(move |r| r..(r + step).min(oh))
}

/// Fail unless an output of `n` values and the buffers of one image fit in
/// memory (they are allocated where no error can be returned).
fn ensure_buffers_fit<T>(op: &'static str, n: usize, g: &ConvGeom) -> Result<()> {
    ensure_fits::<T>(op, n)?;
    let band = g.k().saturating_mul(band_rows(g)).saturating_mul(g.ow);
    ensure_fits::<T>(op, band)?;
    ensure_fits::<f32>(op, band.saturating_add(g.cg().saturating_mul(g.hw())))
}

/// Run `f(image, out_chunk, scratch, gemm_threads)` for each image, where
/// `out_chunk` is that image's `per`-value slice of `out`: images spread
/// over the threads when the batch can feed them, else each GEMM threads.
fn per_image<T: HalfConv>(out: &mut [T], per: usize, g: &ConvGeom, f: impl Fn(usize, &mut [T], &mut Scratch<T>, bool) + Sync + Send) {
    if per == 0 {
        return;
    }
    if batch_parallel(g) {
        team::for_each_chunk_mut(out, per, |i, o| T::with_scratch(|s| f(i, o, s, false)));
    } else {
        let threads = flops(g) >= PAR_CONV_FLOPS;
        T::with_scratch(|s| out.chunks_mut(per).enumerate().for_each(|(i, o)| f(i, o, s, threads)));
    }
}

/// `y = conv(x, w) + bias` in `T`: `x` `[batch, c_in, h, w]`, `w`
/// `[c_out, cg, kh, kw]`, the result `[batch, c_out, oh, ow]`. The caller
/// has checked the buffers' lengths against `g`.
pub(crate) fn forward<T: HalfConv>(op: &'static str, x: &[T], w: &[T], bias: Option<&[T]>, g: &ConvGeom) -> Result<Vec<T>> {
    ensure_buffers_fit::<T>(op, g.batch * g.c_out * g.p(), g)?;
    let (k, p, og, cg, hw) = (g.k(), g.p(), g.og(), g.cg(), g.hw());
    let mut y = vec![T::ZERO; g.batch * g.c_out * p];
    let xs = g.c_in * hw;
    per_image(&mut y, g.c_out * p, g, |i, yi, s, threads| {
        // The bias first: the GEMM adds its f32 sums onto it and rounds once.
        if let Some(b) = bias {
            for (plane, &bo) in yi.chunks_mut(p).zip(b) {
                plane.fill(bo);
            }
        }
        let add = bias.is_some();
        let xi = &x[i * xs..(i + 1) * xs];
        for grp in 0..g.groups {
            let xg = &xi[grp * cg * hw..(grp + 1) * cg * hw];
            let yg = &mut yi[grp * og * p..(grp + 1) * og * p];
            let wm = Mat { offset: grp * og * k, rs: k as isize, cs: 1 };
            if g.is_pointwise() {
                let xm = Mat { offset: 0, rs: p as isize, cs: 1 };
                T::gemm_into(yg, p, add, w, wm, xg, xm, Dims { m: og, k, n: p }, threads);
                continue;
            }
            for rows in bands(g) {
                if interrupt::poll() {
                    return;
                }
                let np = rows.len() * g.ow;
                let col = sized(&mut s.col, k * np, T::ZERO);
                im2col(xg, g, rows.clone(), col);
                let cm = Mat { offset: 0, rs: np as isize, cs: 1 };
                T::gemm_into(&mut yg[rows.start * g.ow..], p, add, w, wm, col, cm, Dims { m: og, k, n: np }, threads);
            }
        }
    });
    Ok(y)
}

/// Gradient of `conv(x, w)` with respect to `x` from the output gradient
/// `gy` (`[batch, c_out, oh, ow]`), plus `bias` per input channel when given
/// (the forward of a transposed convolution): `w^T @ gy` per group, added
/// back onto the image in f32 by col2im and rounded once.
pub(crate) fn backward_input<T: HalfConv>(op: &'static str, gy: &[T], w: &[T], bias: Option<&[T]>, g: &ConvGeom) -> Result<Vec<T>> {
    ensure_buffers_fit::<T>(op, g.batch * g.c_in * g.hw(), g)?;
    let (k, p, og, cg, hw) = (g.k(), g.p(), g.og(), g.cg(), g.hw());
    let mut gx = vec![T::ZERO; g.batch * g.c_in * hw];
    let ys = g.c_out * p;
    per_image(&mut gx, g.c_in * hw, g, |i, gxi, s, threads| {
        let gyi = &gy[i * ys..(i + 1) * ys];
        for grp in 0..g.groups {
            let gxg = &mut gxi[grp * cg * hw..(grp + 1) * cg * hw];
            let wt = Mat { offset: grp * og * k, rs: 1, cs: k as isize };
            if g.is_pointwise() {
                // One product per value: the GEMM's single rounding, onto the bias.
                if let Some(b) = bias {
                    for (plane, &bo) in gxg.chunks_mut(hw).zip(&b[grp * cg..]) {
                        plane.fill(bo);
                    }
                }
                let gm = Mat { offset: grp * og * p, rs: p as isize, cs: 1 };
                T::gemm_into(gxg, p, bias.is_some(), w, wt, gyi, gm, Dims { m: k, k: og, n: p }, threads);
                continue;
            }
            let sums = sized(&mut s.sums, cg * hw, 0.0);
            match bias {
                Some(b) => sums.chunks_mut(hw).zip(&b[grp * cg..]).for_each(|(plane, bo)| plane.fill(bo.widen())),
                None => sums.fill(0.0),
            }
            for rows in bands(g) {
                if interrupt::poll() {
                    return;
                }
                let np = rows.len() * g.ow;
                let col = sized(&mut s.col, k * np, T::ZERO);
                let gm = Mat { offset: grp * og * p + rows.start * g.ow, rs: p as isize, cs: 1 };
                T::gemm_into(col, np, false, w, wt, gyi, gm, Dims { m: k, k: og, n: np }, threads);
                let wide = sized(&mut s.wide, k * np, 0.0);
                T::widen_slice(col, wide);
                col2im(wide, g, rows, sums);
            }
            T::narrow_slice(sums, gxg);
        }
    });
    Ok(gx)
}

/// Gradient of `conv(x, w)` with respect to `w` (`[c_out, cg, kh, kw]`):
/// `gy @ im2col(x)^T` per group and band, each product rounded once and the
/// products of every band and image summed in f32 (in a fixed order, so a
/// seeded run repeats), rounded once at the end.
pub(crate) fn backward_weight<T: HalfConv>(op: &'static str, x: &[T], gy: &[T], g: &ConvGeom) -> Result<Vec<T>> {
    ensure_buffers_fit::<T>(op, g.c_out * g.k(), g)?;
    let (k, p, og, cg, hw) = (g.k(), g.p(), g.og(), g.cg(), g.hw());
    let (xs, ys, ws) = (g.c_in * hw, g.c_out * p, g.c_out * k);
    if g.batch == 0 || ws == 0 {
        return Ok(vec![T::ZERO; ws]);
    }
    let parallel = batch_parallel(g);
    let threads = !parallel && flops(g) >= PAR_CONV_FLOPS;
    // Adds image i's products into the f32 sums `gw` (zeros when first).
    let image = |i: usize, gw: &mut [f32], s: &mut Scratch<T>| {
        let (xi, gyi) = (&x[i * xs..(i + 1) * xs], &gy[i * ys..(i + 1) * ys]);
        for grp in 0..g.groups {
            let gwg = &mut gw[grp * og * k..(grp + 1) * og * k];
            let xg = &xi[grp * cg * hw..(grp + 1) * cg * hw];
            let mut part = std::mem::take(&mut s.col);
            if g.is_pointwise() {
                let out = sized(&mut part, og * k, T::ZERO);
                let gm = Mat { offset: grp * og * p, rs: p as isize, cs: 1 };
                let xt = Mat { offset: 0, rs: 1, cs: p as isize };
                T::gemm_into(out, k, false, gyi, gm, xg, xt, Dims { m: og, k: p, n: k }, threads);
                add_widened(gwg, out, &mut s.wide);
            } else {
                for rows in bands(g) {
                    if interrupt::poll() {
                        break;
                    }
                    let np = rows.len() * g.ow;
                    // One buffer: the band's im2col matrix, then the og x k product after it.
                    let buf = sized(&mut part, k * np + og * k, T::ZERO);
                    let (col, out) = buf.split_at_mut(k * np);
                    im2col(xg, g, rows.clone(), col);
                    let gm = Mat { offset: grp * og * p + rows.start * g.ow, rs: p as isize, cs: 1 };
                    let ct = Mat { offset: 0, rs: 1, cs: np as isize };
                    T::gemm_into(out, k, false, gyi, gm, col, ct, Dims { m: og, k: np, n: k }, threads);
                    add_widened(gwg, out, &mut s.wide);
                }
            }
            s.col = part;
        }
    };
    let sums = batch_sum::<f32>(g.batch, ws, parallel, |i, gw, _first| T::with_scratch(|s| image(i, gw, s)));
    let mut gw = vec![T::ZERO; ws];
    T::narrow_slice(&sums, &mut gw);
    Ok(gw)
}

/// `sums += widen(values)`, through `wide`.
fn add_widened<T: HalfFloat>(sums: &mut [f32], values: &[T], wide: &mut Vec<f32>) {
    let wide = sized(wide, values.len(), 0.0);
    T::widen_slice(values, wide);
    sums.iter_mut().zip(wide.iter()).for_each(|(s, v)| *s += v);
}

/// Per-channel sums of `[batch, channels, p]` (a bias gradient), summed in
/// f32 and rounded once.
pub(crate) fn channel_sums<T: HalfFloat + Element>(gy: &[T], batch: usize, channels: usize, p: usize) -> Vec<T> {
    let mut sums = vec![0.0f32; channels];
    if p > 0 {
        let mut wide = vec![0.0f32; p];
        for image in gy.chunks(channels * p).take(batch) {
            for (s, plane) in sums.iter_mut().zip(image.chunks(p)) {
                T::widen_slice(plane, &mut wide[..plane.len()]);
                // Eight running sums, so the adds vectorise.
                let mut acc = [0.0f32; 8];
                let mut it = wide[..plane.len()].chunks_exact(8);
                for c in &mut it {
                    acc.iter_mut().zip(c).for_each(|(a, v)| *a += v);
                }
                *s += acc.iter().chain(it.remainder()).sum::<f32>();
            }
        }
    }
    let mut out = vec![T::ZERO; channels];
    T::narrow_slice(&sums, &mut out);
    out
}
