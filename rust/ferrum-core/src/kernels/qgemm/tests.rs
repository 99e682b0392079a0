//! The int8 linear against an f64 evaluation of the quantized product (the
//! same quantization written out independently), on the VNNI tile and the
//! portable one, and against the f32 product within the quantization error.

use super::driver::linear_q8_on;
use super::{pack_weights, quantize_symmetric_columns, Path};

/// Every usable path with every thread count.
fn with_threads(threads: &[usize]) -> Vec<(Path, usize)> {
    Path::all_usable().into_iter().flat_map(|p| threads.iter().map(move |&t| (p, t))).collect()
}

fn value(seed: usize) -> f32 {
    (((seed as f64 * 0.618_034).fract() - 0.5) * 4.0) as f32
}

/// Burn's test values for `Q8S`: `[5, 0, 4, -12.7]` quantizes to `[50, 0, 40, -127]` with scale 0.1.
#[test]
fn symmetric_columns_follow_burns_q8s() {
    let (q, scales) = quantize_symmetric_columns(&[5.0, 0.0, 4.0, -12.7], 4, 1);
    assert_eq!(q, vec![50, 0, 40, -127]);
    assert!((scales[0] - 0.1).abs() < 1e-7);
    // Two columns: each its own scale; an all-zero column gets scale 1.
    let (q, scales) = quantize_symmetric_columns(&[1.0, 0.0, -0.5, 0.0], 2, 2);
    assert_eq!(q, vec![127, 0, -64, 0]);
    assert_eq!(scales, vec![1.0 / 127.0, 1.0]);
}

/// The reference: rows quantized affine to u8 (range holding 0, zero point rounded), sums in f64.
fn reference(x: &[f32], m: usize, k: usize, q: &[i8], sw: &[f32], n: usize, bias: Option<&[f32]>) -> Vec<f64> {
    let mut out = vec![0f64; m * n];
    for i in 0..m {
        let row = &x[i * k..(i + 1) * k];
        let lo = row.iter().cloned().fold(0f32, f32::min);
        let hi = row.iter().cloned().fold(0f32, f32::max);
        let s = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
        let z = (-lo / s).round().clamp(0.0, 255.0);
        let qx: Vec<f64> = row.iter().map(|&v| ((v * (1.0 / s) + z).round().clamp(0.0, 255.0) - z) as f64).collect();
        for j in 0..n {
            let sum: f64 = (0..k).map(|kk| qx[kk] * q[kk * n + j] as f64).sum();
            out[i * n + j] = sum * s as f64 * sw[j] as f64 + bias.map_or(0.0, |b| b[j] as f64);
        }
    }
    out
}

#[test]
fn linear_matches_the_quantized_product() {
    let shapes = [(1, 1, 1), (3, 5, 7), (13, 4, 33), (12, 64, 32), (25, 67, 70), (64, 256, 96), (7, 1030, 5)];
    for (case, &(m, k, n)) in shapes.iter().enumerate() {
        let x: Vec<f32> = (0..m * k).map(|i| value(i + 11 * case) + if i % 5 == 0 { 1.5 } else { 0.0 }).collect();
        let w: Vec<f32> = (0..k * n).map(|i| value(3 * i + 7 + case)).collect();
        let bias: Vec<f32> = (0..n).map(|j| value(j + 100)).collect();
        let (q, sw) = quantize_symmetric_columns(&w, k, n);
        let packed = pack_weights(&q, &sw, k, n).unwrap();
        assert_eq!(packed.values(), q, "{m}x{k}x{n}: packing keeps the values");
        let expected = reference(&x, m, k, &q, &sw, n, Some(&bias));
        for path in Path::all_usable() {
            for threads in [1, 2] {
                let mut out = vec![f32::NAN; m * n];
                linear_q8_on(&x, m, &packed, Some(&bias), &mut out, threads, path).unwrap();
                for (idx, (&got, &want)) in out.iter().zip(&expected).enumerate() {
                    // The sums are exact; only the f32 epilogue rounds.
                    assert!((got as f64 - want).abs() <= 1e-5 * (1.0 + want.abs()), "{m}x{k}x{n} {path:?} threads={threads} at {idx}: {got} vs {want}");
                }
            }
        }
        // Against the float product: within the error both quantizations allow.
        let mut out = vec![0f32; m * n];
        linear_q8_on(&x, m, &packed, None, &mut out, 1, Path::best()).unwrap();
        for i in 0..m {
            let xmax = x[i * k..(i + 1) * k].iter().fold(0f32, |a, &v| a.max(v.abs())) as f64;
            for j in 0..n {
                let exact: f64 = (0..k).map(|kk| x[i * k + kk] as f64 * w[kk * n + j] as f64).sum();
                let wsum: f64 = (0..k).map(|kk| w[kk * n + j].abs() as f64).sum();
                let bound = k as f64 * (xmax / 255.0 + 1e-6) * (sw[j] as f64 * 127.0) + xmax * wsum / 127.0 * 0.5 + 1e-4;
                assert!((out[i * n + j] as f64 - exact).abs() <= bound, "{m}x{k}x{n} at ({i},{j}): {} vs {exact}", out[i * n + j]);
            }
        }
    }
}

