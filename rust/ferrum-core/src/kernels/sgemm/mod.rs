//! ferrum's own f32 GEMM for x86-64 with AVX2 and FMA, BLIS-style: packed
//! operand blocks sized for the caches, a 6x16 register-tile microkernel,
//! and a split of the output over rayon's threads.

mod avx2;
mod driver;
mod pack;

pub use driver::{available, sgemm, Operand};

#[cfg(test)]
mod tests;
