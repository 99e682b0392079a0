//! Whole recurrent sequences as single differentiable ops: the LSTM and
//! the GRU (reset after the recurrent weight) over every step, forward and
//! backward in [`crate::kernels::recurrent`].
//!
//! Layouts are batch-first. The input's share of every gate (`xp`, biases
//! included) is computed by the caller for the whole sequence with one
//! matmul; the ops take it with the recurrent weight `[hidden, gates *
//! hidden]` whose column blocks are the gates in order (LSTM: i, f, g, o, or
//! i, g, o when the forget gate is `1 - i`; GRU: z, r, n).

use crate::autodiff::{record, FnBackward, Var};
use crate::error::{Error, Result};
use crate::kernels::recurrent::{gru_backward, gru_forward, lstm_backward, lstm_forward, LstmFlags, SeqDims};
use crate::ops::conv::values;
use crate::tensor::Tensor;
use crate::{with_float, Kind};

/// LSTM settings (Burn's `LstmConfig` fields that change the cell).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LstmOptions {
    /// Walk the sequence from its last step to its first.
    pub reverse: bool,
    /// Clamp the cell state to `[-clip, clip]` after each step.
    pub clip: Option<f64>,
    /// The forget gate is `1 - i` (no forget gate block).
    pub input_forget: bool,
}

/// Check `xp [batch, seq, gates * hidden]`, `w [hidden, gates * hidden]`
/// and the `[batch, hidden]` states; return the sizes.
fn check(op: &'static str, xp: &Tensor, w: &Tensor, states: &[(&str, &Tensor)], gates: usize) -> Result<SeqDims> {
    xp.expect_kind(op, Kind::Float)?;
    xp.expect_rank(op, 3)?;
    w.expect_rank(op, 2)?;
    xp.expect_same_dtype(op, w)?;
    let (batch, seq, width) = (xp.shape()[0], xp.shape()[1], xp.shape()[2]);
    let hidden = w.shape()[0];
    if w.shape()[1] != gates * hidden {
        return Err(Error::shapes(op, w.shape(), &[hidden, gates * hidden], format!("the recurrent weight must be [hidden, {gates} * hidden]")));
    }
    if width != gates * hidden {
        return Err(Error::shapes(op, xp.shape(), &[batch, seq, gates * hidden], format!("the input projection must be [batch, seq, {gates} * hidden] with hidden {hidden}")));
    }
    for (name, s) in states {
        xp.expect_same_dtype(op, s)?;
        if s.shape() != [batch, hidden] {
            return Err(Error::shapes(op, s.shape(), &[batch, hidden], format!("the {name} state must be [batch, hidden]")));
        }
    }
    Ok(SeqDims { batch, seq, hidden, gates })
}

fn interrupted<T>(r: Option<T>) -> Result<T> {
    r.ok_or(Error::Interrupted)
}

