//! Direct f32 convolution on an AVX2 register tile, for convolutions with
//! few channels (the small CNNs' 3x3 layers), where every product of the
//! im2col route is thin (m = 16 or k = 16) and its im2col / col2im copies
//! cost as much as the multiply-adds.
//!
//! One microkernel serves all three passes: a 6 x 16 tile
//! `c[i][j] = sum_t a_i[off_t] * b[t][j]`, where each of the six `a_i` is a
//! pointer into a zero-padded copy of one image and `off` a table of
//! offsets, so the im2col matrix is read in place instead of being built.
//! - forward: rows are six output pixels (`a_i` = the pixel's window corner),
//!   `off` = the receptive field's offsets, `b` = the weights, 16 output
//!   channels wide;
//! - input gradient (stride 1): the forward of the flipped, transposed
//!   kernel over the padded output gradient;
//! - weight gradient: rows are six (channel, tap) entries (`a_i` = the tap's
//!   offset), `off` = every output pixel, `b` = the output gradient
//!   transposed to 16 channels wide; all images of a thread accumulate in
//!   the same tiles.

use std::arch::x86_64::*;
use std::cell::RefCell;
use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::alloc::new_filled;
use super::conv_batch::{batch_parallel, batch_sum, threaded};
use super::im2col::ConvGeom;

/// Rows of the register tile (pixels, or weight entries).
const MR: usize = 6;
/// Columns of the register tile (channels).
const NR: usize = 16;
/// Floats of one tile.
const TILE: usize = MR * NR;
/// Largest zero-padded group image (floats) the direct kernels take: the
/// tile's six windows are gathered from it, so it should stay in L2.
const MAX_PADDED: usize = 1 << 15;

thread_local! {
    /// This thread's padded image and transposed gradient, kept between calls.
    static SCRATCH: RefCell<(Vec<f32>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Run `f` with this thread's scratch buffers (fresh ones if re-entered).
fn with_scratch<R>(f: impl FnOnce(&mut Vec<f32>, &mut Vec<f32>) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            let (a, b) = &mut *s;
            f(a, b)
        }
        Err(_) => f(&mut Vec::new(), &mut Vec::new()),
    })
}

/// Height and width of the zero-padded input the kernels read: exactly the
/// rows and columns some output's window touches.
fn padded_dims(g: &ConvGeom) -> (usize, usize) {
    let hp = (g.oh - 1) * g.stride[0] + (g.kh - 1) * g.dilation[0] + 1;
    let wp = (g.ow - 1) * g.stride[1] + (g.kw - 1) * g.dilation[1] + 1;
    (hp, wp)
}

/// Whether the direct kernels run `g`: AVX2 and FMA present, something to
/// compute, and a padded group image small enough to gather from.
fn fits(g: &ConvGeom) -> bool {
    if !super::sgemm::available() || g.h == 0 || g.w == 0 || g.batch == 0 || g.groups == 0 || g.k() == 0 || g.og() == 0 || g.oh == 0 || g.ow == 0 {
        return false;
    }
    let (hp, wp) = padded_dims(g);
    g.cg().checked_mul(hp).and_then(|v| v.checked_mul(wp)).is_some_and(|v| v <= MAX_PADDED) && g.og() <= 4 * NR
}

/// Whether the direct kernels beat the im2col route on `g`: windows of at
/// least `MIN_K` entries (below that the tile's stores outweigh its
/// multiply-adds: 1 -> 8 channels 3x3 ran 1.3x slower) and at least half of
/// the tile's 16 channel lanes in use (8 -> 16 channels: its input gradient
/// has 8 output channels and runs 1.5x faster here than as GEMM + col2im).
fn worth(g: &ConvGeom) -> bool {
    g.k() >= MIN_K && 2 * g.og() >= g.og().div_ceil(NR) * NR
}

/// Window entries from which the direct kernels pay.
const MIN_K: usize = 32;

/// Whether [`forward`] (and [`backward_weight`]) take `g`.
pub fn forward_applies(g: &ConvGeom) -> bool {
    runs(g) && worth(g)
}

