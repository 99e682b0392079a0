//! Convolutions against direct-loop definitions, and their gradients
//! against central finite differences, in f64.

use super::*;
use crate::autodiff::backward;
use crate::ops::binary::BinaryOp;
use crate::DType;

fn data(n: usize, seed: f64) -> Vec<f64> {
    (0..n).map(|i| ((i as f64 + 1.0) * seed).sin()).collect()
}

fn tensor(shape: &[usize], seed: f64) -> Tensor {
    Tensor::from_vec(data(shape.iter().product(), seed), shape).unwrap()
}

/// 2-d geometry in plain numbers: stride, leading padding, dilation, groups.
struct Spec {
    stride: [usize; 2],
    pad: [usize; 2],
    dil: [usize; 2],
    groups: usize,
}

/// The convolution by its definition; `out` is the output spatial size.
fn naive_conv(x: &Tensor, w: &Tensor, b: Option<&Tensor>, s: &Spec, out: [usize; 2]) -> Vec<f64> {
    let (xs, ws) = (x.shape().to_vec(), w.shape().to_vec());
    let (n, c, h, wd) = (xs[0], xs[1], xs[2], xs[3]);
    let (o, cg, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
    let og = o / s.groups;
    let (xv, wv) = (x.to_vec::<f64>(), w.to_vec::<f64>());
    let bv = b.map(|b| b.to_vec::<f64>());
    let mut y = vec![0.0; n * o * out[0] * out[1]];
    for ni in 0..n {
        for oc in 0..o {
            let grp = oc / og;
            for oh in 0..out[0] {
                for ow in 0..out[1] {
                    let mut acc = bv.as_ref().map_or(0.0, |b| b[oc]);
                    for ci in 0..cg {
                        let cx = grp * cg + ci;
                        for ki in 0..kh {
                            for kj in 0..kw {
                                let ih = (oh * s.stride[0] + ki * s.dil[0]) as isize - s.pad[0] as isize;
                                let iw = (ow * s.stride[1] + kj * s.dil[1]) as isize - s.pad[1] as isize;
                                if ih < 0 || iw < 0 || ih as usize >= h || iw as usize >= wd {
                                    continue;
                                }
                                acc += xv[((ni * c + cx) * h + ih as usize) * wd + iw as usize] * wv[((oc * cg + ci) * kh + ki) * kw + kj];
                            }
                        }
                    }
                    y[((ni * o + oc) * out[0] + oh) * out[1] + ow] = acc;
                }
            }
        }
    }
    y
}

/// The transposed convolution by its definition: every input element
/// scatters `x * w` into the output; `pad` is cut from the leading side.
fn naive_transpose(x: &Tensor, w: &Tensor, b: Option<&Tensor>, s: &Spec, out: [usize; 2]) -> Vec<f64> {
    let (xs, ws) = (x.shape().to_vec(), w.shape().to_vec());
    let (n, c, h, wd) = (xs[0], xs[1], xs[2], xs[3]);
    let (og, kh, kw) = (ws[1], ws[2], ws[3]);
    let (o, cpg) = (og * s.groups, c / s.groups);
    let (xv, wv) = (x.to_vec::<f64>(), w.to_vec::<f64>());
    let mut y = vec![0.0; n * o * out[0] * out[1]];
    for ni in 0..n {
        for ci in 0..c {
            let grp = ci / cpg;
            for ih in 0..h {
                for iw in 0..wd {
                    let v = xv[((ni * c + ci) * h + ih) * wd + iw];
                    for oc in 0..og {
                        for ki in 0..kh {
                            for kj in 0..kw {
                                let oh = (ih * s.stride[0] + ki * s.dil[0]) as isize - s.pad[0] as isize;
                                let ow = (iw * s.stride[1] + kj * s.dil[1]) as isize - s.pad[1] as isize;
                                if oh < 0 || ow < 0 || oh as usize >= out[0] || ow as usize >= out[1] {
                                    continue;
                                }
                                let oi = ((ni * o + grp * og + oc) * out[0] + oh as usize) * out[1] + ow as usize;
                                y[oi] += v * wv[((ci * og + oc) * kh + ki) * kw + kj];
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(b) = b {
        let bv = b.to_vec::<f64>();
        for (i, v) in y.iter_mut().enumerate() {
            *v += bv[(i / (out[0] * out[1])) % o];
        }
    }
    y
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{what}: element {i}: {a} vs {b}");
    }
}

/// Check every gradient of `f(inputs)` against central differences of
/// `sum(f(inputs) * r)` for a fixed random-looking `r`.
fn check_grads(inputs: &[Tensor], f: impl Fn(&[Var]) -> Var) {
    let vars: Vec<Var> = inputs.iter().map(|t| Var::leaf(t.clone())).collect();
    let y = f(&vars);
    let r = Var::constant(tensor(y.value.shape(), 0.77));
    let loss = |y: &Var| y.binary(BinaryOp::Mul, &r).unwrap().sum().unwrap();
    let grads = backward(&loss(&y)).unwrap();
    let eps = 1e-6;
    for (i, v) in vars.iter().enumerate() {
        let g = grads.get(v.id().unwrap()).expect("every input has a gradient").to_vec::<f64>();
        let base = inputs[i].to_vec::<f64>();
        let mut numeric = Vec::with_capacity(base.len());
        for j in 0..base.len() {
            let eval = |delta: f64| {
                let mut p = base.clone();
                p[j] += delta;
                let mut args: Vec<Var> = inputs.iter().map(|t| Var::constant(t.clone())).collect();
                args[i] = Var::constant(Tensor::from_vec(p, inputs[i].shape()).unwrap());
                loss(&f(&args)).value.to_vec::<f64>()[0]
            };
            numeric.push((eval(eps) - eval(-eps)) / (2.0 * eps));
        }
        assert_close(&g, &numeric, 1e-6, &format!("gradient of input {i}"));
    }
}

#[test]
fn conv2d_matches_definition() {
    // (x shape, w shape, stride, (pad before, pad after) per dim, dilation, groups)
    type Case = ([usize; 4], [usize; 4], [usize; 2], [(usize, usize); 2], [usize; 2], usize);
    let cases: [Case; 6] = [
        ([2, 3, 6, 5], [4, 3, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1),
        ([2, 4, 9, 8], [6, 2, 3, 2], [2, 3], [(1, 2), (0, 1)], [2, 1], 2),
        ([3, 3, 5, 4], [5, 3, 1, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], 1),
        ([2, 4, 7, 7], [8, 1, 3, 3], [1, 2], [(2, 0), (1, 1)], [1, 2], 4),
        ([4, 8, 20, 20], [8, 8, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1),
        ([2, 64, 20, 20], [4, 64, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1),
    ];
    for (xs, ws, stride, padding, dil, groups) in cases {
        let (x, w, b) = (tensor(&xs, 0.37), tensor(&ws, 0.11), tensor(&[ws[0]], 0.5));
        let opts = ConvOptions { stride, padding, dilation: dil, groups };
        let y = x.conv2d(&w, Some(&b), &opts).unwrap();
        let out = [y.shape()[2], y.shape()[3]];
        for d in 0..2 {
            let (n, k) = (xs[2 + d], ws[2 + d]);
            assert_eq!(out[d], (n + padding[d].0 + padding[d].1 - dil[d] * (k - 1) - 1) / stride[d] + 1);
        }
        let spec = Spec { stride, pad: [padding[0].0, padding[1].0], dil, groups };
        assert_close(&y.to_vec::<f64>(), &naive_conv(&x, &w, Some(&b), &spec, out), 1e-12, &format!("conv2d {xs:?} {ws:?}"));
        let no_bias = x.conv2d(&w, None, &opts).unwrap();
        assert_close(&no_bias.to_vec::<f64>(), &naive_conv(&x, &w, None, &spec, out), 1e-12, "conv2d without bias");
    }
}

#[test]
fn conv2d_in_f32_and_on_strided_views() {
    let x = tensor(&[2, 3, 5, 6], 0.3);
    let w = tensor(&[2, 3, 3, 3], 0.9);
    let opts = ConvOptions::new([1, 1], [1, 1], [1, 1], 1);
    let want = x.conv2d(&w, None, &opts).unwrap().to_vec::<f64>();
    let got32 = x.cast(DType::F32).unwrap().conv2d(&w.cast(DType::F32).unwrap(), None, &opts).unwrap();
    assert_eq!(got32.dtype(), DType::F32);
    assert_close(&got32.cast(DType::F64).unwrap().to_vec::<f64>(), &want, 1e-5, "f32");
    // The same input stored transposed: a non-contiguous view.
    let xt = Tensor::from_vec(x.swap_dims(2, 3).unwrap().to_vec::<f64>(), &[2, 3, 6, 5]).unwrap().swap_dims(2, 3).unwrap();
    assert!(!xt.is_contiguous());
    assert_close(&xt.conv2d(&w, None, &opts).unwrap().to_vec::<f64>(), &want, 1e-12, "strided view");
}

#[test]
fn conv1d_matches_definition() {
    let (x, w, b) = (tensor(&[3, 4, 11], 0.21), tensor(&[6, 2, 3], 0.47), tensor(&[6], 0.8));
    let opts = ConvOptions { stride: [2], padding: [(2, 1)], dilation: [2], groups: 2 };
    let y = x.conv1d(&w, Some(&b), &opts).unwrap();
    let ol = (11 + 3 - 2 * 2 - 1) / 2 + 1;
    assert_eq!(y.shape(), &[3, 6, ol]);
    let spec = Spec { stride: [1, 2], pad: [0, 2], dil: [1, 2], groups: 2 };
    let want = naive_conv(&x.unsqueeze_dim(2).unwrap(), &w.unsqueeze_dim(2).unwrap(), Some(&b), &spec, [1, ol]);
    assert_close(&y.to_vec::<f64>(), &want, 1e-12, "conv1d");
}

#[test]
fn conv_transpose_matches_definition() {
    // (x shape, w shape, stride, padding, padding_out, dilation, groups)
    type Case = ([usize; 4], [usize; 4], [usize; 2], [usize; 2], [usize; 2], [usize; 2], usize);
    let cases: [Case; 4] = [
        ([2, 3, 4, 5], [3, 2, 3, 3], [1, 1], [1, 1], [0, 0], [1, 1], 1),
        ([2, 4, 5, 3], [4, 3, 3, 2], [2, 3], [1, 0], [1, 2], [1, 2], 2),
        ([1, 2, 3, 3], [2, 4, 1, 1], [1, 1], [0, 0], [0, 0], [1, 1], 1),
        ([2, 6, 4, 4], [6, 1, 4, 3], [2, 1], [2, 1], [0, 1], [1, 2], 3),
    ];
    for (xs, ws, stride, padding, padding_out, dilation, groups) in cases {
        let (x, w, b) = (tensor(&xs, 0.29), tensor(&ws, 0.13), tensor(&[ws[1] * groups], 0.6));
        let opts = ConvTransposeOptions { stride, padding, padding_out, dilation, groups };
        let y = x.conv_transpose2d(&w, Some(&b), &opts).unwrap();
        let out: [usize; 2] = std::array::from_fn(|d| (xs[2 + d] - 1) * stride[d] + dilation[d] * (ws[2 + d] - 1) + padding_out[d] + 1 - 2 * padding[d]);
        assert_eq!(y.shape(), &[xs[0], ws[1] * groups, out[0], out[1]]);
        let spec = Spec { stride, pad: padding, dil: dilation, groups };
        assert_close(&y.to_vec::<f64>(), &naive_transpose(&x, &w, Some(&b), &spec, out), 1e-12, &format!("conv_transpose2d {xs:?} {ws:?}"));
    }
    let (x, w) = (tensor(&[2, 4, 6], 0.31), tensor(&[4, 3, 3], 0.17));
    let opts = ConvTransposeOptions { stride: [3], padding: [1], padding_out: [2], dilation: [1], groups: 2 };
    let y = x.conv_transpose1d(&w, None, &opts).unwrap();
    let ol = 5 * 3 + 2 + 2 + 1 - 2;
    assert_eq!(y.shape(), &[2, 6, ol]);
    let spec = Spec { stride: [1, 3], pad: [0, 1], dil: [1, 1], groups: 2 };
    let want = naive_transpose(&x.unsqueeze_dim(2).unwrap(), &w.unsqueeze_dim(2).unwrap(), None, &spec, [1, ol]);
    assert_close(&y.to_vec::<f64>(), &want, 1e-12, "conv_transpose1d");
}

#[test]
fn conv_gradients_match_finite_differences() {
    let opts = ConvOptions { stride: [2, 1], padding: [(1, 0), (2, 1)], dilation: [1, 2], groups: 2 };
    let inputs = [tensor(&[2, 4, 5, 6], 0.37), tensor(&[4, 2, 2, 3], 0.11), tensor(&[4], 0.5)];
    check_grads(&inputs, |v| v[0].conv2d(&v[1], Some(&v[2]), &opts).unwrap());
    // The 1x1 path, without bias.
    let one = ConvOptions::default();
    check_grads(&[tensor(&[2, 3, 3, 4], 0.2), tensor(&[2, 3, 1, 1], 0.7)], |v| v[0].conv2d(&v[1], None, &one).unwrap());
    let opts1 = ConvOptions { stride: [2], padding: [(1, 2)], dilation: [2], groups: 1 };
    check_grads(&[tensor(&[2, 3, 7], 0.4), tensor(&[2, 3, 3], 0.3), tensor(&[2], 0.9)], |v| v[0].conv1d(&v[1], Some(&v[2]), &opts1).unwrap());
}

#[test]
fn conv_gradients_through_the_parallel_banded_path() {
    // Large enough to split the batch over threads and im2col in bands.
    let (x, w) = (tensor(&[3, 64, 12, 12], 0.37), tensor(&[2, 64, 3, 3], 0.11));
    let opts = ConvOptions::new([1, 1], [1, 1], [1, 1], 1);
    let (xv, wv) = (Var::leaf(x.clone()), Var::leaf(w.clone()));
    let y = xv.conv2d(&wv, None, &opts).unwrap();
    let grads = backward(&y.sum().unwrap()).unwrap();
    // d sum(y) / d w[o, c, i, j] = sum of the input under tap (i, j), same for every o.
    let gw = grads.get(wv.id().unwrap()).unwrap().to_vec::<f64>();
    let xv64 = x.to_vec::<f64>();
    for c in [0, 17, 63] {
        for (i, j) in [(0, 0), (1, 1), (2, 1)] {
            let mut want = 0.0;
            for n in 0..3 {
                for oh in 0..12usize {
                    for ow in 0..12usize {
                        let (ih, iw) = ((oh + i) as isize - 1, (ow + j) as isize - 1);
                        if (0..12).contains(&ih) && (0..12).contains(&iw) {
                            want += xv64[((n * 64 + c) * 12 + ih as usize) * 12 + iw as usize];
                        }
                    }
                }
            }
            for o in 0..2 {
                let got = gw[((o * 64 + c) * 3 + i) * 3 + j];
                assert!((got - want).abs() < 1e-9, "gw[{o}, {c}, {i}, {j}] = {got}, want {want}");
            }
        }
    }
    // d sum(y) / d x[n, c, h, w] = sum over o of the taps that see (h, w).
    let gx = grads.get(xv.id().unwrap()).unwrap().to_vec::<f64>();
    let wv64 = w.to_vec::<f64>();
    for (c, h, wd) in [(0, 0, 0), (5, 6, 11), (63, 11, 3)] {
        let mut want = 0.0;
        for o in 0..2 {
            for i in 0..3usize {
                for j in 0..3usize {
                    let (oh, ow) = (h as isize + 1 - i as isize, wd as isize + 1 - j as isize);
                    if (0..12).contains(&oh) && (0..12).contains(&ow) {
                        want += wv64[((o * 64 + c) * 3 + i) * 3 + j];
                    }
                }
            }
        }
        let got = gx[((2 * 64 + c) * 12 + h) * 12 + wd];
        assert!((got - want).abs() < 1e-9, "gx[2, {c}, {h}, {wd}] = {got}, want {want}");
    }
}

#[test]
fn conv_transpose_gradients_match_finite_differences() {
    let opts = ConvTransposeOptions { stride: [2, 1], padding: [1, 0], padding_out: [1, 0], dilation: [1, 2], groups: 2 };
    let inputs = [tensor(&[2, 4, 3, 4], 0.37), tensor(&[4, 3, 3, 2], 0.11), tensor(&[6], 0.5)];
    check_grads(&inputs, |v| v[0].conv_transpose2d(&v[1], Some(&v[2]), &opts).unwrap());
    let opts1 = ConvTransposeOptions { stride: [2], padding: [1], padding_out: [1], dilation: [1], groups: 1 };
    check_grads(&[tensor(&[2, 3, 4], 0.4), tensor(&[3, 2, 3], 0.3)], |v| v[0].conv_transpose1d(&v[1], None, &opts1).unwrap());
}

#[test]
fn only_tracked_inputs_get_gradients() {
    let x = Var::constant(tensor(&[1, 2, 4, 4], 0.3));
    let w = Var::leaf(tensor(&[3, 2, 3, 3], 0.2));
    let y = x.conv2d(&w, None, &ConvOptions::new([1, 1], [1, 1], [1, 1], 1)).unwrap();
    let grads = backward(&y.sum().unwrap()).unwrap();
    assert_eq!(grads.len(), 1);
    assert_eq!(grads.get(w.id().unwrap()).unwrap().shape(), &[3, 2, 3, 3]);
}

#[test]
fn bad_inputs_are_reported() {
    let x = tensor(&[1, 4, 5, 5], 0.3);
    let err = |w: &[usize], o: ConvOptions<2>| x.conv2d(&tensor(w, 0.1), None, &o).unwrap_err().to_string();
    let e = err(&[4, 3, 3, 3], ConvOptions::default());
    assert!(e.contains("3 input channels per group x 1 groups, the input has 4"), "{e}");
    let e = err(&[4, 4, 7, 3], ConvOptions::default());
    assert!(e.contains("spatial dim 0 of size 5") && e.contains("smaller than the kernel"), "{e}");
    let e = err(&[6, 1, 3, 3], ConvOptions::new([1, 1], [0, 0], [1, 1], 3));
    assert!(e.contains("groups (3) must divide channels_in (4)"), "{e}");
    let e = err(&[4, 4, 3, 3], ConvOptions::new([0, 1], [0, 0], [1, 1], 1));
    assert!(e.contains("stride must be at least 1"), "{e}");
    let e = x.conv2d(&tensor(&[2, 4, 3, 3], 0.1), Some(&tensor(&[3], 0.1)), &ConvOptions::default()).unwrap_err().to_string();
    assert!(e.contains("one value per output channel (2)"), "{e}");
    let e = x.conv1d(&tensor(&[2, 4, 3], 0.1), None, &ConvOptions::default()).unwrap_err().to_string();
    assert!(e.contains("expected a tensor of rank 3, found rank 4"), "{e}");
    let ints = Tensor::from_vec(vec![1i64; 4], &[1, 1, 2, 2]).unwrap();
    assert!(ints.conv2d(&ints, None, &ConvOptions::default()).is_err());
    let o = ConvTransposeOptions { stride: [1, 1], padding: [0, 0], padding_out: [1, 0], dilation: [1, 1], groups: 1 };
    let e = x.conv_transpose2d(&tensor(&[4, 2, 3, 3], 0.1), None, &o).unwrap_err().to_string();
    assert!(e.contains("padding_out (1) must be smaller than the stride (1) or the dilation (1)"), "{e}");
}

#[test]
fn outputs_larger_than_memory_are_errors() {
    // Padding of 2^20 on each side of a 1x1 image: an output plane of 2^42
    // elements, refused before anything is allocated.
    let x = tensor(&[1, 1, 1, 1], 1.0);
    let opts = ConvOptions::new([1, 1], [1 << 20, 1 << 20], [1, 1], 1);
    let e = x.conv2d(&x, None, &opts).unwrap_err().to_string();
    assert!(e.starts_with("conv2d: cannot allocate") && e.contains("more than this machine's memory"), "{e}");
    // A broadcast image is filled out for the kernels: refused at this size.
    let big = x.expand(&[1, 1, 1 << 20, 1 << 20]).unwrap();
    let e = big.conv2d(&x, None, &ConvOptions::new([1, 1], [0, 0], [1, 1], 1)).unwrap_err().to_string();
    assert!(e.starts_with("conv2d: ") && e.contains("more than this machine's memory"), "{e}");
}
