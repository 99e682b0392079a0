//! Records across the boundary: the Python record tree (dicts, lists,
//! tensors, strings, numbers, None) to the engine's `Item` and back, and the
//! recorder entry points. Encoding and decoding run without the GIL.

use std::path::PathBuf;

use ferrum_core::record::{self, param_id, Format, Item, Precision};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::device::PyDevice;
use crate::error::{engine, IntoPyResult};
use crate::quantized::PyQTensor;
use crate::tensor::PyTensor;

fn precision(py: Python<'_>, name: &str) -> PyResult<Precision> {
    match name {
        "full" => Ok(Precision::Full),
        "half" => Ok(Precision::Half),
        "double" => Ok(Precision::Double),
        other => Err(crate::error::argument_error(py, format!("unknown precision {other:?}: expected 'full', 'half' or 'double'"))),
    }
}

fn at(path: &str) -> &str {
    if path.is_empty() { "the record root" } else { path }
}

fn to_item(value: &Bound<'_, PyAny>, path: &str) -> PyResult<Item> {
    if value.is_none() {
        return Ok(Item::Opt(None));
    }
    if let Ok(t) = value.cast::<PyTensor>() {
        return Ok(Item::tensor(t.get().t.clone()));
    }
    if let Ok(q) = value.cast::<PyQTensor>() {
        return Ok(Item::QTensor(Box::new(q.get().q.clone())));
    }
    if let Ok(d) = value.cast::<PyDict>() {
        // `ferrum.record.Some` marks an optional field that holds a value: bincode writes a 1 before it.
        if !d.is_exact_instance_of::<PyDict>() && d.get_type().name()?.to_str()? == "Some" {
            let inner = PyDict::new(value.py());
            inner.update(d.as_mapping())?;
            return Ok(Item::Opt(Some(Box::new(to_item(inner.as_any(), path)?))));
        }
        if let Some(item) = bincode_marked(d, path)? {
            return Ok(item);
        }
        let mut fields = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| PyTypeError::new_err(format!("{}: record keys must be str, found {}", at(path), k.get_type().name().map(|n| n.to_string()).unwrap_or_default())))?;
            let child = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            fields.push((key, to_item(&v, &child)?));
        }
        return Ok(Item::Struct(fields));
    }
    let is_tuple = value.is_instance_of::<PyTuple>();
    // `ferrum.record.SomeConstant` is Rust's `Some` of a constant (bincode writes a 1, then the constant);
    // `ferrum.record._SomeTensor` an `Option<Tensor>` holding its tensor (bincode writes a 1 first).
    let some = is_tuple && !value.is_exact_instance_of::<PyTuple>() && matches!(value.get_type().name()?.to_str()?, "SomeConstant" | "_SomeTensor");
    if some {
        let inner = value.get_item(0)?;
        return Ok(Item::Opt(Some(Box::new(to_item(&inner, path)?))));
    }
    if is_tuple || value.is_instance_of::<PyList>() {
        let items = value
            .try_iter()?
            .enumerate()
            .map(|(i, v)| to_item(&v?, format!("{path}.{i}").trim_start_matches('.')))
            .collect::<PyResult<Vec<_>>>()?;
        // A tuple is a Rust array or tuple: fixed size, no length in bincode.
        return Ok(if is_tuple { Item::Tuple(items) } else { Item::Seq(items) });
    }
    if value.is_instance_of::<PyBool>() {
        return Ok(Item::Bool(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(match value.extract::<u64>() {
            Ok(v) => Item::U64(v),
            Err(_) => Item::I64(value.extract()?),
        });
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(Item::F64(value.extract()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(Item::Str(value.extract()?));
    }
    if let Ok(b) = value.cast::<PyBytes>() {
        return Ok(Item::Bytes(b.as_bytes().to_vec()));
    }
    let ty = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Err(PyTypeError::new_err(format!(
        "{}: a record holds dicts, lists, tensors, str, int, float, bool, bytes or None, found {ty}",
        at(path)
    )))
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// The marks `ferrum.record` puts on Burn's maps and enums for bincode, which
/// writes a map's length and an enum's variant index (other formats need no mark):
/// `_Map` (a `HashMap`), `_Variant` (one variant, its `index` attribute) and
/// `_OneOf` (a schema's alternative variants, chosen by the index the file holds).
fn bincode_marked(d: &Bound<'_, PyDict>, path: &str) -> PyResult<Option<Item>> {
    if d.is_exact_instance_of::<PyDict>() {
        return Ok(None);
    }
    let kind = d.get_type().name()?.to_str()?.to_string();
    let entries = || {
        d.iter()
            .map(|(k, v)| {
                let key: String = k.extract()?;
                let item = to_item(&v, &child(path, &key))?;
                Ok((key, item))
            })
            .collect::<PyResult<Vec<_>>>()
    };
    Ok(Some(match kind.as_str() {
        "_Map" => Item::Map(entries()?.into_iter().map(|(k, v)| (Item::Str(k), v)).collect()),
        "_Variant" => {
            let index: u32 = d.getattr("index")?.extract()?;
            let (variant, value) = entries()?
                .pop()
                .ok_or_else(|| PyTypeError::new_err(format!("{}: an enum variant needs a value", at(path))))?;
            Item::Enum { variant: variant.into(), index, value: Box::new(value) }
        }
        "_OneOf" => Item::Enum {
            variant: path.rsplit('.').next().unwrap_or_default().into(),
            index: record::bincode::ANY_VARIANT,
            value: Box::new(Item::Seq(entries()?.into_iter().map(|(_, v)| v).collect())),
        },
        _ => return Ok(None),
    }))
}

fn to_py(py: Python<'_>, item: Item, device: &Py<PyDevice>) -> PyResult<Py<PyAny>> {
    Ok(match item {
        Item::Struct(fields) => {
            let d = PyDict::new(py);
            for (k, v) in fields {
                d.set_item(k, to_py(py, v, device)?)?;
            }
            d.into_any().unbind()
        }
        Item::Map(pairs) => {
            let d = PyDict::new(py);
            for (k, v) in pairs {
                d.set_item(to_py(py, k, device)?, to_py(py, v, device)?)?;
            }
            d.into_any().unbind()
        }
        Item::Seq(items) => {
            let list = items.into_iter().map(|v| to_py(py, v, device)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, list)?.into_any().unbind()
        }
        Item::Tuple(items) => {
            let list = items.into_iter().map(|v| to_py(py, v, device)).collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, list)?.into_any().unbind()
        }
        Item::Opt(None) | Item::Unit => py.None(),
        Item::Opt(Some(v)) => to_py(py, *v, device)?,
        Item::Tensor(t) => Py::new(py, PyTensor::new(*t, device.clone_ref(py)))?.into_any(),
        Item::QTensor(q) => Py::new(py, PyQTensor::from_record(py, *q, device.clone_ref(py))?)?.into_any(),
        Item::U8(v) => v.into_pyobject(py)?.into_any().unbind(),
        Item::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        Item::U64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Item::I64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Item::F64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Item::Bool(v) => PyBool::new(py, v).to_owned().into_any().unbind(),
        Item::Bytes(b) => PyBytes::new(py, &b).into_any().unbind(),
        Item::Enum { variant, value, .. } => {
            let d = PyDict::new(py);
            d.set_item(&*variant, to_py(py, *value, device)?)?;
            d.into_any().unbind()
        }
    })
}

fn schema_of(schema: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Item>> {
    schema.filter(|s| !s.is_none()).map(|s| to_item(s, "")).transpose()
}

/// Encode a record tree in one of Burn's formats.
#[pyfunction]
fn record_to_bytes<'py>(py: Python<'py>, tree: &Bound<'py, PyAny>, format: &str, precision_name: &str) -> PyResult<Bound<'py, PyBytes>> {
    let (item, fmt, prec) = (to_item(tree, "")?, Format::from_name(format).py(py)?, precision(py, precision_name)?);
    let bytes = engine(py, true, || record::to_bytes(&item, fmt, prec))?;
    Ok(PyBytes::new(py, &bytes))
}

/// Decode a whole record, fitted to `schema` when given (bincode needs it).
#[pyfunction]
#[pyo3(signature = (data, format, schema, device))]
fn record_from_bytes(py: Python<'_>, data: &[u8], format: &str, schema: Option<&Bound<'_, PyAny>>, device: Py<PyDevice>) -> PyResult<Py<PyAny>> {
    let (fmt, schema) = (Format::from_name(format).py(py)?, schema_of(schema)?);
    let item = engine(py, true, || record::from_bytes(data, fmt, schema.as_ref()))?;
    to_py(py, item, &device)
}

/// Write a record file atomically at exactly `path`.
#[pyfunction]
fn record_save(py: Python<'_>, tree: &Bound<'_, PyAny>, path: PathBuf, format: &str, precision_name: &str) -> PyResult<()> {
    let (item, fmt, prec) = (to_item(tree, "")?, Format::from_name(format).py(py)?, precision(py, precision_name)?);
    engine(py, true, || record::save_file(&item, &path, fmt, prec))
}

/// Read and decode a whole record file; errors name the file.
#[pyfunction]
#[pyo3(signature = (path, format, schema, device))]
fn record_load(py: Python<'_>, path: PathBuf, format: &str, schema: Option<&Bound<'_, PyAny>>, device: Py<PyDevice>) -> PyResult<Py<PyAny>> {
    let (fmt, schema) = (Format::from_name(format).py(py)?, schema_of(schema)?);
    let item = engine(py, true, || record::load_file(&path, fmt, schema.as_ref()))?;
    to_py(py, item, &device)
}

/// Write `data` to `path` atomically (temporary file, fsync, rename); the
/// next write of the same path removes temporary files a killed writer left.
#[pyfunction]
fn write_file_atomic(py: Python<'_>, path: PathBuf, data: &[u8]) -> PyResult<()> {
    py.detach(|| record::file::write_atomic(&path, data)).map_err(PyErr::from)
}

/// Burn's text of a parameter id: 13 lowercase base32hex characters.
#[pyfunction]
fn param_id_encode(id: u64) -> String {
    param_id::encode(id)
}

/// The u64 of a parameter id's text (base32hex or a legacy UUID).
#[pyfunction]
fn param_id_decode(py: Python<'_>, text: &str) -> PyResult<u64> {
    param_id::decode(text).py(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, record_to_bytes, record_from_bytes, record_save, record_load, write_file_atomic, param_id_encode, param_id_decode);
    Ok(())
}
