//! Nested Python sequences (lists of lists of numbers) into an engine tensor.
//!
//! The data is the user's, so nothing about it is trusted: its nesting may
//! be absurdly deep or contain itself, its `__len__` may lie, its numbers
//! may not fit the kind asked for. Each of these is a ferrum error naming
//! the problem, never a stack overflow, a hang or a silently changed value.

use ferrum_core::{DType, Kind, Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyList, PySequence, PyString};

use super::to_scalar;
use crate::error::{kind_error, shape_error, IntoPyResult};

/// The deepest nesting accepted: far beyond any rank a model uses (ferrum's
/// typed ranks stop at 6), and shallow enough that walking it recursively
/// stays far from the stack's limit.
pub const MAX_NESTING: usize = 64;

/// Values read between two checks for Ctrl-C while walking a huge list.
const SIGNAL_CHECK_EVERY: usize = 1 << 20;

/// i64's range as f64 bounds: `-2^63 <= v < 2^63` is exactly the set of
/// integral floats that convert to i64 without saturating.
const I64_LOW: f64 = -9_223_372_036_854_775_808.0;
const I64_HIGH: f64 = 9_223_372_036_854_775_808.0;

fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "<unprintable>".into())
}

/// A sequence whose items are data, not a string or bytes (which are
/// sequences too, of characters and ints).
fn as_data_sequence<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, PySequence>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return None;
    }
    obj.cast::<PySequence>().ok()
}

/// The shape, read along the first item at each depth.
fn probe_shape(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let mut shape = Vec::new();
    // The containers on the path so far: a list that holds itself would
    // otherwise be probed forever.
    let mut path: Vec<Bound<'_, PyAny>> = Vec::new();
    let mut probe = obj.clone();
    while let Some(seq) = as_data_sequence(&probe) {
        if path.iter().any(|p| p.is(&probe)) {
            return Err(shape_error(py, format!("from_data: the nested data contains itself (the sequence at depth {} is one of its own ancestors)", shape.len())));
        }
        if shape.len() == MAX_NESTING {
            return Err(shape_error(py, format!("from_data: data nested deeper than {MAX_NESTING} levels; a tensor of that rank is not supported")));
        }
        let n = seq.len()?;
        shape.push(n);
        if n == 0 {
            break;
        }
        let first = seq.get_item(0)?;
        path.push(probe);
        probe = first;
    }
    Ok(shape)
}

/// A Python or NumPy integer (which `to_scalar` turns into a Float only
/// when it is beyond i64).
fn is_integer(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyInt>()
        || obj.getattr("dtype").and_then(|d| d.getattr("kind")).and_then(|k| k.extract::<String>()).is_ok_and(|k| k == "i" || k == "u")
}

/// One number, as the scalar the target kind needs. A Python int beyond
/// i64 can only become a Float; anything complex is refused rather than
/// stripped of its imaginary part.
fn leaf(py: Python<'_>, obj: &Bound<'_, PyAny>, want: Option<DType>) -> PyResult<Scalar> {
    let s = to_scalar(obj).ok_or_else(|| {
        let found = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        let what = if found.contains("complex") { " (complex values cannot be stored: take .real or .imag)" } else { "" };
        kind_error(py, format!("from_data: expected numbers, found {}{what}", repr(obj)))
    })?;
    if matches!(s, Scalar::Float(_)) && is_integer(obj) && want.is_none_or(|d| d.kind() != Kind::Float) {
        return Err(kind_error(
            py,
            format!("from_data: {} does not fit in an Int tensor (i64); ask for a Float tensor (kind=Float or from_floats) to store it as a float", repr(obj)),
        ));
    }
    Ok(s)
}

struct Walk<'a> {
    shape: &'a [usize],
    want: Option<DType>,
    out: Vec<Scalar>,
}

