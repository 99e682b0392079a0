//! Whole recurrent sequences (used by `ferrum.nn.rnn`): the LSTM and GRU
//! cells over every step in one engine call, differentiable.

use ferrum_core::autodiff::Var;
use ferrum_core::ops::recurrent::LstmOptions;
use pyo3::prelude::*;

use crate::tensor::{narrow_to, run_widened, PyTensor};

fn same_backend(py: Python<'_>, op: &str, first: &PyTensor, others: &[&PyTensor]) -> PyResult<()> {
    others.iter().try_for_each(|t| first.same_backend(py, op, t))
}

/// Step `t` of `[batch, seq, hidden]` as `[batch, hidden]`.
fn step(v: &Var, t: usize) -> ferrum_core::Result<Var> {
    let (batch, hidden) = (v.value.shape()[0] as isize, v.value.shape()[2] as isize);
    v.narrow(1, t, 1)?.reshape(&[batch, hidden])
}

/// The LSTM over a batch-first sequence: `xp` `[batch, seq, gates * hidden]`
/// is the input's share of every gate (i, f, g, o; or i, g, o with
/// `input_forget`), `w_hh` `[hidden, gates * hidden]`. Returns every step's
/// hidden state `[batch, seq, hidden]` and the final hidden and cell states.
#[pyfunction]
#[pyo3(signature = (xp, w_hh, h0, c0, reverse = false, clip = None, input_forget = false))]
#[allow(clippy::too_many_arguments)]
pub fn lstm_sequence(
    py: Python<'_>,
    xp: PyRef<'_, PyTensor>,
    w_hh: PyRef<'_, PyTensor>,
    h0: PyRef<'_, PyTensor>,
    c0: PyRef<'_, PyTensor>,
    reverse: bool,
    clip: Option<f64>,
    input_forget: bool,
) -> PyResult<(PyTensor, PyTensor, PyTensor)> {
    same_backend(py, "lstm_sequence", &xp, &[&w_hh, &h0, &c0])?;
    let o = LstmOptions { reverse, clip, input_forget };
    let vars = [Some(xp.to_var()), Some(w_hh.to_var()), Some(h0.to_var()), Some(c0.to_var())];
    let run = |v: &[Option<Var>]| {
        let [x, w, h, c] = [0, 1, 2, 3].map(|i| v[i].as_ref().expect("operand"));
        let y = Var::lstm_sequence(x, w, h, c, &o)?;
        let [_, batch, seq, hidden] = [0, 1, 2, 3].map(|d| y.value.shape()[d] as isize);
        let hs = y.narrow(0, 0, 1)?.reshape(&[batch, seq, hidden])?;
        if seq == 0 {
            return Ok((hs, h.clone(), c.clone()));
        }
        let cs = y.narrow(0, 1, 1)?.reshape(&[batch, seq, hidden])?;
        let last = if reverse { 0 } else { seq as usize - 1 };
        let (h_n, c_n) = (step(&hs, last)?, step(&cs, last)?);
        Ok((hs, h_n, c_n))
    };
    let (hs, h_n, c_n) = run_widened(py, true, &vars, run)?;
    let narrow = |v: Var| narrow_to(py, xp.t.dtype(), v).map(|v| xp.wrap_var(py, v));
    Ok((narrow(hs)?, narrow(h_n)?, narrow(c_n)?))
}

/// The GRU (reset gate after the recurrent weight) over a batch-first
/// sequence: `xp` `[batch, seq, 3 * hidden]` (blocks z, r, n), `w_hh`
/// `[hidden, 3 * hidden]`, `b_hh` `[3 * hidden]` or None. Returns every
/// step's hidden state, `[batch, seq, hidden]`.
#[pyfunction]
pub fn gru_sequence(
    py: Python<'_>,
    xp: PyRef<'_, PyTensor>,
    w_hh: PyRef<'_, PyTensor>,
    b_hh: Option<PyRef<'_, PyTensor>>,
    h0: PyRef<'_, PyTensor>,
) -> PyResult<PyTensor> {
    let mut others: Vec<&PyTensor> = vec![&w_hh, &h0];
    others.extend(b_hh.as_deref());
    same_backend(py, "gru_sequence", &xp, &others)?;
    let vars = [Some(xp.to_var()), Some(w_hh.to_var()), b_hh.as_deref().map(PyTensor::to_var), Some(h0.to_var())];
    let run = |v: &[Option<Var>]| {
        let get = |i: usize| v[i].as_ref().expect("operand");
        Var::gru_sequence(get(0), get(1), v[2].as_ref(), get(3))
    };
    let y = run_widened(py, true, &vars, run)?;
    Ok(xp.wrap_var(py, narrow_to(py, xp.t.dtype(), y)?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, lstm_sequence, gru_sequence);
    Ok(())
}
