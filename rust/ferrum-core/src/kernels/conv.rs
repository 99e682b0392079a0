//! Convolution kernels on contiguous buffers: forward, input gradient and
//! weight gradient of a 2-D grouped convolution (1-D runs as height 1;
//! transposed convolution reuses them with the roles swapped).
//!
//! Each image is a GEMM per group over a band of output rows at a time, so
//! the im2col matrix of a band stays in cache (tiled im2col). A 1x1 kernel
//! without stride or padding skips im2col: the input plane is the matrix.
//! Images run in parallel when the batch can feed the threads; a single
//! image uses the GEMM's own threads instead.

use std::cell::RefCell;
use std::sync::Arc;

#[cfg(target_arch = "x86_64")]
use super::conv_batch::{batch_parallel, batch_sum, flops, threaded, PAR_CONV_FLOPS};
use super::conv_direct;
use super::conv_depthwise;
use super::epilogue::{Activation, Epilogue};
use super::gemm::{Dims, GemmElement, Mat};
use super::im2col::{col2im, im2col, ConvGeom};
use super::team;
use crate::element::Element;
use crate::error::Result;
use crate::interrupt;
use crate::shape::ensure_fits;

/// Elements of one band of the im2col matrix: small enough to stay in L2
/// while the GEMM streams over it, large enough to keep the GEMM efficient.
const BAND_ELEMS: usize = 1 << 16;

/// [`BAND_ELEMS`] for elements of type `T`: f32 bands on the AVX-512 GEMM
/// tile (twice as wide as the AVX2 one) run best twice as long (32 images
/// 64 -> 64 channels 56x56 forward and backward on Zen 5: 96 -> 86 ms).
fn band_elems<T>() -> usize {
    if std::mem::size_of::<T>() == 4 && avx512_tile() {
        2 * BAND_ELEMS
    } else {
        BAND_ELEMS
    }
}

/// Whether f32 products run on the AVX-512 GEMM tile (never off x86-64).
fn avx512_tile() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        super::sgemm::Kernel::best() == Some(super::sgemm::Kernel::Avx512)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Output channels per group from which the forward runs as implicit GEMMs
/// on ferrum's microkernel: fewer leave most of its 12 (or 6) tile rows
/// empty, as in a depthwise convolution.
#[cfg(target_arch = "x86_64")]
const IMPLICIT_MIN_CHANNELS: usize = 16;

/// Floats the convolution kernels run on.
pub trait ConvElement: Element + GemmElement + std::ops::AddAssign + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {
    /// Run `f` with this thread's im2col buffer, kept between calls so a
    /// training loop does not allocate (and page in) a fresh one per image.
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R;

    /// The forward on a specialised kernel, where one takes `g`.
    fn direct_forward(_x: &[Self], _w: &[Self], _bias: Option<&[Self]>, _g: &ConvGeom) -> Option<Vec<Self>> {
        None
    }

    /// The forward as implicit GEMMs on ferrum's own microkernel, where the
    /// CPU runs one and `g` suits it; with `keep`, the packed weights are
    /// kept for the next call.
    fn implicit_forward(_x: &[Self], _w: &[Self], _bias: Option<&[Self]>, _g: &ConvGeom, _keep: Option<KeepPacked<'_>>) -> Option<Vec<Self>> {
        None
    }

    /// The input gradient on a specialised kernel, where one takes `g`.
    fn direct_backward_input(_gy: &[Self], _w: &[Self], _g: &ConvGeom) -> Option<Vec<Self>> {
        None
    }

    /// The weight gradient on a specialised kernel, where one takes `g`.
    fn direct_backward_weight(_x: &[Self], _gy: &[Self], _g: &ConvGeom) -> Option<Vec<Self>> {
        None
    }
}

macro_rules! conv_float {
    ($t:ty, $scratch:ident $(, $direct:item)*) => {
        thread_local! {
            static $scratch: RefCell<Vec<$t>> = const { RefCell::new(Vec::new()) };
        }

        impl ConvElement for $t {
            fn with_scratch<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R {
                $scratch.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut buf) => f(&mut buf),
                    // Re-entered on this thread (a rayon worker that stole
                    // another convolution while waiting): use a buffer of its own.
                    Err(_) => f(&mut Vec::new()),
                })
            }
            $($direct)*
        }
    };
}

