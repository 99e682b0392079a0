//! Element-wise instructions: unary maths and activations, binary arithmetic
//! with NumPy broadcasting, comparisons, logic, `where` and casts.

use super::attrs::Attrs;
use super::Op;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::ops::compare::CompareOp;
use crate::ops::unary::FloatUnary;
use crate::tensor::Tensor;

/// A one-input element-wise op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unary {
    Float(FloatUnary),
    Neg,
    Abs,
    Relu,
    Gelu,
    HardSwish,
    Silu,
    IsNan,
    Not,
    HardSigmoid { alpha: f64, beta: f64 },
}

/// A two-input op on Bool tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logical {
    And,
    Or,
    Xor,
}

pub(super) fn unary(a: &Attrs<'_>) -> Result<Op> {
    let name = a.string("op")?;
    let u = match name {
        "exp" => Unary::Float(FloatUnary::Exp),
        "log" => Unary::Float(FloatUnary::Log),
        "erf" => Unary::Float(FloatUnary::Erf),
        "recip" => Unary::Float(FloatUnary::Recip),
        "sqrt" => Unary::Float(FloatUnary::Sqrt),
        "tanh" => Unary::Float(FloatUnary::Tanh),
        "sigmoid" => Unary::Float(FloatUnary::Sigmoid),
        "sin" => Unary::Float(FloatUnary::Sin),
        "cos" => Unary::Float(FloatUnary::Cos),
        "floor" => Unary::Float(FloatUnary::Floor),
        "ceil" => Unary::Float(FloatUnary::Ceil),
        "neg" => Unary::Neg,
        "abs" => Unary::Abs,
        "relu" => Unary::Relu,
        "gelu" => Unary::Gelu,
        "hard_swish" => Unary::HardSwish,
        "silu" => Unary::Silu,
        "is_nan" => Unary::IsNan,
        "not" => Unary::Not,
        "hard_sigmoid" => Unary::HardSigmoid { alpha: a.float("alpha")?, beta: a.float("beta")? },
        other => return Err(Error::invalid("Plan.build", format!("unary: unknown op {other:?}"))),
    };
    Ok(Op::Unary(u))
}

pub(super) fn binary(a: &Attrs<'_>) -> Result<Op> {
    let op = match a.string("op")? {
        "add" => BinaryOp::Add,
        "sub" => BinaryOp::Sub,
        "mul" => BinaryOp::Mul,
        "div" => BinaryOp::Div,
        "pow" => BinaryOp::Powf,
        "max" => BinaryOp::Max,
        "min" => BinaryOp::Min,
        other => return Err(Error::invalid("Plan.build", format!("binary: unknown op {other:?}"))),
    };
    Ok(Op::Binary { op, rank: rank(a)? })
}

fn rank(a: &Attrs<'_>) -> Result<usize> {
    usize::try_from(a.int("rank")?).map_err(|_| Error::invalid("Plan.build", format!("{}: rank must be non-negative", a.op)))
}

pub(super) fn pow_scalar(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::PowScalar(a.float("exponent")?))
}

/// `x ** e` for a constant exponent: small integer powers as products (as exact as `powf`'s
/// result to an ulp, and without its cost per element).
pub(super) fn run_pow_scalar(e: f64, x: Tensor) -> Result<Tensor> {
    match e {
        1.0 => Ok(x),
        2.0 => x.float_unary_owned(FloatUnary::Square),
        3.0 => {
            let square = x.float_unary(FloatUnary::Square)?;
            square.binary_owned(BinaryOp::Mul, x)
        }
        0.5 => x.float_unary_owned(FloatUnary::Sqrt),
        _ => x.powf_scalar(e),
    }
}

pub(super) fn compare(a: &Attrs<'_>) -> Result<Op> {
    let op = match a.string("op")? {
        "eq" => CompareOp::Equal,
        "ne" => CompareOp::NotEqual,
        "gt" => CompareOp::Greater,
        "ge" => CompareOp::GreaterEqual,
        "lt" => CompareOp::Lower,
        "le" => CompareOp::LowerEqual,
        other => return Err(Error::invalid("Plan.build", format!("compare: unknown op {other:?}"))),
    };
    Ok(Op::Compare { op, rank: rank(a)? })
}

