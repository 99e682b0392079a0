//! Constant padding (ONNX Pad in `constant` mode with non-negative pads).

use super::attrs::Attrs;
use super::Op;
use crate::dtype::Kind;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::Scalar;

pub(super) fn pad(a: &Attrs<'_>) -> Result<Op> {
    // (before, after) per dim, last dim first (Tensor::pad's order)
    let flat = a.sizes("pads")?;
    if flat.len() % 2 != 0 {
        return Err(Error::invalid("Plan.build", format!("pad: pads must hold (before, after) pairs, found {} values", flat.len())));
    }
    let pads = flat.chunks(2).map(|p| (p[0], p[1])).collect();
    Ok(Op::Pad { pads, value: a.float("value")? })
}

pub(super) fn run_pad(pads: &[(usize, usize)], value: f64, x: Tensor) -> Result<Tensor> {
    if pads.iter().all(|&(b, e)| b == 0 && e == 0) {
        return Ok(x);
    }
    let fill = match x.kind() {
        Kind::Float => Scalar::Float(value),
        Kind::Int => Scalar::Int(value as i64),
        Kind::Bool => Scalar::Bool(value != 0.0),
    };
    x.pad(pads, fill)
}
