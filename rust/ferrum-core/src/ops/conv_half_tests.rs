//! bf16 and f16 convolutions, forward and every gradient, against direct
//! f64 loops over the same (rounded) values.
//!
//! Each result is checked within the half format's precision of the sum it
//! stands for: `|got - want| <= 3 * eps * S + eps * |want|`, where `S` sums the
//! magnitudes of the products behind the value and `eps` is the format's
//! unit roundoff. An indexing mistake moves a value by the size of a
//! product, far outside this. Run under `FERRUM_AMX=0` as well for the
//! `vdpbf16ps` or widened bf16 products.

use super::*;
use crate::autodiff::backward;
use crate::ops::binary::BinaryOp;
use crate::DType;

/// Deterministic values in [-1, 1).
fn data(n: usize, seed: f64) -> Vec<f64> {
    (0..n).map(|i| ((i as f64 + 1.0) * seed).sin()).collect()
}

/// A tensor of `dtype` and the f64 values it holds after rounding.
fn half_tensor(shape: &[usize], seed: f64, dtype: DType) -> (Tensor, Vec<f64>) {
    let t = Tensor::from_vec(data(shape.iter().product(), seed), shape).unwrap().cast(dtype).unwrap();
    let v = t.cast(DType::F64).unwrap().to_vec::<f64>();
    (t, v)
}

/// Value and magnitude sums of a result.
#[derive(Clone)]
struct Sums {
    v: Vec<f64>,
    abs: Vec<f64>,
}

impl Sums {
    fn zeros(n: usize) -> Sums {
        Sums { v: vec![0.0; n], abs: vec![0.0; n] }
    }
    fn add(&mut self, i: usize, p: f64) {
        self.v[i] += p;
        self.abs[i] += p.abs();
    }
}

/// The forward and the three gradients (for output gradient `gy`) by
/// their definitions. Returns (y, gx, gw, gb).
#[allow(clippy::needless_range_loop)] // o, c and the taps index several arrays each
fn reference(x: &[f64], w: &[f64], b: &[f64], gy: &[f64], g: &ConvGeom) -> (Sums, Sums, Sums, Sums) {
    let (og, cg, p) = (g.og(), g.cg(), g.p());
    let mut y = Sums::zeros(g.batch * g.c_out * p);
    let mut gx = Sums::zeros(x.len());
    let mut gw = Sums::zeros(w.len());
    let mut gb = Sums::zeros(g.c_out);
    for n in 0..g.batch {
        for o in 0..g.c_out {
            let grp = o / og;
            for oy in 0..g.oh {
                for ox in 0..g.ow {
                    let at = (n * g.c_out + o) * p + oy * g.ow + ox;
                    y.add(at, b[o]);
                    gb.add(o, gy[at]);
                    for c in 0..cg {
                        let ci = grp * cg + c;
                        for ky in 0..g.kh {
                            for kx in 0..g.kw {
                                let iy = (oy * g.stride[0] + ky * g.dilation[0]) as isize - g.pad[0] as isize;
                                let ix = (ox * g.stride[1] + kx * g.dilation[1]) as isize - g.pad[1] as isize;
                                if iy < 0 || ix < 0 || iy >= g.h as isize || ix >= g.w as isize {
                                    continue;
                                }
                                let xi = ((n * g.c_in + ci) * g.h + iy as usize) * g.w + ix as usize;
                                let wi = ((o * cg + c) * g.kh + ky) * g.kw + kx;
                                y.add(at, x[xi] * w[wi]);
                                gx.add(xi, gy[at] * w[wi]);
                                gw.add(wi, gy[at] * x[xi]);
                            }
                        }
                    }
                }
            }
        }
    }
    (y, gx, gw, gb)
}

fn unit_roundoff(dtype: DType) -> f64 {
    match dtype {
        DType::BF16 => 2f64.powi(-8),
        _ => 2f64.powi(-11),
    }
}

fn assert_within(got: &Tensor, want: &Sums, dtype: DType, what: &str) {
    assert_eq!(got.dtype(), dtype, "{what}: dtype");
    let got = got.cast(DType::F64).unwrap().to_vec::<f64>();
    assert_eq!(got.len(), want.v.len(), "{what}: length");
    let eps = unit_roundoff(dtype);
    for (i, ((&a, &b), &s)) in got.iter().zip(&want.v).zip(&want.abs).enumerate() {
        let tol = 3.0 * eps * s + eps * b.abs() + 1e-30;
        assert!((a - b).abs() <= tol, "{what}: element {i}: {a} vs {b} (tolerance {tol:e})");
    }
}

