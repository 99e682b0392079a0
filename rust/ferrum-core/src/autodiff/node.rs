//! Graph nodes. Parents are held by `Arc`, so a graph lives exactly as long
//! as some tensor still refers to its output; the backward state (which owns
//! the tensors saved for the gradient) is taken out when backward runs
//! through the node, so a finished backward frees it at once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::checkpoint::{Checkpointing, Recompute};
use super::Backward;

pub type NodeId = u64;

/// Ids grow with creation order, so every node's id is larger than its
/// parents': decreasing id is a valid reverse topological order.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub struct Node {
    pub id: NodeId,
    /// One slot per op input; `None` for inputs that need no gradient.
    pub parents: Vec<Option<Arc<Node>>>,
    /// `None` for leaves, and for op nodes once backward has consumed them.
    pub(crate) backward: Mutex<Option<Box<dyn Backward>>>,
    pub(crate) is_leaf: bool,
    /// Shape of the node's value, to check and reduce incoming gradients.
    pub shape: Vec<usize>,
    /// What the graph keeps for backward: set on leaves, inherited by ops.
    pub checkpointing: Checkpointing,
    /// Under balanced checkpointing, how to recompute the value of a
    /// memory-bound op for the backwards that read it; taken when backward
    /// passes the node (every reader ran by then).
    pub(crate) recompute: Mutex<Option<Arc<Recompute>>>,
}

impl Node {
    pub fn leaf(shape: &[usize], checkpointing: Checkpointing) -> Arc<Node> {
        Arc::new(Node {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            parents: Vec::new(),
            backward: Mutex::new(None),
            is_leaf: true,
            shape: shape.to_vec(),
            checkpointing,
            recompute: Mutex::new(None),
        })
    }

    /// An op node; it checkpoints as its parents do (balanced if any is).
    pub fn op(parents: Vec<Option<Arc<Node>>>, backward: Box<dyn Backward>, shape: &[usize], recompute: Option<Arc<Recompute>>) -> Arc<Node> {
        let checkpointing = Self::inherited(&parents);
        Arc::new(Node {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            parents,
            backward: Mutex::new(Some(backward)),
            is_leaf: false,
            shape: shape.to_vec(),
            checkpointing,
            recompute: Mutex::new(recompute),
        })
    }

    pub(crate) fn inherited(parents: &[Option<Arc<Node>>]) -> Checkpointing {
        if parents.iter().flatten().any(|p| p.checkpointing == Checkpointing::Balanced) {
            Checkpointing::Balanced
        } else {
            Checkpointing::None
        }
    }

    pub(crate) fn recompute(&self) -> Option<Arc<Recompute>> {
        self.recompute.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn forget_recompute(&self) {
        self.recompute.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    pub fn is_leaf(&self) -> bool {
        self.is_leaf
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node").field("id", &self.id).field("leaf", &self.is_leaf).field("shape", &self.shape).finish()
    }
}

impl Drop for Node {
    /// Unlink parents iteratively: dropping a long chain recursively would
    /// overflow the stack (a 100k-op graph is a normal training loop).
    fn drop(&mut self) {
        let mut stack: Vec<Arc<Node>> = self.parents.drain(..).flatten().collect();
        while let Some(node) = stack.pop() {
            if let Ok(mut inner) = Arc::try_unwrap(node) {
                stack.extend(inner.parents.drain(..).flatten());
            }
        }
    }
}
