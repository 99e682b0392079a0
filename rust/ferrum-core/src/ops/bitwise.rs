//! Bitwise ops on Int (i64) tensors, with a tensor (broadcasting) or a
//! scalar on the right.

use crate::dtype::Kind;
use crate::error::Result;
use crate::kernels::elementwise::{map_same, zip_same};
use crate::kernels::parallel::PAR_CHEAP;
use crate::tensor::Tensor;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitwiseOp {
    And,
    Or,
    Xor,
    LeftShift,
    RightShift,
}

impl BitwiseOp {
    pub fn name(self) -> &'static str {
        match self {
            BitwiseOp::And => "bitwise_and",
            BitwiseOp::Or => "bitwise_or",
            BitwiseOp::Xor => "bitwise_xor",
            BitwiseOp::LeftShift => "bitwise_left_shift",
            BitwiseOp::RightShift => "bitwise_right_shift",
        }
    }
}

// Shifts by an amount outside 0..64 would be overflow (a panic in debug, a
// masked amount in release), so they saturate instead: every bit shifted
// out, leaving 0 (or -1 for a negative value shifted right, as the
// arithmetic shift does once all bits are sign bits).

#[inline(always)]
fn shl(x: i64, n: i64) -> i64 {
    if (0..64).contains(&n) { x << n } else { 0 }
}

#[inline(always)]
fn shr(x: i64, n: i64) -> i64 {
    if (0..64).contains(&n) { x >> n } else { x >> 63 }
}

impl Tensor {
    /// `op(self, other)` element-wise with broadcasting.
    pub fn bitwise(&self, op: BitwiseOp, other: &Tensor) -> Result<Tensor> {
        let name = op.name();
        self.expect_kind(name, Kind::Int)?;
        other.expect_kind(name, Kind::Int)?;
        self.expect_not_storage_int(name)?;
        other.expect_not_storage_int(name)?;
        let (a, b) = (self.clone(), other.clone());
        match op {
            BitwiseOp::And => zip_same(name, a, b, PAR_CHEAP, |x: i64, y| x & y),
            BitwiseOp::Or => zip_same(name, a, b, PAR_CHEAP, |x: i64, y| x | y),
            BitwiseOp::Xor => zip_same(name, a, b, PAR_CHEAP, |x: i64, y| x ^ y),
            BitwiseOp::LeftShift => zip_same(name, a, b, PAR_CHEAP, shl),
            BitwiseOp::RightShift => zip_same(name, a, b, PAR_CHEAP, shr),
        }
    }

    /// `op(self, value)` element-wise.
    pub fn bitwise_scalar(&self, op: BitwiseOp, value: i64) -> Result<Tensor> {
        self.expect_kind(op.name(), Kind::Int)?;
        self.expect_not_storage_int(op.name())?;
        let a = self.clone();
        let name = op.name();
        match op {
            BitwiseOp::And => map_same(name, a, PAR_CHEAP, move |x: i64| x & value),
            BitwiseOp::Or => map_same(name, a, PAR_CHEAP, move |x: i64| x | value),
            BitwiseOp::Xor => map_same(name, a, PAR_CHEAP, move |x: i64| x ^ value),
            BitwiseOp::LeftShift => map_same(name, a, PAR_CHEAP, move |x: i64| shl(x, value)),
            BitwiseOp::RightShift => map_same(name, a, PAR_CHEAP, move |x: i64| shr(x, value)),
        }
    }

    pub fn bitwise_not(&self) -> Result<Tensor> {
        self.expect_kind("bitwise_not", Kind::Int)?;
        self.expect_not_storage_int("bitwise_not")?;
        map_same("bitwise_not", self.clone(), PAR_CHEAP, |x: i64| !x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::DType;
    use crate::test_util::i64s as ints;

    #[test]
    fn tensor_ops_broadcast() {
        let a = ints(&[0b1100, 0b1010, -1, 5], &[2, 2]);
        let b = ints(&[0b1010, 0b0110], &[1, 2]);
        assert_eq!(a.bitwise(BitwiseOp::And, &b).unwrap().to_vec::<i64>(), vec![0b1000, 0b0010, 0b1010, 4]);
        assert_eq!(a.bitwise(BitwiseOp::Or, &b).unwrap().to_vec::<i64>(), vec![0b1110, 0b1110, -1, 7]);
        assert_eq!(a.bitwise(BitwiseOp::Xor, &b).unwrap().to_vec::<i64>(), vec![0b0110, 0b1100, !0b1010, 3]);
        let t = a.transpose();
        assert_eq!(t.bitwise(BitwiseOp::And, &a).unwrap().to_vec::<i64>(), vec![0b1100, 0b1010, 0b1010, 5]);
    }

    #[test]
    fn shifts_saturate_outside_the_width() {
        let a = ints(&[1, -8, 3, -3], &[4]);
        let n = ints(&[3, 1, 64, -1], &[4]);
        assert_eq!(a.bitwise(BitwiseOp::LeftShift, &n).unwrap().to_vec::<i64>(), vec![8, -16, 0, 0]);
        assert_eq!(a.bitwise(BitwiseOp::RightShift, &n).unwrap().to_vec::<i64>(), vec![0, -4, 0, -1]);
        assert_eq!(a.bitwise_scalar(BitwiseOp::RightShift, 1).unwrap().to_vec::<i64>(), vec![0, -4, 1, -2]);
        assert_eq!(a.bitwise_scalar(BitwiseOp::LeftShift, 63).unwrap().to_vec::<i64>(), vec![i64::MIN, 0, i64::MIN, i64::MIN]);
    }

    #[test]
    fn scalar_ops_and_not() {
        let a = ints(&[6, -1, 0], &[3]);
        assert_eq!(a.bitwise_scalar(BitwiseOp::And, 3).unwrap().to_vec::<i64>(), vec![2, 3, 0]);
        assert_eq!(a.bitwise_scalar(BitwiseOp::Or, 1).unwrap().to_vec::<i64>(), vec![7, -1, 1]);
        assert_eq!(a.bitwise_scalar(BitwiseOp::Xor, -1).unwrap().to_vec::<i64>(), vec![-7, 0, -1]);
        assert_eq!(a.bitwise_not().unwrap().to_vec::<i64>(), vec![-7, 0, -1]);
        assert_eq!(a.to_vec::<i64>(), vec![6, -1, 0], "the input is untouched");
    }

    #[test]
    fn only_ints() {
        let f = Tensor::zeros(&[2], DType::F32);
        let e = f.bitwise_not().unwrap_err().to_string();
        assert_eq!(e, "bitwise_not: expected a Int tensor, found Float");
        let a = ints(&[1, 2], &[2]);
        assert!(matches!(
            a.bitwise(BitwiseOp::Xor, &Tensor::zeros(&[2], DType::Bool)),
            Err(Error::KindMismatch { op: "bitwise_xor", expected: Kind::Int, found: Kind::Bool })
        ));
        let e = a.bitwise(BitwiseOp::And, &ints(&[1, 2, 3], &[3])).unwrap_err().to_string();
        assert!(e.starts_with("bitwise_and: incompatible shapes [2] and [3]"), "{e}");
        assert!(matches!(f.bitwise_scalar(BitwiseOp::Or, 1), Err(Error::KindMismatch { op: "bitwise_or", .. })));
    }
}
