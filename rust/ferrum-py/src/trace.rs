//! The recorder behind `ferrum.jit.trace`: while it is active on a thread,
//! each tensor method that has a plan instruction appends one instruction
//! (`ferrum_core::plan`, the `t_*` ops of `plan/traced.rs` and `conv2d`)
//! over numbered slots, so module code records itself without change.
//!
//! Tensors are told apart by a serial number given at creation. A tensor the
//! trace reads without having recorded it is a constant (a parameter, or one
//! built from data during the forward, such as a causal mask); a tensor made
//! during the trace by a method with no instruction is remembered with the
//! name of that method, and reading it fails the trace, naming the method.
//! Ops whose inputs are all constants are folded: their result is a constant.

use std::cell::RefCell;
use std::collections::HashMap;

use ferrum_core::plan::{Attr, DimMethod};
use ferrum_core::{Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::device::PyDevice;
use crate::error::backend_error;
use crate::tensor::PyTensor;
use crate::trace_state::{active, set_active, set_call, settle, untraced_by};

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// `(op, attrs, input slots, output slots, label, output shapes)`.
type Instr = (String, Vec<(&'static str, Attr)>, Vec<Option<usize>>, Vec<usize>, String, Vec<Vec<usize>>);

struct Recorder {
    slots: usize,
    /// Serial -> (slot, whether it depends on a trace input).
    map: HashMap<u64, (usize, bool)>,
    instrs: Vec<Instr>,
    constants: Vec<(usize, Tensor)>,
    device: Py<PyDevice>,
    /// The first reason the trace cannot be a plan, and whether it is an autodiff tensor.
    error: Option<(String, bool)>,
}

impl Recorder {
    fn slot(&mut self) -> usize {
        self.slots += 1;
        self.slots - 1
    }

    fn fail(&mut self, reason: String) {
        self.error.get_or_insert((reason, false));
    }

    fn constant(&mut self, t: &PyTensor) -> usize {
        if let Some(&(s, _)) = self.map.get(&t.serial) {
            return s;
        }
        let s = self.slot();
        self.constants.push((s, t.t.clone()));
        self.map.insert(t.serial, (s, false));
        settle(t.serial, None);
        s
    }

    /// The slot `t` is read from, or `None` after recording why it cannot be read.
    fn read(&mut self, op: &str, t: &PyTensor) -> Option<(usize, bool)> {
        if t.node.is_some() || t.dev().autodiff {
            self.error.get_or_insert((format!("`{op}` reads a tensor on an autodiff device; trace the module's valid() copy, on a device without autodiff"), true));
            return None;
        }
        if let Some(&found) = self.map.get(&t.serial) {
            return Some(found);
        }
        if let Some(by) = untraced_by(t.serial) {
            self.fail(format!("`{op}` reads a tensor made by `{by}`, which has no plan instruction (ferrum.jit.trace cannot record it)"));
            return None;
        }
        Some((self.constant(t), false))
    }
}

fn with_recorder(f: impl FnOnce(&mut Recorder)) {
    RECORDER.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            f(rec);
        }
    });
}