/// Whether the direct kernels compute `g` correctly and its threading suits
/// them: they split the batch over threads, so a large convolution of a
/// single image is left to the threaded GEMM route.
fn runs(g: &ConvGeom) -> bool {
    fits(g) && !(g.batch == 1 && threaded(g))
}

/// The convolution whose forward is the input gradient of `g`: stride 1,
/// the flipped kernel over the output gradient padded by `(k - 1) * d - pad`.
/// None where that is not a plain convolution (stride above 1, or padding
/// wider than the kernel's span).
fn transposed(g: &ConvGeom) -> Option<ConvGeom> {
    if g.stride != [1, 1] {
        return None;
    }
    let pad_h = ((g.kh - 1) * g.dilation[0]).checked_sub(g.pad[0])?;
    let pad_w = ((g.kw - 1) * g.dilation[1]).checked_sub(g.pad[1])?;
    let t = ConvGeom { c_in: g.c_out, h: g.oh, w: g.ow, c_out: g.c_in, oh: g.h, ow: g.w, pad: [pad_h, pad_w], ..*g };
    runs(&t).then_some(t)
}

/// Whether [`backward_input`] takes `g`.
pub fn backward_input_applies(g: &ConvGeom) -> bool {
    transposed(g).is_some_and(|t| worth(&t))
}

/// Offsets in the padded image (`hp x wp` planes) of the `k` (channel, tap)
/// entries of a window, in the weights' order.
fn window_offsets(g: &ConvGeom, hp: usize, wp: usize) -> Vec<isize> {
    let mut offs = Vec::with_capacity(g.k());
    for c in 0..g.cg() {
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                offs.push((c * hp * wp + ki * g.dilation[0] * wp + kj * g.dilation[1]) as isize);
            }
        }
    }
    offs
}

/// Offsets in the padded image of each output pixel's window corner.
fn pixel_offsets(g: &ConvGeom, wp: usize) -> Vec<isize> {
    let mut offs = Vec::with_capacity(g.p());
    for r in 0..g.oh {
        for c in 0..g.ow {
            offs.push((r * g.stride[0] * wp + c * g.stride[1]) as isize);
        }
    }
    offs
}

/// Copy the `[cg, h, w]` planes `src` into `dst` as `[cg, hp, wp]` planes
/// with the leading padding in zeros; what lies past `hp x wp` is never
/// read. Every element is written (the buffer is reused between images).
fn pad_into(src: &[f32], g: &ConvGeom, hp: usize, wp: usize, dst: &mut Vec<f32>) {
    dst.resize(g.cg() * hp * wp, 0.0);
    let [ph, pw] = g.pad;
    let lead = pw.min(wp);
    let cols = g.w.min(wp - lead);
    let rows = ph..ph + g.h.min(hp.saturating_sub(ph));
    for (plane, s) in dst.chunks_exact_mut(hp * wp).zip(src.chunks_exact(g.hw())) {
        for (r, line) in plane.chunks_exact_mut(wp).enumerate() {
            if !rows.contains(&r) {
                line.fill(0.0);
                continue;
            }
            line[..lead].fill(0.0);
            line[lead..lead + cols].copy_from_slice(&s[(r - ph) * g.w..][..cols]);
            line[lead + cols..].fill(0.0);
        }
    }
}

/// Weights in the kernel's `b` order: per group, panels of 16 output
/// channels, each `[k][16]` (zero past the last channel); `at(grp, co, r)`
/// reads entry `r` of output channel `co` of group `grp`.
fn pack_weights(g: &ConvGeom, at: impl Fn(usize, usize, usize) -> f32) -> Vec<f32> {
    let (k, og) = (g.k(), g.og());
    let panels = og.div_ceil(NR);
    let mut out = vec![0.0; g.groups * panels * k * NR];
    for (grp, gp) in out.chunks_exact_mut(panels * k * NR).enumerate() {
        for (cp, panel) in gp.chunks_exact_mut(k * NR).enumerate() {
            for (r, line) in panel.chunks_exact_mut(NR).enumerate() {
                for (j, v) in line.iter_mut().enumerate().take(og.saturating_sub(cp * NR)) {
                    *v = at(grp, cp * NR + j, r);
                }
            }
        }
    }
    out
}

