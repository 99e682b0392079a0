//! The cross product of 3-vectors along one dim (Burn's `Tensor::cross`),
//! composed from differentiable slices, so its gradient comes for free.

use crate::autodiff::Var;
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;

impl Var {
    /// `self x other` along `dim`, which must have size 3 in both; the other
    /// dims broadcast (equal, or 1 in one of them).
    pub fn cross(&self, other: &Var, dim: isize) -> Result<Var> {
        let op = "cross";
        let (d, d2) = (self.value.dim(op, dim)?, other.value.dim(op, dim)?);
        if self.value.rank() != other.value.rank() || d != d2 {
            return Err(Error::shapes(op, self.value.shape(), other.value.shape(), "cross needs two tensors of equal rank"));
        }
        if self.value.shape()[d] != 3 || other.value.shape()[d] != 3 {
            return Err(Error::shapes(op, self.value.shape(), other.value.shape(), format!("dim {d} must have size 3 in both tensors")));
        }
        let a: Vec<Var> = (0..3).map(|i| self.narrow(dim, i, 1)).collect::<Result<_>>()?;
        let b: Vec<Var> = (0..3).map(|i| other.narrow(dim, i, 1)).collect::<Result<_>>()?;
        let term = |i: usize, j: usize| -> Result<Var> { a[i].binary(BinaryOp::Mul, &b[j])?.binary(BinaryOp::Sub, &a[j].binary(BinaryOp::Mul, &b[i])?) };
        Var::cat(&[term(1, 2)?, term(2, 0)?, term(0, 1)?], dim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor;

    #[test]
    fn right_handed_and_broadcast() {
        let x = Var::constant(Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 0.0, 1.0, 0.0], &[2, 3]).unwrap());
        let y = Var::constant(Tensor::from_vec(vec![0.0f64, 1.0, 0.0], &[1, 3]).unwrap());
        assert_eq!(x.cross(&y, 1).unwrap().value.to_vec::<f64>(), vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        let bad = Var::constant(Tensor::from_vec(vec![0.0f64; 4], &[1, 4]).unwrap());
        assert!(x.cross(&bad, 1).unwrap_err().to_string().contains("size 3"));
    }
}