// f32 convolutions with few channels run on the direct AVX2 kernels.
#[cfg(target_arch = "x86_64")]
conv_float!(
    f32,
    SCRATCH_F32,
    fn direct_forward(x: &[f32], w: &[f32], bias: Option<&[f32]>, g: &ConvGeom) -> Option<Vec<f32>> {
        conv_direct::forward_applies(g).then(|| conv_direct::forward(x, w, bias, g)).flatten()
    },
    fn implicit_forward(x: &[f32], w: &[f32], bias: Option<&[f32]>, g: &ConvGeom, keep: Option<KeepPacked<'_>>) -> Option<Vec<f32>> {
        conv_forward_fused(x, w, Epilogue { shift: bias, ..Default::default() }, g, keep)
    },
    fn direct_backward_input(gy: &[f32], w: &[f32], g: &ConvGeom) -> Option<Vec<f32>> {
        conv_direct::backward_input_applies(g).then(|| conv_direct::backward_input(gy, w, g)).flatten()
    },
    fn direct_backward_weight(x: &[f32], gy: &[f32], g: &ConvGeom) -> Option<Vec<f32>> {
        conv_direct::forward_applies(g).then(|| conv_direct::backward_weight(x, gy, g)).flatten()
    }
);
#[cfg(not(target_arch = "x86_64"))]
conv_float!(f32, SCRATCH_F32);
conv_float!(f64, SCRATCH_F64);

/// Output rows per band, so that a band's im2col matrix of `T` holds about
/// [`band_elems`] elements.
fn band_rows<T>(g: &ConvGeom) -> usize {
    (band_elems::<T>() / (g.k() * g.ow).max(1)).clamp(1, g.oh.max(1))
}

/// Bands of output rows covering the image.
fn bands<T>(g: &ConvGeom) -> impl Iterator<Item = std::ops::Range<usize>> {
    let (step, oh) = (band_rows::<T>(g), g.oh);
    (0..oh).step_by(step).map(move |r| r..(r + step).min(oh))
}

/// Run `f(image, out_chunk, scratch, gemm_threads)` for each image, where
/// `out_chunk` is that image's `per`-element slice of `out`.
fn per_image<T: ConvElement>(out: &mut [T], per: usize, g: &ConvGeom, f: impl Fn(usize, &mut [T], &mut Vec<T>, bool) + Sync + Send) {
    if per == 0 {
        return;
    }
    if batch_parallel(g) {
        // On the team, so that the calling thread works on images too and
        // watches for interrupts between its bands.
        team::for_each_chunk_mut(out, per, |i, o| T::with_scratch(|scratch| f(i, o, scratch, false)));
    } else {
        let threads = flops(g) >= PAR_CONV_FLOPS;
        T::with_scratch(|scratch| out.chunks_mut(per).enumerate().for_each(|(i, o)| f(i, o, scratch, threads)));
    }
}

/// The weights' buffer, for a convolution whose weights no gradient will
/// change: their packing is kept for the next call (in the sgemm module's weight cache).
#[derive(Clone, Copy)]
pub struct KeepPacked<'a> {
    pub buffer: &'a Arc<crate::buffer::Buffer<f32>>,
    /// Where the weights start in it.
    pub offset: usize,
}

