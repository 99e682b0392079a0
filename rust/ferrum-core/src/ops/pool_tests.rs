//! Pooling against direct definitions and hand-worked values; gradients
//! against central finite differences, in f64.

use super::*;
use crate::autodiff::backward;
use crate::ops::binary::BinaryOp;
use crate::DType;

fn tensor(shape: &[usize], seed: f64) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_vec((0..n).map(|i| ((i as f64 + 1.0) * seed).sin()).collect::<Vec<f64>>(), shape).unwrap()
}

fn opts2(kernel: [usize; 2], stride: [usize; 2], padding: [(usize, usize); 2], dilation: [usize; 2], ceil_mode: bool) -> PoolOptions<2> {
    PoolOptions { kernel, stride, padding, dilation, ceil_mode }
}

/// PyTorch's output size rule, written out independently.
fn out_size(n: usize, k: usize, s: usize, (b, a): (usize, usize), d: usize, ceil: bool) -> usize {
    let num = (n + b + a) as f64 - (d * (k - 1) + 1) as f64;
    let mut o = if ceil { (num / s as f64).ceil() } else { (num / s as f64).floor() } as usize + 1;
    if ceil && (o - 1) * s >= n + b {
        o -= 1;
    }
    o
}

/// Max and average pooling of one `[h, w]` plane by the definition.
fn naive_plane(x: &[f64], (h, w): (usize, usize), o: &PoolOptions<2>, avg: Option<bool>) -> Vec<f64> {
    let oh = out_size(h, o.kernel[0], o.stride[0], o.padding[0], o.dilation[0], o.ceil_mode);
    let ow = out_size(w, o.kernel[1], o.stride[1], o.padding[1], o.dilation[1], o.ceil_mode);
    let mut out = Vec::new();
    for i in 0..oh {
        for j in 0..ow {
            let (mut best, mut sum, mut inside, mut padded) = (f64::NEG_INFINITY, 0.0, 0usize, 0usize);
            for ki in 0..o.kernel[0] {
                for kj in 0..o.kernel[1] {
                    let ih = (i * o.stride[0] + ki * o.dilation[0]) as isize - o.padding[0].0 as isize;
                    let iw = (j * o.stride[1] + kj * o.dilation[1]) as isize - o.padding[1].0 as isize;
                    // A tap counts as padding only up to the trailing pad, not past it.
                    if ih < (h + o.padding[0].1) as isize && iw < (w + o.padding[1].1) as isize {
                        padded += 1;
                    }
                    if ih < 0 || iw < 0 || ih as usize >= h || iw as usize >= w {
                        continue;
                    }
                    let v = x[ih as usize * w + iw as usize];
                    best = best.max(v);
                    sum += v;
                    inside += 1;
                }
            }
            out.push(match avg {
                None => best,
                Some(true) => sum / padded as f64,
                Some(false) => sum / inside as f64,
            });
        }
    }
    out
}

fn naive(x: &Tensor, o: &PoolOptions<2>, avg: Option<bool>) -> Vec<f64> {
    let s = x.shape();
    let (h, w) = (s[2], s[3]);
    x.to_vec::<f64>().chunks(h * w).flat_map(|p| naive_plane(p, (h, w), o, avg)).collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{what}: element {i}: {a} vs {b}");
    }
}

fn cases() -> Vec<PoolOptions<2>> {
    vec![
        PoolOptions::new([2, 2]),
        opts2([3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], false),
        opts2([3, 2], [2, 3], [(1, 0), (1, 1)], [1, 1], true),
        opts2([2, 3], [2, 2], [(0, 1), (1, 1)], [1, 1], true),
        opts2([3, 3], [2, 1], [(2, 1), (0, 2)], [2, 2], false),
        opts2([2, 2], [3, 3], [(1, 1), (0, 0)], [2, 1], true),
    ]
}

#[test]
fn max_pool2d_matches_definition() {
    let x = tensor(&[2, 3, 7, 8], 0.37);
    for o in cases() {
        let (y, idx) = x.max_pool2d_with_indices(&o).unwrap();
        let want = naive(&x, &o, None);
        assert_close(&y.to_vec::<f64>(), &want, 0.0, &format!("{o:?}"));
        assert_eq!(idx.dtype(), DType::I64);
        // Each index points at the element that holds the maximum.
        let xv = x.to_vec::<f64>();
        let p = y.shape()[2] * y.shape()[3];
        for (k, (&i, &v)) in idx.to_vec::<i64>().iter().zip(&want).enumerate() {
            assert_eq!(xv[(k / p) * 56 + i as usize], v);
        }
    }
}

