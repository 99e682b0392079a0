//! Arithmetic, math, comparisons and logic: named Burn methods and the
//! Python operators (number slots) that call them.

use ferrum_core::ops::binary::BinaryOp;
use ferrum_core::ops::bitwise::BitwiseOp;
use ferrum_core::ops::compare::CompareOp;
use ferrum_core::ops::unary::FloatUnary;
use ferrum_core::autodiff::Var;
use ferrum_core::plan::Attr;
use ferrum_core::{Kind, Tensor};
use pyo3::prelude::*;

use super::{scalar_for, Dim, PyTensor};
use crate::error::{engine, kind_error};
use crate::trace;

impl PyTensor {
    /// `self op other` where other is a tensor or a number; `reflected`
    /// puts the number on the left (`2 - x`).
    fn binary_any(&self, py: Python<'_>, op: BinaryOp, other: &Bound<'_, PyAny>, reflected: bool) -> PyResult<PyTensor> {
        if let Ok(o) = other.cast::<PyTensor>() {
            let o = o.get();
            return if reflected { o.binary_tensor(py, op, self) } else { self.binary_tensor(py, op, o) };
        }
        if !reflected {
            return self.binary_scalar(py, op, other);
        }
        let s = scalar_for(py, op.name(), other, self.t.dtype())?;
        let out = self.dop(py, |v| Var::scalar_binary(s, op, v))?;
        note_scalar(op, s, true, self, &out);
        Ok(out)
    }

    fn binary_tensor(&self, py: Python<'_>, op: BinaryOp, other: &PyTensor) -> PyResult<PyTensor> {
        // Without a graph node on either side no backward is recorded, so
        // skip wrapping both operands as autodiff values: for a tiny op that
        // wrapping is a measurable share of the call.
        let out = if self.node.is_none() && other.node.is_none() {
            self.op2(py, op.name(), other, |a, b| a.binary(op, b))?
        } else {
            self.dop2(py, op.name(), other, |a, b| a.binary(op, b))?
        };
        trace::note("t_binary", || vec![("op", Attr::Str(op.name().into()))], &[Some(self), Some(other)], &[&out]);
        Ok(out)
    }

    fn binary_scalar(&self, py: Python<'_>, op: BinaryOp, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = scalar_for(py, op.name(), value, self.t.dtype())?;
        let out = if self.node.is_none() { self.op(py, op.name(), |t| t.binary_scalar(op, s))? } else { self.dop(py, |v| v.binary_scalar(op, s))? };
        note_scalar(op, s, false, self, &out);
        Ok(out)
    }

    fn unary(&self, py: Python<'_>, op: FloatUnary) -> PyResult<PyTensor> {
        // Untracked: no backward to record, so no autodiff wrapping (as in
        // `binary_any`).
        let out = if self.node.is_none() { self.op(py, op.name(), |t| t.float_unary(op))? } else { self.dop(py, |v| v.float_unary(op))? };
        trace::note("t_float_unary", || vec![("op", Attr::Str(op.name().into()))], &[Some(self)], &[&out]);
        Ok(out)
    }

    fn compare_any(&self, py: Python<'_>, op: CompareOp, other: &PyTensor) -> PyResult<PyTensor> {
        let out = self.op2(py, op.name(), other, |a, b| a.compare(op, b))?;
        trace::note("t_compare", || vec![("op", Attr::Str(op.name().into()))], &[Some(self), Some(other)], &[&out]);
        Ok(out)
    }

    fn compare_elem(&self, py: Python<'_>, op: CompareOp, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = scalar_for(py, op.name(), value, self.t.dtype())?;
        let out = self.op(py, "compare_scalar", |t| t.compare_scalar(op, s))?;
        note_with_scalar("t_compare_scalar", op.name(), s, Vec::new(), self, &out);
        Ok(out)
    }

    /// `self op other` for Bool tensors (`op`: and, or, xor), recorded for a trace.
    fn logic(&self, py: Python<'_>, op: &'static str, other: &PyTensor, f: impl Fn(&Tensor, &Tensor) -> ferrum_core::Result<Tensor> + Send + Sync) -> PyResult<PyTensor> {
        let out = self.op2(py, &format!("bool_{op}"), other, f)?;
        trace::note("t_logical", || vec![("op", Attr::Str(op.into()))], &[Some(self), Some(other)], &[&out]);
        Ok(out)
    }

    fn not(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let out = self.op(py, "bool_not", |t| t.bool_not())?;
        trace::note("t_bool_not", Vec::new, &[Some(self)], &[&out]);
        Ok(out)
    }

