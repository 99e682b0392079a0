//! Element-wise arithmetic on two tensors (broadcasting over size-1 dims of
//! equal ranks) and with a scalar.

use crate::autodiff::{record_lazy, sum_to_shape, FnBackward, Var};
use crate::dtype::{DType, Scalar};
use crate::element::{Element, FloatElement, FloatLanes, NumElement};
use crate::error::Result;
use crate::kernels::elementwise::{Operand, Operands};
use crate::kernels::parallel::{go_parallel, simd, CHUNK, PAR_CHEAP, PAR_COSTLY};
use crate::kernels::team::for_each_chunk_mut;
use crate::tensor::Tensor;
use crate::{with_dtype, with_float, with_float_lanes, with_num};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Remainder,
    Max,
    Min,
    Powf,
    Atan2,
    Fmod,
}

impl BinaryOp {
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Remainder => "remainder",
            BinaryOp::Max => "max_pair",
            BinaryOp::Min => "min_pair",
            BinaryOp::Powf => "powf",
            BinaryOp::Atan2 => "atan2",
            BinaryOp::Fmod => "fmod",
        }
    }

    fn float_only(self) -> bool {
        matches!(self, BinaryOp::Powf | BinaryOp::Atan2 | BinaryOp::Fmod)
    }
}

fn num_apply<T: NumElement>(op: BinaryOp, ab: impl Operands) -> Result<Tensor> {
    let name = op.name();
    match op {
        BinaryOp::Add => ab.zip(name, PAR_CHEAP, |x: T, y| x + y),
        BinaryOp::Sub => ab.zip(name, PAR_CHEAP, |x: T, y| x - y),
        BinaryOp::Mul => ab.zip(name, PAR_CHEAP, |x: T, y| x * y),
        BinaryOp::Div => ab.zip(name, PAR_CHEAP, |x: T, y| x.div_of(y)),
        BinaryOp::Remainder => ab.zip(name, PAR_CHEAP, |x: T, y| x.remainder(y)),
        BinaryOp::Max => ab.zip(name, PAR_CHEAP, |x: T, y| x.max_of(y)),
        BinaryOp::Min => ab.zip(name, PAR_CHEAP, |x: T, y| x.min_of(y)),
        _ => unreachable!("float-only ops go through float_apply"),
    }
}

/// `op` over two operands of `S` elements, computed in `S::Compute` (f32
/// for f16 and bf16) and rounded back once.
fn float_apply<S: FloatLanes<Compute = T>, T: FloatElement>(op: BinaryOp, ab: impl Operands) -> Result<Tensor> {
    let name = op.name();
    macro_rules! z {
        ($gate:expr, |$x:ident, $y:ident| $f:expr) => {
            ab.zip(name, $gate, #[inline(always)] |a: S, b: S| {
                let ($x, $y): (T, T) = (a.widen(), b.widen());
                S::narrow($f)
            })
        };
    }
    match op {
        BinaryOp::Add => z!(PAR_CHEAP, |x, y| x + y),
        BinaryOp::Sub => z!(PAR_CHEAP, |x, y| x - y),
        BinaryOp::Mul => z!(PAR_CHEAP, |x, y| x * y),
        BinaryOp::Div => z!(PAR_CHEAP, |x, y| x.div_of(y)),
        BinaryOp::Remainder => z!(PAR_CHEAP, |x, y| x.remainder(y)),
        BinaryOp::Max => z!(PAR_CHEAP, |x, y| x.max_of(y)),
        BinaryOp::Min => z!(PAR_CHEAP, |x, y| x.min_of(y)),
        BinaryOp::Powf => z!(PAR_COSTLY, |x, y| num_traits::Float::powf(x, y)),
        BinaryOp::Atan2 => z!(PAR_COSTLY, |x, y| num_traits::Float::atan2(x, y)),
        BinaryOp::Fmod => z!(PAR_CHEAP, |x, y| x % y),
    }
}

