//! Deformable 2-D convolution (Dai et al., v2 with a modulation mask), as
//! Burn's CPU backend and torchvision compute it: each kernel tap reads the
//! input at its regular position plus a learned offset, by bilinear
//! interpolation (zero outside the image), times an optional mask value;
//! the samples form an im2col matrix that one GEMM per weight group turns
//! into the output.
//!
//! Layouts: input `[b, c, h, w]`; offset `[b, 2 * og * kh * kw, oh, ow]`
//! holding `(dy, dx)` pairs ordered (offset group, ky, kx); mask `[b, og *
//! kh * kw, oh, ow]`; weight `[c_out, c / wg, kh, kw]`.

use super::gemm::{Dims, GemmElement, Mat};
use crate::element::FloatElement;
use crate::interrupt;

/// Geometry and options of one deformable convolution.
#[derive(Clone, Copy, Debug)]
pub struct DeformGeom {
    pub batch: usize,
    pub c_in: usize,
    pub c_out: usize,
    pub h: usize,
    pub w: usize,
    pub oh: usize,
    pub ow: usize,
    pub kh: usize,
    pub kw: usize,
    pub stride: [usize; 2],
    pub pad: [usize; 2],
    pub dilation: [usize; 2],
    pub weight_groups: usize,
    pub offset_groups: usize,
}

impl DeformGeom {
    fn taps(&self) -> usize {
        self.kh * self.kw
    }
    fn p(&self) -> usize {
        self.oh * self.ow
    }
    /// Rows of the col matrix of one image: (channel, ky, kx).
    fn rows(&self) -> usize {
        self.c_in * self.taps()
    }
}

/// Floats the deformable kernels run on.
pub trait DeformFloat: FloatElement + GemmElement {}
impl<T: FloatElement + GemmElement> DeformFloat for T {}

/// The four neighbours and weights of a bilinear sample at `(y, x)`, or
/// `None` outside `(-1, h) x (-1, w)`; neighbours outside the image are `None`.
struct Sample<T> {
    idx: [Option<usize>; 4],
    ly: T,
    lx: T,
}

#[inline]
fn sample<T: FloatElement>(y: T, x: T, h: usize, w: usize) -> Option<Sample<T>> {
    let (hf, wf) = (T::from_f64(h as f64), T::from_f64(w as f64));
    let neg = -T::one();
    if !(y > neg && y < hf && x > neg && x < wf) {
        return None;
    }
    let (y0, x0) = (y.floor(), x.floor());
    let at = |yy: T, xx: T| -> Option<usize> {
        (yy >= T::zero() && xx >= T::zero() && yy < hf && xx < wf).then(|| yy.to_f64() as usize * w + xx.to_f64() as usize)
    };
    let one = T::one();
    Some(Sample { idx: [at(y0, x0), at(y0, x0 + one), at(y0 + one, x0), at(y0 + one, x0 + one)], ly: y - y0, lx: x - x0 })
}

impl<T: FloatElement> Sample<T> {
    fn weights(&self) -> [T; 4] {
        let one = T::one();
        let (hy, hx) = (one - self.ly, one - self.lx);
        [hy * hx, hy * self.lx, self.ly * hx, self.ly * self.lx]
    }
    fn values(&self, plane: &[T]) -> [T; 4] {
        self.idx.map(|i| i.map_or(T::zero(), |i| plane[i]))
    }
}

/// Where tap `(ky, kx)` of output `(oy, ox)` in offset group `og` reads, for image `b`.
#[inline]
#[allow(clippy::too_many_arguments)]
fn position<T: FloatElement>(g: &DeformGeom, offset: &[T], b: usize, og: usize, ky: usize, kx: usize, oy: usize, ox: usize) -> (T, T) {
    let p = g.p();
    let k = (og * g.kh + ky) * g.kw + kx;
    let base = ((b * g.offset_groups * g.taps() + k) * 2) * p + oy * g.ow + ox;
    let dy = offset[base];
    let dx = offset[base + p];
    let y = T::from_f64((oy * g.stride[0] + ky * g.dilation[0]) as f64 - g.pad[0] as f64) + dy;
    let x = T::from_f64((ox * g.stride[1] + kx * g.dilation[1]) as f64 - g.pad[1] as f64) + dx;
    (y, x)
}

#[inline]
#[allow(clippy::too_many_arguments)]
fn mask_at<T: FloatElement>(g: &DeformGeom, mask: Option<&[T]>, b: usize, og: usize, ky: usize, kx: usize, pos: usize) -> T {
    mask.map_or(T::one(), |m| m[((b * g.offset_groups + og) * g.taps() + ky * g.kw + kx) * g.p() + pos])
}

/// The col matrix `[c * kh * kw, oh * ow]` of image `b` (mask applied).
fn columns<T: DeformFloat>(x: &[T], offset: &[T], mask: Option<&[T]>, g: &DeformGeom, b: usize, col: &mut [T]) {
    let (p, hw, cpg) = (g.p(), g.h * g.w, g.c_in / g.offset_groups);
    for c in 0..g.c_in {
        let plane = &x[(b * g.c_in + c) * hw..][..hw];
        let og = c / cpg;
        for ky in 0..g.kh {
            for kx in 0..g.kw {
                let row = &mut col[((c * g.kh + ky) * g.kw + kx) * p..][..p];
                for oy in 0..g.oh {
                    for ox in 0..g.ow {
                        let pos = oy * g.ow + ox;
                        let (y, xx) = position(g, offset, b, og, ky, kx, oy, ox);
                        row[pos] = match sample(y, xx, g.h, g.w) {
                            Some(s) => {
                                let (w4, v4) = (s.weights(), s.values(plane));
                                let v = w4[0] * v4[0] + w4[1] * v4[1] + w4[2] * v4[2] + w4[3] * v4[3];
                                mask_at(g, mask, b, og, ky, kx, pos) * v
                            }
                            None => T::zero(),
                        };
                    }
                }
            }
        }
    }
}

