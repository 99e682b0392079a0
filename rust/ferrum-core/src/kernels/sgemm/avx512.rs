//! The 12x32 microkernel for CPUs with AVX-512: twenty-four zmm accumulators
//! hold a 12-row, 32-column tile of the output while it walks one packed A
//! micro-panel (12 values per step) and one packed B micro-panel (32 values
//! per step): two loads of B and twelve broadcasts of A feed 24 FMAs.
//!
//! On a core with full-width AVX-512 (Zen 5, Intel server cores) this does
//! twice the work per cycle of the 6x16 AVX2 tile; on a double-pumped one
//! (Zen 4) it runs at the AVX2 tile's rate.
//!
//! The full tile's loop is written in assembly, two steps of k per pass,
//! where the compiled loop went round every step. In its first form (each
//! broadcast of A folded into its FMA as a memory operand) it was, on two
//! threads of a shared Xeon, medians of 15 alternating rounds against the
//! compiled loop: 256x784x512 1.07-1.09x, 784x256x512 (x^T @ dy, a weight
//! gradient) 1.09-1.14x, 1024^3 1.08x, 512^3 1.06x faster; the compiled
//! loop unrolled by two (kept for the short tiles) gained about half of
//! that, and prefetching B ahead gained nothing.
//!
//! Each value of A is broadcast once into a register that its two FMAs
//! read: 14 loads per step. With the broadcast folded into each FMA as a
//! memory operand a step made 26 loads for its 24 FMAs, more than two load
//! ports issue in the FMAs' 12 cycles. On a Xeon with AVX-512 (model 167,
//! one thread, panels in L1 and L2) the folded loop ran at 75-80% of the
//! FMA peak (178-190 GF/s against 240 of a loop of FMAs alone), the
//! separate broadcasts at 80-88% (192-212); in the whole product, medians
//! of 7 rounds of the same binary built both ways: 4096x256x768 on two
//! threads 335 -> 362 GF/s, 256x784x512 295 -> 314, 784x256x512 316 -> 340,
//! 1024^3 310 -> 330, and on one thread 256x784x512 159 -> 171. Unrolling
//! four steps per pass or prefetching A ahead gained nothing more.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::tile::Tile;

/// The AVX-512 register tile and the block sizes it runs best with.
pub struct Avx512;

/// Rows of the register tile.
const MR: usize = 12;
/// Columns of the register tile.
const NR: usize = 32;

impl Tile for Avx512 {
    const MR: usize = MR;
    const NR: usize = NR;
    // Depth up to 800 runs as one block: the MLP's 784-deep products and
    // 768-wide models pack each operand once and write the output once,
    // not in 3-4 slices added up. The 192 x 800 block of A (600 KiB) stays
    // in L2 beside the 100 KiB micro-panel of B the tiles share, which
    // streams from L2 as well as from L1. On two threads of a Xeon with
    // 2 MiB of L2, against KC = 256 (medians of 23 alternating rounds):
    // 256x784x512 193-226 -> 201-262 GFLOP/s, 768^3 239 -> 279, 1024^3
    // 202 -> 210, 512x3072x768 247 -> 261, conv 64->64 on 56^2 forward and
    // backward 172 -> 159 ms (the backward's products: the forward alone
    // moved 36.8 -> 35.6 and keeps its own blocks, sgemm/conv.rs); on one
    // thread it is the same (145 -> 143 on 256x784x512), as on Zen 5, where
    // 1024^3 ran at 210-235 GFLOP/s for every KC from 192 to 512 and MC from
    // 96 to 576.
    const MC: usize = 192;
    const KC: usize = 800;
    const NC: usize = 3072;

    unsafe fn full(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool) {
        // SAFETY: forwarded from the caller, who picked this tile only
        // where the CPU has AVX-512F.
        unsafe { kernel_full(kc, a, b, c, rs_c, accumulate) }
    }

