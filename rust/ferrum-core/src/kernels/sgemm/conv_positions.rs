//! The forward of a 2-D convolution on AVX-512 with the output positions as
//! the register tile's rows and the output channels as its columns: a tile
//! is up to 12 positions of one output row by 32 channels, and it sums the
//! whole depth in registers, broadcasting each input value from where it
//! lies (a table gives each (channel, tap) step's offset in the image) and
//! reading the weights from 32-channel panels packed once.
//!
//! The implicit GEMM of `conv.rs` copies every tap of the image into B
//! panels first (nine copies of the image for a 3x3 kernel) in runs no
//! longer than an output row: at 14x14 that copy was a fifth of the time,
//! and 196 positions filled seven 32-column tiles to 224. Here the only copy
//! is the image rows a part reads, bordered with the padding's zeros, and a
//! row of 14 positions is two tiles of 7 rows with nothing wasted.
//! Pointwise convolutions stay plain GEMMs (`conv.rs`): there the image is
//! already the B matrix.

use std::arch::x86_64::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::avx512::Avx512;
use super::driver::Kernel;
use super::operand::{Aligned, Operand};
use super::pack::pack_b;
use super::weight_cache::{self, with_packed};
use crate::kernels::conv::KeepPacked;
use crate::kernels::epilogue::Epilogue;
use crate::kernels::im2col::ConvGeom;
use crate::kernels::parallel::simd;
use crate::kernels::team::{self, Shared};

/// Positions per tile at most (accumulator rows).
const MR: usize = 12;
/// Output channels per tile and per packed weight panel: two zmm lanes.
const NR: usize = 32;

/// Parts per thread when the batch alone does not feed every thread.
const PARTS_PER_THREAD: usize = 2;

/// Bytes of packed weight panels a part runs every output row over before
/// the next panels: about half of a 2 MB L2, beside the image rows.
const PANEL_BLOCK_BYTES: usize = 1 << 20;

/// Whether [`forward`] runs `g`: a window wider than one tap (a 1x1
/// convolution is a plain GEMM over the positions it reads, which the
/// implicit GEMM packs contiguously; read here in place, a strided one's
/// broadcasts step a plane apart per channel, and ResNet-50's three 1x1
/// stride-2 projections ran 1.4-1.7x slower than there), with a width
/// stride the tile's broadcasts are compiled for.
pub fn applies(g: &ConvGeom) -> bool {
    !(g.kh == 1 && g.kw == 1) && matches!(g.stride[1], 1 | 2)
}

