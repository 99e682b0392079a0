//! `str` and `repr`: the values (elided past a limit), shape, kind, dtype
//! and backend, in the spirit of Burn's Display.

use ferrum_core::{Scalar, Tensor};
use pyo3::prelude::*;

use super::PyTensor;
use crate::device::backend_name;

/// Items shown at each end of a long dim.
const EDGE: usize = 3;
/// Dims longer than this are elided.
const MAX_ITEMS: usize = 8;

fn fmt_scalar(s: Scalar) -> String {
    match s {
        Scalar::Float(v) if v.is_finite() && v == v.trunc() && v.abs() < 1e16 => format!("{v:.1}"),
        Scalar::Float(v) => format!("{v}"),
        Scalar::Int(v) => v.to_string(),
        Scalar::Bool(v) => v.to_string(),
    }
}

/// Nested-list text of the values, eliding the middle of long dims.
pub fn format_values(t: &Tensor) -> String {
    fn rec(t: &Tensor, index: &mut Vec<usize>, out: &mut String, indent: usize) {
        let d = index.len();
        if d == t.rank() {
            out.push_str(&fmt_scalar(t.get(index).expect("index within shape")));
            return;
        }
        let n = t.shape()[d];
        out.push('[');
        let shown: Vec<Option<usize>> = if n > MAX_ITEMS {
            (0..EDGE).map(Some).chain([None]).chain((n - EDGE..n).map(Some)).collect()
        } else {
            (0..n).map(Some).collect()
        };
        for (k, i) in shown.iter().enumerate() {
            if k > 0 {
                out.push(',');
                if d + 1 < t.rank() {
                    out.push('\n');
                    out.push_str(&" ".repeat(indent + 1));
                } else {
                    out.push(' ');
                }
            }
            match i {
                Some(i) => {
                    index.push(*i);
                    rec(t, index, out, indent + 1);
                    index.pop();
                }
                None => out.push_str("..."),
            }
        }
        out.push(']');
    }
    let mut out = String::new();
    if t.rank() == 0 {
        return fmt_scalar(t.into_scalar().expect("rank 0 holds one element"));
    }
    rec(t, &mut Vec::new(), &mut out, 0);
    out
}

#[pymethods]
impl PyTensor {
    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Tensor {{\n  data:\n{},\n  shape:  {:?},\n  device:  Cpu,\n  backend:  {},\n  kind:  {},\n  dtype:  {},\n}}",
            format_values(&self.t),
            self.t.shape(),
            backend_name(py, &self.dev().backend)?,
            self.t.kind(),
            self.t.dtype()
        ))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let values = format_values(&self.t).replace('\n', "");
        Ok(format!(
            "Tensor[{}, D{}, {}]({values}, shape={:?}, dtype={})",
            backend_name(py, &self.dev().backend)?,
            self.t.rank(),
            self.t.kind(),
            self.t.shape(),
            self.t.dtype()
        ))
    }
}