/// `dst[j * dst_rs + i] = src[i * src_rs + j] + add[j]` for `i < rows`,
/// `j < cols` (`add` zero when absent), in 8 x 8 register blocks.
///
/// # Safety
/// The CPU supports AVX2; `src` has `rows` readable rows of `cols` floats
/// `src_rs` apart, `dst` has `cols` writable rows of `rows` floats `dst_rs`
/// apart, not overlapping `src`; `add` holds at least `cols` values.
#[target_feature(enable = "avx2")]
unsafe fn transpose(src: *const f32, src_rs: usize, rows: usize, cols: usize, dst: *mut f32, dst_rs: usize, add: Option<&[f32]>) {
    let bias = |j: usize| add.map_or(0.0, |a| a[j]);
    // SAFETY: every access is at (i, j) with i < rows, j < cols, inside the
    // regions the caller vouches for.
    unsafe {
        let (rb, cb) = (rows - rows % 8, cols - cols % 8);
        for i0 in (0..rb).step_by(8) {
            for j0 in (0..cb).step_by(8) {
                let r: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(src.add((i0 + i) * src_rs + j0)));
                let t0 = _mm256_unpacklo_ps(r[0], r[1]);
                let t1 = _mm256_unpackhi_ps(r[0], r[1]);
                let t2 = _mm256_unpacklo_ps(r[2], r[3]);
                let t3 = _mm256_unpackhi_ps(r[2], r[3]);
                let t4 = _mm256_unpacklo_ps(r[4], r[5]);
                let t5 = _mm256_unpackhi_ps(r[4], r[5]);
                let t6 = _mm256_unpacklo_ps(r[6], r[7]);
                let t7 = _mm256_unpackhi_ps(r[6], r[7]);
                let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
                let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
                let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
                let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
                let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
                let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
                let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
                let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
                let out = [
                    _mm256_permute2f128_ps::<0x20>(u0, u4),
                    _mm256_permute2f128_ps::<0x20>(u1, u5),
                    _mm256_permute2f128_ps::<0x20>(u2, u6),
                    _mm256_permute2f128_ps::<0x20>(u3, u7),
                    _mm256_permute2f128_ps::<0x31>(u0, u4),
                    _mm256_permute2f128_ps::<0x31>(u1, u5),
                    _mm256_permute2f128_ps::<0x31>(u2, u6),
                    _mm256_permute2f128_ps::<0x31>(u3, u7),
                ];
                for (j, v) in out.into_iter().enumerate() {
                    let v = _mm256_add_ps(v, _mm256_set1_ps(bias(j0 + j)));
                    _mm256_storeu_ps(dst.add((j0 + j) * dst_rs + i0), v);
                }
            }
        }
        // The edges: the last rows % 8 rows, and the last cols % 8 columns.
        for i in 0..rows {
            let js = if i < rb { cb..cols } else { 0..cols };
            for j in js {
                *dst.add(j * dst_rs + i) = *src.add(i * src_rs + j) + bias(j);
            }
        }
    }
}

