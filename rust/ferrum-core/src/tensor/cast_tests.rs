//! Casts between every dtype, and the storage dtypes (f16, bf16, i32, u8)
//! met by kernels that compute in f32 or i64.

use half::{bf16, f16};

use crate::{DType, Error, Tensor};

#[test]
fn every_dtype_has_a_compute_dtype_of_its_kind() {
    for d in DType::ALL {
        assert_eq!(d.compute().kind(), d.kind());
        assert_eq!(d.is_storage_only(), matches!(d, DType::F16 | DType::BF16 | DType::I32 | DType::U8));
        assert!(!d.compute().is_storage_only());
    }
}

#[test]
fn casts_round_trip_values_every_dtype_holds() {
    let t = Tensor::from_vec(vec![0i64, 1, 7, 100], &[2, 2]).unwrap();
    for d in DType::ALL {
        let back = t.cast(d).unwrap().cast(DType::I64).unwrap();
        let want: Vec<i64> = if d == DType::Bool { vec![0, 1, 1, 1] } else { vec![0, 1, 7, 100] };
        assert_eq!(back.to_vec::<i64>(), want, "through {d}");
    }
}

#[test]
fn half_floats_round_to_nearest_even() {
    // 1 + 2^-11 lies halfway between two f16 values: ties go to the even one (1.0).
    let t = Tensor::from_vec(vec![1.0f32 + 2f32.powi(-11), 1.0 + 3.0 * 2f32.powi(-11), 70000.0], &[3]).unwrap();
    let h = t.cast(DType::F16).unwrap().to_vec::<f16>();
    assert_eq!(h[0], f16::ONE);
    assert_eq!(h[1].to_f32(), 1.0 + 4.0 * 2f32.powi(-11));
    assert!(h[2].is_infinite());
    // bf16 keeps f32's exponent: 1 + 2^-8 is halfway, ties to even (1.0).
    let b = Tensor::from_vec(vec![1.0f32 + 2f32.powi(-8), 3e38], &[2]).unwrap().cast(DType::BF16).unwrap().to_vec::<bf16>();
    assert_eq!(b[0], bf16::ONE);
    assert!(b[1].is_finite());
}

#[test]
fn out_of_range_casts_are_errors_naming_the_value() {
    let cases: Vec<(Tensor, DType, &str)> = vec![
        (Tensor::from_vec(vec![1i64, 300], &[2]).unwrap(), DType::U8, "300"),
        (Tensor::from_vec(vec![-1i64], &[1]).unwrap(), DType::U8, "-1"),
        (Tensor::from_vec(vec![1i64 << 40], &[1]).unwrap(), DType::I32, "1099511627776"),
        (Tensor::from_vec(vec![f32::NAN], &[1]).unwrap(), DType::I64, "NaN"),
        (Tensor::from_vec(vec![f64::INFINITY], &[1]).unwrap(), DType::I32, "inf"),
        (Tensor::from_vec(vec![9.3e18f64], &[1]).unwrap(), DType::I64, "9.3e18"),
        (Tensor::from_vec(vec![-300i32], &[1]).unwrap(), DType::U8, "-300"),
    ];
    for (t, d, shown) in cases {
        match t.cast(d) {
            Err(Error::InvalidArgument { op: "cast", reason }) => assert!(reason.contains(shown) && reason.contains(d.name()), "{reason}"),
            other => panic!("{} -> {d}: expected an error, found {other:?}", t.dtype()),
        }
    }
}

#[test]
fn in_range_casts_truncate_toward_zero() {
    let t = Tensor::from_vec(vec![-2.9f32, -0.5, 255.9, 2147483520.0], &[4]).unwrap();
    assert_eq!(t.cast(DType::I32).unwrap().to_vec::<i32>(), vec![-2, 0, 255, 2147483520]);
    let u = Tensor::from_vec(vec![0.9f64, 255.5], &[2]).unwrap();
    assert_eq!(u.cast(DType::U8).unwrap().to_vec::<u8>(), vec![0, 255]);
}

#[test]
fn compute_kernels_refuse_or_widen_storage_dtypes_and_views_keep_them() {
    let h = Tensor::from_vec(vec![f16::ONE, f16::from_f32(2.0)], &[2]).unwrap();
    assert!(matches!(h.powf_scalar(2.5), Err(Error::StorageDType { dtype: DType::F16, .. })));
    // The element-wise kernels read half floats, computing in f32.
    let e = h.float_unary(crate::ops::unary::FloatUnary::Exp).unwrap();
    assert_eq!(e.to_vec::<f16>(), vec![f16::from_f32(1f32.exp()), f16::from_f32(2f32.exp())]);
    let u = Tensor::from_vec(vec![1u8, 2, 3, 4], &[2, 2]).unwrap();
    assert_eq!(u.transpose().to_vec::<u8>(), vec![1, 3, 2, 4]);
    // An i32/u8 index tensor is read as i64 by the index kernels.
    let x = Tensor::from_vec(vec![10.0f32, 20.0, 30.0], &[3]).unwrap();
    let idx = Tensor::from_vec(vec![2u8, 0], &[2]).unwrap();
    assert_eq!(x.select(0, &idx).unwrap().to_vec::<f32>(), vec![30.0, 10.0]);
}

#[test]
fn half_casts_from_and_to_f32_round_as_the_half_crate() {
    // Bit patterns across the whole f32 range (every exponent, NaN and infinity among them),
    // in a tensor long enough to be converted on every thread.
    let values: Vec<f32> = (0..300_000u32).map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761))).collect();
    let t = Tensor::from_vec(values.clone(), &[values.len()]).unwrap();
    let to_bf16 = t.cast(DType::BF16).unwrap().to_vec::<bf16>();
    let to_f16 = t.cast(DType::F16).unwrap().to_vec::<f16>();
    for ((&v, b), h) in values.iter().zip(&to_bf16).zip(&to_f16) {
        if v.is_nan() {
            assert!(b.is_nan() && h.is_nan(), "{v:e}");
        } else {
            assert_eq!(b.to_bits(), bf16::from_f32(v).to_bits(), "{v:e}");
            assert_eq!(h.to_bits(), f16::from_f32(v).to_bits(), "{v:e}");
        }
    }
    // Widening is exact: every half value comes back as the f32 it stands for.
    let back_b = Tensor::from_vec(to_bf16.clone(), &[values.len()]).unwrap().cast(DType::F32).unwrap().to_vec::<f32>();
    let back_h = Tensor::from_vec(to_f16.clone(), &[values.len()]).unwrap().cast(DType::F32).unwrap().to_vec::<f32>();
    for ((b, h), (wb, wh)) in to_bf16.iter().zip(&to_f16).zip(back_b.iter().zip(&back_h)) {
        assert!(b.to_f32().to_bits() == wb.to_bits() || (b.is_nan() && wb.is_nan()));
        assert!(h.to_f32().to_bits() == wh.to_bits() || (h.is_nan() && wh.is_nan()));
    }
    // A strided view converts its own elements.
    let view = t.reshape(&[1000, 300]).unwrap().transpose();
    let got = view.cast(DType::BF16).unwrap().cast(DType::F32).unwrap().to_vec::<f32>();
    let want: Vec<f32> = view.to_vec::<f32>().iter().map(|&v| bf16::from_f32(v).to_f32()).collect();
    assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())));
}