/// `epilogue(conv(x, w))` as implicit GEMMs on ferrum's f32 microkernel,
/// the epilogue applied to each output tile as it completes; None where
/// that route does not take `g` (no such kernel on this CPU, a geometry for
/// the direct kernels, or too few output channels per group). The caller
/// has checked the buffers against `g` (with `ensure_buffers_fit` among the checks).
pub fn conv_forward_fused(x: &[f32], w: &[f32], epilogue: Epilogue<'_>, g: &ConvGeom, keep: Option<KeepPacked<'_>>) -> Option<Vec<f32>> {
    if conv_depthwise::applies(g) {
        let p = g.p();
        return Some(conv_depthwise::forward(x, w, g, |plane, out| {
            if !epilogue.is_identity() {
                let channel = plane % g.c_out;
                let residual = epilogue.residual.map(|r| &r[plane * p..(plane + 1) * p]);
                // The activation in a pass of its own, vectorised, while the plane is in L1.
                let linear = Epilogue { act: Activation::None, ..epilogue };
                for (i, v) in out.iter_mut().enumerate() {
                    *v = linear.apply(*v, channel, residual.map_or(0.0, |r| r[i]));
                }
                epilogue.act.apply_slice(out);
            }
        }));
    }
    #[cfg(target_arch = "x86_64")]
    {
        // The direct kernels take their geometries (they add a bias) unless
        // there is more of a tail to fuse, which they would leave to passes
        // of their own.
        let tail = epilogue.scale.is_some() || epilogue.residual.is_some() || epilogue.relu;
        if !tail && conv_direct::forward_applies(g) {
            if epilogue.act.is_none() {
                return None;
            }
            // A bias and an activation alone: the direct kernel, then the activation in one pass.
            // Taken to the GEMM route instead, EfficientNet's SiLU convolutions on few channels ran
            // 1.4x as long single-threaded.
            let mut y = conv_direct::forward(x, w, epilogue.shift, g)?;
            epilogue.act.apply_slice(&mut y);
            return Some(y);
        }
        let kernel = super::sgemm::Kernel::best().filter(|_| g.og() >= IMPLICIT_MIN_CHANNELS)?;
        let n = g.batch * g.c_out * g.p();
        // Not zeroed first: the kernel writes every value (zeroing a
        // ResNet-50 activation of 51 MB cost 7 ms on top).
        let mut y: Vec<f32> = Vec::with_capacity(n);
        // SAFETY: the CPU runs `kernel`; the caller checked the buffers
        // against `g`, and `y` has room for the n values it gives.
        let whole = unsafe { super::sgemm::conv_forward(kernel, x, w, epilogue, g, y.as_mut_ptr(), n, threaded(g), keep) };
        if !whole {
            // Stopped by an interrupt (the call then fails): defined values
            // all the same.
            // SAFETY: y has room for n floats; zero bytes are 0.0.
            unsafe { std::ptr::write_bytes(y.as_mut_ptr(), 0, n) };
        }
        // SAFETY: every one of the n values was written, above or by the kernel.
        unsafe { y.set_len(n) };
        Some(y)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, w, epilogue, g, keep);
        None
    }
}

/// Fail unless an output of `n` elements and the largest im2col band of
/// `g` fit in memory. Both grow with the caller's geometry (padding and
/// dilation can make the output far larger than the input), and both are
/// allocated where an error cannot be returned: the output zeroed by
/// `vec!` (no pass over it), the band inside each image's closure.
pub(crate) fn ensure_buffers_fit<T>(op: &'static str, n: usize, g: &ConvGeom) -> Result<()> {
    ensure_fits::<T>(op, n)?;
    if !g.is_pointwise() {
        ensure_fits::<T>(op, g.k().saturating_mul(band_rows::<T>(g)).saturating_mul(g.ow))?;
    }
    Ok(())
}

fn scratch_for<T: Element>(scratch: &mut Vec<T>, n: usize) -> &mut [T] {
    if scratch.len() < n {
        scratch.resize(n, T::ZERO);
    }
    &mut scratch[..n]
}