/// `c = (accumulate ? c : 0) + sum_t a_i[offs[t]] * b[t][0..16]` for the six
/// rows `i` of the `6 x 16` tile `c` (row-major).
///
/// # Safety
/// The CPU supports AVX2 and FMA; `a[i].offset(o)` is readable for every
/// `i` and every `o` in `offs`; `b` holds `offs.len() * 16` readable floats.
#[target_feature(enable = "avx2,fma")]
unsafe fn tile(a: [*const f32; MR], offs: &[isize], b: *const f32, c: &mut [f32; TILE], accumulate: bool) {
    // SAFETY: the caller vouches for every gathered read and every read of
    // `b` (t < offs.len()); `c` is a whole tile.
    unsafe {
        let z = _mm256_setzero_ps();
        let mut acc = [[z; 2]; MR];
        let mut b = b;
        for &o in offs {
            let b0 = _mm256_loadu_ps(b);
            let b1 = _mm256_loadu_ps(b.add(8));
            for (row, &ai) in acc.iter_mut().zip(&a) {
                let v = _mm256_broadcast_ss(&*ai.offset(o));
                row[0] = _mm256_fmadd_ps(v, b0, row[0]);
                row[1] = _mm256_fmadd_ps(v, b1, row[1]);
            }
            b = b.add(NR);
        }
        for (row, out) in acc.iter().zip(c.chunks_exact_mut(NR)) {
            let p = out.as_mut_ptr();
            if accumulate {
                _mm256_storeu_ps(p, _mm256_add_ps(_mm256_loadu_ps(p), row[0]));
                _mm256_storeu_ps(p.add(8), _mm256_add_ps(_mm256_loadu_ps(p.add(8)), row[1]));
            } else {
                _mm256_storeu_ps(p, row[0]);
                _mm256_storeu_ps(p.add(8), row[1]);
            }
        }
    }
}

/// Six pointers into `base`, at `offs[first + i]`; past the end of `offs`
/// the last one repeats (its row of the tile is then discarded).
fn corners(base: &[f32], offs: &[isize], first: usize) -> [*const f32; MR] {
    let last = offs.len() - 1;
    // wrapping_offset: only the kernel dereferences, within the padded image.
    std::array::from_fn(|i| base.as_ptr().wrapping_offset(offs[(first + i).min(last)]))
}

/// Forward of one group of one image: `y` (`[og, p]`, written whole) from
/// the padded planes `xp`, with this group's packed weights `wp` and bias;
/// `yt` is scratch for one channel panel as `[p][16]`.
///
/// # Safety
/// `y` points to `og * p` writable floats; the CPU has AVX2 and FMA.
#[allow(clippy::too_many_arguments)]
unsafe fn forward_group(g: &ConvGeom, xp: &[f32], wp: &[f32], bias: Option<&[f32]>, win: &[isize], pix: &[isize], yt: &mut Vec<f32>, y: *mut f32) {
    let (k, og, p) = (g.k(), g.og(), g.p());
    yt.resize(p.next_multiple_of(MR) * NR, 0.0);
    for (cp, panel) in wp.chunks_exact(k * NR).enumerate() {
        let nr = NR.min(og - cp * NR);
        for (p0, t) in (0..p).step_by(MR).zip(yt.chunks_exact_mut(TILE)) {
            let t: &mut [f32; TILE] = t.try_into().expect("tile-sized chunk");
            // SAFETY: the CPU has AVX2/FMA (fits checked); every corner plus
            // every window offset lies inside the padded planes (padded_dims
            // covers the last window); the panel holds k * 16 floats.
            unsafe { tile(corners(xp, pix, p0), win, panel.as_ptr(), t, false) };
        }
        let b = bias.map(|b| &b[cp * NR..cp * NR + nr]);
        // SAFETY: yt holds p rows of 16; channels cp * 16 .. + nr of `y` are
        // inside its og * p floats.
        unsafe { transpose(yt.as_ptr(), NR, p, nr, y.add(cp * NR * p), p, b) };
    }
}

/// Run `forward_group` over every image and group of `x` (geometry `g`)
/// with packed weights `wp`.
fn run_forward(x: &[f32], wp: &[f32], bias: Option<&[f32]>, g: &ConvGeom) -> Option<Vec<f32>> {
    let (k, og, cg, hw, p) = (g.k(), g.og(), g.cg(), g.hw(), g.p());
    let (hp, wpad) = padded_dims(g);
    let (win, pix) = (window_offsets(g, hp, wpad), pixel_offsets(g, wpad));
    let per_group_w = og.div_ceil(NR) * k * NR;
    let per = g.c_out * p;
    let image = |i: usize, yi: &mut [MaybeUninit<f32>]| {
        with_scratch(|pad, yt| {
            for grp in 0..g.groups {
                let xg = &x[i * g.c_in * hw + grp * cg * hw..][..cg * hw];
                pad_into(xg, g, hp, wpad, pad);
                let b = bias.map(|b| &b[grp * og..(grp + 1) * og]);
                let yg = yi[grp * og * p..][..og * p].as_mut_ptr().cast::<f32>();
                // SAFETY: yg is this group's og * p floats; fits checked the CPU.
                unsafe { forward_group(g, pad, &wp[grp * per_group_w..][..per_group_w], b, &win, &pix, yt, yg) };
            }
        })
    };
    let fill = |y: &mut [MaybeUninit<f32>]| {
        if batch_parallel(g) {
            y.par_chunks_mut(per).enumerate().for_each(|(i, yi)| image(i, yi));
        } else {
            y.chunks_mut(per).enumerate().for_each(|(i, yi)| image(i, yi));
        }
    };
    // SAFETY: every image writes each of its groups' og * p outputs.
    unsafe { new_filled("conv2d", g.batch * per, fill) }.ok()
}

