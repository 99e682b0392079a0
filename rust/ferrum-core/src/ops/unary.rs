//! Element-wise math on one tensor: Float math (exp, log, trig, rounding,
//! ...) and numeric sign/abs/neg.

use crate::autodiff::{record_lazy, FnBackward, Var};
use crate::dtype::{DType, Scalar};
use crate::element::{Element, FloatElement, FloatLanes, NumElement};
use crate::ops::binary::half_dtype;
use crate::error::Result;
use crate::kernels::elementwise::{map_same, zip_same, Operand};
use crate::kernels::parallel::{PAR_CHEAP, PAR_COSTLY};
use crate::kernels::tanh::tanh;
use crate::tensor::Tensor;
use crate::{with_float, with_float_lanes, with_num};

/// Float-only element-wise functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatUnary {
    Exp,
    Log,
    Log1p,
    Erf,
    Recip,
    Square,
    Sqrt,
    Sin,
    Cos,
    Tan,
    Sinh,
    Cosh,
    Tanh,
    Asin,
    Asinh,
    Acos,
    Acosh,
    Atan,
    Atanh,
    Round,
    Floor,
    Ceil,
    Trunc,
    Sigmoid,
}

impl FloatUnary {
    pub fn name(self) -> &'static str {
        use FloatUnary::*;
        match self {
            Exp => "exp",
            Log => "log",
            Log1p => "log1p",
            Erf => "erf",
            Recip => "recip",
            Square => "square",
            Sqrt => "sqrt",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asin => "asin",
            Asinh => "asinh",
            Acos => "acos",
            Acosh => "acosh",
            Atan => "atan",
            Atanh => "atanh",
            Round => "round",
            Floor => "floor",
            Ceil => "ceil",
            Trunc => "trunc",
            Sigmoid => "sigmoid",
        }
    }
}

/// `op` on every element of `x`, whose elements are `S`: computed in
/// `S::Compute` (f32 for f16 and bf16) and rounded back once.
fn apply<S: FloatLanes<Compute = T>, T: FloatElement>(x: impl Operand, op: FloatUnary) -> Result<Tensor> {
    use FloatUnary::*;
    let (c, e, name) = (PAR_CHEAP, PAR_COSTLY, op.name());
    // `f` on the widened value, rounded back: the identity for f32 and f64.
    macro_rules! m {
        ($gate:expr, |$v:ident| $f:expr) => {
            x.map(name, $gate, #[inline(always)] |s: S| {
                let $v: T = s.widen();
                S::narrow($f)
            })
        };
    }
    match op {
        Exp => m!(e, |v| v.simd_exp()),
        Log => m!(e, |v| v.ln()),
        Log1p => m!(e, |v| v.ln_1p()),
        Erf => m!(e, |v| v.erf()),
        Recip => m!(c, |v| v.recip()),
        Square => m!(c, |v| v * v),
        Sqrt => m!(c, |v| v.sqrt()),
        Sin => m!(e, |v| v.sin()),
        Cos => m!(e, |v| v.cos()),
        Tan => m!(e, |v| v.tan()),
        Sinh => m!(e, |v| v.sinh()),
        Cosh => m!(e, |v| v.cosh()),
        Tanh => m!(e, |v| tanh(v)),
        Asin => m!(e, |v| v.asin()),
        Asinh => m!(e, |v| v.asinh()),
        Acos => m!(e, |v| v.acos()),
        Acosh => m!(e, |v| v.acosh()),
        Atan => m!(e, |v| v.atan()),
        Atanh => m!(e, |v| v.atanh()),
        // Burn rounds half to even, like NumPy.
        Round => m!(c, |v| round_half_even(v)),
        Floor => m!(c, |v| v.floor()),
        Ceil => m!(c, |v| v.ceil()),
        Trunc => m!(c, |v| v.trunc()),
        Sigmoid => m!(e, |v| sigmoid(v)),
    }
}