    fn bitwise_any(&self, py: Python<'_>, op: BitwiseOp, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        if let Ok(o) = other.cast::<PyTensor>() {
            return self.op2(py, op.name(), o.get(), |a, b| a.bitwise(op, b));
        }
        let v: i64 = other.extract().map_err(|_| kind_error(py, format!("{}: expected an Int tensor or an int", op.name())))?;
        self.op(py, "bitwise_scalar", |t| t.bitwise_scalar(op, v))
    }
}

/// Named binary methods: `name(other: Tensor)` and `name_scalar(value)`,
/// each with its own doc comment written before its name.
macro_rules! binary_methods {
    ($($(#[$tm:meta])* $name:ident, $(#[$sm:meta])* $scalar:ident => $op:expr;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[$tm])*
                fn $name(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
                    self.binary_tensor(py, $op, &other)
                }
                $(#[$sm])*
                fn $scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    self.binary_scalar(py, $op, value)
                }
            )*
        }
    };
}

binary_methods! {
    /// Element-wise sum (`self + other`), broadcasting dims of size 1.
    ///
    /// Both tensors have the same rank and kind; each pair of dim sizes is
    /// equal or one of them is 1 (`[2, 3] + [1, 3] -> [2, 3]`), else a
    /// `ShapeError` naming both shapes.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
    ///     >>> a.add(Tensor.from_data([[10.0, 20.0]], device)).to_data().to_list()
    ///     [[11.0, 22.0], [13.0, 24.0]]
    add,
    /// Adds the number `value` to every element (`self + value`); same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1, 2], device).add_scalar(3).to_data().to_list()
    ///     [4, 5]
    add_scalar => BinaryOp::Add;
    /// Element-wise difference (`self - other`), broadcasting dims of size 1
    /// between tensors of the same rank (see `add`).
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([5.0, 7.0], device)
    ///     >>> a.sub(Tensor.from_data([1.0, 2.0], device)).to_data().to_list()
    ///     [4.0, 5.0]
    sub,
    /// Subtracts the number `value` from every element (`self - value`); same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([5.0, 7.0], device).sub_scalar(1.0).to_data().to_list()
    ///     [4.0, 6.0]
    sub_scalar => BinaryOp::Sub;
    /// Element-wise product (`self * other`), broadcasting dims of size 1
    /// between tensors of the same rank (see `add`).
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
    ///     >>> a.mul(Tensor.from_data([[2.0], [-1.0]], device)).to_data().to_list()
    ///     [[2.0, 4.0], [-3.0, -4.0]]
    mul,
    /// Multiplies every element by the number `value` (`self * value`); same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.5, -2.0], device).mul_scalar(2.0).to_data().to_list()
    ///     [3.0, -4.0]
    mul_scalar => BinaryOp::Mul;
    /// Element-wise quotient (`self / other`), broadcasting dims of size 1
    /// between tensors of the same rank (see `add`).
    ///
    /// Int tensors divide with truncation toward zero, as Rust does
    /// (`-7 / 2 == -3`); an Int division by zero is an `ArgumentError`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-7, 7], device).div(Tensor.from_data([2, 2], device)).to_data().to_list()
    ///     [-3, 3]
    div,
    /// Divides every element by the number `value` (`self / value`); same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([3.0, -1.0], device).div_scalar(2.0).to_data().to_list()
    ///     [1.5, -0.5]
    div_scalar => BinaryOp::Div;
    /// Element-wise remainder with the sign of the divisor, as Python's `%`
    /// (`-7 % 3 == 2`); broadcasting as `add`. `fmod` keeps the dividend's sign.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-7, 7], device).remainder(Tensor.from_data([3, 3], device)).to_data().to_list()
    ///     [2, 1]
    remainder,
    /// Remainder of every element divided by `value`, with the sign of `value` (Python's `%`).
    ///
    /// Example:
    ///     >>> Tensor.from_data([-7.0, 7.5], device).remainder_scalar(2.0).to_data().to_list()
    ///     [1.0, 1.5]
    remainder_scalar => BinaryOp::Remainder;
    /// Element-wise `atan2(self, other)`: the angle in radians of the point
    /// `(x=other, y=self)`, in `[-pi, pi]`; Float tensors, broadcasting as `add`.
    ///
    /// Example:
    ///     >>> y = Tensor.from_data([0.0, 1.0], device)
    ///     >>> y.atan2(Tensor.from_data([1.0, 0.0], device)).to_data().to_list()  # 0 and pi/2
    ///     [0.0, 1.57079...]
    atan2,
    /// `atan2(self, value)` for every element, with the number `value` as x.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, -1.0], device).atan2_scalar(0.0).to_data().to_list()  # 0 and -pi/2
    ///     [0.0, -1.57079...]
    atan2_scalar => BinaryOp::Atan2;
    /// Element-wise remainder with the sign of the dividend, as C's `fmod`
    /// (`fmod(-7, 3) == -1`); broadcasting as `add`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-7.0, 7.0], device).fmod(Tensor.from_data([3.0, 3.0], device)).to_data().to_list()
    ///     [-1.0, 1.0]
    fmod,
    /// `fmod(x, value)` of every element: the remainder with the dividend's sign.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-7.0, 7.5], device).fmod_scalar(2.0).to_data().to_list()
    ///     [-1.0, 1.5]
    fmod_scalar => BinaryOp::Fmod;
}