/// `conv(x, w) + bias`, as `conv::conv_forward`, where the direct kernels
/// run `g` (as [`forward_applies`] says, or any `g` they fit in tests).
pub fn forward(x: &[f32], w: &[f32], bias: Option<&[f32]>, g: &ConvGeom) -> Option<Vec<f32>> {
    if !runs(g) {
        return None;
    }
    let (k, og) = (g.k(), g.og());
    let wp = pack_weights(g, |grp, co, r| w[(grp * og + co) * k + r]);
    run_forward(x, &wp, bias, g)
}

/// Gradient with respect to `x`, as `conv::conv_backward_input`; None where
/// the direct kernels do not compute it (see [`backward_input_applies`] for
/// where they pay).
pub fn backward_input(gy: &[f32], w: &[f32], g: &ConvGeom) -> Option<Vec<f32>> {
    let t = transposed(g)?;
    let (k, og, taps) = (g.k(), g.og(), g.kh * g.kw);
    let cg = g.cg();
    // Entry (c, ki, kj) of output channel co of the transposed convolution
    // is w[co][c] at the flipped tap: here `co` is an input channel of `g`
    // and `c` an output channel of `g`.
    let wp = pack_weights(&t, |grp, ci, r| {
        let (co, tap) = (r / taps, r % taps);
        let (ki, kj) = (tap / g.kw, tap % g.kw);
        w[(grp * og + co) * k + ci * taps + (g.kh - 1 - ki) * g.kw + (g.kw - 1 - kj)]
    });
    debug_assert_eq!(t.cg(), og);
    debug_assert_eq!(t.og(), cg);
    run_forward(gy, &wp, None, &t)
}

