//! Instructions recorded from ferrum's own tensor methods (`ferrum.jit.trace`).
//!
//! Each one calls the engine method that the eager Python call runs, with the
//! same arguments, so a traced module gives the eager results: an ONNX graph
//! never needs these (its semantics differ: NumPy broadcasting, scalar
//! tensors), ferrum's Python API does.

use super::attrs::Attrs;
use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::ops::compare::CompareOp;
use crate::ops::unary::FloatUnary;
use crate::tensor::Tensor;

/// One traced op with its static attributes.
#[derive(Clone, Debug)]
pub enum Traced {
    /// `a op b` between tensors of the same rank (Burn's broadcasting over size-1 dims).
    Binary(BinaryOp),
    /// `x op s` (or `s op x` when `reflected`) with a scalar of the tensor's kind.
    Scalar { op: BinaryOp, value: Scalar, reflected: bool },
    FloatUnary(FloatUnary),
    /// `a op b` between tensors of the same rank, a Bool result.
    Compare(CompareOp),
    /// `x op s` with a scalar of the tensor's kind, a Bool result.
    CompareScalar { op: CompareOp, value: Scalar },
    /// `and`, `or` or `xor` of two Bool tensors of the same rank.
    Logical(Logic),
    BoolNot,
    Neg,
    Relu,
    Gelu,
    Silu,
    MatMul,
    Reshape(Vec<isize>),
    SwapDims(isize, isize),
    Permute(Vec<isize>),
    Narrow { dim: isize, start: usize, length: usize },
    Select(isize),
    /// A reduction, scan or arg-reduction along one dim: the engine method of that name.
    Dim(DimMethod, isize),
    /// Two outputs: the biased variance and the mean along `dim`.
    VarMean(isize),
    Softmax(isize),
    MaskedSoftmax { scale: f64, fill: f64 },
    MaskFill(Scalar),
    Cat(isize),
}

/// The Bool tensor methods `bool_and`, `bool_or` and `bool_xor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    And,
    Or,
    Xor,
}

/// The tensor methods over one dim that a trace records (`t_` + the name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimMethod {
    SumDim,
    MeanDim,
    ProdDim,
    MaxDim,
    MinDim,
    MaxAbsDim,
    Var,
    VarBias,
    CumSum,
    CumProd,
    CumMin,
    CumMax,
    ArgMax,
    ArgMin,
}

impl DimMethod {
    pub const ALL: [DimMethod; 14] = {
        use DimMethod::*;
        [SumDim, MeanDim, ProdDim, MaxDim, MinDim, MaxAbsDim, Var, VarBias, CumSum, CumProd, CumMin, CumMax, ArgMax, ArgMin]
    };

    /// The method's name, as the Python API spells it.
    pub fn name(self) -> &'static str {
        use DimMethod::*;
        match self {
            SumDim => "sum_dim",
            MeanDim => "mean_dim",
            ProdDim => "prod_dim",
            MaxDim => "max_dim",
            MinDim => "min_dim",
            MaxAbsDim => "max_abs_dim",
            Var => "var",
            VarBias => "var_bias",
            CumSum => "cumsum",
            CumProd => "cumprod",
            CumMin => "cummin",
            CumMax => "cummax",
            ArgMax => "argmax",
            ArgMin => "argmin",
        }
    }

    fn run(self, x: &Tensor, dim: isize) -> Result<Tensor> {
        use DimMethod::*;
        match self {
            SumDim => x.sum_dim(dim),
            MeanDim => x.mean_dim(dim),
            ProdDim => x.prod_dim(dim),
            MaxDim => x.max_dim(dim),
            MinDim => x.min_dim(dim),
            MaxAbsDim => x.max_abs_dim(dim),
            Var => x.var(dim),
            VarBias => x.var_bias(dim),
            CumSum => x.cumsum(dim),
            CumProd => x.cumprod(dim),
            CumMin => x.cummin(dim),
            CumMax => x.cummax(dim),
            ArgMax => x.argmax(dim),
            ArgMin => x.argmin(dim),
        }
    }
}

const BUILD: &str = "Plan.build";

fn compare_op(name: &str) -> Result<CompareOp> {
    use CompareOp::*;
    [Equal, NotEqual, Greater, GreaterEqual, Lower, LowerEqual]
        .into_iter()
        .find(|op| op.name() == name)
        .ok_or_else(|| Error::invalid(BUILD, format!("unknown comparison {name:?}")))
}

