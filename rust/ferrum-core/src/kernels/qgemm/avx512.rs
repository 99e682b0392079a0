//! The 12 x 32 register tile on `vpdpbusd`, and the f32 epilogue of the
//! quantized linear on AVX-512.

use std::arch::x86_64::*;

use super::epilogue::Epilogue;
use super::{MR, NR};

/// `acc[r][j] (+)= Σ_k a[r, k] * b[k, j]` over `kq` quads of k, exact in
/// i32: `acc` is read first unless `first` (a block of k after the first
/// adds to the earlier blocks' sums).
///
/// # Safety
/// The CPU has AVX-512 F, BW and VNNI; `a` holds `kq * MR` words and `b`
/// `kq * NR`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(super) unsafe fn dot(kq: usize, a: *const u32, b: *const u32, acc: &mut [[i32; NR]; MR], first: bool) {
    let mut regs = [[_mm512_setzero_si512(); 2]; MR];
    // SAFETY: the reads stay inside the panels (caller's contract) and `acc`'s rows of NR lanes.
    unsafe {
        if !first {
            for (reg, row) in regs.iter_mut().zip(acc.iter()) {
                reg[0] = _mm512_loadu_si512(row.as_ptr() as *const _);
                reg[1] = _mm512_loadu_si512(row.as_ptr().add(16) as *const _);
            }
        }
        for q in 0..kq {
            let b0 = _mm512_loadu_si512(b.add(q * NR) as *const _);
            let b1 = _mm512_loadu_si512(b.add(q * NR + 16) as *const _);
            let aq = a.add(q * MR);
            for (r, row) in regs.iter_mut().enumerate() {
                let av = _mm512_set1_epi32(*aq.add(r) as i32);
                row[0] = _mm512_dpbusd_epi32(row[0], av, b0);
                row[1] = _mm512_dpbusd_epi32(row[1], av, b1);
            }
        }
        for (row, reg) in acc.iter_mut().zip(&regs) {
            _mm512_storeu_si512(row.as_mut_ptr() as *mut _, reg[0]);
            _mm512_storeu_si512(row.as_mut_ptr().add(16) as *mut _, reg[1]);
        }
    }
}

/// `c[r][j] = sx[r] * sw[j] * (acc[r][j] - zx[r] * colsum[j]) + bias[j]`
/// for the `rows x cols` corner of a block of sums (a register tile's or
/// an AMX block's).
///
/// # Safety
/// The CPU has AVX-512 F; the epilogue's column slices hold NR values each
/// (bias: `cols`) and its row slices `rows`; `c` addresses a writable
/// `rows x cols` tile whose rows start `rs_c` elements apart.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn finish_f32(acc: &[[i32; NR]], e: &Epilogue, c: *mut f32, rs_c: usize, rows: usize, cols: usize) {
    // SAFETY: the reads stay inside `acc` and the epilogue's slices, the writes inside the tile.
    unsafe {
        for half in 0..2 {
            let lanes = cols.saturating_sub(half * 16).min(16);
            if lanes == 0 {
                break;
            }
            let mask: __mmask16 = if lanes == 16 { 0xFFFF } else { (1u16 << lanes) - 1 };
            let colsum = _mm512_loadu_si512(e.colsum.as_ptr().add(half * 16) as *const _);
            let sw = _mm512_loadu_ps(e.sw.as_ptr().add(half * 16));
            let bias = match e.bias {
                Some(bias) => _mm512_maskz_loadu_ps(mask, bias.as_ptr().add(half * 16)),
                None => _mm512_setzero_ps(),
            };
            for (r, row) in acc.iter().enumerate().take(rows) {
                let sums = _mm512_loadu_si512(row.as_ptr().add(half * 16) as *const _);
                let centred = _mm512_sub_epi32(sums, _mm512_mullo_epi32(colsum, _mm512_set1_epi32(e.zx[r])));
                let scale = _mm512_mul_ps(sw, _mm512_set1_ps(e.sx[r]));
                let y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(centred), scale, bias);
                _mm512_mask_storeu_ps(c.add(r * rs_c + half * 16), mask, y);
            }
        }
    }
}