    /// A tile cut short by the last rows of the matrix runs a kernel with
    /// only those rows' accumulators: with m = 64 (a batch of 64), a third
    /// of the work of the last 12-row tile was rows of zero padding, and
    /// the whole product ran 11% more FMAs than it needed.
    unsafe fn short(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool, mr: usize) {
        // SAFETY: as for `full`, with `c` an `mr x NR` tile.
        unsafe {
            by_rows!(mr, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], MR, R => kernel_rows::<R>(kc, a, b, c, rs_c, accumulate))
        }
    }
}

/// Fetch the `R x 32` output tile at `c` while the loop runs (see the AVX2
/// tile): each row is two cache lines.
#[inline(always)]
fn prefetch_tile<const R: usize>(c: *mut f32, rs_c: usize) {
    for i in 0..R {
        // SAFETY: SSE is part of x86-64, and a prefetch is a hint that
        // never faults, whatever the address.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(c.wrapping_add(i * rs_c).cast());
            _mm_prefetch::<_MM_HINT_T0>(c.wrapping_add(i * rs_c + NR - 1).cast());
        }
    }
}

/// One step of k for the first `R` rows: `acc[i] += a[i] * b[0..32]`.
///
/// # Safety
/// The CPU supports AVX-512F; `a` holds `R` and `b` 32 readable floats,
/// `b` 64-byte aligned.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn step<const R: usize>(acc: &mut [[__m512; 2]; R], a: *const f32, b: *const f32) {
    // SAFETY: the caller vouches for the reads.
    unsafe {
        let b0 = _mm512_load_ps(b);
        let b1 = _mm512_load_ps(b.add(16));
        for (i, row) in acc.iter_mut().enumerate() {
            let ai = _mm512_set1_ps(*a.add(i));
            row[0] = _mm512_fmadd_ps(ai, b0, row[0]);
            row[1] = _mm512_fmadd_ps(ai, b1, row[1]);
        }
    }
}

/// Write the accumulators to the `R x 32` tile at `c`, or add them to it.
///
/// # Safety
/// The CPU supports AVX-512F; `c` addresses a writable `R x 32` tile with
/// row stride `rs_c`.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn store<const R: usize>(acc: [[__m512; 2]; R], c: *mut f32, rs_c: usize, accumulate: bool) {
    for (i, [lo, hi]) in acc.into_iter().enumerate() {
        // SAFETY: row i of the tile the caller vouches for.
        unsafe {
            let p = c.add(i * rs_c);
            if accumulate {
                _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), lo));
                _mm512_storeu_ps(p.add(16), _mm512_add_ps(_mm512_loadu_ps(p.add(16)), hi));
            } else {
                _mm512_storeu_ps(p, lo);
                _mm512_storeu_ps(p.add(16), hi);
            }
        }
    }
}

/// `c[0..R][0..32] = (accumulate ? c : 0) + a_panel @ b_panel` for the
/// first `R <= 12` rows of a packed 12-row A micro-panel, with the rows of
/// `c` starting `rs_c` elements apart; two steps of k per pass.
///
/// # Safety
/// The CPU supports AVX-512F; `a` holds `kc * MR` and `b` holds `kc * NR`
/// readable floats, `b` is 64-byte aligned; `c` addresses a writable R x 32
/// tile with row stride `rs_c`.
#[target_feature(enable = "avx512f")]
unsafe fn kernel_rows<const R: usize>(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool) {
    const { assert!(R >= 1 && R <= MR, "a tile has 1 to 12 rows") };
    prefetch_tile::<R>(c, rs_c);
    // SAFETY: the caller's contract covers every read of `a`/`b` (p < kc)
    // and every access of the R x 32 tile of `c`.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); 2]; R];
        for p in (0..kc - kc % 2).step_by(2) {
            step(&mut acc, a.add(p * MR), b.add(p * NR));
            step(&mut acc, a.add((p + 1) * MR), b.add((p + 1) * NR));
        }
        if kc % 2 == 1 {
            step(&mut acc, a.add((kc - 1) * MR), b.add((kc - 1) * NR));
        }
        store(acc, c, rs_c, accumulate);
    }
}