fn logic(name: &str) -> Result<Logic> {
    match name {
        "and" => Ok(Logic::And),
        "or" => Ok(Logic::Or),
        "xor" => Ok(Logic::Xor),
        _ => Err(Error::invalid(BUILD, format!("unknown logical op {name:?}"))),
    }
}

fn binary_op(name: &str) -> Result<BinaryOp> {
    use BinaryOp::*;
    [Add, Sub, Mul, Div, Remainder, Max, Min, Powf, Atan2, Fmod]
        .into_iter()
        .find(|op| op.name() == name)
        .ok_or_else(|| Error::invalid(BUILD, format!("unknown binary op {name:?}")))
}

fn float_unary(name: &str) -> Result<FloatUnary> {
    use FloatUnary::*;
    [Exp, Log, Log1p, Erf, Recip, Square, Sqrt, Sin, Cos, Tan, Sinh, Cosh, Tanh, Asin, Asinh, Acos, Acosh, Atan, Atanh, Round, Floor, Ceil, Trunc, Sigmoid]
        .into_iter()
        .find(|op| op.name() == name)
        .ok_or_else(|| Error::invalid(BUILD, format!("unknown float unary op {name:?}")))
}

/// A scalar attribute: `value` (an int when `int` is set, else a float).
fn scalar(a: &Attrs<'_>) -> Result<Scalar> {
    Ok(if a.flag("int")? { Scalar::Int(a.int("value")?) } else { Scalar::Float(a.float("value")?) })
}

fn dim(a: &Attrs<'_>, name: &str) -> Result<isize> {
    Ok(a.int(name)? as isize)
}

/// The traced op called `name`, or `None` when `name` is not one of them.
pub(super) fn build(name: &str, a: &Attrs<'_>) -> Option<Result<Traced>> {
    let op = || -> Result<Traced> {
        Ok(match name {
            "t_binary" => Traced::Binary(binary_op(a.string("op")?)?),
            "t_scalar" => Traced::Scalar { op: binary_op(a.string("op")?)?, value: scalar(a)?, reflected: a.flag("reflected")? },
            "t_float_unary" => Traced::FloatUnary(float_unary(a.string("op")?)?),
            "t_compare" => Traced::Compare(compare_op(a.string("op")?)?),
            "t_compare_scalar" => Traced::CompareScalar { op: compare_op(a.string("op")?)?, value: scalar(a)? },
            "t_logical" => Traced::Logical(logic(a.string("op")?)?),
            "t_bool_not" => Traced::BoolNot,
            "t_neg" => Traced::Neg,
            "t_relu" => Traced::Relu,
            "t_gelu" => Traced::Gelu,
            "t_silu" => Traced::Silu,
            "t_matmul" => Traced::MatMul,
            "t_reshape" => Traced::Reshape(a.dims("shape")?),
            "t_swap_dims" => Traced::SwapDims(dim(a, "a")?, dim(a, "b")?),
            "t_permute" => Traced::Permute(a.dims("axes")?),
            "t_narrow" => {
                let (start, length) = (a.int("start")?, a.int("length")?);
                if start < 0 || length < 0 {
                    return Err(Error::invalid(BUILD, "t_narrow: start and length must be non-negative"));
                }
                Traced::Narrow { dim: dim(a, "dim")?, start: start as usize, length: length as usize }
            }
            "t_select" => Traced::Select(dim(a, "dim")?),
            "t_var_mean" => Traced::VarMean(dim(a, "dim")?),
            "t_softmax" => Traced::Softmax(dim(a, "dim")?),
            "t_masked_softmax" => Traced::MaskedSoftmax { scale: a.float("scale")?, fill: a.float("fill")? },
            "t_mask_fill" => Traced::MaskFill(scalar(a)?),
            "t_cat" => Traced::Cat(dim(a, "dim")?),
            _ => unreachable!("checked by the match below"),
        })
    };
    match name {
        "t_binary" | "t_scalar" | "t_float_unary" | "t_compare" | "t_compare_scalar" | "t_logical" | "t_bool_not" | "t_neg" | "t_relu" | "t_gelu" | "t_silu" | "t_matmul" | "t_reshape" | "t_swap_dims" | "t_permute" | "t_narrow"
        | "t_select" | "t_var_mean" | "t_softmax" | "t_masked_softmax" | "t_mask_fill" | "t_cat" => Some(op()),
        _ => {
            let method = DimMethod::ALL.into_iter().find(|m| name.strip_prefix("t_") == Some(m.name()))?;
            Some(dim(a, "dim").map(|d| Traced::Dim(method, d)))
        }
    }
}

