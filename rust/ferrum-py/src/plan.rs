//! `Plan`: a compiled graph run by the engine without returning to Python
//! between ops (`ferrum_core::plan`). Converts the builder's lists and dicts
//! and the tensors; the GIL is released for the whole run.

use std::collections::HashMap;

use ferrum_core::plan::{dtype_named, Attr, InputSpec, Plan, RawInstr};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::device::PyDevice;
use crate::error::{backend_error, engine, IntoPyResult};
use crate::tensor::PyTensor;

/// One instruction as Python gives it: `(op, attrs, inputs, outputs, free, label)`.
type RawTuple<'py> = (String, Bound<'py, PyDict>, Vec<Option<usize>>, Vec<usize>, Vec<usize>, String);

/// A compiled graph: instructions over numbered value slots, run in the engine.
///
/// Built by `ferrum.onnx.plan` for one input signature (shapes and dtypes);
/// see `ferrum_core::plan` for the instruction set. `run` checks each input's
/// shape and dtype against the signature and raises `FerrumError` naming the
/// instruction (and its source node) that fails.
#[pyclass(frozen, name = "Plan", module = "ferrum")]
pub struct PyPlan {
    plan: Plan,
    device: Py<PyDevice>,
}

fn attr_value(op: &str, key: &str, v: &Bound<'_, PyAny>) -> PyResult<Attr> {
    if v.is_instance_of::<PyBool>() {
        return Ok(Attr::Int(i64::from(v.extract::<bool>()?)));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(Attr::Int(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Attr::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Attr::Str(v.extract()?));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        if let Ok(ints) = v.extract::<Vec<i64>>() {
            return Ok(Attr::Ints(ints));
        }
    }
    Err(PyTypeError::new_err(format!(
        "Plan: instruction {op:?}: attribute {key:?} must be an int, float, str or list of ints, found {}",
        v.get_type().name()?
    )))
}

#[pymethods]
impl PyPlan {
    #[new]
    #[pyo3(signature = (slots, instructions, constants, inputs, outputs, device))]
    fn new(
        py: Python<'_>,
        slots: usize,
        instructions: Vec<RawTuple<'_>>,
        constants: Vec<(usize, PyRef<'_, PyTensor>)>,
        inputs: Vec<(usize, Vec<usize>, String)>,
        outputs: Vec<usize>,
        device: Py<PyDevice>,
    ) -> PyResult<Self> {
        if device.get().autodiff {
            return Err(backend_error(py, "Plan: plans run on a device without autodiff (gradients are not recorded)"));
        }
        let mut raw = Vec::with_capacity(instructions.len());
        for (op, attrs, ins, outs, free, label) in instructions {
            let mut map = HashMap::new();
            for (k, v) in attrs.iter() {
                let key: String = k.extract()?;
                let value = attr_value(&op, &key, &v)?;
                map.insert(key, value);
            }
            raw.push(RawInstr { op, attrs: map, inputs: ins, outputs: outs, free, label });
        }
        let mut consts = Vec::with_capacity(constants.len());
        for (slot, t) in constants {
            if t.node.is_some() {
                return Err(backend_error(py, format!("Plan: constant for slot {slot} is tracked by autodiff; detach() it")));
            }
            consts.push((slot, t.t.clone()));
        }
        let mut specs = Vec::with_capacity(inputs.len());
        for (slot, shape, dtype) in inputs {
            let dtype = dtype_named(&dtype).ok_or_else(|| PyValueError::new_err(format!("Plan: input slot {slot}: unknown dtype {dtype:?}")))?;
            specs.push(InputSpec { slot, shape, dtype });
        }
        let plan = Plan::build(slots, raw, consts, specs, outputs).py(py)?;
        Ok(PyPlan { plan, device })
    }

    /// Run the plan on `inputs` (one tensor per plan input, in order); the output tensors.
    fn run(&self, py: Python<'_>, inputs: Vec<PyRef<'_, PyTensor>>) -> PyResult<Vec<PyTensor>> {
        let ts = self.tensors(py, &inputs)?;
        drop(inputs);
        let outs = engine(py, true, || self.plan.run(ts))?;
        Ok(outs.into_iter().map(|t| PyTensor::new(t, self.device.clone_ref(py))).collect())
    }

    /// `run`, timing each instruction: the outputs, and per instruction `(op, label, seconds)`.
    #[allow(clippy::type_complexity)]
    fn profile(&self, py: Python<'_>, inputs: Vec<PyRef<'_, PyTensor>>) -> PyResult<(Vec<PyTensor>, Vec<(String, String, f64)>)> {
        let ts = self.tensors(py, &inputs)?;
        drop(inputs);
        let (outs, rows) = engine(py, true, || self.plan.profile(ts))?;
        Ok((outs.into_iter().map(|t| PyTensor::new(t, self.device.clone_ref(py))).collect(), rows))
    }

    fn __len__(&self) -> usize {
        self.plan.len()
    }

    fn __repr__(&self) -> String {
        format!("Plan({} instructions, {} inputs)", self.plan.len(), self.plan.inputs().len())
    }
}

impl PyPlan {
    /// The engine tensors of `inputs`, none of which may live on an autodiff device.
    fn tensors(&self, py: Python<'_>, inputs: &[PyRef<'_, PyTensor>]) -> PyResult<Vec<ferrum_core::Tensor>> {
        let mut ts = Vec::with_capacity(inputs.len());
        for (i, t) in inputs.iter().enumerate() {
            if t.dev().autodiff || t.node.is_some() {
                return Err(backend_error(py, format!("Plan.run: input {i} lives on an autodiff device; plans run without autodiff")));
            }
            ts.push(t.t.clone());
        }
        Ok(ts)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPlan>()?;
    Ok(())
}
