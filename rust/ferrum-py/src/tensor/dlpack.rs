//! DLPack (`__dlpack__`, `__dlpack_device__`, `Tensor.from_dlpack`): handing
//! a tensor to NumPy, PyTorch or JAX and taking theirs, through NumPy's
//! implementation of the protocol; both ways share the buffer.

use ferrum_core::DType;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::data::numpy_view;
use super::from_numpy::tensor_from_numpy;
use super::share_numpy::share_numpy;
use super::PyTensor;
use crate::device::PyDevice;
use crate::error::{argument_error, argument_error_from, kind_error};

/// DLPack's device type for CPU memory (`kDLCPU`).
const DL_CPU: i32 = 1;

#[pymethods]
impl PyTensor {
    /// This tensor as a DLPack capsule, sharing its buffer (no copy), for
    /// `numpy.from_dlpack`, `torch.from_dlpack` and other consumers.
    ///
    /// The buffer is read-only, as ferrum's tensors are immutable: it is
    /// marked so under DLPack 1.0 (`max_version=(1, 0)` or later, which NumPy
    /// 2 and PyTorch ask for); a consumer of the older protocol, which cannot
    /// be told, gets `BufferError`, as NumPy's read-only arrays give. bf16
    /// tensors are refused (the protocol goes through NumPy, which has no
    /// bfloat16): cast them first.
    ///
    /// Example:
    ///     >>> import numpy as np
    ///     >>> np.from_dlpack(Tensor.from_data([[1.0, 2.0]], device)).tolist()
    ///     [[1.0, 2.0]]
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<Bound<'py, PyAny>>,
        dl_device: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let t = &slf.get().t;
        if t.dtype() == DType::BF16 {
            return Err(kind_error(py, "__dlpack__: a bf16 tensor has no DLPack export here (NumPy has no bfloat16); cast it to DType.F32 first"));
        }
        let array = numpy_view(py, t, slf.clone().into_any())?;
        let kwargs = PyDict::new(py);
        for (name, value) in [("stream", stream), ("max_version", max_version), ("dl_device", dl_device)] {
            if let Some(value) = value {
                kwargs.set_item(name, value)?;
            }
        }
        if let Some(copy) = copy {
            kwargs.set_item("copy", copy)?;
        }
        array.call_method("__dlpack__", (), Some(&kwargs))
    }

    /// `(device type, device id)` of the buffer for DLPack: `(1, 0)`, the CPU.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (DL_CPU, 0)
    }

    /// A tensor on `device` over the memory of `obj`, any object with
    /// `__dlpack__` on the CPU (a NumPy array, a PyTorch or JAX CPU tensor),
    /// in its own dtype (float64 stays f64).
    ///
    /// The memory is shared, not copied, for f32, f64, f16, i64, i32, u8
    /// and bool buffers whose strides are whole elements (negative and zero
    /// strides included) and whose start is aligned; other dtypes (int8,
    /// uint16... as i64) and layouts are copied. Ferrum never writes into
    /// shared memory (ops that would reuse a buffer in place allocate
    /// instead), read-only or not, and keeps the producer's object alive
    /// for as long as a tensor over it lives. As with `torch.from_dlpack`,
    /// later writes by the producer into its buffer are seen by the tensor
    /// (and by every op run afterwards, including an autodiff backward pass
    /// that saved it): copy with `Tensor.from_numpy` to get values of your
    /// own, and do not write while another thread computes with the tensor.
    ///
    /// Example:
    ///     >>> import numpy as np
    ///     >>> a = np.arange(3.0)
    ///     >>> t = Tensor.from_dlpack(a, device)
    ///     >>> a[0] = 7.0
    ///     >>> t.to_data().to_list()
    ///     [7.0, 1.0, 2.0]
    #[staticmethod]
    fn from_dlpack(py: Python<'_>, obj: &Bound<'_, PyAny>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        if !obj.hasattr("__dlpack__")? {
            return Err(argument_error(py, format!("from_dlpack: expected an object with __dlpack__, found {}", obj.get_type().name()?)));
        }
        let np = py.import("numpy")?;
        let array = np.call_method1("from_dlpack", (obj,)).map_err(|e| {
            argument_error_from(py, "from_dlpack: the object's DLPack capsule cannot be read (a CPU buffer of a dtype NumPy knows is needed; bf16: cast to f32 first)", e)
        })?;
        if let Some(t) = share_numpy(py, &array)? {
            return Ok(PyTensor::new(t, device));
        }
        let bools = array.getattr("dtype")?.getattr("kind")?.extract::<String>()? == "b";
        // Copied: a bool buffer can hold other bytes than 0 and 1 (a uint8
        // buffer viewed as bool), which are True.
        let array = if bools { np.call_method1("not_equal", (array.call_method1("view", ("u1",))?, 0))? } else { array };
        Ok(PyTensor::new(tensor_from_numpy(py, &array, None)?, device))
    }
}
