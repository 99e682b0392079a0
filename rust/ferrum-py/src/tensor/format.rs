//! `str`, `repr` and `format`: `str` is Burn's `Display` of a tensor
//! (values summarised past the print options' threshold, shape, device,
//! backend, kind, dtype); `repr` is one line: the type (backend, rank,
//! kind), the values summarised the same way, shape and dtype.

use std::sync::RwLock;

use ferrum_core::{DType, Scalar, Tensor};
use pyo3::prelude::*;

use super::PyTensor;
use crate::device::backend_name;
use crate::error::argument_error;

/// Burn's `PrintOptions`: tensors of more than `threshold` elements show
/// `edge_items` at each end of every dim; `precision` fixes the digits
/// after the point of Float values (None: the shortest exact form).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrintOptions {
    pub threshold: usize,
    pub edge_items: usize,
    pub precision: Option<usize>,
}

static PRINT_OPTIONS: RwLock<PrintOptions> = RwLock::new(PrintOptions { threshold: 1000, edge_items: 3, precision: None });

fn print_options() -> PrintOptions {
    // A poisoned lock still holds valid options (they are plain values).
    *PRINT_OPTIONS.read().unwrap_or_else(|e| e.into_inner())
}

/// Burn's `set_print_options`, for every tensor printed afterwards.
#[pyfunction]
#[pyo3(signature = (threshold = 1000, edge_items = 3, precision = None))]
pub fn set_print_options(py: Python<'_>, threshold: i64, edge_items: i64, precision: Option<i64>) -> PyResult<()> {
    let op = "set_print_options";
    let threshold = super::count(py, op, "threshold", threshold)?;
    let edge_items = super::count(py, op, "edge_items", edge_items)?;
    let precision = precision.map(|p| super::count(py, op, "precision", p)).transpose()?;
    if precision.is_some_and(|p| p > 64) {
        return Err(argument_error(py, format!("{op}: precision must be at most 64 digits, found {}", precision.unwrap_or_default())));
    }
    *PRINT_OPTIONS.write().unwrap_or_else(|e| e.into_inner()) = PrintOptions { threshold, edge_items, precision };
    Ok(())
}

/// The current print options as `(threshold, edge_items, precision)`.
#[pyfunction]
pub fn get_print_options() -> (usize, usize, Option<usize>) {
    let o = print_options();
    (o.threshold, o.edge_items, o.precision)
}

/// One element as Burn prints it: Rust's `Debug` of the element type (the
/// shortest text that reads back exactly: `1.1` for an f32, not
/// `1.100000023841858`), or `precision` digits for a Float.
fn fmt_elem(dtype: DType, s: Scalar, precision: Option<usize>) -> String {
    match (s, precision) {
        (Scalar::Float(v), Some(p)) => match dtype {
            DType::F64 => format!("{v:.p$}"),
            _ => format!("{:.p$}", v as f32),
        },
        (Scalar::Float(v), None) => match dtype {
            DType::F64 => format!("{v:?}"),
            _ => format!("{:?}", v as f32),
        },
        (Scalar::Int(v), _) => v.to_string(),
        (Scalar::Bool(v), _) => v.to_string(),
    }
}

fn elem(t: &Tensor, index: &[usize], precision: Option<usize>) -> String {
    match t.get(index) {
        Ok(s) => fmt_elem(t.dtype(), s, precision),
        Err(e) => format!("<{e}>"),
    }
}

/// The values as one line of nested lists (for `repr` and `TensorData`):
/// past the print options' threshold, `edge_items` at each end of every
/// longer dim with `...` between, as NumPy and PyTorch summarise.
pub fn format_values(t: &Tensor) -> String {
    fn rec(t: &Tensor, index: &mut Vec<usize>, out: &mut String, o: PrintOptions, summarize: bool) {
        let d = index.len();
        if d == t.rank() {
            out.push_str(&elem(t, index, o.precision));
            return;
        }
        let n = t.shape()[d];
        let e = o.edge_items;
        let shown: Vec<Option<usize>> = if summarize && n > 2 * e {
            (0..e).map(Some).chain([None]).chain((n - e..n).map(Some)).collect()
        } else {
            (0..n).map(Some).collect()
        };
        out.push('[');
        for (k, i) in shown.into_iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            match i {
                Some(i) => {
                    index.push(i);
                    rec(t, index, out, o, summarize);
                    index.pop();
                }
                None => out.push_str("..."),
            }
        }
        out.push(']');
    }
    let o = print_options();
    let mut out = String::new();
    rec(t, &mut Vec::new(), &mut out, o, t.numel() > o.threshold);
    out
}

