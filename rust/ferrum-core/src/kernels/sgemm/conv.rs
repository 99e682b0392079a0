//! The forward of a 2-D convolution as implicit GEMMs on the microkernel:
//! per image and group, `y[og, p] = w[og, k] @ im2col(x)[k, p]`, where the
//! panels of the im2col matrix are packed straight from the image (no
//! im2col matrix, no second copy of it) and the weights are packed once for
//! the whole call, shared by every image and thread (and kept for the next
//! call when no gradient will change them: [`weight_cache`]).
//!
//! The tiled im2col route ran each band of output rows as a GEMM of its
//! own: the weights were repacked per band (all 9.4 MB of ResNet-50's last
//! 3x3 convolution, twice per image), a band of a 7x7 image was narrower
//! than the 32-column tile, and a single image synchronised the threads
//! once per band.
//!
//! Work is cut into parts of (image, group, output columns, output rows)
//! that the team's threads claim; a batch too small to feed the threads is
//! split by output columns, or by output channels where the image is too
//! small to split.

use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::avx2::Avx2;
use super::avx512::Avx512;
use super::conv_positions;
use super::conv_rows;
use super::driver::{balanced, with_packs, Kernel};
use super::operand::{with_buffer, Aligned, Operand};
use super::tile::Tile;
use super::pack::{pack_a, pack_b};
use super::weight_cache::{self, with_packed};
use crate::kernels::conv::KeepPacked;
use crate::kernels::epilogue::Epilogue;
use crate::kernels::im2col::{valid_cols, ConvGeom};
use crate::kernels::parallel::simd;
use crate::kernels::team::{self, Shared};

/// Columns of B packed at once: a `KC x NC` block of 256 x 768 floats
/// (768 KiB) stays in L2 while the weight panels stream past it.
const NC: usize = 768;

/// Depth of the packed blocks, for both tiles: the plain product's deeper
/// AVX-512 blocks (`Tile::KC`, 800) would make an image block of a deep
/// convolution (ResNet-50's 1x1 layers are 1024 and 2048 deep) larger than
/// L2.
const KC: usize = 256;

/// Parts per thread when the batch alone does not feed every thread.
const PARTS_PER_THREAD: usize = 2;

/// Weights `[c_out, k]` packed in the tile's A panels: per group, per block
/// of depth `kc`, the `MR`-row panels of every output channel of the group.
pub struct PackedWeights<'a> {
    buf: &'a Aligned,
    /// Output channels per group, rounded up to whole panels.
    m_pad: usize,
    k: usize,
    kc: usize,
}

thread_local! {
    /// The calling thread's buffer for a shared im2col matrix, kept between
    /// calls: a network's convolutions then neither allocate nor page-fault
    /// it afresh (9.4 MB for ResNet-50's last 3x3).
    static COLUMNS: RefCell<Aligned> = RefCell::new(Aligned::default());
}

impl<'a> PackedWeights<'a> {
    /// Pack `w` (`groups` matrices of `og x k`, contiguous) for tile `T`
    /// into `buf`, on the team's threads when `threaded`; returns the
    /// floats used.
    ///
    /// # Safety
    /// The CPU runs `T`; `w` holds `groups * og * k` readable floats.
    unsafe fn pack<T: Tile>(buf: &mut Aligned, w: *const f32, og: usize, k: usize, groups: usize, threaded: bool) -> usize {
        let (kc, m_pad) = (balanced(k, KC, 1), og.div_ceil(T::MR) * T::MR);
        let base = Shared(buf.ensure(groups * m_pad * k));
        // One part per (group, depth block, block of MC rows).
        let (k_blocks, row_blocks) = (k.div_ceil(kc), og.div_ceil(T::MC));
        let wp = Shared(w.cast_mut());
        let part = |t: usize| {
            // The whole wrappers, not their pointer fields (closures capture
            // fields apart, and a bare pointer is not Sync).
            let (base, wp) = (&base, &wp);
            let (grp, rest) = (t / (k_blocks * row_blocks), t % (k_blocks * row_blocks));
            let (pc, ic) = (rest / row_blocks * kc, rest % row_blocks * T::MC);
            let (depth, rows) = (kc.min(k - pc), T::MC.min(og - ic));
            // SAFETY: group grp's matrix is inside w; the destination holds
            // the panels of rows ic .. ic + rows of depth block pc, disjoint
            // from every other part's.
            unsafe {
                let a = Operand { ptr: wp.0.add(grp * og * k), rs: k as isize, cs: 1 };
                pack_a::<T>(base.0.add(grp * m_pad * k + pc * m_pad + ic * depth), a, ic, pc, rows, depth);
            }
        };
        let parts = groups * k_blocks * row_blocks;
        team::for_each_part_if(threaded, parts, part);
        groups * m_pad * k
    }

