//! Triangles of the last two dims: `triu`/`tril` zero one side of a
//! diagonal, and the Burn masks mark with `false` the part such an op keeps,
//! so `x.mask_fill(triu_mask, 0) == x.triu(offset)`.

use crate::autodiff::{record, FnBackward, Var};

use rayon::prelude::*;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::copy::contiguous_values;
use crate::kernels::parallel::{go_parallel, PAR_CHEAP};
use crate::tensor::Tensor;
use crate::with_dtype;

impl Tensor {
    /// Keep elements with `j - i >= diagonal` in the last two dims, zero the rest.
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        keep_triangle(self, "triu", true, diagonal)
    }

    /// Keep elements with `j - i <= diagonal` in the last two dims, zero the rest.
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        keep_triangle(self, "tril", false, diagonal)
    }

    /// Bool mask, false where `j - i >= offset` (the upper triangle), true elsewhere.
    pub fn triu_mask(shape: &[usize], offset: i64) -> Result<Tensor> {
        triangle_mask("triu_mask", shape, |c| c >= offset)
    }

    /// Bool mask, false where `j - i <= offset` (the lower triangle), true elsewhere.
    pub fn tril_mask(shape: &[usize], offset: i64) -> Result<Tensor> {
        triangle_mask("tril_mask", shape, |c| c <= offset)
    }

    /// Bool mask, false where `j - i == offset` (one diagonal), true elsewhere.
    pub fn diag_mask(shape: &[usize], offset: i64) -> Result<Tensor> {
        triangle_mask("diag_mask", shape, |c| c == offset)
    }
}

/// The last two dims of a shape of rank >= 2.
fn matrix_dims(op: &'static str, shape: &[usize]) -> Result<(usize, usize)> {
    match shape {
        [.., h, w] => Ok((*h, *w)),
        _ => Err(Error::invalid(op, format!("expected a shape of rank >= 2 (matrices in the last two dims), found {shape:?}"))),
    }
}

/// The column range row `i` keeps: from the diagonal on (upper) or up to it.
fn kept_columns(upper: bool, i: usize, diagonal: i64, w: usize) -> (usize, usize) {
    // i128 so that extreme diagonals cannot overflow before clamping.
    let edge = |c: i128| c.clamp(0, w as i128) as usize;
    let d = i as i128 + diagonal as i128;
    if upper { (edge(d), w) } else { (0, edge(d + 1)) }
}

fn keep_triangle(t: &Tensor, op: &'static str, upper: bool, diagonal: i64) -> Result<Tensor> {
    let (h, w) = matrix_dims(op, t.shape())?;
    with_dtype!(t.dtype(), T => {
        let src = contiguous_values::<T>(op, t)?;
        let mut out = vec![T::ZERO; src.len()];
        if !out.is_empty() {
            let row = |(r, (o, s)): (usize, (&mut [T], &[T]))| {
                let (a, b) = kept_columns(upper, r % h, diagonal, w);
                o[a..b].copy_from_slice(&s[a..b]);
            };
            if go_parallel(out.len(), PAR_CHEAP) {
                out.par_chunks_mut(w).zip(src.par_chunks(w)).enumerate().for_each(row);
            } else {
                out.chunks_mut(w).zip(src.chunks(w)).enumerate().for_each(row);
            }
        }
        Tensor::from_vec(out, t.shape())
    })
}

/// One `h x w` matrix, false where `on(j - i)`, repeated over the batch dims.
fn triangle_mask(op: &'static str, shape: &[usize], on: impl Fn(i64) -> bool) -> Result<Tensor> {
    let (h, w) = matrix_dims(op, shape)?;
    // A shape from the user: its count is checked before anything is sized by it.
    let n = crate::shape::checked_numel(op, shape, 1)?;
    crate::shape::ensure_fits::<bool>(op, n)?;
    let matrix: Vec<bool> = (0..h * w).map(|p| !on((p % w) as i64 - (p / w) as i64)).collect();
    let batch: usize = shape[..shape.len() - 2].iter().product();
    Tensor::from_vec(matrix.repeat(batch), shape)
}

impl Var {
    pub fn triu(&self, diagonal: i64) -> Result<Var> {
        let y = self.value.triu(diagonal)?;
        Ok(record(y, &[self], move || FnBackward::new("triu", move |g, _| Ok(vec![Some(g.triu(diagonal)?)]))))
    }

