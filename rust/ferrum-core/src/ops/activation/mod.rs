//! Activation functions, each one fused pass (or, for the softmax family, one
//! kernel) instead of a chain of tensor ops. Float tensors only.

mod glu;
mod pointwise;
mod prelu;
mod softmax;
