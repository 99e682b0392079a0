//! Arithmetic, math, comparisons and logic: named Burn methods and the
//! Python operators (number slots) that call them.

use ferrum_core::ops::binary::BinaryOp;
use ferrum_core::ops::bitwise::BitwiseOp;
use ferrum_core::ops::compare::CompareOp;
use ferrum_core::ops::unary::FloatUnary;
use ferrum_core::autodiff::Var;
use ferrum_core::{Kind, Tensor};
use pyo3::prelude::*;

use super::{scalar_for, Dim, PyTensor};
use crate::error::{engine, kind_error};

impl PyTensor {
    /// `self op other` where other is a tensor or a number; `reflected`
    /// puts the number on the left (`2 - x`).
    fn binary_any(&self, py: Python<'_>, op: BinaryOp, other: &Bound<'_, PyAny>, reflected: bool) -> PyResult<PyTensor> {
        if let Ok(o) = other.cast::<PyTensor>() {
            let o = o.get();
            return if reflected {
                o.dop2(py, op.name(), self, |b, a| a.binary(op, b))
            } else {
                self.dop2(py, op.name(), o, |a, b| a.binary(op, b))
            };
        }
        let s = scalar_for(py, op.name(), other, self.t.dtype())?;
        if reflected {
            self.dop(py, |v| Var::scalar_binary(s, op, v))
        } else {
            self.dop(py, |v| v.binary_scalar(op, s))
        }
    }

    fn binary_tensor(&self, py: Python<'_>, op: BinaryOp, other: &PyTensor) -> PyResult<PyTensor> {
        self.dop2(py, op.name(), other, |a, b| a.binary(op, b))
    }

    fn binary_scalar(&self, py: Python<'_>, op: BinaryOp, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = scalar_for(py, op.name(), value, self.t.dtype())?;
        self.dop(py, |v| v.binary_scalar(op, s))
    }

    fn unary(&self, py: Python<'_>, op: FloatUnary) -> PyResult<PyTensor> {
        self.dop(py, |v| v.float_unary(op))
    }

    fn compare_any(&self, py: Python<'_>, op: CompareOp, other: &PyTensor) -> PyResult<PyTensor> {
        self.op2(py, op.name(), other, |a, b| a.compare(op, b))
    }

    fn compare_elem(&self, py: Python<'_>, op: CompareOp, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = scalar_for(py, op.name(), value, self.t.dtype())?;
        self.op(py, "compare_scalar", |t| t.compare_scalar(op, s))
    }

    fn bitwise_any(&self, py: Python<'_>, op: BitwiseOp, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        if let Ok(o) = other.cast::<PyTensor>() {
            return self.op2(py, op.name(), o.get(), |a, b| a.bitwise(op, b));
        }
        let v: i64 = other.extract().map_err(|_| kind_error(py, format!("{}: expected an Int tensor or an int", op.name())))?;
        self.op(py, "bitwise_scalar", |t| t.bitwise_scalar(op, v))
    }
}

/// Named binary methods: `name(other: Tensor)` and `name_scalar(value)`.
macro_rules! binary_methods {
    ($($name:ident, $scalar:ident => $op:expr;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $name(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
                    self.binary_tensor(py, $op, &other)
                }
                fn $scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    self.binary_scalar(py, $op, value)
                }
            )*
        }
    };
}

binary_methods! {
    add, add_scalar => BinaryOp::Add;
    sub, sub_scalar => BinaryOp::Sub;
    mul, mul_scalar => BinaryOp::Mul;
    div, div_scalar => BinaryOp::Div;
    remainder, remainder_scalar => BinaryOp::Remainder;
    atan2, atan2_scalar => BinaryOp::Atan2;
    fmod, fmod_scalar => BinaryOp::Fmod;
}

/// Float-only element-wise functions.
macro_rules! unary_methods {
    ($($name:ident => $op:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $name(&self, py: Python<'_>) -> PyResult<PyTensor> {
                    self.unary(py, FloatUnary::$op)
                }
            )*
        }
    };
}

unary_methods! {
    exp => Exp; log => Log; log1p => Log1p; erf => Erf; recip => Recip; square => Square;
    sqrt => Sqrt; sin => Sin; cos => Cos; tan => Tan; sinh => Sinh; cosh => Cosh; tanh => Tanh;
    asin => Asin; asinh => Asinh; acos => Acos; acosh => Acosh; atan => Atan; atanh => Atanh;
    round => Round; floor => Floor; ceil => Ceil; trunc => Trunc; sigmoid => Sigmoid;
}

