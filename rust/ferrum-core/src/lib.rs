//! ferrum-core: the CPU tensor engine of ferrum. Pure Rust, no Python.
//!
//! A [`Tensor`] is an immutable value: a shared buffer ([`Storage`]) seen
//! through a [`Layout`] (shape, strides, offset). Views change only the
//! layout; operations return new tensors and never touch their inputs, except
//! that an operation may reuse an input buffer it owns alone.

pub mod autodiff;
pub mod buffer;
pub mod dtype;
pub mod element;
pub mod error;
pub mod interrupt;
pub mod kernels;
pub mod layout;
pub mod ops;
pub mod optim;
pub mod plan;
pub mod quant;
pub mod random;
pub mod record;
pub mod shape;
pub mod storage;
pub mod tensor;
pub mod vision;

pub use buffer::{Buffer, ForeignOwner};
pub use dtype::{DType, Kind, Scalar};
pub use element::{Element, FloatElement};
pub use half;
pub use error::{Error, Result};
pub use layout::Layout;
pub use random::Distribution;
pub use storage::Storage;
pub use tensor::views::SliceSpec;
pub use tensor::Tensor;

#[cfg(test)]
mod layout_props;
#[cfg(test)]
pub(crate) mod test_util;
