//! 3-D convolution kernels: vol2col (the 3-D im2col) and its adjoint
//! col2vol, and the forward, input-gradient and weight-gradient passes built
//! on them with one GEMM per image and group.
//!
//! For an image, `col` is `[cg * kd * kh * kw, od * oh * ow]`: row `(c, a, b,
//! e)` holds input channel `c` read at kernel tap `(a, b, e)` for every
//! output position (zero where the tap falls in the padding).

use super::gemm::{Dims, GemmElement, Mat};
use crate::element::Element;
use crate::interrupt;

/// Geometry of one 3-D convolution: input `[batch, c_in, d, h, w]`, weight
/// `[c_out, c_in / groups, kd, kh, kw]`, output `[batch, c_out, od, oh, ow]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geom3 {
    pub batch: usize,
    pub c_in: usize,
    pub c_out: usize,
    pub input: [usize; 3],
    pub output: [usize; 3],
    pub kernel: [usize; 3],
    pub stride: [usize; 3],
    pub pad: [usize; 3],
    pub dilation: [usize; 3],
    pub groups: usize,
}

impl Geom3 {
    fn cg(&self) -> usize {
        self.c_in / self.groups
    }
    fn og(&self) -> usize {
        self.c_out / self.groups
    }
    fn taps(&self) -> usize {
        self.kernel.iter().product()
    }
    /// Rows of the col matrix (one per input channel of a group and tap).
    pub fn k(&self) -> usize {
        self.cg() * self.taps()
    }
    /// Output positions per channel.
    pub fn p(&self) -> usize {
        self.output.iter().product()
    }
    /// Input positions per channel.
    pub fn vol(&self) -> usize {
        self.input.iter().product()
    }

    /// The input index along dim `d` that output `o` reads at tap `t`, if inside.
    #[inline]
    fn src(&self, d: usize, o: usize, t: usize) -> Option<usize> {
        (o * self.stride[d] + t * self.dilation[d]).checked_sub(self.pad[d]).filter(|&i| i < self.input[d])
    }

    /// Call `f(row, col_index, input_index)` for every in-bounds entry of the
    /// col matrix of one group (`input_index` within the group's channels).
    fn walk(&self, mut f: impl FnMut(usize, usize, usize)) {
        let [kd, kh, kw] = self.kernel;
        let [od, oh, ow] = self.output;
        let [_, h, w] = self.input;
        let vol = self.vol();
        let mut row = 0;
        for c in 0..self.cg() {
            for a in 0..kd {
                for b in 0..kh {
                    for e in 0..kw {
                        for z in 0..od {
                            let Some(iz) = self.src(0, z, a) else { continue };
                            for y in 0..oh {
                                let Some(iy) = self.src(1, y, b) else { continue };
                                for x in 0..ow {
                                    if let Some(ix) = self.src(2, x, e) {
                                        f(row, (z * oh + y) * ow + x, c * vol + (iz * h + iy) * w + ix);
                                    }
                                }
                            }
                        }
                        row += 1;
                    }
                }
            }
        }
    }
}

fn vol2col<T: Element>(x: &[T], g: &Geom3, col: &mut [T]) {
    col.fill(T::ZERO);
    let p = g.p();
    g.walk(|r, o, i| col[r * p + o] = x[i]);
}

fn col2vol<T: Element + std::ops::AddAssign>(col: &[T], g: &Geom3, x: &mut [T]) {
    let p = g.p();
    g.walk(|r, o, i| x[i] += col[r * p + o]);
}

fn row_major(cols: usize, offset: usize) -> Mat {
    Mat { offset, rs: cols as isize, cs: 1 }
}

fn transposed(cols: usize, offset: usize) -> Mat {
    Mat { offset, rs: 1, cs: cols as isize }
}

/// Elements the 3-D kernels run on.
pub trait Conv3Element: Element + GemmElement + std::ops::AddAssign {}
impl<T: Element + GemmElement + std::ops::AddAssign> Conv3Element for T {}

/// `conv3d(x, w) + bias`; `None` when interrupted.
pub fn forward<T: Conv3Element>(x: &[T], w: &[T], bias: Option<&[T]>, g: &Geom3) -> Option<Vec<T>> {
    let (k, p, og, cg) = (g.k(), g.p(), g.og(), g.cg());
    let mut out = vec![T::ZERO; g.batch * g.c_out * p];
    let mut col = vec![T::ZERO; k * p];
    for b in 0..g.batch {
        for grp in 0..g.groups {
            if interrupt::poll() {
                return None;
            }
            vol2col(&x[(b * g.c_in + grp * cg) * g.vol()..][..cg * g.vol()], g, &mut col);
            let dst = &mut out[(b * g.c_out + grp * og) * p..][..og * p];
            T::gemm(dst, w, row_major(k, grp * og * k), &col, row_major(p, 0), Dims { m: og, k, n: p }, true);
        }
        if let Some(bias) = bias {
            for (c, &bv) in bias.iter().enumerate() {
                for v in &mut out[(b * g.c_out + c) * p..][..p] {
                    *v += bv;
                }
            }
        }
    }
    Some(out)
}

/// The gradient of `conv3d(x, w)` with respect to `x`, from `gy`.
pub fn backward_input<T: Conv3Element>(gy: &[T], w: &[T], g: &Geom3) -> Option<Vec<T>> {
    let (k, p, og, cg) = (g.k(), g.p(), g.og(), g.cg());
    let mut gx = vec![T::ZERO; g.batch * g.c_in * g.vol()];
    let mut col = vec![T::ZERO; k * p];
    for b in 0..g.batch {
        for grp in 0..g.groups {
            if interrupt::poll() {
                return None;
            }
            // col = w_g^T @ gy_g: [k, og] @ [og, p].
            let src = (b * g.c_out + grp * og) * p;
            T::gemm(&mut col, w, transposed(k, grp * og * k), gy, row_major(p, src), Dims { m: k, k: og, n: p }, true);
            col2vol(&col, g, &mut gx[(b * g.c_in + grp * cg) * g.vol()..][..cg * g.vol()]);
        }
    }
    Some(gx)
}

/// The gradient of `conv3d(x, w)` with respect to `w`, from `gy`.
pub fn backward_weight<T: Conv3Element>(x: &[T], gy: &[T], g: &Geom3) -> Option<Vec<T>> {
    let (k, p, og, cg) = (g.k(), g.p(), g.og(), g.cg());
    let mut gw = vec![T::ZERO; g.c_out * k];
    let mut col = vec![T::ZERO; k * p];
    for b in 0..g.batch {
        for grp in 0..g.groups {
            if interrupt::poll() {
                return None;
            }
            vol2col(&x[(b * g.c_in + grp * cg) * g.vol()..][..cg * g.vol()], g, &mut col);
            // gw_g += gy_g @ col^T: [og, p] @ [p, k].
            let dst = &mut gw[grp * og * k..][..og * k];
            let src = (b * g.c_out + grp * og) * p;
            T::gemm_into(dst, k, true, gy, row_major(p, src), &col, transposed(p, 0), Dims { m: og, k: p, n: k }, true);
        }
    }
    Some(gw)
}

/// Per-channel sums of `[batch, channels, positions]`: a bias gradient.
pub fn channel_sums<T: Conv3Element>(gy: &[T], batch: usize, channels: usize, per: usize) -> Vec<T> {
    let mut out = vec![T::ZERO; channels];
    for b in 0..batch {
        for (c, s) in out.iter_mut().enumerate() {
            for &v in &gy[(b * channels + c) * per..][..per] {
                *s += v;
            }
        }
    }
    out
}