impl Var {
    /// The LSTM over the whole sequence. Returns `[2, batch, seq, hidden]`:
    /// every step's hidden state, then every step's cell state.
    pub fn lstm_sequence(xp: &Var, w: &Var, h0: &Var, c0: &Var, o: &LstmOptions) -> Result<Var> {
        let op = "lstm_sequence";
        if let Some(clip) = o.clip {
            if clip.is_nan() || clip <= 0.0 {
                return Err(Error::invalid(op, format!("clip must be positive, found {clip}")));
            }
        }
        let gates = if o.input_forget { 3 } else { 4 };
        let d = check(op, &xp.value, &w.value, &[("hidden", &h0.value), ("cell", &c0.value)], gates)?;
        let flags = LstmFlags { reverse: o.reverse, clip: o.clip, coupled: o.input_forget };
        let keep = [xp, w, h0, c0].iter().any(|v| v.requires_grad());
        let shape = [2, d.batch, d.seq, d.hidden];
        with_float!(op, xp.value.dtype(), T => {
            let (y, acts) = interrupted(lstm_forward::<T>(
                &values::<T>(op, &xp.value)?,
                &values::<T>(op, &w.value)?,
                &values::<T>(op, &h0.value)?,
                &values::<T>(op, &c0.value)?,
                d,
                flags,
                keep,
            ))?;
            let y = Tensor::from_vec(y, &shape)?;
            let saved = (y.clone(), w.value.clone(), h0.value.clone(), c0.value.clone());
            Ok(record(y, &[xp, w, h0, c0], move || {
                FnBackward::new(op, move |g, _| {
                    let (y, w, h0, c0) = &saved;
                    let (dxp, dw, dh0, dc0) = interrupted(lstm_backward::<T>(
                        &values::<T>(op, &g)?,
                        &values::<T>(op, y)?,
                        &acts,
                        &values::<T>(op, w)?,
                        &values::<T>(op, h0)?,
                        &values::<T>(op, c0)?,
                        d,
                        flags,
                    ))?;
                    let state = [d.batch, d.hidden];
                    Ok(vec![
                        Some(Tensor::from_vec(dxp, &[d.batch, d.seq, gates * d.hidden])?),
                        Some(Tensor::from_vec(dw, &[d.hidden, gates * d.hidden])?),
                        Some(Tensor::from_vec(dh0, &state)?),
                        Some(Tensor::from_vec(dc0, &state)?),
                    ])
                })
            }))
        })
    }

    /// The GRU over the whole sequence (reset gate applied after the
    /// recurrent weight). Returns every step's hidden state, `[batch, seq, hidden]`.
    pub fn gru_sequence(xp: &Var, w: &Var, bias: Option<&Var>, h0: &Var) -> Result<Var> {
        let op = "gru_sequence";
        let d = check(op, &xp.value, &w.value, &[("hidden", &h0.value)], 3)?;
        if let Some(b) = bias {
            xp.value.expect_same_dtype(op, &b.value)?;
            if b.value.shape() != [3 * d.hidden] {
                return Err(Error::shapes(op, b.value.shape(), &[3 * d.hidden], "the recurrent bias must be [3 * hidden]"));
            }
        }
        let mut inputs = vec![xp, w, h0];
        inputs.extend(bias);
        let keep = inputs.iter().any(|v| v.requires_grad());
        with_float!(op, xp.value.dtype(), T => {
            let b = bias.map(|b| values::<T>(op, &b.value)).transpose()?;
            let (y, acts) = interrupted(gru_forward::<T>(
                &values::<T>(op, &xp.value)?,
                &values::<T>(op, &w.value)?,
                b.as_deref(),
                &values::<T>(op, &h0.value)?,
                d,
                keep,
            ))?;
            let y = Tensor::from_vec(y, &[d.batch, d.seq, d.hidden])?;
            let saved = (y.clone(), w.value.clone(), h0.value.clone());
            Ok(record(y, &inputs, move || {
                FnBackward::new(op, move |g, needs| {
                    let (y, w, h0) = &saved;
                    let (dxp, dw, db, dh0) = interrupted(gru_backward::<T>(
                        &values::<T>(op, &g)?,
                        &values::<T>(op, y)?,
                        &acts,
                        &values::<T>(op, w)?,
                        &values::<T>(op, h0)?,
                        d,
                    ))?;
                    let mut grads = vec![
                        Some(Tensor::from_vec(dxp, &[d.batch, d.seq, 3 * d.hidden])?),
                        Some(Tensor::from_vec(dw, &[d.hidden, 3 * d.hidden])?),
                        Some(Tensor::from_vec(dh0, &[d.batch, d.hidden])?),
                    ];
                    if needs.len() > 3 {
                        grads.push(Some(Tensor::from_vec(db, &[3 * d.hidden])?));
                    }
                    Ok(grads)
                })
            }))
        })
    }
}

#[cfg(test)]
#[path = "recurrent_tests.rs"]
mod tests;
