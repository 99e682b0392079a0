//! Compute kernels: how loops run (SIMD dispatch, threads, strides), apart
//! from what the ops mean.

pub mod copy;
pub mod elementwise;
pub mod gemm;
pub mod parallel;
pub mod strided;
