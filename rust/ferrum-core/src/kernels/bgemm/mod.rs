//! bf16 GEMM on AVX512_BF16: bf16 operands, f32 accumulation, a bf16
//! result rounded once at the end.
//!
//! `vdpbf16ps` multiplies pairs of bf16 along the shared dimension and adds
//! both products to an f32 lane, so both operands are packed as pairs of
//! consecutive k: A in panels of [`MR`] rows (one 32-bit pair per row and
//! k step, broadcast to every lane), B in panels of [`NR`] columns (one
//! pair per column and k step, two registers wide). A 12 x 32 tile keeps its
//! 24 accumulators in registers over the whole of k, so the result is
//! rounded to bf16 once, as the f32 path rounds it when it narrows.
//!
//! Where the CPU lacks AVX512_BF16 (or is not x86-64), or runs it slower
//! than f32 FMA, [`preferred`] is false and the product is widened to f32
//! (`gemm_half.rs`).

#[cfg(target_arch = "x86_64")]
mod amx;
#[cfg(target_arch = "x86_64")]
mod amx_pack;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod driver;
#[cfg(target_arch = "x86_64")]
mod pack;

#[cfg(target_arch = "x86_64")]
pub use amx::bgemm_amx;
#[cfg(target_arch = "x86_64")]
pub use driver::bgemm;
#[cfg(target_arch = "x86_64")]
pub use pack::Operand16;

/// Rows of the register tile.
pub const MR: usize = 12;
/// Columns of the register tile: two registers of 16 f32 lanes.
pub const NR: usize = 32;

/// Whether bf16 products should run on this kernel rather than widened to
/// the f32 one: where `vdpbf16ps` (two multiply-adds a lane) outruns f32
/// FMA. AMD's Zen 4 and 5 run it at full rate (torch's bf16 products there
/// at 295 GF/s against ferrum's f32 at 131-158 on two cores); Intel's
/// Xeons (Sapphire Rapids and later, whose fast path is AMX) issue it about
/// once every two cycles: 1.4 G instructions/s a core against 6.0 G for
/// FMA (87 against 192 GF/s), which made this kernel 157 GF/s on two
/// cores against 277 for f32. A rule by vendor, not a timing at start-up,
/// so that the same machine always rounds alike.
///
/// Decided once: `cpuid` traps to the hypervisor in a virtual machine, and
/// asked on every product it took about 9 us, 30 times the 12 x 8 x 12
/// product of one attention head it chose the kernel for.
pub fn preferred() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static AMD: OnceLock<bool> = OnceLock::new();
        let amd = *AMD.get_or_init(|| {
            let vendor = std::arch::x86_64::__cpuid(0);
            (vendor.ebx, vendor.edx, vendor.ecx) == (u32::from_le_bytes(*b"Auth"), u32::from_le_bytes(*b"enti"), u32::from_le_bytes(*b"cAMD"))
        });
        amd && available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU runs the bf16 kernel (AVX-512 F, BW, VL and BF16), detected once.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx512bf16")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
#[cfg(all(test, target_arch = "x86_64"))]
mod tests_amx;