thread_local! {
    /// The calling thread's zero-bordered image rows and tap offsets, kept
    /// between calls so a network's convolutions do not allocate them.
    static SCRATCH: RefCell<(Vec<f32>, Vec<isize>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// One part of the work: 32-channel weight panels `panels` and output
/// rows `rows` of group `grp` of image `image`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    image: usize,
    grp: usize,
    panels: (usize, usize),
    rows: (usize, usize),
}

/// Piece `i` of `n` things cut into `pieces` near-equal runs.
fn piece(i: usize, n: usize, pieces: usize) -> (usize, usize) {
    (i * n / pieces, (i + 1) * n / pieces)
}

/// The parts of a batch: whole (image, group) pairs when there are enough
/// to give every thread [`PARTS_PER_THREAD`]; otherwise each pair is cut
/// by weight panels first (a thread then keeps its panels in its own
/// cache) and by output rows when there are too few panels.
fn parts(batch: usize, groups: usize, panels: usize, oh: usize, threads: usize) -> Vec<Part> {
    let units = batch * groups;
    let target = threads * PARTS_PER_THREAD;
    let (by_panels, by_rows) = if threads <= 1 || units >= target {
        (1, 1)
    } else {
        let need = target.div_ceil(units);
        let by_panels = panels.min(need).max(1);
        (by_panels, need.div_ceil(by_panels).min(oh).max(1))
    };
    let mut out = Vec::with_capacity(units * by_panels * by_rows);
    for image in 0..batch {
        for grp in 0..groups {
            for a in 0..by_panels {
                for b in 0..by_rows {
                    let (panels, rows) = (piece(a, panels, by_panels), piece(b, oh, by_rows));
                    if panels.0 < panels.1 && rows.0 < rows.1 {
                        out.push(Part { image, grp, panels, rows });
                    }
                }
            }
        }
    }
    out
}

/// `y = epilogue(conv(x, w))` with positions as the tile's rows (see the
/// module doc), `threaded` on the team; arguments as for
/// [`super::conv_forward`]. Returns whether every output value was
/// written: false only when an interrupt stopped the call early.
///
/// # Safety
/// The CPU has AVX-512F and AVX2; `g`'s width stride is 1 or 2 (any
/// window runs, 1x1 too, though [`applies`] sends those elsewhere); the buffers
/// hold what `g` says (checked by the caller); `y` addresses the output's
/// writable floats, which nothing else accesses during the call.
pub unsafe fn forward(x: &[f32], w: &[f32], epi: Epilogue<'_>, g: &ConvGeom, y: Shared<f32>, threaded: bool, keep: Option<KeepPacked<'_>>) -> bool {
    let (og, k) = (g.og(), g.k());
    let panels = og.div_ceil(NR);
    let threads = if threaded { rayon::current_num_threads() } else { 1 };
    let pack = |buf: &mut Aligned| {
        let floats = g.groups * panels * NR * k;
        let base = Shared(buf.ensure(floats));
        let one = |t: usize| {
            let base = &base;
            let (grp, panel) = (t / panels, t % panels);
            let cols = NR.min(og - panel * NR);
            // w[oc, q] of group grp read as the [k, og] matrix B[q, oc].
            let b = Operand { ptr: w[grp * og * k..].as_ptr(), rs: 1, cs: k as isize };
            // SAFETY: panel `panel` of group `grp` lies inside the buffer
            // (floats above) and its weights inside w; the CPU has AVX2.
            unsafe { pack_b::<Avx512>(base.0.add((grp * panels + panel) * NR * k), b, 0, panel * NR, k, cols) };
        };
        team::for_each_part_if(threads > 1, g.groups * panels, one);
        floats
    };
    let run = |packed: *const f32| {
        let parts = parts(g.batch, g.groups, panels, g.oh, threads);
        let stopped = AtomicBool::new(false);
        let packed = Shared(packed.cast_mut());
        let one = |t: usize| {
            let packed = &packed;
            // SAFETY: forwarded from the caller; parts write disjoint
            // outputs.
            if !unsafe { part(packed.0, x, epi, g, y, parts[t]) } {
                stopped.store(true, Ordering::Relaxed);
            }
        };
        team::for_each_part_if(threads > 1, parts.len(), one);
        !stopped.into_inner()
    };
    let key = weight_cache::Key { offset: 0, og, k, groups: g.groups, kernel: Kernel::Avx512, positions: true };
    // Shares the implicit GEMM's per-thread buffer: the two never run nested.
    with_packed(keep, w, key, pack, |packed| run(packed.ptr()))
}

/// Where a part reads its image: `ptr` at channel 0 of padded row
/// `first_row`, channels `chan` floats apart and rows `row` apart.
#[derive(Clone, Copy)]
struct Source {
    ptr: *const f32,
    chan: usize,
    row: usize,
    first_row: usize,
}

/// Compute one part. Returns false if an interrupt stopped it.
///
/// # Safety
/// As for [`forward`]; `packed` holds every group's weight panels.
unsafe fn part(packed: *const f32, x: &[f32], epi: Epilogue<'_>, g: &ConvGeom, y: Shared<f32>, part: Part) -> bool {
    let (og, k, p) = (g.og(), g.k(), g.p());
    let ([sh, sw], [dh, dw]) = (g.stride, g.dilation);
    let xg = &x[part.image * g.c_in * g.hw() + part.grp * g.cg() * g.hw()..];
    let panels = og.div_ceil(NR);
    let out0 = part.image * g.c_out * p + part.grp * og * p;
    SCRATCH.with(|cell| {
        let mut fresh = (Vec::new(), Vec::new());
        let mut held = cell.try_borrow_mut();
        let (buf, offs) = match held.as_deref_mut() {
            Ok((buf, offs)) => (buf, offs),
            Err(_) => (&mut fresh.0, &mut fresh.1),
        };
        let src = bordered(xg, g, part.rows, buf);
        offs.clear();
        for c in 0..g.cg() {
            for ki in 0..g.kh {
                for kj in 0..g.kw {
                    offs.push((c * src.chan + ki * dh * src.row + kj * dw) as isize);
                }
            }
        }
        let tiles = g.ow.div_ceil(MR);
        let mut tile = [[0.0f32; NR]; MR];
        // Panels in blocks that stay in L2 while every output row of the
        // part runs over them: each row's image rows are then read once per
        // block, not once per panel (a 56x56 image of 256 channels is 3 MB,
        // more than L2).
        let block = (PANEL_BLOCK_BYTES / (k * NR * 4)).max(1);
        for first in (part.panels.0..part.panels.1).step_by(block) {
            for oh in part.rows.0..part.rows.1 {
                if crate::interrupt::poll() {
                    return false;
                }
                for panel in first..(first + block).min(part.panels.1) {
                    // SAFETY: the panel lies inside the packed weights.
                    let b = unsafe { packed.add((part.grp * panels + panel) * NR * k) };
                    let channel = panel * NR;
                    let nc = NR.min(og - channel);
                    for t in 0..tiles {
                        let (ow0, ow1) = piece(t, g.ow, tiles);
                        let base = (oh * sh - src.first_row) * src.row + ow0 * sw;
                        // SAFETY: every tap of positions ow0..ow1 of row oh lies
                        // inside the source rows (bordered's contract), at
                        // base + offs[q] + i * sw; the panel holds k steps.
                        unsafe { run_tile(ow1 - ow0, sw, k, src.ptr.add(base), offs.as_ptr(), b, &mut tile) };
                        let at = out0 + channel * p + oh * g.ow + ow0;
                        // SAFETY: channels channel..channel + nc of the group and
                        // positions ow0..ow1 of row oh are this part's outputs.
                        unsafe { store(&tile, ow1 - ow0, nc, y.0.add(at), p, epi, part.grp * og + channel, epi.residual.map(|r| &r[at..])) };
                    }
                }
            }
        }
        true
    })
}

/// The rows of the image that output rows `rows` read, as a [`Source`]:
/// the image itself when there is no padding, else a copy into `buf` with
/// the padding's zeros around it.
fn bordered(xg: &[f32], g: &ConvGeom, rows: (usize, usize), buf: &mut Vec<f32>) -> Source {
    let ([sh, _], [ph, pw], [dh, _]) = (g.stride, g.pad, g.dilation);
    if ph == 0 && pw == 0 {
        return Source { ptr: xg.as_ptr(), chan: g.hw(), row: g.w, first_row: 0 };
    }
    let (lo, hi) = (rows.0 * sh, (rows.1 - 1) * sh + (g.kh - 1) * dh + 1);
    let (span, wp) = (hi - lo, g.w + 2 * pw);
    let n = g.cg() * span * wp;
    // Every element is written below, once: zeroing the whole buffer
    // first (clear, then resize) was most of this copy's time; resize
    // alone fills only what the buffer grows by.
    buf.resize(n, 0.0);
    simd(
        #[inline(always)]
        || {
            for (c, rows) in buf.chunks_exact_mut(span * wp).enumerate() {
                let plane = &xg[c * g.hw()..(c + 1) * g.hw()];
                for (r, dst) in rows.chunks_exact_mut(wp).enumerate() {
                    let ih = (lo + r).wrapping_sub(ph);
                    if ih < g.h {
                        dst[..pw].fill(0.0);
                        dst[pw..pw + g.w].copy_from_slice(&plane[ih * g.w..(ih + 1) * g.w]);
                        dst[pw + g.w..].fill(0.0);
                    } else {
                        dst.fill(0.0);
                    }
                }
            }
        },
    );
    Source { ptr: buf.as_ptr(), chan: span * wp, row: wp, first_row: lo }
}

/// Write the `r x nc` corner of `tile` (rows positions, columns channels)
/// transposed into the output at `y` (channel rows `p` apart), through the
/// epilogue; `channel` is the tile's first output channel, `residual`
/// starts at the tile's first value.
///
/// # Safety
/// The CPU has AVX-512F; `y` addresses `nc` writable runs of `r` floats,
/// `p` apart; the residual, when given, holds the same.
#[allow(clippy::too_many_arguments)]
unsafe fn store(tile: &[[f32; NR]; MR], r: usize, nc: usize, y: *mut f32, p: usize, epi: Epilogue<'_>, channel: usize, residual: Option<&[f32]>) {
    // SAFETY (each arm): forwarded from the caller.
    unsafe {
        match (residual, epi.relu) {
            (Some(res), true) => store_with::<true, true>(tile, r, nc, y, p, epi, channel, res),
            (Some(res), false) => store_with::<true, false>(tile, r, nc, y, p, epi, channel, res),
            (None, true) => store_with::<false, true>(tile, r, nc, y, p, epi, channel, &[]),
            (None, false) => store_with::<false, false>(tile, r, nc, y, p, epi, channel, &[]),
        }
    }
    if !epi.act.is_none() {
        for c in 0..nc {
            // SAFETY: positions 0..r of channel row c, which the store just wrote.
            epi.act.apply_slice(unsafe { std::slice::from_raw_parts_mut(y.add(c * p), r) });
        }
    }
}

/// [`store`] with the residual and relu decided at compile time: each
/// 16-channel half of the tile is transposed in registers, so that a
/// channel's positions are one vector, run through the epilogue and
/// written with a masked store (the scalar transposed copy was a fifth of
/// a 7x7 stem convolution's time). The channel's scale and shift are 1
/// and -0 when absent, which leave every value as it is (-0 and NaN
/// included).
///
/// # Safety
/// As for [`store`], on a CPU with AVX-512F; with `RES`, `residual` holds
/// the tile.
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn store_with<const RES: bool, const RELU: bool>(tile: &[[f32; NR]; MR], r: usize, nc: usize, y: *mut f32, p: usize, epi: Epilogue<'_>, channel: usize, residual: &[f32]) {
    let lanes = ((1u32 << r) - 1) as __mmask16;
    for half in 0..nc.div_ceil(16) {
        let mut rows = [_mm512_setzero_ps(); 16];
        for (i, row) in rows.iter_mut().enumerate().take(r) {
            // SAFETY: row i of the tile holds 32 floats.
            *row = unsafe { _mm512_loadu_ps(tile[i].as_ptr().add(16 * half)) };
        }
        let cols = transpose(rows);
        for (c, &v) in cols.iter().enumerate().take((nc - 16 * half).min(16)) {
            let c = 16 * half + c;
            let s = _mm512_set1_ps(epi.scale.map_or(1.0, |s| s[channel + c]));
            let t = _mm512_set1_ps(epi.shift.map_or(-0.0, |t| t[channel + c]));
            // Multiplied and added apart, as the other convolution paths round.
            let mut v = _mm512_add_ps(_mm512_mul_ps(v, s), t);
            if RES {
                let res = &residual[c * p..c * p + r];
                // SAFETY: the slice holds the r lanes the mask reads.
                v = _mm512_add_ps(v, unsafe { _mm512_maskz_loadu_ps(lanes, res.as_ptr()) });
            }
            if RELU {
                // As the element-wise relu: NaN (unordered) stays NaN.
                v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask::<_CMP_LE_OQ>(v, _mm512_setzero_ps()), _mm512_setzero_ps());
            }
            // SAFETY: positions 0..r of channel row c, by the caller's bound.
            unsafe { _mm512_mask_storeu_ps(y.add(c * p), lanes, v) };
        }
    }
}