impl Traced {
    /// The least and most inputs, and the outputs.
    pub(super) fn arity(&self) -> (usize, usize, Option<usize>) {
        match self {
            Traced::Binary(_) | Traced::Compare(_) | Traced::Logical(_) | Traced::MatMul | Traced::Select(_) | Traced::MaskFill(_) => (2, 2, Some(1)),
            Traced::MaskedSoftmax { .. } => (1, 2, Some(1)),
            Traced::VarMean(_) => (1, 1, Some(2)),
            Traced::Cat(_) => (1, usize::MAX, Some(1)),
            _ => (1, 1, Some(1)),
        }
    }

    /// Whether input `position` may be absent: only the mask of a masked softmax.
    pub(super) fn optional(&self, position: usize) -> bool {
        matches!(self, Traced::MaskedSoftmax { .. }) && position == 1
    }

    pub(super) fn run(&self, args: Vec<Option<Tensor>>) -> Result<Vec<Tensor>> {
        let arg = |k: usize| args.get(k).and_then(Option::as_ref).ok_or_else(|| Error::Internal { reason: format!("traced op: argument {k} is missing") });
        let x = arg(0)?;
        let one = |t: Tensor| Ok(vec![t]);
        match self {
            Traced::Binary(op) => one(x.binary(*op, arg(1)?)?),
            Traced::Scalar { op, value, reflected: false } => one(x.binary_scalar(*op, *value)?),
            Traced::Scalar { op, value, reflected: true } => one(Tensor::scalar_binary(*value, *op, x)?),
            Traced::FloatUnary(op) => one(x.float_unary(*op)?),
            Traced::Compare(op) => one(x.compare(*op, arg(1)?)?),
            Traced::CompareScalar { op, value } => one(x.compare_scalar(*op, *value)?),
            Traced::Logical(Logic::And) => one(x.bool_and(arg(1)?)?),
            Traced::Logical(Logic::Or) => one(x.bool_or(arg(1)?)?),
            Traced::Logical(Logic::Xor) => one(x.bool_xor(arg(1)?)?),
            Traced::BoolNot => one(x.bool_not()?),
            Traced::Neg => one(x.neg()?),
            Traced::Relu => one(x.relu()?),
            Traced::Gelu => one(x.gelu()?),
            Traced::Silu => one(x.silu()?),
            Traced::MatMul => one(x.matmul(arg(1)?)?),
            Traced::Reshape(shape) => one(x.reshape(shape)?),
            Traced::SwapDims(a, b) => one(x.swap_dims(*a, *b)?),
            Traced::Permute(axes) => one(x.permute(axes)?),
            Traced::Narrow { dim, start, length } => one(x.narrow(*dim, *start, *length)?),
            Traced::Select(dim) => one(x.select(*dim, arg(1)?)?),
            Traced::Dim(method, dim) => one(method.run(x, *dim)?),
            Traced::VarMean(dim) => {
                let (var, mean) = x.var_mean_bias(*dim)?;
                Ok(vec![var, mean])
            }
            Traced::Softmax(dim) => one(x.softmax(*dim)?),
            Traced::MaskedSoftmax { scale, fill } => one(x.masked_softmax(args.get(1).and_then(Option::as_ref), *scale, *fill)?),
            Traced::MaskFill(value) => one(x.mask_fill(arg(1)?, *value)?),
            Traced::Cat(dim) => {
                let parts = args.iter().map(|t| t.clone().ok_or_else(|| Error::Internal { reason: "t_cat: an argument is missing".into() })).collect::<Result<Vec<_>>>()?;
                one(Tensor::cat(&parts, *dim)?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use crate::dtype::DType;
    use crate::plan::{Attr, InputSpec, Plan, RawInstr};
    use crate::tensor::Tensor;

    fn instr(op: &str, attrs: &[(&str, Attr)], inputs: &[Option<usize>], outputs: &[usize]) -> RawInstr {
        let attrs = attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<HashMap<_, _>>();
        RawInstr { op: op.into(), attrs, inputs: inputs.to_vec(), outputs: outputs.to_vec(), free: vec![], label: op.into() }
    }

    fn s(v: &str) -> Attr {
        Attr::Str(v.into())
    }

    #[test]
    fn layer_norm_spelled_out_and_reflected_scalar() {
        // x = [[1, 3], [2, 6]]: var_mean over dim 1 -> var [1, 4], mean [2, 4];
        // (x - mean) / sqrt(var + 0) = [[-1, 1], [-1, 1]]; then 2 - that = [[3, 1], [3, 1]]
        let plan = Plan::build(
            8,
            vec![
                instr("t_var_mean", &[("dim", Attr::Int(1))], &[Some(0)], &[1, 2]),
                instr("t_binary", &[("op", s("sub"))], &[Some(0), Some(2)], &[3]),
                instr("t_scalar", &[("op", s("add")), ("value", Attr::Float(0.0)), ("int", Attr::Int(0))], &[Some(1)], &[4]),
                instr("t_float_unary", &[("op", s("sqrt"))], &[Some(4)], &[5]),
                instr("t_binary", &[("op", s("div"))], &[Some(3), Some(5)], &[6]),
                instr("t_scalar", &[("op", s("sub")), ("value", Attr::Float(2.0)), ("int", Attr::Int(0)), ("reflected", Attr::Int(1))], &[Some(6)], &[7]),
            ],
            vec![],
            vec![InputSpec { slot: 0, shape: vec![2, 2], dtype: DType::F32 }],
            vec![7, 1],
        )
        .unwrap();
        let out = plan.run(vec![Tensor::from_vec(vec![1.0f32, 3.0, 2.0, 6.0], &[2, 2]).unwrap()]).unwrap();
        assert_eq!(out[0].to_vec::<f32>(), vec![3.0, 1.0, 3.0, 1.0]);
        assert_eq!(out[1].shape(), &[2, 1]);
        assert_eq!(out[1].to_vec::<f32>(), vec![1.0, 4.0]);
    }

    #[test]
    fn comparisons_and_bool_logic() {
        // x = [1, 2, 3], y = [[2], [2]] broadcast over the size-1 dim:
        // x > y = [[F, F, T]] x2; x <= 2.0 = [T, T, F]; (x > y) xor (x <= 2) = [T, T, T];
        // not (x == y) = [T, F, T]; and with (x > y) = [F, F, T]; or with (x <= 2) = [T, T, T].
        let plan = Plan::build(
            10,
            vec![
                instr("t_compare", &[("op", s("greater"))], &[Some(0), Some(1)], &[2]),
                instr("t_compare_scalar", &[("op", s("lower_equal")), ("value", Attr::Float(2.0)), ("int", Attr::Int(0))], &[Some(0)], &[3]),
                instr("t_logical", &[("op", s("xor"))], &[Some(2), Some(3)], &[4]),
                instr("t_compare", &[("op", s("equal"))], &[Some(0), Some(1)], &[5]),
                instr("t_bool_not", &[], &[Some(5)], &[6]),
                instr("t_logical", &[("op", s("and"))], &[Some(6), Some(2)], &[7]),
                instr("t_logical", &[("op", s("or"))], &[Some(7), Some(3)], &[8]),
            ],
            vec![(1, Tensor::from_vec(vec![2.0f32, 2.0], &[2, 1]).unwrap())],
            vec![InputSpec { slot: 0, shape: vec![1, 3], dtype: DType::F32 }],
            vec![4, 6, 7, 8],
        )
        .unwrap();
        let out = plan.run(vec![Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 3]).unwrap()]).unwrap();
        let (t, f) = (true, false);
        assert_eq!(out[0].to_vec::<bool>(), vec![t, t, t, t, t, t]);
        assert_eq!(out[1].to_vec::<bool>(), vec![t, f, t, t, f, t]);
        assert_eq!(out[2].to_vec::<bool>(), vec![f, f, t, f, f, t]);
        assert_eq!(out[3].to_vec::<bool>(), vec![t, t, t, t, t, t]);
        let bad = Plan::build(2, vec![instr("t_logical", &[("op", s("nand"))], &[Some(0), Some(0)], &[1])], vec![], vec![InputSpec { slot: 0, shape: vec![1], dtype: DType::Bool }], vec![1]);
        assert!(bad.unwrap_err().to_string().contains("unknown logical op \"nand\""));
    }

    #[test]
    fn dim_methods_by_name() {
        // x = [[3, 1, 2], [0, 5, 4]]: cumsum over dim 1, max over dim 0, argmax over dim 1.
        let plan = Plan::build(
            4,
            vec![
                instr("t_cumsum", &[("dim", Attr::Int(1))], &[Some(0)], &[1]),
                instr("t_max_dim", &[("dim", Attr::Int(0))], &[Some(0)], &[2]),
                instr("t_argmax", &[("dim", Attr::Int(-1))], &[Some(0)], &[3]),
            ],
            vec![],
            vec![InputSpec { slot: 0, shape: vec![2, 3], dtype: DType::F32 }],
            vec![1, 2, 3],
        )
        .unwrap();
        let out = plan.run(vec![Tensor::from_vec(vec![3.0f32, 1.0, 2.0, 0.0, 5.0, 4.0], &[2, 3]).unwrap()]).unwrap();
        assert_eq!(out[0].to_vec::<f32>(), vec![3.0, 4.0, 6.0, 0.0, 5.0, 9.0]);
        assert_eq!((out[1].shape(), out[1].to_vec::<f32>()), (&[1usize, 3][..], vec![3.0, 5.0, 4.0]));
        assert_eq!((out[2].shape(), out[2].to_vec::<i64>()), (&[2usize, 1][..], vec![0, 1]));
    }

    #[test]
    fn masked_softmax_views_and_select() {
        // scores [1, 2] = [0, ln 3] masked at key 0 -> [0, 1]; unmasked with scale 1 -> [1/4, 3/4]
        let scores = Tensor::from_vec(vec![0.0f32, 3.0f32.ln()], &[1, 2]).unwrap();
        let mask = Tensor::from_vec(vec![true, false], &[1, 2]).unwrap();
        let table = Tensor::from_vec(vec![10.0f32, 11.0, 20.0, 21.0, 30.0, 31.0], &[3, 2]).unwrap();
        let ids = Tensor::from_vec(vec![2i64, 0], &[2]).unwrap();
        let plan = Plan::build(
            9,
            vec![
                instr("t_masked_softmax", &[("scale", Attr::Float(1.0)), ("fill", Attr::Float(-1e4))], &[Some(0), Some(1)], &[2]),
                instr("t_masked_softmax", &[("scale", Attr::Float(1.0)), ("fill", Attr::Float(-1e4))], &[Some(0), None], &[3]),
                instr("t_select", &[("dim", Attr::Int(0))], &[Some(4), Some(5)], &[6]),
                instr("t_swap_dims", &[("a", Attr::Int(0)), ("b", Attr::Int(1))], &[Some(6)], &[7]),
                instr("t_narrow", &[("dim", Attr::Int(1)), ("start", Attr::Int(1)), ("length", Attr::Int(1))], &[Some(7)], &[8]),
            ],
            vec![(1, mask), (4, table), (5, ids)],
            vec![InputSpec { slot: 0, shape: vec![1, 2], dtype: DType::F32 }],
            vec![2, 3, 8],
        )
        .unwrap();
        let out = plan.run(vec![scores]).unwrap();
        assert_eq!(out[0].to_vec::<f32>(), vec![0.0, 1.0]);
        let soft = out[1].to_vec::<f32>();
        assert!((soft[0] - 0.25).abs() < 1e-6 && (soft[1] - 0.75).abs() < 1e-6, "{soft:?}");
        // rows [30, 31] and [10, 11], transposed to [[30, 10], [31, 11]], column 1 -> [[10], [11]]
        assert_eq!(out[2].shape(), &[2, 1]);
        assert_eq!(out[2].to_vec::<f32>(), vec![10.0, 11.0]);
    }

    #[test]
    fn unknown_names_and_bad_attributes_are_build_errors() {
        let bad = |op: &str, attrs: &[(&str, Attr)]| {
            Plan::build(2, vec![instr(op, attrs, &[Some(0)], &[1])], vec![], vec![InputSpec { slot: 0, shape: vec![2], dtype: DType::F32 }], vec![1])
                .unwrap_err()
                .to_string()
        };
        assert!(bad("t_binary", &[("op", s("hypot"))]).contains("unknown binary op \"hypot\""));
        assert!(bad("t_float_unary", &[("op", s("cube"))]).contains("unknown float unary op"));
        assert!(bad("t_narrow", &[("dim", Attr::Int(0)), ("start", Attr::Int(-1)), ("length", Attr::Int(1))]).contains("non-negative"));
        assert!(bad("t_sort", &[("dim", Attr::Int(0))]).contains("unknown instruction"));
        assert!(bad("t_cumsum", &[]).contains("dim"));
    }
}
