//! The gradient of `unfold` (sliding windows along one dim, a view): each
//! window element's gradient goes back to the element it views, and
//! elements seen by several overlapping windows add theirs up.

use crate::autodiff::{record, FnBackward, Var};
use crate::element::Element;
use crate::error::Result;
use crate::layout::Layout;
use crate::ops::conv::values;
use crate::tensor::Tensor;
use crate::with_float;

/// Add `g` (the windows' gradient, in the windows' row-major order) onto a
/// zero tensor of `shape` through the same windowing of a contiguous layout.
fn scatter_windows<T: Element + std::ops::AddAssign>(g: &[T], shape: &[usize], d: usize, size: usize, step: usize) -> Vec<T> {
    let mut gx = vec![T::ZERO; shape.iter().product()];
    let mut l = Layout::contiguous(shape);
    let s = l.strides[d];
    l.shape[d] = (shape[d] - size) / step + 1;
    l.strides[d] = s * step as isize;
    l.shape.push(size);
    l.strides.push(s);
    for (&v, off) in g.iter().zip(l.offsets()) {
        gx[off] += v;
    }
    gx
}

impl Var {
    /// [`Tensor::unfold`], differentiable (Float tensors).
    pub fn unfold(&self, dim: isize, size: usize, step: usize) -> Result<Var> {
        let op = "unfold";
        let y = self.value.unfold(dim, size, step)?;
        let d = self.value.dim(op, dim)?;
        let shape = self.value.shape().to_vec();
        Ok(record(y, &[self], move || {
            FnBackward::new(op, move |g, _| {
                with_float!(op, g.dtype(), T => Ok(vec![Some(Tensor::from_vec(scatter_windows::<T>(&values::<T>(op, &g)?, &shape, d, size, step), &shape)?)]))
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_windows_add_up() {
        let leaf = Var::leaf(Tensor::from_vec(vec![1.0f64; 10], &[2, 5]).unwrap());
        let w = leaf.unfold(1, 3, 1).unwrap();
        assert_eq!(w.value.shape(), &[2, 3, 3]);
        let g = crate::autodiff::backward(&w.sum().unwrap()).unwrap().get(leaf.id().unwrap()).unwrap().to_vec::<f64>();
        assert_eq!(&g[..5], &[1.0, 2.0, 3.0, 2.0, 1.0]);
        let leaf = Var::leaf(Tensor::from_vec(vec![1.0f64; 6], &[6, 1]).unwrap());
        let g = crate::autodiff::backward(&leaf.unfold(0, 2, 3).unwrap().sum().unwrap()).unwrap().get(leaf.id().unwrap()).unwrap().to_vec::<f64>();
        assert_eq!(g, vec![1.0, 1.0, 0.0, 1.0, 1.0, 0.0]);
    }
}
