//! The packed int8 convolution on every tile this CPU runs (AMX-INT8,
//! VNNI, portable) against the naive i64 evaluation of the integer
//! convolution, for its sums and its requantized outputs.

use super::qconv::{ConvOut, Int8Conv, Requant};
use super::tests_integer_conv::reference;
use super::IntConv2d;
use crate::kernels::qgemm::Path;

/// A small deterministic generator (xorshift), so the cases need no crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

struct Case {
    x: [usize; 4],
    w: [usize; 4],
    g: IntConv2d,
}

fn cases() -> Vec<Case> {
    let g = |stride: [usize; 2], pads: [usize; 4], dilation: [usize; 2], groups: usize| IntConv2d { stride, pads, dilation, groups };
    vec![
        // several position panels and a ragged last one, channels past one tile
        Case { x: [2, 3, 9, 8], w: [19, 3, 3, 3], g: g([1, 1], [1, 1, 1, 1], [1, 1], 1) },
        // groups, asymmetric pads, strides and dilations
        Case { x: [1, 4, 10, 9], w: [6, 2, 3, 2], g: g([2, 1], [1, 0, 2, 1], [1, 2], 2) },
        // depthwise
        Case { x: [3, 6, 7, 7], w: [6, 1, 3, 3], g: g([1, 2], [1, 1, 1, 1], [2, 1], 6) },
        // k past one quad boundary (k = 40 * 9), positions of several parts, stride 2
        Case { x: [2, 40, 13, 11], w: [35, 40, 3, 3], g: g([2, 2], [1, 1, 1, 1], [1, 1], 1) },
        // a 1 x 1 kernel, many positions
        Case { x: [1, 5, 30, 31], w: [9, 5, 1, 1], g: g([1, 1], [0, 0, 0, 0], [1, 1], 1) },
        // 17 channels: a second AMX filter tile holding one channel
        Case { x: [2, 5, 6, 7], w: [17, 5, 2, 2], g: g([1, 1], [0, 0, 0, 0], [1, 1], 1) },
        // k exactly one AMX step (16 x 2 x 2), two filter tiles
        Case { x: [1, 16, 5, 9], w: [32, 16, 2, 2], g: g([1, 1], [0, 1, 0, 1], [1, 1], 1) },
        // k one past a step (13 x 5 x 1), 33 channels: a full pair and a one-channel pair
        Case { x: [2, 13, 9, 4], w: [33, 13, 5, 1], g: g([1, 1], [2, 0, 2, 0], [1, 1], 1) },
        // 16 channels a group in 4 groups, k = 72 (one step and a bit)
        Case { x: [1, 32, 8, 8], w: [64, 8, 3, 3], g: g([1, 1], [1, 1, 1, 1], [1, 1], 4) },
        // 5 x 5, stride 3, padding 2, batch 3
        Case { x: [3, 7, 14, 12], w: [20, 7, 5, 5], g: g([3, 3], [2, 2, 2, 2], [1, 1], 1) },
        // k = 576 (64 x 3 x 3, nine steps), 40 channels
        Case { x: [1, 64, 6, 6], w: [40, 64, 3, 3], g: g([1, 1], [1, 1, 1, 1], [1, 1], 1) },
        // 34 channels a group in 2 groups, dilation 2: pairs crossing no group boundary
        Case { x: [2, 6, 11, 10], w: [68, 3, 3, 3], g: g([1, 1], [2, 2, 2, 2], [2, 2], 2) },
    ]
}

fn run_case(case: &Case, per_channel: bool, seed: u64) {
    let mut rng = Rng(seed);
    let [n, c, h, wd] = case.x;
    let [co, cg, kh, kw] = case.w;
    let x: Vec<u8> = (0..n * c * h * wd).map(|_| rng.range(0, 255) as u8).collect();
    let w: Vec<i8> = (0..co * cg * kh * kw).map(|_| rng.range(-128, 127) as i8).collect();
    let zx = rng.range(0, 255);
    let zw: Vec<i64> = if per_channel { (0..co).map(|_| rng.range(-128, 127)).collect() } else { vec![rng.range(-128, 127)] };
    let (want, shape) = reference(&x.iter().map(|&v| v as i64).collect::<Vec<_>>(), case.x, zx, &w.iter().map(|&v| v as i64).collect::<Vec<_>>(), case.w, &zw, &case.g);
    let packed = Int8Conv::new(&w, case.w, case.g.groups, &zw.iter().map(|&z| z as i32).collect::<Vec<_>>()).unwrap();
    let count = shape.iter().product::<usize>();
    let bias: Vec<i32> = (0..co).map(|_| rng.range(-100_000, 100_000) as i32).collect();
    // Sums grow with k: smaller scales keep the outputs off the clamp.
    let damp = (64.0 / (cg * kh * kw) as f32).min(1.0);
    let scale: Vec<f64> = (0..co).map(|_| (rng.range(1, 1000) as f32 * 1e-5 * damp) as f64).collect();
    let paths = Path::all_usable();
    assert!(paths.contains(&Path::Portable));
    for path in paths {
        for threads in [1, 2] {
            let mut sums = vec![0i32; count];
            packed.run_on(&x, case.x, zx as u8, &case.g, ConvOut::Sums(&mut sums), threads, path).unwrap();
            let got: Vec<i64> = sums.iter().map(|&v| v as i64).collect();
            assert_eq!(got, want, "sums, {path:?}, threads {threads}, {:?} * {:?}", case.x, case.w);
            let rq = Requant { scale: &scale, bias: Some(&bias), y_zero: 121, lo: 0, hi: 255 };
            let mut y = vec![0u8; count];
            packed.run_on(&x, case.x, zx as u8, &case.g, ConvOut::U8(rq, &mut y), threads, path).unwrap();
            let plane = shape[2] * shape[3];
            let mut inside = 0;
            for (i, (&got, &s)) in y.iter().zip(&want).enumerate() {
                let o = (i / plane) % co;
                let v = ((s as f64 + bias[o] as f64) * scale[o] + 121.0).round_ties_even().clamp(0.0, 255.0) as u8;
                assert_eq!(got, v, "requantized at {i}, {path:?}");
                inside += usize::from(got > 0 && got < 255);
            }
            assert!(inside > 0, "every output saturated: the scales test nothing");
            let rq = Requant { scale: &scale[..1], bias: None, y_zero: -3, lo: -128, hi: 127 };
            let mut y = vec![0i32; count];
            packed.run_on(&x, case.x, zx as u8, &case.g, ConvOut::I32(rq, &mut y), threads, path).unwrap();
            for (&got, &s) in y.iter().zip(&want) {
                assert_eq!(got, ((s as f64 * scale[0] - 3.0).round_ties_even().clamp(-128.0, 127.0)) as i32);
            }
        }
    }
}

