//! The 12x32 microkernel for CPUs with AVX-512: twenty-four zmm accumulators
//! hold a 12-row, 32-column tile of the output while it walks one packed A
//! micro-panel (12 values per step) and one packed B micro-panel (32 values
//! per step): two loads of B and twelve broadcasts of A feed 24 FMAs.
//!
//! On a core with full-width AVX-512 (Zen 5, Intel server cores) this does
//! twice the work per cycle of the 6x16 AVX2 tile; on a double-pumped one
//! (Zen 4) it runs at the AVX2 tile's rate.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::driver::Tile;

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
        unsafe { kernel_rows::<MR>(kc, a, b, c, rs_c, accumulate) }
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

/// `c[0..R][0..32] = (accumulate ? c : 0) + a_panel @ b_panel` for the
/// first `R <= 12` rows of a packed 12-row A micro-panel, with the rows of
/// `c` starting `rs_c` elements apart.
///
/// # Safety
/// The CPU supports AVX-512F; `a` holds `kc * MR` and `b` holds `kc * NR`
/// readable floats, `b` is 64-byte aligned; `c` addresses a writable R x 32
/// tile with row stride `rs_c`.
#[target_feature(enable = "avx512f")]
unsafe fn kernel_rows<const R: usize>(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool) {
    const { assert!(R >= 1 && R <= MR, "a tile has 1 to 12 rows") };
    // SAFETY: the caller's contract covers every read of `a`/`b` (p < kc)
    // and every access of the R x 32 tile of `c`.
    unsafe {
        // Fetch the output tile while the loop runs (see the AVX2 tile):
        // each row is two cache lines.
        for i in 0..R {
            _mm_prefetch::<_MM_HINT_T0>(c.add(i * rs_c).cast());
            _mm_prefetch::<_MM_HINT_T0>(c.add(i * rs_c + NR - 1).cast());
        }
        let mut acc = [[_mm512_setzero_ps(); 2]; R];
        let (mut a, mut b) = (a, b);
        for _ in 0..kc {
            let b0 = _mm512_load_ps(b);
            let b1 = _mm512_load_ps(b.add(16));
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = _mm512_set1_ps(*a.add(i));
                row[0] = _mm512_fmadd_ps(ai, b0, row[0]);
                row[1] = _mm512_fmadd_ps(ai, b1, row[1]);
            }
            a = a.add(MR);
            b = b.add(NR);
        }
        for (i, [lo, hi]) in acc.into_iter().enumerate() {
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