#[inline(always)]
pub(crate) fn sigmoid<T: FloatElement>(v: T) -> T {
    // exp(-|v|) never overflows; selecting by sign instead of branching
    // keeps the loop vectorisable.
    let e = (-v.abs()).simd_exp();
    let s = T::one() / (T::one() + e);
    if v >= T::zero() { s } else { e * s }
}

#[inline(always)]
fn round_half_even<T: FloatElement>(v: T) -> T {
    let r = v.round();
    if (v - v.trunc()).abs() == T::from(0.5).unwrap() {
        let half = r / T::from(2.0).unwrap();
        if half.trunc() != half {
            return r - v.signum();
        }
    }
    r
}

impl Tensor {
    /// A Float-only element-wise function.
    pub fn float_unary(&self, op: FloatUnary) -> Result<Tensor> {
        with_float_lanes!(op.name(), self.dtype(), S => apply::<S, <S as FloatLanes>::Compute>(self, op))
    }

    /// As [`Tensor::float_unary`], reusing the buffer when owned alone.
    pub fn float_unary_owned(self, op: FloatUnary) -> Result<Tensor> {
        with_float_lanes!(op.name(), self.dtype(), S => apply::<S, <S as FloatLanes>::Compute>(self, op))
    }

    pub fn neg(&self) -> Result<Tensor> {
        with_num!("neg", self.dtype(), T => map_same("neg", self.clone(), PAR_CHEAP, |v: T| -v))
    }

    pub fn abs(&self) -> Result<Tensor> {
        with_num!("abs", self.dtype(), T => map_same("abs", self.clone(), PAR_CHEAP, |v: T| num_traits::Signed::abs(&v)))
    }

    /// -1, 0 or 1 by sign (0 for zero, NaN stays NaN).
    pub fn sign(&self) -> Result<Tensor> {
        with_num!("sign", self.dtype(), T => map_same("sign", self.clone(), PAR_CHEAP, |v: T| {
            if v > T::ZERO { T::ONE } else if v < T::ZERO { -T::ONE } else { v }
        }))
    }

    /// `x ^ e` for an integer exponent.
    pub fn powi_scalar(&self, e: i64) -> Result<Tensor> {
        let e = e.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        with_num!("powi_scalar", self.dtype(), T => map_same("powi_scalar", self.clone(), PAR_CHEAP, move |v: T| v.powi_of(e)))
    }

    /// `x ^ e` for a float exponent (Float tensors).
    pub fn powf_scalar(&self, e: f64) -> Result<Tensor> {
        with_float!("powf_scalar", self.dtype(), T => {
            let et = T::from_f64(e);
            if e == 2.0 {
                map_same("powf_scalar", self.clone(), PAR_CHEAP, |v: T| v * v)
            } else if e == 0.5 {
                map_same("powf_scalar", self.clone(), PAR_CHEAP, |v: T| v.sqrt())
            } else {
                map_same("powf_scalar", self.clone(), PAR_COSTLY, move |v: T| num_traits::Float::powf(v, et))
            }
        })
    }

    /// Values limited to `[min, max]`; NaN stays NaN.
    pub fn clamp(&self, min: Scalar, max: Scalar) -> Result<Tensor> {
        with_num!("clamp", self.dtype(), T => {
            let (lo, hi) = (T::from_scalar(min), T::from_scalar(max));
            if lo > hi {
                crate::bail!("clamp", "min {:?} is greater than max {:?}", min, max);
            }
            map_same("clamp", self.clone(), PAR_CHEAP, move |v: T| if v < lo { lo } else if v > hi { hi } else { v })
        })
    }

    pub fn clamp_min(&self, min: Scalar) -> Result<Tensor> {
        with_num!("clamp_min", self.dtype(), T => {
            let lo = T::from_scalar(min);
            map_same("clamp_min", self.clone(), PAR_CHEAP, move |v: T| if v < lo { lo } else { v })
        })
    }