#[test]
fn bad_sizes_are_errors() {
    assert!(pack_weights(&[1, 2, 3], &[1.0], 2, 2).is_err());
    assert!(pack_weights(&[0; 4], &[1.0; 2], 2, 2).is_ok());
    let packed = pack_weights(&[1; 6], &[1.0; 3], 2, 3).unwrap();
    let mut out = vec![0f32; 3];
    assert!(super::linear_q8(&[1.0; 3], 1, &packed, None, &mut out, 1).is_err());
    assert!(super::linear_q8(&[1.0; 2], 1, &packed, Some(&[0.0; 2]), &mut out, 1).is_err());
}

/// `Σ_k (a - za) * (w - zw)` in i64, the definition ONNX's MatMulInteger gives.
fn integer_reference(a: &[u8], m: usize, k: usize, za: &[i32], w: &[i8], n: usize, zw: &[i32]) -> Vec<i64> {
    let z = |zs: &[i32], i: usize| i64::from(if zs.len() == 1 { zs[0] } else { zs[i] });
    let mut out = vec![0i64; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|kk| (i64::from(a[i * k + kk]) - z(za, i)) * (i64::from(w[kk * n + j]) - z(zw, j))).sum();
        }
    }
    out
}

#[test]
fn integer_product_is_exact_on_both_tiles() {
    use super::integer::matmul_u8s8_on;
    // Edges of every tile (m, n not multiples of 12 and 32, k not of 4) and the extreme values.
    // (100, 9, 200): several blocks of row and column panels, split over threads.
    for (m, k, n) in [(1, 1, 1), (13, 37, 45), (25, 64, 70), (3, 130, 33), (100, 9, 200)] {
        let a: Vec<u8> = (0..m * k).map(|i| if i % 17 == 0 { 255 } else { (i * 73 % 256) as u8 }).collect();
        let w: Vec<i8> = (0..k * n).map(|i| if i % 19 == 0 { -128 } else { (i * 41 % 256) as u8 as i8 }).collect();
        let packed = pack_weights(&w, &vec![1.0; n], k, n).unwrap();
        let rows: Vec<i32> = (0..m).map(|i| (i * 29 % 256) as i32).collect();
        let cols: Vec<i32> = (0..n).map(|j| (j as i32 * 7 % 256) - 128).collect();
        for (za, zw) in [(vec![0], vec![0]), (vec![128], vec![-3]), (rows.clone(), cols.clone()), (vec![255], cols.clone())] {
            let want = integer_reference(&a, m, k, &za, &w, n, &zw);
            for (path, threads) in with_threads(&[1, 2]) {
                let mut out = vec![0i32; m * n];
                matmul_u8s8_on(&a, m, &za, &packed, &zw, &mut out, threads, path).unwrap();
                let got: Vec<i64> = out.iter().map(|&v| i64::from(v)).collect();
                assert_eq!(got, want, "m={m} k={k} n={n} za={za:?} {path:?} threads={threads}");
            }
        }
    }
    let packed = pack_weights(&[1, 2], &[1.0, 1.0], 1, 2).unwrap();
    let err = matmul_u8s8_on(&[1, 2], 2, &[0, 0, 0], &packed, &[0], &mut [0; 4], 1, Path::Portable).unwrap_err().to_string();
    assert!(err.contains("1 or 2 input zero points"), "{err}");
}

