//! Classifying Float values (NaN, infinite, finite) and approximate
//! equality, each giving a Bool tensor.

use crate::element::{Element, FloatElement};
use crate::error::Result;
use crate::kernels::elementwise::{map, zip};
use crate::kernels::parallel::PAR_CHEAP;
use crate::tensor::Tensor;
use crate::with_float;

impl Tensor {
    pub fn is_nan(&self) -> Result<Tensor> {
        with_float!("is_nan", self.dtype(), T => map("is_nan", self, PAR_CHEAP, |x: T| x.is_nan()))
    }

    pub fn is_inf(&self) -> Result<Tensor> {
        with_float!("is_inf", self.dtype(), T => map("is_inf", self, PAR_CHEAP, |x: T| x.is_infinite()))
    }

    pub fn is_finite(&self) -> Result<Tensor> {
        with_float!("is_finite", self.dtype(), T => map("is_finite", self, PAR_CHEAP, |x: T| x.is_finite()))
    }

    /// `|a - b| <= atol + rtol * |b|` element-wise with broadcasting, as
    /// numpy.isclose: NaN is close to nothing, an infinity only to itself.
    pub fn is_close(&self, other: &Tensor, rtol: f64, atol: f64) -> Result<Tensor> {
        let op = "is_close";
        self.expect_same_dtype(op, other)?;
        with_float!(op, self.dtype(), T => {
            let (rtol, atol) = (T::from_f64(rtol), T::from_f64(atol));
            zip(op, self, other, PAR_CHEAP, move |a: T, b: T| close(a, b, rtol, atol))
        })
    }
}

#[inline(always)]
fn close<T: FloatElement>(a: T, b: T, rtol: T, atol: T) -> bool {
    // Without the finiteness test, a finite `a` would be "close" to an
    // infinite `b` because the tolerance itself becomes infinite.
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= atol + rtol * b.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::{DType, Kind};
    use crate::test_util::f32s as f;

    #[test]
    fn classifies_values() {
        let x = f(&[1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0], &[5]);
        assert_eq!(x.is_nan().unwrap().to_vec::<bool>(), vec![false, true, false, false, false]);
        assert_eq!(x.is_inf().unwrap().to_vec::<bool>(), vec![false, false, true, true, false]);
        assert_eq!(x.is_finite().unwrap().to_vec::<bool>(), vec![true, false, false, false, true]);
        let t = Tensor::from_vec(vec![f64::NAN, 1.0, 2.0, f64::INFINITY], &[2, 2]).unwrap().transpose();
        assert_eq!(t.is_nan().unwrap().to_vec::<bool>(), vec![true, false, false, false]);
        assert_eq!(t.is_inf().unwrap().to_vec::<bool>(), vec![false, false, false, true]);
    }

    #[test]
    fn is_close_follows_numpy() {
        let inf = f32::INFINITY;
        let a = f(&[1.0, 1.0, f32::NAN, inf, 1.0, inf, 100.0], &[7]);
        let b = f(&[1.0 + 1e-6, 1.1, f32::NAN, inf, inf, -inf, 100.0005], &[7]);
        let c = a.is_close(&b, 1e-5, 1e-8).unwrap();
        assert_eq!(c.to_vec::<bool>(), vec![true, false, false, true, false, false, true]);
        // Broadcasting a [1, 2] row against a [2, 2] transposed view.
        let m = f(&[0.0, 1.0, 2.0, 3.0], &[2, 2]).transpose();
        let r = f(&[0.0, 2.05], &[1, 2]);
        assert_eq!(m.is_close(&r, 0.0, 0.1).unwrap().to_vec::<bool>(), vec![true, true, false, false]);
    }

    #[test]
    fn errors() {
        let i = Tensor::zeros(&[2], DType::I64);
        assert_eq!(i.is_nan().unwrap_err().to_string(), "is_nan: expected a Float tensor, found Int");
        assert!(matches!(i.is_close(&i, 0.0, 0.0), Err(Error::KindMismatch { op: "is_close", expected: Kind::Float, found: Kind::Int })));
        let x = f(&[1.0], &[1]);
        let y = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
        assert!(matches!(x.is_close(&y, 0.0, 0.0), Err(Error::DTypeMismatch { op: "is_close", .. })));
        let e = x.is_close(&f(&[1.0, 2.0], &[2]), 0.0, 0.0);
        assert!(e.is_ok(), "size-1 dims broadcast");
        let e = f(&[1.0; 3], &[3]).is_close(&f(&[1.0, 2.0], &[2]), 0.0, 0.0).unwrap_err().to_string();
        assert!(e.starts_with("is_close: incompatible shapes [3] and [2]"), "{e}");
    }
}
