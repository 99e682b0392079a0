//! Operations, one file per family. Each op validates its inputs, dispatches
//! on dtype once, and runs a kernel from `crate::kernels`.

pub mod activation;
pub mod assign;
pub mod attention;
pub mod binary;
pub mod bitwise;
pub mod compare;
pub mod concat;
pub mod cross;
pub mod conv;
pub mod conv_fused;
pub mod conv3d;
pub mod cumulative;
pub mod deform_conv;
pub mod float_checks;
pub mod grid_sample;
pub mod index;
pub mod interpolate;
pub mod layer_norm;
pub mod logical;
pub mod mask;
pub mod matmul;
pub mod one_hot;
pub mod pad;
pub mod pad_modes;
pub mod pool;
pub mod recurrent;
pub mod reduce;
pub mod rms_norm;
pub mod sort;
pub mod stats;
pub mod triangular;
pub mod unary;
pub mod unfold4d;
pub mod windows;