/// (x shape, w shape, stride, (pad before, pad after) per dim, dilation, groups)
type Case = ([usize; 4], [usize; 4], [usize; 2], [(usize, usize); 2], [usize; 2], usize);

const CASES: [Case; 8] = [
    // The guide CNN's second convolution, batch 4.
    ([4, 8, 26, 26], [16, 8, 3, 3], [1, 1], [(0, 0), (0, 0)], [1, 1], 1),
    // One input channel (its first), odd sizes, padding.
    ([3, 1, 11, 9], [5, 1, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1),
    // Stride, asymmetric padding, dilation, groups.
    ([2, 6, 13, 11], [9, 2, 3, 2], [2, 3], [(1, 2), (0, 1)], [2, 1], 3),
    // Depthwise, stride 2.
    ([2, 5, 9, 9], [5, 1, 3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], 5),
    // 1x1 without stride or padding: the GEMM reads the input planes directly.
    ([3, 7, 5, 6], [3, 7, 1, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], 1),
    // 1x1 with groups.
    ([2, 6, 4, 5], [4, 3, 1, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], 2),
    // Many channels and a plane wide enough for several im2col bands.
    ([2, 40, 40, 40], [3, 40, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1),
    // A batch of one large image: the GEMMs thread instead of the batch.
    ([1, 16, 30, 30], [24, 16, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1),
];

fn geom_of(xs: [usize; 4], ws: [usize; 4], stride: [usize; 2], padding: [(usize, usize); 2], dil: [usize; 2], groups: usize) -> ConvGeom {
    let size = |d: usize| (xs[2 + d] + padding[d].0 + padding[d].1 - dil[d] * (ws[2 + d] - 1) - 1) / stride[d] + 1;
    ConvGeom {
        batch: xs[0],
        c_in: xs[1],
        h: xs[2],
        w: xs[3],
        c_out: ws[0],
        oh: size(0),
        ow: size(1),
        kh: ws[2],
        kw: ws[3],
        stride,
        pad: [padding[0].0, padding[1].0],
        dilation: dil,
        groups,
    }
}

#[test]
fn half_conv2d_forward_and_gradients_match_definition() {
    for dtype in [DType::BF16, DType::F16] {
        for (xs, ws, stride, padding, dil, groups) in CASES {
            let g = geom_of(xs, ws, stride, padding, dil, groups);
            let what = format!("{dtype:?} x {xs:?} w {ws:?} stride {stride:?} pad {padding:?} dilation {dil:?} groups {groups}");
            let (x, xv) = half_tensor(&xs, 0.37, dtype);
            let (w, wv) = half_tensor(&ws, 0.11, dtype);
            let (b, bv) = half_tensor(&[ws[0]], 0.5, dtype);
            let (r, rv) = half_tensor(&[g.batch, g.c_out, g.oh, g.ow], 0.77, dtype);
            let (want_y, want_gx, want_gw, want_gb) = reference(&xv, &wv, &bv, &rv, &g);
            let opts = ConvOptions { stride, padding, dilation: dil, groups };
            assert_within(&x.conv2d(&w, Some(&b), &opts).unwrap(), &want_y, dtype, &format!("forward {what}"));
            let (plain, ..) = reference(&xv, &wv, &vec![0.0; ws[0]], &rv, &g);
            assert_within(&x.conv2d(&w, None, &opts).unwrap(), &plain, dtype, &format!("forward without bias {what}"));
            let (xv_, wv_, bv_) = (Var::leaf(x.clone()), Var::leaf(w.clone()), Var::leaf(b.clone()));
            let y = xv_.conv2d(&wv_, Some(&bv_), &opts).unwrap();
            assert_within(&y.value, &want_y, dtype, &format!("tracked forward {what}"));
            // sum(y * r): the output gradient is r itself.
            let loss = y.binary(BinaryOp::Mul, &Var::constant(r)).unwrap().sum().unwrap();
            let grads = backward(&loss).unwrap();
            let grad = |v: &Var| grads.get(v.id().unwrap()).expect("a gradient").clone();
            assert_within(&grad(&xv_), &want_gx, dtype, &format!("input gradient {what}"));
            assert_within(&grad(&wv_), &want_gw, dtype, &format!("weight gradient {what}"));
            assert_within(&grad(&bv_), &want_gb, dtype, &format!("bias gradient {what}"));
        }
    }
}

#[test]
fn half_conv_transpose2d_and_conv1d_match_definition() {
    for dtype in [DType::BF16, DType::F16] {
        // conv_transpose2d(x, w) is the input gradient of the convolution
        // `g`, which maps the transposed output [2, 3, 10, 12] back to x.
        let g = geom_of([2, 3, 10, 12], [4, 3, 3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], 1);
        let (x, xv) = half_tensor(&[2, 4, 5, 6], 0.37, dtype);
        let (w, wv) = half_tensor(&[4, 3, 3, 3], 0.11, dtype);
        let (b, bv) = half_tensor(&[3], 0.5, dtype);
        let (r, rv) = half_tensor(&[2, 3, 10, 12], 0.77, dtype);
        let opts = ConvTransposeOptions { stride: [2, 2], padding: [1, 1], padding_out: [1, 1], dilation: [1, 1], groups: 1 };
        // Forward: the reference's input gradient for output gradient x, plus the bias.
        let (_, mut want_y, _, _) = reference(&vec![0.0; rv.len()], &wv, &[0.0; 4], &xv, &g);
        for (i, v) in want_y.v.iter_mut().enumerate() {
            *v += bv[(i / 120) % 3];
            want_y.abs[i] += bv[(i / 120) % 3].abs();
        }
        // Gradients for output gradient r: x's is conv(r, w), w's the conv weight gradient of r against x.
        let (want_gx, _, want_gw, _) = reference(&rv, &wv, &[0.0; 4], &xv, &g);
        let mut want_gb = Sums::zeros(3);
        for (i, &v) in rv.iter().enumerate() {
            want_gb.add((i / 120) % 3, v);
        }
        let (xv_, wv_, bv_) = (Var::leaf(x), Var::leaf(w), Var::leaf(b));
        let y = xv_.conv_transpose2d(&wv_, Some(&bv_), &opts).unwrap();
        assert_within(&y.value, &want_y, dtype, "conv_transpose2d");
        let grads = backward(&y.binary(BinaryOp::Mul, &Var::constant(r)).unwrap().sum().unwrap()).unwrap();
        let grad = |v: &Var| grads.get(v.id().unwrap()).expect("a gradient").clone();
        assert_within(&grad(&xv_), &want_gx, dtype, "conv_transpose2d input gradient");
        assert_within(&grad(&wv_), &want_gw, dtype, "conv_transpose2d weight gradient");
        assert_within(&grad(&bv_), &want_gb, dtype, "conv_transpose2d bias gradient");

        // conv1d as height 1, stride 2, padding and dilation 2.
        let g1 = geom_of([2, 3, 1, 17], [4, 3, 1, 3], [1, 2], [(0, 0), (1, 2)], [1, 2], 1);
        let (x1, x1v) = half_tensor(&[2, 3, 17], 0.23, dtype);
        let (w1, w1v) = half_tensor(&[4, 3, 3], 0.41, dtype);
        let (b1, b1v) = half_tensor(&[4], 0.9, dtype);
        let (want1, ..) = reference(&x1v, &w1v, &b1v, &vec![0.0; 2 * 4 * g1.ow], &g1);
        let o1 = ConvOptions { stride: [2], padding: [(1, 2)], dilation: [2], groups: 1 };
        assert_within(&x1.conv1d(&w1, Some(&b1), &o1).unwrap(), &want1, dtype, "conv1d");
    }
}

#[test]
fn half_conv_of_mixed_dtypes_is_an_error() {
    let x = Tensor::from_vec(vec![1.0f32; 16], &[1, 1, 4, 4]).unwrap().cast(DType::BF16).unwrap();
    let w = Tensor::from_vec(vec![1.0f32; 9], &[1, 1, 3, 3]).unwrap();
    let err = x.conv2d(&w, None, &ConvOptions::default()).unwrap_err().to_string();
    assert!(err.contains("conv2d"), "{err}");
    let wf16 = w.cast(DType::F16).unwrap();
    assert!(x.conv2d(&wf16, None, &ConvOptions::default()).is_err());
}