    pub fn clamp_max(&self, max: Scalar) -> Result<Tensor> {
        with_num!("clamp_max", self.dtype(), T => {
            let hi = T::from_scalar(max);
            map_same("clamp_max", self.clone(), PAR_CHEAP, move |v: T| if v > hi { hi } else { v })
        })
    }
}

/// What each function's derivative reads: its output `y` where that is
/// cheaper than the input `x`, nothing where it is piecewise constant.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reads {
    Input,
    Output,
    Nothing,
}

fn reads(op: FloatUnary) -> Reads {
    use FloatUnary::*;
    match op {
        Exp | Recip | Sqrt | Tan | Tanh | Sigmoid => Reads::Output,
        Round | Floor | Ceil | Trunc => Reads::Nothing,
        _ => Reads::Input,
    }
}

/// d/dx of each function as `f(grad, v)`, `v` being the output where
/// `of_output` and [`reads`] allow it, else the input; None where the
/// derivative is zero almost everywhere.
fn derivative<T: FloatElement>(op: FloatUnary, of_output: bool) -> Option<fn(T, T) -> T> {
    use FloatUnary::*;
    let output = of_output && reads(op) == Reads::Output;
    Some(match op {
        Exp if output => |g, y| g * y,
        Exp => |g, x| g * x.exp(),
        Log => |g, x| g / x,
        Log1p => |g, x| g / (T::one() + x),
        Erf => |g, x| g * T::from(std::f64::consts::FRAC_2_SQRT_PI).unwrap() * (-(x * x)).exp(),
        Recip if output => |g, y| -(g * y * y),
        Recip => |g, x| -(g / (x * x)),
        Square => |g, x| g * (x + x),
        Sqrt if output => |g, y| g / (y + y),
        Sqrt => |g, x| g / (x.sqrt() + x.sqrt()),
        Sin => |g, x| g * x.cos(),
        Cos => |g, x| -(g * x.sin()),
        Tan if output => |g, y| g * (T::one() + y * y),
        Tan => |g, x| g * (T::one() + x.tan() * x.tan()),
        Sinh => |g, x| g * x.cosh(),
        Cosh => |g, x| g * x.sinh(),
        Tanh if output => |g, y| g * (T::one() - y * y),
        Tanh => |g, x| g * (T::one() - x.tanh() * x.tanh()),
        Asin => |g, x| g / (T::one() - x * x).sqrt(),
        Acos => |g, x| -(g / (T::one() - x * x).sqrt()),
        Atan => |g, x| g / (T::one() + x * x),
        Asinh => |g, x| g / (x * x + T::one()).sqrt(),
        Acosh => |g, x| g / (x * x - T::one()).sqrt(),
        Atanh => |g, x| g / (T::one() - x * x),
        Round | Floor | Ceil | Trunc => return None,
        Sigmoid if output => |g, y| g * y * (T::one() - y),
        Sigmoid => |g, x| g * sigmoid(x) * (T::one() - sigmoid(x)),
    })
}

/// One fused pass of `f(grad, saved)` over a half float's tensors: each
/// pair read as f32, the result rounded once (no widened copies).
fn half_grad_with<S: FloatLanes<Compute = f32>>(name: &'static str, g: Tensor, saved: &Tensor, gate: usize, f: impl Fn(f32, f32) -> f32 + Sync) -> Result<Tensor> {
    zip_same(name, g, saved.clone(), gate, move |g: S, v: S| S::narrow(f(g.widen(), v.widen())))
}

/// `f(grad, saved)` in the dtype of `g`: f32 and f64 as themselves, a half
/// float through f32 in the same pass ([`half_grad_with`]).
macro_rules! grad_pass {
    ($name:expr, $g:expr, $saved:expr, $gate:expr, $T:ident => $f:expr) => {
        match $g.dtype() {
            DType::BF16 => {
                type $T = f32;
                half_grad_with::<half::bf16>($name, $g, $saved, $gate, $f)
            }
            DType::F16 => {
                type $T = f32;
                half_grad_with::<half::f16>($name, $g, $saved, $gate, $f)
            }
            dtype => with_float!($name, dtype, $T => zip_same($name, $g, $saved.clone(), $gate, $f)),
        }
    };
}

