//! Attention as exported graphs write it, in one instruction:
//! `softmax(scale * (q @ k) + bias) @ v`, the scores' scaling, additive mask
//! and softmax in one pass over each row (`Tensor::biased_softmax`).

use super::attrs::Attrs;
use super::elementwise::to_rank;
use super::Op;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

pub(super) fn attention(a: &Attrs<'_>) -> Result<Op> {
    let scale = a.float("scale")?;
    if !scale.is_finite() {
        return Err(Error::invalid("Plan.build", format!("attention: scale must be finite, found {scale}")));
    }
    Ok(Op::Attention { scale, nan_to_zero: a.flag("nan_to_zero")? })
}

/// `softmax(scale * (q @ k) + bias) @ v` over the last dim of the scores, `k` already transposed
/// (`[..., d, keys]`); `bias` broadcasts onto the scores (lower ranks align to the right). With
/// `nan_to_zero`, NaN weights become 0 before the second product.
pub(super) fn run_attention(scale: f64, nan_to_zero: bool, q: Tensor, k: Tensor, v: Tensor, bias: Option<Tensor>) -> Result<Tensor> {
    let scores = q.matmul(&k)?;
    let bias = bias.map(|b| to_rank(b, scores.rank())).transpose()?;
    scores.biased_softmax(bias.as_ref(), scale, nan_to_zero)?.matmul(&v)
}