/// Shapes whose k spans several blocks of [`super::blocked::KC`] quads (up to
/// 4096+), m and n off the tile sizes, on both tiles and both thread counts.
#[test]
fn blocked_integer_product_is_exact_over_long_k() {
    use super::integer::matmul_u8s8_on;
    for (m, k, n) in [(13, 515, 45), (30, 1537, 70), (5, 4099, 33), (25, 4096, 64)] {
        let a: Vec<u8> = (0..m * k).map(|i| if i % 23 == 0 { 255 } else { (i * 89 % 256) as u8 }).collect();
        let w: Vec<i8> = (0..k * n).map(|i| if i % 31 == 0 { -128 } else { (i * 53 % 256) as u8 as i8 }).collect();
        let packed = pack_weights(&w, &vec![1.0; n], k, n).unwrap();
        let rows: Vec<i32> = (0..m).map(|i| (i * 41 % 256) as i32).collect();
        let cols: Vec<i32> = (0..n).map(|j| (j as i32 * 13 % 256) - 128).collect();
        for (za, zw) in [(vec![0], vec![0]), (rows.clone(), cols.clone())] {
            let want = integer_reference(&a, m, k, &za, &w, n, &zw);
            for (path, threads) in with_threads(&[1, 2]) {
                let mut out = vec![0i32; m * n];
                matmul_u8s8_on(&a, m, &za, &packed, &zw, &mut out, threads, path).unwrap();
                let got: Vec<i64> = out.iter().map(|&v| i64::from(v)).collect();
                assert_eq!(got, want, "m={m} k={k} n={n} {path:?} threads={threads}");
            }
        }
    }
}

/// The linear over several blocks of k: the partial sums carried between
/// blocks, then the epilogue, on both tiles.
#[test]
fn blocked_linear_matches_over_long_k() {
    for (case, &(m, k, n)) in [(5, 2053, 40), (14, 4100, 33)].iter().enumerate() {
        let x: Vec<f32> = (0..m * k).map(|i| value(i + 5 * case)).collect();
        let w: Vec<f32> = (0..k * n).map(|i| value(7 * i + 1)).collect();
        let (q, sw) = quantize_symmetric_columns(&w, k, n);
        let packed = pack_weights(&q, &sw, k, n).unwrap();
        let expected = reference(&x, m, k, &q, &sw, n, None);
        for (path, threads) in with_threads(&[1, 2]) {
            let mut out = vec![f32::NAN; m * n];
            linear_q8_on(&x, m, &packed, None, &mut out, threads, path).unwrap();
            for (idx, (&got, &want)) in out.iter().zip(&expected).enumerate() {
                assert!((got as f64 - want).abs() <= 1e-5 * (1.0 + want.abs()), "{m}x{k}x{n} {path:?} threads={threads} at {idx}: {got} vs {want}");
            }
        }
    }
}

/// The vectorizable rounding of the activations equals `round` (ties away
/// from zero) then the clamp, on ties, near-ties, both ends and NaN.
#[test]
fn activation_rounding_equals_round_then_clamp() {
    let inv_z = [(1.0f32, 0.0f32), (0.5, 17.0), (3.7, 128.0), (1.0 / 0.003_921_569, 255.0)];
    let values = [0.0f32, 0.5, 1.5, 2.5, 0.499_999_97, -0.5, -1.5, -300.0, 254.5, 255.4, 1e9, -1e9, 63.75, f32::NAN];
    for &(inv, z) in &inv_z {
        for &v in &values {
            let want = (v * inv + z).round().clamp(0.0, 255.0) as u8;
            assert_eq!(super::pack::quantize_u8(v, inv, z), want, "v={v} inv={inv} z={z}");
        }
    }
}

