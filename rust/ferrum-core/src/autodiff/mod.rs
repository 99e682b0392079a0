//! Reverse-mode autodiff. A [`Var`] is a tensor plus, when it takes part in
//! a gradient computation, a node of the graph. Ops record a node only when
//! an input has one, so tensors that need no gradient pay one `Option`
//! check. Each op's backward lives beside its forward in `crate::ops`.

mod backward;
mod broadcast;
mod checkpoint;
mod gradients;
mod node;
mod var;

pub use backward::{backward, Backward, FnBackward};
pub use broadcast::sum_to_shape;
pub use checkpoint::{Checkpointing, Recompute, Saved, MAX_RECOMPUTE_DEPTH};
pub use gradients::Gradients;
pub use node::{Node, NodeId};
pub use var::{record, record_lazy, Output, Var};
