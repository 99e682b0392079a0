//! Constructors: from Python data, NumPy arrays, shapes and distributions.

use ferrum_core::{DType, Kind, Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::{PyList, PySequence, PyTuple};

use super::{scalar_for, to_scalar, PyTensor};
use crate::data::PyTensorData;
use crate::device::{dtype_of_kind, PyDType, PyDevice};
use crate::distribution::PyDistribution;
use crate::error::{argument_error, kind_error, shape_error, IntoPyResult};

/// The dtype asked for by `kind` (a kind class) or `dtype`, if any.
fn requested(kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<Option<DType>> {
    match (kind, dtype) {
        (_, Some(d)) => Ok(Some(d.into())),
        (Some(k), None) if !k.is_none() => dtype_of_kind(k).map(Some),
        _ => Ok(None),
    }
}

fn shape_vec(py: Python<'_>, op: &str, shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let dims: Vec<i64> = shape.extract().map_err(|_| shape_error(py, format!("{op}: expected a shape tuple of ints, found {}", shape.repr().map(|r| r.to_string()).unwrap_or_default())))?;
    dims.iter()
        .map(|&d| usize::try_from(d).map_err(|_| shape_error(py, format!("{op}: shape {dims:?} has a negative dim"))))
        .collect()
}

/// Flatten nested Python sequences, checking they are rectangular.
fn flatten_nested(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<(Vec<usize>, Vec<Scalar>)> {
    let mut shape = Vec::new();
    let mut probe = obj.clone();
    while let Ok(seq) = probe.cast::<PySequence>() {
        if probe.is_instance_of::<pyo3::types::PyString>() {
            break;
        }
        let n = seq.len()?;
        shape.push(n);
        if n == 0 {
            break;
        }
        probe = seq.get_item(0)?;
    }
    let mut out = Vec::with_capacity(shape.iter().product());
    fn walk(py: Python<'_>, obj: &Bound<'_, PyAny>, shape: &[usize], depth: usize, out: &mut Vec<Scalar>) -> PyResult<()> {
        if depth == shape.len() {
            let s = to_scalar(obj).ok_or_else(|| {
                kind_error(py, format!("from_data: expected numbers, found {}", obj.repr().map(|r| r.to_string()).unwrap_or_default()))
            })?;
            out.push(s);
            return Ok(());
        }
        let seq = obj.cast::<PySequence>().map_err(|_| {
            shape_error(py, format!("from_data: ragged nested data: expected a sequence of {} items at depth {depth}, found a scalar", shape[depth]))
        })?;
        let n = seq.len()?;
        if n != shape[depth] {
            return Err(shape_error(py, format!("from_data: ragged nested data: expected {} items at depth {depth}, found {n}", shape[depth])));
        }
        if depth + 1 == shape.len() {
            if let Ok(list) = obj.cast::<PyList>() {
                for item in list.iter() {
                    walk(py, &item, shape, depth + 1, out)?;
                }
                return Ok(());
            }
        }
        for i in 0..n {
            walk(py, &seq.get_item(i)?, shape, depth + 1, out)?;
        }
        Ok(())
    }
    walk(py, obj, &shape, 0, &mut out)?;
    Ok((shape, out))
}

/// The kind nested data implies: Bool if all bools, Int if all ints, else Float.
fn inferred_dtype(values: &[Scalar]) -> DType {
    if values.iter().all(|v| matches!(v, Scalar::Bool(_))) && !values.is_empty() {
        DType::Bool
    } else if values.iter().all(|v| matches!(v, Scalar::Int(_) | Scalar::Bool(_))) && !values.is_empty() {
        DType::I64
    } else {
        DType::F32
    }
}

fn from_scalars(py: Python<'_>, values: &[Scalar], shape: &[usize], dtype: DType) -> PyResult<Tensor> {
    if dtype.kind() == Kind::Int && values.iter().any(|v| matches!(v, Scalar::Float(f) if f.fract() != 0.0)) {
        return Err(kind_error(py, "from_data: fractional values cannot make an Int tensor; use a Float kind"));
    }
    let t = match dtype {
        DType::F32 => Tensor::from_vec(values.iter().map(|v| v.to_f64() as f32).collect(), shape),
        DType::F64 => Tensor::from_vec(values.iter().map(|v| v.to_f64()).collect(), shape),
        DType::I64 => Tensor::from_vec(values.iter().map(|v| v.to_i64()).collect(), shape),
        DType::Bool => Tensor::from_vec(values.iter().map(|v| v.to_bool()).collect(), shape),
    };
    t.py(py)
}

/// A NumPy array copied into an engine tensor, converting its dtype: floats
/// to f32/f64, integers to i64, bools to bool.
pub fn tensor_from_numpy(py: Python<'_>, array: &Bound<'_, PyAny>, want: Option<DType>) -> PyResult<Tensor> {
    let np = py.import("numpy")?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    let itemsize: usize = array.getattr("dtype")?.getattr("itemsize")?.extract()?;
    let natural = match kind.as_str() {
        "f" if itemsize == 8 => DType::F64,
        "f" => DType::F32,
        "i" | "u" => DType::I64,
        "b" => DType::Bool,
        _ => {
            return Err(kind_error(py, format!("from_numpy: expected a float, int or bool array, found dtype {}", array.getattr("dtype")?.str()?)));
        }
    };
    let dtype = want.unwrap_or(natural);
    let np_name = match dtype {
        DType::F32 => "float32",
        DType::F64 => "float64",
        DType::I64 => "int64",
        DType::Bool => "bool",
    };
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let flat = np.call_method1("ascontiguousarray", (array, np_name))?.call_method1("reshape", (-1,))?;
    use numpy::PyArrayMethods;
    macro_rules! copy {
        ($t:ty) => {{
            let a = flat.cast::<numpy::PyArray1<$t>>()?;
            let v = a.readonly().as_slice().map_err(|e| argument_error(py, e.to_string()))?.to_vec();
            Tensor::from_vec(v, &shape).py(py)
        }};
    }
    match dtype {
        DType::F32 => copy!(f32),
        DType::F64 => copy!(f64),
        DType::I64 => copy!(i64),
        DType::Bool => copy!(bool),
    }
}

fn is_numpy_array(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__array_interface__").unwrap_or(false) && obj.hasattr("dtype").unwrap_or(false)
}

/// Engine tensor from any supported data: nested sequences, NumPy arrays,
/// TensorData, or a tensor.
pub fn tensor_from_any(py: Python<'_>, data: &Bound<'_, PyAny>, want: Option<DType>) -> PyResult<Tensor> {
    if let Ok(d) = data.cast::<PyTensorData>() {
        let t = d.get().t.clone();
        return match want { Some(dt) => t.cast(dt).py(py), None => Ok(t) };
    }
    if let Ok(t) = data.cast::<PyTensor>() {
        let t = t.get().t.clone();
        return match want { Some(dt) => t.cast(dt).py(py), None => Ok(t) };
    }
    if is_numpy_array(data) {
        return tensor_from_numpy(py, data, want);
    }
    if to_scalar(data).is_some() && !data.is_instance_of::<PyTuple>() {
        return Err(shape_error(py, "from_data: expected nested sequences (rank >= 1), found a scalar; wrap it in a list"));
    }
    let (shape, values) = flatten_nested(py, data)?;
    let dtype = want.unwrap_or_else(|| inferred_dtype(&values));
    from_scalars(py, &values, &shape, dtype)
}

#[pymethods]
impl PyTensor {
    /// A tensor from nested lists, a NumPy array or TensorData; the kind is
    /// inferred (bools -> Bool, ints -> Int, else Float) unless given.
    #[staticmethod]
    #[pyo3(signature = (data, device, kind = None, *, dtype = None))]
    fn from_data(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let t = tensor_from_any(py, data, requested(kind, dtype)?)?;
        Ok(PyTensor::new(t, device))
    }

    /// A Float tensor from floats (any nesting).
    #[staticmethod]
    #[pyo3(signature = (data, device, *, dtype = None))]
    fn from_floats(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt: DType = dtype.map(Into::into).unwrap_or(DType::F32);
        if dt.kind() != Kind::Float {
            return Err(kind_error(py, format!("from_floats: expected a Float dtype, found {dt}")));
        }
        Ok(PyTensor::new(tensor_from_any(py, data, Some(dt))?, device))
    }

    /// An Int tensor from ints (any nesting).
    #[staticmethod]
    fn from_ints(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(tensor_from_any(py, data, Some(DType::I64))?, device))
    }

    /// A Bool tensor from bools (any nesting).
    #[staticmethod]
    fn from_bool(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(tensor_from_any(py, data, Some(DType::Bool))?, device))
    }

    /// A copy of any NumPy array (strided or not): floats keep f32/f64
    /// (f16 becomes f32), integers become i64, bools stay bool.
    #[staticmethod]
    #[pyo3(signature = (array, device, *, dtype = None))]
    fn from_numpy(py: Python<'_>, array: &Bound<'_, PyAny>, device: Py<PyDevice>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        if !is_numpy_array(array) {
            return Err(kind_error(py, format!("from_numpy: expected a numpy.ndarray, found {}", array.get_type().name()?)));
        }
        Ok(PyTensor::new(tensor_from_numpy(py, array, dtype.map(Into::into))?, device))
    }

    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn zeros(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let t = Tensor::try_full("zeros", &shape_vec(py, "zeros", shape)?, Scalar::Int(0), dt).py(py)?;
        Ok(PyTensor::new(t, device))
    }

    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn ones(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let t = Tensor::try_full("ones", &shape_vec(py, "ones", shape)?, Scalar::Int(1), dt).py(py)?;
        Ok(PyTensor::new(t, device))
    }

    /// Burn's `empty`: a tensor whose values are unspecified (here zeros).
    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn empty(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        Self::zeros(py, shape, device, kind, dtype)
    }

    /// Every element `value`, converted to the kind (Float unless given).
    #[staticmethod]
    #[pyo3(signature = (shape, value, device, kind = None, *, dtype = None))]
    fn full(py: Python<'_>, shape: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let s = scalar_for(py, "full", value, dt)?;
        Ok(PyTensor::new(Tensor::try_full("full", &shape_vec(py, "full", shape)?, s, dt).py(py)?, device))
    }

    fn zeros_like(&self, py: Python<'_>) -> PyTensor {
        self.wrap(py, Tensor::zeros(self.t.shape(), self.t.dtype()))
    }

    fn ones_like(&self, py: Python<'_>) -> PyTensor {
        self.wrap(py, Tensor::ones(self.t.shape(), self.t.dtype()))
    }

    fn full_like(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = scalar_for(py, "full_like", value, self.t.dtype())?;
        Ok(self.wrap(py, Tensor::full(self.t.shape(), s, self.t.dtype())))
    }

    /// Int tensor `[start, end)` (Burn's `arange(start..end)`).
    #[staticmethod]
    fn arange(py: Python<'_>, start: i64, end: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(Tensor::arange_step(start, end, 1, DType::I64).py(py)?, device))
    }

    /// Int tensor `[start, end)` by `step` (negative steps count down).
    #[staticmethod]
    fn arange_step(py: Python<'_>, start: i64, end: i64, step: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(Tensor::arange_step(start, end, step, DType::I64).py(py)?, device))
    }

    /// The `size x size` identity matrix.
    #[staticmethod]
    #[pyo3(signature = (size, device, kind = None, *, dtype = None))]
    fn eye(py: Python<'_>, size: i64, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let n = super::count(py, "eye", "size", size)?;
        Ok(PyTensor::new(Tensor::eye(n, dt).py(py)?, device))
    }

    /// Samples of `distribution` (seeded by `B.seed(n)`).
    #[staticmethod]
    #[pyo3(signature = (shape, distribution, device, kind = None, *, dtype = None))]
    fn random(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        distribution: PyRef<'_, PyDistribution>,
        device: Py<PyDevice>,
        kind: Option<&Bound<'_, PyAny>>,
        dtype: Option<PyDType>,
    ) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let shape = shape_vec(py, "random", shape)?;
        let d = distribution.0;
        let t = py.detach(|| Tensor::random(&shape, d, dt)).py(py)?;
        Ok(PyTensor::new(t, device))
    }

    /// Samples of `distribution` with this tensor's shape and dtype.
    fn random_like(&self, py: Python<'_>, distribution: PyRef<'_, PyDistribution>) -> PyResult<PyTensor> {
        let d = distribution.0;
        let (shape, dt) = (self.t.shape().to_vec(), self.t.dtype());
        let t = py.detach(|| Tensor::random(&shape, d, dt)).py(py)?;
        Ok(self.wrap(py, t))
    }

    /// Bool mask, False on the upper triangle (`j - i >= offset`).
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn triu_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(Tensor::triu_mask(&shape_vec(py, "triu_mask", shape)?, offset).py(py)?, device))
    }

    /// Bool mask, False on the lower triangle (`j - i <= offset`).
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn tril_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(Tensor::tril_mask(&shape_vec(py, "tril_mask", shape)?, offset).py(py)?, device))
    }

    /// Bool mask, False on the diagonal `j - i == offset`.
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn diag_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(Tensor::diag_mask(&shape_vec(py, "diag_mask", shape)?, offset).py(py)?, device))
    }
}
