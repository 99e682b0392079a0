//! The forward of a depthwise 2-D convolution (one input channel per group,
//! as in MobileNet and EfficientNet) as a direct loop: each output plane is
//! the sum over the kernel's taps of a weight times a shifted (and, with a
//! stride, subsampled) run of one input row, a loop that vectorises along
//! the output row.
//!
//! Through im2col and GEMM, each group was a product of one output channel
//! (one of the tile's 6 or 12 rows) and the whole convolution one product
//! per group: a 288-channel 5x5 depthwise layer on a 2x2 image made 288
//! calls, each copying its window matrix, for 29 thousand multiply-adds.

use std::ops::{AddAssign, Mul};

use super::conv_batch::threaded;
use super::im2col::ConvGeom;
use super::parallel::simd;
use super::team;
use crate::element::Element;

/// Output channels per group up to which [`forward`] takes a convolution
/// with one input channel per group (a channel multiplier of 1 in
/// MobileNet; the GEMM routes need a few rows per group to pay).
pub const MAX_MULTIPLIER: usize = 8;

/// Whether [`forward`] takes `g`: one input channel per group, a few
/// output channels per group and something to compute.
pub fn applies(g: &ConvGeom) -> bool {
    g.cg() == 1 && g.groups > 1 && g.og() <= MAX_MULTIPLIER && g.p() > 0 && g.kh > 0 && g.kw > 0
}

/// `conv(x, w)` for a `g` that [`applies`], then `finish(plane, values)` on
/// each output plane (`plane` = image * c_out + channel, `values` its
/// `oh * ow` outputs): `x` `[batch, c_in, h, w]`, `w` `[c_out, 1, kh, kw]`,
/// the result `[batch, c_out, oh, ow]`. Planes run on the team's threads
/// when the convolution is large enough.
pub fn forward<T>(x: &[T], w: &[T], g: &ConvGeom, finish: impl Fn(usize, &mut [T]) + Sync) -> Vec<T>
where
    T: Element + AddAssign + Mul<Output = T>,
{
    let (p, taps) = (g.p(), g.kh * g.kw);
    assert!(x.len() >= g.batch * g.c_in * g.hw() && w.len() >= g.c_out * taps, "depthwise conv: buffers smaller than the geometry");
    let mut y = vec![T::ZERO; g.batch * g.c_out * p];
    if y.is_empty() {
        return y;
    }
    let plane = |i: usize, out: &mut [T]| {
        let (image, o) = (i / g.c_out, i % g.c_out);
        let c = o / g.og();
        let src = &x[(image * g.c_in + c) * g.hw()..][..g.hw()];
        let kernel = &w[o * taps..][..taps];
        simd(
            #[inline(always)]
            || plane_sum(src, kernel, g, out),
        );
        finish(i, out);
    };
    if threaded(g) {
        team::for_each_chunk_mut(&mut y, p, plane);
    } else {
        y.chunks_mut(p).enumerate().for_each(|(i, out)| plane(i, out));
    }
    y
}

/// The output columns `lo..hi` whose tap at kernel column offset `off`
/// (`kx * dilation`) lands inside a row of `w` inputs, and the input
/// column of the first.
#[inline(always)]
fn columns(off: usize, g: &ConvGeom) -> Option<(usize, usize, usize)> {
    let (sw, pw) = (g.stride[1], g.pad[1]);
    // input column ix = ox * sw + off - pw must lie in 0..w
    let lo = pw.saturating_sub(off).div_ceil(sw);
    let last = (g.w - 1 + pw).checked_sub(off)? / sw;
    let hi = (last + 1).min(g.ow);
    (lo < hi).then(|| (lo, hi, lo * sw + off - pw))
}

/// One output plane: `out[oy, ox] = sum over taps of kernel[ky, kx] *
/// src[oy * sh + ky * dh - ph, ox * sw + kx * dw - pw]`, padding as zeros.
#[inline(always)]
fn plane_sum<T>(src: &[T], kernel: &[T], g: &ConvGeom, out: &mut [T])
where
    T: Element + AddAssign + Mul<Output = T>,
{
    let ([sh, sw], [dh, dw], ph) = (g.stride, g.dilation, g.pad[0]);
    for (oy, row) in out.chunks_exact_mut(g.ow).enumerate() {
        for ky in 0..g.kh {
            let Some(iy) = (oy * sh + ky * dh).checked_sub(ph).filter(|&iy| iy < g.h) else { continue };
            let input = &src[iy * g.w..(iy + 1) * g.w];
            for kx in 0..g.kw {
                let Some((lo, hi, start)) = columns(kx * dw, g) else { continue };
                let wv = kernel[ky * g.kw + kx];
                if sw == 1 {
                    for (o, &v) in row[lo..hi].iter_mut().zip(&input[start..start + (hi - lo)]) {
                        *o += wv * v;
                    }
                } else {
                    for (o, &v) in row[lo..hi].iter_mut().zip(input[start..].iter().step_by(sw)) {
                        *o += wv * v;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::conv_reference::{assert_close, conv_forward_naive_f64, geom, values};
    use crate::kernels::epilogue::Epilogue;

    #[test]
    fn depthwise_matches_a_naive_f64_convolution() {
        let cases = [
            geom(1, 288, (2, 2), 288, (5, 5), [1, 1], [2, 2], [1, 1], 288),
            geom(2, 7, (9, 11), 7, (3, 3), [2, 2], [1, 1], [1, 1], 7),
            geom(3, 5, (10, 7), 10, (3, 5), [1, 2], [2, 0], [2, 1], 5),
            geom(1, 4, (6, 6), 4, (3, 3), [3, 1], [0, 3], [1, 2], 4),
            // a kernel wider than the padded image's interior: some taps never land
            geom(2, 3, (3, 2), 3, (5, 5), [1, 1], [2, 2], [1, 1], 3),
            // large enough to run on the team
            geom(4, 48, (32, 32), 48, (3, 3), [1, 1], [1, 1], [1, 1], 48),
        ];
        for g in cases {
            assert!(applies(&g));
            let x = values(g.batch * g.c_in * g.hw(), 7);
            let w = values(g.c_out * g.k(), 8);
            let y = forward(&x, &w, &g, |_, _| {});
            assert_close(&y, &conv_forward_naive_f64(&x, &w, Epilogue::default(), &g), g.k(), &format!("{g:?}"));
            // f64 too, and the finishing pass sees each plane once with its index
            let (x64, w64): (Vec<f64>, Vec<f64>) = (x.iter().map(|&v| f64::from(v)).collect(), w.iter().map(|&v| f64::from(v)).collect());
            let y64 = forward(&x64, &w64, &g, |i, plane| plane.iter_mut().for_each(|v| *v += i as f64));
            let expected = conv_forward_naive_f64(&x, &w, Epilogue::default(), &g);
            for (at, (a, b)) in y64.iter().zip(&expected).enumerate() {
                let plane = (at / g.p()) as f64;
                assert!((a - plane - b).abs() <= 1e-9 * (1.0 + b.abs()), "{g:?} f64 at {at}");
            }
        }
    }

    #[test]
    fn takes_one_input_channel_per_group_only() {
        assert!(!applies(&geom(1, 8, (4, 4), 8, (3, 3), [1, 1], [1, 1], [1, 1], 4)));
        assert!(!applies(&geom(1, 8, (4, 4), 8, (3, 3), [1, 1], [1, 1], [1, 1], 1)));
        assert!(!applies(&geom(1, 2, (4, 4), 32, (3, 3), [1, 1], [1, 1], [1, 1], 2)));
    }
}