/// `op` over two operands of one `dtype`, owned or borrowed.
fn binary_apply(dtype: crate::dtype::DType, op: BinaryOp, ab: impl Operands) -> Result<Tensor> {
    if dtype.kind() == crate::Kind::Float || op.float_only() {
        return with_float_lanes!(op.name(), dtype, S => float_apply::<S, <S as FloatLanes>::Compute>(op, ab));
    }
    with_num!(op.name(), dtype, T => num_apply::<T>(op, ab))
}

/// `op(x, s)` for a scalar `s` converted to `x`'s dtype (to f32 for f16
/// and bf16, which compute in f32).
fn scalar_apply(x: impl Operand, op: BinaryOp, s: Scalar) -> Result<Tensor> {
    let dtype = x.dtype();
    let name = op.name();
    if dtype.kind() == crate::Kind::Float || op.float_only() {
        return with_float_lanes!(name, dtype, S => {
            let y = <<S as FloatLanes>::Compute as Element>::from_scalar(s);
            macro_rules! m {
                ($gate:expr, |$x:ident| $f:expr) => {
                    x.map(name, $gate, #[inline(always)] move |a: S| {
                        let $x = a.widen();
                        S::narrow($f)
                    })
                };
            }
            match op {
                BinaryOp::Add => m!(PAR_CHEAP, |x| x + y),
                BinaryOp::Sub => m!(PAR_CHEAP, |x| x - y),
                BinaryOp::Mul => m!(PAR_CHEAP, |x| x * y),
                BinaryOp::Div => m!(PAR_CHEAP, |x| x.div_of(y)),
                BinaryOp::Remainder => m!(PAR_CHEAP, |x| x.remainder(y)),
                BinaryOp::Max => m!(PAR_CHEAP, |x| x.max_of(y)),
                BinaryOp::Min => m!(PAR_CHEAP, |x| x.min_of(y)),
                BinaryOp::Powf => m!(PAR_COSTLY, |x| num_traits::Float::powf(x, y)),
                BinaryOp::Atan2 => m!(PAR_COSTLY, |x| num_traits::Float::atan2(x, y)),
                BinaryOp::Fmod => m!(PAR_CHEAP, |x| x % y),
            }
        });
    }
    with_num!(name, dtype, T => {
        let y = T::from_scalar(s);
        match op {
            BinaryOp::Add => x.map(name, PAR_CHEAP, move |x: T| x + y),
            BinaryOp::Sub => x.map(name, PAR_CHEAP, move |x: T| x - y),
            BinaryOp::Mul => x.map(name, PAR_CHEAP, move |x: T| x * y),
            BinaryOp::Div => x.map(name, PAR_CHEAP, move |x: T| x.div_of(y)),
            BinaryOp::Remainder => x.map(name, PAR_CHEAP, move |x: T| x.remainder(y)),
            BinaryOp::Max => x.map(name, PAR_CHEAP, move |x: T| x.max_of(y)),
            BinaryOp::Min => x.map(name, PAR_CHEAP, move |x: T| x.min_of(y)),
            _ => unreachable!(),
        }
    })
}

impl Tensor {
    /// `op(self, other)` element-wise with broadcasting.
    pub fn binary(&self, op: BinaryOp, other: &Tensor) -> Result<Tensor> {
        self.expect_same_dtype(op.name(), other)?;
        binary_apply(self.dtype(), op, (self, other))
    }

    /// As [`Tensor::binary`], reusing an operand's buffer when owned alone.
    pub fn binary_owned(self, op: BinaryOp, other: Tensor) -> Result<Tensor> {
        self.expect_same_dtype(op.name(), &other)?;
        binary_apply(self.dtype(), op, (self, other))
    }

    /// `op(self, s)` with a scalar converted to this tensor's dtype.
    pub fn binary_scalar(&self, op: BinaryOp, s: Scalar) -> Result<Tensor> {
        scalar_apply(self, op, s)
    }

    pub fn binary_scalar_owned(self, op: BinaryOp, s: Scalar) -> Result<Tensor> {
        scalar_apply(self, op, s)
    }

    /// `s - self`, `s / self`, ...: a scalar on the left.
    pub fn scalar_binary(s: Scalar, op: BinaryOp, rhs: &Tensor) -> Result<Tensor> {
        let lhs = with_dtype!(rhs.dtype(), T => Tensor::from_vec(vec![T::from_scalar(s)], &vec![1; rhs.rank()])?);
        lhs.binary(op, rhs)
    }
}