#[test]
fn packed_conv_matches_the_definition_on_every_tile() {
    for (i, case) in cases().iter().enumerate() {
        run_case(case, false, 17 + i as u64);
        run_case(case, true, 91 + i as u64);
    }
}

#[test]
fn packed_conv_names_bad_shapes() {
    let g = IntConv2d { stride: [1, 1], pads: [0; 4], dilation: [1, 1], groups: 1 };
    let err = Int8Conv::new(&[0i8; 10], [2, 1, 2, 2], 1, &[0]).unwrap_err().to_string();
    assert!(err.contains("[2, 1, 2, 2]") && err.contains("10 values"), "{err}");
    let err = Int8Conv::new(&[0i8; 8], [2, 1, 2, 2], 1, &[0, 0, 0]).unwrap_err().to_string();
    assert!(err.contains("3"), "{err}");
    let packed = Int8Conv::new(&[1i8; 8], [2, 1, 2, 2], 1, &[0]).unwrap();
    let mut out = vec![0i32; 2];
    let err = packed.run(&[0u8; 8], [1, 2, 2, 2], 0, &g, ConvOut::Sums(&mut out), 1).unwrap_err().to_string();
    assert!(err.contains("2 channels"), "{err}");
    let err = packed.run(&[0u8; 4], [1, 1, 2, 2], 0, &g, ConvOut::Sums(&mut [0i32; 3]), 1).unwrap_err().to_string();
    assert!(err.contains("expected an output of 2 values"), "{err}");
    let err = packed.run(&[0u8; 1], [1, 1, 1, 1], 0, &g, ConvOut::Sums(&mut out), 1).unwrap_err().to_string();
    assert!(err.contains("larger than the padded"), "{err}");
}

/// `Int8Matrix::dynamic_linear` equals its nodes evaluated one at a time:
/// `DynamicQuantizeLinear`'s formula, the exact integer product, and the
/// f32 cast, scale product, multiply, bias add and relu.
#[test]
fn dynamic_linear_equals_its_nodes() {
    use super::{dynamic_quantize_u8, Int8Matrix};
    use crate::tensor::Tensor;
    let (m, k, n) = (5, 70, 40);
    let mut rng = Rng(5);
    let x: Vec<f32> = (0..m * k).map(|_| rng.range(-3000, 2000) as f32 * 1e-3).collect();
    let w: Vec<i64> = (0..k * n).map(|_| rng.range(-127, 127)).collect();
    let bias: Vec<f32> = (0..n).map(|_| rng.range(-500, 500) as f32 * 1e-3).collect();
    let w_scale = 0.0123f32;
    let mat = Int8Matrix::new(&Tensor::from_vec(w.clone(), &[k, n]).unwrap(), &[0]).unwrap().unwrap();
    let xt = Tensor::from_vec(x.clone(), &[m, k]).unwrap();
    let bt = Tensor::from_vec(bias.clone(), &[n]).unwrap();
    let got = mat.dynamic_linear(&xt, &[w_scale], Some(&bt), true).unwrap().unwrap();
    let (q, sx, zx) = dynamic_quantize_u8(&xt).unwrap().unwrap();
    let q = q.to_vec::<i64>();
    let s = sx * w_scale;
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let sum: i64 = (0..k).map(|kk| (q[i * k + kk] - zx) * w[kk * n + j]).sum();
            want[i * n + j] = (sum as f32 * s + bias[j]).max(0.0);
        }
    }
    assert_eq!(got.to_vec::<f32>(), want);
    assert!(want.iter().any(|&v| v > 0.0) && want.contains(&0.0));
    // Not f32, or a NaN: declined for the nodes to compute.
    assert!(mat.dynamic_linear(&Tensor::from_vec(vec![0i64; k], &[1, k]).unwrap(), &[1.0], None, false).unwrap().is_none());
    assert!(mat.dynamic_linear(&Tensor::from_vec(vec![f32::NAN; k], &[1, k]).unwrap(), &[1.0], None, false).unwrap().is_none());
    let err = mat.dynamic_linear(&Tensor::from_vec(vec![0f32; 3], &[1, 3]).unwrap(), &[1.0], None, false).unwrap_err().to_string();
    assert!(err.contains("70 rows"), "{err}");
}
