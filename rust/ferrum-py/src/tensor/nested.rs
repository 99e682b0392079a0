//! Nested Python sequences (lists of lists of numbers) into an engine tensor.
//!
//! The data is the user's, so nothing about it is trusted: its nesting may
//! be absurdly deep or contain itself, its `__len__` may lie, its numbers
//! may not fit the kind asked for. Each of these is a ferrum error naming
//! the problem, never a stack overflow, a hang or a silently changed value.

use ferrum_core::{DType, Kind, Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple, PyType};

use super::to_scalar_checked;
use crate::error::{kind_error, shape_error, IntoPyResult};

/// The deepest nesting accepted: far beyond any rank a model uses (ferrum's
/// typed ranks stop at 6), and shallow enough that walking it recursively
/// stays far from the stack's limit.
pub const MAX_NESTING: usize = 64;

/// Values read between two checks for Ctrl-C while walking a huge list:
/// about 0.3 ms of Python floats, 20 ms of NumPy scalars (the slow path).
const SIGNAL_CHECK_EVERY: usize = 1 << 16;

/// The room made up front when a container's length cannot be trusted
/// (a custom sequence's `__len__`); the rest grows as items arrive.
const FIRST_BLOCK: usize = 1 << 20;

/// i64's range as f64 bounds: `-2^63 <= v < 2^63` is exactly the set of
/// integral floats that convert to i64 without saturating.
const I64_LOW: f64 = -9_223_372_036_854_775_808.0;
const I64_HIGH: f64 = 9_223_372_036_854_775_808.0;

fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "<unprintable>".into())
}

/// A sequence whose items are data, not a string or bytes (which are
/// sequences too, of characters and ints).
///
/// Anything but a list or tuple is asked `isinstance(obj, Sequence)`, which
/// runs Python code (the ABC's hooks): a Ctrl-C that lands there must come
/// back as the error it is. PyO3's own sequence check swallows it (as an
/// "exception ignored"), and with it the interrupt, which a long walk over
/// number-likes then never saw.
fn as_data_sequence<'a, 'py>(obj: &'a Bound<'py, PyAny>, abc: &Bound<'py, PyAny>) -> PyResult<Option<&'a Bound<'py, PySequence>>> {
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return Ok(obj.cast::<PySequence>().ok());
    }
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() || !obj.is_instance(abc)? {
        return Ok(None);
    }
    Ok(obj.cast::<PySequence>().ok())
}

fn sequence_abc(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("collections.abc")?.getattr("Sequence")
}

/// The shape, read along the first item at each depth, and whether every
/// container on that path is a list or tuple: their lengths are real, so
/// room for all the values can be made at once.
fn probe_shape<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, abc: &Bound<'py, PyAny>) -> PyResult<(Vec<usize>, bool)> {
    let mut shape = Vec::new();
    let mut real = true;
    // The containers on the path so far: a list that holds itself would
    // otherwise be probed forever.
    let mut path: Vec<Bound<'_, PyAny>> = Vec::new();
    let mut probe = obj.clone();
    while let Some(seq) = as_data_sequence(&probe, abc)? {
        if path.iter().any(|p| p.is(&probe)) {
            return Err(shape_error(py, format!("from_data: the nested data contains itself (the sequence at depth {} is one of its own ancestors)", shape.len())));
        }
        if shape.len() == MAX_NESTING {
            return Err(shape_error(py, format!("from_data: data nested deeper than {MAX_NESTING} levels; a tensor of that rank is not supported")));
        }
        real &= probe.is_exact_instance_of::<PyList>() || probe.is_exact_instance_of::<PyTuple>();
        let n = seq.len()?;
        shape.push(n);
        if n == 0 {
            break;
        }
        let first = seq.get_item(0)?;
        path.push(probe);
        probe = first;
    }
    Ok((shape, real))
}

/// A Python or NumPy integer (which `to_scalar` turns into a Float only
/// when it is beyond i64).
fn is_integer(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if obj.is_instance_of::<PyInt>() {
        return Ok(true);
    }
    match obj.getattr("dtype").and_then(|d| d.getattr("kind")).and_then(|k| k.extract::<String>()) {
        Ok(k) => Ok(k == "i" || k == "u"),
        // Only an interrupt is an error here (see `to_scalar_checked`).
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(obj.py()) => Ok(false),
        Err(e) => Err(e),
    }
}

/// One number, as the scalar the target kind needs. A Python int beyond
/// i64 can only become a Float; anything complex is refused rather than
/// stripped of its imaginary part.
fn leaf(py: Python<'_>, obj: &Bound<'_, PyAny>, want: Option<DType>) -> PyResult<Scalar> {
    let s = to_scalar_checked(obj)?.ok_or_else(|| {
        let found = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        let what = if found.contains("complex") { " (complex values cannot be stored: take .real or .imag)" } else { "" };
        kind_error(py, format!("from_data: expected numbers, found {}{what}", repr(obj)))
    })?;
    if matches!(s, Scalar::Float(_)) && is_integer(obj)? && want.is_none_or(|d| d.kind() != Kind::Float) {
        return Err(kind_error(
            py,
            format!("from_data: {} does not fit in an Int tensor (i64); ask for a Float tensor (kind=Float or from_floats) to store it as a float", repr(obj)),
        ));
    }
    Ok(s)
}

