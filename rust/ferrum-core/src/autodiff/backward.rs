//! The backward pass: walk the graph from the root in reverse creation order,
//! hand each node its accumulated output gradient, and collect leaf
//! gradients. Each node's backward state is taken (freed) as it runs.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Gradients, Node, NodeId, Var};
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::tensor::Tensor;

/// How an op turns its output gradient into input gradients.
pub trait Backward: Send + Sync {
    fn name(&self) -> &'static str;
    /// One gradient per input slot; `needs[i]` says whether input `i` is
    /// tracked (an untracked slot may return `None` to skip the work).
    fn backward(&self, grad: Tensor, needs: &[bool]) -> Result<Vec<Option<Tensor>>>;
}

/// A backward written as a closure beside its forward.
pub struct FnBackward<F> {
    pub name: &'static str,
    pub f: F,
}

impl<F> FnBackward<F>
where
    F: Fn(Tensor, &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync,
{
    pub fn new(name: &'static str, f: F) -> Self {
        FnBackward { name, f }
    }
}

impl<F> Backward for FnBackward<F>
where
    F: Fn(Tensor, &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync,
{
    fn name(&self) -> &'static str {
        self.name
    }
    fn backward(&self, grad: Tensor, needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        (self.f)(grad, needs)
    }
}

fn collect(root: &Arc<Node>) -> Vec<Arc<Node>> {
    let mut seen = HashMap::new();
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        if seen.contains_key(&n.id) {
            continue;
        }
        stack.extend(n.parents.iter().flatten().cloned());
        seen.insert(n.id, n);
    }
    let mut nodes: Vec<Arc<Node>> = seen.into_values().collect();
    nodes.sort_unstable_by_key(|n| std::cmp::Reverse(n.id));
    nodes
}

fn accumulate(map: &mut HashMap<NodeId, Tensor>, id: NodeId, g: Tensor) -> Result<()> {
    match map.remove(&id) {
        Some(prev) if prev.dtype().is_storage_only() => {
            // An f16 or bf16 leaf used twice: its gradients add in f32 and
            // round once, as the forward ops do.
            let (d, wide) = (prev.dtype(), prev.dtype().compute());
            map.insert(id, prev.cast(wide)?.binary_owned(BinaryOp::Add, g.cast(wide)?)?.cast(d)?);
        }
        Some(prev) => {
            map.insert(id, prev.binary_owned(BinaryOp::Add, g)?);
        }
        None => {
            map.insert(id, g);
        }
    }
    Ok(())
}

/// Gradients of `root` (seeded with ones) with respect to every tracked leaf.
pub fn backward(root: &Var) -> Result<Gradients> {
    let node = root.node.as_ref().ok_or_else(|| {
        Error::invalid("backward", "the tensor does not require grad: no input of the computation was marked with require_grad()")
    })?;
    let mut pending: HashMap<NodeId, Tensor> = HashMap::new();
    pending.insert(node.id, Tensor::ones(root.value.shape(), root.value.dtype()));
    let mut grads = Gradients::new();
    for n in collect(node) {
        // A long backward pass stops between nodes on an interrupt.
        if crate::interrupt::poll() {
            return Err(Error::Interrupted);
        }
        // Every reader of this node's value (its children) ran before it:
        // a recomputed value is let go now.
        n.forget_recompute();
        let Some(g) = pending.remove(&n.id) else { continue };
        if n.is_leaf {
            grads.insert(n.id, g);
            continue;
        }
        let op = n.backward.lock().unwrap_or_else(|p| p.into_inner()).take().ok_or_else(|| {
            Error::invalid("backward", "the graph was already freed by an earlier backward() through this node; rebuild it by running the forward again")
        })?;
        let needs: Vec<bool> = n.parents.iter().map(Option::is_some).collect();
        let name = op.name();
        let parent_grads = op.backward(g, &needs)?;
        drop(op);
        for (parent, pg) in n.parents.iter().zip(parent_grads) {
            if let (Some(p), Some(pg)) = (parent, pg) {
                if pg.shape() != p.shape.as_slice() {
                    return Err(Error::shapes(name, pg.shape(), &p.shape, "backward produced a gradient whose shape differs from its input's"));
                }
                accumulate(&mut pending, p.id, pg)?;
            }
        }
    }
    Ok(grads)
}