/// The scaled product against the integer reference followed by the same
/// f32 steps one at a time (cast, multiply, add, relu), on both tiles.
#[test]
fn scaled_integer_product_rounds_each_step_in_f32() {
    use super::integer::matmul_u8s8_scaled_on;
    use super::Rows;
    for (m, k, n) in [(1, 3, 5), (13, 37, 45), (64, 600, 70)] {
        let a: Vec<u8> = (0..m * k).map(|i| (i * 89 % 256) as u8).collect();
        let w: Vec<i8> = (0..k * n).map(|i| (i * 53 % 256) as u8 as i8).collect();
        let packed = pack_weights(&w, &vec![1.0; n], k, n).unwrap();
        let scale: Vec<f32> = (0..n).map(|j| 1e-4 * (j as f32 + 0.37)).collect();
        let bias: Vec<f32> = (0..n).map(|j| (j as f32 - 20.0) * 0.173).collect();
        let sums = integer_reference(&a, m, k, &[131], &w, n, &[0]);
        for (scales, with_bias, relu) in [(&scale[..], true, true), (&scale[..1], false, false), (&scale[..], true, false)] {
            let want: Vec<f32> = sums
                .iter()
                .enumerate()
                .map(|(i, &s)| {
                    let j = i % n;
                    let t = s as i32 as f32 * scales[if scales.len() == 1 { 0 } else { j }];
                    let y = if with_bias { t + bias[j] } else { t };
                    if relu { y.max(0.0) } else { y }
                })
                .collect();
            for (path, threads) in with_threads(&[1, 2]) {
                let mut out = vec![0f32; m * n];
                matmul_u8s8_scaled_on(Rows::U8(&a), m, 131, &packed, &[0], scales, with_bias.then_some(&bias[..]), relu, &mut out, threads, path).unwrap();
                assert_eq!(out, want, "m={m} k={k} n={n} {path:?} threads={threads} relu={relu}");
            }
        }
    }
    let packed = pack_weights(&[1, 2], &[1.0, 1.0], 1, 2).unwrap();
    let err = matmul_u8s8_scaled_on(Rows::U8(&[1, 2]), 2, 0, &packed, &[0], &[1.0; 3], None, false, &mut [0.0; 4], 1, Path::Portable).unwrap_err().to_string();
    assert!(err.contains("1 or 2 scales"), "{err}");
}

/// f32 rows quantized while packed give the product of the rows quantized
/// first by `DynamicQuantizeLinear`'s formula (scalar, half to even), on
/// every path, over the AMX and register tiles' edges.
#[test]
fn rows_quantized_while_packed_match_the_formula() {
    use super::integer::matmul_u8s8_scaled_on;
    use super::Rows;
    for (m, k, n) in [(1, 5, 3), (17, 65, 33), (40, 300, 70)] {
        let x: Vec<f32> = (0..m * k).map(|i| ((i * 7919 % 2001) as f32 - 800.0) * 1.37e-3).collect();
        let (scale, zero) = (2.2e-3f32 * 1.7, 93u8);
        let q: Vec<u8> = x.iter().map(|&v| ((v / scale).round_ties_even() + f32::from(zero)).clamp(0.0, 255.0) as u8).collect();
        if m * k > 100 {
            assert!(q.contains(&0) && q.contains(&255) && q.iter().any(|&v| v > 0 && v < 255), "the values test saturation and the inside");
        }
        let w: Vec<i8> = (0..k * n).map(|i| (i * 53 % 256) as u8 as i8).collect();
        let packed = pack_weights(&w, &vec![1.0; n], k, n).unwrap();
        let sums = integer_reference(&q, m, k, &[i32::from(zero)], &w, n, &[0]);
        let want: Vec<f32> = sums.iter().map(|&s| s as i32 as f32 * 0.5).collect();
        for (path, threads) in with_threads(&[1, 2]) {
            let mut out = vec![0f32; m * n];
            let rows = Rows::Quantized { x: &x, scale, zero };
            matmul_u8s8_scaled_on(rows, m, i32::from(zero), &packed, &[0], &[0.5], None, false, &mut out, threads, path).unwrap();
            assert_eq!(out, want, "m={m} k={k} n={n} {path:?} threads={threads}");
        }
    }
}

/// The quantizing loop (vectorized where the CPU allows) against the
/// formula per value, over ties, saturation, a ragged tail and a zero scale.
#[test]
fn quantize_u8_rounds_half_to_even_and_saturates() {
    let x: Vec<f32> = (0..203).map(|i| (i as f32 - 101.0) * 0.25).chain([1e30, -1e30, 0.5, 1.5, 2.5, -0.5, -2.5]).collect();
    for (scale, zero) in [(0.5f32, 128f32), (0.125, 3.0), (1.0, 0.0), (0.0, 7.0)] {
        let mut got = vec![0u8; x.len()];
        super::quantize_u8(&x, &mut got, scale, zero);
        for (&v, &g) in x.iter().zip(&got) {
            let q = v / scale;
            // A NaN quotient (0 / 0) lands on the lower clamp.
            let want = if q.is_nan() { 0.0 } else { (q.clamp(-512.0, 512.0).round_ties_even() + zero).clamp(0.0, 255.0) };
            assert_eq!(g, want as u8, "{v} / {scale} + {zero}");
        }
    }
}

