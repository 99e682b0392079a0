//! Compiled plans: a graph run as a list of instructions over numbered value
//! slots, without returning to the caller between ops.
//!
//! A [`Plan`] serves one input signature (shapes and dtypes): the builder
//! resolves everything that depends on shapes alone (reshape targets, slice
//! bounds, broadcast ranks, padding) into each instruction's static
//! attributes. Constants (weights, folded values) sit in slots filled at
//! build; each instruction names the slots it reads and writes and the slots
//! it frees after it (their last use), so a buffer read for the last time
//! can be reused in place by the op that reads it. Every op calls the
//! engine's existing kernels; a plan adds no maths of its own.

mod attention;
mod attrs;
mod conv;
mod cumulative;
mod elementwise;
mod index;
mod linear;
mod norm;
mod pad;
mod shape;
mod traced;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

pub use attrs::{dtype_named, Attr};
pub use traced::DimMethod;
pub use elementwise::{Logical, Unary};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::epilogue::Activation;
use crate::ops::binary::BinaryOp;
use crate::ops::compare::CompareOp;
use crate::ops::conv::ConvOptions;
use crate::ops::pool::PoolOptions;
use crate::tensor::Tensor;
use crate::SliceSpec;

/// One instruction as the builder describes it.
#[derive(Clone, Debug)]
pub struct RawInstr {
    /// The op's name (`"binary"`, `"reshape"`, `"conv2d"`, ...).
    pub op: String,
    pub attrs: HashMap<String, Attr>,
    /// The slots read, in the op's argument order; `None` for an absent optional argument.
    pub inputs: Vec<Option<usize>>,
    pub outputs: Vec<usize>,
    /// Slots no later instruction reads (and that are not plan outputs).
    pub free: Vec<usize>,
    /// What the instruction computes, for error messages (the source node's name).
    pub label: String,
}

/// One instruction's time in [`Plan::profile`]: its op name, its label and the seconds it took.
pub type Timing = (String, String, f64);

