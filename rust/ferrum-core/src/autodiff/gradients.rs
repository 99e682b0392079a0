//! The result of `backward()`: one gradient per tracked leaf, by node id.

use std::collections::HashMap;

use super::NodeId;
use crate::tensor::Tensor;

#[derive(Debug, Default, Clone)]
pub struct Gradients {
    grads: HashMap<NodeId, Tensor>,
}

impl Gradients {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, id: NodeId) -> Option<&Tensor> {
        self.grads.get(&id)
    }

    pub fn remove(&mut self, id: NodeId) -> Option<Tensor> {
        self.grads.remove(&id)
    }

    pub fn insert(&mut self, id: NodeId, grad: Tensor) {
        self.grads.insert(id, grad);
    }

    pub fn len(&self) -> usize {
        self.grads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.grads.is_empty()
    }

    pub fn ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.grads.keys().copied()
    }
}
