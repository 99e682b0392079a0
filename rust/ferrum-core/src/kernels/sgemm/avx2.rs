//! The 6x16 microkernel: twelve ymm accumulators hold a 6-row, 16-column
//! tile of the output while it walks the shared dimension of one packed A
//! micro-panel (6 values per step) and one packed B micro-panel (16 values
//! per step): one broadcast of A and two loads of B feed two FMAs per row.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::tile::Tile;

/// The AVX2 register tile and the block sizes it runs best with.
pub struct Avx2;

/// Rows of the register tile.
const MR: usize = 6;
/// Columns of the register tile.
const NR: usize = 16;

impl Tile for Avx2 {
    const MR: usize = MR;
    const NR: usize = NR;
    const MC: usize = 144;
    const KC: usize = 256;
    const NC: usize = 3072;

    unsafe fn full(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool) {
        // SAFETY: forwarded from the caller, who picked this tile only
        // where the CPU has AVX2 and FMA.
        unsafe { kernel_6x16(kc, a, b, c, rs_c, accumulate) }
    }
}

/// `c[0..6][0..16] = (accumulate ? c : 0) + a_panel @ b_panel`, with the rows
/// of `c` starting `rs_c` elements apart.
///
/// # Safety
/// The CPU supports AVX2 and FMA; `a` holds `kc * MR` and `b` holds `kc * NR`
/// readable floats, `b` is 32-byte aligned; `c` addresses a writable 6 x 16
/// tile with row stride `rs_c`.
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel_6x16(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool) {
    // SAFETY: the caller's contract covers every read of `a`/`b` (p < kc)
    // and every access of the 6 x 16 tile of `c`.
    unsafe {
        // Fetch the output tile while the loop runs: its rows are often
        // 4 KiB apart (n = 1024), all in one L1 set, and would otherwise
        // miss one after another at the end (27 ms instead of 32 ms for a
        // single-thread 1024^3 product on Zen 3).
        for i in 0..MR {
            _mm_prefetch::<_MM_HINT_T0>(c.add(i * rs_c).cast());
            _mm_prefetch::<_MM_HINT_T0>(c.add(i * rs_c + NR - 1).cast());
        }
        let z = _mm256_setzero_ps();
        let (mut c00, mut c01, mut c10, mut c11, mut c20, mut c21) = (z, z, z, z, z, z);
        let (mut c30, mut c31, mut c40, mut c41, mut c50, mut c51) = (z, z, z, z, z, z);
        let (mut a, mut b) = (a, b);
        for _ in 0..kc {
            let b0 = _mm256_load_ps(b);
            let b1 = _mm256_load_ps(b.add(8));
            macro_rules! row {
                ($i:expr, $lo:ident, $hi:ident) => {{
                    let ai = _mm256_broadcast_ss(&*a.add($i));
                    $lo = _mm256_fmadd_ps(ai, b0, $lo);
                    $hi = _mm256_fmadd_ps(ai, b1, $hi);
                }};
            }
            row!(0, c00, c01);
            row!(1, c10, c11);
            row!(2, c20, c21);
            row!(3, c30, c31);
            row!(4, c40, c41);
            row!(5, c50, c51);
            a = a.add(MR);
            b = b.add(NR);
        }
        let rows = [(c00, c01), (c10, c11), (c20, c21), (c30, c31), (c40, c41), (c50, c51)];
        for (i, (lo, hi)) in rows.into_iter().enumerate() {
            let p = c.add(i * rs_c);
            if accumulate {
                _mm256_storeu_ps(p, _mm256_add_ps(_mm256_loadu_ps(p), lo));
                _mm256_storeu_ps(p.add(8), _mm256_add_ps(_mm256_loadu_ps(p.add(8)), hi));
            } else {
                _mm256_storeu_ps(p, lo);
                _mm256_storeu_ps(p.add(8), hi);
            }
        }
    }
}
