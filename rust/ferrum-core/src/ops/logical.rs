//! Boolean logic on Bool tensors (not/and/or/xor with broadcasting) and the
//! coordinates of true (non-zero) elements.

use crate::dtype::Kind;

use crate::element::Element;
use crate::error::Result;
use crate::kernels::copy::contiguous_values;
use crate::kernels::elementwise::{map, zip};
use crate::kernels::parallel::PAR_CHEAP;
use crate::tensor::Tensor;
use crate::with_dtype;

impl Tensor {
    pub fn bool_not(&self) -> Result<Tensor> {
        self.expect_kind("bool_not", Kind::Bool)?;
        map("bool_not", self, PAR_CHEAP, |x: bool| !x)
    }

    pub fn bool_and(&self, other: &Tensor) -> Result<Tensor> {
        logic(self, "bool_and", other, |x, y| x & y)
    }

    pub fn bool_or(&self, other: &Tensor) -> Result<Tensor> {
        logic(self, "bool_or", other, |x, y| x | y)
    }

    pub fn bool_xor(&self, other: &Tensor) -> Result<Tensor> {
        logic(self, "bool_xor", other, |x, y| x ^ y)
    }

    /// One rank-1 i64 tensor per dim holding that coordinate of each true
    /// (non-zero, for Float/Int) element, in row-major order (numpy.nonzero).
    /// A rank-0 tensor has no dims, so it gives no tensors.
    pub fn nonzero(&self) -> Result<Vec<Tensor>> {
        let r = self.rank();
        let coords = true_coords(self)?;
        let n = coords.len() / r.max(1);
        (0..r).map(|d| Tensor::from_vec(coords.iter().skip(d).step_by(r).copied().collect::<Vec<i64>>(), &[n])).collect()
    }

    /// The coordinates of the true elements as an i64 `[n_true, rank]` tensor.
    pub fn argwhere(&self) -> Result<Tensor> {
        let r = self.rank();
        let coords = true_coords(self)?;
        if r == 0 {
            let n = with_dtype!(self.dtype(), T => usize::from(self.buffer::<T>()[self.layout().offset] != T::ZERO));
            return Tensor::from_vec(coords, &[n, 0]);
        }
        let n = coords.len() / r;
        Tensor::from_vec(coords, &[n, r])
    }
}

fn logic(a: &Tensor, op: &'static str, b: &Tensor, f: impl Fn(bool, bool) -> bool + Sync) -> Result<Tensor> {
    a.expect_kind(op, Kind::Bool)?;
    b.expect_kind(op, Kind::Bool)?;
    zip(op, a, b, PAR_CHEAP, f)
}

/// The coordinates of every true / non-zero element, row-major, `rank`
/// values each. Rows of the last dim are scanned with the leading
/// coordinates kept in a counter, so no element pays for a division.
fn true_coords(t: &Tensor) -> Result<Vec<i64>> {
    let shape = t.shape();
    let Some((&w, outer)) = shape.split_last() else {
        return Ok(Vec::new());
    };
    with_dtype!(t.dtype(), T => {
        let values = contiguous_values::<T>("argwhere", t)?;
        if values.is_empty() {
            return Ok(Vec::new());
        }
        // Counting first (a cheap vectorised pass) sizes the output once
        // instead of growing it through repeated reallocations.
        let count = values.iter().filter(|&&v| v != T::ZERO).count();
        let mut coords = crate::shape::try_with_capacity("argwhere", count * shape.len())?;
        let mut index = vec![0i64; outer.len()];
        for row in values.chunks(w) {
            for (j, &v) in row.iter().enumerate() {
                if v != T::ZERO {
                    coords.extend_from_slice(&index);
                    coords.push(j as i64);
                }
            }
            for e in (0..outer.len()).rev() {
                index[e] += 1;
                if index[e] < outer[e] as i64 {
                    break;
                }
                index[e] = 0;
            }
        }
        Ok(coords)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::DType;
    use crate::test_util::bools as b;

    #[test]
    fn logic_with_broadcasting() {
        let x = b(&[true, false, true, false], &[2, 2]);
        let col = b(&[true, false], &[2, 1]);
        assert_eq!(x.bool_not().unwrap().to_vec::<bool>(), vec![false, true, false, true]);
        assert_eq!(x.bool_and(&col).unwrap().to_vec::<bool>(), vec![true, false, false, false]);
        assert_eq!(x.bool_or(&col).unwrap().to_vec::<bool>(), vec![true, true, true, false]);
        assert_eq!(x.bool_xor(&col).unwrap().to_vec::<bool>(), vec![false, true, true, false]);
        let t = x.transpose();
        assert_eq!(t.bool_xor(&x).unwrap().to_vec::<bool>(), vec![false, true, true, false]);
    }

    #[test]
    fn logic_needs_bools() {
        let f = Tensor::zeros(&[2], DType::F32);
        let x = b(&[true, false], &[2]);
        assert!(matches!(f.bool_not(), Err(Error::KindMismatch { op: "bool_not", expected: Kind::Bool, found: Kind::Float })));
        let e = x.bool_and(&Tensor::zeros(&[2], DType::I64)).unwrap_err().to_string();
        assert_eq!(e, "bool_and: expected a Bool tensor, found Int");
        let e = x.bool_or(&b(&[true; 3], &[3])).unwrap_err().to_string();
        assert!(e.starts_with("bool_or: incompatible shapes [2] and [3]"), "{e}");
    }

    #[test]
    fn nonzero_and_argwhere() {
        let x = b(&[false, true, true, false, false, true], &[2, 3]);
        let nz = x.nonzero().unwrap();
        assert_eq!(nz.len(), 2);
        assert_eq!(nz[0].to_vec::<i64>(), vec![0, 0, 1]);
        assert_eq!(nz[1].to_vec::<i64>(), vec![1, 2, 2]);
        let a = x.argwhere().unwrap();
        assert_eq!((a.shape(), a.to_vec::<i64>()), (&[3usize, 2][..], vec![0, 1, 0, 2, 1, 2]));
    }

    #[test]
    fn nonzero_of_numbers_and_views() {
        let f = Tensor::from_vec(vec![0.0f32, -0.0, f32::NAN, 2.0], &[4]).unwrap();
        assert_eq!(f.nonzero().unwrap()[0].to_vec::<i64>(), vec![2, 3]);
        let i = Tensor::from_vec(vec![0i64, 5, 7, 0], &[2, 2]).unwrap().transpose();
        assert_eq!(i.argwhere().unwrap().to_vec::<i64>(), vec![0, 1, 1, 0]);
        let none = Tensor::zeros(&[2, 3], DType::Bool).argwhere().unwrap();
        assert_eq!(none.shape(), &[0, 2]);
        let s = Tensor::full(&[], crate::Scalar::Int(3), DType::I64);
        assert!(s.nonzero().unwrap().is_empty());
        assert_eq!(s.argwhere().unwrap().shape(), &[1, 0]);
        let e = Tensor::zeros(&[0, 3], DType::I64).nonzero().unwrap();
        assert_eq!(e.iter().map(|t| t.shape().to_vec()).collect::<Vec<_>>(), vec![vec![0], vec![0]]);
    }
}
