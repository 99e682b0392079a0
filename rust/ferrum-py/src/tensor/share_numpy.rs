//! NumPy arrays shared as engine tensors without a copy (the zero-copy half
//! of `Tensor.from_dlpack`): the tensor reads the array's memory through a
//! layout of its strides and holds a reference to the array, which keeps
//! the memory (and whatever DLPack capsule NumPy keeps as its base) alive.

use ferrum_core::{half, DType, Element, Layout, Tensor};
use numpy::Element as _;
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// Keeps a NumPy array (and so its memory) alive while tensors share it.
///
/// Dropped wherever the last tensor goes, possibly on a thread not attached
/// to Python: pyo3 (0.30, with its reference pool, which this crate does
/// not disable) then defers the decref to the next time a thread attaches,
/// so the array outlives every read of its memory either way.
struct ArrayOwner(#[allow(dead_code)] Py<PyAny>);

/// A tensor sharing `array`'s memory, or None when it cannot be shared and
/// the caller must copy: an empty array, a dtype ferrum does not store as
/// NumPy does (another width, byte order or kind), byte strides that are
/// not whole elements, an unaligned buffer, or bool bytes other than 0 and 1.
pub fn share_numpy(py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<Option<Tensor>> {
    let Ok(arr) = array.cast::<PyUntypedArray>() else {
        return Ok(None);
    };
    let descr = arr.dtype();
    let same = |d: Bound<'_, numpy::PyArrayDescr>| descr.is_equiv_to(&d);
    let dtype = if same(f32::get_dtype(py)) {
        DType::F32
    } else if same(f64::get_dtype(py)) {
        DType::F64
    } else if same(half::f16::get_dtype(py)) {
        DType::F16
    } else if same(i64::get_dtype(py)) {
        DType::I64
    } else if same(i32::get_dtype(py)) {
        DType::I32
    } else if same(u8::get_dtype(py)) {
        DType::U8
    } else if same(bool::get_dtype(py)) {
        DType::Bool
    } else {
        return Ok(None);
    };
    match dtype {
        DType::F32 => share::<f32>(arr),
        DType::F64 => share::<f64>(arr),
        DType::F16 => share::<half::f16>(arr),
        DType::I64 => share::<i64>(arr),
        DType::I32 => share::<i32>(arr),
        DType::U8 => share::<u8>(arr),
        DType::Bool => share::<bool>(arr),
        DType::BF16 => Ok(None),
    }
}

/// [`share_numpy`] for an array whose dtype is `T`'s.
fn share<T: Element + numpy::Element>(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Option<Tensor>> {
    let size = std::mem::size_of::<T>() as isize;
    let (shape, byte_strides) = (arr.shape(), arr.strides());
    if shape.contains(&0) {
        return Ok(None);
    }
    let mut strides = Vec::with_capacity(shape.len());
    // The lowest and highest elements reached, relative to the first one.
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&d, &s) in shape.iter().zip(byte_strides) {
        if s % size != 0 {
            return Ok(None);
        }
        let s = s / size;
        strides.push(s);
        let span = s as i128 * (d as i128 - 1);
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    let (Ok(offset), Ok(len)) = (usize::try_from(-lo), usize::try_from(hi - lo + 1)) else {
        return Ok(None);
    };
    // SAFETY: a live array's data pointer; NumPy keeps every element its
    // shape and strides reach inside one allocation, so the span from the
    // lowest to the highest is memory of the array's (whose first element
    // lies `offset` elements in).
    let start = unsafe { ((*arr.as_array_ptr()).fields.data as *const T).wrapping_sub(offset) };
    if T::DTYPE == DType::Bool && !valid_bools(arr, start as *const u8, len) {
        return Ok(None);
    }
    let Ok(layout) = Layout::strided(shape, &strides, offset) else {
        return Ok(None);
    };
    let owner = Box::new(ArrayOwner(arr.clone().into_any().unbind()));
    // SAFETY: `start` is valid for reads of `len` values of `T` (the array's
    // dtype, so any bytes there are values of `T`; bools were checked
    // above) while the array lives, which `owner` ensures. Ferrum never
    // writes there; writes by the array's users between ops are the sharing
    // this is for, as with `torch.from_dlpack`.
    match unsafe { Tensor::from_foreign::<T>(start, len, owner, layout) } {
        Ok(t) => Ok(Some(t)),
        // Unaligned memory (a view at an odd byte offset): copied instead.
        Err(_) => Ok(None),
    }
}

/// True when every byte of a bool array's `len`-byte span is 0 or 1, as a
/// Rust `bool` must be (a uint8 buffer viewed as bool need not be): only a
/// contiguous array is shared, so that the span holds no bytes in between.
fn valid_bools(arr: &Bound<'_, PyUntypedArray>, start: *const u8, len: usize) -> bool {
    if !arr.is_c_contiguous() {
        return false;
    }
    // SAFETY: the contiguous array's `len` bytes, read as bytes.
    unsafe { std::slice::from_raw_parts(start, len) }.iter().all(|&b| b <= 1)
}