/// The values read so far, already in the tensor's compute dtype. With no
/// dtype asked for, the kind is inferred as the values arrive (all bools:
/// Bool; bools and ints: Int; any float: f32), promoting what was kept when
/// a wider kind first appears, so a 100M-value list never passes through a
/// 16-byte-per-value intermediate.
enum Values {
    Bool(Vec<bool>),
    Int(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Values {
    fn with_capacity(dtype: DType, n: usize) -> Result<Self, std::collections::TryReserveError> {
        fn vec<T>(n: usize) -> Result<Vec<T>, std::collections::TryReserveError> {
            let mut v = Vec::new();
            v.try_reserve_exact(n)?;
            Ok(v)
        }
        Ok(match dtype {
            DType::Bool => Values::Bool(vec(n)?),
            DType::I64 => Values::Int(vec(n)?),
            DType::F64 => Values::F64(vec(n)?),
            _ => Values::F32(vec(n)?),
        })
    }

    fn len(&self) -> usize {
        match self {
            Values::Bool(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }

    fn into_tensor(self, shape: &[usize]) -> ferrum_core::Result<Tensor> {
        match self {
            Values::Bool(v) => Tensor::from_vec(v, shape),
            Values::Int(v) => Tensor::from_vec(v, shape),
            Values::F32(v) => Tensor::from_vec(v, shape),
            Values::F64(v) => Tensor::from_vec(v, shape),
        }
    }
}

struct Walk<'a, 'py> {
    shape: &'a [usize],
    abc: Bound<'py, PyAny>,
    want: Option<DType>,
    values: Values,
    /// The NumPy scalar type met last and its dtype's kind (`b'f'`, `b'i'`,
    /// ...): a scalar type's kind is fixed, so it is looked up once per run
    /// of such values instead of once per value.
    numpy_kind: Option<(Py<PyType>, u8)>,
}

impl<'py> Walk<'_, 'py> {
    /// One number: Python's own floats, ints and bools, and NumPy scalars of a
    /// kind already met, are read directly (tens of nanoseconds at most);
    /// anything else (big ints, number-likes) through the general
    /// conversion, which also names what is wrong with a value.
    fn push(&mut self, py: Python<'py>, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<()> {
        let s = if let Ok(f) = obj.cast_exact::<PyFloat>() {
            Scalar::Float(f.value())
        } else if let Some(i) = obj.cast_exact::<PyInt>().ok().and_then(|i| i.extract::<i64>().ok()) {
            Scalar::Int(i)
        } else if let Ok(b) = obj.cast_exact::<PyBool>() {
            Scalar::Bool(b.is_true())
        } else if let Some(s) = self.numpy_scalar(obj) {
            s
        } else if as_data_sequence(obj, &self.abc)?.is_some() {
            return Err(shape_error(py, format!("from_data: ragged nested data: expected a number at depth {depth}, found a sequence")));
        } else {
            leaf(py, obj, self.want)?
        };
        self.put(py, s)?;
        if self.values.len().is_multiple_of(SIGNAL_CHECK_EVERY) {
            py.check_signals()?;
        }
        Ok(())
    }

    /// A NumPy scalar's value, or `None` for anything else (and for values
    /// the general conversion must judge: uint64 beyond i64, complex).
    fn numpy_scalar(&mut self, obj: &Bound<'_, PyAny>) -> Option<Scalar> {
        let ty = obj.get_type();
        let kind = match &self.numpy_kind {
            Some((known, kind)) if known.is(&ty) => *kind,
            _ => {
                let module = ty.getattr("__module__").ok()?;
                if module.extract::<&str>().ok()? != "numpy" {
                    return None;
                }
                let kind = obj.getattr("dtype").and_then(|d| d.getattr("kind")).and_then(|k| k.extract::<char>()).ok()?;
                let kind = u8::try_from(kind).ok()?;
                self.numpy_kind = Some((ty.unbind(), kind));
                kind
            }
        };
        match kind {
            b'f' => obj.extract::<f64>().ok().map(Scalar::Float),
            b'i' | b'u' => obj.extract::<i64>().ok().map(Scalar::Int),
            b'b' => obj.is_truthy().ok().map(Scalar::Bool),
            _ => None,
        }
    }

    fn put(&mut self, py: Python<'_>, s: Scalar) -> PyResult<()> {
        match (&mut self.values, s) {
            (Values::F32(v), s) => v.push(s.to_f64() as f32),
            (Values::F64(v), s) => v.push(s.to_f64()),
            (Values::Int(v), Scalar::Float(f)) if self.want.is_some() => v.push(int_of_float(py, f)?),
            (Values::Int(v), Scalar::Int(i)) => v.push(i),
            (Values::Int(v), Scalar::Bool(b)) => v.push(b as i64),
            (Values::Bool(v), s) if self.want.is_some() => v.push(s.to_bool()),
            (Values::Bool(v), Scalar::Bool(b)) => v.push(b),
            (_, s) => {
                // Inferring: the first value of a wider kind promotes what was kept,
                // keeping the room made for the values still to come.
                fn widen<A: Copy, B>(v: Vec<A>, f: impl Fn(A) -> B) -> Vec<B> {
                    let mut out = Vec::with_capacity(v.capacity());
                    out.extend(v.iter().map(|&a| f(a)));
                    out
                }
                self.values = match std::mem::replace(&mut self.values, Values::Bool(Vec::new())) {
                    Values::Bool(v) if matches!(s, Scalar::Int(_)) => Values::Int(widen(v, i64::from)),
                    Values::Bool(v) => Values::F32(widen(v, |b| b as u8 as f32)),
                    Values::Int(v) => Values::F32(widen(v, |i| i as f64 as f32)),
                    other => other,
                };
                return self.put(py, s);
            }
        }
        Ok(())
    }

    /// Recursion is bounded by the shape's length (at most [`MAX_NESTING`]).
    fn walk(&mut self, py: Python<'py>, obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<()> {
        if depth == self.shape.len() {
            return self.push(py, obj, depth);
        }
        let seq = as_data_sequence(obj, &self.abc)?.ok_or_else(|| {
            shape_error(py, format!("from_data: ragged nested data: expected a sequence of {} items at depth {depth}, found {}", self.shape[depth], repr(obj)))
        })?;
        let n = seq.len()?;
        if n != self.shape[depth] {
            return Err(shape_error(py, format!("from_data: ragged nested data: expected {} items at depth {depth}, found {n}", self.shape[depth])));
        }
        if let Ok(list) = obj.cast::<PyList>() {
            // A list cannot lie about its length; iterating it is the fast path.
            for item in list.iter() {
                self.walk(py, &item, depth + 1)?;
            }
            return Ok(());
        }
        for i in 0..n {
            let item = seq.get_item(i).map_err(|e| {
                shape_error(py, format!("from_data: the sequence at depth {depth} reports {n} items but item {i} cannot be read: {e}"))
            })?;
            self.walk(py, &item, depth + 1)?;
        }
        Ok(())
    }
}

/// A float bound for an Int tensor: it must be integral and within i64.
fn int_of_float(py: Python<'_>, f: f64) -> PyResult<i64> {
    if f.fract() != 0.0 && f.is_finite() {
        return Err(kind_error(py, "from_data: fractional values cannot make an Int tensor; use a Float kind"));
    }
    exact_i64(f).ok_or_else(|| kind_error(py, format!("from_data: {f:?} does not fit in an Int tensor (i64)")))
}

/// The tensor nested sequences make, checked rectangular: of `want` (its
/// compute dtype read, then cast to it), or of the kind the values imply.
///
/// Ctrl-C is polled every [`SIGNAL_CHECK_EVERY`] values.
pub fn tensor_from_nested(py: Python<'_>, obj: &Bound<'_, PyAny>, want: Option<DType>) -> PyResult<Tensor> {
    let abc = sequence_abc(py)?;
    let (shape, real) = probe_shape(py, obj, &abc)?;
    let total = ferrum_core::shape::checked_numel("from_data", &shape, 1).py(py)?;
    // The lengths are the data's own word: room is made for what memory
    // could hold, and only as items actually arrive past a first block
    // unless every container is a list or tuple.
    if ferrum_core::shape::ensure_fits::<f64>("from_data", total).is_err() {
        return Err(shape_error(py, format!("from_data: the nested sequences report lengths {shape:?}, {total} values in all: more than this machine's memory holds")));
    }
    let room = if real { total } else { total.min(FIRST_BLOCK) };
    // Inference starts from the narrowest kind; the first int or float widens it.
    let first = want.map_or(DType::Bool, DType::compute);
    let values = Values::with_capacity(first, room).map_err(|e| shape_error(py, format!("from_data: {total} values: {e}")))?;
    let mut walk = Walk { shape: &shape, abc, want, values, numpy_kind: None };
    walk.walk(py, obj, 0)?;
    let values = match walk.values {
        Values::Bool(v) if want.is_none() && v.is_empty() => Values::F32(Vec::new()),
        other => other,
    };
    let t = values.into_tensor(&shape).py(py)?;
    match want {
        Some(dt) if dt != t.dtype() => t.cast(dt).map_err(|e| crate::error::to_py(py, e.with_op("from_data"))),
        _ => Ok(t),
    }
}

/// A float as the i64 it equals, or `None` when it is fractional, not
/// finite, or outside i64's range (where a cast would saturate silently).
pub fn exact_i64(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && (I64_LOW..I64_HIGH).contains(&v)).then_some(v as i64)
}