#[test]
fn max_pool2d_without_indices_matches_definition_on_wide_rows() {
    // Rows wide enough for the vectorised pass across, at strides 1 to 3,
    // with windows that overhang either edge (padding, dilation, ceil mode).
    let mut cases = cases();
    for (k, s, d) in [(3usize, 2, 1), (3, 1, 1), (2, 3, 2), (5, 2, 1), (1, 2, 1), (4, 3, 1)] {
        for ceil in [false, true] {
            // Half the window's span: the most padding a pooling takes.
            let pad = ((k - 1) * d).div_ceil(2);
            cases.push(opts2([k, k], [s, s], [(pad, pad / 2), (pad, pad.saturating_sub(1))], [d, d], ceil));
        }
    }
    for x in [tensor(&[2, 3, 9, 41], 0.41), tensor(&[1, 2, 5, 70], 0.17)] {
        for o in &cases {
            let y = x.max_pool2d(o).unwrap();
            assert_close(&y.to_vec::<f64>(), &naive(&x, o, None), 0.0, &format!("{o:?} on {:?}", x.shape()));
        }
    }
}

#[test]
fn max_pool2d_without_indices_lets_nan_win_in_f32() {
    let (h, w) = (6, 40);
    let mut v: Vec<f32> = (0..h * w).map(|i| ((i as f32 + 1.0) * 0.37).sin()).collect();
    for at in [0, 17, 18, 2 * w + 39, 5 * w + 20] {
        v[at] = f32::NAN;
    }
    let x = Tensor::from_vec(v.clone(), &[1, 1, h, w]).unwrap();
    let o = opts2([3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], false);
    let got = x.max_pool2d(&o).unwrap().to_vec::<f32>();
    let xd: Vec<f64> = v.iter().map(|&a| a as f64).collect();
    let (oh, ow) = (3, 20);
    assert_eq!(got.len(), oh * ow);
    for i in 0..oh {
        for j in 0..ow {
            let window: Vec<f64> = (0..3)
                .flat_map(|a| (0..3).map(move |b| ((2 * i + a) as isize - 1, (2 * j + b) as isize - 1)))
                .filter(|&(r, c)| r >= 0 && c >= 0 && (r as usize) < h && (c as usize) < w)
                .map(|(r, c)| xd[r as usize * w + c as usize])
                .collect();
            let g = got[i * ow + j] as f64;
            if window.iter().any(|a| a.is_nan()) {
                assert!(g.is_nan(), "({i}, {j}): {g} where the window holds NaN");
            } else {
                assert_eq!(g, window.iter().cloned().fold(f64::NEG_INFINITY, f64::max), "({i}, {j})");
            }
        }
    }
}

#[test]
fn avg_pool2d_matches_definition() {
    let x = tensor(&[2, 2, 7, 6], 0.29);
    for o in cases().into_iter().filter(|o| o.dilation == [1, 1]) {
        for include in [true, false] {
            let y = x.avg_pool2d(&o, include).unwrap();
            assert_close(&y.to_vec::<f64>(), &naive(&x, &o, Some(include)), 1e-12, &format!("{o:?} include={include}"));
        }
    }
}

