//! Pooling kernels on contiguous `[planes, h, w]` buffers (a plane is one
//! channel of one image; 1-D pooling runs as height 1): max pooling with its
//! argmax, average pooling and adaptive average pooling, forward and
//! backward. Planes are independent, so large inputs split them over threads.

use rayon::prelude::*;

use super::parallel::{go_parallel, simd, PAR_CHEAP};
use super::pool_lanes::{self, Reduce};
use super::team;
use crate::element::{Element, FloatElement, FloatLanes};
use crate::error::Result;
use crate::shape::try_zeroed;

/// Geometry of a 2-D pooling window: stride, leading and trailing padding,
/// dilation, and the input and output plane sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolGeom {
    pub planes: usize,
    pub h: usize,
    pub w: usize,
    pub oh: usize,
    pub ow: usize,
    pub kh: usize,
    pub kw: usize,
    pub stride: [usize; 2],
    pub pad: [usize; 2],
    pub pad_end: [usize; 2],
    pub dilation: [usize; 2],
}

impl PoolGeom {
    fn hw(&self) -> usize {
        self.h * self.w
    }

    fn p(&self) -> usize {
        self.oh * self.ow
    }

    /// Taps `lo..hi` of output position `o` along dim `d` that land inside
    /// the input, and the input index of tap 0 (possibly negative).
    #[inline]
    fn taps(&self, d: usize, o: usize) -> (usize, usize, isize) {
        let (n, k, dil) = if d == 0 { (self.h, self.kh, self.dilation[0]) } else { (self.w, self.kw, self.dilation[1]) };
        let start = (o * self.stride[d]) as isize - self.pad[d] as isize;
        let lo = if start < 0 { ((-start) as usize).div_ceil(dil) } else { 0 };
        let hi = if start >= n as isize { 0 } else { ((n as isize - start) as usize).div_ceil(dil).min(k) };
        (lo.min(hi), hi, start)
    }

    /// The averaging window of output `o` along dim `d` (dilation 1): the
    /// clipped input range, and the window's length inside the padded input.
    #[inline]
    fn avg_window(&self, d: usize, o: usize) -> (usize, usize, usize) {
        let (n, k) = if d == 0 { (self.h, self.kh) } else { (self.w, self.kw) };
        let start = (o * self.stride[d]) as isize - self.pad[d] as isize;
        let end = (start + k as isize).min((n + self.pad_end[d]) as isize);
        let padded = (end - start) as usize;
        (start.max(0) as usize, end.clamp(0, n as isize) as usize, padded)
    }
}

/// Run `f(plane, out_chunk)` over `per`-element chunks of `out`, one per
/// plane, in parallel when `work` is large.
fn per_plane<T: Send>(out: &mut [T], per: usize, work: usize, f: impl Fn(usize, &mut [T]) + Sync + Send) {
    if per == 0 {
        return;
    }
    if go_parallel(work, PAR_CHEAP) {
        // The team, whose threads are still awake from the convolution
        // before the pooling, where rayon's would have to be woken.
        team::for_each_chunk_mut(out, per, f);
    } else {
        out.chunks_mut(per).enumerate().for_each(|(i, o)| f(i, o));
    }
}

/// Max over each window, and the flat index (`ih * w + iw`) within its plane
/// of the element that won; NaN wins over numbers, as in PyTorch.
pub fn max_pool_forward<T: FloatElement>(op: &'static str, x: &[T], g: &PoolGeom) -> Result<(Vec<T>, Vec<i64>)> {
    let (hw, p) = (g.hw(), g.p());
    let mut out = try_zeroed(op, g.planes * p, T::ZERO)?;
    let mut idx = try_zeroed(op, g.planes * p, 0i64)?;
    let body = |plane: usize, (o, ix): (&mut [T], &mut [i64])| {
        let xp = &x[plane * hw..(plane + 1) * hw];
        for oh in 0..g.oh {
            let (ilo, ihi, hs) = g.taps(0, oh);
            for ow in 0..g.ow {
                let (jlo, jhi, ws) = g.taps(1, ow);
                let (mut best, mut at) = (T::neg_infinity(), -1i64);
                for i in ilo..ihi {
                    let row = (hs + (i * g.dilation[0]) as isize) as usize * g.w;
                    for j in jlo..jhi {
                        let k = row + (ws + (j * g.dilation[1]) as isize) as usize;
                        let v = xp[k];
                        if at < 0 || v > best || (v.is_nan() && !best.is_nan()) {
                            best = v;
                            at = k as i64;
                        }
                    }
                }
                o[oh * g.ow + ow] = best;
                ix[oh * g.ow + ow] = at.max(0);
            }
        }
    };
    if p > 0 {
        if go_parallel(g.planes * p * g.kh * g.kw, PAR_CHEAP) {
            out.par_chunks_mut(p).zip(idx.par_chunks_mut(p)).enumerate().for_each(|(i, c)| body(i, c));
        } else {
            out.chunks_mut(p).zip(idx.chunks_mut(p)).enumerate().for_each(|(i, c)| body(i, c));
        }
    }
    Ok((out, idx))
}