/// `y = conv(x, w) + bias`: `x` is `[batch, c_in, h, w]`, `w` is
/// `[c_out, cg, kh, kw]`, the result `[batch, c_out, oh, ow]`; with `keep`
/// (weights no gradient will change), an f32 packing of `w` is kept for
/// the next call.
pub fn conv_forward<T: ConvElement>(op: &'static str, x: &[T], w: &[T], bias: Option<&[T]>, g: &ConvGeom, keep: Option<KeepPacked<'_>>) -> Result<Vec<T>> {
    ensure_buffers_fit::<T>(op, g.batch * g.c_out * g.p(), g)?;
    if let Some(y) = T::direct_forward(x, w, bias, g).or_else(|| T::implicit_forward(x, w, bias, g, keep)) {
        return Ok(y);
    }
    if conv_depthwise::applies(g) {
        let c_out = g.c_out;
        return Ok(conv_depthwise::forward(x, w, g, |plane, out| {
            if let Some(b) = bias {
                let bo = b[plane % c_out];
                out.iter_mut().for_each(|v| *v += bo);
            }
        }));
    }
    let (k, p, og, cg, hw) = (g.k(), g.p(), g.og(), g.cg(), g.hw());
    let mut y = vec![T::ZERO; g.batch * g.c_out * p];
    let xs = g.c_in * hw;
    per_image(&mut y, g.c_out * p, g, |i, yi, scratch, threads| {
        let xi = &x[i * xs..(i + 1) * xs];
        for grp in 0..g.groups {
            let xg = &xi[grp * cg * hw..(grp + 1) * cg * hw];
            let yg = &mut yi[grp * og * p..(grp + 1) * og * p];
            let wm = Mat { offset: grp * og * k, rs: k as isize, cs: 1 };
            if g.is_pointwise() {
                let xm = Mat { offset: 0, rs: p as isize, cs: 1 };
                T::gemm_into(yg, p, false, w, wm, xg, xm, Dims { m: og, k, n: p }, threads);
                continue;
            }
            for rows in bands::<T>(g) {
                if interrupt::poll() {
                    return;
                }
                let np = rows.len() * g.ow;
                let col = scratch_for(scratch, k * np);
                let start = rows.start * g.ow;
                im2col(xg, g, rows, col);
                let cm = Mat { offset: 0, rs: np as isize, cs: 1 };
                T::gemm_into(&mut yg[start..], p, false, w, wm, col, cm, Dims { m: og, k, n: np }, threads);
            }
        }
        if let Some(b) = bias {
            for (plane, &bo) in yi.chunks_mut(p).zip(b) {
                plane.iter_mut().for_each(|v| *v += bo);
            }
        }
    });
    Ok(y)
}

/// Gradient of `conv(x, w)` with respect to `x`, given the output gradient
/// `gy` (`[batch, c_out, oh, ow]`): `w^T @ gy` per group, added back onto
/// the image by col2im.
pub fn conv_backward_input<T: ConvElement>(op: &'static str, gy: &[T], w: &[T], g: &ConvGeom) -> Result<Vec<T>> {
    ensure_buffers_fit::<T>(op, g.batch * g.c_in * g.hw(), g)?;
    if let Some(gx) = T::direct_backward_input(gy, w, g) {
        return Ok(gx);
    }
    let (k, p, og, cg, hw) = (g.k(), g.p(), g.og(), g.cg(), g.hw());
    let mut gx = vec![T::ZERO; g.batch * g.c_in * hw];
    let ys = g.c_out * p;
    per_image(&mut gx, g.c_in * hw, g, |i, gxi, scratch, threads| {
        let gyi = &gy[i * ys..(i + 1) * ys];
        for grp in 0..g.groups {
            let gxg = &mut gxi[grp * cg * hw..(grp + 1) * cg * hw];
            let wt = Mat { offset: grp * og * k, rs: 1, cs: k as isize };
            if g.is_pointwise() {
                let gm = Mat { offset: grp * og * p, rs: p as isize, cs: 1 };
                T::gemm_into(gxg, p, false, w, wt, gyi, gm, Dims { m: k, k: og, n: p }, threads);
                continue;
            }
            for rows in bands::<T>(g) {
                if interrupt::poll() {
                    return;
                }
                let np = rows.len() * g.ow;
                let col = scratch_for(scratch, k * np);
                let gm = Mat { offset: grp * og * p + rows.start * g.ow, rs: p as isize, cs: 1 };
                T::gemm_into(col, np, false, w, wt, gyi, gm, Dims { m: k, k: og, n: np }, threads);
                col2im(col, g, rows, gxg);
            }
        }
    });
    Ok(gx)
}

