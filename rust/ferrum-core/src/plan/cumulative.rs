//! Running sums (ONNX CumSum, with its `exclusive` and `reverse`).

use super::attrs::Attrs;
use super::Op;
use crate::error::Result;
use crate::tensor::Tensor;

pub(super) fn cumsum(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::CumSum { dim: a.int("dim")? as isize, exclusive: a.flag("exclusive")?, reverse: a.flag("reverse")? })
}

/// The running sum of `x` along `dim`: from the end with `reverse`, each element left out of its own
/// sum with `exclusive` (the first sum is 0: a shift by one, exact where subtracting back is not).
pub(super) fn run_cumsum(dim: isize, exclusive: bool, reverse: bool, x: Tensor) -> Result<Tensor> {
    let d = x.dim("cumsum", dim)?;
    let y = if reverse { x.flip(&[dim])? } else { x };
    let mut out = y.cumsum(dim)?;
    let size = y.shape()[d];
    if exclusive && size > 0 {
        let mut head = y.shape().to_vec();
        head[d] = 1;
        out = Tensor::cat(&[Tensor::zeros(&head, y.dtype()), out.narrow(dim, 0, size - 1)?], dim)?;
    }
    if reverse { out.flip(&[dim]) } else { Ok(out) }
}