/// A plan input: the slot it fills, the shape and dtype it must have.
#[derive(Clone, Debug)]
pub struct InputSpec {
    pub slot: usize,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

/// An instruction's op with its static attributes resolved.
#[derive(Clone, Debug)]
pub enum Op {
    Identity,
    Unary(Unary),
    Binary { op: BinaryOp, rank: usize },
    Compare { op: CompareOp, rank: usize },
    Logical { op: Logical, rank: usize },
    Where { rank: usize },
    Cast(DType),
    CastInt { low: f64, high: f64, fill: i64 },
    Reshape(Vec<isize>),
    Permute(Vec<isize>),
    Expand(Vec<isize>),
    Slice(Vec<SliceSpec>),
    Concat(isize),
    Split { dim: isize, sizes: Vec<usize> },
    Take { dim: isize, wrap: bool, shape: Vec<isize> },
    GatherNd { batch: usize, shape: Vec<isize> },
    GatherElements { dim: isize },
    ScatterNd,
    CumSum { dim: isize, exclusive: bool, reverse: bool },
    Pad { pads: Vec<(usize, usize)>, value: f64 },
    MatMul { a_shape: Option<Vec<isize>>, b_shape: Option<Vec<isize>> },
    Linear { shape: Vec<isize> },
    PowScalar(f64),
    Softmax(isize),
    LayerNorm { start: usize, epsilon: f64 },
    RmsNorm { start: usize, epsilon: f64 },
    Attention { scale: f64, nan_to_zero: bool },
    MeanDims { dims: Vec<isize>, shape: Vec<isize> },
    Conv1d(ConvOptions<1>),
    Conv2d(ConvOptions<2>),
    Conv2dFused { options: ConvOptions<2>, relu: bool, act: Activation },
    MaxPool2d(PoolOptions<2>),
    AvgPool2d { options: PoolOptions<2>, include_pad: bool },
    /// An op recorded from ferrum's tensor methods (`traced.rs`).
    Traced(traced::Traced),
}

impl Op {
    /// The op named `name` with attributes `attrs`.
    pub fn build(name: &str, attrs: &HashMap<String, Attr>) -> Result<Op> {
        let a = attrs::Attrs { op: name, map: attrs };
        match name {
            "identity" => Ok(Op::Identity),
            "unary" => elementwise::unary(&a),
            "binary" => elementwise::binary(&a),
            "compare" => elementwise::compare(&a),
            "logical" => elementwise::logical(&a),
            "where" => elementwise::where_(&a),
            "cast" => elementwise::cast(&a),
            "cast_int" => elementwise::cast_int(&a),
            "reshape" => shape::reshape(&a),
            "permute" => shape::permute(&a),
            "expand" => shape::expand(&a),
            "slice" => shape::slice(&a),
            "concat" => shape::concat(&a),
            "split" => shape::split(&a),
            "take" => shape::take(&a),
            "gather_nd" => index::gather_nd(&a),
            "gather_elements" => index::gather_elements(&a),
            "scatter_nd" => index::scatter_nd(&a),
            "cumsum" => cumulative::cumsum(&a),
            "pad" => pad::pad(&a),
            "matmul" => linear::matmul(&a),
            "linear" => linear::linear(&a),
            "pow_scalar" => elementwise::pow_scalar(&a),
            "softmax" => norm::softmax(&a),
            "layer_norm" => norm::layer_norm(&a),
            "rms_norm" => norm::rms_norm(&a),
            "attention" => attention::attention(&a),
            "mean_dims" => norm::mean_dims(&a),
            "conv1d" => conv::conv1d(&a),
            "conv2d" => conv::conv2d(&a),
            "conv2d_fused" => conv::conv2d_fused(&a),
            "max_pool2d" => conv::max_pool2d(&a),
            "avg_pool2d" => conv::avg_pool2d(&a),
            other => match traced::build(other, &a) {
                Some(op) => op.map(Op::Traced),
                None => Err(Error::invalid("Plan.build", format!("unknown instruction {other:?}"))),
            },
        }
    }

    /// The least and most inputs the op reads (`usize::MAX`: any number), and how many outputs it
    /// writes (`None`: as many as the instruction names).
    fn arity(&self) -> (usize, usize, Option<usize>) {
        match self {
            Op::Identity | Op::Unary(_) | Op::PowScalar(_) | Op::Cast(_) | Op::Reshape(_) | Op::Permute(_) | Op::Expand(_) | Op::Slice(_) => (1, 1, Some(1)),
            Op::CastInt { .. } | Op::CumSum { .. } | Op::Pad { .. } => (1, 1, Some(1)),
            Op::GatherNd { .. } | Op::GatherElements { .. } => (2, 2, Some(1)),
            Op::ScatterNd => (3, 3, Some(1)),
            Op::RmsNorm { .. } => (1, 2, Some(1)),
            Op::Attention { .. } => (3, 4, Some(1)),
            Op::Softmax(_) | Op::MeanDims { .. } | Op::MaxPool2d(_) | Op::AvgPool2d { .. } => (1, 1, Some(1)),
            Op::Binary { .. } | Op::Compare { .. } | Op::Logical { .. } | Op::Take { .. } | Op::MatMul { .. } => (2, 2, Some(1)),
            Op::Where { .. } => (3, 3, Some(1)),
            Op::Concat(_) => (1, usize::MAX, Some(1)),
            Op::Split { sizes, .. } => (1, 1, Some(sizes.len())),
            Op::LayerNorm { .. } => (2, 3, Some(1)),
            Op::Conv1d(_) | Op::Conv2d(_) | Op::Linear { .. } => (2, 3, Some(1)),
            Op::Conv2dFused { .. } => (2, 5, Some(1)),
            Op::Traced(t) => t.arity(),
        }
    }