/// Float-only element-wise functions, each with its doc comment.
macro_rules! unary_methods {
    ($($(#[$m:meta])* $name:ident => $op:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[$m])*
                fn $name(&self, py: Python<'_>) -> PyResult<PyTensor> {
                    self.unary(py, FloatUnary::$op)
                }
            )*
        }
    };
}

unary_methods! {
    /// e raised to each element; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).exp().to_data().to_list()
    ///     [1.0, 2.71828...]
    exp => Exp;
    /// The natural logarithm of each element (NaN below 0, -inf at 0); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 4.0], device).log().to_data().to_list()
    ///     [0.0, 1.38629...]
    log => Log;
    /// `log(1 + x)` of each element, accurate for small x; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).log1p().to_data().to_list()
    ///     [0.0, 0.69314...]
    log1p => Log1p;
    /// The Gauss error function of each element, in `(-1, 1)`; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).erf().to_data().to_list()
    ///     [0.0, 0.84270...]
    erf => Erf;
    /// The reciprocal `1 / x` of each element; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([2.0, -0.5], device).recip().to_data().to_list()
    ///     [0.5, -2.0]
    recip => Recip;
    /// The square `x * x` of each element; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([3.0, -0.5], device).square().to_data().to_list()
    ///     [9.0, 0.25]
    square => Square;
    /// The square root of each element (NaN below 0); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([4.0, 2.25], device).sqrt().to_data().to_list()
    ///     [2.0, 1.5]
    sqrt => Sqrt;
    /// The sine of each element (radians); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.5707964], device).sin().to_data().to_list()
    ///     [0.0, 1.0]
    sin => Sin;
    /// The cosine of each element (radians); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 3.1415927], device).cos().to_data().to_list()
    ///     [1.0, -1.0]
    cos => Cos;
    /// The tangent of each element (radians); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 0.7853982], device).tan().to_data().to_list()
    ///     [0.0, 1.0]
    tan => Tan;
    /// The hyperbolic sine of each element; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).sinh().to_data().to_list()
    ///     [0.0, 1.17520...]
    sinh => Sinh;
    /// The hyperbolic cosine of each element; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).cosh().to_data().to_list()
    ///     [1.0, 1.54308...]
    cosh => Cosh;
    /// The hyperbolic tangent of each element, in `(-1, 1)`; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).tanh().to_data().to_list()
    ///     [0.0, 0.76159...]
    tanh => Tanh;
    /// The arcsine of each element, in `[-pi/2, pi/2]` (NaN outside `[-1, 1]`); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).asin().to_data().to_list()
    ///     [0.0, 1.57079...]
    asin => Asin;
    /// The inverse hyperbolic sine of each element; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).asinh().to_data().to_list()
    ///     [0.0, 0.88137...]
    asinh => Asinh;
    /// The arccosine of each element, in `[0, pi]` (NaN outside `[-1, 1]`); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 0.0], device).acos().to_data().to_list()
    ///     [0.0, 1.57079...]
    acos => Acos;
    /// The inverse hyperbolic cosine of each element (NaN below 1); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 2.0], device).acosh().to_data().to_list()
    ///     [0.0, 1.31695...]
    acosh => Acosh;
    /// The arctangent of each element, in `(-pi/2, pi/2)`; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 1.0], device).atan().to_data().to_list()
    ///     [0.0, 0.78539...]
    atan => Atan;
    /// The inverse hyperbolic tangent of each element (infinite at -1 and 1); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 0.5], device).atanh().to_data().to_list()
    ///     [0.0, 0.54930...]
    atanh => Atanh;
    /// Each element rounded to the nearest integer, halves to even (as NumPy and Burn); a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.5, 1.5, -2.5, 2.7], device).round().to_data().to_list()
    ///     [0.0, 2.0, -2.0, 3.0]
    round => Round;
    /// Each element rounded down; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.7, -1.2], device).floor().to_data().to_list()
    ///     [1.0, -2.0]
    floor => Floor;
    /// Each element rounded up; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.2, -1.7], device).ceil().to_data().to_list()
    ///     [2.0, -1.0]
    ceil => Ceil;
    /// Each element rounded toward zero; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.7, -1.7], device).trunc().to_data().to_list()
    ///     [1.0, -1.0]
    trunc => Trunc;
    /// The logistic function `1 / (1 + exp(-x))` of each element, in `(0, 1)`; a Float tensor of the same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0.0, 2.0], device).sigmoid().to_data().to_list()
    ///     [0.5, 0.88079...]
    sigmoid => Sigmoid;
}