/// Max over each window without the argmax, for a pooling no gradient
/// will flow through. Separable: per output row, the max down the window's
/// input rows, then across each window of that row, both over contiguous
/// runs so they vectorise (see [`Across`]); values as
/// [`max_pool_forward`]'s (NaN wins over numbers, an empty window is -inf).
/// ResNet-50's 3x3 stride-2 pool of `[1, 64, 112, 112]` took 4.6 ms as a
/// search per window with index bookkeeping, 0.8 ms with a scalar pass
/// across, 0.3 ms this way (each a call from Python on 2 threads).
pub fn max_pool_values<T: FloatElement>(op: &'static str, x: &[T], g: &PoolGeom) -> Result<Vec<T>> {
    let (hw, p) = (g.hw(), g.p());
    let mut out = try_zeroed(op, g.planes * p, T::neg_infinity())?;
    if pool_lanes::suits(g) {
        pool_lanes::pool(x, g, &Reduce::Max, &mut out);
        return Ok(out);
    }
    let across = Across::new(g);
    // A run of planes shares one pair of scratch rows, not a pair per plane.
    let run = |first: usize, o: &mut [T]| {
        simd(#[inline(always)] || {
            let mut down = vec![T::neg_infinity(); g.w];
            let mut phases = vec![T::neg_infinity(); if g.stride[1] > 1 { g.w + g.stride[1] } else { 0 }];
            for (i, op) in o.chunks_mut(p).enumerate() {
                max_plane(g, &across, &x[(first + i) * hw..][..hw], op, &mut down, &mut phases);
            }
        })
    };
    if p == 0 {
        return Ok(out);
    }
    if go_parallel(g.planes * p * g.kh * g.kw, PAR_CHEAP) {
        let per = g.planes.div_ceil(2 * rayon::current_num_threads()).max(1);
        team::for_each_chunk_mut(&mut out, per * p, |i, o| run(i * per, o));
    } else {
        run(0, &mut out);
    }
    Ok(out)
}

/// [`max_pool_values`] of one plane `xp` into `o`, with scratch rows `down`
/// (`w` long) and `phases` (`w + stride` when the stride is above 1).
#[inline(always)]
fn max_plane<T: FloatElement>(g: &PoolGeom, across: &Across, xp: &[T], o: &mut [T], down: &mut [T], phases: &mut [T]) {
    for (oh, orow) in o.chunks_mut(g.ow).enumerate() {
        let (ilo, ihi, hs) = g.taps(0, oh);
        let row = |i: usize| &xp[(hs + (i * g.dilation[0]) as isize) as usize * g.w..][..g.w];
        if ilo >= ihi {
            continue;
        }
        down.copy_from_slice(row(ilo));
        for i in ilo + 1..ihi {
            for (a, &b) in down.iter_mut().zip(row(i)) {
                *a = pick(*a, b);
            }
        }
        across.run(g, down, phases, orow);
    }
}

/// `b` in place of `a` when larger, or NaN: max with NaN winning.
#[inline(always)]
pub(super) fn pick<T: FloatElement>(a: T, b: T) -> T {
    if b > a || b.is_nan() {
        b
    } else {
        a
    }
}

/// The pass across one row of a max pooling. With stride `s`, tap `j` of
/// output `ow` reads `ow * s + t_j` (`t_j` its offset from the window's
/// start), which is element `ow + q_j` of phase `r_j` (every `s`-th input
/// from `r_j`) for `t_j = q_j * s + r_j`: deinterleaved into phases, every
/// tap reads a contiguous run for the outputs whose window lies inside
/// the row. The few outputs whose window overhangs an edge go tap by tap.
struct Across {
    /// `(phase, shift)` of each tap.
    taps: Vec<(usize, isize)>,
    /// Outputs whose window lies inside the row.
    inner: std::ops::Range<usize>,
}