    /// Which arguments may be absent (`None`).
    fn optional(&self, position: usize) -> bool {
        match self {
            Op::LayerNorm { .. } | Op::Conv1d(_) | Op::Conv2d(_) | Op::Linear { .. } => position >= 2,
            Op::RmsNorm { .. } => position >= 1,
            Op::Attention { .. } => position >= 3,
            Op::Conv2dFused { .. } => position >= 2,
            Op::Traced(t) => t.optional(position),
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
struct Instr {
    op: Op,
    /// The instruction's name as built (`"binary"`, ...), for profiles.
    name: String,
    inputs: Vec<Option<usize>>,
    /// Per input: whether this is the slot's last read, so the op may own (and reuse) its buffer.
    owned: Vec<bool>,
    outputs: Vec<usize>,
    /// Freed slots not handed to the op as owned inputs.
    free: Vec<usize>,
    label: String,
}

/// A compiled graph over numbered slots (see the module docs).
#[derive(Clone, Debug)]
pub struct Plan {
    instrs: Vec<Instr>,
    init: Vec<Option<Tensor>>,
    inputs: Vec<InputSpec>,
    outputs: Vec<usize>,
}

const BUILD: &str = "Plan.build";
const RUN: &str = "Plan.run";

impl Plan {
    /// Check and compile `instrs` over `slots` slots: `constants` fill their slots at every run,
    /// `inputs` are the run's arguments, `outputs` the slots it returns.
    ///
    /// Every read must follow the write of its slot (by an input, a constant or an earlier
    /// instruction) and precede its free; a slot is written once. Errors name the instruction.
    pub fn build(slots: usize, instrs: Vec<RawInstr>, constants: Vec<(usize, Tensor)>, inputs: Vec<InputSpec>, outputs: Vec<usize>) -> Result<Plan> {
        let bad = |reason: String| Error::invalid(BUILD, reason);
        let check_slot = |s: usize, what: &str| if s < slots { Ok(()) } else { Err(bad(format!("{what}: slot {s} is out of range ({slots} slots)"))) };
        let mut init: Vec<Option<Tensor>> = vec![None; slots];
        // live: written and not freed; written: ever written (a slot is written once)
        let mut live = vec![false; slots];
        let mut written = vec![false; slots];
        let mut fill = |s: usize, what: &str, live: &mut Vec<bool>| -> Result<()> {
            check_slot(s, what)?;
            if written[s] {
                return Err(bad(format!("{what}: slot {s} is written twice")));
            }
            written[s] = true;
            live[s] = true;
            Ok(())
        };
        for (slot, t) in constants {
            fill(slot, "constant", &mut live)?;
            init[slot] = Some(t);
        }
        for spec in &inputs {
            fill(spec.slot, "input", &mut live)?;
        }
        let mut compiled = Vec::with_capacity(instrs.len());
        for (i, raw) in instrs.into_iter().enumerate() {
            let what = format!("instruction {i} ({} {:?})", raw.op, raw.label);
            let op = Op::build(&raw.op, &raw.attrs).map_err(|e| bad(format!("{what}: {e}")))?;
            let (least, most, outs) = op.arity();
            if raw.inputs.len() < least || raw.inputs.len() > most {
                return Err(bad(format!("{what}: expected {least} to {most} inputs, found {}", raw.inputs.len())));
            }
            if let Some(n) = outs {
                if raw.outputs.len() != n {
                    return Err(bad(format!("{what}: expected {n} outputs, found {}", raw.outputs.len())));
                }
            }
            for (k, slot) in raw.inputs.iter().enumerate() {
                match slot {
                    None if !op.optional(k) => return Err(bad(format!("{what}: input {k} is required"))),
                    None => {}
                    Some(s) => {
                        check_slot(*s, &what)?;
                        if !live[*s] {
                            return Err(bad(format!("{what}: input {k} reads slot {s} before it is written or after it is freed")));
                        }
                    }
                }
            }
            for s in &raw.free {
                check_slot(*s, &what)?;
                if !raw.inputs.contains(&Some(*s)) && !live[*s] {
                    return Err(bad(format!("{what}: frees slot {s}, which holds nothing")));
                }
            }
            let reads = |s: usize| raw.inputs.iter().filter(|x| **x == Some(s)).count();
            let owned: Vec<bool> = raw.inputs.iter().map(|x| x.is_some_and(|s| raw.free.contains(&s) && reads(s) == 1)).collect();
            let free: Vec<usize> = raw.free.iter().copied().filter(|s| !raw.inputs.iter().zip(&owned).any(|(x, o)| *o && *x == Some(*s))).collect();
            for s in &raw.free {
                live[*s] = false;
            }
            for s in &raw.outputs {
                fill(*s, &what, &mut live)?;
            }
            compiled.push(Instr { op, name: raw.op, inputs: raw.inputs, owned, outputs: raw.outputs, free, label: raw.label });
        }
        for s in &outputs {
            check_slot(*s, "output")?;
            if !live[*s] {
                return Err(bad(format!("output slot {s} holds nothing at the end (never written, or freed)")));
            }
        }
        Ok(Plan { instrs: compiled, init, inputs, outputs })
    }

    /// The number of instructions.
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// The inputs the plan was built for.
    pub fn inputs(&self) -> &[InputSpec] {
        &self.inputs
    }

    /// Run the plan on `inputs` (one per [`InputSpec`], of its shape and dtype); the output slots' tensors.
    pub fn run(&self, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        self.execute(inputs, None)
    }

    /// `run`, also timing each instruction: the outputs, and per instruction its name, its label and
    /// the seconds it took.
    pub fn profile(&self, inputs: Vec<Tensor>) -> Result<(Vec<Tensor>, Vec<Timing>)> {
        let mut times = Vec::with_capacity(self.instrs.len());
        let outs = self.execute(inputs, Some(&mut times))?;
        let rows = self.instrs.iter().zip(times).map(|(ins, t)| (ins.name.clone(), ins.label.clone(), t)).collect();
        Ok((outs, rows))
    }

    fn execute(&self, inputs: Vec<Tensor>, mut times: Option<&mut Vec<f64>>) -> Result<Vec<Tensor>> {
        if inputs.len() != self.inputs.len() {
            return Err(Error::invalid(RUN, format!("expected {} inputs, found {}", self.inputs.len(), inputs.len())));
        }
        let mut regs = self.init.clone();
        for (i, (spec, t)) in self.inputs.iter().zip(inputs).enumerate() {
            if t.shape() != spec.shape.as_slice() || t.dtype() != spec.dtype {
                return Err(Error::invalid(
                    RUN,
                    format!("input {i}: expected shape {:?} of {}, found shape {:?} of {}", spec.shape, spec.dtype, t.shape(), t.dtype()),
                ));
            }
            regs[spec.slot] = Some(t);
        }
        for (i, ins) in self.instrs.iter().enumerate() {
            if crate::interrupt::poll() {
                return Err(Error::Interrupted);
            }
            let mut args = Vec::with_capacity(ins.inputs.len());
            for (slot, owned) in ins.inputs.iter().zip(&ins.owned) {
                args.push(match slot {
                    None => None,
                    Some(s) if *owned => Some(regs[*s].take().ok_or_else(|| missing(i, ins, *s))?),
                    Some(s) => Some(regs[*s].clone().ok_or_else(|| missing(i, ins, *s))?),
                });
            }
            for s in &ins.free {
                regs[*s] = None;
            }
            let started = times.as_ref().map(|_| std::time::Instant::now());
            let outs = exec(&ins.op, args, ins.outputs.len()).map_err(|e| match e {
                Error::Interrupted => Error::Interrupted,
                e => Error::invalid(RUN, format!("instruction {i} ({}): {e}", ins.label)),
            })?;
            if let (Some(times), Some(started)) = (times.as_deref_mut(), started) {
                times.push(started.elapsed().as_secs_f64());
            }
            if outs.len() != ins.outputs.len() {
                return Err(internal(format!("plan instruction {i} ({}) made {} outputs, expected {}", ins.label, outs.len(), ins.outputs.len())));
            }
            for (s, t) in ins.outputs.iter().zip(outs) {
                regs[*s] = Some(t);
            }
        }
        self.outputs.iter().map(|s| regs[*s].clone().ok_or_else(|| internal(format!("plan output slot {s} is empty")))).collect()
    }
}

fn missing(i: usize, ins: &Instr, slot: usize) -> Error {
    internal(format!("plan instruction {i} ({}) reads empty slot {slot}", ins.label))
}

/// Argument `k` of `args`, which the build checked is present.
fn need<'a>(args: &'a [Option<Tensor>], k: usize, op: &'static str) -> Result<&'a Tensor> {
    args.get(k).and_then(Option::as_ref).ok_or_else(|| internal(format!("{op}: argument {k} is missing")))
}

fn take_arg(args: &mut [Option<Tensor>], k: usize, op: &'static str) -> Result<Tensor> {
    args.get_mut(k).and_then(Option::take).ok_or_else(|| internal(format!("{op}: argument {k} is missing")))
}

fn exec(op: &Op, mut args: Vec<Option<Tensor>>, n_out: usize) -> Result<Vec<Tensor>> {
    let one = |t: Tensor| Ok(vec![t]);
    let a = &mut args;
    match op {
        Op::Identity => one(take_arg(a, 0, "identity")?),
        Op::Unary(u) => one(elementwise::run_unary(*u, take_arg(a, 0, "unary")?)?),
        Op::Binary { op, rank } => {
            let (x, y) = (take_arg(a, 0, "binary")?, take_arg(a, 1, "binary")?);
            one(elementwise::run_binary(*op, *rank, x, y)?)
        }
        Op::Compare { op, rank } => {
            let (x, y) = (take_arg(a, 0, "compare")?, take_arg(a, 1, "compare")?);
            one(elementwise::run_compare(*op, *rank, x, y)?)
        }
        Op::Logical { op, rank } => {
            let (x, y) = (take_arg(a, 0, "logical")?, take_arg(a, 1, "logical")?);
            one(elementwise::run_logical(*op, *rank, x, y)?)
        }
        Op::Where { rank } => {
            let (c, x, y) = (take_arg(a, 0, "where")?, take_arg(a, 1, "where")?, take_arg(a, 2, "where")?);
            one(elementwise::run_where(*rank, c, x, y)?)
        }
        Op::Cast(dtype) => one(elementwise::run_cast(*dtype, take_arg(a, 0, "cast")?)?),
        Op::CastInt { low, high, fill } => one(elementwise::run_cast_int(*low, *high, *fill, take_arg(a, 0, "cast_int")?)?),
        Op::GatherNd { batch, shape } => {
            let (x, idx) = (take_arg(a, 0, "gather_nd")?, take_arg(a, 1, "gather_nd")?);
            one(index::run_gather_nd(*batch, shape, x, idx)?)
        }
        Op::GatherElements { dim } => {
            let (x, idx) = (take_arg(a, 0, "gather_elements")?, take_arg(a, 1, "gather_elements")?);
            one(index::run_gather_elements(*dim, x, idx)?)
        }
        Op::ScatterNd => {
            let (x, idx, upd) = (take_arg(a, 0, "scatter_nd")?, take_arg(a, 1, "scatter_nd")?, take_arg(a, 2, "scatter_nd")?);
            one(index::run_scatter_nd(x, idx, upd)?)
        }
        Op::CumSum { dim, exclusive, reverse } => one(cumulative::run_cumsum(*dim, *exclusive, *reverse, take_arg(a, 0, "cumsum")?)?),
        Op::Pad { pads, value } => one(pad::run_pad(pads, *value, take_arg(a, 0, "pad")?)?),
        Op::RmsNorm { start, epsilon } => {
            let x = take_arg(a, 0, "rms_norm")?;
            let scale = a.get_mut(1).and_then(Option::take);
            one(norm::run_rms_norm(*start, *epsilon, x, scale)?)
        }
        Op::Attention { scale, nan_to_zero } => {
            let (q, k, v) = (take_arg(a, 0, "attention")?, take_arg(a, 1, "attention")?, take_arg(a, 2, "attention")?);
            let bias = a.get_mut(3).and_then(Option::take);
            one(attention::run_attention(*scale, *nan_to_zero, q, k, v, bias)?)
        }
        Op::Reshape(shape) => one(take_arg(a, 0, "reshape")?.reshape(shape)?),
        Op::Permute(axes) => one(take_arg(a, 0, "permute")?.permute(axes)?),
        Op::Expand(shape) => one(shape::run_expand(shape, take_arg(a, 0, "expand")?)?),
        Op::Slice(specs) => one(take_arg(a, 0, "slice")?.slice(specs)?),
        Op::Concat(dim) => {
            let parts = args.into_iter().map(|t| t.ok_or_else(|| internal("concat: an argument is missing"))).collect::<Result<Vec<_>>>()?;
            one(Tensor::cat(&parts, *dim)?)
        }
        Op::Split { dim, sizes } => {
            let parts = shape::run_split(*dim, sizes, take_arg(a, 0, "split")?)?;
            if parts.len() != n_out {
                return Err(internal(format!("split made {} parts, expected {n_out}", parts.len())));
            }
            Ok(parts)
        }
        Op::Take { dim, wrap, shape } => {
            let (x, idx) = (take_arg(a, 0, "take")?, take_arg(a, 1, "take")?);
            one(shape::run_take(*dim, *wrap, shape, x, idx)?)
        }
        Op::MatMul { a_shape, b_shape } => {
            let (x, y) = (take_arg(a, 0, "matmul")?, take_arg(a, 1, "matmul")?);
            one(linear::run_matmul(a_shape.as_deref(), b_shape.as_deref(), x, y)?)
        }
        Op::Linear { shape } => {
            let (x, w) = (take_arg(a, 0, "linear")?, take_arg(a, 1, "linear")?);
            let b = a.get_mut(2).and_then(Option::take);
            one(linear::run_linear(shape, x, w, b)?)
        }
        Op::PowScalar(e) => one(elementwise::run_pow_scalar(*e, take_arg(a, 0, "pow_scalar")?)?),
        Op::Softmax(dim) => one(take_arg(a, 0, "softmax")?.softmax(*dim)?),
        Op::LayerNorm { start, epsilon } => {
            let (x, scale) = (take_arg(a, 0, "layer_norm")?, take_arg(a, 1, "layer_norm")?);
            let bias = a.get_mut(2).and_then(Option::take);
            one(norm::run_layer_norm(*start, *epsilon, x, scale, bias)?)
        }
        Op::MeanDims { dims, shape } => one(norm::run_mean_dims(dims, shape, take_arg(a, 0, "mean_dims")?)?),
        Op::Conv1d(options) => {
            let bias = args.get(2).and_then(Option::as_ref);
            one(conv::run_conv1d(options, need(&args, 0, "conv1d")?, need(&args, 1, "conv1d")?, bias)?)
        }
        Op::Conv2d(options) => {
            let bias = args.get(2).and_then(Option::as_ref);
            one(conv::run_conv2d(options, need(&args, 0, "conv2d")?, need(&args, 1, "conv2d")?, bias)?)
        }
        Op::Conv2dFused { options, relu, act } => one(conv::run_conv2d_fused(options, *relu, *act, &args)?),
        Op::MaxPool2d(options) => one(need(&args, 0, "max_pool2d")?.max_pool2d(options)?),
        Op::AvgPool2d { options, include_pad } => one(need(&args, 0, "avg_pool2d")?.avg_pool2d(options, *include_pad)?),
        Op::Traced(t) => t.run(args),
    }
}

fn internal(reason: impl Into<String>) -> Error {
    Error::Internal { reason: reason.into() }
}
