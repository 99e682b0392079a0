//! Intel AMX: the tile registers and their bf16 and int8 dot products.
//!
//! AMX adds eight tile registers (`tmm0`..`tmm7`, up to 16 rows of 64
//! bytes each) and instructions that multiply two tiles into a third:
//! `tdpbf16ps` (pairs of bf16 along k, f32 sums) and `tdpbusd` (quads of
//! u8 times s8, i32 sums). One instruction does 16 x 16 x 32 bf16 or
//! 16 x 16 x 64 int8 multiply-adds, which is where Sapphire Rapids and
//! later Xeons get their low-precision speed; their AVX-512 `vdpbf16ps`
//! runs at half the rate of f32 FMA (see [`super::bgemm::preferred`]).
//!
//! Rust's AMX intrinsics and target features are not stable, so the few
//! instructions are written as inline assembly ([`tile_load`],
//! [`tile_store`], [`tile_zero`], [`tile_dpbf16ps`], [`tile_dpbusd`]),
//! which the assembler accepts without a target feature; [`bf16_available`]
//! and [`int8_available`] say whether the CPU has them, the OS saves the
//! tile state (XCR0) and Linux granted this process the right to use it
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM)`, asked once; the grant holds for
//! every thread of the process).
//!
//! A thread loads a [`TileConfig`] (the shape of each tile) before it
//! touches the tiles and releases them when done ([`TileConfig::load`]
//! returns a guard), so that a thread that is not computing does not carry
//! 8 KiB of tile state through every context switch.
//!
//! `FERRUM_AMX=0` in the environment turns AMX off (read once), so the
//! same machine can time or check the AVX-512 paths.

pub(crate) mod int8_block;
#[cfg(all(test, target_arch = "x86_64", target_os = "linux"))]
mod tests;

/// Rows in a tile, at most.
pub const TILE_ROWS: usize = 16;
/// Bytes in a tile row, at most.
pub const TILE_BYTES: usize = 64;

/// Whether this process may run AMX-BF16 (`tdpbf16ps`), decided once.
pub fn bf16_available() -> bool {
    support().bf16
}

/// Whether this process may run AMX-INT8 (`tdpbusd` and its kin), decided once.
pub fn int8_available() -> bool {
    support().int8
}

#[derive(Clone, Copy, Default)]
struct Support {
    bf16: bool,
    int8: bool,
}

fn support() -> Support {
    use std::sync::OnceLock;
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        if std::env::var("FERRUM_AMX").is_ok_and(|v| v.trim() == "0") {
            return Support::default();
        }
        detect()
    })
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn detect() -> Support {
    use std::arch::x86_64::__cpuid_count;
    if __cpuid_count(0, 0).eax < 7 {
        return Support::default();
    }
    let leaf7 = __cpuid_count(7, 0);
    let tile = leaf7.edx & (1 << 24) != 0;
    let bf16 = leaf7.edx & (1 << 22) != 0;
    let int8 = leaf7.edx & (1 << 25) != 0;
    if !tile || !(bf16 || int8) || !os_saves_tiles() || !request_permission() {
        return Support::default();
    }
    Support { bf16, int8 }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn detect() -> Support {
    Support::default()
}

/// Whether the OS enabled the tile state in XCR0 (bits 17: TILECFG, 18: TILEDATA).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn os_saves_tiles() -> bool {
    if !std::arch::is_x86_feature_detected!("xsave") || !std::arch::is_x86_feature_detected!("avx512f") {
        return false;
    }
    let xcr0: u64;
    // SAFETY: xgetbv with ecx = 0 reads XCR0; OSXSAVE is set (is_x86_feature_detected("xsave")
    // checks the OS enabled it), so the instruction does not fault.
    unsafe {
        let (lo, hi): (u32, u32);
        std::arch::asm!("xgetbv", in("ecx") 0u32, out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags));
        xcr0 = u64::from(lo) | u64::from(hi) << 32;
    }
    xcr0 & (0b11 << 17) == 0b11 << 17
}

/// Asks Linux for the right to use the tile data (`ARCH_REQ_XCOMP_PERM`,
/// feature 18); kernels before 5.16 refuse it and AMX stays off.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn request_permission() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with these arguments only changes this process's permission set.
    unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 }
}

/// The shape of the eight tiles (palette 1): rows and bytes per row of each.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct TileConfig {
    bytes: [u8; 64],
}

impl Default for TileConfig {
    fn default() -> Self {
        let mut bytes = [0u8; 64];
        bytes[0] = 1;
        TileConfig { bytes }
    }
}

impl TileConfig {
    /// Tile `tile` holds `rows` rows of `row_bytes` bytes.
    ///
    /// # Panics
    /// If `tile >= 8`, `rows > 16`, or `row_bytes > 64` (a caller's bug, not input).
    pub fn with(mut self, tile: usize, rows: usize, row_bytes: usize) -> Self {
        assert!(tile < 8 && rows <= TILE_ROWS && row_bytes <= TILE_BYTES, "tile {tile}: {rows} x {row_bytes} bytes");
        let cols = (row_bytes as u16).to_le_bytes();
        self.bytes[16 + 2 * tile] = cols[0];
        self.bytes[17 + 2 * tile] = cols[1];
        self.bytes[48 + tile] = rows as u8;
        self
    }

    /// Loads the configuration into this thread's tiles (zeroing them); the
    /// guard releases them when dropped.
    ///
    /// # Safety
    /// [`bf16_available`] or [`int8_available`] is true.
    #[cfg(target_arch = "x86_64")]
    pub unsafe fn load(&self) -> TileGuard {
        // SAFETY: the caller checked AMX is usable; the configuration is 64 aligned bytes.
        unsafe { std::arch::asm!("ldtilecfg [{0}]", in(reg) self.bytes.as_ptr(), options(nostack, readonly, preserves_flags)) };
        TileGuard { _not_send: std::marker::PhantomData }
    }
}

/// Releases the calling thread's tiles when dropped (`tilerelease`).
pub struct TileGuard {
    // The tiles belong to the thread that loaded them.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for TileGuard {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a guard exists only after a successful ldtilecfg on this thread.
        unsafe {
            std::arch::asm!("tilerelease", options(nostack, nomem, preserves_flags))
        };
    }
}

/// Loads tile `$t` (a literal like `tmm4`) from `$ptr`, rows `$stride` bytes apart.
///
/// Unsafe: the configuration is loaded and the rows it names are readable.
macro_rules! tile_load {
    ($t:ident, $ptr:expr, $stride:expr) => {
        std::arch::asm!(
            concat!("tileloadd ", stringify!($t), ", [{0} + {1}*1]"),
            in(reg) $ptr, in(reg) $stride, options(nostack, readonly, preserves_flags)
        )
    };
}

/// Stores tile `$t` to `$ptr`, rows `$stride` bytes apart.
///
/// Unsafe: the configuration is loaded and the rows it names are writable.
macro_rules! tile_store {
    ($t:ident, $ptr:expr, $stride:expr) => {
        std::arch::asm!(
            concat!("tilestored [{0} + {1}*1], ", stringify!($t)),
            in(reg) $ptr, in(reg) $stride, options(nostack, preserves_flags)
        )
    };
}

/// Zeroes tile `$t`.
macro_rules! tile_zero {
    ($t:ident) => {
        std::arch::asm!(concat!("tilezero ", stringify!($t)), options(nostack, nomem, preserves_flags))
    };
}

/// `$c += $a @ $b` on bf16 pairs with f32 sums: `$a` is rows x (k pairs),
/// `$b` is (k pairs) x 16 columns with a column's pair side by side.
macro_rules! tile_dpbf16ps {
    ($c:ident, $a:ident, $b:ident) => {
        std::arch::asm!(
            concat!("tdpbf16ps ", stringify!($c), ", ", stringify!($a), ", ", stringify!($b)),
            options(nostack, nomem, preserves_flags)
        )
    };
}

/// `$c += $a @ $b` on quads of u8 (`$a`) times s8 (`$b`), exact i32 sums.
macro_rules! tile_dpbusd {
    ($c:ident, $a:ident, $b:ident) => {
        std::arch::asm!(
            concat!("tdpbusd ", stringify!($c), ", ", stringify!($a), ", ", stringify!($b)),
            options(nostack, nomem, preserves_flags)
        )
    };
}

/// `$c += $a @ $b` on quads of s8 (`$a`) times u8 (`$b`), exact i32 sums:
/// the signed operand as rows, for products whose unsigned side is the
/// column operand (the int8 convolution's receptive fields).
macro_rules! tile_dpbsud {
    ($c:ident, $a:ident, $b:ident) => {
        std::arch::asm!(
            concat!("tdpbsud ", stringify!($c), ", ", stringify!($a), ", ", stringify!($b)),
            options(nostack, nomem, preserves_flags)
        )
    };
}

pub(crate) use {tile_dpbf16ps, tile_dpbsud, tile_dpbusd, tile_load, tile_store, tile_zero};
