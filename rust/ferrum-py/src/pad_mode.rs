//! Burn's `PadMode` for `Tensor.pad`: a constant, a reflection or the edge.

use pyo3::prelude::*;

/// What fills the border: `Constant(value)`, `Reflect` or `Edge`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Constant(f64),
    Reflect,
    Edge,
}

/// Burn's `PadMode` for `Tensor.pad`: `PadMode.Constant(value)`,
/// `PadMode.Reflect` (mirror, the edge not repeated) and `PadMode.Edge`
/// (repeat the edge).
///
/// Example:
///     >>> Tensor.from_data([1, 2, 3], device).pad((2, 1), PadMode.Reflect).to_data().to_list()
///     [3, 2, 1, 2, 3, 2]
#[pyclass(frozen, name = "PadMode", module = "ferrum")]
#[derive(Clone)]
pub struct PyPadMode(pub Mode);

#[allow(non_snake_case)]
#[pymethods]
impl PyPadMode {
    /// Fill with `value`.
    #[staticmethod]
    fn Constant(value: f64) -> Self {
        PyPadMode(Mode::Constant(value))
    }

    /// Mirror the tensor at its edge, the edge itself not repeated: `c b [a b c] b a`.
    #[classattr]
    fn Reflect() -> Self {
        PyPadMode(Mode::Reflect)
    }

    /// Repeat the edge: `a a [a b c] c c`.
    #[classattr]
    fn Edge() -> Self {
        PyPadMode(Mode::Edge)
    }

    fn __repr__(&self) -> String {
        match self.0 {
            Mode::Constant(v) => format!("PadMode.Constant({v})"),
            Mode::Reflect => "PadMode.Reflect".into(),
            Mode::Edge => "PadMode.Edge".into(),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.extract::<PyRef<'_, PyPadMode>>().map(|o| o.0 == self.0).unwrap_or(false)
    }
}
