//! NumPy arrays into engine tensors. NumPy copies the array once, straight
//! into the new tensor's buffer, whatever its strides (a broadcast view
//! included), alignment or byte order, converting the dtype on the way;
//! conversions that would change a value are refused instead.

use ferrum_core::{with_dtype, DType, Element, Kind, Tensor};
use numpy::npyffi::{self, PY_ARRAY_API};
use numpy::PyArrayDescrMethods;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::nested::exact_i64;
use crate::error::{argument_error, argument_error_from, kind_error, IntoPyResult};

/// The dtype a NumPy dtype kind maps to when none is asked for.
fn natural_dtype(py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<(String, DType)> {
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    let natural = match kind.as_str() {
        "f" if itemsize == 8 => DType::F64,
        "f" if itemsize == 2 => DType::F16,
        "f" => DType::F32,
        "i" if itemsize == 4 => DType::I32,
        "u" if itemsize == 1 => DType::U8,
        "i" | "u" => DType::I64,
        "b" => DType::Bool,
        "c" => {
            return Err(kind_error(
                py,
                format!("from_numpy: expected a float, int or bool array, found dtype {} (its imaginary part would be lost: pass .real or .imag)", dtype.str()?),
            ))
        }
        _ => return Err(kind_error(py, format!("from_numpy: expected a float, int or bool array, found dtype {}", dtype.str()?))),
    };
    Ok((kind, natural))
}

/// The dtype `Tensor.from_numpy` and `Tensor.from_data` make of `array`
/// when none is asked for: float64 (NumPy's default, rarely a choice)
/// becomes the backend's float, f32, as Burn converts data on creation.
pub fn backend_default(array: &Bound<'_, PyAny>) -> Option<DType> {
    let dtype = array.getattr("dtype").ok()?;
    let (kind, size): (String, usize) = (dtype.getattr("kind").ok()?.extract().ok()?, dtype.getattr("itemsize").ok()?.extract().ok()?);
    (kind == "f" && size == 8).then_some(DType::F32)
}

/// A NumPy array copied into an engine tensor, converting its dtype: each
/// NumPy dtype ferrum stores (float64/32/16, int64/32, uint8, bool) as
/// itself, other integers as i64, or to `want`. Values `want` cannot hold
/// are errors naming them.
pub fn tensor_from_numpy(py: Python<'_>, obj: &Bound<'_, PyAny>, want: Option<DType>) -> PyResult<Tensor> {
    let np = py.import("numpy")?;
    // The array as NumPy itself makes it: its shape, not whatever an object
    // with an `__array_interface__` merely reports.
    let array = np.call_method1("asarray", (obj,)).map_err(|e| argument_error_from(py, "from_numpy: NumPy cannot read this array", e))?;
    let (kind, natural) = natural_dtype(py, &array)?;
    // A bool array can hold other bytes than 0 and 1 (a uint8 buffer viewed
    // as bool): NumPy copies them as they are, and a Rust `bool` holding one
    // is undefined behaviour, so the array is made of true bools first.
    let array = if kind == "b" { np.call_method1("not_equal", (array.call_method1("view", ("u1",))?, 0))? } else { array };
    let dtype = want.unwrap_or(natural);
    if dtype != natural && (dtype == DType::BF16 || (dtype.is_storage_only() && dtype.kind() == Kind::Int)) {
        // Through the widest dtype of the kind, then the engine's checked
        // cast: NumPy has no bfloat16, and its integer casts wrap.
        let wide = if dtype.kind() == Kind::Int { DType::I64 } else { DType::F64 };
        let t = tensor_from_numpy(py, &array, Some(wide))?;
        return t.cast(dtype).map_err(|e| crate::error::to_py(py, e.with_op("from_numpy")));
    }
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let n = ferrum_core::shape::checked_numel("from_numpy", &shape, dtype.size_in_bytes()).py(py)?;
    if dtype == DType::I64 && kind == "u" && n > 0 {
        let max: u64 = array.call_method0("max")?.extract()?;
        if max > i64::MAX as u64 {
            return Err(kind_error(py, format!("from_numpy: the value {max} of the {} array does not fit in an Int tensor (i64)", array.getattr("dtype")?.str()?)));
        }
    }
    if dtype.kind() == Kind::Int && kind == "f" {
        // Through f64 (exact for every float dtype), truncated toward zero
        // as `.int()` and NumPy's `astype` do; but NaN, infinities and
        // values beyond i64 have no integer to become (NumPy's cast gives
        // an arbitrary one, Rust's saturates), so they are refused.
        let floats = copy_into::<f64>(py, &np, &array, &shape, n)?;
        let ints = floats.into_iter().map(|f| exact_i64(f.trunc()).ok_or(f)).collect::<Result<Vec<i64>, f64>>().map_err(|f| {
            kind_error(py, format!("from_numpy: the value {f:?} has no Int (i64) value; use a Float dtype"))
        })?;
        return Tensor::from_vec(ints, &shape).py(py);
    }
    with_dtype!(dtype, T => Tensor::from_vec(copy_into::<T>(py, &np, &array, &shape, n)?, &shape).py(py))
}

/// The `n` elements of `array` (of `shape`), converted to `T` by NumPy's
/// `copyto` straight into a new buffer: the only copy made.
fn copy_into<T: Element + numpy::Element>(
    py: Python<'_>,
    np: &Bound<'_, PyModule>,
    array: &Bound<'_, PyAny>,
    shape: &[usize],
    n: usize,
) -> PyResult<Vec<T>> {
    let mut buf = ferrum_core::shape::try_zeroed("from_numpy", n, T::ZERO).py(py)?;
    let mut dims: Vec<npyffi::npy_intp> = shape.iter().map(|&d| d as npyffi::npy_intp).collect();
    // SAFETY: a C-contiguous, aligned, writeable array of `shape` over
    // `buf`, which holds exactly that many elements of `T` (the descr is
    // `T`'s). The array has no base and does not own the memory; it lives
    // only for the `copyto` below, and the buffer is not freed while any
    // reference to it remains (checked after the copy).
    let dst = unsafe {
        let subtype = npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type);
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            subtype,
            T::get_dtype(py).into_dtype_ptr(),
            dims.len() as i32,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            buf.as_mut_ptr() as *mut std::ffi::c_void,
            npyffi::NPY_ARRAY_CARRAY,
            std::ptr::null_mut(),
        );
        if ptr.is_null() {
            return Err(PyErr::fetch(py));
        }
        Bound::from_owned_ptr(py, ptr)
    };
    let kwargs = PyDict::new(py);
    kwargs.set_item("casting", "unsafe")?;
    let copied = np.call_method("copyto", (&dst, array), Some(&kwargs));
    // SAFETY: `dst` is a live object; reading its reference count is all this does.
    if unsafe { pyo3::ffi::Py_REFCNT(dst.as_ptr()) } != 1 {
        // Something kept the array over our buffer: freeing it could leave
        // that reference dangling, so the buffer is leaked instead.
        std::mem::forget(buf);
        return Err(argument_error(py, "from_numpy: NumPy kept a reference to the copy's destination"));
    }
    drop(dst);
    copied?;
    Ok(buf)
}
