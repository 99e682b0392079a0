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
    if across_applies(g) {
        forward_across(x, w, g, &mut y, &finish);
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

/// Channels [`forward_across`] computes side by side, one per vector lane.
const LANES: usize = 16;

/// Positions of the zero-padded input plane up to which [`forward_across`]
/// takes a convolution: its `LANES` interleaved planes (256 KiB of f32)
/// stay in L2.
const ACROSS_MAX_POSITIONS: usize = 4096;

/// The rows and columns of the zero-padded input that the windows of `g` reach.
fn padded(g: &ConvGeom) -> (usize, usize) {
    ((g.oh - 1) * g.stride[0] + (g.kh - 1) * g.dilation[0] + 1, (g.ow - 1) * g.stride[1] + (g.kw - 1) * g.dilation[1] + 1)
}

/// Whether [`forward_across`] takes `g`: output rows too short to fill a
/// vector, or strided (read with a stride, a row does not vectorise),
/// and a padded plane small enough.
fn across_applies(g: &ConvGeom) -> bool {
    let (hp, wp) = padded(g);
    (g.ow < LANES || g.stride[1] > 1) && hp.saturating_mul(wp) <= ACROSS_MAX_POSITIONS
}

/// [`forward`] vectorised across channels rather than along rows: for each
/// block of `LANES` output channels, their input planes are interleaved
/// (zero-padded, channel fastest) so that every tap at an output position
/// is one multiply-add of `LANES` channels. MobileNetV3 and EfficientNet
/// run their depthwise layers on planes of 2x2 to 16x16 outputs, where the
/// per-plane loop spent its time on bounds and row set-up, not on sums (a
/// 120-channel 5x5 layer on 4x4 planes: 48 thousand multiply-adds).
fn forward_across<T>(x: &[T], w: &[T], g: &ConvGeom, y: &mut [T], finish: &(impl Fn(usize, &mut [T]) + Sync))
where
    T: Element + AddAssign + Mul<Output = T>,
{
    let (p, taps, (hp, wp)) = (g.p(), g.kh * g.kw, padded(g));
    // Output channels cb * LANES.. of image `image` into `out` (their planes, one after another).
    let block = |image: usize, cb: usize, out: &mut [T]| {
        let first = cb * LANES;
        let n = out.len() / p;
        let mut xt = vec![T::ZERO; hp * wp * LANES];
        let mut wt = vec![T::ZERO; taps * LANES];
        for l in 0..n {
            let o = first + l;
            let src = &x[(image * g.c_in + o / g.og()) * g.hw()..][..g.hw()];
            for (iy, row) in src.chunks_exact(g.w).enumerate().take(hp.saturating_sub(g.pad[0])) {
                let py = iy + g.pad[0];
                for (ix, &v) in row.iter().enumerate().take(wp.saturating_sub(g.pad[1])) {
                    xt[(py * wp + ix + g.pad[1]) * LANES + l] = v;
                }
            }
            for (t, &v) in w[o * taps..][..taps].iter().enumerate() {
                wt[t * LANES + l] = v;
            }
        }
        simd(
            #[inline(always)]
            || {
                for oy in 0..g.oh {
                    for ox in 0..g.ow {
                        let mut acc = [T::ZERO; LANES];
                        for ky in 0..g.kh {
                            let row = (oy * g.stride[0] + ky * g.dilation[0]) * wp + ox * g.stride[1];
                            for kx in 0..g.kw {
                                let xs = &xt[(row + kx * g.dilation[1]) * LANES..][..LANES];
                                let ws = &wt[(ky * g.kw + kx) * LANES..][..LANES];
                                for ((a, &xv), &wv) in acc.iter_mut().zip(xs).zip(ws) {
                                    *a += wv * xv;
                                }
                            }
                        }
                        for (l, &a) in acc.iter().enumerate().take(n) {
                            out[l * p + oy * g.ow + ox] = a;
                        }
                    }
                }
            },
        );
        for (l, plane) in out.chunks_mut(p).enumerate() {
            finish(image * g.c_out + first + l, plane);
        }
    };
    let chunk = LANES * p;
    if g.batch == 1 {
        if threaded(g) {
            team::for_each_chunk_mut(y, chunk, |cb, out| block(0, cb, out));
        } else {
            y.chunks_mut(chunk).enumerate().for_each(|(cb, out)| block(0, cb, out));
        }
        return;
    }
    let image = |i: usize, yi: &mut [T]| yi.chunks_mut(chunk).enumerate().for_each(|(cb, out)| block(i, cb, out));
    if threaded(g) {
        team::for_each_chunk_mut(y, g.c_out * p, image);
    } else {
        y.chunks_mut(g.c_out * p).enumerate().for_each(|(i, yi)| image(i, yi));
    }
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
            // across channels: MobileNetV3's 5x5 layers on small planes, a partial block of lanes,
            // a channel multiplier of 3, on the team at batch 1 and per image at batch 3
            geom(1, 120, (4, 4), 120, (5, 5), [1, 1], [2, 2], [1, 1], 120),
            geom(1, 48, (32, 32), 48, (3, 3), [2, 2], [1, 1], [1, 1], 48),
            geom(2, 5, (7, 6), 15, (3, 3), [1, 2], [1, 0], [1, 2], 5),
            geom(3, 40, (16, 16), 40, (3, 3), [2, 2], [1, 1], [1, 1], 40),
            geom(1, 256, (12, 12), 256, (5, 5), [1, 1], [2, 2], [1, 1], 256),
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
    fn both_routes_are_exercised() {
        assert!(across_applies(&geom(1, 120, (4, 4), 120, (5, 5), [1, 1], [2, 2], [1, 1], 120)));
        assert!(across_applies(&geom(1, 48, (32, 32), 48, (3, 3), [2, 2], [1, 1], [1, 1], 48)));
        assert!(!across_applies(&geom(4, 48, (32, 32), 48, (3, 3), [1, 1], [1, 1], [1, 1], 48)));
        // a padded plane past the limit stays on the per-plane loop, strided or not
        assert!(!across_applies(&geom(1, 8, (130, 130), 8, (3, 3), [2, 2], [1, 1], [1, 1], 8)));
        assert!(threaded(&geom(1, 256, (12, 12), 256, (5, 5), [1, 1], [2, 2], [1, 1], 256)) || rayon::current_num_threads() == 1);
    }

    #[test]
    fn takes_one_input_channel_per_group_only() {
        assert!(!applies(&geom(1, 8, (4, 4), 8, (3, 3), [1, 1], [1, 1], [1, 1], 4)));
        assert!(!applies(&geom(1, 8, (4, 4), 8, (3, 3), [1, 1], [1, 1], [1, 1], 1)));
        assert!(!applies(&geom(1, 2, (4, 4), 32, (3, 3), [1, 1], [1, 1], [1, 1], 2)));
    }
}
