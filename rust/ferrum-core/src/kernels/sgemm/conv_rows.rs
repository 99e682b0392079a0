//! The forward of a 2-D convolution whose images have few output positions
//! (the last stages of a CNN on small images: 4x4, 2x2, 1x1), as one GEMM
//! over the whole batch: `Y[b * p + pos, oc] = A[b * p + pos, q] @ W^T[q,
//! oc]`, where row `b * p + pos` of `A` is the window of output position
//! `pos` of image `b` (im2col with the positions as rows).
//!
//! The implicit GEMM (`conv.rs`) puts an image's positions on the tile's
//! columns and `conv_positions.rs` puts one output row's positions on its
//! rows, both one image at a time: a 1x1 output filled one of 32 columns or
//! one of 12 rows, and ResNet-18's last 3x3 convolutions at batch 8 on
//! 32-pixel images ran a twelfth as fast as their arithmetic allows. Here
//! the batch's positions share the tile's rows, the output channels fill its
//! columns, and the weights are read once per call in panels packed once
//! (the same packing, under the same cache key, as `conv_positions`).

use std::cell::RefCell;

use super::avx2::Avx2;
use super::avx512::Avx512;
use super::driver::Kernel;
use super::operand::{with_buffer, Aligned, Operand};
use super::pack::pack_b;
use super::tile::Tile;
use super::weight_cache::{self, with_packed};
use crate::kernels::conv::KeepPacked;
use crate::kernels::epilogue::Epilogue;
use crate::kernels::im2col::ConvGeom;
use crate::kernels::team::{self, Shared};

/// Output positions per image up to which [`applies`] takes a convolution:
/// the per-image routes fill at most this share of a tile.
const MAX_POSITIONS: usize = 16;

/// Floats of the window matrix gathered at once: the batch's rows are
/// taken in blocks of about this size (4 MiB), so a large batch does not
/// gather a matrix of unbounded size.
const BLOCK_FLOATS: usize = 1 << 20;

/// Weight panels per thread part, at least: fewer parts leave a thread
/// waiting on the other's last panel.
const PARTS_PER_THREAD: usize = 2;

/// Floats of the window matrix from which its gather splits over the
/// threads: below, waking the other thread costs more than it saves.
const GATHER_PAR_FLOATS: usize = 1 << 14;

thread_local! {
    /// The calling thread's packed windows and product, kept between calls.
    static ROWS: RefCell<Aligned> = RefCell::new(Aligned::default());
    static PRODUCT: RefCell<Aligned> = RefCell::new(Aligned::default());
}

/// Whether [`forward`] takes `g`: few positions per image, a depth to sum
/// and enough output channels per group to fill a tile's columns.
pub fn applies(g: &ConvGeom) -> bool {
    g.p() <= MAX_POSITIONS && g.p() > 0 && g.k() > 0 && g.og() >= 8 && g.batch > 0
}

/// `y = epilogue(conv(x, w))` with the batch's positions as the GEMM's
/// rows (see the module doc), on `kernel`'s tile, `threaded` on the team;
/// arguments as for [`super::conv_forward`]. Returns whether every output
/// value was written (false only when an interrupt stopped the call).
///
/// # Safety
/// The CPU runs `kernel`; the buffers hold what `g` says (checked by the
/// caller); `y` addresses the output's writable floats, which nothing else
/// accesses during the call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn forward(kernel: Kernel, x: &[f32], w: &[f32], epi: Epilogue<'_>, g: &ConvGeom, y: Shared<f32>, threaded: bool, keep: Option<KeepPacked<'_>>) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe {
        match kernel {
            Kernel::Avx2 => run::<Avx2>(kernel, x, w, epi, g, y, threaded, keep),
            Kernel::Avx512 => run::<Avx512>(kernel, x, w, epi, g, y, threaded, keep),
        }
    }
}

