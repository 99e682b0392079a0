//! ferrum's own f32 GEMM for x86-64, BLIS-style: packed operand blocks
//! sized for the caches, a register-tile microkernel (12x32 on AVX-512,
//! 6x16 on AVX2 and FMA, picked at run time), and a split of the output
//! over the thread team.
//!
//! On any other architecture there is no microkernel (`absent.rs`): `Kernel`
//! has no variant, `available()` is false, and every f32 product takes the
//! `gemm` crate's path, as it does on an x86-64 CPU without AVX2.

/// `call` with the constant `R` set to the tile row count `rows`, each of
/// the listed counts compiled as its own kernel and any other count (the
/// full tile) as `full`: a tile cut short by the last rows of a matrix
/// keeps only those rows' accumulators.
#[cfg(target_arch = "x86_64")]
macro_rules! by_rows {
    ($rows:expr, [$($r:literal),*], $full:expr, $R:ident => $call:expr) => {
        match $rows {
            $($r => {
                const $R: usize = $r;
                $call
            })*
            _ => {
                const $R: usize = $full;
                $call
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod conv;
#[cfg(target_arch = "x86_64")]
mod conv_positions;
#[cfg(target_arch = "x86_64")]
mod conv_rows;
#[cfg(target_arch = "x86_64")]
mod driver;
#[cfg(target_arch = "x86_64")]
mod operand;
#[cfg(target_arch = "x86_64")]
mod pack;
#[cfg(target_arch = "x86_64")]
mod prepacked;
#[cfg(target_arch = "x86_64")]
mod shared;
#[cfg(target_arch = "x86_64")]
mod small;
#[cfg(target_arch = "x86_64")]
mod tail;
#[cfg(target_arch = "x86_64")]
mod tile;
#[cfg(target_arch = "x86_64")]
mod weight_cache;

#[cfg(target_arch = "x86_64")]
pub use conv::conv_forward;
#[cfg(target_arch = "x86_64")]
pub use driver::{available, sgemm, Kernel};
#[cfg(target_arch = "x86_64")]
pub use operand::Operand;
#[cfg(target_arch = "x86_64")]
pub use prepacked::PackedB;
#[cfg(target_arch = "x86_64")]
pub use small::narrow_applies;

#[cfg(not(target_arch = "x86_64"))]
mod absent;
#[cfg(not(target_arch = "x86_64"))]
pub use absent::{available, sgemm, Kernel, Operand, PackedB};

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