/// Gradient of `conv(x, w)` with respect to `w` (`[c_out, cg, kh, kw]`):
/// `gy @ im2col(x)^T` per group, summed over the batch.
pub fn conv_backward_weight<T: ConvElement>(op: &'static str, x: &[T], gy: &[T], g: &ConvGeom) -> Result<Vec<T>> {
    ensure_buffers_fit::<T>(op, g.c_out * g.k(), g)?;
    if let Some(gw) = T::direct_backward_weight(x, gy, g) {
        return Ok(gw);
    }
    let (k, p, og, cg, hw) = (g.k(), g.p(), g.og(), g.cg(), g.hw());
    let (xs, ys, ws) = (g.c_in * hw, g.c_out * p, g.c_out * k);
    // Adds image i's contribution into `gw`; `first` overwrites instead.
    let image = |i: usize, gw: &mut [T], scratch: &mut Vec<T>, first: bool, threads: bool| {
        let (xi, gyi) = (&x[i * xs..(i + 1) * xs], &gy[i * ys..(i + 1) * ys]);
        for grp in 0..g.groups {
            let xg = &xi[grp * cg * hw..(grp + 1) * cg * hw];
            let gwg = &mut gw[grp * og * k..(grp + 1) * og * k];
            if g.is_pointwise() {
                let gm = Mat { offset: grp * og * p, rs: p as isize, cs: 1 };
                let xt = Mat { offset: 0, rs: 1, cs: p as isize };
                T::gemm_into(gwg, k, !first, gyi, gm, xg, xt, Dims { m: og, k: p, n: k }, threads);
                continue;
            }
            for (b, rows) in bands::<T>(g).enumerate() {
                if interrupt::poll() {
                    return;
                }
                let np = rows.len() * g.ow;
                let col = scratch_for(scratch, k * np);
                let gm = Mat { offset: grp * og * p + rows.start * g.ow, rs: p as isize, cs: 1 };
                im2col(xg, g, rows, col);
                let ct = Mat { offset: 0, rs: 1, cs: np as isize };
                T::gemm_into(gwg, k, !(first && b == 0), gyi, gm, col, ct, Dims { m: og, k: np, n: k }, threads);
            }
        }
    };
    if g.batch == 0 || ws == 0 {
        return Ok(vec![T::ZERO; ws]);
    }
    let parallel = batch_parallel(g);
    // A batch on one thread threads inside each GEMM instead.
    let threads = !parallel && flops(g) >= PAR_CONV_FLOPS;
    Ok(batch_sum(g.batch, ws, parallel, |i, gw, first| T::with_scratch(|scratch| image(i, gw, scratch, first, threads))))
}

/// Per-channel sums of `[batch, channels, p]`: the bias gradient.
pub fn channel_sums<T: ConvElement>(gy: &[T], batch: usize, channels: usize, p: usize) -> Vec<T> {
    let mut sums = vec![T::ZERO; channels];
    if p == 0 {
        return sums;
    }
    for image in gy.chunks(channels * p).take(batch) {
        for (s, plane) in sums.iter_mut().zip(image.chunks(p)) {
            // Eight running sums, so the adds vectorise.
            let mut acc = [T::ZERO; 8];
            let mut it = plane.chunks_exact(8);
            for c in &mut it {
                for (a, &v) in acc.iter_mut().zip(c) {
                    *a += v;
                }
            }
            let mut total = T::ZERO;
            for v in acc.iter().chain(it.remainder()) {
                total += *v;
            }
            *s += total;
        }
    }
    sums
}

/// Add one bias value per channel to `[batch, channels, p]`.
pub fn add_channel_bias<T: ConvElement>(y: &mut [T], bias: &[T], p: usize) {
    if p == 0 || bias.is_empty() {
        return;
    }
    for image in y.chunks_mut(bias.len() * p) {
        for (plane, &b) in image.chunks_mut(p).zip(bias) {
            plane.iter_mut().for_each(|v| *v += b);
        }
    }
}
