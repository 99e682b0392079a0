//! The 3-vector cross product along one dim (Burn's `Tensor::cross`).

use crate::autodiff::Var;
use crate::dtype::Kind;
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;

impl Var {
    /// `self × other` along `dim`, where both have size 3; the other dims
    /// broadcast. Built from narrow/mul/sub/cat, so the gradients are those
    /// ops' (d(a×b)/da applied to g is b×g, d/db is g×a).
    pub fn cross(&self, other: &Var, dim: isize) -> Result<Var> {
        for t in [&self.value, &other.value] {
            if t.dtype().kind() != Kind::Float {
                return Err(Error::KindMismatch { op: "cross", expected: Kind::Float, found: t.dtype().kind() });
            }
        }
        let (ls, rs) = (self.value.shape(), other.value.shape());
        if ls.len() != rs.len() {
            return Err(Error::shapes("cross", ls, rs, "expected tensors of the same rank"));
        }
        let d = self.value.dim("cross", dim)?;
        if ls[d] != 3 || rs[d] != 3 {
            return Err(Error::shapes("cross", ls, rs, format!("expected size 3 along dim {d} in both, found {} and {}", ls[d], rs[d])));
        }
        if let Some(i) = (0..ls.len()).find(|&i| ls[i] != rs[i] && ls[i] != 1 && rs[i] != 1) {
            return Err(Error::shapes("cross", ls, rs, format!("dim {i} does not broadcast ({} against {})", ls[i], rs[i])));
        }
        let run = || -> Result<Var> {
            let a: Vec<Var> = (0..3).map(|k| self.narrow(d as isize, k, 1)).collect::<Result<_>>()?;
            let b: Vec<Var> = (0..3).map(|k| other.narrow(d as isize, k, 1)).collect::<Result<_>>()?;
            let component = |i: usize, j: usize| -> Result<Var> {
                a[i].binary(BinaryOp::Mul, &b[j])?.binary(BinaryOp::Sub, &a[j].binary(BinaryOp::Mul, &b[i])?)
            };
            Var::cat(&[component(1, 2)?, component(2, 0)?, component(0, 1)?], d as isize)
        };
        run().map_err(|e| e.with_op("cross"))
    }
}

#[cfg(test)]
mod tests {
    use crate::autodiff::{backward, Var};
    use crate::test_util::f64s as t;

    fn values(v: &Var) -> Vec<f64> {
        v.value.to_vec::<f64>()
    }

    // Burn's cross tests (crates/burn-backend-tests/tests/tensor/float/ops/cross.rs).
    #[test]
    fn last_dim() {
        let a = Var::constant(t(&[1.0, 3.0, -5.0, 2.0, -1.0, 4.0], &[2, 3]));
        let b = Var::constant(t(&[4.0, -2.0, 1.0, 3.0, 5.0, -2.0], &[2, 3]));
        assert_eq!(values(&a.cross(&b, -1).unwrap()), [-7.0, -21.0, -14.0, -18.0, 16.0, 13.0]);
    }

    #[test]
    fn non_contiguous_and_dim0() {
        let a = Var::constant(t(&[1.0, 3.0, -5.0, 2.0, -1.0, 4.0], &[2, 3]));
        let b = Var::constant(t(&[4.0, 3.0, -2.0, 5.0, 1.0, -2.0], &[3, 2]).permute(&[1, 0]).unwrap());
        assert_eq!(values(&a.cross(&b, -1).unwrap()), [-7.0, -21.0, -14.0, -18.0, 16.0, 13.0]);
        let a = Var::constant(t(&[1.0, 0.0, 0.0, 1.0, 0.0, 0.0], &[3, 2]));
        let b = Var::constant(t(&[0.0, 1.0, 0.0, 0.0, 1.0, 0.0], &[3, 2]));
        assert_eq!(values(&a.cross(&b, 0).unwrap()), [0.0, 0.0, -1.0, 0.0, 0.0, -1.0]);
    }

    #[test]
    fn broadcast() {
        let a = Var::constant(t(&[1.0, 3.0, -5.0], &[1, 3]));
        let b = Var::constant(t(&[4.0, -2.0, 1.0, 3.0, 5.0, -2.0], &[2, 3]));
        assert_eq!(values(&a.cross(&b, -1).unwrap()), [-7.0, -21.0, -14.0, 19.0, -13.0, -4.0]);
    }

    // Burn's autodiff cross test: with an all-ones output gradient, a gets b×1 and b gets 1×a.
    #[test]
    fn backward_basic() {
        let a = Var::leaf(t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]));
        let b = Var::leaf(t(&[4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[2, 3]));
        let grads = backward(&a.cross(&b, 1).unwrap().sum().unwrap()).unwrap();
        let ga = grads.get(a.id().unwrap()).unwrap().to_vec::<f64>();
        let gb = grads.get(b.id().unwrap()).unwrap().to_vec::<f64>();
        assert_eq!(ga, [-1.0, 2.0, -1.0, -1.0, 2.0, -1.0]);
        assert_eq!(gb, [1.0, -2.0, 1.0, 1.0, -2.0, 1.0]);
    }

    #[test]
    fn errors_name_the_problem() {
        let a = Var::constant(t(&[0.0; 6], &[2, 3]));
        let msg = |r: crate::Result<Var>| r.unwrap_err().to_string();
        assert!(msg(a.cross(&Var::constant(t(&[0.0; 4], &[2, 2])), 1)).contains("expected size 3 along dim 1"));
        assert!(msg(a.cross(&Var::constant(t(&[0.0; 9], &[3, 3])), 1)).contains("dim 0 does not broadcast"));
        assert!(msg(a.cross(&Var::constant(t(&[0.0; 3], &[3])), 0)).contains("same rank"));
        assert!(msg(a.cross(&a, 2)).contains("out of range"));
    }
}
