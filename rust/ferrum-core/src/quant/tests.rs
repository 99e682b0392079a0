//! Burn's expected values (burn-backend-tests, quantization/ops/extended/quantize.rs
//! and calibration.rs at v0.20.1), and the linear product on both paths.

use super::{QTensor, QuantLevel, QuantParam, QuantScheme, QuantValue};
use crate::tensor::Tensor;

fn q8s(level: QuantLevel) -> QuantScheme {
    QuantScheme { value: QuantValue::Q8S, level, param: QuantParam::F32 }
}

fn tensor(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).unwrap()
}

fn arange(n: usize, shape: &[usize]) -> Tensor {
    tensor(&(0..n).map(|i| i as f32).collect::<Vec<_>>(), shape)
}

fn assert_close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "at {i}: {g} vs {w}");
    }
}

#[test]
fn quantize_with_given_scale() {
    let q = QTensor::quantize(&tensor(&[-1.8, -1.0, 0.0, 0.5], &[4]), &q8s(QuantLevel::Tensor), &tensor(&[0.014_173_228], &[1])).unwrap();
    assert_eq!(q.raw_values(), &[-127, -71, 0, 35]);
    assert_eq!(q.raw_scales(), &[0.014_173_228]);
    assert_close(q.dequantize().unwrap().as_slice::<f32>().unwrap(), &[-1.8, -1.0062993, 0.0, 0.496063], 1e-6);
}

#[test]
fn quantize_dynamic_per_tensor() {
    let q = QTensor::quantize_dynamic(&tensor(&[5.0, 0.0, 4.0, -12.7], &[4]), &q8s(QuantLevel::Tensor)).unwrap();
    assert_eq!(q.raw_values(), &[50, 0, 40, -127]);
    assert_close(q.raw_scales(), &[0.1], 1e-7);
    // arange(0..32) quantized then times 10: Burn's values.
    let d = QTensor::quantize_dynamic(&arange(32, &[32]), &q8s(QuantLevel::Tensor)).unwrap().dequantize().unwrap();
    let times10: Vec<f32> = d.as_slice::<f32>().unwrap().iter().map(|v| v * 10.0).collect();
    assert_close(&times10[..8], &[0.0, 9.76378, 19.52756, 29.29134, 39.05512, 48.818897, 61.02362, 70.7874], 1e-5);
    assert_close(&times10[30..], &[300.23624, 310.0], 1e-5);
}

#[test]
fn quantize_dynamic_per_block_arange() {
    let scheme = q8s(QuantLevel::Block(vec![2, 16]));
    let q = QTensor::quantize_dynamic(&arange(256, &[16, 16]), &scheme).unwrap();
    assert_eq!(q.raw_scales().len(), 8);
    assert_eq!(q.scales().unwrap().shape(), &[8, 1]);
    let d = q.dequantize().unwrap();
    let d = d.as_slice::<f32>().unwrap();
    assert_close(&d[..8], &[0.0, 0.97637796, 1.9527559, 2.929134, 3.9055119, 4.88189, 6.102362, 7.07874], 1e-5);
    assert_close(&d[64..70], &[64.33071, 65.07874, 65.826775, 67.32284, 68.07087, 68.8189], 1e-5);
    assert_close(&d[96..100], &[96.0, 97.0, 98.0, 99.0], 1e-5);
    assert_close(&d[128..134], &[127.70079, 128.95276, 130.20473, 131.4567, 131.4567, 132.70866], 1e-5);
    assert_close(&d[250..], &[250.98425, 250.98425, 252.99213, 252.99213, 255.0, 255.0], 1e-5);
}

#[test]
fn min_max_scales_per_block() {
    let t = tensor(&[-1.8, -1.0, 0.0, 0.5, 1.8, 1.0, 0.0, -0.5, 0.01, 0.02, 0.03, 0.04, -0.01, -0.02, -0.03, -0.04], &[4, 4]);
    let scheme = q8s(QuantLevel::Block(vec![4]));
    // Burn's ranges per block: [-1.8, 0.5], [-0.5, 1.8], [0.01, 0.04], [-0.04, -0.01].
    let want: Vec<f32> = [1.8f32, 1.8, 0.04, 0.04].iter().map(|a| 2.0 * a / 254.0).collect();
    assert_close(&QTensor::min_max_scales(&t, &scheme).unwrap(), &want, 1e-7);
    assert_eq!(scheme.params_shape(&[4, 4]), vec![4, 1]);
}