pub(super) fn logical(a: &Attrs<'_>) -> Result<Op> {
    let op = match a.string("op")? {
        "and" => Logical::And,
        "or" => Logical::Or,
        "xor" => Logical::Xor,
        other => return Err(Error::invalid("Plan.build", format!("logical: unknown op {other:?}"))),
    };
    Ok(Op::Logical { op, rank: rank(a)? })
}

pub(super) fn where_(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Where { rank: rank(a)? })
}

pub(super) fn cast(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Cast(a.dtype("dtype")?))
}

pub(super) fn cast_int(a: &Attrs<'_>) -> Result<Op> {
    let (low, high) = (a.float("low")?, a.float("high")?);
    if low.is_nan() || high.is_nan() || low >= high {
        return Err(Error::invalid("Plan.build", format!("cast_int: low {low} must be below high {high}")));
    }
    Ok(Op::CastInt { low, high, fill: a.int("fill")? })
}

/// Float to i64 by truncation toward zero where `low <= x < high`, `fill` elsewhere (NaN included):
/// onnxruntime's float-to-int Cast on x86-64, whose out-of-range answer is the "integer indefinite"
/// (the caller gives the target's range and that value, as `ferrum.onnx.ops.shape` computes them).
pub(super) fn run_cast_int(low: f64, high: f64, fill: i64, x: Tensor) -> Result<Tensor> {
    let op = "cast_int";
    let convert = |v: f64| if v >= low && v < high { v.trunc() as i64 } else { fill };
    let out: Vec<i64> = match x.dtype() {
        DType::F32 => x.try_to_vec::<f32>(op)?.into_iter().map(|v| convert(f64::from(v))).collect(),
        DType::F64 => x.try_to_vec::<f64>(op)?.into_iter().map(convert).collect(),
        other => return Err(Error::invalid(op, format!("expected an f32 or f64 tensor, found {other}"))),
    };
    Tensor::from_vec(out, x.shape())
}

/// `t` with leading size-1 dims up to `rank` (NumPy's broadcasting aligns trailing dims).
pub(super) fn to_rank(t: Tensor, rank: usize) -> Result<Tensor> {
    if t.rank() < rank { t.unsqueeze_to(rank) } else { Ok(t) }
}

pub(super) fn run_unary(u: Unary, x: Tensor) -> Result<Tensor> {
    match u {
        Unary::Float(op) => x.float_unary_owned(op),
        Unary::Neg => x.neg(),
        Unary::Abs => x.abs(),
        Unary::Relu => x.relu(),
        Unary::Gelu => x.gelu(),
        Unary::HardSwish => x.hard_swish(),
        Unary::Silu => x.silu(),
        Unary::IsNan => x.is_nan(),
        Unary::Not => x.bool_not(),
        Unary::HardSigmoid { alpha, beta } => x.hard_sigmoid(alpha, beta),
    }
}

pub(super) fn run_binary(op: BinaryOp, rank: usize, a: Tensor, b: Tensor) -> Result<Tensor> {
    to_rank(a, rank)?.binary_owned(op, to_rank(b, rank)?)
}

pub(super) fn run_compare(op: CompareOp, rank: usize, a: Tensor, b: Tensor) -> Result<Tensor> {
    to_rank(a, rank)?.compare(op, &to_rank(b, rank)?)
}

pub(super) fn run_logical(op: Logical, rank: usize, a: Tensor, b: Tensor) -> Result<Tensor> {
    let (a, b) = (to_rank(a, rank)?, to_rank(b, rank)?);
    match op {
        Logical::And => a.bool_and(&b),
        Logical::Or => a.bool_or(&b),
        Logical::Xor => a.bool_xor(&b),
    }
}

/// `a` where `cond` holds, else `b`: ONNX's Where.
pub(super) fn run_where(rank: usize, cond: Tensor, a: Tensor, b: Tensor) -> Result<Tensor> {
    to_rank(b, rank)?.mask_where(&to_rank(cond, rank)?, &to_rank(a, rank)?)
}

pub(super) fn run_cast(dtype: DType, x: Tensor) -> Result<Tensor> {
    if x.dtype() == dtype { Ok(x) } else { x.cast(dtype) }
}
