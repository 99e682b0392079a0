//! Tensor methods of Burn 0.20 that compose engine ops: `cross`,
//! `max_dims`/`min_dims`/`max_abs_dims`.

use ferrum_core::ops::reduce_dims::Extreme;
use pyo3::prelude::*;

use super::shape::int_list;
use super::{Dim, PyTensor};

#[pymethods]
impl PyTensor {
    /// The cross product with `other` along `dim` (size 3 in both).
    fn cross(&self, py: Python<'_>, other: PyRef<'_, PyTensor>, dim: Dim) -> PyResult<PyTensor> {
        self.dop2(py, "cross", &other, |a, b| a.cross(b, dim))
    }

    /// The maximum over `dims`, each kept with size 1.
    fn max_dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = int_list(py, "max_dims", "dims", dims)?;
        self.dop(py, |v| v.extreme_dims(&d, Extreme::Max))
    }

    /// The minimum over `dims`, each kept with size 1.
    fn min_dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = int_list(py, "min_dims", "dims", dims)?;
        self.dop(py, |v| v.extreme_dims(&d, Extreme::Min))
    }

    /// The largest absolute value over `dims`, each kept with size 1.
    fn max_abs_dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = int_list(py, "max_abs_dims", "dims", dims)?;
        self.dop(py, |v| v.extreme_dims(&d, Extreme::MaxAbs))
    }
}