    /// The weights [`PackedWeights::pack`] packed into `buf` for tile `T`.
    fn over<T: Tile>(buf: &'a Aligned, og: usize, k: usize) -> PackedWeights<'a> {
        PackedWeights { buf, m_pad: og.div_ceil(T::MR) * T::MR, k, kc: balanced(k, KC, 1) }
    }

    /// The panel of rows `row .. row + MR` (`row` a multiple of `MR`) of
    /// group `grp`, in the depth block starting at `pc`.
    fn panel<T: Tile>(&self, grp: usize, pc: usize, row: usize) -> *const f32 {
        let depth = self.kc.min(self.k - pc);
        // SAFETY: the offset stays inside the packed buffer for every
        // (group, block, row) of the packed weights.
        unsafe { self.buf.ptr().add(grp * self.m_pad * self.k + pc * self.m_pad + row * depth) }
    }
}

/// One part of the work: output rows (channels of a group) `rows` and
/// output positions `cols` of group `grp` of image `image`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    image: usize,
    grp: usize,
    rows: (usize, usize),
    cols: (usize, usize),
}

/// How the output of each (image, group) is cut: columns per part and
/// rows per part. Whole matrices when the batch (times the groups) gives
/// each thread parts enough; else columns in whole tiles, or rows in whole
/// panels where there are too few columns to share.
fn cut(units: usize, m: usize, n: usize, threads: usize, mr: usize, nr: usize) -> (usize, usize) {
    let target = threads * PARTS_PER_THREAD;
    if threads <= 1 || units >= target {
        return (n, m);
    }
    let need = target.div_ceil(units);
    let col_tiles = n.div_ceil(nr);
    if col_tiles >= 2 * need {
        return (col_tiles.div_ceil(need) * nr, m);
    }
    let row_panels = m.div_ceil(mr);
    (n, row_panels.div_ceil(need).max(1) * mr)
}

/// The parts of `units` (image, group) pairs cut as [`cut`] says.
fn parts(images: usize, groups: usize, m: usize, n: usize, (cw, rh): (usize, usize)) -> Vec<Part> {
    let mut out = Vec::new();
    for image in 0..images {
        for grp in 0..groups {
            for c in (0..n).step_by(cw.max(1)) {
                for r in (0..m).step_by(rh.max(1)) {
                    out.push(Part { image, grp, rows: (r, (r + rh).min(m)), cols: (c, (c + cw).min(n)) });
                }
            }
        }
    }
    out
}

/// `y = epilogue(conv(x, w))` on `kernel`'s tile, `threaded` on the team:
/// `x` is `[batch, c_in, h, w]`, `w` `[c_out, c_in / groups, kh, kw]` and
/// `y` (`y_len` floats, possibly uninitialized) `[batch, c_out, oh, ow]`,
/// all contiguous; with `keep`, `w` is the slice of its buffer from its
/// offset on. Returns whether every output value was written: false only
/// when an interrupt stopped the call early.
///
/// # Safety
/// The CPU runs `kernel`; `y` addresses `y_len` writable floats that
/// nothing else accesses during the call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn conv_forward(kernel: Kernel, x: &[f32], w: &[f32], epilogue: Epilogue<'_>, g: &ConvGeom, y: *mut f32, y_len: usize, threaded: bool, keep: Option<KeepPacked<'_>>) -> bool {
    let out = Out { ptr: Shared(y), len: y_len };
    // SAFETY: forwarded from the caller.
    unsafe {
        match kernel {
            Kernel::Avx2 => forward::<Avx2>(kernel, x, w, epilogue, g, out, threaded, keep),
            Kernel::Avx512 => forward::<Avx512>(kernel, x, w, epilogue, g, out, threaded, keep),
        }
    }
}

