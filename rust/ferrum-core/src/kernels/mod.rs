//! Compute kernels: how loops run (SIMD dispatch, threads, strides), apart
//! from what the ops mean.

pub mod conv;
#[cfg(test)]
mod conv_activation_tests;
mod conv_batch;
pub mod conv_depthwise;
pub(crate) mod conv_half;
#[cfg(test)]
pub(crate) mod conv_reference;
#[cfg(target_arch = "x86_64")]
pub mod conv_direct;
pub mod alloc;
pub mod amx;
pub mod bgemm;
pub mod copy;
#[cfg(target_arch = "x86_64")]
pub mod cpu_model;
pub mod deform;
pub mod elementwise;
pub mod epilogue;
pub mod erfc;
pub mod exp;
pub mod gemm;
pub mod gemm_half;
pub mod gemv;
pub mod layer_norm;
pub mod im2col;
pub mod log1p;
pub mod matrix;
pub mod parallel;
pub mod placement;
pub mod pool;
mod pool_lanes;
pub mod qgemm;
pub mod recurrent;
pub mod reduce;
pub mod scan;
pub mod sgemm;
pub mod softmax;
pub mod strided;
pub mod tanh;
pub mod team;
#[cfg(test)]
pub(crate) mod test_forms;
pub mod vol2col;