    pub fn tril(&self, diagonal: i64) -> Result<Var> {
        let y = self.value.tril(diagonal)?;
        Ok(record(y, &[self], move || FnBackward::new("tril", move |g, _| Ok(vec![Some(g.tril(diagonal)?)]))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, Scalar};

    fn range(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec((1..=n as i64).collect::<Vec<_>>(), shape).unwrap()
    }

    /// Naive reference: element (b, i, j) kept when `keep(j - i)`.
    fn reference(x: &Tensor, keep: impl Fn(i64) -> bool) -> Vec<i64> {
        let w = x.shape()[x.rank() - 1];
        let h = x.shape()[x.rank() - 2];
        x.to_vec::<i64>().iter().enumerate().map(|(p, &v)| if keep((p % w) as i64 - ((p / w) % h) as i64) { v } else { 0 }).collect()
    }

    #[test]
    fn triu_and_tril_of_a_square() {
        let x = range(&[3, 3]);
        assert_eq!(x.triu(0).unwrap().to_vec::<i64>(), vec![1, 2, 3, 0, 5, 6, 0, 0, 9]);
        assert_eq!(x.tril(0).unwrap().to_vec::<i64>(), vec![1, 0, 0, 4, 5, 0, 7, 8, 9]);
        assert_eq!(x.triu(1).unwrap().to_vec::<i64>(), vec![0, 2, 3, 0, 0, 6, 0, 0, 0]);
        assert_eq!(x.tril(-1).unwrap().to_vec::<i64>(), vec![0, 0, 0, 4, 0, 0, 7, 8, 0]);
    }

    #[test]
    fn batched_rectangular_views_match_the_reference() {
        // [2, 4, 3] made from a permuted [3, 4, 2] buffer.
        let x = range(&[3, 4, 2]).permute(&[2, 1, 0]).unwrap();
        for k in [-5, -2, -1, 0, 1, 2, 5, i64::MIN, i64::MAX] {
            assert_eq!(x.triu(k).unwrap().to_vec::<i64>(), reference(&x, |c| c >= k), "triu {k}");
            assert_eq!(x.tril(k).unwrap().to_vec::<i64>(), reference(&x, |c| c <= k), "tril {k}");
        }
    }

    #[test]
    fn other_dtypes_and_empty() {
        let b = Tensor::ones(&[2, 2], DType::Bool);
        assert_eq!(b.triu(0).unwrap().to_vec::<bool>(), vec![true, true, false, true]);
        let f = Tensor::ones(&[2, 2], DType::F64);
        assert_eq!(f.tril(0).unwrap().to_vec::<f64>(), vec![1.0, 0.0, 1.0, 1.0]);
        assert_eq!(Tensor::zeros(&[3, 0], DType::F32).triu(0).unwrap().shape(), &[3, 0]);
    }

    #[test]
    fn masks_mark_the_kept_part_false() {
        let m = Tensor::triu_mask(&[2, 3], 0).unwrap();
        assert_eq!(m.to_vec::<bool>(), vec![false, false, false, true, false, false]);
        let m = Tensor::tril_mask(&[2, 3], 0).unwrap();
        assert_eq!(m.to_vec::<bool>(), vec![false, true, true, false, false, true]);
        let m = Tensor::diag_mask(&[2, 2, 2], 1).unwrap();
        assert_eq!(m.to_vec::<bool>(), vec![true, false, true, true, true, false, true, true]);
    }

    #[test]
    fn mask_fill_with_a_mask_equals_the_op() {
        let x = range(&[2, 3, 4]);
        for k in [-1, 0, 2] {
            let tu = x.mask_fill(&Tensor::triu_mask(x.shape(), k).unwrap(), Scalar::Int(0)).unwrap();
            assert_eq!(tu.to_vec::<i64>(), x.triu(k).unwrap().to_vec::<i64>());
            let tl = x.mask_fill(&Tensor::tril_mask(x.shape(), k).unwrap(), Scalar::Int(0)).unwrap();
            assert_eq!(tl.to_vec::<i64>(), x.tril(k).unwrap().to_vec::<i64>());
        }
    }

    #[test]
    fn rank_below_two_is_an_error() {
        let e = range(&[3]).triu(0).unwrap_err().to_string();
        assert_eq!(e, "triu: expected a shape of rank >= 2 (matrices in the last two dims), found [3]");
        let e = Tensor::diag_mask(&[4], 0).unwrap_err().to_string();
        assert!(e.starts_with("diag_mask: expected a shape of rank >= 2"), "{e}");
    }
}
