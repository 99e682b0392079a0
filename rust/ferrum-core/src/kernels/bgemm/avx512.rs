//! The 12 x 32 register tile on `vdpbf16ps`.

use std::arch::x86_64::*;
use std::mem::transmute;

use super::{MR, NR};

/// `c[0..rows][0..cols] = (accumulate ? c : 0) + a_panel @ b_panel`, rounded
/// to bf16 once; `a` holds `kp * MR` pair words, `b` holds `kp * NR`.
///
/// # Safety
/// The CPU has AVX-512 F, BW, VL and BF16; `a` and `b` hold `kp` steps of
/// their panels; `c` addresses a writable `rows x cols` tile (`rows <= MR`,
/// `cols <= NR`) whose rows start `rs_c` elements apart.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
pub unsafe fn tile(kp: usize, a: *const u32, b: *const u32, c: *mut u16, rs_c: usize, rows: usize, cols: usize, accumulate: bool) {
    let mut acc = [[_mm512_setzero_ps(); 2]; MR];
    // SAFETY: the reads stay inside the panels (caller's contract); the
    // bf16 vectors are the same 512 bits reinterpreted.
    unsafe {
        for p in 0..kp {
            let b0: __m512bh = transmute(_mm512_loadu_si512(b.add(p * NR) as *const _));
            let b1: __m512bh = transmute(_mm512_loadu_si512(b.add(p * NR + 16) as *const _));
            let ap = a.add(p * MR);
            for (r, row) in acc.iter_mut().enumerate() {
                let av: __m512bh = transmute(_mm512_set1_epi32(*ap.add(r) as i32));
                row[0] = _mm512_dpbf16_ps(row[0], av, b0);
                row[1] = _mm512_dpbf16_ps(row[1], av, b1);
            }
        }
        for (r, row) in acc.iter().enumerate().take(rows) {
            let out = c.add(r * rs_c);
            for (half, &sum) in row.iter().enumerate() {
                let lanes = cols.saturating_sub(half * 16).min(16);
                if lanes == 0 {
                    break;
                }
                let mask: __mmask16 = if lanes == 16 { 0xFFFF } else { (1u16 << lanes) - 1 };
                let at = out.add(half * 16) as *mut i16;
                let mut v = sum;
                if accumulate {
                    // bf16 is the high half of an f32: widen by shifting into place.
                    let old = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, at));
                    v = _mm512_add_ps(v, _mm512_castsi512_ps(_mm512_slli_epi32::<16>(old)));
                }
                let narrow: __m256i = transmute(_mm512_cvtneps_pbh(v));
                _mm256_mask_storeu_epi16(at, mask, narrow);
            }
        }
    }
}