/// Sizes on both sides of the AMX tile's edges (16 rows, 32-row blocks, 64
/// bytes of k, 16-column halves of a panel), and of the register tile's.
const EDGES: [usize; 6] = [1, 15, 17, 63, 65, 300];

/// The integer product on every usable path over the edge sizes, with
/// per-row and per-column zero points, exact against the i64 definition.
#[test]
fn edge_shapes_are_exact_on_every_path() {
    use super::integer::matmul_u8s8_on;
    for (s, &m) in EDGES.iter().enumerate() {
        for (t, &k) in EDGES.iter().enumerate() {
            let n = EDGES[(s + t) % EDGES.len()];
            let a: Vec<u8> = (0..m * k).map(|i| if i % 13 == 0 { 255 } else { (i * 71 % 256) as u8 }).collect();
            let w: Vec<i8> = (0..k * n).map(|i| if i % 11 == 0 { -128 } else { (i * 37 % 256) as u8 as i8 }).collect();
            let packed = pack_weights(&w, &vec![1.0; n], k, n).unwrap();
            let za: Vec<i32> = (0..m).map(|i| (i * 53 % 256) as i32).collect();
            let zw: Vec<i32> = (0..n).map(|j| (j as i32 * 19 % 256) - 128).collect();
            let want = integer_reference(&a, m, k, &za, &w, n, &zw);
            for (path, threads) in with_threads(&[1, 2]) {
                let mut out = vec![0i32; m * n];
                matmul_u8s8_on(&a, m, &za, &packed, &zw, &mut out, threads, path).unwrap();
                let got: Vec<i64> = out.iter().map(|&v| i64::from(v)).collect();
                assert_eq!(got, want, "m={m} k={k} n={n} {path:?} threads={threads}");
            }
        }
    }
}

/// The linear (zero points from the quantization, bias) on every usable
/// path over the edge sizes, against the f64 evaluation.
#[test]
fn edge_shapes_of_the_linear_on_every_path() {
    for (s, &m) in EDGES.iter().enumerate() {
        for (t, &k) in EDGES.iter().enumerate() {
            let n = EDGES[(s + 2 * t + 1) % EDGES.len()];
            // Shifted rows, so that the zero points differ from row to row.
            let x: Vec<f32> = (0..m * k).map(|i| value(i + 3) + (i / k.max(1)) as f32 * 0.01).collect();
            let w: Vec<f32> = (0..k * n).map(|i| value(5 * i + 2)).collect();
            let bias: Vec<f32> = (0..n).map(|j| value(j + 40)).collect();
            let (q, sw) = quantize_symmetric_columns(&w, k, n);
            let packed = pack_weights(&q, &sw, k, n).unwrap();
            let expected = reference(&x, m, k, &q, &sw, n, Some(&bias));
            for (path, threads) in with_threads(&[1, 2]) {
                let mut out = vec![f32::NAN; m * n];
                linear_q8_on(&x, m, &packed, Some(&bias), &mut out, threads, path).unwrap();
                for (idx, (&got, &want)) in out.iter().zip(&expected).enumerate() {
                    assert!((got as f64 - want).abs() <= 1e-5 * (1.0 + want.abs()), "{m}x{k}x{n} {path:?} threads={threads} at {idx}: {got} vs {want}");
                }
            }
        }
    }
}

/// The products pick AMX exactly when the CPU (and `FERRUM_AMX`) allow it,
/// and a path the CPU lacks falls back to the next one.
#[test]
fn the_fastest_usable_path_is_picked() {
    let amx = crate::kernels::amx::int8_available() && super::vnni_available();
    assert_eq!(Path::best() == Path::Amx, amx);
    assert_eq!(Path::Vnni.usable() == Path::Vnni, super::vnni_available());
    assert_eq!(Path::Portable.usable(), Path::Portable);
    assert!(Path::all_usable().contains(&Path::Portable));
    if !amx {
        eprintln!("no AMX-INT8 here: the AMX path is not checked");
    }
}