#[test]
fn narrow_values_and_scale_precision() {
    // In f32, -1 / (2 / 15) is -7.4999995: Q4F rounds it to -7, as Burn computes it.
    let t = tensor(&[-1.0, -0.55, 0.25, 1.0], &[4]);
    for (value, want) in [(QuantValue::Q4S, [-7, -4, 2, 7]), (QuantValue::Q4F, [-7, -4, 2, 7]), (QuantValue::Q2S, [-1, -1, 0, 1])] {
        let q = QTensor::quantize_dynamic(&t, &QuantScheme { value, level: QuantLevel::Tensor, param: QuantParam::F32 }).unwrap();
        assert_eq!(q.raw_values(), &want, "{value:?}");
    }
    // F16 scales hold what f16 holds.
    let q = QTensor::quantize_dynamic(&tensor(&[0.3, -0.1], &[2]), &QuantScheme { value: QuantValue::Q8S, level: QuantLevel::Tensor, param: QuantParam::F16 }).unwrap();
    assert_eq!(q.raw_scales()[0], half::f16::from_f32(0.6 / 254.0).to_f32());
}

#[test]
fn bad_input_is_an_error() {
    let t = arange(10, &[10]);
    assert!(QTensor::quantize_dynamic(&t, &q8s(QuantLevel::Block(vec![4]))).is_err(), "10 values in blocks of 4");
    assert!(QTensor::quantize_dynamic(&t, &q8s(QuantLevel::Block(vec![300]))).is_err(), "Burn's block dims are u8");
    assert!(QTensor::quantize(&t, &q8s(QuantLevel::Tensor), &tensor(&[0.1, 0.2], &[2])).is_err(), "two scales for one");
    assert!(QTensor::quantize(&t, &q8s(QuantLevel::Tensor), &tensor(&[f32::NAN], &[1])).is_err());
    assert!(QTensor::quantize_dynamic(&tensor(&[1.0, f32::INFINITY], &[2]), &q8s(QuantLevel::Tensor)).is_err());
    assert!(QTensor::from_parts(vec![-128], &[1], vec![0.1], &q8s(QuantLevel::Tensor)).is_err(), "-128 is outside Q8S");
    assert!(QTensor::from_parts(vec![1, 2], &[1], vec![0.1], &q8s(QuantLevel::Tensor)).is_err());
    assert!(QuantScheme::from_names("E4M3", None, "F32").is_err());
    assert!(QuantScheme::from_names("Q8S", None, "UE8M0").is_err());
}

#[test]
fn linear_on_the_int8_product_and_on_dequantized_blocks() {
    let (k, n, m) = (8usize, 5usize, 3usize);
    let w: Vec<f32> = (0..k * n).map(|i| ((i * 7 % 11) as f32 - 5.0) / 10.0).collect();
    let x: Vec<f32> = (0..m * k).map(|i| ((i * 5 % 13) as f32 - 6.0) / 7.0).collect();
    let bias: Vec<f32> = (0..n).map(|j| j as f32 / 10.0).collect();
    for level in [QuantLevel::Tensor, QuantLevel::Block(vec![5])] {
        let q = QTensor::quantize_dynamic(&tensor(&w, &[k, n]), &q8s(level.clone())).unwrap();
        assert_eq!(q.has_int8_product(), level == QuantLevel::Tensor);
        let y = q.linear(&tensor(&x, &[1, m, k]), Some(&tensor(&bias, &[n]))).unwrap();
        assert_eq!(y.shape(), &[1, m, n]);
        // Against the dequantized weight in f64: the int8 path also quantizes x (1/255 of its range a step).
        let dw = q.dequantize().unwrap();
        let dw = dw.as_slice::<f32>().unwrap();
        let tol = if level == QuantLevel::Tensor { 0.05 } else { 1e-5 };
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|kk| x[i * k + kk] as f64 * dw[kk * n + j] as f64).sum::<f64>() + bias[j] as f64;
                let got = y.as_slice::<f32>().unwrap()[i * n + j] as f64;
                assert!((got - want).abs() <= tol, "{level:?} ({i},{j}): {got} vs {want}");
            }
        }
    }
    let q = QTensor::quantize_dynamic(&tensor(&w, &[k, n]), &q8s(QuantLevel::Tensor)).unwrap();
    assert!(q.linear(&tensor(&x[..m * 4], &[m, 4]), None).is_err(), "d_input differs");
    assert!(q.linear(&tensor(&x, &[m, k]), Some(&tensor(&bias[..2], &[2]))).is_err(), "bias of 2 for 5 outputs");
}