#[test]
fn hand_worked_values() {
    let x = Tensor::from_vec((0..16).map(|v| v as f64).collect::<Vec<_>>(), &[1, 1, 4, 4]).unwrap();
    assert_eq!(x.max_pool2d(&PoolOptions::new([2, 2])).unwrap().to_vec::<f64>(), vec![5.0, 7.0, 13.0, 15.0]);
    assert_eq!(x.avg_pool2d(&PoolOptions::new([2, 2]), true).unwrap().to_vec::<f64>(), vec![2.5, 4.5, 10.5, 12.5]);
    // 3x3 ones with padding 1: corners see 4 of 9 padded taps.
    let ones = Tensor::ones(&[1, 1, 3, 3], DType::F64);
    let o = opts2([3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], false);
    assert_eq!(ones.avg_pool2d(&o, true).unwrap().to_vec::<f64>()[0], 4.0 / 9.0);
    assert_eq!(ones.avg_pool2d(&o, false).unwrap().to_vec::<f64>()[0], 1.0);
    // Ceil mode keeps the partial window at the end: 5 -> 3, not 2.
    let five = tensor(&[1, 1, 5, 5], 0.3);
    let mut c = PoolOptions::new([2, 2]);
    assert_eq!(five.max_pool2d(&c).unwrap().shape(), &[1, 1, 2, 2]);
    c.ceil_mode = true;
    assert_eq!(five.max_pool2d(&c).unwrap().shape(), &[1, 1, 3, 3]);
    // Adaptive pooling of 5 into 3: windows [0, 2), [1, 4), [3, 5).
    let row = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0], &[1, 1, 5]).unwrap();
    assert_close(&row.adaptive_avg_pool1d(3).unwrap().to_vec::<f64>(), &[1.5, 3.0, 4.5], 1e-15, "adaptive 5 -> 3");
    // NaN wins a max window.
    let nan = Tensor::from_vec(vec![1.0, f64::NAN, 3.0, 2.0], &[1, 1, 4]).unwrap();
    let m = nan.max_pool1d(&PoolOptions::new([2])).unwrap().to_vec::<f64>();
    assert!(m[0].is_nan() && m[1] == 3.0);
}

#[test]
fn one_d_pools_equal_two_d_of_height_one() {
    let x = tensor(&[2, 3, 11], 0.41);
    let x2 = x.unsqueeze_dim(2).unwrap();
    let o1 = PoolOptions { kernel: [3], stride: [2], padding: [(1, 1)], dilation: [2], ceil_mode: true };
    let o2 = opts2([1, 3], [1, 2], [(0, 0), (1, 1)], [1, 2], true);
    assert_eq!(x.max_pool1d(&o1).unwrap().to_vec::<f64>(), x2.max_pool2d(&o2).unwrap().to_vec::<f64>());
    let (a1, a2) = (PoolOptions { dilation: [1], ..o1.clone() }, opts2([1, 3], [1, 2], [(0, 0), (1, 1)], [1, 1], true));
    assert_eq!(x.avg_pool1d(&a1, false).unwrap().to_vec::<f64>(), x2.avg_pool2d(&a2, false).unwrap().to_vec::<f64>());
    assert_eq!(x.adaptive_avg_pool1d(4).unwrap().to_vec::<f64>(), x2.adaptive_avg_pool2d([1, 4]).unwrap().to_vec::<f64>());
}

#[test]
fn adaptive_matches_definition_including_upsampling() {
    let x = tensor(&[2, 3, 7, 5], 0.23);
    let xv = x.to_vec::<f64>();
    for out in [[1, 1], [3, 2], [7, 5], [9, 8]] {
        let y = x.adaptive_avg_pool2d(out).unwrap();
        assert_eq!(y.shape(), &[2, 3, out[0], out[1]]);
        let mut want = Vec::new();
        for p in 0..6 {
            for i in 0..out[0] {
                let (h0, h1) = ((i * 7) as f64 / out[0] as f64, ((i + 1) * 7) as f64 / out[0] as f64);
                for j in 0..out[1] {
                    let (w0, w1) = ((j * 5) as f64 / out[1] as f64, ((j + 1) * 5) as f64 / out[1] as f64);
                    let (mut s, mut n) = (0.0, 0.0);
                    for ih in h0.floor() as usize..h1.ceil() as usize {
                        for iw in w0.floor() as usize..w1.ceil() as usize {
                            s += xv[p * 35 + ih * 5 + iw];
                            n += 1.0;
                        }
                    }
                    want.push(s / n);
                }
            }
        }
        assert_close(&y.to_vec::<f64>(), &want, 1e-12, &format!("adaptive {out:?}"));
    }
}

/// Check the gradient of `f(x)` against central differences of `sum(f(x) * r)`.
fn check_grad(x: &Tensor, f: impl Fn(&Var) -> Var) {
    let v = Var::leaf(x.clone());
    let y = f(&v);
    let r = Var::constant(tensor(y.value.shape(), 0.77));
    let loss = |y: &Var| y.binary(BinaryOp::Mul, &r).unwrap().sum().unwrap();
    let g = backward(&loss(&y)).unwrap().get(v.id().unwrap()).unwrap().to_vec::<f64>();
    let base = x.to_vec::<f64>();
    let eps = 1e-6;
    let numeric: Vec<f64> = (0..base.len())
        .map(|j| {
            let at = |d: f64| {
                let mut p = base.clone();
                p[j] += d;
                loss(&f(&Var::constant(Tensor::from_vec(p, x.shape()).unwrap()))).value.to_vec::<f64>()[0]
            };
            (at(eps) - at(-eps)) / (2.0 * eps)
        })
        .collect();
    assert_close(&g, &numeric, 1e-6, "gradient");
}