/// Comparisons: `name(other)` and `name_elem(value)`, each with its doc comment.
macro_rules! compare_methods {
    ($($(#[$tm:meta])* $name:ident, $(#[$em:meta])* $elem:ident => $op:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[$tm])*
                fn $name(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
                    self.compare_any(py, CompareOp::$op, &other)
                }
                $(#[$em])*
                fn $elem(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    self.compare_elem(py, CompareOp::$op, value)
                }
            )*
        }
    };
}

compare_methods! {
    /// A Bool tensor, True where `self == other` element-wise.
    ///
    /// Both tensors have the same rank and kind; dims of size 1 broadcast
    /// (the result has the broadcast shape).
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0, 3.0], device)
    ///     >>> a.equal(Tensor.from_data([2.0, 2.0, 2.0], device)).to_data().to_list()
    ///     [False, True, False]
    equal,
    /// A Bool tensor of the same shape, True where the element `== value`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 2.0, 3.0], device).equal_elem(2.0).to_data().to_list()
    ///     [False, True, False]
    equal_elem => Equal;
    /// A Bool tensor, True where `self != other` element-wise.
    ///
    /// Both tensors have the same rank and kind; dims of size 1 broadcast
    /// (the result has the broadcast shape).
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0, 3.0], device)
    ///     >>> a.not_equal(Tensor.from_data([2.0, 2.0, 2.0], device)).to_data().to_list()
    ///     [True, False, True]
    not_equal,
    /// A Bool tensor of the same shape, True where the element `!= value`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 2.0, 3.0], device).not_equal_elem(2.0).to_data().to_list()
    ///     [True, False, True]
    not_equal_elem => NotEqual;
    /// A Bool tensor, True where `self > other` element-wise.
    ///
    /// Both tensors have the same rank and kind; dims of size 1 broadcast
    /// (the result has the broadcast shape).
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0, 3.0], device)
    ///     >>> a.greater(Tensor.from_data([2.0, 2.0, 2.0], device)).to_data().to_list()
    ///     [False, False, True]
    greater,
    /// A Bool tensor of the same shape, True where the element `> value`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 2.0, 3.0], device).greater_elem(2.0).to_data().to_list()
    ///     [False, False, True]
    greater_elem => Greater;
    /// A Bool tensor, True where `self >= other` element-wise.
    ///
    /// Both tensors have the same rank and kind; dims of size 1 broadcast
    /// (the result has the broadcast shape).
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0, 3.0], device)
    ///     >>> a.greater_equal(Tensor.from_data([2.0, 2.0, 2.0], device)).to_data().to_list()
    ///     [False, True, True]
    greater_equal,
    /// A Bool tensor of the same shape, True where the element `>= value`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 2.0, 3.0], device).greater_equal_elem(2.0).to_data().to_list()
    ///     [False, True, True]
    greater_equal_elem => GreaterEqual;
    /// A Bool tensor, True where `self < other` element-wise.
    ///
    /// Both tensors have the same rank and kind; dims of size 1 broadcast
    /// (the result has the broadcast shape).
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0, 3.0], device)
    ///     >>> a.lower(Tensor.from_data([2.0, 2.0, 2.0], device)).to_data().to_list()
    ///     [True, False, False]
    lower,
    /// A Bool tensor of the same shape, True where the element `< value`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 2.0, 3.0], device).lower_elem(2.0).to_data().to_list()
    ///     [True, False, False]
    lower_elem => Lower;
    /// A Bool tensor, True where `self <= other` element-wise.
    ///
    /// Both tensors have the same rank and kind; dims of size 1 broadcast
    /// (the result has the broadcast shape).
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0, 3.0], device)
    ///     >>> a.lower_equal(Tensor.from_data([2.0, 2.0, 2.0], device)).to_data().to_list()
    ///     [True, True, False]
    lower_equal,
    /// A Bool tensor of the same shape, True where the element `<= value`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, 2.0, 3.0], device).lower_equal_elem(2.0).to_data().to_list()
    ///     [True, True, False]
    lower_equal_elem => LowerEqual;
}

