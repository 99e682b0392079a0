//! Gradients of broadcasting: an input stretched to a larger shape receives
//! the sum of the gradient over the stretched (or added leading) dims.

use crate::error::Result;
use crate::tensor::Tensor;

/// Sum `grad` down to `shape`, which broadcasts to `grad.shape()` (equal
/// rank with size-1 dims, or fewer leading dims as for `expand`).
pub fn sum_to_shape(grad: Tensor, shape: &[usize]) -> Result<Tensor> {
    if grad.shape() == shape {
        return Ok(grad);
    }
    let extra = grad.rank() - shape.len();
    let dims: Vec<isize> = (0..grad.rank())
        .filter(|&d| d < extra || (shape[d - extra] == 1 && grad.shape()[d] != 1))
        .map(|d| d as isize)
        .collect();
    let summed = if dims.is_empty() { grad } else { grad.sum_dims(&dims)? };
    let target: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    summed.reshape(&target)
}