/// `f(g, a, b)` element-wise in one pass over g's (the output's) shape; `a`
/// and `b` broadcast to it. The operands are `S`, read in place and widened
/// in registers; each result is computed in `S::Compute` and stored by
/// `store` (rounded back to `S`, or kept wide for a sum that follows).
fn fused3<S: FloatLanes, O: Element>(
    op: &'static str,
    g: &Tensor,
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(S::Compute, S::Compute, S::Compute) -> S::Compute + Sync,
    store: impl Fn(S::Compute) -> O + Sync,
) -> Result<Tensor> {
    let dims: Vec<isize> = g.shape().iter().map(|&d| d as isize).collect();
    let (gs, av, bv) = (g.try_contiguous(op)?, a.expand(&dims)?.try_contiguous(op)?, b.expand(&dims)?.try_contiguous(op)?);
    let (gs, av, bv) = (gs.as_slice::<S>().expect("contiguous"), av.as_slice::<S>().expect("contiguous"), bv.as_slice::<S>().expect("contiguous"));
    let mut out = vec![O::ZERO; gs.len()];
    let body = |o: &mut [O], g: &[S], x: &[S], y: &[S]| {
        simd(
            #[inline(always)]
            || {
                for ((o, &g), (&x, &y)) in o.iter_mut().zip(g).zip(x.iter().zip(y)) {
                    *o = store(f(g.widen(), x.widen(), y.widen()));
                }
            },
        )
    };
    if go_parallel(out.len(), PAR_COSTLY) {
        for_each_chunk_mut(&mut out, CHUNK, |i, o| {
            let (start, len) = (i * CHUNK, o.len());
            body(o, &gs[start..][..len], &av[start..][..len], &bv[start..][..len])
        });
    } else {
        body(&mut out, gs, av, bv);
    }
    Tensor::from_vec(out, g.shape())
}

/// Gradients of a binary op, before reduction to the inputs' shapes, on
/// operands of element `S`. A gradient that is `wide[i]` (one still to be
/// summed over broadcast dims) stays in `S::Compute`, so that a half one is
/// rounded once, after its sum; the others are `S`.
fn binary_grads<S: FloatLanes<Compute = T>, T: FloatElement>(op: BinaryOp, g: &Tensor, a: &Tensor, b: &Tensor, needs: &[bool], wide: [bool; 2]) -> Result<(Option<Tensor>, Option<Tensor>)> {
    type F<U> = fn(U, U, U) -> U;
    let name = op.name();
    let grad = |i: usize, f: F<T>| -> Result<Option<Tensor>> {
        if !needs[i] {
            Ok(None)
        } else if wide[i] {
            fused3::<S, T>(name, g, a, b, f, |v| v).map(Some)
        } else {
            fused3::<S, S>(name, g, a, b, f, S::narrow).map(Some)
        }
    };
    let ga = |f: F<T>| grad(0, f);
    let gb = |f: F<T>| grad(1, f);
    Ok(match op {
        BinaryOp::Add => (needs[0].then(|| g.clone()), needs[1].then(|| g.clone())),
        BinaryOp::Sub => (needs[0].then(|| g.clone()), gb(|g, _, _| -g)?),
        BinaryOp::Mul => (ga(|g, _, y| g * y)?, gb(|g, x, _| g * x)?),
        BinaryOp::Div => (ga(|g, _, y| g / y)?, gb(|g, x, y| -(g * x / (y * y)))?),
        BinaryOp::Powf => (
            ga(|g, x, y| g * y * num_traits::Float::powf(x, y - T::one()))?,
            gb(|g, x, y| g * num_traits::Float::powf(x, y) * x.ln())?,
        ),
        BinaryOp::Atan2 => (ga(|g, x, y| g * y / (x * x + y * y))?, gb(|g, x, y| -(g * x) / (x * x + y * y))?),
        BinaryOp::Remainder => (needs[0].then(|| g.clone()), gb(|g, x, y| -(g * (x / y).floor()))?),
        BinaryOp::Fmod => (needs[0].then(|| g.clone()), gb(|g, x, y| -(g * (x / y).trunc()))?),
        // Ties send the gradient to the left operand.
        BinaryOp::Max => (
            ga(|g, x, y| if x >= y || x.is_nan() { g } else { T::zero() })?,
            gb(|g, x, y| if x >= y || x.is_nan() { T::zero() } else { g })?,
        ),
        BinaryOp::Min => (
            ga(|g, x, y| if x <= y || x.is_nan() { g } else { T::zero() })?,
            gb(|g, x, y| if x <= y || x.is_nan() { T::zero() } else { g })?,
        ),
    })
}