fn row_major(cols: usize, offset: usize) -> Mat {
    Mat { offset, rs: cols as isize, cs: 1 }
}

fn transposed(cols: usize, offset: usize) -> Mat {
    Mat { offset, rs: 1, cs: cols as isize }
}

/// The forward; `None` when interrupted.
pub fn forward<T: DeformFloat>(x: &[T], offset: &[T], mask: Option<&[T]>, weight: &[T], bias: Option<&[T]>, g: &DeformGeom) -> Option<Vec<T>> {
    let (p, rows) = (g.p(), g.rows());
    let (og_out, kg) = (g.c_out / g.weight_groups, rows / g.weight_groups);
    let mut out = vec![T::zero(); g.batch * g.c_out * p];
    let mut col = vec![T::zero(); rows * p];
    for b in 0..g.batch {
        if interrupt::poll() {
            return None;
        }
        columns(x, offset, mask, g, b, &mut col);
        for grp in 0..g.weight_groups {
            let dst = &mut out[(b * g.c_out + grp * og_out) * p..][..og_out * p];
            T::gemm(dst, weight, row_major(kg, grp * og_out * kg), &col, row_major(p, grp * kg * p), Dims { m: og_out, k: kg, n: p }, true);
        }
        if let Some(bias) = bias {
            for (c, &bv) in bias.iter().enumerate() {
                for v in &mut out[(b * g.c_out + c) * p..][..p] {
                    *v = *v + bv;
                }
            }
        }
    }
    Some(out)
}

/// Gradients of input, offset, mask (if any) and weight; the bias gradient
/// is the caller's (per-channel sums).
pub struct DeformGrads<T> {
    pub input: Vec<T>,
    pub offset: Vec<T>,
    pub mask: Option<Vec<T>>,
    pub weight: Vec<T>,
}

pub fn backward<T: DeformFloat>(x: &[T], offset: &[T], mask: Option<&[T]>, weight: &[T], gy: &[T], g: &DeformGeom) -> Option<DeformGrads<T>> {
    let (p, rows, hw, cpg) = (g.p(), g.rows(), g.h * g.w, g.c_in / g.offset_groups);
    let (og_out, kg) = (g.c_out / g.weight_groups, rows / g.weight_groups);
    let mut gx = vec![T::zero(); x.len()];
    let mut goff = vec![T::zero(); offset.len()];
    let mut gmask = mask.map(|m| vec![T::zero(); m.len()]);
    let mut gw = vec![T::zero(); weight.len()];
    let mut col = vec![T::zero(); rows * p];
    let mut dcol = vec![T::zero(); rows * p];
    for b in 0..g.batch {
        if interrupt::poll() {
            return None;
        }
        columns(x, offset, mask, g, b, &mut col);
        for grp in 0..g.weight_groups {
            let src = (b * g.c_out + grp * og_out) * p;
            // gw_g += gy_g @ col_g^T; dcol_g = w_g^T @ gy_g.
            T::gemm_into(&mut gw[grp * og_out * kg..][..og_out * kg], kg, true, gy, row_major(p, src), &col, transposed(p, grp * kg * p), Dims { m: og_out, k: p, n: kg }, true);
            T::gemm(&mut dcol[grp * kg * p..][..kg * p], weight, transposed(kg, grp * og_out * kg), gy, row_major(p, src), Dims { m: kg, k: og_out, n: p }, true);
        }
        for c in 0..g.c_in {
            let plane = &x[(b * g.c_in + c) * hw..][..hw];
            let og = c / cpg;
            for ky in 0..g.kh {
                for kx in 0..g.kw {
                    let r = (c * g.kh + ky) * g.kw + kx;
                    for pos in 0..p {
                        let (oy, ox) = (pos / g.ow, pos % g.ow);
                        let (y, xx) = position(g, offset, b, og, ky, kx, oy, ox);
                        let Some(s) = sample(y, xx, g.h, g.w) else { continue };
                        let d = dcol[r * p + pos];
                        let m = mask_at(g, mask, b, og, ky, kx, pos);
                        let (w4, v4) = (s.weights(), s.values(plane));
                        let gplane = &mut gx[(b * g.c_in + c) * hw..][..hw];
                        for (i, &wt) in s.idx.iter().zip(&w4) {
                            if let Some(i) = i {
                                gplane[*i] = gplane[*i] + d * m * wt;
                            }
                        }
                        let one = T::one();
                        let (hy, hx) = (one - s.ly, one - s.lx);
                        let dy = hx * (v4[2] - v4[0]) + s.lx * (v4[3] - v4[1]);
                        let dx = hy * (v4[1] - v4[0]) + s.ly * (v4[3] - v4[2]);
                        let k = (og * g.kh + ky) * g.kw + kx;
                        let base = ((b * g.offset_groups * g.taps() + k) * 2) * p + pos;
                        goff[base] = goff[base] + d * m * dy;
                        goff[base + p] = goff[base + p] + d * m * dx;
                        if let Some(gm) = gmask.as_mut() {
                            let v = w4[0] * v4[0] + w4[1] * v4[1] + w4[2] * v4[2] + w4[3] * v4[3];
                            let at = ((b * g.offset_groups + og) * g.taps() + ky * g.kw + kx) * p + pos;
                            gm[at] = gm[at] + d * v;
                        }
                    }
                }
            }
        }
    }
    Some(DeformGrads { input: gx, offset: goff, mask: gmask, weight: gw })
}