/// Gradient with respect to `w`, as `conv::conv_backward_weight`, where the
/// direct kernels run `g` (they pay where [`forward_applies`]).
pub fn backward_weight(x: &[f32], gy: &[f32], g: &ConvGeom) -> Option<Vec<f32>> {
    if !runs(g) {
        return None;
    }
    let (k, og, cg, hw, p) = (g.k(), g.og(), g.cg(), g.hw(), g.p());
    let (hp, wpad) = padded_dims(g);
    let (win, pix) = (window_offsets(g, hp, wpad), pixel_offsets(g, wpad));
    let (rp, cp) = (k.div_ceil(MR), og.div_ceil(NR));
    // Partial sums as tiles: [group][row panel][channel panel][6][16].
    let tiles = g.groups * rp * cp * TILE;
    let image = |i: usize, acc: &mut [f32]| {
        with_scratch(|pad, gyt| {
            for grp in 0..g.groups {
                let xg = &x[i * g.c_in * hw + grp * cg * hw..][..cg * hw];
                pad_into(xg, g, hp, wpad, pad);
                // This group's output gradient as [channel panel][p][16].
                let gyg = &gy[i * g.c_out * p + grp * og * p..][..og * p];
                if og % NR != 0 {
                    // The lanes past the last channel must read as zeros.
                    gyt.clear();
                }
                gyt.resize(cp * p * NR, 0.0);
                for c in 0..cp {
                    let nr = NR.min(og - c * NR);
                    // SAFETY: channels c * 16 .. + nr of gyg are nr rows of
                    // p; the panel holds p rows of 16; fits checked the CPU.
                    unsafe { transpose(gyg[c * NR * p..].as_ptr(), p, nr, p, gyt[c * p * NR..].as_mut_ptr(), NR, None) };
                }
                let acc_g = &mut acc[grp * rp * cp * TILE..][..rp * cp * TILE];
                for (r, row) in acc_g.chunks_exact_mut(cp * TILE).enumerate() {
                    let a = corners(pad, &win, r * MR);
                    for (c, t) in row.chunks_exact_mut(TILE).enumerate() {
                        let t: &mut [f32; TILE] = t.try_into().expect("tile-sized chunk");
                        // SAFETY: AVX2/FMA present (fits); each window offset
                        // plus each pixel's corner lies inside the padded
                        // planes; the panel holds p * 16 floats.
                        unsafe { tile(a, &pix, gyt[c * p * NR..].as_ptr(), t, true) };
                    }
                }
            }
        })
    };
    let acc = batch_sum(g.batch, tiles, batch_parallel(g), |i, acc, _| image(i, acc));
    let mut gw = vec![0.0f32; g.c_out * k];
    for grp in 0..g.groups {
        for co in 0..og {
            for r in 0..k {
                let at = ((grp * rp + r / MR) * cp + co / NR) * TILE + (r % MR) * NR + co % NR;
                gw[(grp * og + co) * k + r] = acc[at];
            }
        }
    }
    Some(gw)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definitions, one multiply-add at a time, in f64.
    fn naive(x: &[f32], w: &[f32], gy: &[f32], g: &ConvGeom) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (cg, og) = (g.cg(), g.og());
        let mut y = vec![0.0; g.batch * g.c_out * g.p()];
        let mut gx = vec![0.0; g.batch * g.c_in * g.hw()];
        let mut gw = vec![0.0; g.c_out * g.k()];
        for b in 0..g.batch {
            for co in 0..g.c_out {
                let grp = co / og;
                for oh in 0..g.oh {
                    for ow in 0..g.ow {
                        let yi = ((b * g.c_out + co) * g.oh + oh) * g.ow + ow;
                        for c in 0..cg {
                            let ci = grp * cg + c;
                            for ki in 0..g.kh {
                                for kj in 0..g.kw {
                                    let ih = (oh * g.stride[0] + ki * g.dilation[0]) as isize - g.pad[0] as isize;
                                    let iw = (ow * g.stride[1] + kj * g.dilation[1]) as isize - g.pad[1] as isize;
                                    if ih < 0 || iw < 0 || ih as usize >= g.h || iw as usize >= g.w {
                                        continue;
                                    }
                                    let xi = ((b * g.c_in + ci) * g.h + ih as usize) * g.w + iw as usize;
                                    let wi = ((co * cg + c) * g.kh + ki) * g.kw + kj;
                                    y[yi] += x[xi] as f64 * w[wi] as f64;
                                    gx[xi] += gy[yi] as f64 * w[wi] as f64;
                                    gw[wi] += gy[yi] as f64 * x[xi] as f64;
                                }
                            }
                        }
                    }
                }
            }
        }
        (y, gx, gw)
    }

    #[allow(clippy::too_many_arguments)]
    fn geom(batch: usize, c_in: usize, c_out: usize, hw: (usize, usize), k: (usize, usize), stride: usize, pad: (usize, usize), dil: usize, groups: usize) -> ConvGeom {
        let out = |n: usize, k: usize, p: usize| (n + 2 * p - dil * (k - 1) - 1) / stride + 1;
        ConvGeom {
            batch,
            c_in,
            h: hw.0,
            w: hw.1,
            c_out,
            oh: out(hw.0, k.0, pad.0),
            ow: out(hw.1, k.1, pad.1),
            kh: k.0,
            kw: k.1,
            stride: [stride, stride],
            pad: [pad.0, pad.1],
            dilation: [dil, dil],
            groups,
        }
    }

    fn close(got: &[f32], want: &[f64], what: &str, g: &ConvGeom) {
        assert_eq!(got.len(), want.len(), "{what} length for {g:?}");
        let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (i, (a, b)) in got.iter().zip(want).enumerate() {
            assert!((*a as f64 - b).abs() <= 1e-4 * scale, "{what}[{i}]: {a} vs {b} for {g:?}");
        }
    }

    #[test]
    fn transpose_moves_every_element_and_adds_the_column_bias() {
        if !super::super::sgemm::available() {
            return;
        }
        for (rows, cols) in [(1, 1), (8, 8), (16, 784), (13, 21), (7, 9), (24, 5)] {
            let src: Vec<f32> = (0..rows * (cols + 3)).map(|i| i as f32).collect();
            let add: Vec<f32> = (0..cols).map(|j| 0.5 * j as f32).collect();
            let mut dst = vec![f32::NAN; cols * (rows + 2)];
            // SAFETY: rows x cols inside src (row stride cols + 3) and cols x rows
            // inside dst (row stride rows + 2).
            unsafe { transpose(src.as_ptr(), cols + 3, rows, cols, dst.as_mut_ptr(), rows + 2, Some(&add)) };
            for i in 0..rows {
                for j in 0..cols {
                    assert_eq!(dst[j * (rows + 2) + i], src[i * (cols + 3) + j] + add[j], "({i}, {j}) of {rows}x{cols}");
                }
            }
        }
    }

    #[test]
    fn direct_kernels_match_the_definition() {
        if !super::super::sgemm::available() {
            return;
        }
        let cases = [
            geom(64, 8, 16, (28, 28), (3, 3), 1, (1, 1), 1, 1),
            geom(3, 1, 8, (26, 26), (3, 3), 1, (0, 0), 1, 1),
            geom(1, 3, 5, (7, 9), (3, 3), 1, (1, 1), 1, 1),
            geom(5, 7, 19, (6, 5), (3, 2), 1, (2, 1), 1, 1),
            geom(2, 4, 6, (9, 8), (3, 3), 2, (1, 1), 1, 2),
            geom(3, 6, 9, (11, 10), (3, 3), 1, (2, 2), 2, 3),
            geom(2, 5, 33, (4, 13), (2, 3), 1, (0, 2), 1, 1),
            geom(1, 2, 3, (1, 5), (1, 3), 1, (0, 1), 1, 1),
            geom(2, 2, 4, (5, 5), (1, 1), 1, (1, 1), 1, 2),
            geom(2, 3, 16, (5, 6), (3, 3), 1, (3, 1), 1, 1),
            geom(3, 4, 16, (8, 7), (3, 3), 2, (0, 0), 1, 1),
        ];
        for g in cases {
            let x: Vec<f32> = (0..g.batch * g.c_in * g.hw()).map(|i| ((i as f32) * 0.37).sin()).collect();
            let w: Vec<f32> = (0..g.c_out * g.k()).map(|i| ((i as f32) * 0.71).cos()).collect();
            let gy: Vec<f32> = (0..g.batch * g.c_out * g.p()).map(|i| ((i as f32) * 0.13).sin()).collect();
            let bias: Vec<f32> = (0..g.c_out).map(|i| i as f32 * 0.25 - 1.0).collect();
            let (y, gx, gw) = naive(&x, &w, &gy, &g);
            assert!(runs(&g), "{g:?}");
            let y_b: Vec<f64> = y.iter().enumerate().map(|(i, v)| v + bias[(i / g.p()) % g.c_out] as f64).collect();
            close(&forward(&x, &w, Some(&bias), &g).unwrap(), &y_b, "y", &g);
            close(&forward(&x, &w, None, &g).unwrap(), &y, "y without bias", &g);
            close(&backward_weight(&x, &gy, &g).unwrap(), &gw, "gw", &g);
            match backward_input(&gy, &w, &g) {
                Some(got) => close(&got, &gx, "gx", &g),
                None => assert!(g.stride != [1, 1] || g.pad[0] > (g.kh - 1) * g.dilation[0] || g.pad[1] > (g.kw - 1) * g.dilation[1], "{g:?}"),
            }
        }
    }
}
