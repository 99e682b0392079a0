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