/// The output buffer: written, never read before it is written.
#[derive(Clone, Copy)]
struct Out {
    ptr: Shared<f32>,
    len: usize,
}

#[allow(clippy::too_many_arguments)]
unsafe fn forward<T: Tile>(kernel: Kernel, x: &[f32], w: &[f32], epi: Epilogue<'_>, g: &ConvGeom, y: Out, threaded: bool, keep: Option<KeepPacked<'_>>) -> bool {
    let (og, k, p) = (g.og(), g.k(), g.p());
    let n = g.batch * g.c_out * p;
    assert!(x.len() >= g.batch * g.c_in * g.hw() && w.len() >= g.c_out * k && y.len >= n, "conv: buffers smaller than the geometry");
    if n == 0 {
        return true;
    }
    let per_channel = |v: Option<&[f32]>| v.is_none_or(|v| v.len() >= g.c_out);
    assert!(per_channel(epi.scale) && per_channel(epi.shift) && epi.residual.is_none_or(|r| r.len() >= n), "conv: epilogue operands shorter than the output");
    if k == 0 {
        for i in 0..n {
            // SAFETY: i < n <= y.len.
            unsafe { y.ptr.0.add(i).write(epi.apply(0.0, i / p % g.c_out, epi.residual.map_or(0.0, |r| r[i]))) };
        }
        return true;
    }
    if conv_rows::applies(g) {
        // SAFETY: forwarded from the caller, with the sizes checked.
        return unsafe { conv_rows::forward(kernel, x, w, epi, g, y.ptr, threaded, keep) };
    }
    if kernel == Kernel::Avx512 && conv_positions::applies(g) {
        // SAFETY: forwarded from the caller, with the sizes checked; the
        // CPU runs the AVX-512 tile.
        return unsafe { conv_positions::forward(x, w, epi, g, y.ptr, threaded, keep) };
    }
    let threads = if threaded { rayon::current_num_threads() } else { 1 };
    // SAFETY (both packings): w holds groups * og * k floats (asserted);
    // the CPU runs T.
    let pack = |buf: &mut Aligned| unsafe { PackedWeights::pack::<T>(buf, w.as_ptr(), og, k, g.groups, threads > 1) };
    let key = weight_cache::Key { offset: 0, og, k, groups: g.groups, kernel, positions: false };
    with_packed(keep, w, key, pack, |packed| {
        // SAFETY: forwarded from the caller.
        unsafe { compute::<T>(&PackedWeights::over::<T>(packed, og, k), x, y.ptr, epi, g, threads) }
    })
}

/// The convolution with its weights packed: the output cut into parts (as
/// [`cut`] says) that `threads` threads claim. Returns whether every part
/// ran to its end.
///
/// # Safety
/// As for [`conv_forward`], with the sizes checked.
unsafe fn compute<T: Tile>(packed: &PackedWeights<'_>, x: &[f32], yp: Shared<f32>, epi: Epilogue<'_>, g: &ConvGeom, threads: usize) -> bool {
    let (og, p) = (g.og(), g.p());
    let cut = cut(g.batch * g.groups, og, p, threads, T::MR, T::NR);
    let xp = Shared(x.as_ptr().cast_mut());
    if threads > 1 && cut.0 >= p && cut.1 < og {
        // SAFETY: as below, with every part of an (image, group) reading
        // the columns packed for it.
        return unsafe { split_rows::<T>(packed, xp, yp, epi, g, cut.1) };
    }
    let parts = parts(g.batch, g.groups, og, p, cut);
    let stopped = AtomicBool::new(false);
    let run = |t: usize| {
        let (xp, yp) = (&xp, &yp);
        // SAFETY: the part's reads lie in x and its writes in its own rows
        // and columns of y (asserted sizes); parts are disjoint.
        if !unsafe { part::<T>(packed, xp.0, yp.0, epi, g, parts[t], Columns::Own) } {
            stopped.store(true, Ordering::Relaxed);
        }
    };
    team::for_each_part_if(threads > 1, parts.len(), run);
    !stopped.into_inner()
}