/// [`forward`] on tile `T`, which `kernel` names.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run<T: Tile>(kernel: Kernel, x: &[f32], w: &[f32], epi: Epilogue<'_>, g: &ConvGeom, y: Shared<f32>, threaded: bool, keep: Option<KeepPacked<'_>>) -> bool {
    let (og, k) = (g.og(), g.k());
    assert!(x.len() >= g.batch * g.c_in * g.hw() && w.len() >= g.c_out * k, "conv: buffers smaller than the geometry");
    let panels = og.div_ceil(T::NR);
    let threads = if threaded { rayon::current_num_threads() } else { 1 };
    // Each group's weights read as the `k x og` matrix B[q, oc] = w[oc, q],
    // in panels of NR channels the whole depth deep.
    let pack = |buf: &mut Aligned| {
        let floats = g.groups * panels * T::NR * k;
        let base = Shared(buf.ensure(floats));
        let one = |t: usize| {
            let base = &base;
            let (grp, panel) = (t / panels, t % panels);
            let b = Operand { ptr: w[grp * og * k..].as_ptr(), rs: 1, cs: k as isize };
            // SAFETY: panel `panel` of group `grp` lies inside the buffer and
            // its weights inside w; the CPU runs T (AVX2 at least).
            unsafe { pack_b::<T>(base.0.add((grp * panels + panel) * T::NR * k), b, 0, panel * T::NR, k, T::NR.min(og - panel * T::NR)) };
        };
        team::for_each_part_if(threads > 1, g.groups * panels, one);
        floats
    };
    // The layout conv_positions packs for the AVX-512 tile, so the two share
    // the cached packing.
    let key = weight_cache::Key { offset: 0, og, k, groups: g.groups, kernel, positions: true };
    with_packed(keep, w, key, pack, |packed| {
        // SAFETY: forwarded from the caller; the panels are packed.
        unsafe { compute::<T>(packed.ptr(), x, epi, g, y, threads) }
    })
}

/// The product over packed weight panels `packed`, block of rows after
/// block of rows, each block's epilogue written into `y`.
///
/// # Safety
/// As for [`forward`]; `packed` holds every group's panels.
unsafe fn compute<T: Tile>(packed: *const f32, x: &[f32], epi: Epilogue<'_>, g: &ConvGeom, y: Shared<f32>, threads: usize) -> bool {
    let (og, k, p) = (g.og(), g.k(), g.p());
    let panels = og.div_ceil(T::NR);
    // Whole images per block, a multiple of the tile's rows where the batch allows.
    let images = (BLOCK_FLOATS / (k * p)).max(1).min(g.batch);
    let runs = live_runs(g);
    with_buffer(&ROWS, |rows_buf| {
        with_buffer(&PRODUCT, |product_buf| {
            for first in (0..g.batch).step_by(images) {
                let count = images.min(g.batch - first);
                let m = count * p;
                let m_pad = m.div_ceil(T::MR) * T::MR;
                let a = Shared(rows_buf.ensure(m_pad * k));
                let c = Shared(product_buf.ensure(m * og));
                for grp in 0..g.groups {
                    if crate::interrupt::poll() {
                        return false;
                    }
                    // SAFETY: a holds m_pad * k floats; the images lie in x.
                    unsafe { gather::<T>(a.0, x, g, grp, first, count, threads > 1) };
                    let parts = panels.min(threads * PARTS_PER_THREAD).max(1);
                    let packed = Shared(packed.cast_mut());
                    let one = |t: usize| {
                        let (a, c, packed) = (&a, &c, &packed);
                        let (lo, hi) = (t * panels / parts, (t + 1) * panels / parts);
                        for panel in lo..hi {
                            let nr = T::NR.min(og - panel * T::NR);
                            // SAFETY: group grp's panel lies inside `packed`.
                            let bp = unsafe { packed.0.add((grp * panels + panel) * T::NR * k).cast_const() };
                            for ir in (0..m).step_by(T::MR) {
                                let mr = T::MR.min(m - ir);
                                // SAFETY: row ir of c's m x og matrix, panel's columns.
                                let tile = unsafe { c.0.add(ir * og + panel * T::NR) };
                                if runs.is_empty() {
                                    // Every window lies in the padding.
                                    for i in 0..mr {
                                        // SAFETY: row i of the tile lies in c's m x og matrix.
                                        unsafe { std::ptr::write_bytes(tile.add(i * og), 0, nr) };
                                    }
                                }
                                for (n, &(q0, len)) in runs.iter().enumerate() {
                                    // SAFETY: the A panel of rows ir .. ir + MR and
                                    // the B panel are packed the whole depth deep,
                                    // MR and NR values per step, so depth q0 on
                                    // starts q0 steps in (B stays 64-byte aligned);
                                    // the tile lies in c's m x og matrix; parts
                                    // write disjoint columns.
                                    unsafe { T::any(len, a.0.add(ir * k + q0 * T::MR), bp.add(q0 * T::NR), tile, og, n > 0, mr, nr) };
                                }
                            }
                        }
                    };
                    team::for_each_part_if(threads > 1 && parts > 1, parts, one);
                    // SAFETY: c holds the block's m x og product; y the output.
                    unsafe { scatter(c.0, epi, g, y, grp, first, count) };
                }
            }
            true
        })
    })
}