#[test]
fn conv2d_on_the_int8_product_and_grouped_on_dequantized_weights() {
    use crate::ops::conv::ConvOptions;
    let (batch, c_in, h, w, c_out) = (2usize, 3usize, 7usize, 6usize, 5usize);
    let x: Vec<f32> = (0..batch * c_in * h * w).map(|i| ((i * 7 % 17) as f32 - 8.0) / 5.0).collect();
    let wv: Vec<f32> = (0..c_out * c_in * 3 * 3).map(|i| ((i * 5 % 11) as f32 - 5.0) / 20.0).collect();
    let bias: Vec<f32> = (0..c_out).map(|o| o as f32 / 4.0).collect();
    let xt = tensor(&x, &[batch, c_in, h, w]);
    let (lo, hi) = x.iter().fold((0f32, 0f32), |(l, h), &v| (l.min(v), h.max(v)));
    for (stride, pad) in [([1, 1], [(1, 1), (1, 1)]), ([2, 1], [(0, 1), (2, 0)])] {
        let options = ConvOptions { stride, padding: pad, dilation: [1, 1], groups: 1 };
        let q = QTensor::quantize_dynamic(&tensor(&wv, &[c_out, c_in, 3, 3]), &q8s(QuantLevel::Tensor)).unwrap();
        assert!(q.has_int8_conv(1));
        let got = q.conv2d(&xt, Some(&tensor(&bias, &[c_out])), &options).unwrap();
        let want = xt.conv2d(&q.dequantize().unwrap(), Some(&tensor(&bias, &[c_out])), &options).unwrap();
        assert_eq!(got.shape(), want.shape());
        // The int8 path differs from the float product on the same weights by the input's
        // quantization alone: half a step (1/255 of a row's range, at most the input's) per tap.
        let wd = q.dequantize().unwrap();
        let wsum = wd.as_slice::<f32>().unwrap().chunks(c_in * 9).map(|r| r.iter().map(|v| v.abs()).sum::<f32>()).fold(0f32, f32::max);
        let tol = 0.5 * (hi - lo) / 255.0 * wsum * 1.01 + 1e-5;
        for (i, (a, b)) in got.as_slice::<f32>().unwrap().iter().zip(want.as_slice::<f32>().unwrap()).enumerate() {
            assert!((a - b).abs() <= tol, "stride {stride:?} pad {pad:?} at {i}: {a} vs {b} (tol {tol})");
        }
    }
    // Two groups: the dequantized weight through the float convolution, exactly.
    let grouped = QTensor::quantize_dynamic(&tensor(&wv[..54], &[6, 1, 3, 3]), &q8s(QuantLevel::Tensor)).unwrap();
    let xg = tensor(&x[..batch * 2 * h * w], &[batch, 2, h, w]);
    let options = ConvOptions { stride: [1, 1], padding: [(0, 0), (0, 0)], dilation: [1, 1], groups: 2 };
    assert!(!grouped.has_int8_conv(2));
    let got = grouped.conv2d(&xg, None, &options).unwrap();
    let want = xg.conv2d(&grouped.dequantize().unwrap(), None, &options).unwrap();
    assert_eq!(got.as_slice::<f32>().unwrap(), want.as_slice::<f32>().unwrap());
    // A wrong input is the convolution's own error.
    let bad = tensor(&x[..batch * 2 * h * w], &[batch, 2, h, w]);
    let q = QTensor::quantize_dynamic(&tensor(&wv, &[c_out, c_in, 3, 3]), &q8s(QuantLevel::Tensor)).unwrap();
    assert!(q.conv2d(&bad, None, &ConvOptions { stride: [1, 1], padding: [(0, 0), (0, 0)], dilation: [1, 1], groups: 1 }).is_err());
}

#[test]
fn int8_matrix_products_follow_onnx_matmul_integer() {
    use crate::quant::Int8Matrix;
    // ONNX's MatMulInteger example: a uint8 [4, 3], b uint8 [3, 2] with zero points 12 and 0;
    // here b fits int8, so it runs on the int8 tiles.
    let a = Tensor::from_vec(vec![11i64, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0], &[4, 3]).unwrap();
    let b = Tensor::from_vec(vec![1i64, 4, 2, 5, 3, 6], &[3, 2]).unwrap();
    let w = Int8Matrix::new(&b, &[0]).unwrap().expect("b fits int8");
    let y = w.matmul(&a, &[12]).unwrap().expect("a fits uint8");
    assert_eq!(y.shape(), &[4, 2]);
    assert_eq!(y.to_vec::<i64>(), vec![-38, -83, -44, -98, -50, -113, -56, -128]);
    // A batch of matrices, and per-column weight zero points.
    let a3 = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6], &[2, 1, 3]).unwrap();
    let w2 = Int8Matrix::new(&b, &[1, -1]).unwrap().unwrap();
    assert_eq!(w2.matmul(&a3, &[0]).unwrap().unwrap().to_vec::<i64>(), vec![8, 38, 17, 92]);
    // Values outside u8 / int8 leave the product to the caller.
    assert!(w.matmul(&Tensor::from_vec(vec![-1i64, 0, 0], &[1, 3]).unwrap(), &[0]).unwrap().is_none());
    assert!(w.matmul(&a, &[256]).unwrap().is_none());
    assert!(Int8Matrix::new(&Tensor::from_vec(vec![200i64, 0], &[1, 2]).unwrap(), &[0]).unwrap().is_none());
    let err = w.matmul(&Tensor::from_vec(vec![1i64, 2], &[1, 2]).unwrap(), &[0]).unwrap_err().to_string();
    assert!(err.contains("the weight's 3 rows"), "{err}");
}
