//! ferrum's own f32 GEMM for x86-64, BLIS-style: packed operand blocks
//! sized for the caches, a register-tile microkernel (12x32 on AVX-512,
//! 6x16 on AVX2 and FMA, picked at run time), and a split of the output
//! over the thread team.

mod avx2;
mod avx512;
mod driver;
mod pack;
mod prepacked;
mod shared;

pub use driver::{available, sgemm, Kernel, Operand};
pub use prepacked::PackedB;

#[cfg(test)]
mod tests;
