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
/// Each name carries its doc comment.
macro_rules! reduce_methods {
    (all: $($(#[$am:meta])* $all:ident)*; dim: $($(#[$dm:meta])* $dim:ident)*; dims: $($(#[$sm:meta])* $dims:ident)*;
     plain_all: $($(#[$pam:meta])* $pall:ident)*; plain_dim: $($(#[$pdm:meta])* $pdim:ident)*;) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[$am])*
                fn $all(&self, py: Python<'_>) -> PyResult<PyTensor> {
                    self.dop(py, |v| v.$all())
                }
            )*
            $(
                $(#[$dm])*
                fn $dim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
                    let out = self.dop(py, |v| v.$dim(dim))?;
                    crate::trace::note_named(stringify!($dim), Some(dim), self, &out);
                    Ok(out)
                }
            )*
            $(
                $(#[$sm])*
                fn $dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    let d = int_list(py, stringify!($dims), "dims", dims)?;
                    self.dop(py, |v| v.$dims(&d))
                }
            )*
            $(
                $(#[$pam])*
                fn $pall(&self, py: Python<'_>) -> PyResult<PyTensor> {
                    self.op(py, stringify!($pall), |t| t.$pall())
                }
            )*
            $(
                $(#[$pdm])*
                fn $pdim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
                    let out = self.op(py, stringify!($pdim), |t| t.$pdim(dim))?;
                    crate::trace::note_named(stringify!($pdim), Some(dim), self, &out);
                    Ok(out)
                }
            )*
        }
    };
}

reduce_methods! {
    all:
        /// The sum of all elements, as a one-element tensor of shape `[1]`
        /// (as Burn's); `into_scalar()` reads it as a number.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device).sum().to_data().to_list()
        ///     [10.0]
        sum
        /// The mean of all elements, as a one-element tensor of shape `[1]`.
        ///
        /// Example:
        ///     >>> Tensor.from_data([1.0, 2.0, 6.0], device).mean().into_scalar()
        ///     3.0
        mean
        /// The product of all elements, as a one-element tensor of shape `[1]`.
        ///
        /// Example:
        ///     >>> Tensor.from_data([2, 3, 4], device).prod().into_scalar()
        ///     24
        prod
        /// The largest element, as a one-element tensor of shape `[1]`.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 5.0], [3.0, 2.0]], device).max().to_data().to_list()
        ///     [5.0]
        max
        /// The smallest element, as a one-element tensor of shape `[1]`.
        ///
        /// Example:
        ///     >>> Tensor.from_data([4, -1, 3], device).min().into_scalar()
        ///     -1
        min
        /// The largest absolute value, as a one-element tensor of shape `[1]`.
        ///
        /// Example:
        ///     >>> Tensor.from_data([1.0, -7.0, 3.0], device).max_abs().into_scalar()
        ///     7.0
        max_abs;
    dim:
        /// The sums along `dim`, which is kept with size 1 (`[2, 3]` over dim 1
        /// gives `[2, 1]`). A negative `dim` counts from the end.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device).sum_dim(1).to_data().to_list()
        ///     [[3.0], [7.0]]
        sum_dim
        /// The means along `dim`, which is kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device).mean_dim(0).to_data().to_list()
        ///     [[2.0, 3.0]]
        mean_dim
        /// The products along `dim`, which is kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1, 2], [3, 4]], device).prod_dim(1).to_data().to_list()
        ///     [[2], [12]]
        prod_dim
        /// The maxima along `dim`, which is kept with size 1; `argmax` gives
        /// their indices.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 5.0], [3.0, 2.0]], device).max_dim(1).to_data().to_list()
        ///     [[5.0], [3.0]]
        max_dim
        /// The minima along `dim`, which is kept with size 1; `argmin` gives
        /// their indices.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 5.0], [3.0, 2.0]], device).min_dim(0).to_data().to_list()
        ///     [[1.0, 2.0]]
        min_dim
        /// The largest absolute values along `dim`, which is kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, -5.0], [3.0, 2.0]], device).max_abs_dim(1).to_data().to_list()
        ///     [[5.0], [3.0]]
        max_abs_dim
        /// The unbiased variance (divided by `n - 1`) along `dim`, which is kept
        /// with size 1. Float tensors.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 2.0, 3.0]], device).var(1).to_data().to_list()
        ///     [[1.0]]
        var
        /// The biased variance (divided by `n`) along `dim`, which is kept with
        /// size 1. Float tensors.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 3.0]], device).var_bias(1).to_data().to_list()
        ///     [[1.0]]
        var_bias
        /// The running sums along `dim`; same shape.
        ///
        /// Example:
        ///     >>> Tensor.from_data([1, 2, 3], device).cumsum(0).to_data().to_list()
        ///     [1, 3, 6]
        cumsum
        /// The running products along `dim`; same shape.
        ///
        /// Example:
        ///     >>> Tensor.from_data([1.0, 2.0, 3.0], device).cumprod(0).to_data().to_list()
        ///     [1.0, 2.0, 6.0]
        cumprod
        /// The running minima along `dim`; same shape.
        ///
        /// Example:
        ///     >>> Tensor.from_data([3, 1, 2], device).cummin(0).to_data().to_list()
        ///     [3, 1, 1]
        cummin
        /// The running maxima along `dim`; same shape.
        ///
        /// Example:
        ///     >>> Tensor.from_data([1, 3, 2], device).cummax(0).to_data().to_list()
        ///     [1, 3, 3]
        cummax;
    dims:
        /// The sums over every dim of `dims` (a list), each kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.ones((2, 3, 4), device).sum_dims([0, 2]).dims()
        ///     (1, 3, 1)
        sum_dims
        /// The means over every dim of `dims` (a list), each kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 2.0], [3.0, 6.0]], device).mean_dims([0, 1]).to_data().to_list()
        ///     [[3.0]]
        mean_dims
        /// The products over every dim of `dims` (a list), each kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1, 2], [3, 4]], device).prod_dims([0, 1]).to_data().to_list()
        ///     [[24]]
        prod_dims
        /// The sums over every dim of `dims` (a list), with those dims removed:
        /// the rank drops by `len(dims)`.
        ///
        /// Example:
        ///     >>> Tensor.ones((2, 3, 4), device).sum_dims_squeeze([0, 2]).to_data().to_list()
        ///     [8.0, 8.0, 8.0]
        sum_dims_squeeze
        /// The maxima over every dim of `dims` (a list), each kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1, 7], [3, 2]], device).max_dims([0, 1]).to_data().to_list()
        ///     [[7]]
        max_dims
        /// The minima over every dim of `dims` (a list), each kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1, 7], [3, 2]], device).min_dims([1]).to_data().to_list()
        ///     [[1], [2]]
        min_dims
        /// The largest absolute values over every dim of `dims`, each kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1, -7], [3, 2]], device).max_abs_dims([0, 1]).to_data().to_list()
        ///     [[7]]
        max_abs_dims;
    plain_all:
        /// A one-element Bool tensor of shape `[1]`: True if any element is
        /// non-zero (or True).
        ///
        /// Example:
        ///     >>> Tensor.from_data([0, 0, 3], device).any().into_scalar()
        ///     True
        any
        /// A one-element Bool tensor of shape `[1]`: True if every element is
        /// non-zero (or True).
        ///
        /// Example:
        ///     >>> Tensor.from_data([True, False], device).all().into_scalar()
        ///     False
        all;
    plain_dim:
        /// The Int indices of the maxima along `dim`, which is kept with size 1
        /// (`[2, 3]` over dim 1 gives `[2, 1]`); the first index on a tie.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]], device).argmax(1).to_data().to_list()
        ///     [[1], [0]]
        argmax
        /// The Int indices of the minima along `dim`, which is kept with size 1;
        /// the first index on a tie.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1.0, 5.0], [3.0, 0.0]], device).argmin(0).to_data().to_list()
        ///     [[0, 1]]
        argmin
        /// A Bool tensor, True where any element along `dim` is non-zero; `dim`
        /// is kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[0, 1], [0, 0]], device).any_dim(1).to_data().to_list()
        ///     [[True], [False]]
        any_dim
        /// A Bool tensor, True where every element along `dim` is non-zero;
        /// `dim` is kept with size 1.
        ///
        /// Example:
        ///     >>> Tensor.from_data([[1, 1], [0, 1]], device).all_dim(1).to_data().to_list()
        ///     [[True], [False]]
        all_dim;
}

#[pymethods]
impl PyTensor {
    /// The maxima along `dim` and their Int indices, as a pair of tensors in
    /// which `dim` is kept with size 1; the first index on a tie.
    ///
    /// Example:
    ///     >>> values, indices = Tensor.from_data([[1.0, 5.0], [3.0, 2.0]], device).max_dim_with_indices(1)
    ///     >>> values.to_data().to_list(), indices.to_data().to_list()
    ///     ([[5.0], [3.0]], [[1], [0]])
    fn max_dim_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.with_indices(py, |v| v.max_dim_with_indices(dim))
    }

    /// The minima along `dim` and their Int indices, as a pair of tensors in
    /// which `dim` is kept with size 1; the first index on a tie.
    ///
    /// Example:
    ///     >>> values, indices = Tensor.from_data([[1.0, 5.0], [3.0, 2.0]], device).min_dim_with_indices(1)
    ///     >>> values.to_data().to_list(), indices.to_data().to_list()
    ///     ([[1.0], [2.0]], [[0], [1]])
    fn min_dim_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.with_indices(py, |v| v.min_dim_with_indices(dim))
    }

    /// The unbiased variance (divided by `n - 1`) and the mean along `dim`, as a
    /// pair, `dim` kept with size 1 in both. Float tensors.
    ///
    /// Example:
    ///     >>> var, mean = Tensor.from_data([[1.0, 2.0, 3.0]], device).var_mean(1)
    ///     >>> var.to_data().to_list(), mean.to_data().to_list()
    ///     ([[1.0]], [[2.0]])
    fn var_mean(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.two(py, |v| v.var_mean(dim))
    }

    /// The biased variance (divided by `n`) and the mean along `dim`, as a pair,
    /// `dim` kept with size 1 in both. Float tensors.
    ///
    /// Example:
    ///     >>> var, mean = Tensor.from_data([[1.0, 3.0]], device).var_mean_bias(1)
    ///     >>> var.to_data().to_list(), mean.to_data().to_list()
    ///     ([[1.0]], [[2.0]])
    fn var_mean_bias(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        let (var, mean) = self.two(py, |v| v.var_mean_bias(dim))?;
        crate::trace::note("t_var_mean", || vec![("dim", ferrum_core::plan::Attr::Int(dim as i64))], &[Some(self)], &[&var, &mean]);
        Ok((var, mean))
    }

    /// The covariance matrix of the variables along the other dim of a rank-2
    /// tensor: with observations along `dim`, `[vars, n]` at `dim=1` gives
    /// `[vars, vars]`, each sum divided by `n - correction_factor` (1: unbiased).
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]], device).cov(1).to_data().to_list()
    ///     [[1.0, 2.0], [2.0, 4.0]]
    #[pyo3(signature = (dim, correction_factor = 1))]
    fn cov(&self, py: Python<'_>, dim: Dim, correction_factor: i64) -> PyResult<PyTensor> {
        let correction_factor = super::count(py, "cov", "correction_factor", correction_factor)?;
        self.dop(py, |v| v.cov(dim, correction_factor))
    }

    /// The elements sorted ascending along `dim` (a stable sort); same shape.
    /// NaNs go last.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[3, 1, 2]], device).sort(1).to_data().to_list()
    ///     [[1, 2, 3]]
    fn sort(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.sort(dim, false))
    }

    /// The elements sorted descending along `dim`; same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([3.0, 1.0, 2.0], device).sort_descending(0).to_data().to_list()
    ///     [3.0, 2.0, 1.0]
    fn sort_descending(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.sort(dim, true))
    }

    /// The elements sorted ascending along `dim` and the Int indices they came
    /// from, as a pair of tensors of `self`'s shape.
    ///
    /// Example:
    ///     >>> values, indices = Tensor.from_data([3, 1, 2], device).sort_with_indices(0)
    ///     >>> values.to_data().to_list(), indices.to_data().to_list()
    ///     ([1, 2, 3], [1, 2, 0])
    fn sort_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.with_indices(py, |v| v.sort_with_indices(dim, false))
    }

    /// The elements sorted descending along `dim` and the Int indices they came
    /// from, as a pair of tensors of `self`'s shape.
    ///
    /// Example:
    ///     >>> values, indices = Tensor.from_data([3, 1, 2], device).sort_descending_with_indices(0)
    ///     >>> values.to_data().to_list(), indices.to_data().to_list()
    ///     ([3, 2, 1], [0, 2, 1])
    fn sort_descending_with_indices(&self, py: Python<'_>, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        self.with_indices(py, |v| v.sort_with_indices(dim, true))
    }

    /// The Int indices that sort the elements ascending along `dim` (stable);
    /// same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([3.0, 1.0, 2.0], device).argsort(0).to_data().to_list()
    ///     [1, 2, 0]
    fn argsort(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, "argsort", |t| t.argsort(dim, false))
    }

    /// The Int indices that sort the elements descending along `dim`; same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([3.0, 1.0, 2.0], device).argsort_descending(0).to_data().to_list()
    ///     [0, 2, 1]
    fn argsort_descending(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.op(py, "argsort", |t| t.argsort(dim, true))
    }

    /// The `k` largest elements along `dim`, largest first; `dim` becomes `k`
    /// long. `k` above the dim's size is an `ArgumentError`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 5, 3, 4]], device).topk(2, 1).to_data().to_list()
    ///     [[5, 4]]
    fn topk(&self, py: Python<'_>, k: i64, dim: Dim) -> PyResult<PyTensor> {
        let k = super::count(py, "topk", "k", k)?;
        self.dop(py, |v| v.topk(k, dim))
    }

    /// The `k` largest elements along `dim`, largest first, and their Int
    /// indices, as a pair of tensors whose `dim` is `k` long.
    ///
    /// Example:
    ///     >>> values, indices = Tensor.from_data([1, 5, 3, 4], device).topk_with_indices(2, 0)
    ///     >>> values.to_data().to_list(), indices.to_data().to_list()
    ///     ([5, 4], [1, 3])
    fn topk_with_indices(&self, py: Python<'_>, k: i64, dim: Dim) -> PyResult<(PyTensor, PyTensor)> {
        let k = super::count(py, "topk_with_indices", "k", k)?;
        self.with_indices(py, |v| v.topk_with_indices(k, dim))
    }
}