/// The dtype of a half-float tensor (f16, bf16), else None.
pub(crate) fn half_dtype(t: &Tensor) -> Option<DType> {
    Some(t.dtype()).filter(|d| matches!(d, DType::F16 | DType::BF16))
}

/// `t` rounded to `half` when given.
pub(crate) fn round_to(t: Tensor, half: Option<DType>) -> Result<Tensor> {
    match half {
        Some(dtype) => t.cast(dtype),
        None => Ok(t),
    }
}

impl Var {
    /// `op(self, other)` with broadcasting; gradients are summed back to
    /// each input's shape.
    pub fn binary(&self, op: BinaryOp, other: &Var) -> Result<Var> {
        // Half floats run natively (f32 in registers, one rounding); their
        // gradients are computed in f32 and rounded once (see the backward).
        let y = self.value.binary(op, &other.value)?;
        let (sa, sb, dtype) = (self.value.shape().to_vec(), other.value.shape().to_vec(), y.dtype());
        // An operand is kept only for a gradient that reads it: sums and
        // differences read neither (only the shapes to reduce to), a
        // product each operand for the other's gradient (a dropout mask
        // keeps no activation alive).
        let (tracked_a, tracked_b) = (self.requires_grad(), other.requires_grad());
        let (keep_a, keep_b) = match op {
            BinaryOp::Add | BinaryOp::Sub => (false, false),
            BinaryOp::Mul => (tracked_b, tracked_a),
            BinaryOp::Div => (tracked_b, true),
            _ => (true, true),
        };
        Ok(record_lazy(
            y,
            &[self, other],
            move |v| v[0].binary(op, &v[1]),
            |_| {
                let (a, b) = (keep_a.then(|| self.saved()), keep_b.then(|| other.saved()));
                FnBackward::new(op.name(), move |g, needs| {
                    let g = if g.dtype() == dtype { g } else { g.cast(dtype)? };
                    // What is not kept is not read: the gradient stands in.
                    let (a, b) = (a.as_ref().map(|a| a.get()).transpose()?.unwrap_or_else(|| g.clone()), b.as_ref().map(|b| b.get()).transpose()?.unwrap_or_else(|| g.clone()));
                    // A sum passes the gradient on as it is (a half one is reduced
                    // in f32 by sum_to_shape). The rest read half operands in place
                    // and compute in f32: a gradient of the output's shape is
                    // rounded at once, one summed over broadcast dims after its sum.
                    let wide = [sa.as_slice() != g.shape(), sb.as_slice() != g.shape()];
                    let (ga, gb) = match op {
                        BinaryOp::Add => (needs[0].then(|| g.clone()), needs[1].then(|| g.clone())),
                        _ => with_float_lanes!(op.name(), dtype, S => binary_grads::<S, _>(op, &g, &a, &b, needs, wide)?),
                    };
                    let back = |t: Option<Tensor>, shape: &[usize]| {
                        t.map(|t| {
                            let t = sum_to_shape(t, shape)?;
                            if t.dtype() == dtype { Ok(t) } else { t.cast(dtype) }
                        })
                        .transpose()
                    };
                    Ok(vec![back(ga, &sa)?, back(gb, &sb)?])
                })
            },
        ))
    }

