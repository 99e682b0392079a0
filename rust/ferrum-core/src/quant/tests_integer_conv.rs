//! The integer convolution against a naive i64 evaluation of ONNX's
//! `ConvInteger` definition, and `DynamicQuantizeLinear` against
//! hand-computed values and a per-element evaluation of its formula.

use super::{conv2d_u8s8, dynamic_quantize_u8, IntConv2d};
use crate::tensor::Tensor;

/// `Σ (x - zx) * (w - zw[o])` over each output's receptive field, the
/// padding contributing 0, in i64.
#[allow(clippy::too_many_arguments)]
pub(super) fn reference(x: &[i64], xs: [usize; 4], zx: i64, w: &[i64], ws: [usize; 4], zw: &[i64], g: &IntConv2d) -> (Vec<i64>, [usize; 4]) {
    let [n, c, h, wd] = xs;
    let [co, cg, kh, kw] = ws;
    let oh = (h + g.pads[0] + g.pads[2] - g.dilation[0] * (kh - 1) - 1) / g.stride[0] + 1;
    let ow = (wd + g.pads[1] + g.pads[3] - g.dilation[1] * (kw - 1) - 1) / g.stride[1] + 1;
    let co_g = co / g.groups;
    let mut out = vec![0i64; n * co * oh * ow];
    for b in 0..n {
        for o in 0..co {
            let gi = o / co_g;
            let z = if zw.len() == 1 { zw[0] } else { zw[o] };
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut s = 0i64;
                    for ci in 0..cg {
                        let cin = gi * cg + ci;
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let iy = (oy * g.stride[0] + ky * g.dilation[0]) as i64 - g.pads[0] as i64;
                                let ix = (ox * g.stride[1] + kx * g.dilation[1]) as i64 - g.pads[1] as i64;
                                if iy < 0 || ix < 0 || iy >= h as i64 || ix >= wd as i64 {
                                    continue;
                                }
                                let xv = x[((b * c + cin) * h + iy as usize) * wd + ix as usize] - zx;
                                let wv = w[((o * cg + ci) * kh + ky) * kw + kx] - z;
                                s += xv * wv;
                            }
                        }
                    }
                    out[((b * co + o) * oh + oy) * ow + ox] = s;
                }
            }
        }
    }
    (out, [n, co, oh, ow])
}

#[test]
fn integer_conv_matches_the_definition() {
    let conv = |stride: [usize; 2], pads: [usize; 4], dilation: [usize; 2], groups: usize| IntConv2d { stride, pads, dilation, groups };
    // (x shape, w shape, geometry, x zero, w zero per channel?)
    let cases = [
        ([2, 3, 7, 6], [4, 3, 3, 3], conv([1, 1], [0; 4], [1, 1], 1), 0, false),
        ([1, 3, 9, 8], [5, 3, 3, 2], conv([2, 1], [1, 2, 0, 1], [1, 1], 1), 128, true),
        ([2, 4, 8, 8], [6, 2, 3, 3], conv([1, 2], [1, 1, 1, 1], [2, 1], 2), 17, true),
        ([1, 6, 5, 5], [6, 1, 3, 3], conv([1, 1], [1, 1, 1, 1], [1, 1], 6), 255, false),
        ([1, 40, 6, 6], [33, 40, 3, 3], conv([1, 1], [1, 1, 1, 1], [1, 1], 1), 3, true),
    ];
    for (case, &(xs, ws, g, zx, per_channel)) in cases.iter().enumerate() {
        let x: Vec<i64> = (0..xs.iter().product::<usize>()).map(|i| if i % 13 == 0 { 255 } else { ((i * 37 + case) % 256) as i64 }).collect();
        let w: Vec<i64> = (0..ws.iter().product::<usize>()).map(|i| if i % 11 == 0 { -128 } else { ((i * 29 + 3 * case) % 256) as i64 - 128 }).collect();
        let zw: Vec<i64> = if per_channel { (0..ws[0]).map(|o| (o as i64 * 37) % 256 - 128).collect() } else { vec![-5] };
        let (want, shape) = reference(&x, xs, zx, &w, ws, &zw, &g);
        let xt = Tensor::from_vec(x.clone(), &xs).unwrap();
        let wt = Tensor::from_vec(w.clone(), &ws).unwrap();
        let got = conv2d_u8s8(&xt, zx, &wt, &zw, &g).unwrap().expect("values fit u8 and s8");
        assert_eq!(got.shape(), shape, "case {case}");
        // ONNX's int32 output: the true sums fit here, so wrapping changes nothing.
        assert_eq!(got.to_vec::<i64>(), want, "case {case}");
    }
}

