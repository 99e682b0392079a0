//! Joining tensors: `cat` along an existing dim, `stack` along a new one.
//! Each input is copied straight into its slab of the output, row by row.

use crate::autodiff::{record, FnBackward, Var};

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::copy::copy_strided;
use crate::layout::Layout;
use crate::shape::{norm_dim, try_zeroed};
use crate::tensor::Tensor;
use crate::with_dtype;

impl Tensor {
    /// Concatenate along `dim`: same rank and dtype, all other dims equal.
    pub fn cat(tensors: &[Tensor], dim: isize) -> Result<Tensor> {
        let op = "cat";
        let first = tensors.first().ok_or_else(|| Error::invalid(op, "expected at least one tensor, found an empty list"))?;
        let d = first.dim(op, dim)?;
        for (i, t) in tensors.iter().enumerate().skip(1) {
            first.expect_same_dtype(op, t)?;
            if t.rank() != first.rank() {
                return Err(Error::shapes(
                    op,
                    first.shape(),
                    t.shape(),
                    format!("tensor {i} has rank {}, tensor 0 has rank {}", t.rank(), first.rank()),
                ));
            }
            if let Some(e) = (0..t.rank()).find(|&e| e != d && t.shape()[e] != first.shape()[e]) {
                return Err(Error::shapes(
                    op,
                    first.shape(),
                    t.shape(),
                    format!("tensor {i} differs from tensor 0 in dim {e}; only the cat dim {d} may differ"),
                ));
            }
        }
        cat_unchecked(op, tensors, d)
    }

    /// Join equal-shaped tensors along a new dim inserted at `dim` (0..=rank).
    pub fn stack(tensors: &[Tensor], dim: isize) -> Result<Tensor> {
        let op = "stack";
        let first = tensors.first().ok_or_else(|| Error::invalid(op, "expected at least one tensor, found an empty list"))?;
        let d = norm_dim(op, dim, first.rank() + 1)?;
        for (i, t) in tensors.iter().enumerate().skip(1) {
            first.expect_same_dtype(op, t)?;
            if t.shape() != first.shape() {
                return Err(Error::shapes(op, first.shape(), t.shape(), format!("tensor {i} differs from tensor 0; stack needs equal shapes")));
            }
        }
        let views: Vec<Tensor> = tensors.iter().map(|t| t.subview(t.layout().unsqueeze(d))).collect();
        cat_unchecked(op, &views, d)
    }
}

/// `cat` once shapes and dtypes are known to agree.
fn cat_unchecked(op: &'static str, tensors: &[Tensor], d: usize) -> Result<Tensor> {
    if tensors.len() == 1 {
        return Ok(tensors[0].clone());
    }
    let mut shape = tensors[0].shape().to_vec();
    shape[d] = tensors.iter().map(|t| t.shape()[d]).sum();
    with_dtype!(tensors[0].dtype(), T => {
        let full = Layout::contiguous(&shape);
        // The inputs may be broadcast views far larger than their buffers.
        let mut out = try_zeroed(op, full.numel(), T::ZERO)?;
        let mut start = 0;
        for t in tensors {
            let n = t.shape()[d];
            copy_strided(t.buffer::<T>(), t.layout(), &mut out, &full.narrow_step(d, start, n, 1));
            start += n;
        }
        Tensor::from_parts(T::wrap_vec(out), full)
    })
}

impl Var {
    /// Concatenate along `dim`; each input gets back its slice of the gradient.
    pub fn cat(vars: &[Var], dim: isize) -> Result<Var> {
        let values: Vec<Tensor> = vars.iter().map(|v| v.value.clone()).collect();
        let y = Tensor::cat(&values, dim)?;
        let d = y.dim("cat", dim)?;
        let sizes: Vec<usize> = values.iter().map(|t| t.shape()[d]).collect();
        let inputs: Vec<&Var> = vars.iter().collect();
        Ok(record(y, &inputs, move || {
            FnBackward::new("cat", move |g, _| Ok(g.split_with_sizes(&sizes, d as isize)?.into_iter().map(Some).collect()))
        }))
    }

