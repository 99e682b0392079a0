//! Compute kernels: how loops run (SIMD dispatch, threads, strides), apart
//! from what the ops mean.

pub mod elementwise;
pub mod gemm;
pub mod parallel;
pub mod reduce;
pub mod scan;
pub mod strided;