impl Across {
    fn new(g: &PoolGeom) -> Self {
        let (s, d, pad) = (g.stride[1] as isize, g.dilation[1] as isize, g.pad[1] as isize);
        let offset = |j: usize| j as isize * d - pad;
        let taps = (0..g.kw).map(|j| (offset(j).rem_euclid(s) as usize, offset(j).div_euclid(s))).collect();
        // Inside: ow * s + offset(0) >= 0 and ow * s + offset(kw - 1) <= w - 1.
        let lo = ((-offset(0)).max(0) as usize).div_ceil(s as usize).min(g.ow);
        let last = g.w as isize - 1 - offset(g.kw.saturating_sub(1));
        let hi = if last < 0 { 0 } else { (last as usize / s as usize + 1).min(g.ow) };
        Across { taps, inner: lo..hi.max(lo) }
    }

    /// `out[ow]` = the max of `down` over output `ow`'s window; `phases`
    /// is scratch of `w + stride` elements when the stride is above 1.
    #[inline(always)]
    fn run<T: FloatElement>(&self, g: &PoolGeom, down: &[T], phases: &mut [T], out: &mut [T]) {
        let s = g.stride[1];
        let len = g.w.div_ceil(s.max(1));
        if s == 2 {
            // The common stride, spelt out so that it vectorises.
            let (even, odd) = phases.split_at_mut(len);
            for ((e, o), pair) in even.iter_mut().zip(odd.iter_mut()).zip(down.chunks_exact(2)) {
                (*e, *o) = (pair[0], pair[1]);
            }
            if g.w % 2 == 1 {
                even[len - 1] = down[g.w - 1];
            }
        } else if s > 1 {
            // Phase r at r * len: down[r], down[r + s], ...
            for (i, chunk) in down.chunks(s).enumerate() {
                for (r, &v) in chunk.iter().enumerate() {
                    phases[r * len + i] = v;
                }
            }
        }
        let inner = out.get_mut(self.inner.clone()).unwrap_or_default();
        for &(r, q) in &self.taps {
            let from = (self.inner.start as isize + q) as usize;
            let phase = if s > 1 { &phases[r * len..(r + 1) * len] } else { down };
            for (a, &b) in inner.iter_mut().zip(&phase[from..]) {
                *a = pick(*a, b);
            }
        }
        for ow in (0..self.inner.start).chain(self.inner.end..g.ow) {
            let (jlo, jhi, ws) = g.taps(1, ow);
            for j in jlo..jhi {
                out[ow] = pick(out[ow], down[(ws + (j * g.dilation[1]) as isize) as usize]);
            }
        }
    }
}

/// Send each output gradient to the input element that won its window.
pub fn max_pool_backward<T: FloatElement>(op: &'static str, gy: &[T], idx: &[i64], g: &PoolGeom) -> Result<Vec<T>> {
    let (hw, p) = (g.hw(), g.p());
    let mut gx = try_zeroed(op, g.planes * hw, T::ZERO)?;
    per_plane(&mut gx, hw, g.planes * p, |plane, gxp| {
        for (&gv, &k) in gy[plane * p..(plane + 1) * p].iter().zip(&idx[plane * p..(plane + 1) * p]) {
            gxp[k as usize] = gxp[k as usize] + gv;
        }
    });
    Ok(gx)
}

/// Divisor of an averaging window: its size within the padded input, or
/// only the elements inside the input.
#[inline]
fn divisor<T: FloatElement>(rows: (usize, usize, usize), cols: (usize, usize, usize), count_include_pad: bool) -> T {
    let n = if count_include_pad { rows.2 * cols.2 } else { (rows.1 - rows.0) * (cols.1 - cols.0) };
    T::from_f64(n.max(1) as f64)
}

/// Mean over each window (dilation 1).
pub fn avg_pool_forward<T: FloatElement>(op: &'static str, x: &[T], g: &PoolGeom, count_include_pad: bool) -> Result<Vec<T>> {
    let (hw, p) = (g.hw(), g.p());
    let mut out = try_zeroed(op, g.planes * p, T::ZERO)?;
    if pool_lanes::suits(g) {
        let divisors: Vec<T> = (0..g.oh)
            .flat_map(|oh| (0..g.ow).map(move |ow| divisor::<T>(g.avg_window(0, oh), g.avg_window(1, ow), count_include_pad)))
            .collect();
        pool_lanes::pool(x, g, &Reduce::Mean(&divisors), &mut out);
        return Ok(out);
    }
    per_plane(&mut out, p, g.planes * p * g.kh * g.kw, |plane, o| {
        let xp = &x[plane * hw..(plane + 1) * hw];
        for oh in 0..g.oh {
            let rows = g.avg_window(0, oh);
            for ow in 0..g.ow {
                let cols = g.avg_window(1, ow);
                let mut sum = T::ZERO;
                for ih in rows.0..rows.1 {
                    for v in &xp[ih * g.w + cols.0..ih * g.w + cols.1] {
                        sum = sum + *v;
                    }
                }
                o[oh * g.ow + ow] = sum / divisor::<T>(rows, cols, count_include_pad);
            }
        }
    });
    Ok(out)
}

