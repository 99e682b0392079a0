//! int8 GEMM for dynamically quantized linear layers: u8 activations times
//! s8 weights, summed exactly in i32, scaled back to f32 in the epilogue.
//!
//! The weights are quantized once, symmetric per output column (Burn's
//! `Q8S`: `w ≈ scale[j] * q`, `q` in -127..=127), and packed once into the
//! layout the kernel reads ([`PackedQ8`]). The activations are quantized at
//! each call, affine per row (`x ≈ scale[i] * (q - zero[i])`, `q` in
//! 0..=255): a row of the input is one sample, so a sample's range never
//! coarsens another's, and the row pass is needed anyway to pack it.
//!
//! With `acc = Σ_k qx[i,k] * qw[k,j]` exact in i32,
//! `y[i,j] = sx[i] * sw[j] * (acc - zero[i] * colsum[j]) + bias[j]`,
//! where `colsum[j] = Σ_k qw[k,j]` is kept from packing. The sum cannot
//! overflow below k = 66 000 (255 * 127 per product); [`pack_weights`]
//! refuses longer rows.
//!
//! On AVX512-VNNI, `vpdpbusd` multiplies four u8 by four s8 and adds the four
//! products to an i32 lane without intermediate saturation, so both
//! operands are packed as quads of consecutive k (the bf16 kernel's layout
//! with four bytes to a word instead of two halves). Elsewhere a portable
//! tile computes the same sums on the same packing. Both products run the
//! same blocked loop (`blocked`): output blocks split over the team's
//! threads, k in blocks sized for L1, the weight panels reused across the
//! row panels of a block.
//!
//! Where the CPU has AMX-INT8, `tdpbusd` multiplies a 16 x 64 u8 tile by a
//! 64 x 16 s8 tile (stored as 16 rows of quads) into a 16 x 16 i32 tile
//! in one instruction (`amx`). Its B tile is a 16-column half of a weight
//! panel over 16 quads, rows `4 * NR` bytes apart, so the same packed
//! weights serve all three tiles; the activations are packed for it in
//! blocks of 16 rows x 64 bytes.

#[cfg(target_arch = "x86_64")]
mod amx;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod blocked;
mod driver;
mod epilogue;
mod integer;
mod pack;
mod portable;
mod rows;

pub use driver::linear_q8;
pub use integer::{matmul_u8s8, matmul_u8s8_scaled};
pub use pack::{pack_weights, quantize_symmetric_columns, PackedQ8};
pub use rows::{quantize_u8, Rows};

/// Rows of the register tile.
pub const MR: usize = 12;
/// Columns of the register tile: two registers of 16 i32 lanes.
pub const NR: usize = 32;
/// The longest shared dimension whose exact i32 sum cannot overflow:
/// `MAX_K * 255 * 127 < 2^31`.
pub const MAX_K: usize = 66_000;

/// Whether this CPU runs the VNNI kernel (AVX-512 F, BW and VNNI), detected once.
pub fn vnni_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512vnni")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Which tile an int8 product runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// AMX-INT8 tiles (`tdpbusd`), 32 x 32 outputs a step.
    Amx,
    /// The 12 x 32 register tile on AVX512-VNNI (`vpdpbusd`).
    Vnni,
    /// The same tile in plain Rust.
    Portable,
}

impl Path {
    /// The fastest path this CPU (and `FERRUM_AMX`) allows.
    pub(crate) fn best() -> Path {
        Path::Amx.usable()
    }

    /// `self`, or the next slower path where the CPU lacks it.
    pub(crate) fn usable(self) -> Path {
        match self {
            Path::Amx if cfg!(target_arch = "x86_64") && crate::kernels::amx::int8_available() && vnni_available() => Path::Amx,
            Path::Amx | Path::Vnni if vnni_available() => Path::Vnni,
            _ => Path::Portable,
        }
    }

    /// Every path this CPU runs (for the tests).
    #[cfg(test)]
    pub(crate) fn all_usable() -> Vec<Path> {
        let mut paths = vec![Path::Amx, Path::Vnni, Path::Portable];
        paths.retain(|&p| p.usable() == p);
        paths
    }
}

#[cfg(test)]
mod tests;
