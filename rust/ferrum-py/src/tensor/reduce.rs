//! Reductions, statistics, cumulative ops and sorting.

use ferrum_core::Tensor;
use pyo3::prelude::*;

use super::shape::int_list;
use super::{Dim, PyTensor};

impl PyTensor {
    fn pair(&self, py: Python<'_>, f: impl FnOnce(&Tensor) -> ferrum_core::Result<(Tensor, Tensor)> + Send) -> PyResult<(PyTensor, PyTensor)> {
        let (a, b) = self.run(py, f)?;
        Ok((self.wrap(py, a), self.wrap(py, b)))
    }
}

/// Methods taking no argument, one dim, or a list of dims.
macro_rules! reduce_methods {
    (all: $($all:ident)*; dim: $($dim:ident)*; dims: $($dims:ident)*;) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $all(&self, py: Python<'_>) -> PyResult<PyTensor> {
                    self.op(py, |t| t.$all())
                }
            )*
            $(
                fn $dim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
                    self.op(py, |t| t.$dim(dim))
                }
            )*
            $(
                fn $dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    let d = int_list(py, stringify!($dims), "dims", dims)?;
                    self.op(py, |t| t.$dims(&d))
                }
            )*
        }
    };
}

reduce_methods! {
    all: sum mean prod max min max_abs any all;
    dim: sum_dim mean_dim prod_dim max_dim min_dim max_abs_dim argmax argmin any_dim all_dim
         var var_bias cumsum cumprod cummin cummax;
    dims: sum_dims mean_dims prod_dims;
}

#[pymethods]
impl PyTensor {
    /// (values, indices) of the maxima along `dim`, which is kept.
    fn max_dim_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.pair(py, |t| t.max_dim_with_indices(dim))
    }

    fn min_dim_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.pair(py, |t| t.min_dim_with_indices(dim))
    }

    /// (unbiased variance, mean) along `dim`.
    fn var_mean(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.pair(py, |t| t.var_mean(dim))
    }

    fn var_mean_bias(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.pair(py, |t| t.var_mean_bias(dim))
    }

    /// Covariance between the entries along `dim`, divided by `n - correction_factor`.
    #[pyo3(signature = (dim, correction_factor = 1))]
    fn cov(&self, py: Python<'_>, dim: Dim, correction_factor: usize) -> PyResult<PyTensor> {
        self.op(py, |t| t.cov(dim, correction_factor))
    }

    fn sort(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, |t| t.sort(dim, false))
    }

    fn sort_descending(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, |t| t.sort(dim, true))
    }

    fn sort_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.pair(py, |t| t.sort_with_indices(dim, false))
    }

    fn sort_descending_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.pair(py, |t| t.sort_with_indices(dim, true))
    }

    fn argsort(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, |t| t.argsort(dim, false))
    }

    fn argsort_descending(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, |t| t.argsort(dim, true))
    }

    /// The `k` largest values along `dim`, largest first.
    fn topk(&self, py: Python<'_>, k: usize, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, |t| t.topk(k, dim))
    }

    fn topk_with_indices(&self, py: Python<'_>, k: usize, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.pair(py, |t| t.topk_with_indices(k, dim))
    }
}
