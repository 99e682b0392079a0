//! im2col / col2im for 2-D convolution (1-D convolution runs as height 1).
//!
//! `im2col` lays the receptive fields of a band of output rows out as the
//! columns of a `[c * kh * kw, rows * ow]` matrix, so a convolution becomes a
//! GEMM with the weight matrix; `col2im` adds such a matrix back onto an
//! image, which is how the input gradient is formed. Both walk whole output
//! rows: the valid column range of each kernel tap is computed once per row
//! band, so the inner loops are plain copies without bounds checks.

use std::ops::Range;

use crate::element::Element;

/// Geometry of one 2-D convolution: input `[batch, c_in, h, w]`, weight
/// `[c_out, c_in / groups, kh, kw]`, output `[batch, c_out, oh, ow]`.
/// `pad` holds the leading padding of each dim; the trailing padding only
/// shows in the output size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeom {
    pub batch: usize,
    pub c_in: usize,
    pub h: usize,
    pub w: usize,
    pub c_out: usize,
    pub oh: usize,
    pub ow: usize,
    pub kh: usize,
    pub kw: usize,
    pub stride: [usize; 2],
    pub pad: [usize; 2],
    pub dilation: [usize; 2],
    pub groups: usize,
}

impl ConvGeom {
    /// Input channels per group.
    pub fn cg(&self) -> usize {
        self.c_in / self.groups
    }

    /// Output channels per group.
    pub fn og(&self) -> usize {
        self.c_out / self.groups
    }

    /// Rows of the im2col matrix: one per (channel, kernel tap) of a group.
    pub fn k(&self) -> usize {
        self.cg() * self.kh * self.kw
    }

    /// Output positions per image and channel.
    pub fn p(&self) -> usize {
        self.oh * self.ow
    }

    /// Input positions per image and channel.
    pub fn hw(&self) -> usize {
        self.h * self.w
    }

    /// A 1x1 kernel over the unpadded, unstrided input: the input plane is
    /// already the im2col matrix, so the GEMM reads it directly.
    pub fn is_pointwise(&self) -> bool {
        self.kh == 1 && self.kw == 1 && self.stride == [1, 1] && self.pad == [0, 0] && self.oh == self.h && self.ow == self.w
    }
}

/// Output columns `lo..hi` whose tap at input offset `off` (kernel offset
/// minus padding, before striding) falls inside `0..n`.
#[inline]
pub(crate) fn valid_cols(out: usize, stride: usize, pad: usize, tap: usize, n: usize) -> (usize, usize) {
    // Column o reads input o * stride + tap - pad; it must lie in 0..n.
    let lo = if pad > tap { (pad - tap).div_ceil(stride) } else { 0 };
    let hi = if n + pad > tap { (n + pad - tap).div_ceil(stride).min(out) } else { 0 };
    (lo.min(hi), hi)
}

/// One (kernel tap, output row band) pass shared by im2col and col2im:
/// calls `f(out_row_slot, input_row, lo, hi, iw0)` for each output row in
/// `rows` whose input row is inside the image; rows that fall in the padding
/// are reported with `input_row = None`.
#[inline]
fn for_tap_rows(g: &ConvGeom, ki: usize, rows: &Range<usize>, mut f: impl FnMut(usize, Option<usize>)) {
    let [sh, _] = g.stride;
    let [ph, _] = g.pad;
    let [dh, _] = g.dilation;
    for (t, oh) in rows.clone().enumerate() {
        let ih = oh * sh + ki * dh;
        f(t, (ih >= ph && ih - ph < g.h).then(|| ih - ph));
    }
}

/// Write the im2col matrix of output rows `rows` for `x`, the `[cg, h, w]`
/// planes of one group of one image, into `col` (`[k, rows.len() * ow]`).
pub fn im2col<T: Element>(x: &[T], g: &ConvGeom, rows: Range<usize>, col: &mut [T]) {
    let (ow, hw, w) = (g.ow, g.hw(), g.w);
    let [_, sw] = g.stride;
    let [_, pw] = g.pad;
    let [_, dw] = g.dilation;
    let np = rows.len() * ow;
    let mut r = 0;
    for c in 0..g.cg() {
        let plane = &x[c * hw..(c + 1) * hw];
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let dst = &mut col[r * np..(r + 1) * np];
                r += 1;
                let (lo, hi) = valid_cols(ow, sw, pw, kj * dw, w);
                for_tap_rows(g, ki, &rows, |t, ih| {
                    let d = &mut dst[t * ow..(t + 1) * ow];
                    let Some(ih) = ih.filter(|_| lo < hi) else {
                        d.fill(T::ZERO);
                        return;
                    };
                    d[..lo].fill(T::ZERO);
                    d[hi..].fill(T::ZERO);
                    let src = &plane[ih * w..(ih + 1) * w];
                    let iw0 = lo * sw + kj * dw - pw;
                    if sw == 1 {
                        d[lo..hi].copy_from_slice(&src[iw0..iw0 + hi - lo]);
                    } else {
                        for (v, s) in d[lo..hi].iter_mut().zip(src[iw0..].iter().step_by(sw)) {
                            *v = *s;
                        }
                    }
                });
            }
        }
    }
}