/// The transpose of a 16x16 block held as 16 row vectors.
#[target_feature(enable = "avx512f")]
fn transpose(r: [__m512; 16]) -> [__m512; 16] {
    let mut t = [_mm512_setzero_ps(); 16];
    for j in 0..8 {
        t[2 * j] = _mm512_unpacklo_ps(r[2 * j], r[2 * j + 1]);
        t[2 * j + 1] = _mm512_unpackhi_ps(r[2 * j], r[2 * j + 1]);
    }
    let mut u = [_mm512_setzero_ps(); 16];
    for j in 0..4 {
        let (a, b, c, d) = (_mm512_castps_pd(t[4 * j]), _mm512_castps_pd(t[4 * j + 1]), _mm512_castps_pd(t[4 * j + 2]), _mm512_castps_pd(t[4 * j + 3]));
        u[4 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        u[4 * j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        u[4 * j + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        u[4 * j + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for h in 0..2 {
        for j in 0..4 {
            t[8 * h + j] = _mm512_shuffle_f32x4::<0x88>(u[8 * h + j], u[8 * h + j + 4]);
            t[8 * h + j + 4] = _mm512_shuffle_f32x4::<0xdd>(u[8 * h + j], u[8 * h + j + 4]);
        }
    }
    for j in 0..8 {
        u[j] = _mm512_shuffle_f32x4::<0x88>(t[j], t[j + 8]);
        u[j + 8] = _mm512_shuffle_f32x4::<0xdd>(t[j], t[j + 8]);
    }
    u
}

/// [`tile`] for `r` positions (1 to 12) `s` apart (1 or 2).
///
/// # Safety
/// As for [`tile`].
unsafe fn run_tile(r: usize, s: usize, k: usize, a: *const f32, offs: *const isize, b: *const f32, out: &mut [[f32; NR]; MR]) {
    macro_rules! rows {
        ($s:literal) => {
            match r {
                1 => tile::<1, $s>(k, a, offs, b, out),
                2 => tile::<2, $s>(k, a, offs, b, out),
                3 => tile::<3, $s>(k, a, offs, b, out),
                4 => tile::<4, $s>(k, a, offs, b, out),
                5 => tile::<5, $s>(k, a, offs, b, out),
                6 => tile::<6, $s>(k, a, offs, b, out),
                7 => tile::<7, $s>(k, a, offs, b, out),
                8 => tile::<8, $s>(k, a, offs, b, out),
                9 => tile::<9, $s>(k, a, offs, b, out),
                10 => tile::<10, $s>(k, a, offs, b, out),
                11 => tile::<11, $s>(k, a, offs, b, out),
                _ => tile::<MR, $s>(k, a, offs, b, out),
            }
        };
    }
    // SAFETY: forwarded from the caller.
    unsafe {
        if s == 1 {
            rows!(1)
        } else {
            rows!(2)
        }
    }
}

/// `out[i][0..32] = sum over q of a[offs[q] + i * S] * b[q][0..32]` for
/// positions `i < R`: one broadcast per position and step, two loads of
/// the weight panel, `2R` FMAs.
///
/// # Safety
/// The CPU supports AVX-512F; `a + offs[q] + i * S` is readable for every
/// `q < k`, `i < R`; `offs` holds `k` offsets; `b` is 64-byte aligned and
/// holds `k * 32` floats.
#[target_feature(enable = "avx512f")]
unsafe fn tile<const R: usize, const S: usize>(k: usize, a: *const f32, offs: *const isize, b: *const f32, out: &mut [[f32; NR]; MR]) {
    const { assert!(R >= 1 && R <= MR, "a tile has 1 to 12 positions") };
    // SAFETY: the caller's contract covers every read.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); 2]; R];
        let mut b = b;
        for q in 0..k {
            let at = a.offset(*offs.add(q));
            let b0 = _mm512_load_ps(b);
            let b1 = _mm512_load_ps(b.add(16));
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = _mm512_set1_ps(*at.add(i * S));
                row[0] = _mm512_fmadd_ps(ai, b0, row[0]);
                row[1] = _mm512_fmadd_ps(ai, b1, row[1]);
            }
            b = b.add(NR);
        }
        for (i, [lo, hi]) in acc.into_iter().enumerate() {
            _mm512_storeu_ps(out[i].as_mut_ptr(), lo);
            _mm512_storeu_ps(out[i].as_mut_ptr().add(16), hi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::epilogue::Activation;

    #[test]
    fn transpose_swaps_rows_and_columns() {
        if !Kernel::Avx512.supported() {
            return;
        }
        let m: Vec<f32> = (0..256).map(|i| i as f32).collect();
        // SAFETY: the CPU has AVX-512F; each row is 16 floats of m.
        let cols = unsafe { transpose(std::array::from_fn(|i| _mm512_loadu_ps(m[16 * i..].as_ptr()))) };
        for (j, c) in cols.iter().enumerate() {
            let mut got = [0.0f32; 16];
            // SAFETY: as above.
            unsafe { _mm512_storeu_ps(got.as_mut_ptr(), *c) };
            assert_eq!(got, std::array::from_fn(|i| m[16 * i + j]), "column {j}");
        }
    }

    #[test]
    fn parts_cover_every_output_once() {
        // A batch that feeds the threads runs whole (image, group) pairs.
        assert_eq!(parts(16, 1, 8, 14, 2).len(), 16);
        // One 14x14 image with 256 channels: four parts of two panels.
        let ps = parts(1, 1, 8, 14, 2);
        assert_eq!(ps.iter().map(|q| q.panels).collect::<Vec<_>>(), [(0, 2), (2, 4), (4, 6), (6, 8)]);
        // One image with 64 channels (two panels): each panel in two row halves.
        let ps = parts(1, 1, 2, 56, 2);
        assert_eq!(ps.iter().map(|q| (q.panels, q.rows)).collect::<Vec<_>>(), [((0, 1), (0, 28)), ((0, 1), (28, 56)), ((1, 2), (0, 28)), ((1, 2), (28, 56))]);
        for (batch, groups, panels, oh, threads) in [(1, 1, 16, 7, 16), (3, 2, 1, 5, 4), (1, 1, 1, 1, 16), (2, 3, 4, 9, 1)] {
            let ps = parts(batch, groups, panels, oh, threads);
            let covered: usize = ps.iter().map(|q| (q.panels.1 - q.panels.0) * (q.rows.1 - q.rows.0)).sum();
            assert_eq!(covered, batch * groups * panels * oh, "{batch} {groups} {panels} {oh} {threads}");
            assert!(ps.iter().all(|q| q.panels.0 < q.panels.1 && q.rows.0 < q.rows.1));
        }
    }

    /// The convolution by its definition, in f64.
    fn reference(x: &[f32], w: &[f32], g: &ConvGeom) -> Vec<f32> {
        let mut y = vec![0.0f32; g.batch * g.c_out * g.p()];
        for n in 0..g.batch {
            for o in 0..g.c_out {
                let grp = o / g.og();
                for oh in 0..g.oh {
                    for ow in 0..g.ow {
                        let mut sum = 0.0f64;
                        for c in 0..g.cg() {
                            for ki in 0..g.kh {
                                for kj in 0..g.kw {
                                    let ih = (oh * g.stride[0] + ki * g.dilation[0]) as isize - g.pad[0] as isize;
                                    let iw = (ow * g.stride[1] + kj * g.dilation[1]) as isize - g.pad[1] as isize;
                                    if ih < 0 || iw < 0 || ih >= g.h as isize || iw >= g.w as isize {
                                        continue;
                                    }
                                    let xv = x[((n * g.c_in + grp * g.cg() + c) * g.h + ih as usize) * g.w + iw as usize];
                                    let wv = w[((o * g.cg() + c) * g.kh + ki) * g.kw + kj];
                                    sum += f64::from(xv) * f64::from(wv);
                                }
                            }
                        }
                        y[((n * g.c_out + o) * g.oh + oh) * g.ow + ow] = sum as f32;
                    }
                }
            }
        }
        y
    }

    #[test]
    fn matches_the_definition_with_the_epilogue() {
        if !Kernel::Avx512.supported() {
            return;
        }
        let geom = |batch, c_in, h, w, c_out, k: [usize; 2], stride: [usize; 2], pad: [usize; 2], dilation: [usize; 2], groups| {
            let oh = (h + 2 * pad[0] - dilation[0] * (k[0] - 1) - 1) / stride[0] + 1;
            let ow = (w + 2 * pad[1] - dilation[1] * (k[1] - 1) - 1) / stride[1] + 1;
            ConvGeom { batch, c_in, h, w, c_out, oh, ow, kh: k[0], kw: k[1], stride, pad, dilation, groups }
        };
        let cases = [
            geom(1, 5, 14, 14, 40, [3, 3], [1, 1], [1, 1], [1, 1], 1),
            geom(2, 3, 9, 30, 64, [7, 7], [2, 2], [3, 3], [1, 1], 1),
            geom(1, 4, 7, 7, 16, [3, 3], [1, 1], [1, 1], [1, 1], 1),
            geom(3, 6, 10, 13, 48, [3, 2], [2, 1], [0, 1], [2, 1], 2),
            geom(1, 8, 8, 8, 33, [1, 1], [2, 2], [0, 0], [1, 1], 1),
            geom(1, 2, 5, 40, 20, [1, 5], [1, 2], [0, 2], [1, 3], 1),
            // 900 values summed into each output.
            geom(1, 100, 6, 6, 24, [3, 3], [1, 1], [1, 1], [1, 1], 1),
        ];
        for g in cases {
            let x: Vec<f32> = (0..g.batch * g.c_in * g.hw()).map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0).collect();
            let w: Vec<f32> = (0..g.c_out * g.k()).map(|i| ((i * 53 % 97) as f32 - 48.0) / 40.0).collect();
            let want = reference(&x, &w, &g);
            let n = want.len();
            let scale: Vec<f32> = (0..g.c_out).map(|c| 0.5 + c as f32 / 10.0).collect();
            let shift: Vec<f32> = (0..g.c_out).map(|c| c as f32 / 7.0 - 2.0).collect();
            let residual: Vec<f32> = (0..n).map(|i| (i % 13) as f32 / 3.0 - 2.0).collect();
            for (threaded, tail) in [(false, false), (true, false), (true, true)] {
                let epi = if tail { Epilogue { scale: Some(&scale), shift: Some(&shift), residual: Some(&residual), relu: true, act: Activation::HardSwish } } else { Epilogue::default() };
                let mut y = vec![f32::NAN; n];
                // SAFETY: the CPU has AVX-512F; the buffers hold what g says.
                let whole = unsafe { forward(&x, &w, epi, &g, Shared(y.as_mut_ptr()), threaded, None) };
                assert!(whole);
                for (i, (&got, &v)) in y.iter().zip(&want).enumerate() {
                    let c = i / g.p() % g.c_out;
                    let hard_swish = |v: f32| v * (v + 3.0).clamp(0.0, 6.0) / 6.0;
                    let v = if tail { hard_swish((v * scale[c] + shift[c] + residual[i]).max(0.0)) } else { v };
                    assert!((got - v).abs() <= 1e-4 * (1.0 + v.abs()), "{g:?} tail {tail}: output {i} is {got}, want {v}");
                }
            }
        }
    }
}