/// One-input backward from a fused (grad, saved) kernel.
fn grad_with<T: FloatElement>(name: &'static str, g: Tensor, saved: &Tensor, f: impl Fn(T, T) -> T + Sync) -> Result<Tensor> {
    zip_same(name, g, saved.clone(), PAR_CHEAP, f)
}

impl Var {
    pub fn float_unary(&self, op: FloatUnary) -> Result<Var> {
        let y = self.value.float_unary(op)?;
        if self.node.is_none() {
            // Untracked: no backward, so neither input nor output is kept.
            return Ok(Var::constant(y));
        }
        // A half float's output is rounded: its gradient reads the exact
        // input instead, through f32 in one pass.
        let of_output = half_dtype(&self.value).is_none();
        Ok(record_lazy(
            y,
            &[self],
            move |v| v[0].float_unary(op),
            |out| {
                let v = match reads(op) {
                    Reads::Output if of_output => Some(out.saved()),
                    Reads::Nothing => None,
                    _ => Some(self.saved()),
                };
                FnBackward::new(op.name(), move |g, _| {
                    let gx = match &v {
                        Some(v) => {
                            let v = v.get()?;
                            grad_pass!(op.name(), g, &v, PAR_COSTLY, T => derivative::<T>(op, of_output).unwrap_or(|_, _| 0.0 as T))?
                        }
                        None => Tensor::zeros(g.shape(), g.dtype()),
                    };
                    Ok(vec![Some(gx)])
                })
            },
        ))
    }

    pub fn neg(&self) -> Result<Var> {
        let y = self.value.neg()?;
        Ok(record_lazy(y, &[self], |v| v[0].neg(), |_| FnBackward::new("neg", |g, _| Ok(vec![Some(g.neg()?)]))))
    }

    pub fn abs(&self) -> Result<Var> {
        let y = self.value.abs()?;
        Ok(record_lazy(y, &[self], |v| v[0].abs(), |_| {
            let x = self.saved();
            FnBackward::new("abs", move |g, _| {
                Ok(vec![Some(with_float!("abs", g.dtype(), T => grad_with("abs", g, &x.get()?, |g: T, x: T| {
                    if x > T::ZERO { g } else if x < T::ZERO { -g } else { T::ZERO }
                })?))])
            })
        }))
    }

    /// The sign has zero derivative everywhere it is defined.
    pub fn sign(&self) -> Result<Var> {
        let y = self.value.sign()?;
        Ok(record_lazy(y, &[self], |v| v[0].sign(), |_| FnBackward::new("sign", |g, _| Ok(vec![Some(Tensor::zeros(g.shape(), g.dtype()))]))))
    }

    pub fn powf_scalar(&self, e: f64) -> Result<Var> {
        let y = self.value.powf_scalar(e)?;
        Ok(record_lazy(y, &[self], move |v| v[0].powf_scalar(e), |_| {
            let x = self.saved();
            FnBackward::new("powf_scalar", move |g, _| {
                let x = x.get()?;
                Ok(vec![Some(with_float!("powf_scalar", g.dtype(), T => {
                    let (et, em1) = (T::from_f64(e), T::from_f64(e - 1.0));
                    grad_with("powf_scalar", g, &x, move |g: T, x: T| g * et * num_traits::Float::powf(x, em1))?
                }))])
            })
        }))
    }