    /// Stack along a new dim `dim`; each input gets back its slice.
    pub fn stack(vars: &[Var], dim: isize) -> Result<Var> {
        let values: Vec<Tensor> = vars.iter().map(|v| v.value.clone()).collect();
        let y = Tensor::stack(&values, dim)?;
        let d = y.dim("stack", dim)? as isize;
        let n = values.len();
        let inputs: Vec<&Var> = vars.iter().collect();
        Ok(record(y, &inputs, move || {
            FnBackward::new("stack", move |g, _| (0..n).map(|i| g.narrow(d, i, 1)?.squeeze_dims(&[d]).map(Some)).collect())
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::i64s as t;

    fn range(shape: &[usize], from: i64) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec((from..from + n as i64).collect::<Vec<_>>(), shape).unwrap()
    }

    #[test]
    fn cat_along_each_dim() {
        let a = range(&[2, 2], 0);
        let b = range(&[2, 1], 10);
        let c = Tensor::cat(&[a.clone(), b], -1).unwrap();
        assert_eq!(c.shape(), &[2, 3]);
        assert_eq!(c.to_vec::<i64>(), vec![0, 1, 10, 2, 3, 11]);
        let r = Tensor::cat(&[a, range(&[1, 2], 20)], 0).unwrap();
        assert_eq!(r.to_vec::<i64>(), vec![0, 1, 2, 3, 20, 21]);
    }

    #[test]
    fn cat_matches_a_naive_reference_on_views() {
        // [3, 2] transposed views of [2, 3] buffers, joined along dim 1.
        let a = range(&[2, 3], 0).transpose();
        let b = range(&[4, 3], 100).narrow(0, 1, 2).unwrap().transpose();
        let c = Tensor::cat(&[a.clone(), b.clone()], 1).unwrap();
        let (va, vb) = (a.to_vec::<i64>(), b.to_vec::<i64>());
        let mut expect = Vec::new();
        for i in 0..3 {
            expect.extend_from_slice(&va[i * 2..i * 2 + 2]);
            expect.extend_from_slice(&vb[i * 2..i * 2 + 2]);
        }
        assert_eq!(c.to_vec::<i64>(), expect);
    }

    #[test]
    fn cat_keeps_empty_pieces_and_dtypes() {
        let e = Tensor::zeros(&[0, 2], crate::DType::F32);
        let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
        assert_eq!(Tensor::cat(&[e.clone(), x], 0).unwrap().to_vec::<f32>(), vec![1.0, 2.0]);
        assert_eq!(Tensor::cat(&[e.clone(), e], 1).unwrap().shape(), &[0, 4]);
        let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        assert_eq!(Tensor::cat(&[b.clone(), b], 0).unwrap().to_vec::<bool>(), vec![true, false, true, false]);
    }

    #[test]
    fn cat_errors_name_the_problem() {
        assert!(Tensor::cat(&[], 0).unwrap_err().to_string().contains("cat: expected at least one tensor"));
        let e = Tensor::cat(&[range(&[2, 3], 0), range(&[3, 3], 0)], 1).unwrap_err().to_string();
        assert_eq!(e, "cat: incompatible shapes [2, 3] and [3, 3]: tensor 1 differs from tensor 0 in dim 0; only the cat dim 1 may differ");
        let e = Tensor::cat(&[range(&[2], 0), range(&[2, 1], 0)], 0).unwrap_err().to_string();
        assert!(e.contains("tensor 1 has rank 2, tensor 0 has rank 1"), "{e}");
        let f = Tensor::zeros(&[2], crate::DType::F32);
        assert!(matches!(Tensor::cat(&[range(&[2], 0), f], 0), Err(Error::DTypeMismatch { .. })));
        assert!(matches!(Tensor::cat(&[range(&[2], 0)], 1), Err(Error::DimOutOfRange { dim: 1, rank: 1, .. })));
    }

    #[test]
    fn stack_inserts_a_dim() {
        let a = t(&[1, 2, 3], &[3]);
        let b = t(&[4, 5, 6], &[3]);
        let s0 = Tensor::stack(&[a.clone(), b.clone()], 0).unwrap();
        assert_eq!((s0.shape(), s0.to_vec::<i64>()), (&[2usize, 3][..], vec![1, 2, 3, 4, 5, 6]));
        let s1 = Tensor::stack(&[a.clone(), b.clone()], -1).unwrap();
        assert_eq!((s1.shape(), s1.to_vec::<i64>()), (&[3usize, 2][..], vec![1, 4, 2, 5, 3, 6]));
        let e = Tensor::stack(&[a.clone(), t(&[1, 2], &[2])], 0).unwrap_err().to_string();
        assert_eq!(e, "stack: incompatible shapes [3] and [2]: tensor 1 differs from tensor 0; stack needs equal shapes");
        assert!(matches!(Tensor::stack(&[a, b], 2), Err(Error::DimOutOfRange { dim: 2, rank: 2, .. })));
    }
}