/// Comparisons: `name(other)` and `name_elem(value)`.
macro_rules! compare_methods {
    ($($name:ident, $elem:ident => $op:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $name(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
                    self.compare_any(py, CompareOp::$op, &other)
                }
                fn $elem(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    self.compare_elem(py, CompareOp::$op, value)
                }
            )*
        }
    };
}

compare_methods! {
    equal, equal_elem => Equal;
    not_equal, not_equal_elem => NotEqual;
    greater, greater_elem => Greater;
    greater_equal, greater_equal_elem => GreaterEqual;
    lower, lower_elem => Lower;
    lower_equal, lower_equal_elem => LowerEqual;
}

#[pymethods]
impl PyTensor {
    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Add, other, false)
    }
    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Add, other, true)
    }
    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Sub, other, false)
    }
    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Sub, other, true)
    }
    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Mul, other, false)
    }
    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Mul, other, true)
    }
    fn __truediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Div, other, false)
    }
    fn __rtruediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Div, other, true)
    }
    fn __mod__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Remainder, other, false)
    }
    fn __rmod__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Remainder, other, true)
    }
    fn __pow__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, modulo: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(kind_error(py, "pow: a modulo argument is not supported"));
        }
        if self.t.kind() == Kind::Int {
            if let Ok(e) = other.extract::<i64>() {
                return self.dop(py, |v| v.powi_scalar(e));
            }
        }
        self.binary_any(py, BinaryOp::Powf, other, false)
    }
    fn __rpow__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, _modulo: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
        self.binary_any(py, BinaryOp::Powf, other, true)
    }
    fn __matmul__(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.matmul(py, other)
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.dop(py, |v| v.neg())
    }
    fn __pos__(&self, py: Python<'_>) -> PyTensor {
        self.wrap_var(py, self.to_var())
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.dop(py, |v| v.abs())
    }
    fn __invert__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        match self.t.kind() {
            Kind::Bool => self.op(py, "bool_not", |t| t.bool_not()),
            _ => self.op(py, "bitwise_not", |t| t.bitwise_not()),
        }
    }
    fn __and__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.logic_or_bits(py, other, |a, b| a.bool_and(b), BitwiseOp::And)
    }
    fn __or__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.logic_or_bits(py, other, |a, b| a.bool_or(b), BitwiseOp::Or)
    }
    fn __xor__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.logic_or_bits(py, other, |a, b| a.bool_xor(b), BitwiseOp::Xor)
    }
    fn __lshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::LeftShift, other)
    }
    fn __rshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::RightShift, other)
    }

    fn neg(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.dop(py, |v| v.neg())
    }
    fn abs(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.dop(py, |v| v.abs())
    }
    fn sign(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.dop(py, |v| v.sign())
    }

    /// `self ^ exponent` for a float exponent.
    fn powf_scalar(&self, py: Python<'_>, exponent: f64) -> PyResult<PyTensor> {
        self.dop(py, |v| v.powf_scalar(exponent))
    }

    /// `self ^ other` with Int exponents (element-wise).
    fn powi(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        other.expect_kind(py, "powi", Kind::Int)?;
        if self.t.kind() == Kind::Int {
            // Int ^ Int stays Int: f64 holds every exactly representable result.
            let o = &other.t;
            let e = engine(py, false, || o.cast(ferrum_core::DType::F64))?;
            return self.op2(py, "powi", &other, |t, _| t.cast(ferrum_core::DType::F64)?.binary(BinaryOp::Powf, &e)?.cast(ferrum_core::DType::I64));
        }
        let (o, dt) = (&other.t, self.t.dtype());
        let e = Var::constant(engine(py, false, || o.cast(dt))?);
        self.same_backend(py, "powi", &other)?;
        self.dop(py, |v| v.binary(BinaryOp::Powf, &e))
    }

    /// `self ^ other` element-wise for Float tensors.
    fn powf(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.binary_tensor(py, BinaryOp::Powf, &other)
    }

    /// `self ^ exponent` for an integer exponent.
    fn powi_scalar(&self, py: Python<'_>, exponent: i64) -> PyResult<PyTensor> {
        self.dop(py, |v| v.powi_scalar(exponent))
    }

    fn clamp(&self, py: Python<'_>, min: &Bound<'_, PyAny>, max: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let (lo, hi) = (scalar_for(py, "clamp", min, self.t.dtype())?, scalar_for(py, "clamp", max, self.t.dtype())?);
        self.dop(py, |v| v.clamp(lo, hi))
    }
    fn clamp_min(&self, py: Python<'_>, min: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let lo = scalar_for(py, "clamp_min", min, self.t.dtype())?;
        self.dop(py, |v| v.clamp_min(lo))
    }
    fn clamp_max(&self, py: Python<'_>, max: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let hi = scalar_for(py, "clamp_max", max, self.t.dtype())?;
        self.dop(py, |v| v.clamp_max(hi))
    }

    fn max_pair(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.binary_tensor(py, BinaryOp::Max, &other)
    }
    fn min_pair(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.binary_tensor(py, BinaryOp::Min, &other)
    }

    /// Matrix product over the last two dims, batched with broadcasting.
    fn matmul(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.dop2(py, "matmul", &other, |a, b| a.matmul(b))
    }

    /// Cross product of 3-vectors along `dim` (Float tensors; the other dims broadcast).
    fn cross(&self, py: Python<'_>, other: PyRef<'_, PyTensor>, dim: Dim) -> PyResult<PyTensor> {
        self.dop2(py, "cross", &other, |a, b| a.cross(b, dim))
    }

    /// Dot product of two rank-1 tensors, as a one-element tensor.
    fn dot(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        if self.t.rank() != 1 || other.t.rank() != 1 {
            return Err(crate::error::shape_error(py, format!("dot: expected two rank-1 tensors, found shapes {:?} and {:?}", self.t.shape(), other.t.shape())));
        }
        self.matmul(py, other)
    }

    fn bool_not(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "bool_not", |t| t.bool_not())
    }
    fn bool_and(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.op2(py, "bool_and", &other, |a, b| a.bool_and(b))
    }
    fn bool_or(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.op2(py, "bool_or", &other, |a, b| a.bool_or(b))
    }
    fn bool_xor(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.op2(py, "bool_xor", &other, |a, b| a.bool_xor(b))
    }

    fn bitwise_and(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::And, other)
    }
    fn bitwise_or(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::Or, other)
    }
    fn bitwise_xor(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::Xor, other)
    }
    fn bitwise_and_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::And, value)
    }
    fn bitwise_or_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::Or, value)
    }
    fn bitwise_xor_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::Xor, value)
    }
    fn bitwise_not(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "bitwise_not", |t| t.bitwise_not())
    }
    fn bitwise_left_shift(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::LeftShift, other)
    }
    fn bitwise_right_shift(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::RightShift, other)
    }
    fn bitwise_left_shift_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::LeftShift, value)
    }
    fn bitwise_right_shift_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::RightShift, value)
    }

    fn is_nan(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "is_nan", |t| t.is_nan())
    }
    fn is_inf(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "is_inf", |t| t.is_inf())
    }
    fn is_finite(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "is_finite", |t| t.is_finite())
    }
    /// One-element Bool tensor: True if any element is NaN.
    fn contains_nan(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "is_nan", |t| t.is_nan()?.any())
    }
    #[pyo3(signature = (other, rtol = 1e-5, atol = 1e-8))]
    fn is_close(&self, py: Python<'_>, other: PyRef<'_, PyTensor>, rtol: f64, atol: f64) -> PyResult<PyTensor> {
        self.op2(py, "is_close", &other, |a, b| a.is_close(b, rtol, atol))
    }
    /// True when every element is close (see `is_close`).
    #[pyo3(signature = (other, rtol = 1e-5, atol = 1e-8))]
    fn all_close(&self, py: Python<'_>, other: PyRef<'_, PyTensor>, rtol: f64, atol: f64) -> PyResult<bool> {
        self.same_backend(py, "all_close", &other)?;
        let o = &other.t;
        let r = self.run(py, |t| t.is_close(o, rtol, atol)?.all()?.into_scalar())?;
        Ok(r.to_bool())
    }
}

impl PyTensor {
    fn logic_or_bits(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        logic: impl Fn(&Tensor, &Tensor) -> ferrum_core::Result<Tensor> + Send + Sync,
        bits: BitwiseOp,
    ) -> PyResult<PyTensor> {
        if self.t.kind() == Kind::Bool {
            let o = other.cast::<PyTensor>().map_err(|_| kind_error(py, format!("{}: expected a Bool tensor", bits.name())))?;
            return self.op2(py, bits.name(), o.get(), logic);
        }
        self.bitwise_any(py, bits, other)
    }
}