/// Record `op` (a plan instruction name) with `attrs`, reading `inputs` (`None`: an absent
/// optional input) and writing `outputs`.
pub fn note(op: &str, attrs: impl FnOnce() -> Vec<(&'static str, Attr)>, inputs: &[Option<&PyTensor>], outputs: &[&PyTensor]) {
    if !active() {
        return;
    }
    with_recorder(|rec| {
        if rec.error.is_some() {
            return;
        }
        for t in inputs.iter().flatten().chain(outputs.iter()) {
            if t.t.dtype().is_storage_only() {
                rec.fail(format!("`{op}` runs on {} values; ferrum.jit.trace records f32, f64, i64 and bool tensors", t.t.dtype()));
                return;
            }
        }
        let mut slots = Vec::with_capacity(inputs.len());
        let mut dynamic = false;
        for t in inputs {
            match t {
                None => slots.push(None),
                Some(t) => match rec.read(op, t) {
                    Some((s, d)) => {
                        slots.push(Some(s));
                        dynamic |= d;
                    }
                    None => return,
                },
            }
        }
        if !dynamic {
            // Folded: the result of constants is a constant.
            for o in outputs {
                rec.constant(o);
            }
            return;
        }
        let mut outs = Vec::with_capacity(outputs.len());
        for o in outputs {
            let s = rec.slot();
            rec.map.insert(o.serial, (s, true));
            settle(o.serial, None);
            outs.push(s);
        }
        let label = format!("{op} #{}", rec.instrs.len());
        let shapes = outputs.iter().map(|o| o.t.shape().to_vec()).collect();
        rec.instrs.push((op.to_string(), attrs(), slots, outs, label, shapes));
    });
}

/// `out` is `src` (a view or copy with the same values): it reads the same slot.
pub fn alias(src: &PyTensor, out: &PyTensor) {
    if !active() {
        return;
    }
    with_recorder(|rec| {
        if let Some(&found) = rec.map.get(&src.serial) {
            rec.map.insert(out.serial, found);
            settle(out.serial, None);
        } else {
            settle(out.serial, untraced_by(src.serial));
        }
    });
}

/// A scalar as plan attributes (`value`, and `int` for an integer); `None` for a Bool.
pub fn scalar_attrs(s: Scalar) -> Option<Vec<(&'static str, Attr)>> {
    match s {
        Scalar::Float(v) => Some(vec![("value", Attr::Float(v)), ("int", Attr::Int(0))]),
        Scalar::Int(v) => Some(vec![("value", Attr::Int(v)), ("int", Attr::Int(1))]),
        Scalar::Bool(_) => None,
    }
}

/// Record the method or function `name` of `x` (with `dim` when it takes one) when it has an
/// instruction: the activations and reductions generated by macros share this call.
pub fn note_named(name: &str, dim: Option<isize>, x: &PyTensor, out: &PyTensor) {
    let op = match name {
        "relu" | "gelu" | "silu" | "softmax" => format!("t_{name}"),
        _ if DimMethod::ALL.iter().any(|m| m.name() == name) => format!("t_{name}"),
        _ => return,
    };
    note(&op, || dim.map(|d| vec![("dim", Attr::Int(d as i64))]).unwrap_or_default(), &[Some(x)], &[out]);
}

/// Record that `op` cannot be traced (a Bool scalar, an argument with no attribute form).
pub fn refuse(op: &str, reason: &str) {
    if !active() {
        return;
    }
    with_recorder(|rec| rec.fail(format!("`{op}`: {reason}")));
}

/// Start recording on this thread; `inputs` fill slots 0.. in order.
#[pyfunction]
pub fn _trace_begin(py: Python<'_>, inputs: Vec<PyRef<'_, PyTensor>>, device: Py<PyDevice>) -> PyResult<()> {
    if active() {
        return Err(backend_error(py, "ferrum.jit.trace: a trace is already recording on this thread (traces do not nest)"));
    }
    if device.get().autodiff {
        return Err(backend_error(py, "ferrum.jit.trace: the device has autodiff; traced plans run without gradients, so trace the valid() module on its inner device"));
    }
    let mut rec = Recorder { slots: 0, map: HashMap::new(), instrs: Vec::new(), constants: Vec::new(), device, error: None };
    for (i, t) in inputs.iter().enumerate() {
        if t.node.is_some() || t.dev().autodiff {
            return Err(backend_error(py, format!("ferrum.jit.trace: input {i} lives on an autodiff device; traced plans run without gradients")));
        }
        let s = rec.slot();
        rec.map.insert(t.serial, (s, true));
    }
    RECORDER.with(|r| *r.borrow_mut() = Some(rec));
    set_active(true);
    Ok(())
}

/// The recording, as `(slots, instructions, constants, outputs)` with instructions
/// `(op, attrs, inputs, outputs, label, output shapes)`; stops recording. Raises `BackendError` when the
/// trace read a tensor on an autodiff device, `ValueError` with the first other reason it cannot run as a plan.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn _trace_end<'py>(
    py: Python<'py>,
    outputs: Vec<PyRef<'py, PyTensor>>,
) -> PyResult<(usize, Vec<TracedInstr<'py>>, Vec<(usize, PyTensor)>, Vec<usize>)> {
    let Some(mut rec) = RECORDER.with(|r| r.borrow_mut().take()) else {
        set_active(false);
        return Err(pyo3::exceptions::PyValueError::new_err("ferrum.jit.trace: no trace is recording on this thread"));
    };
    let mut outs = Vec::with_capacity(outputs.len());
    for t in &outputs {
        if let Some((s, _)) = rec.read("the traced function's result", t) {
            outs.push(s);
        }
    }
    set_active(false);
    match rec.error.take() {
        Some((reason, true)) => return Err(backend_error(py, format!("ferrum.jit.trace: {reason}"))),
        Some((reason, false)) => return Err(pyo3::exceptions::PyValueError::new_err(reason)),
        None => {}
    }
    let mut instrs = Vec::with_capacity(rec.instrs.len());
    for (op, attrs, ins, o, label, shapes) in rec.instrs {
        let d = PyDict::new(py);
        for (k, v) in attrs {
            match v {
                Attr::Int(i) => d.set_item(k, i)?,
                Attr::Float(f) => d.set_item(k, f)?,
                Attr::Ints(is) => d.set_item(k, is)?,
                Attr::Str(s) => d.set_item(k, s)?,
            }
        }
        instrs.push((op, d, ins, o, label, shapes));
    }
    let device = rec.device;
    let constants = rec.constants.into_iter().map(|(s, t)| (s, PyTensor::new(t, device.clone_ref(py)))).collect();
    Ok((rec.slots, instrs, constants, outs))
}

/// An instruction as Python receives it: `(op, attrs, inputs, outputs, label, output shapes)`.
type TracedInstr<'py> = (String, Bound<'py, PyDict>, Vec<Option<usize>>, Vec<usize>, String, Vec<Vec<usize>>);

/// Stop recording and drop what was recorded (after the traced call raised).
#[pyfunction]
pub fn _trace_abort() {
    set_active(false);
    RECORDER.with(|r| *r.borrow_mut() = None);
}

/// The native call in progress (`None` when it returned), for naming an op with no instruction.
#[pyfunction]
#[pyo3(signature = (name = None))]
pub fn _trace_call(name: Option<String>) {
    set_call(name);
}

/// Whether a trace is recording on this thread.
#[pyfunction]
pub fn _trace_active() -> bool {
    active()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, _trace_begin, _trace_end, _trace_abort, _trace_call, _trace_active);
    Ok(())
}
