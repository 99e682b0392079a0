//! `Var`: a tensor with an optional graph node.

use std::sync::Arc;

use super::{Backward, Node};
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
        let node = Node::leaf(value.shape());
        Var { value, node: Some(node) }
    }

    pub fn requires_grad(&self) -> bool {
        self.node.is_some()
    }

    /// Burn's `set_require_grad`: a leaf when true, a constant when false.
    pub fn set_require_grad(&self, require: bool) -> Var {
        match (require, &self.node) {
            (true, Some(n)) if n.is_leaf() => self.clone(),
            (true, _) => Var::leaf(self.value.clone()),
            (false, _) => Var::constant(self.value.clone()),
        }
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
    let node = Node::op(parents, Box::new(make()), value.shape());
    Var { value, node: Some(node) }
}