impl Walk<'_> {
    fn push(&mut self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
        self.out.push(leaf(py, obj, self.want)?);
        if self.out.len().is_multiple_of(SIGNAL_CHECK_EVERY) {
            py.check_signals()?;
        }
        Ok(())
    }

    /// Recursion is bounded by the shape's length (at most [`MAX_NESTING`]).
    fn walk(&mut self, py: Python<'_>, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
        if depth == self.shape.len() {
            if as_data_sequence(obj).is_some() {
                return Err(shape_error(py, format!("from_data: ragged nested data: expected a number at depth {depth}, found a sequence")));
            }
            return self.push(py, obj);
        }
        let seq = as_data_sequence(obj).ok_or_else(|| {
            shape_error(py, format!("from_data: ragged nested data: expected a sequence of {} items at depth {depth}, found {}", self.shape[depth], repr(obj)))
        })?;
        let n = seq.len()?;
        if n != self.shape[depth] {
            return Err(shape_error(py, format!("from_data: ragged nested data: expected {} items at depth {depth}, found {n}", self.shape[depth])));
        }
        if let Ok(list) = obj.cast::<PyList>() {
            // A list cannot lie about its length; iterating it is the fast path.
            for item in list.iter() {
                self.item(py, &item, depth)?;
            }
            return Ok(());
        }
        for i in 0..n {
            let item = seq.get_item(i).map_err(|e| {
                shape_error(py, format!("from_data: the sequence at depth {depth} reports {n} items but item {i} cannot be read: {e}"))
            })?;
            self.item(py, &item, depth)?;
        }
        Ok(())
    }

    fn item(&mut self, py: Python<'_>, item: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
        if depth + 1 == self.shape.len() {
            if as_data_sequence(item).is_some() {
                return Err(shape_error(py, format!("from_data: ragged nested data: expected a number at depth {}, found a sequence", depth + 1)));
            }
            self.push(py, item)
        } else {
            self.walk(py, item, depth + 1)
        }
    }
}

/// Flatten nested sequences, checking they are rectangular, into values
/// for a tensor of `want` (or of the kind they imply when `None`).
pub fn flatten_nested(py: Python<'_>, obj: &Bound<'_, PyAny>, want: Option<DType>) -> PyResult<(Vec<usize>, Vec<Scalar>)> {
    let shape = probe_shape(py, obj)?;
    let total = ferrum_core::shape::checked_numel("from_data", &shape, 1).py(py)?;
    // The lengths are the data's own word: room is made for what memory
    // could hold, and only as items actually arrive past a first block.
    if ferrum_core::shape::ensure_fits::<Scalar>("from_data", total).is_err() {
        return Err(shape_error(py, format!("from_data: the nested sequences report lengths {shape:?}, {total} values in all: more than this machine's memory holds")));
    }
    let mut walk = Walk { shape: &shape, want, out: Vec::new() };
    walk.out.try_reserve(total.min(SIGNAL_CHECK_EVERY)).map_err(|e| shape_error(py, format!("from_data: {e}")))?;
    walk.walk(py, obj, 0)?;
    let values = walk.out;
    Ok((shape, values))
}

/// The kind nested data implies: Bool if all bools, Int if all ints, else Float.
pub fn inferred_dtype(values: &[Scalar]) -> DType {
    if values.iter().all(|v| matches!(v, Scalar::Bool(_))) && !values.is_empty() {
        DType::Bool
    } else if values.iter().all(|v| matches!(v, Scalar::Int(_) | Scalar::Bool(_))) && !values.is_empty() {
        DType::I64
    } else {
        DType::F32
    }
}

/// A float as the i64 it equals, or `None` when it is fractional, not
/// finite, or outside i64's range (where a cast would saturate silently).
pub fn exact_i64(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && (I64_LOW..I64_HIGH).contains(&v)).then_some(v as i64)
}

/// The tensor of `dtype` holding `values`; a Float value that an Int tensor
/// cannot hold exactly is an error naming it.
pub fn from_scalars(py: Python<'_>, values: &[Scalar], shape: &[usize], dtype: DType) -> PyResult<Tensor> {
    if dtype.kind() == Kind::Int {
        for v in values {
            if let Scalar::Float(f) = *v {
                if f.fract() != 0.0 && f.is_finite() {
                    return Err(kind_error(py, "from_data: fractional values cannot make an Int tensor; use a Float kind"));
                }
                if exact_i64(f).is_none() {
                    return Err(kind_error(py, format!("from_data: {f:?} does not fit in an Int tensor (i64)")));
                }
            }
        }
    }
    let t = match dtype {
        DType::F32 => Tensor::from_vec(values.iter().map(|v| v.to_f64() as f32).collect(), shape),
        DType::F64 => Tensor::from_vec(values.iter().map(|v| v.to_f64()).collect(), shape),
        DType::I64 => Tensor::from_vec(values.iter().map(|v| v.to_i64()).collect(), shape),
        DType::Bool => Tensor::from_vec(values.iter().map(|v| v.to_bool()).collect(), shape),
        storage => {
            let wide = from_scalars(py, values, shape, storage.compute())?;
            return wide.cast(storage).map_err(|e| crate::error::to_py(py, e.with_op("from_data")));
        }
    };
    t.py(py)
}