/// Spread each output gradient evenly over its window.
pub fn avg_pool_backward<T: FloatElement>(op: &'static str, gy: &[T], g: &PoolGeom, count_include_pad: bool) -> Result<Vec<T>> {
    let (hw, p) = (g.hw(), g.p());
    let mut gx = try_zeroed(op, g.planes * hw, T::ZERO)?;
    per_plane(&mut gx, hw, g.planes * p * g.kh * g.kw, |plane, gxp| {
        let gp = &gy[plane * p..(plane + 1) * p];
        for oh in 0..g.oh {
            let rows = g.avg_window(0, oh);
            for ow in 0..g.ow {
                let cols = g.avg_window(1, ow);
                let share = gp[oh * g.ow + ow] / divisor::<T>(rows, cols, count_include_pad);
                for ih in rows.0..rows.1 {
                    for v in &mut gxp[ih * g.w + cols.0..ih * g.w + cols.1] {
                        *v = *v + share;
                    }
                }
            }
        }
    });
    Ok(gx)
}

/// Input range of adaptive output `o` of `out` over `n` inputs: from
/// `floor(o * n / out)` to `ceil((o + 1) * n / out)`.
#[inline]
pub fn adaptive_range(o: usize, out: usize, n: usize) -> (usize, usize) {
    (o * n / out, ((o + 1) * n).div_ceil(out))
}

/// Adaptive average pooling of `[planes, h, w]` to `[planes, oh, ow]`;
/// a half float sums its window in f32 and rounds the mean once.
pub fn adaptive_avg_forward<T: FloatLanes>(op: &'static str, x: &[T], planes: usize, (h, w): (usize, usize), (oh, ow): (usize, usize)) -> Result<Vec<T>> {
    let (hw, p) = (h * w, oh * ow);
    let mut out = try_zeroed(op, planes * p, T::ZERO)?;
    per_plane(&mut out, p, planes * hw, |plane, o| {
        let xp = &x[plane * hw..(plane + 1) * hw];
        for i in 0..oh {
            let (h0, h1) = adaptive_range(i, oh, h);
            for j in 0..ow {
                let (w0, w1) = adaptive_range(j, ow, w);
                let mut sum = T::Compute::ZERO;
                for ih in h0..h1 {
                    for v in &xp[ih * w + w0..ih * w + w1] {
                        sum = sum + v.widen();
                    }
                }
                o[i * ow + j] = T::narrow(sum / T::Compute::from_f64(((h1 - h0) * (w1 - w0)) as f64));
            }
        }
    });
    Ok(out)
}

/// Spread each adaptive output gradient evenly over its input range. Where
/// windows overlap (a size the output does not divide), an input adds the
/// shares of up to four windows, each add rounded for a half float.
pub fn adaptive_avg_backward<T: FloatLanes>(op: &'static str, gy: &[T], planes: usize, (h, w): (usize, usize), (oh, ow): (usize, usize)) -> Result<Vec<T>> {
    let (hw, p) = (h * w, oh * ow);
    let mut gx = try_zeroed(op, planes * hw, T::ZERO)?;
    per_plane(&mut gx, hw, planes * hw, |plane, gxp| {
        let gp = &gy[plane * p..(plane + 1) * p];
        for i in 0..oh {
            let (h0, h1) = adaptive_range(i, oh, h);
            for j in 0..ow {
                let (w0, w1) = adaptive_range(j, ow, w);
                let share = gp[i * ow + j].widen() / T::Compute::from_f64(((h1 - h0) * (w1 - w0)) as f64);
                for ih in h0..h1 {
                    for v in &mut gxp[ih * w + w0..ih * w + w1] {
                        *v = T::narrow(v.widen() + share);
                    }
                }
            }
        }
    });
    Ok(gx)
}
