//! Operations, one file per family. Each op validates its inputs, dispatches
//! on dtype once, and runs a kernel from `crate::kernels`.

pub mod binary;
pub mod compare;
pub mod matmul;
pub mod unary;