    pub fn powi_scalar(&self, e: i64) -> Result<Var> {
        let y = self.value.powi_scalar(e)?;
        Ok(record_lazy(y, &[self], move |v| v[0].powi_scalar(e), |_| {
            let x = self.saved();
            FnBackward::new("powi_scalar", move |g, _| {
                let x = x.get()?;
                Ok(vec![Some(with_float!("powi_scalar", g.dtype(), T => {
                    let (et, em1) = (T::from_f64(e as f64), (e - 1).clamp(i32::MIN as i64, i32::MAX as i64) as i32);
                    grad_with("powi_scalar", g, &x, move |g: T, x: T| g * et * x.powi(em1))?
                }))])
            })
        }))
    }

    /// Gradient passes where the input was inside the bounds.
    pub fn clamp(&self, min: Scalar, max: Scalar) -> Result<Var> {
        let y = self.value.clamp(min, max)?;
        self.clamp_backward(y, Some(min), Some(max))
    }

    pub fn clamp_min(&self, min: Scalar) -> Result<Var> {
        let y = self.value.clamp_min(min)?;
        self.clamp_backward(y, Some(min), None)
    }

    pub fn clamp_max(&self, max: Scalar) -> Result<Var> {
        let y = self.value.clamp_max(max)?;
        self.clamp_backward(y, None, Some(max))
    }

    fn clamp_backward(&self, y: Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Var> {
        let forward = move |v: &[Tensor]| match (min, max) {
            (Some(lo), Some(hi)) => v[0].clamp(lo, hi),
            (Some(lo), None) => v[0].clamp_min(lo),
            (None, Some(hi)) => v[0].clamp_max(hi),
            (None, None) => Ok(v[0].clone()),
        };
        Ok(record_lazy(y, &[self], forward, |_| {
            let x = self.saved();
            FnBackward::new("clamp", move |g, _| {
                let x = x.get()?;
                Ok(vec![Some(with_float!("clamp", g.dtype(), T => {
                    let lo = min.map(T::from_scalar).unwrap_or(T::MIN_VALUE);
                    let hi = max.map(T::from_scalar).unwrap_or(T::MAX_VALUE);
                    grad_with("clamp", g, &x, move |g: T, x: T| if x >= lo && x <= hi { g } else { T::ZERO })?
                }))])
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_std() {
        let x = Tensor::from_vec(vec![0.0f32, 1.0, -2.0], &[3]).unwrap();
        let y = x.float_unary(FloatUnary::Exp).unwrap().to_vec::<f32>();
        assert_eq!(y, vec![1.0, 1.0f32.exp(), (-2.0f32).exp()]);
    }

    #[test]
    fn exp_on_int_is_a_kind_error() {
        let x = Tensor::from_vec(vec![1i64], &[1]).unwrap();
        let e = x.float_unary(FloatUnary::Exp).unwrap_err().to_string();
        assert_eq!(e, "exp: expected a Float tensor, found Int");
    }

    #[test]
    fn round_is_half_to_even() {
        let x = Tensor::from_vec(vec![0.5f64, 1.5, 2.5, -0.5, -1.5, 2.4], &[6]).unwrap();
        assert_eq!(x.float_unary(FloatUnary::Round).unwrap().to_vec::<f64>(), vec![0.0, 2.0, 2.0, -0.0, -2.0, 2.0]);
    }

    #[test]
    fn owned_input_is_reused() {
        let x = Tensor::from_vec(vec![1.0f32; 8], &[8]).unwrap();
        let before = x.buffer::<f32>().as_ptr();
        let y = x.float_unary_owned(FloatUnary::Sqrt).unwrap();
        assert_eq!(y.buffer::<f32>().as_ptr(), before);
    }

    #[test]
    fn shared_input_is_not_touched() {
        let x = Tensor::from_vec(vec![4.0f32; 4], &[4]).unwrap();
        let y = x.float_unary(FloatUnary::Sqrt).unwrap();
        assert_eq!(x.to_vec::<f32>(), vec![4.0; 4]);
        assert_eq!(y.to_vec::<f32>(), vec![2.0; 4]);
    }
}

#[cfg(test)]
#[path = "unary_half_tests.rs"]
mod half_tests;
