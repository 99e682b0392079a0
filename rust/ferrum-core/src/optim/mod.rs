//! Fused optimizer updates. Each step is one pass over contiguous buffers
//! that reads the gradient and rewrites the parameter and the optimizer
//! state together, reusing any buffer this call owns alone (SGD, AdaGrad,
//! RMSProp) or reading the old state and writing new buffers in the same
//! pass (Adam, whose old state the caller always still holds). The formulas are
//! Burn's (`burn-optim`), so a model trains the same in both.

mod buffers;

pub mod adagrad;
pub mod adam;
pub mod clipping;
pub mod rmsprop;
pub mod sgd;

pub use adagrad::{adagrad_step, AdaGradOptions};
pub use adam::{adam_step, AdamOptions};
pub use clipping::{clip_by_norm, clip_by_value};
pub use rmsprop::{rmsprop_step, RmsPropOptions, RmsPropState};
pub use sgd::{sgd_step, Momentum, SgdOptions};
