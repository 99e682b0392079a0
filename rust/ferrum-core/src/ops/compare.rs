//! Comparisons, giving Bool tensors: equal/not_equal for every kind,
//! greater/lower orderings for numeric kinds, with tensors or scalars.

use crate::dtype::Scalar;

use crate::element::Element;
use crate::error::Result;
use crate::kernels::elementwise::{map, zip};
use crate::kernels::parallel::PAR_CHEAP;
use crate::tensor::Tensor;
use crate::{with_dtype, with_num};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Equal,
    NotEqual,
    Greater,
    GreaterEqual,
    Lower,
    LowerEqual,
}

impl CompareOp {
    pub fn name(self) -> &'static str {
        match self {
            CompareOp::Equal => "equal",
            CompareOp::NotEqual => "not_equal",
            CompareOp::Greater => "greater",
            CompareOp::GreaterEqual => "greater_equal",
            CompareOp::Lower => "lower",
            CompareOp::LowerEqual => "lower_equal",
        }
    }

    fn ordering(self) -> bool {
        !matches!(self, CompareOp::Equal | CompareOp::NotEqual)
    }
}

macro_rules! compare_loop {
    ($op:expr, $f:ident, $($args:tt)*) => {
        match $op {
            CompareOp::Equal => $f!(|x, y| x == y, $($args)*),
            CompareOp::NotEqual => $f!(|x, y| x != y, $($args)*),
            CompareOp::Greater => $f!(|x, y| x > y, $($args)*),
            CompareOp::GreaterEqual => $f!(|x, y| x >= y, $($args)*),
            CompareOp::Lower => $f!(|x, y| x < y, $($args)*),
            CompareOp::LowerEqual => $f!(|x, y| x <= y, $($args)*),
        }
    };
}

impl Tensor {
    /// Element-wise comparison with broadcasting.
    pub fn compare(&self, op: CompareOp, other: &Tensor) -> Result<Tensor> {
        self.expect_same_dtype(op.name(), other)?;
        macro_rules! run {
            (|$x:ident, $y:ident| $e:expr, $T:ty) => {
                zip(op.name(), self, other, PAR_CHEAP, |$x: $T, $y: $T| $e)
            };
        }
        if op.ordering() {
            with_num!(op.name(), self.dtype(), T => compare_loop!(op, run, T))
        } else {
            with_dtype!(self.dtype(), T => compare_loop!(op, run, T))
        }
    }

    /// Element-wise comparison with a scalar converted to this dtype.
    pub fn compare_scalar(&self, op: CompareOp, s: Scalar) -> Result<Tensor> {
        macro_rules! run {
            (|$x:ident, $y:ident| $e:expr, $T:ty) => {{
                let $y = <$T>::from_scalar(s);
                map(op.name(), self, PAR_CHEAP, move |$x: $T| $e)
            }};
        }
        if op.ordering() {
            with_num!(op.name(), self.dtype(), T => compare_loop!(op, run, T))
        } else {
            with_dtype!(self.dtype(), T => compare_loop!(op, run, T))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greater_elem_gives_bools() {
        let x = Tensor::from_vec(vec![1.0f32, 5.0, 3.0], &[3]).unwrap();
        let m = x.compare_scalar(CompareOp::Greater, Scalar::Float(3.0)).unwrap();
        assert_eq!(m.to_vec::<bool>(), vec![false, true, false]);
    }

    #[test]
    fn ordering_bools_is_a_kind_error() {
        let b = Tensor::from_vec(vec![true], &[1]).unwrap();
        assert!(b.compare(CompareOp::Greater, &b).is_err());
        assert_eq!(b.compare(CompareOp::Equal, &b).unwrap().to_vec::<bool>(), vec![true]);
    }
}