/// Row `$row`'s two FMAs in step `$step` of a pass: its value of A is
/// broadcast into `zmm$bc`, then its accumulators `zmm$lo`, `zmm$hi` gain
/// B's two halves (zmm24, zmm25) times it. A step of the packed A panel is
/// MR = 12 floats (48 bytes), of B NR = 32 (128 bytes).
macro_rules! fma_row {
    ($step:literal, $lo:literal, $hi:literal, $row:literal, $bc:literal) => {
        concat!(
            "vbroadcastss zmm", $bc, ", dword ptr [{a} + ", $step, " * 48 + ", $row, " * 4]\n",
            "vfmadd231ps zmm", $lo, ", zmm24, zmm", $bc, "\n",
            "vfmadd231ps zmm", $hi, ", zmm25, zmm", $bc, "\n",
        )
    };
}

/// Step `$step` of a pass: load B's 32 values, then the twelve rows' FMAs.
macro_rules! k_step {
    ($step:literal) => {
        concat!(
            "vmovaps zmm24, zmmword ptr [{b} + ", $step, " * 128]\n",
            "vmovaps zmm25, zmmword ptr [{b} + ", $step, " * 128 + 64]\n",
            fma_row!($step, 0, 1, 0, 26),
            fma_row!($step, 2, 3, 1, 27),
            fma_row!($step, 4, 5, 2, 28),
            fma_row!($step, 6, 7, 3, 29),
            fma_row!($step, 8, 9, 4, 30),
            fma_row!($step, 10, 11, 5, 31),
            fma_row!($step, 12, 13, 6, 26),
            fma_row!($step, 14, 15, 7, 27),
            fma_row!($step, 16, 17, 8, 28),
            fma_row!($step, 18, 19, 9, 29),
            fma_row!($step, 20, 21, 10, 30),
            fma_row!($step, 22, 23, 11, 31),
        )
    };
}

/// [`kernel_rows`] for the full 12-row tile, its loop in assembly (see the
/// module doc); an odd last step of k runs compiled.
///
/// # Safety
/// As for [`kernel_rows`] with `R = 12`.
#[target_feature(enable = "avx512f")]
unsafe fn kernel_full(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool) {
    prefetch_tile::<MR>(c, rs_c);
    // SAFETY: the caller's contract covers every read of `a`/`b` (p < kc)
    // and every access of the 12 x 32 tile of `c`.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); 2]; MR];
        let pairs = kc / 2;
        let (mut a, mut b) = (a, b);
        if pairs > 0 {
            // Each pass reads steps 2q and 2q + 1: 24 floats of A and 64 of
            // B, all inside the panels for q < pairs.
            std::arch::asm!(
                "2:",
                k_step!(0),
                k_step!(1),
                "add {a}, 96",
                "add {b}, 256",
                "dec {pairs}",
                "jnz 2b",
                a = inout(reg) a,
                b = inout(reg) b,
                pairs = inout(reg) pairs => _,
                inout("zmm0") acc[0][0], inout("zmm1") acc[0][1],
                inout("zmm2") acc[1][0], inout("zmm3") acc[1][1],
                inout("zmm4") acc[2][0], inout("zmm5") acc[2][1],
                inout("zmm6") acc[3][0], inout("zmm7") acc[3][1],
                inout("zmm8") acc[4][0], inout("zmm9") acc[4][1],
                inout("zmm10") acc[5][0], inout("zmm11") acc[5][1],
                inout("zmm12") acc[6][0], inout("zmm13") acc[6][1],
                inout("zmm14") acc[7][0], inout("zmm15") acc[7][1],
                inout("zmm16") acc[8][0], inout("zmm17") acc[8][1],
                inout("zmm18") acc[9][0], inout("zmm19") acc[9][1],
                inout("zmm20") acc[10][0], inout("zmm21") acc[10][1],
                inout("zmm22") acc[11][0], inout("zmm23") acc[11][1],
                out("zmm24") _,
                out("zmm25") _,
                out("zmm26") _, out("zmm27") _, out("zmm28") _,
                out("zmm29") _, out("zmm30") _, out("zmm31") _,
                options(nostack, readonly),
            );
        }
        if kc % 2 == 1 {
            step(&mut acc, a, b);
        }
        store(acc, c, rs_c, accumulate);
    }
}