/// The depth runs `(first, length)` that some output position's window
/// reads inside the image: a tap that lands in the padding for every
/// position multiplies zeros only, so the product skips its weights. A 3x3
/// convolution (padding 1) of a 1x1 image reads only its centre tap: a
/// ninth of the weights, which dominate its time (ResNet-18's last
/// convolutions on 32-pixel images hold 9.4 MB each). Consecutive runs
/// merge, across channels too, so a convolution whose taps all land reads
/// the whole depth in one run.
fn live_runs(g: &ConvGeom) -> Vec<(usize, usize)> {
    let lands = |o: usize, tap: usize, stride: usize, dil: usize, pad: usize, n: usize| (o * stride + tap * dil).checked_sub(pad).is_some_and(|i| i < n);
    let rows: Vec<bool> = (0..g.kh).map(|ky| (0..g.oh).any(|oy| lands(oy, ky, g.stride[0], g.dilation[0], g.pad[0], g.h))).collect();
    let cols: Vec<bool> = (0..g.kw).map(|kx| (0..g.ow).any(|ox| lands(ox, kx, g.stride[1], g.dilation[1], g.pad[1], g.w))).collect();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut q = 0;
    for _ in 0..g.cg() {
        for &row in &rows {
            for &col in &cols {
                if row && col {
                    match runs.last_mut() {
                        Some((first, len)) if *first + *len == q => *len += 1,
                        _ => runs.push((q, 1)),
                    }
                }
                q += 1;
            }
        }
    }
    runs
}