#[test]
fn integer_conv_refuses_what_it_cannot_take() {
    let g = IntConv2d { stride: [1, 1], pads: [0; 4], dilation: [1, 1], groups: 1 };
    let x = Tensor::from_vec(vec![1i64, 2, 3, 300], &[1, 1, 2, 2]).unwrap();
    let w = Tensor::from_vec(vec![1i64], &[1, 1, 1, 1]).unwrap();
    // A value outside u8, a zero point outside s8: the caller's general path.
    assert!(conv2d_u8s8(&x, 0, &w, &[0], &g).unwrap().is_none());
    let x = Tensor::from_vec(vec![1i64, 2, 3, 4], &[1, 1, 2, 2]).unwrap();
    assert!(conv2d_u8s8(&x, 0, &w, &[200], &g).unwrap().is_none());
    // Channels that do not split into the groups, a kernel larger than the input: errors naming them.
    let bad = IntConv2d { groups: 2, ..g };
    let err = conv2d_u8s8(&x, 0, &w, &[0], &bad).unwrap_err().to_string();
    assert!(err.contains("2 groups"), "{err}");
    let big = Tensor::from_vec(vec![1i64; 9], &[1, 1, 3, 3]).unwrap();
    let err = conv2d_u8s8(&x, 0, &big, &[0], &g).unwrap_err().to_string();
    assert!(err.contains("larger than the padded input"), "{err}");
}

#[test]
fn dynamic_quantize_follows_onnx() {
    // Range [-55, 200]: scale 1, zero 55; ties round to even (2.5 -> 2, 3.5 -> 4, -0.5 -> 0).
    let x = Tensor::from_vec(vec![-55.0f32, 200.0, 2.5, 3.5, -0.5, 100.5, 0.0], &[7]).unwrap();
    let (y, scale, zero) = dynamic_quantize_u8(&x).unwrap().unwrap();
    assert_eq!((scale, zero), (1.0, 55));
    assert_eq!(y.to_vec::<i64>(), vec![0, 255, 57, 59, 55, 155, 55]);
    // All positive: the range widens to 0, zero point 0; all zero: scale 1/255.
    let (y, scale, zero) = dynamic_quantize_u8(&Tensor::from_vec(vec![0.5f32, 1.0, 0.25], &[3]).unwrap()).unwrap().unwrap();
    assert_eq!((scale, zero), (1.0 / 255.0, 0));
    // 0.5 / (1/255) is 127.49999 in f32 (NumPy gives 127 too).
    assert_eq!(y.to_vec::<i64>(), vec![127, 255, 64]);
    let (_, scale, zero) = dynamic_quantize_u8(&Tensor::from_vec(vec![0.0f32; 5], &[5]).unwrap()).unwrap().unwrap();
    assert_eq!((scale, zero), (1.0 / 255.0, 0));
    // Many values (the vectorized body and its tail) against the formula per element.
    let v: Vec<f32> = (0..1037).map(|i| ((i as f32 * 0.618_034).fract() - 0.3) * 7.0).collect();
    let (y, scale, zero) = dynamic_quantize_u8(&Tensor::from_vec(v.clone(), &[17, 61]).unwrap()).unwrap().unwrap();
    let (lo, hi) = v.iter().fold((0f32, 0f32), |(a, b), &x| (a.min(x), b.max(x)));
    let s = (hi - lo) / 255.0;
    let z = (0.0 - lo / s).clamp(0.0, 255.0).round_ties_even();
    assert_eq!((scale, zero), (s, z as i64));
    let want: Vec<i64> = v.iter().map(|&x| ((x / s).round_ties_even() + z).clamp(0.0, 255.0) as i64).collect();
    assert_eq!(y.to_vec::<i64>(), want);
    // NaN, another dtype: the caller's path.
    assert!(dynamic_quantize_u8(&Tensor::from_vec(vec![1.0f32, f32::NAN], &[2]).unwrap()).unwrap().is_none());
    assert!(dynamic_quantize_u8(&Tensor::from_vec(vec![1.0f64], &[1]).unwrap()).unwrap().is_none());
}