#[test]
fn gradients_match_finite_differences() {
    // Distinct values a finite step cannot reorder, so every argmax is stable.
    let x = tensor(&[2, 2, 6, 7], 0.61);
    for o in cases() {
        check_grad(&x, |v| v.max_pool2d(&o).unwrap());
        if o.dilation == [1, 1] {
            check_grad(&x, |v| v.avg_pool2d(&o, true).unwrap());
            check_grad(&x, |v| v.avg_pool2d(&o, false).unwrap());
        }
    }
    check_grad(&x, |v| v.adaptive_avg_pool2d([4, 3]).unwrap());
    check_grad(&x, |v| v.adaptive_avg_pool2d([8, 9]).unwrap());
    let x1 = tensor(&[2, 3, 9], 0.53);
    let o1 = PoolOptions { kernel: [3], stride: [2], padding: [(1, 1)], dilation: [1], ceil_mode: true };
    check_grad(&x1, |v| v.max_pool1d(&o1).unwrap());
    check_grad(&x1, |v| v.avg_pool1d(&o1, false).unwrap());
    check_grad(&x1, |v| v.adaptive_avg_pool1d(4).unwrap());
}

#[test]
fn large_inputs_split_over_threads_and_agree() {
    let x = tensor(&[8, 16, 40, 40], 0.013);
    let o = opts2([3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], false);
    let y = x.max_pool2d(&o).unwrap();
    assert_close(&y.to_vec::<f64>(), &naive(&x, &o, None), 0.0, "max");
    let a = x.avg_pool2d(&o, true).unwrap();
    assert_close(&a.to_vec::<f64>(), &naive(&x, &o, Some(true)), 1e-12, "avg");
    let v = Var::leaf(x.clone());
    let g = backward(&v.avg_pool2d(&o, false).unwrap().sum().unwrap()).unwrap();
    let total: f64 = g.get(v.id().unwrap()).unwrap().to_vec::<f64>().iter().sum();
    // Without the padding in the divisor, each output spreads exactly one over its window.
    assert!((total - a.numel() as f64).abs() < 1e-6, "{total}");
}

#[test]
fn bad_inputs_are_reported() {
    let x = tensor(&[1, 1, 4, 4], 0.3);
    let e = x.max_pool2d(&opts2([2, 2], [2, 2], [(2, 0), (0, 0)], [1, 1], false)).unwrap_err().to_string();
    assert!(e.contains("must be at most half the kernel span"), "{e}");
    let e = x.max_pool2d(&PoolOptions::new([5, 2])).unwrap_err().to_string();
    assert!(e.contains("spatial dim 0 of size 4") && e.contains("smaller than the kernel span (5)"), "{e}");
    let e = x.max_pool2d(&opts2([2, 2], [0, 1], [(0, 0), (0, 0)], [1, 1], false)).unwrap_err().to_string();
    assert!(e.contains("stride must be at least 1"), "{e}");
    let e = x.avg_pool2d(&opts2([2, 2], [1, 1], [(0, 0), (0, 0)], [2, 1], false), true).unwrap_err().to_string();
    assert!(e.contains("average pooling has no dilation"), "{e}");
    let e = x.max_pool1d(&PoolOptions::new([2])).unwrap_err().to_string();
    assert!(e.contains("expected a tensor of rank 3, found rank 4"), "{e}");
    let e = x.adaptive_avg_pool2d([0, 1]).unwrap_err().to_string();
    assert!(e.contains("must all be at least 1"), "{e}");
    let ints = Tensor::from_vec(vec![1i64; 16], &[1, 1, 4, 4]).unwrap();
    assert!(ints.max_pool2d(&PoolOptions::new([2, 2])).is_err());
}

#[test]
fn outputs_larger_than_memory_are_errors() {
    let x = Tensor::from_vec(vec![1.0f64; 4], &[1, 1, 2, 2]).unwrap();
    let e = x.adaptive_avg_pool2d([1 << 21, 1 << 21]).unwrap_err().to_string();
    assert!(e.starts_with("adaptive_avg_pool2d: cannot allocate") && e.contains("more than this machine's memory"), "{e}");
    let e = x.adaptive_avg_pool2d([1 << 40, 1 << 40]).unwrap_err().to_string();
    assert!(e.starts_with("adaptive_avg_pool2d: shape") && e.contains("too many elements"), "{e}");
}