    /// `op(self, s)` with a scalar.
    pub fn binary_scalar(&self, op: BinaryOp, s: Scalar) -> Result<Var> {
        let y = self.value.binary_scalar(op, s)?;
        let linear = matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Remainder | BinaryOp::Fmod | BinaryOp::Mul | BinaryOp::Div);
        Ok(record_lazy(
            y,
            &[self],
            move |v| v[0].binary_scalar(op, s),
            |_| {
                // Only the non-linear ops read the input in backward.
                let x = (!linear).then(|| self.saved());
                FnBackward::new(op.name(), move |g, _| {
                    let gx = match (op, &x) {
                        (BinaryOp::Mul | BinaryOp::Div, _) => g.binary_scalar_owned(op, s)?,
                        (_, Some(x)) => {
                            // A half gradient is computed in f32 and rounded once.
                            let half = half_dtype(&g);
                            let (g, x) = if half.is_some() { (g.cast(DType::F32)?, x.get()?.cast(DType::F32)?) } else { (g, x.get()?) };
                            let st = Tensor::full(&vec![1; x.rank()], Scalar::Float(s.to_f64()), x.dtype());
                            let gx = with_float!(op.name(), g.dtype(), T => binary_grads::<T, T>(op, &g, &x, &st, &[true, false], [false, false])?.0.expect("requested"));
                            round_to(gx, half)?
                        }
                        _ => g,
                    };
                    Ok(vec![Some(gx)])
                })
            },
        ))
    }

    /// `op(s, self)`: a scalar on the left (`2 - x`, `1 / x`, `2 ** x`).
    pub fn scalar_binary(s: Scalar, op: BinaryOp, rhs: &Var) -> Result<Var> {
        let lhs = Var::constant(with_dtype!(rhs.value.dtype(), T => Tensor::from_vec(vec![T::from_scalar(s)], &vec![1; rhs.value.rank()])?));
        lhs.binary(op, rhs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::f32s as f;

    #[test]
    fn broadcast_add() {
        let a = f(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let row = f(&[10.0, 20.0], &[1, 2]);
        let col = f(&[100.0, 200.0], &[2, 1]);
        assert_eq!(a.binary(BinaryOp::Add, &row).unwrap().to_vec::<f32>(), vec![11.0, 22.0, 13.0, 24.0]);
        assert_eq!(a.binary(BinaryOp::Add, &col).unwrap().to_vec::<f32>(), vec![101.0, 102.0, 203.0, 204.0]);
        assert_eq!(row.binary(BinaryOp::Add, &col).unwrap().shape(), &[2, 2]);
    }

    #[test]
    fn non_contiguous_operands() {
        let a = f(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).transpose();
        let b = f(&[1.0; 6], &[3, 2]);
        assert_eq!(a.binary(BinaryOp::Sub, &b).unwrap().to_vec::<f32>(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    }

    #[test]
    fn mismatched_shapes_name_the_op() {
        let e = f(&[1.0; 6], &[2, 3]).binary(BinaryOp::Mul, &f(&[1.0; 4], &[2, 2])).unwrap_err().to_string();
        assert!(e.starts_with("mul: incompatible shapes [2, 3] and [2, 2]"), "{e}");
    }

    #[test]
    fn dtypes_must_match() {
        let i = Tensor::from_vec(vec![1i64], &[1]).unwrap();
        assert!(f(&[1.0], &[1]).binary(BinaryOp::Add, &i).is_err());
    }

    #[test]
    fn remainder_takes_the_divisor_sign() {
        let a = f(&[-3.0, 3.0, -3.0], &[3]);
        let r = a.binary_scalar(BinaryOp::Remainder, Scalar::Float(2.0)).unwrap().to_vec::<f32>();
        assert_eq!(r, vec![1.0, 1.0, 1.0]);
        let i = Tensor::from_vec(vec![-7i64, 7], &[2]).unwrap();
        assert_eq!(i.binary_scalar(BinaryOp::Remainder, Scalar::Int(-3)).unwrap().to_vec::<i64>(), vec![-1, -2]);
    }

    #[test]
    fn int_division_truncates() {
        let i = Tensor::from_vec(vec![7i64, -7], &[2]).unwrap();
        assert_eq!(i.binary_scalar(BinaryOp::Div, Scalar::Int(2)).unwrap().to_vec::<i64>(), vec![3, -3]);
    }
}

#[cfg(test)]
#[path = "half_elementwise_tests.rs"]
mod half_elementwise_tests;