/// Pack the windows of group `grp` of images `first .. first + count` as
/// the A panels of tile `T` the whole depth deep: panel `r / MR` holds rows
/// `r` (image `first + r / p`, position `r % p`), `MR` values per step of
/// the depth, in the weights' (channel, tap) order; padding reads as zero,
/// and so do the rows past the last. On the team when `threaded`, the
/// channels split between the threads.
///
/// Each row's window is worked out once as a table of where its taps read
/// (a channel's plane apart from one channel to the next), and the panels
/// are written in order, `MR` lanes at a time, rather than working out
/// every value's window position again and writing the panel a lane at a
/// time `MR` floats apart, all on the calling thread while the other waited.
///
/// # Safety
/// `a` addresses `count * p` rounded up to whole panels, times `k`, floats.
unsafe fn gather<T: Tile>(a: *mut f32, x: &[f32], g: &ConvGeom, grp: usize, first: usize, count: usize, threaded: bool) {
    let (p, hw, cg, taps) = (g.p(), g.hw(), g.cg(), g.kh * g.kw);
    let m = count * p;
    let m_pad = m.div_ceil(T::MR) * T::MR;
    let ([sh, sw], [dh, dw], [ph, pw]) = (g.stride, g.dilation, g.pad);
    // Per panel, tap and lane: where in x the tap of that row reads in the
    // group's first channel, or None in the padding (and past the last row).
    let mut reads: Vec<Option<usize>> = vec![None; m_pad * taps];
    for r in 0..m {
        let (image, pos) = (first + r / p, r % p);
        let (oy, ox) = (pos / g.ow, pos % g.ow);
        let base = image * g.c_in * hw + grp * cg * hw;
        let (panel, lane) = (r / T::MR, r % T::MR);
        for ky in 0..g.kh {
            let iy = (oy * sh + ky * dh).checked_sub(ph).filter(|&iy| iy < g.h);
            for kx in 0..g.kw {
                let ix = (ox * sw + kx * dw).checked_sub(pw).filter(|&ix| ix < g.w);
                reads[(panel * taps + ky * g.kw + kx) * T::MR + lane] = iy.zip(ix).map(|(iy, ix)| base + iy * g.w + ix);
            }
        }
    }
    let k = cg * taps;
    let dst = Shared(a);
    let parts = if threaded && m_pad * k >= GATHER_PAR_FLOATS { cg.min(2 * rayon::current_num_threads()) } else { 1 };
    let reads = &reads;
    team::for_each_part_if(parts > 1, parts, |t| {
        let dst = &dst;
        for c in t * cg / parts..(t + 1) * cg / parts {
            let shift = c * hw;
            for panel in 0..m_pad / T::MR {
                // SAFETY: steps c * taps .. (c + 1) * taps of the panel lie inside
                // `a` (the caller's bound), and only channel c's part writes them.
                let out = unsafe { std::slice::from_raw_parts_mut(dst.0.add(panel * T::MR * k + c * taps * T::MR), taps * T::MR) };
                let from = &reads[panel * taps * T::MR..(panel + 1) * taps * T::MR];
                for (o, at) in out.iter_mut().zip(from) {
                    *o = at.map_or(0.0, |i| x[i + shift]);
                }
            }
        }
    });
}