/// GoogLeNet's and SqueezeNet's poolings of small planes, and the cases above, on more planes than
/// one block of the kernel that pools small planes across planes (16 at a time), with a last
/// block part full.
#[test]
fn small_planes_pooled_across_planes_match_definition() {
    let mut cases = cases();
    cases.push(opts2([3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], true));
    cases.push(opts2([3, 3], [2, 2], [(0, 0), (0, 0)], [1, 1], true));
    cases.push(opts2([2, 2], [2, 2], [(0, 0), (0, 0)], [1, 1], true));
    cases.push(opts2([3, 1], [1, 2], [(1, 1), (0, 0)], [1, 1], false));
    for shape in [[1, 37, 4, 4], [2, 21, 7, 7], [1, 19, 15, 15], [1, 17, 2, 2], [3, 6, 5, 9]] {
        let x = tensor(&shape, 0.23);
        for o in &cases {
            let (h, w) = (shape[2] + o.padding[0].0 + o.padding[0].1, shape[3] + o.padding[1].0 + o.padding[1].1);
            if h < o.dilation[0] * (o.kernel[0] - 1) + 1 || w < o.dilation[1] * (o.kernel[1] - 1) + 1 {
                continue;
            }
            let what = format!("{o:?} on {shape:?}");
            assert_close(&x.max_pool2d(o).unwrap().to_vec::<f64>(), &naive(&x, o, None), 0.0, &what);
            if o.dilation == [1, 1] {
                for include in [true, false] {
                    let got = x.avg_pool2d(o, include).unwrap().to_vec::<f64>();
                    assert_close(&got, &naive(&x, o, Some(include)), 1e-12, &format!("avg {what} include={include}"));
                }
            }
        }
    }
}

/// Enough small planes that the blocks split over threads, in f32 (the models' dtype).
#[test]
fn many_small_planes_split_over_threads_in_f32() {
    let x64 = tensor(&[2, 520, 8, 8], 0.011);
    let x = x64.cast(DType::F32).unwrap();
    let rounded = x.cast(DType::F64).unwrap();
    for o in [opts2([3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], true), opts2([3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], false)] {
        let got: Vec<f64> = x.max_pool2d(&o).unwrap().to_vec::<f32>().iter().map(|&v| v as f64).collect();
        assert_close(&got, &naive(&rounded, &o, None), 0.0, &format!("max {o:?}"));
        for include in [true, false] {
            let got: Vec<f64> = x.avg_pool2d(&o, include).unwrap().to_vec::<f32>().iter().map(|&v| v as f64).collect();
            assert_close(&got, &naive(&rounded, &o, Some(include)), 1e-6, &format!("avg {o:?} include={include}"));
        }
    }
}

/// NaN wins a max window of a small plane, whichever tap of the window holds it.
#[test]
fn small_planes_let_nan_win_in_f32() {
    let (planes, h, w) = (20, 4, 4);
    let mut v: Vec<f32> = (0..planes * h * w).map(|i| ((i as f32 + 1.0) * 0.61).sin()).collect();
    let nans = [0, 5, 16 + 15, 3 * 16 + 10, 19 * 16 + 3];
    for at in nans {
        v[at] = f32::NAN;
    }
    let x = Tensor::from_vec(v.clone(), &[1, planes, h, w]).unwrap();
    let o = opts2([3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], false);
    let got = x.max_pool2d(&o).unwrap().to_vec::<f32>();
    for (k, &g) in got.iter().enumerate() {
        let (plane, i, j) = (k / 16, (k % 16) / 4, k % 4);
        let window: Vec<usize> = (i.saturating_sub(1)..(i + 2).min(h))
            .flat_map(|r| (j.saturating_sub(1)..(j + 2).min(w)).map(move |c| plane * 16 + r * w + c))
            .collect();
        if window.iter().any(|a| nans.contains(a)) {
            assert!(g.is_nan(), "output {k}: {g} where the window holds NaN");
        } else {
            assert_eq!(g, window.iter().map(|&a| v[a]).fold(f32::NEG_INFINITY, f32::max), "output {k}");
        }
    }
}