/// Where a part finds the packed blocks of the im2col matrix.
#[derive(Clone, Copy)]
enum Columns {
    /// It packs each block it needs itself.
    Own,
    /// Packed once for the part's (image, group): the block at depth `pc`
    /// starts `pc * n_pad` floats in (`n_pad` the output positions rounded
    /// up to whole panels), its panels in column order.
    Shared(Shared<f32>, usize),
}

/// The threads split each (image, group)'s output channels in parts of
/// `rows`, after packing its whole im2col matrix together: an image too
/// small to split by columns (14x14 and 7x7 in ResNet-50) would otherwise
/// have every part pack all of it.
///
/// # Safety
/// As for [`part`], for every (image, group) of `g`; the CPU runs `T`.
unsafe fn split_rows<T: Tile>(packed: &PackedWeights<'_>, x: Shared<f32>, y: Shared<f32>, epi: Epilogue<'_>, g: &ConvGeom, rows: usize) -> bool {
    let (og, k, p, hw) = (g.og(), g.k(), g.p(), g.hw());
    let (kc, n_pad) = (packed.kc, p.div_ceil(T::NR) * T::NR);
    let stopped = AtomicBool::new(false);
    with_buffer(&COLUMNS, |buf| {
        let cols = Shared(buf.ensure(k * n_pad));
        for image in 0..g.batch {
            for grp in 0..g.groups {
                // SAFETY: image `image`, group `grp` lies inside x.
                let xg = Shared(unsafe { x.0.add(image * g.c_in * hw + grp * g.cg() * hw) });
                team::for_each_part(k.div_ceil(kc), |b| {
                    let (cols, xg) = (&cols, &xg);
                    let pc = b * kc;
                    // SAFETY: block b's panels fill its own k-range of the
                    // buffer, which holds k * n_pad floats.
                    unsafe { pack_image::<T>(cols.0.add(pc * n_pad), xg.0, g, pc, 0, kc.min(k - pc), p) };
                });
                let parts: Vec<Part> = (0..og).step_by(rows).map(|r| Part { image, grp, rows: (r, (r + rows).min(og)), cols: (0, p) }).collect();
                team::for_each_part(parts.len(), |t| {
                    let (x, y, cols) = (&x, &y, &cols);
                    // SAFETY: forwarded from the caller; the columns are packed.
                    if !unsafe { part::<T>(packed, x.0, y.0, epi, g, parts[t], Columns::Shared(*cols, n_pad)) } {
                        stopped.store(true, Ordering::Relaxed);
                    }
                });
            }
        }
    });
    !stopped.into_inner()
}