/// Write the product `c` (`count * p` rows by `og` channels) of group
/// `grp` into `y` transposed to `[batch, c_out, p]`, through the epilogue.
///
/// # Safety
/// `c` holds the `count * p x og` product; `y` the whole output of `g`.
unsafe fn scatter(c: *const f32, epi: Epilogue<'_>, g: &ConvGeom, y: Shared<f32>, grp: usize, first: usize, count: usize) {
    let (og, p) = (g.og(), g.p());
    // SAFETY: the caller's size bound.
    let c = unsafe { std::slice::from_raw_parts(c, count * p * og) };
    for image in first..first + count {
        for o in 0..og {
            let channel = grp * og + o;
            let out0 = (image * g.c_out + channel) * p;
            for pos in 0..p {
                let v = c[((image - first) * p + pos) * og + o];
                let r = epi.residual.map_or(0.0, |r| r[out0 + pos]);
                // SAFETY: out0 + pos lies inside the output.
                unsafe { y.0.add(out0 + pos).write(epi.apply(v, channel, r)) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::epilogue::Activation;
    use crate::kernels::conv_reference::{assert_close, conv_forward_naive_f64, geom, values};

    fn check<T: Tile>(kernel: Kernel, g: &ConvGeom, threaded: bool, with_tail: bool) {
        assert!(applies(g), "{g:?}");
        let n = g.batch * g.c_out * g.p();
        let x = values(g.batch * g.c_in * g.hw(), 1);
        let w = values(g.c_out * g.k(), 2);
        let (scale, shift, residual) = (values(g.c_out, 3), values(g.c_out, 4), values(n, 5));
        let epi = if with_tail { Epilogue { scale: Some(&scale), shift: Some(&shift), residual: Some(&residual), relu: true, act: Activation::Silu } } else { Epilogue::default() };
        let mut y = vec![f32::NAN; n];
        // SAFETY: the caller checked the CPU runs `kernel`; y holds the output.
        let whole = unsafe { run::<T>(kernel, &x, &w, epi, g, Shared(y.as_mut_ptr()), threaded, None) };
        assert!(whole);
        assert_close(&y, &conv_forward_naive_f64(&x, &w, epi, g), g.k(), &format!("{kernel:?} {g:?}"));
    }

    fn cases() -> Vec<ConvGeom> {
        vec![
            // ResNet-18's last 3x3 convolutions at batch 8 on 32-pixel images: 1x1 outputs.
            geom(8, 64, (1, 1), 40, (3, 3), [1, 1], [1, 1], [1, 1], 1),
            // a 1x2 image: the middle and right kernel columns land, the top and bottom rows do not
            geom(3, 5, (1, 2), 17, (3, 3), [1, 1], [1, 1], [1, 1], 1),
            // padding so wide that some windows lie wholly outside the image
            geom(2, 4, (1, 1), 16, (1, 1), [1, 1], [1, 1], [1, 1], 1),
            // ... or every window: the output is the epilogue of zeros
            geom(2, 4, (1, 1), 16, (1, 1), [2, 2], [1, 1], [1, 1], 1),
            // stride 2 onto 2x2, odd channel counts, a batch not a multiple of the tile
            geom(3, 13, (4, 4), 37, (3, 3), [2, 2], [1, 1], [1, 1], 1),
            // groups, dilation, unequal strides and padding
            geom(5, 12, (6, 5), 24, (3, 3), [2, 1], [0, 1], [2, 1], 3),
            // pointwise with stride 2 (a projection shortcut)
            geom(7, 20, (4, 4), 48, (1, 1), [2, 2], [0, 0], [1, 1], 1),
            // a 3x4 output, a 2x3 kernel
            geom(2, 9, (4, 4), 33, (2, 3), [1, 1], [0, 1], [1, 1], 1),
            // windows large enough for the gather to split over the threads:
            // 130 channels (not a multiple of the split), 40 outputs (a panel and a part)
            geom(2, 130, (4, 4), 40, (3, 3), [1, 1], [1, 1], [1, 1], 1),
            // ... in two groups, a 3x3 image (9 positions, 3 rows of padding in the panel)
            geom(1, 320, (3, 3), 48, (3, 3), [1, 1], [1, 1], [1, 1], 2),
        ]
    }

    #[test]
    fn batch_rows_match_a_naive_f64_convolution_on_both_tiles() {
        for g in cases() {
            for threaded in [false, true] {
                for tail in [false, true] {
                    if Kernel::Avx2.supported() {
                        check::<Avx2>(Kernel::Avx2, &g, threaded, tail);
                    }
                    if Kernel::Avx512.supported() {
                        check::<Avx512>(Kernel::Avx512, &g, threaded, tail);
                    }
                }
            }
        }
    }

    #[test]
    fn skips_only_the_taps_every_window_leaves_in_the_padding() {
        // 1x1 image, 3x3 kernel, padding 1: the centre tap of each channel.
        assert_eq!(live_runs(&geom(1, 3, (1, 1), 8, (3, 3), [1, 1], [1, 1], [1, 1], 1)), vec![(4, 1), (13, 1), (22, 1)]);
        // every tap lands somewhere: one run over the whole depth
        assert_eq!(live_runs(&geom(1, 3, (2, 2), 8, (3, 3), [1, 1], [1, 1], [1, 1], 1)), vec![(0, 27)]);
        // nothing lands: no run
        assert!(live_runs(&geom(1, 2, (1, 1), 8, (1, 1), [2, 2], [1, 1], [1, 1], 1)).is_empty());
    }

    #[test]
    fn takes_few_positions_and_full_channels_only() {
        assert!(!applies(&geom(1, 16, (8, 8), 16, (3, 3), [1, 1], [1, 1], [1, 1], 1)));
        // depthwise: one output channel per group
        assert!(!applies(&geom(1, 16, (2, 2), 16, (3, 3), [1, 1], [1, 1], [1, 1], 16)));
    }
}