/// The values as Burn's `Display` writes them: rows on their own lines,
/// and when the tensor has more than `threshold` elements, `edge_items` at
/// each end of every dim with `...` between.
fn display_values(t: &Tensor, o: PrintOptions) -> String {
    fn rec(t: &Tensor, index: &mut Vec<usize>, out: &mut String, o: PrintOptions, summarize: bool) {
        let d = index.len();
        let n = t.shape()[d];
        let ranges: Vec<std::ops::Range<usize>> =
            if summarize && n > 2 * o.edge_items { vec![0..o.edge_items, n - o.edge_items..n] } else { std::iter::once(0..n).collect() };
        for (k, range) in ranges.into_iter().enumerate() {
            if d + 1 == t.rank() {
                if k > 0 {
                    out.push_str(", ...");
                }
                for i in range {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    index.push(i);
                    out.push_str(&elem(t, index, o.precision));
                    index.pop();
                }
            } else {
                if k > 0 {
                    out.push_str(&format!(",\n{}...\n{}", " ".repeat(d + 1), " ".repeat(d + 1)));
                }
                let start = range.start;
                for i in range {
                    if i > start {
                        out.push_str(&format!(",\n{}", " ".repeat(d + 1)));
                    }
                    out.push('[');
                    index.push(i);
                    rec(t, index, out, o, summarize);
                    index.pop();
                    out.push(']');
                }
            }
        }
    }
    if t.rank() == 0 {
        return elem(t, &[], o.precision);
    }
    let mut out = String::from("[");
    rec(t, &mut Vec::new(), &mut out, o, t.numel() > o.threshold);
    out.push(']');
    out
}

/// Burn's backend names: `ndarray`, `autodiff<ndarray>`.
fn burn_backend_name(py: Python<'_>, t: &PyTensor) -> PyResult<String> {
    let inner = backend_name(py, &t.dev().backend)?.to_lowercase();
    let inner = inner.strip_prefix("autodiff[").and_then(|s| s.strip_suffix(']')).unwrap_or(&inner).to_string();
    Ok(if t.dev().autodiff { format!("autodiff<{inner}>") } else { inner })
}

impl PyTensor {
    fn display(&self, py: Python<'_>, o: PrintOptions) -> PyResult<String> {
        Ok(format!(
            "Tensor {{\n  data:\n{},\n  shape:  {:?},\n  device:  Cpu,\n  backend:  {:?},\n  kind:  {:?},\n  dtype:  {:?},\n}}",
            display_values(&self.t, o),
            self.t.shape(),
            burn_backend_name(py, self)?,
            self.t.kind().to_string(),
            self.t.dtype().name()
        ))
    }
}

#[pymethods]
impl PyTensor {
    /// Burn's `Display` of the tensor, under the current print options.
    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.display(py, print_options())
    }

    /// `format(t, ".3")` (or `f"{t:.3}"`): `str` with 3 digits after the
    /// point, as Burn's `{:.3}`; an empty spec is `str`.
    fn __format__(&self, py: Python<'_>, spec: &str) -> PyResult<String> {
        let mut o = print_options();
        if !spec.is_empty() {
            let digits = spec.strip_prefix('.').and_then(|p| p.parse::<usize>().ok()).filter(|&p| p <= 64);
            o.precision = Some(digits.ok_or_else(|| argument_error(py, format!("format: expected a spec like '.3' (digits after the point, at most 64), found {spec:?}")))?);
        }
        self.display(py, o)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Tensor[{}, D{}, {}]({}, shape={:?}, dtype={})",
            backend_name(py, &self.dev().backend)?,
            self.t.rank(),
            self.t.kind(),
            format_values(&self.t),
            self.t.shape(),
            self.t.dtype()
        ))
    }
}