/// Add the im2col-shaped `col` (`[k, rows.len() * ow]`) of output rows
/// `rows` back onto `x`, the `[cg, h, w]` planes of one group of one image.
pub fn col2im<T: Element + std::ops::AddAssign>(col: &[T], g: &ConvGeom, rows: Range<usize>, x: &mut [T]) {
    let (ow, hw, w) = (g.ow, g.hw(), g.w);
    let [_, sw] = g.stride;
    let [_, pw] = g.pad;
    let [_, dw] = g.dilation;
    let np = rows.len() * ow;
    let mut r = 0;
    for c in 0..g.cg() {
        let plane = &mut x[c * hw..(c + 1) * hw];
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let src = &col[r * np..(r + 1) * np];
                r += 1;
                let (lo, hi) = valid_cols(ow, sw, pw, kj * dw, w);
                if lo >= hi {
                    continue;
                }
                for_tap_rows(g, ki, &rows, |t, ih| {
                    let Some(ih) = ih else { return };
                    let s = &src[t * ow + lo..t * ow + hi];
                    let dst = &mut plane[ih * w..(ih + 1) * w];
                    let iw0 = lo * sw + kj * dw - pw;
                    if sw == 1 {
                        for (d, v) in dst[iw0..iw0 + hi - lo].iter_mut().zip(s) {
                            *d += *v;
                        }
                    } else {
                        for (d, v) in dst[iw0..].iter_mut().step_by(sw).zip(s) {
                            *d += *v;
                        }
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geom(h: usize, w: usize, k: usize, stride: usize, pad: usize, dil: usize) -> ConvGeom {
        let out = |n: usize| (n + 2 * pad - dil * (k - 1) - 1) / stride + 1;
        ConvGeom {
            batch: 1,
            c_in: 2,
            h,
            w,
            c_out: 1,
            oh: out(h),
            ow: out(w),
            kh: k,
            kw: k,
            stride: [stride, stride],
            pad: [pad, pad],
            dilation: [dil, dil],
            groups: 1,
        }
    }

    /// The definition, one element at a time.
    fn naive_im2col(x: &[f64], g: &ConvGeom) -> Vec<f64> {
        let mut col = Vec::new();
        for c in 0..g.cg() {
            for ki in 0..g.kh {
                for kj in 0..g.kw {
                    for oh in 0..g.oh {
                        for ow in 0..g.ow {
                            let ih = (oh * g.stride[0] + ki * g.dilation[0]) as isize - g.pad[0] as isize;
                            let iw = (ow * g.stride[1] + kj * g.dilation[1]) as isize - g.pad[1] as isize;
                            let inside = ih >= 0 && iw >= 0 && (ih as usize) < g.h && (iw as usize) < g.w;
                            col.push(if inside { x[c * g.hw() + ih as usize * g.w + iw as usize] } else { 0.0 });
                        }
                    }
                }
            }
        }
        col
    }

    #[test]
    fn im2col_matches_definition_and_col2im_is_its_adjoint() {
        for (h, w, k, s, p, d) in [(5, 6, 3, 1, 1, 1), (7, 5, 3, 2, 2, 1), (6, 6, 2, 3, 0, 2), (7, 9, 3, 2, 1, 3), (3, 3, 1, 1, 0, 1)] {
            let g = geom(h, w, k, s, p, d);
            let x: Vec<f64> = (0..2 * h * w).map(|i| (i as f64 * 0.7).sin()).collect();
            let want = naive_im2col(&x, &g);
            // Whole image, then in bands of one row.
            let mut col = vec![f64::NAN; g.k() * g.p()];
            im2col(&x, &g, 0..g.oh, &mut col);
            assert_eq!(col, want, "geometry {g:?}");
            for r in 0..g.oh {
                let mut band = vec![f64::NAN; g.k() * g.ow];
                im2col(&x, &g, r..r + 1, &mut band);
                for row in 0..g.k() {
                    assert_eq!(band[row * g.ow..(row + 1) * g.ow], want[row * g.p() + r * g.ow..row * g.p() + (r + 1) * g.ow]);
                }
            }
            // <im2col(x), c> == <x, col2im(c)> for any c.
            let c: Vec<f64> = (0..g.k() * g.p()).map(|i| (i as f64 * 0.3).cos()).collect();
            let mut back = vec![0.0; x.len()];
            col2im(&c, &g, 0..g.oh, &mut back);
            let lhs: f64 = want.iter().zip(&c).map(|(a, b)| a * b).sum();
            let rhs: f64 = x.iter().zip(&back).map(|(a, b)| a * b).sum();
            assert!((lhs - rhs).abs() < 1e-9, "{lhs} vs {rhs} for {g:?}");
        }
    }
}
