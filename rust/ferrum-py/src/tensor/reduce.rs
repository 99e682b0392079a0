//! Reductions, statistics, cumulative ops and sorting.

use ferrum_core::autodiff::Var;
use ferrum_core::Tensor;
use pyo3::prelude::*;

use super::shape::int_list;
use super::{Dim, PyTensor};

impl PyTensor {
    /// A differentiable op returning (values, Int indices).
    fn with_indices(
        &self,
        py: Python<'_>,
        f: impl Fn(&Var) -> ferrum_core::Result<(Var, Tensor)> + Send + Sync,
    ) -> PyResult<(PyTensor, PyTensor)> {
        self.dop_two(py, true, |x| f(x).map(|(v, i)| (v, Var::constant(i))))
    }

    /// A differentiable op returning two tensors.
    fn two(&self, py: Python<'_>, f: impl Fn(&Var) -> ferrum_core::Result<(Var, Var)> + Send + Sync) -> PyResult<(PyTensor, PyTensor)> {
        self.dop_two(py, false, f)
    }
}

/// Differentiable methods taking no argument, one dim, or a list of dims;
/// then methods with no gradient (indices and Bool results), one dim or none.
macro_rules! reduce_methods {
    (all: $($all:ident)*; dim: $($dim:ident)*; dims: $($dims:ident)*; plain_all: $($pall:ident)*; plain_dim: $($pdim:ident)*;) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $all(&self, py: Python<'_>) -> PyResult<PyTensor> {
                    self.dop(py, |v| v.$all())
                }
            )*
            $(
                fn $dim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
                    self.dop(py, |v| v.$dim(dim))
                }
            )*
            $(
                fn $dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    let d = int_list(py, stringify!($dims), "dims", dims)?;
                    self.dop(py, |v| v.$dims(&d))
                }
            )*
            $(
                fn $pall(&self, py: Python<'_>) -> PyResult<PyTensor> {
                    self.op(py, stringify!($pall), |t| t.$pall())
                }
            )*
            $(
                fn $pdim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
                    self.op(py, stringify!($pdim), |t| t.$pdim(dim))
                }
            )*
        }
    };
}

reduce_methods! {
    all: sum mean prod max min max_abs;
    dim: sum_dim mean_dim prod_dim max_dim min_dim max_abs_dim var var_bias cumsum cumprod cummin cummax;
    dims: sum_dims mean_dims prod_dims sum_dims_squeeze max_dims min_dims max_abs_dims;
    plain_all: any all;
    plain_dim: argmax argmin any_dim all_dim;
}

#[pymethods]
impl PyTensor {
    /// (values, indices) of the maxima along `dim`, which is kept.
    fn max_dim_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.with_indices(py, |v| v.max_dim_with_indices(dim))
    }

    fn min_dim_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.with_indices(py, |v| v.min_dim_with_indices(dim))
    }

    /// (unbiased variance, mean) along `dim`.
    fn var_mean(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.two(py, |v| v.var_mean(dim))
    }

    fn var_mean_bias(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.two(py, |v| v.var_mean_bias(dim))
    }

    /// Covariance between the entries along `dim`, divided by `n - correction_factor`.
    #[pyo3(signature = (dim, correction_factor = 1))]
    fn cov(&self, py: Python<'_>, dim: Dim, correction_factor: i64) -> PyResult<PyTensor> {
        let correction_factor = super::count(py, "cov", "correction_factor", correction_factor)?;
        self.dop(py, |v| v.cov(dim, correction_factor))
    }

    fn sort(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.sort(dim, false))
    }

    fn sort_descending(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.sort(dim, true))
    }

    fn sort_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.with_indices(py, |v| v.sort_with_indices(dim, false))
    }

    fn sort_descending_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.with_indices(py, |v| v.sort_with_indices(dim, true))
    }

    fn argsort(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, "argsort", |t| t.argsort(dim, false))
    }

    fn argsort_descending(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, "argsort", |t| t.argsort(dim, true))
    }

    /// The `k` largest values along `dim`, largest first.
    fn topk(&self, py: Python<'_>, k: i64, dim: Dim) -> PyResult<PyTensor> {
        let k = super::count(py, "topk", "k", k)?;
        self.dop(py, |v| v.topk(k, dim))
    }

    fn topk_with_indices(&self, py: Python<'_>, k: i64, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        let k = super::count(py, "topk_with_indices", "k", k)?;
        self.with_indices(py, |v| v.topk_with_indices(k, dim))
    }
}