/// Compute one part: its output tiles, depth block by depth block, with
/// the epilogue applied to each tile as its last block lands. Returns
/// false if an interrupt stopped it before the end.
///
/// # Safety
/// The CPU runs `T`; `x` and `y` hold the whole batch of `g`; no other
/// thread touches the part's rows and columns of `y`.
unsafe fn part<T: Tile>(packed: &PackedWeights<'_>, x: *const f32, y: *mut f32, epi: Epilogue<'_>, g: &ConvGeom, part: Part, columns: Columns) -> bool {
    let (og, k, p, hw) = (g.og(), g.k(), g.p(), g.hw());
    let nc_max = balanced(part.cols.1 - part.cols.0, NC, T::NR);
    let kc_max = packed.kc;
    // SAFETY: image `part.image`, group `part.grp` lies inside x and y.
    let (xg, yg) = unsafe { (x.add(part.image * g.c_in * hw + part.grp * g.cg() * hw), y.add(part.image * g.c_out * p + part.grp * og * p)) };
    let channel0 = part.grp * og;
    let out0 = part.image * g.c_out * p + part.grp * og * p;
    let finish = !epi.is_identity();
    let mut finished = false;
    with_packs(|packs| {
        let own = matches!(columns, Columns::Own);
        let pb = packs.b.ensure(if own { nc_max * kc_max } else { 0 });
        for jc in (part.cols.0..part.cols.1).step_by(nc_max) {
            let nc = nc_max.min(part.cols.1 - jc);
            for pc in (0..k).step_by(kc_max) {
                let kc = kc_max.min(k - pc);
                let last = pc + kc == k;
                let pb = match columns {
                    // SAFETY: pb holds nc_max * kc_max floats; the block
                    // lies inside the image.
                    Columns::Own => unsafe {
                        pack_image::<T>(pb, xg, g, pc, jc, kc, nc);
                        pb.cast_const()
                    },
                    // SAFETY: the shared matrix holds this block; jc is a
                    // whole number of panels into it.
                    Columns::Shared(cols, n_pad) => unsafe { cols.0.add(pc * n_pad + jc * kc).cast_const() },
                };
                for ic in (part.rows.0..part.rows.1).step_by(T::MC) {
                    if crate::interrupt::poll() {
                        return;
                    }
                    let mc = T::MC.min(part.rows.1 - ic);
                    for jr in (0..nc).step_by(T::NR) {
                        let nr = T::NR.min(nc - jr);
                        for ir in (0..mc).step_by(T::MR) {
                            let mr = T::MR.min(mc - ir);
                            // SAFETY: packed panel of rows ic + ir .., the
                            // block's panel jr / NR; the tile lies inside the
                            // part's rows and columns of y.
                            unsafe {
                                let c = yg.add((ic + ir) * p + jc + jr);
                                T::any(kc, packed.panel::<T>(part.grp, pc, ic + ir), pb.add(jr * kc), c, p, pc > 0, mr, nr);
                                if last && finish {
                                    let residual = epi.residual.map(|r| &r[out0 + (ic + ir) * p + jc + jr..]);
                                    // Compiled for the CPU's vectors: in this generic
                                    // function it ran 4 floats at a time.
                                    simd(
                                        #[inline(always)]
                                        || finish_tile(c, p, epi, channel0 + ic + ir, residual, mr, nr),
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        finished = true;
    });
    finished
}

/// Apply `epi` to the `mr x nr` tile at `c` (row stride `rs`), whose row
/// `i` is output channel `channel + i`; `residual` starts at the tile's
/// first value, with the same row stride.
///
/// # Safety
/// `c` addresses a writable `mr x nr` tile with row stride `rs`; the
/// residual, when given, holds the same tile.
#[inline(always)]
unsafe fn finish_tile(c: *mut f32, rs: usize, epi: Epilogue<'_>, channel: usize, residual: Option<&[f32]>, mr: usize, nr: usize) {
    // SAFETY (each arm): forwarded from the caller.
    unsafe {
        match (residual, epi.relu) {
            (Some(r), true) => finish_rows::<true, true>(c, rs, epi, channel, r, mr, nr),
            (Some(r), false) => finish_rows::<true, false>(c, rs, epi, channel, r, mr, nr),
            (None, true) => finish_rows::<false, true>(c, rs, epi, channel, &[], mr, nr),
            (None, false) => finish_rows::<false, false>(c, rs, epi, channel, &[], mr, nr),
        }
    }
    if !epi.act.is_none() {
        for i in 0..mr {
            // SAFETY: row i of the tile, by the caller's bound.
            epi.act.apply_slice(unsafe { std::slice::from_raw_parts_mut(c.add(i * rs), nr) });
        }
    }
}

/// [`finish_tile`] in one pass over each row: `v * s + t (+ r)`, relu, with
/// the channel's scale and shift hoisted (1 and -0 when absent, which leave
/// every value as it is, -0 and NaN included), so the loop vectorises.
///
/// # Safety
/// As for [`finish_tile`]; with `RES`, `residual` holds the tile.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn finish_rows<const RES: bool, const RELU: bool>(c: *mut f32, rs: usize, epi: Epilogue<'_>, channel: usize, residual: &[f32], mr: usize, nr: usize) {
    for i in 0..mr {
        // SAFETY: row i of the tile, by the caller's bound.
        let row = unsafe { std::slice::from_raw_parts_mut(c.add(i * rs), nr) };
        let s = epi.scale.map_or(1.0, |s| s[channel + i]);
        let t = epi.shift.map_or(-0.0, |t| t[channel + i]);
        // As the element-wise relu: NaN stays NaN.
        let relu = |x: f32| if RELU && x <= 0.0 { 0.0 } else { x };
        // Zipped, not indexed: with an index into the residual the loop
        // stayed scalar.
        if RES {
            for (v, &r) in row.iter_mut().zip(&residual[i * rs..i * rs + nr]) {
                *v = relu(*v * s + t + r);
            }
            // The row's next tile comes MC / MR tiles later: one stream per
            // row is more than the hardware prefetcher follows, and the
            // residual, written layers ago, is in memory (the epilogue's
            // loads were its hot spot). Prefetching never faults, so the
            // address may lie past the tile's last row.
            let next = residual.as_ptr().wrapping_add(i * rs + nr);
            // SAFETY: a prefetch only hints the cache; any address is allowed.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(next.cast());
                _mm_prefetch::<_MM_HINT_T0>(next.wrapping_add(16).cast());
            }
        } else {
            for v in row.iter_mut() {
                *v = relu(*v * s + t);
            }
        }
    }
}

/// Pack the `kc x cols` block at (`p0`, `j0`) of the im2col matrix of one
/// group of one image (`xg`, its `[cg, h, w]` planes) into the tile's B
/// panels at `out`. A pointwise kernel reads the planes as the matrix;
/// otherwise each row of the block is copied from the image in runs, each
/// straight to its place in the panels.
///
/// # Safety
/// The CPU runs `T`; `out` has room for `cols.div_ceil(NR) * NR * kc`
/// floats; the block lies inside the matrix.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_image<T: Tile>(out: *mut f32, xg: *const f32, g: &ConvGeom, p0: usize, j0: usize, kc: usize, cols: usize) {
    if g.is_pointwise() {
        let b = Operand { ptr: xg, rs: g.hw() as isize, cs: 1 };
        // SAFETY: forwarded from the caller; the planes are the matrix.
        return unsafe { pack_b::<T>(out, b, p0, j0, kc, cols) };
    }
    let padded = cols.div_ceil(T::NR) * T::NR;
    if padded > cols {
        // The last panel's columns past the matrix stay zero for every step.
        for s in 0..kc {
            // SAFETY: step s of the last panel, inside `out`.
            unsafe { std::slice::from_raw_parts_mut(out.add((padded - T::NR) * kc + s * T::NR + cols % T::NR), padded - cols).fill(0.0) };
        }
    }
    let taps = g.kh * g.kw;
    for s in 0..kc {
        let kk = p0 + s;
        let (c, tap) = (kk / taps, kk % taps);
        // SAFETY: channel c of the group's planes.
        let plane = unsafe { std::slice::from_raw_parts(xg.add(c * g.hw()), g.hw()) };
        // Column j of the block is lane j % NR of step s of panel j / NR.
        // SAFETY: every column written is below `cols`, inside `out`.
        let put = |j: usize, v: &[f32]| unsafe {
            let mut j = j;
            for piece in v.chunks(T::NR) {
                let lane = j % T::NR;
                let take = piece.len().min(T::NR - lane);
                copy_short(piece.as_ptr(), out.add((j - lane) * kc + s * T::NR + lane), take);
                if take < piece.len() {
                    copy_short(piece.as_ptr().add(take), out.add((j - lane + T::NR) * kc + s * T::NR), piece.len() - take);
                }
                j += piece.len();
            }
        };
        im2col_row(plane, g, tap / g.kw, tap % g.kw, j0, cols, put);
    }
}

/// Row `(ki, kj)` of one channel's im2col matrix over output positions
/// `j0 .. j0 + cols`: the input value each position's tap reads, zero in the
/// padding, handed out as runs `put(first_position - j0, values)`.
fn im2col_row(plane: &[f32], g: &ConvGeom, ki: usize, kj: usize, j0: usize, cols: usize, mut put: impl FnMut(usize, &[f32])) {
    let (ow, w) = (g.ow, g.w);
    let ([sh, sw], [ph, pw], [dh, dw]) = (g.stride, g.pad, g.dilation);
    let (lo, hi) = valid_cols(ow, sw, pw, kj * dw, w);
    let mut strided = [0.0f32; 64];
    let (mut j, end) = (j0, j0 + cols);
    // Walked row by row: one division for the whole block, not one per run.
    let (mut oh, mut first) = (j0 / ow, j0 % ow);
    while j < end {
        let last = ow.min(first + end - j);
        let at = j - j0;
        j += last - first;
        let ih = oh * sh + ki * dh;
        let row_first = first;
        (oh, first) = (oh + 1, 0);
        let first = row_first;
        if ih < ph || ih - ph >= g.h {
            put_zeros(at, last - first, &mut put);
            continue;
        }
        let src = &plane[(ih - ph) * w..(ih - ph + 1) * w];
        // Output columns first..last of this output row; lo..hi read inside.
        let (a, b) = (lo.clamp(first, last), hi.clamp(first, last));
        put_zeros(at, a - first, &mut put);
        if a < b {
            let iw0 = a * sw + kj * dw - pw;
            if sw == 1 {
                put(at + a - first, &src[iw0..iw0 + (b - a)]);
            } else {
                for q in (a..b).step_by(strided.len()) {
                    let n = strided.len().min(b - q);
                    let from = iw0 + (q - a) * sw;
                    strided[..n].iter_mut().zip(src[from..].iter().step_by(sw)).for_each(|(v, s)| *v = *s);
                    put(at + q - first, &strided[..n]);
                }
            }
        }
        put_zeros(at + b - first, last - b, &mut put);
    }
}

/// Copy `n` floats (a run of at most a panel's width): in 8-float moves
/// and single floats, not a `memcpy` call per run (runs of 7 to 56 floats
/// made the calls a third of the packing).
///
/// # Safety
/// `n` floats are readable at `src` and writable at `dst`; they do not overlap.
#[inline(always)]
unsafe fn copy_short(src: *const f32, dst: *mut f32, n: usize) {
    let mut i = 0;
    // SAFETY: every move stays below n, by the caller's bound.
    unsafe {
        while i + 8 <= n {
            dst.add(i).cast::<[f32; 8]>().write_unaligned(src.add(i).cast::<[f32; 8]>().read_unaligned());
            i += 8;
        }
        while i < n {
            *dst.add(i) = *src.add(i);
            i += 1;
        }
    }
}

/// `put` runs of zeros covering positions `at .. at + n`.
fn put_zeros(at: usize, n: usize, put: &mut impl FnMut(usize, &[f32])) {
    const ZEROS: [f32; 64] = [0.0; 64];
    for z in (0..n).step_by(ZEROS.len()) {
        put(at + z, &ZEROS[..ZEROS.len().min(n - z)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::im2col::im2col;

    /// The im2col matrix of `g`'s first image, by the tiled im2col route.
    fn reference(x: &[f32], g: &ConvGeom) -> Vec<f32> {
        let mut col = vec![f32::NAN; g.k() * g.p()];
        im2col(x, g, 0..g.oh, &mut col);
        col
    }

    #[test]
    fn packed_image_blocks_hold_the_im2col_matrix() {
        if !Kernel::Avx2.supported() {
            return;
        }
        let geom = |c_in, h, w, kh, kw, stride: [usize; 2], pad: [usize; 2], dilation: [usize; 2]| {
            let oh = (h + 2 * pad[0] - dilation[0] * (kh - 1) - 1) / stride[0] + 1;
            let ow = (w + 2 * pad[1] - dilation[1] * (kw - 1) - 1) / stride[1] + 1;
            ConvGeom { batch: 1, c_in, h, w, c_out: 4, oh, ow, kh, kw, stride, pad, dilation, groups: 1 }
        };
        let cases = [
            geom(3, 7, 7, 3, 3, [1, 1], [1, 1], [1, 1]),
            geom(2, 9, 11, 3, 3, [2, 2], [1, 1], [1, 1]),
            geom(2, 10, 10, 3, 3, [1, 1], [2, 2], [2, 2]),
            geom(3, 30, 30, 7, 7, [2, 2], [3, 3], [1, 1]),
            geom(1, 5, 90, 1, 5, [1, 3], [0, 2], [1, 1]),
            geom(4, 6, 6, 1, 1, [1, 1], [0, 0], [1, 1]),
            geom(4, 9, 9, 1, 1, [2, 2], [0, 0], [1, 1]),
        ];
        for g in cases {
            let x: Vec<f32> = (0..g.c_in * g.hw()).map(|i| i as f32 + 1.0).collect();
            let col = reference(&x, &g);
            let (k, p, nr) = (g.k(), g.p(), Avx2::NR);
            // Blocks at several depths and column offsets, panels partly full.
            for (p0, kc) in [(0, k), (k / 3, k - k / 3), (k - 1, 1)] {
                for (j0, cols) in [(0, p), (nr, p.saturating_sub(nr)), (p / 2, p - p / 2)] {
                    if cols == 0 || kc == 0 {
                        continue;
                    }
                    let mut out = vec![f32::NAN; cols.div_ceil(nr) * nr * kc];
                    // SAFETY: the CPU runs the tile; out is sized as pack_image needs.
                    unsafe { pack_image::<Avx2>(out.as_mut_ptr(), x.as_ptr(), &g, p0, j0, kc, cols) };
                    for s in 0..kc {
                        for j in 0..cols.div_ceil(nr) * nr {
                            let got = out[j / nr * nr * kc + s * nr + j % nr];
                            let want = if j < cols { col[(p0 + s) * p + j0 + j] } else { 0.0 };
                            assert_eq!(got, want, "{g:?}: step {s} column {j} of block ({p0}, {j0})");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn cut_feeds_every_thread() {
        // A batch that feeds the threads runs whole matrices.
        assert_eq!(cut(16, 256, 196, 2, 12, 32), (196, 256));
        // One 56x56 image: columns in whole tiles, two parts per thread.
        assert_eq!(cut(1, 64, 3136, 2, 12, 32), (25 * 32, 64));
        // One 7x7 image: two tiles of columns, so output channels are split.
        assert_eq!(cut(1, 512, 49, 2, 12, 32), (49, 11 * 12));
        // One thread: whole matrices.
        assert_eq!(cut(1, 512, 49, 1, 12, 32), (49, 512));
        // A simulated 16-thread pool on one image of 14x14.
        let (cw, rh) = cut(1, 256, 196, 16, 12, 32);
        assert_eq!(parts(1, 1, 256, 196, (cw, rh)).len(), 22);
        for (units, m, n, threads) in [(1, 64, 3136, 16), (3, 100, 10, 4), (2, 7, 5, 2)] {
            let split = cut(units, m, n, threads, 12, 32);
            let ps = parts(units, 1, m, n, split);
            // Every output element belongs to exactly one part.
            let covered: usize = ps.iter().map(|q| (q.rows.1 - q.rows.0) * (q.cols.1 - q.cols.0)).sum();
            assert_eq!(covered, units * m * n);
            assert!(ps.iter().all(|q| q.rows.0 % 12 == 0 && q.rows.0 < q.rows.1 && q.cols.0 < q.cols.1));
        }
    }
}
