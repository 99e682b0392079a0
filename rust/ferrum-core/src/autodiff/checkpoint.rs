//! Gradient checkpointing (Burn's `BalancedCheckpointing`): under it, the
//! outputs of memory-bound ops (element-wise arithmetic, activations, views)
//! are not kept for backward. A backward that needs such a value gets a
//! [`Saved::Lazy`] handle instead, and backward recomputes the value from the
//! nearest kept ancestors (outputs of compute-bound ops such as matmul and
//! convolution, or leaves) when it first asks for it.
//!
//! Recomputation runs the same kernels on the same inputs, so gradients
//! equal those of the plain autodiff backend bit for bit.

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// How much the autodiff graph keeps for backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Checkpointing {
    /// Every op keeps what its backward reads (Burn's `NoCheckpointing`).
    #[default]
    None,
    /// Memory-bound ops keep nothing: their outputs are recomputed in
    /// backward (Burn's `BalancedCheckpointing`).
    Balanced,
}

/// A value a backward reads: kept, or recomputed on first use.
#[derive(Clone)]
pub enum Saved {
    Kept(Tensor),
    Lazy(Arc<Recompute>),
}

impl Saved {
    /// The value, recomputing it (and the lazy values it depends on) once.
    pub fn get(&self) -> Result<Tensor> {
        match self {
            Saved::Kept(t) => Ok(t.clone()),
            Saved::Lazy(r) => r.get(),
        }
    }
}

impl std::fmt::Debug for Saved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Saved::Kept(t) => f.debug_tuple("Kept").field(&t.shape()).finish(),
            Saved::Lazy(_) => f.write_str("Lazy"),
        }
    }
}

type Forward = Box<dyn Fn(&[Tensor]) -> Result<Tensor> + Send + Sync>;

enum State {
    Pending { inputs: Vec<Saved>, forward: Forward },
    Done(Tensor),
}

/// How to recompute one memory-bound op's output: its forward and its
/// inputs (themselves kept or lazy). Once computed, the value replaces the
/// recipe, which lets go of the inputs; the value lives as long as some
/// backward or recipe still holds this handle.
pub struct Recompute {
    state: Mutex<State>,
    /// Memory-bound ops between this value and the nearest kept ones.
    depth: u32,
}

/// The longest chain of memory-bound ops recomputed from one kept value;
/// an op that would lengthen it keeps its output instead. Without a bound,
/// a residual stream (additions and element-wise normalisation, all
/// memory-bound) would be kept nowhere: recomputing a late layer's input
/// would rebuild every layer's from the first, all of them alive at once
/// until backward reached them, which holds more than keeping them. Eight
/// covers a normalisation's element-wise chain and an activation after it.
pub const MAX_RECOMPUTE_DEPTH: u32 = 8;

impl Recompute {
    /// The recipe over its inputs (values it holds, or other recipes), or
    /// `None` when its chain would exceed [`MAX_RECOMPUTE_DEPTH`] (the op
    /// should keep its output).
    pub fn new(inputs: Vec<Saved>, forward: impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static) -> Option<Arc<Recompute>> {
        let below = inputs.iter().map(|s| if let Saved::Lazy(r) = s { r.depth } else { 0 }).max().unwrap_or(0);
        let depth = below + 1;
        if depth > MAX_RECOMPUTE_DEPTH {
            return None;
        }
        Some(Arc::new(Recompute { state: Mutex::new(State::Pending { inputs, forward: Box::new(forward) }), depth }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn done(&self) -> Option<Tensor> {
        match &*self.lock() {
            State::Done(t) => Some(t.clone()),
            State::Pending { .. } => None,
        }
    }

    /// The value. Evaluated with an explicit stack, inputs first.
    pub fn get(self: &Arc<Self>) -> Result<Tensor> {
        if let Some(t) = self.done() {
            return Ok(t);
        }
        let mut stack = vec![self.clone()];
        while let Some(top) = stack.last().cloned() {
            let mut state = top.lock();
            let State::Pending { inputs, forward } = &*state else {
                stack.pop();
                continue;
            };
            let waiting: Vec<Arc<Recompute>> = inputs
                .iter()
                .filter_map(|s| match s {
                    Saved::Lazy(r) if r.done().is_none() => Some(r.clone()),
                    _ => None,
                })
                .collect();
            if !waiting.is_empty() {
                drop(state);
                stack.extend(waiting);
                continue;
            }
            let values = inputs
                .iter()
                .map(|s| match s {
                    Saved::Kept(t) => Ok(t.clone()),
                    Saved::Lazy(r) => r.done().ok_or_else(|| Error::invalid("backward", "a checkpointed input was not recomputed")),
                })
                .collect::<Result<Vec<_>>>()?;
            let value = forward(&values)?;
            *state = State::Done(value);
            stack.pop();
        }
        Ok(self.done().expect("evaluated above"))
    }
}

impl Drop for Recompute {
    /// Let go of the inputs iteratively: a long chain of recipes dropped
    /// recursively would overflow the stack, as a long graph would.
    fn drop(&mut self) {
        let mut stack = Vec::new();
        let take = |state: &mut State, stack: &mut Vec<Arc<Recompute>>| {
            if let State::Pending { inputs, .. } = state {
                stack.extend(inputs.drain(..).filter_map(|s| match s {
                    Saved::Lazy(r) => Some(r),
                    Saved::Kept(_) => None,
                }));
            }
        };
        take(self.state.get_mut().unwrap_or_else(|p| p.into_inner()), &mut stack);
        while let Some(r) = stack.pop() {
            if let Ok(mut inner) = Arc::try_unwrap(r) {
                take(inner.state.get_mut().unwrap_or_else(|p| p.into_inner()), &mut stack);
            }
        }
    }
}

#[cfg(test)]
#[path = "checkpoint_tests.rs"]
mod tests;
