//! `Var`: a tensor with an optional graph node.

use std::sync::Arc;

use super::checkpoint::{Checkpointing, Recompute, Saved};
use super::{Backward, Node};
use crate::error::Result;
use crate::tensor::Tensor;

#[derive(Debug, Clone)]
pub struct Var {
    pub value: Tensor,
    pub node: Option<Arc<Node>>,
}

impl Var {
    /// A tensor outside any graph.
    pub fn constant(value: Tensor) -> Var {
        Var { value, node: None }
    }

    /// A leaf of the graph whose gradient backward will report.
    pub fn leaf(value: Tensor) -> Var {
        Var::leaf_with(value, Checkpointing::None)
    }

    /// A leaf whose graph checkpoints as `checkpointing` says.
    pub fn leaf_with(value: Tensor, checkpointing: Checkpointing) -> Var {
        let node = Node::leaf(value.shape(), checkpointing);
        Var { value, node: Some(node) }
    }

    pub fn requires_grad(&self) -> bool {
        self.node.is_some()
    }

    /// Burn's `set_require_grad`: a leaf when true, a constant when false.
    pub fn set_require_grad(&self, require: bool) -> Var {
        self.set_require_grad_with(require, Checkpointing::None)
    }

    /// `set_require_grad`, a new leaf checkpointing as `checkpointing` says.
    pub fn set_require_grad_with(&self, require: bool, checkpointing: Checkpointing) -> Var {
        match (require, &self.node) {
            (true, Some(n)) if n.is_leaf() && n.checkpointing == checkpointing => self.clone(),
            (true, _) => Var::leaf_with(self.value.clone(), checkpointing),
            (false, _) => Var::constant(self.value.clone()),
        }
    }

    /// What a backward keeps of this value: the value, or under balanced
    /// checkpointing, when a memory-bound op made it, the way to recompute it.
    pub fn saved(&self) -> Saved {
        match self.node.as_ref().and_then(|n| n.recompute()) {
            Some(r) => Saved::Lazy(r),
            None => Saved::Kept(self.value.clone()),
        }
    }

    /// How this var's graph checkpoints (`None` for constants).
    pub fn checkpointing(&self) -> Checkpointing {
        self.node.as_ref().map(|n| n.checkpointing).unwrap_or_default()
    }

    /// The same value cut from the graph.
    pub fn detach(&self) -> Var {
        Var::constant(self.value.clone())
    }

    /// An f16 or bf16 var that is tracked, widened to f32 by a
    /// differentiable cast; `None` otherwise. The element-wise kernels read
    /// half floats directly, but the backward passes of their ops compute
    /// in f32 and f64: a tracked half input runs the op on this widened
    /// value instead (and the caller casts the result back), so its
    /// gradient is computed in f32 and reaches it in its own dtype.
    pub fn half_tracked(&self) -> Option<crate::Result<Var>> {
        let half = matches!(self.value.dtype(), crate::DType::F16 | crate::DType::BF16);
        (half && self.node.is_some()).then(|| self.cast(crate::DType::F32))
    }

    /// The node id, if this var is tracked.
    pub fn id(&self) -> Option<u64> {
        self.node.as_ref().map(|n| n.id)
    }
}

/// Wrap an op's output: a node is recorded only when some input is tracked,
/// and `make` (which captures what backward needs) runs only then.
pub fn record<B: Backward + 'static>(value: Tensor, inputs: &[&Var], make: impl FnOnce() -> B) -> Var {
    if inputs.iter().all(|v| v.node.is_none()) {
        return Var::constant(value);
    }
    let parents = inputs.iter().map(|v| v.node.clone()).collect();
    let node = Node::op(parents, Box::new(make()), value.shape(), None);
    Var { value, node: Some(node) }
}

/// The output of a memory-bound op, for a backward that reads it.
pub struct Output {
    value: Tensor,
    recipe: Option<Arc<Recompute>>,
}

impl Output {
    /// Kept, or under balanced checkpointing recomputed when read.
    pub fn saved(self) -> Saved {
        match self.recipe {
            Some(r) => Saved::Lazy(r),
            None => Saved::Kept(self.value),
        }
    }
}

/// `record` for a memory-bound op (element-wise, activation, view): under
/// balanced checkpointing its output is not kept for backward but recomputed
/// by `forward` from the inputs. `make` receives the op's [`Output`] (for
/// backwards that read it: exp, sigmoid, ...) and keeps its inputs through
/// [`Var::saved`].
pub fn record_lazy<B: Backward + 'static>(
    value: Tensor,
    inputs: &[&Var],
    forward: impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static,
    make: impl FnOnce(Output) -> B,
) -> Var {
    if inputs.iter().all(|v| v.node.is_none()) {
        return Var::constant(value);
    }
    let parents: Vec<_> = inputs.iter().map(|v| v.node.clone()).collect();
    let recipe = match Node::inherited(&parents) {
        Checkpointing::Balanced => Recompute::new(inputs.iter().map(|v| v.saved()).collect(), forward),
        Checkpointing::None => None,
    };
    let backward = make(Output { value: value.clone(), recipe: recipe.clone() });
    let node = Node::op(parents, Box::new(backward), value.shape(), recipe);
    Var { value, node: Some(node) }
}
