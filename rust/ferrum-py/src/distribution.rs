//! Burn's `Distribution` for `Tensor.random`.

use ferrum_core::Distribution;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::IntoPyResult;

/// Burn's `Distribution` for `Tensor.random`: `Distribution.Default` (uniform
/// on `[0, 1)`), `Uniform(low, high)`, `Normal(mean, std)` and
/// `Bernoulli(prob)`.
///
/// Example:
///     >>> NdArray.seed(1)
///     >>> Tensor.random((3,), Distribution.Uniform(2.0, 3.0), device).lower_elem(3.0).all().into_scalar()
///     True
#[pyclass(frozen, name = "Distribution", module = "ferrum")]
#[derive(Clone)]
pub struct PyDistribution(pub Distribution);

#[allow(non_snake_case)]
#[pymethods]
impl PyDistribution {
    /// Uniform on [0, 1).
    #[classattr]
    fn Default() -> Self {
        PyDistribution(Distribution::Default)
    }

    /// 1 with probability `prob`, else 0.
    #[staticmethod]
    fn Bernoulli(prob: f64) -> Self {
        PyDistribution(Distribution::Bernoulli(prob))
    }

    /// Uniform on [low, high).
    #[staticmethod]
    fn Uniform(low: f64, high: f64) -> Self {
        PyDistribution(Distribution::Uniform(low, high))
    }

    /// Normal with `mean` and standard deviation `std`.
    #[staticmethod]
    fn Normal(mean: f64, std: f64) -> Self {
        PyDistribution(Distribution::Normal(mean, std))
    }

    fn __repr__(&self) -> String {
        match self.0 {
            Distribution::Default => "Distribution.Default".into(),
            Distribution::Bernoulli(p) => format!("Distribution.Bernoulli({p})"),
            Distribution::Uniform(a, b) => format!("Distribution.Uniform({a}, {b})"),
            Distribution::Normal(m, s) => format!("Distribution.Normal({m}, {s})"),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.extract::<PyRef<'_, PyDistribution>>().map(|o| o.0 == self.0).unwrap_or(false)
    }
}

/// Reseed the engine's generator (what `B.seed(n)` calls).
#[pyfunction]
pub fn seed(seed: u64) {
    ferrum_core::random::seed(seed);
}

/// The engine generator's exact position (56 bytes), for `set_random_state`.
#[pyfunction]
pub fn random_state(py: Python<'_>) -> Bound<'_, PyBytes> {
    PyBytes::new(py, &ferrum_core::random::state())
}

/// Put the engine's generator back at a position `random_state()` returned.
#[pyfunction]
pub fn set_random_state(py: Python<'_>, state: &[u8]) -> PyResult<()> {
    ferrum_core::random::set_state(state).py(py)
}