#[pymethods]
impl PyTensor {
    /// `==`, `!=`, `<`, `<=`, `>`, `>=` element-wise, as NumPy and PyTorch:
    /// a Bool tensor (Burn's `equal`, `greater`, ... and their `_elem`
    /// forms). Anything but a tensor or a number is NotImplemented, so
    /// `t == None` is False as in PyTorch.
    fn __richcmp__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, op: pyo3::basic::CompareOp) -> PyResult<Py<PyAny>> {
        use pyo3::basic::CompareOp as Cmp;
        let op = match op {
            Cmp::Eq => CompareOp::Equal,
            Cmp::Ne => CompareOp::NotEqual,
            Cmp::Lt => CompareOp::Lower,
            Cmp::Le => CompareOp::LowerEqual,
            Cmp::Gt => CompareOp::Greater,
            Cmp::Ge => CompareOp::GreaterEqual,
        };
        let out = if let Ok(o) = other.cast::<PyTensor>() {
            self.compare_any(py, op, o.get())?
        } else if super::to_scalar(other).is_some() {
            self.compare_elem(py, op, other)?
        } else {
            return Ok(py.NotImplemented());
        };
        Ok(out.into_pyobject(py)?.into_any().unbind())
    }

    /// By identity: `==` is element-wise, so a tensor hashes as `object` does
    /// (two equal-valued tensors are different dict keys, as in PyTorch).
    fn __hash__(slf: &Bound<'_, Self>) -> u64 {
        (slf.as_ptr() as usize >> 4) as u64
    }

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
        self.neg(py)
    }
    fn __pos__(&self, py: Python<'_>) -> PyTensor {
        let out = self.wrap_var(py, self.to_var());
        trace::alias(self, &out);
        out
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.dop(py, |v| v.abs())
    }
    fn __invert__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        match self.t.kind() {
            Kind::Bool => self.not(py),
            _ => self.op(py, "bitwise_not", |t| t.bitwise_not()),
        }
    }
    fn __and__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.logic_or_bits(py, other, "and", |a, b| a.bool_and(b), BitwiseOp::And)
    }
    fn __or__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.logic_or_bits(py, other, "or", |a, b| a.bool_or(b), BitwiseOp::Or)
    }
    fn __xor__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.logic_or_bits(py, other, "xor", |a, b| a.bool_xor(b), BitwiseOp::Xor)
    }
    fn __lshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::LeftShift, other)
    }
    fn __rshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::RightShift, other)
    }

    /// The negation `-x` of each element; same shape and kind.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, -2.0], device).neg().to_data().to_list()
    ///     [-1.0, 2.0]
    fn neg(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let out = self.dop(py, |v| v.neg())?;
        trace::note("t_neg", Vec::new, &[Some(self)], &[&out]);
        Ok(out)
    }
    /// The absolute value of each element; same shape and kind.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-3, 2], device).abs().to_data().to_list()
    ///     [3, 2]
    fn abs(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.dop(py, |v| v.abs())
    }
    /// The sign of each element: -1, 0 or 1, in the tensor's kind; same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-2.5, 0.0, 4.0], device).sign().to_data().to_list()
    ///     [-1.0, 0.0, 1.0]
    fn sign(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.dop(py, |v| v.sign())
    }

    /// Each element raised to the float power `exponent`; same shape.
    ///
    /// Differentiable in the base. A negative base with a fractional exponent
    /// gives NaN, as in IEEE arithmetic.
    ///
    /// Example:
    ///     >>> Tensor.from_data([4.0, 9.0], device).powf_scalar(0.5).to_data().to_list()
    ///     [2.0, 3.0]
    fn powf_scalar(&self, py: Python<'_>, exponent: f64) -> PyResult<PyTensor> {
        self.dop(py, |v| v.powf_scalar(exponent))
    }

    /// Each element raised to the matching element of the Int tensor `other`.
    ///
    /// `other` has the same rank (dims of size 1 broadcast). An Int base stays
    /// Int; a Float base gives Float.
    ///
    /// Example:
    ///     >>> base = Tensor.from_data([2, 3], device)
    ///     >>> base.powi(Tensor.from_data([3, 2], device)).to_data().to_list()
    ///     [8, 9]
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

    /// Each element raised to the matching element of the Float tensor `other`.
    ///
    /// Both tensors have the same rank; dims of size 1 broadcast. Differentiable
    /// in both.
    ///
    /// Example:
    ///     >>> base = Tensor.from_data([2.0, 9.0], device)
    ///     >>> base.powf(Tensor.from_data([3.0, 0.5], device)).to_data().to_list()
    ///     [8.0, 3.0]
    fn powf(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.binary_tensor(py, BinaryOp::Powf, &other)
    }

    /// Each element raised to the integer power `exponent`; same shape and kind.
    ///
    /// Example:
    ///     >>> Tensor.from_data([2, -3], device).powi_scalar(2).to_data().to_list()
    ///     [4, 9]
    fn powi_scalar(&self, py: Python<'_>, exponent: i64) -> PyResult<PyTensor> {
        self.dop(py, |v| v.powi_scalar(exponent))
    }

    /// Each element limited to `[min, max]`; same shape and kind.
    ///
    /// The gradient flows only where the element was inside the range.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-2.0, 0.5, 3.0], device).clamp(0.0, 1.0).to_data().to_list()
    ///     [0.0, 0.5, 1.0]
    fn clamp(&self, py: Python<'_>, min: &Bound<'_, PyAny>, max: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let (lo, hi) = (scalar_for(py, "clamp", min, self.t.dtype())?, scalar_for(py, "clamp", max, self.t.dtype())?);
        self.dop(py, |v| v.clamp(lo, hi))
    }
    /// Each element raised to at least `min` (`max(x, min)`); same shape and kind.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-2, 5], device).clamp_min(0).to_data().to_list()
    ///     [0, 5]
    fn clamp_min(&self, py: Python<'_>, min: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let lo = scalar_for(py, "clamp_min", min, self.t.dtype())?;
        self.dop(py, |v| v.clamp_min(lo))
    }
    /// Each element lowered to at most `max` (`min(x, max)`); same shape and kind.
    ///
    /// Example:
    ///     >>> Tensor.from_data([-2, 5], device).clamp_max(1).to_data().to_list()
    ///     [-2, 1]
    fn clamp_max(&self, py: Python<'_>, max: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let hi = scalar_for(py, "clamp_max", max, self.t.dtype())?;
        self.dop(py, |v| v.clamp_max(hi))
    }

    /// The element-wise maximum of two tensors of the same rank and kind.
    ///
    /// Dims of size 1 broadcast. For a gradient, a tie goes to `self`.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 5.0], device)
    ///     >>> a.max_pair(Tensor.from_data([3.0, 2.0], device)).to_data().to_list()
    ///     [3.0, 5.0]
    fn max_pair(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.binary_tensor(py, BinaryOp::Max, &other)
    }
    /// The element-wise minimum of two tensors of the same rank and kind.
    ///
    /// Dims of size 1 broadcast. For a gradient, a tie goes to `self`.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 5.0], device)
    ///     >>> a.min_pair(Tensor.from_data([3.0, 2.0], device)).to_data().to_list()
    ///     [1.0, 2.0]
    fn min_pair(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.binary_tensor(py, BinaryOp::Min, &other)
    }

    /// The matrix product over the last two dims (`self @ other`).
    ///
    /// Shapes: `[..., n, k] @ [..., k, m] -> [..., n, m]`; both tensors have the
    /// same rank (at least 2) and the leading (batch) dims broadcast over size 1.
    /// A mismatch of `k` is a `ShapeError` naming both shapes. Float and Int
    /// tensors.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
    ///     >>> a.matmul(Tensor.from_data([[1.0], [1.0]], device)).to_data().to_list()
    ///     [[3.0], [7.0]]
    fn matmul(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        let out = self.dop2(py, "matmul", &other, |a, b| a.matmul(b))?;
        trace::note("t_matmul", Vec::new, &[Some(self), Some(&other)], &[&out]);
        Ok(out)
    }

    /// The cross product of 3-vectors along `dim` (Float tensors).
    ///
    /// Both tensors have the same rank, size 3 at `dim`, and their other dims
    /// broadcast over size 1; the result has the broadcast shape.
    ///
    /// Example:
    ///     >>> x = Tensor.from_data([[1.0, 0.0, 0.0]], device)
    ///     >>> x.cross(Tensor.from_data([[0.0, 1.0, 0.0]], device), 1).to_data().to_list()
    ///     [[0.0, 0.0, 1.0]]
    fn cross(&self, py: Python<'_>, other: PyRef<'_, PyTensor>, dim: Dim) -> PyResult<PyTensor> {
        self.dop2(py, "cross", &other, |a, b| a.cross(b, dim))
    }

    /// The dot product of two rank-1 tensors of the same length, as a one-element
    /// tensor of shape `[1]`.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0, 3.0], device)
    ///     >>> a.dot(Tensor.from_data([4.0, 5.0, 6.0], device)).to_data().to_list()
    ///     [32.0]
    fn dot(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        if self.t.rank() != 1 || other.t.rank() != 1 {
            return Err(crate::error::shape_error(py, format!("dot: expected two rank-1 tensors, found shapes {:?} and {:?}", self.t.shape(), other.t.shape())));
        }
        self.matmul(py, other)
    }

    /// Logical not of a Bool tensor (also `~t`); same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([True, False], device).bool_not().to_data().to_list()
    ///     [False, True]
    fn bool_not(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.not(py)
    }
    /// Element-wise logical and of two Bool tensors of the same rank (also `a & b`);
    /// dims of size 1 broadcast.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([True, True, False], device)
    ///     >>> a.bool_and(Tensor.from_data([True, False, False], device)).to_data().to_list()
    ///     [True, False, False]
    fn bool_and(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.logic(py, "and", &other, |a, b| a.bool_and(b))
    }
    /// Element-wise logical or of two Bool tensors of the same rank (also `a | b`);
    /// dims of size 1 broadcast.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([True, False, False], device)
    ///     >>> a.bool_or(Tensor.from_data([False, True, False], device)).to_data().to_list()
    ///     [True, True, False]
    fn bool_or(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.logic(py, "or", &other, |a, b| a.bool_or(b))
    }
    /// Element-wise exclusive or of two Bool tensors of the same rank (also `a ^ b`);
    /// dims of size 1 broadcast.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([True, True, False], device)
    ///     >>> a.bool_xor(Tensor.from_data([True, False, False], device)).to_data().to_list()
    ///     [False, True, False]
    fn bool_xor(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.logic(py, "xor", &other, |a, b| a.bool_xor(b))
    }

    /// Bitwise and of an Int tensor with an Int tensor of the same rank (dims of
    /// size 1 broadcast) or with an int.
    ///
    /// Example:
    ///     >>> Tensor.from_data([12, 10], device).bitwise_and(Tensor.from_data([10, 6], device)).to_data().to_list()
    ///     [8, 2]
    fn bitwise_and(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::And, other)
    }
    /// Bitwise or of an Int tensor with an Int tensor of the same rank (dims of
    /// size 1 broadcast) or with an int.
    ///
    /// Example:
    ///     >>> Tensor.from_data([12, 1], device).bitwise_or(Tensor.from_data([3, 2], device)).to_data().to_list()
    ///     [15, 3]
    fn bitwise_or(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::Or, other)
    }
    /// Bitwise exclusive or of an Int tensor with an Int tensor of the same rank
    /// (dims of size 1 broadcast) or with an int.
    ///
    /// Example:
    ///     >>> Tensor.from_data([12, 5], device).bitwise_xor(Tensor.from_data([10, 5], device)).to_data().to_list()
    ///     [6, 0]
    fn bitwise_xor(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::Xor, other)
    }
    /// Bitwise and of every element of an Int tensor with the int `value`; same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([12, 7], device).bitwise_and_scalar(6).to_data().to_list()
    ///     [4, 6]
    fn bitwise_and_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::And, value)
    }
    /// Bitwise or of every element of an Int tensor with the int `value`; same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([8, 1], device).bitwise_or_scalar(2).to_data().to_list()
    ///     [10, 3]
    fn bitwise_or_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::Or, value)
    }
    /// Bitwise exclusive or of every element of an Int tensor with the int `value`; same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([5, 6], device).bitwise_xor_scalar(3).to_data().to_list()
    ///     [6, 5]
    fn bitwise_xor_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::Xor, value)
    }
    /// Bitwise not of each element of an Int tensor (`~x == -x - 1`); same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0, 5], device).bitwise_not().to_data().to_list()
    ///     [-1, -6]
    fn bitwise_not(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "bitwise_not", |t| t.bitwise_not())
    }
    /// Each element of an Int tensor shifted left by the matching element of an
    /// Int tensor of the same rank (or by an int).
    ///
    /// Example:
    ///     >>> Tensor.from_data([1, 3], device).bitwise_left_shift(Tensor.from_data([3, 1], device)).to_data().to_list()
    ///     [8, 6]
    fn bitwise_left_shift(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::LeftShift, other)
    }
    /// Each element of an Int tensor shifted right (arithmetic shift) by the
    /// matching element of an Int tensor of the same rank (or by an int).
    ///
    /// Example:
    ///     >>> Tensor.from_data([16, -8], device).bitwise_right_shift(Tensor.from_data([2, 1], device)).to_data().to_list()
    ///     [4, -4]
    fn bitwise_right_shift(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::RightShift, other)
    }
    /// Every element of an Int tensor shifted left by the int `value`; same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1, 5], device).bitwise_left_shift_scalar(2).to_data().to_list()
    ///     [4, 20]
    fn bitwise_left_shift_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::LeftShift, value)
    }
    /// Every element of an Int tensor shifted right (arithmetic shift) by the int `value`; same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([16, 5], device).bitwise_right_shift_scalar(2).to_data().to_list()
    ///     [4, 1]
    fn bitwise_right_shift_scalar(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.bitwise_any(py, BitwiseOp::RightShift, value)
    }

    /// A Bool tensor of the same shape, True where the element is NaN.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, float("nan")], device).is_nan().to_data().to_list()
    ///     [False, True]
    fn is_nan(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "is_nan", |t| t.is_nan())
    }
    /// A Bool tensor of the same shape, True where the element is +inf or -inf.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, float("-inf")], device).is_inf().to_data().to_list()
    ///     [False, True]
    fn is_inf(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "is_inf", |t| t.is_inf())
    }
    /// A Bool tensor of the same shape, True where the element is neither NaN nor infinite.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, float("inf"), float("nan")], device).is_finite().to_data().to_list()
    ///     [True, False, False]
    fn is_finite(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "is_finite", |t| t.is_finite())
    }
    /// A one-element Bool tensor (shape `[1]`): True if any element is NaN.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.0, float("nan")], device).contains_nan().into_scalar()
    ///     True
    fn contains_nan(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "is_nan", |t| t.is_nan()?.any())
    }
    /// A Bool tensor, True where `|self - other| <= atol + rtol * |other|`.
    ///
    /// Both tensors have the same rank (dims of size 1 broadcast). NaNs are never
    /// close; infinities are close to the same infinity.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0], device)
    ///     >>> a.is_close(Tensor.from_data([1.0000001, 2.5], device)).to_data().to_list()
    ///     [True, False]
    #[pyo3(signature = (other, rtol = 1e-5, atol = 1e-8))]
    fn is_close(&self, py: Python<'_>, other: PyRef<'_, PyTensor>, rtol: f64, atol: f64) -> PyResult<PyTensor> {
        self.op2(py, "is_close", &other, |a, b| a.is_close(b, rtol, atol))
    }
    /// True when every element is close to its counterpart in `other` (see
    /// `is_close` for the tolerance); a Python bool.
    ///
    /// Example:
    ///     >>> a = Tensor.from_data([1.0, 2.0], device)
    ///     >>> a.all_close(a + 1e-7), a.all_close(a + 0.5)
    ///     (True, False)
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
        name: &'static str,
        logic: impl Fn(&Tensor, &Tensor) -> ferrum_core::Result<Tensor> + Send + Sync,
        bits: BitwiseOp,
    ) -> PyResult<PyTensor> {
        if self.t.kind() == Kind::Bool {
            let o = other.cast::<PyTensor>().map_err(|_| kind_error(py, format!("{}: expected a Bool tensor", bits.name())))?;
            return self.logic(py, name, o.get(), logic);
        }
        self.bitwise_any(py, bits, other)
    }
}

/// Record `x op s` (or `s op x` when `reflected`) for a trace.
fn note_scalar(op: BinaryOp, s: ferrum_core::Scalar, reflected: bool, x: &PyTensor, out: &PyTensor) {
    note_with_scalar("t_scalar", op.name(), s, vec![("reflected", Attr::Int(i64::from(reflected)))], x, out);
}

/// Records `instr` (op `op`, the scalar operand `s`, then `extra`) for a trace, or refuses the trace: no
/// plan instruction takes a Bool scalar.
fn note_with_scalar(instr: &str, op: &'static str, s: ferrum_core::Scalar, extra: Vec<(&'static str, Attr)>, x: &PyTensor, out: &PyTensor) {
    if !crate::trace_state::active() {
        return;
    }
    match trace::scalar_attrs(s) {
        Some(mut attrs) => {
            attrs.push(("op", Attr::Str(op.into())));
            attrs.extend(extra);
            trace::note(instr, || attrs, &[Some(x)], &[out]);
        }
        None => trace::refuse(op, "a Bool scalar operand has no plan instruction"),
    }
}

