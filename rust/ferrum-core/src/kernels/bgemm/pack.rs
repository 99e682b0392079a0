//! Packing bf16 operands into k-pairs: the layout `vdpbf16ps` reads.
//!
//! A word holds two bf16 of consecutive k, the lower k in the low half.
//! An odd k ends with a pair whose high half is zero in both operands, and
//! rows or columns past the matrix's edge are zero, so padding adds nothing.

use std::arch::x86_64::*;

use super::{MR, NR};

/// One bf16 operand: a pointer to element (0, 0) and its (row, col) strides
/// in elements, which may be negative (flipped views) or zero (expanded views).
#[derive(Clone, Copy, Debug)]
pub struct Operand16 {
    pub ptr: *const u16,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: an operand is only read through, by the threads of one `bgemm`
// call, which its caller keeps inside its borrow of the buffer.
unsafe impl Send for Operand16 {}
// SAFETY: as above; reads only.
unsafe impl Sync for Operand16 {}

impl Operand16 {
    /// Address of element `(i, j)`.
    ///
    /// # Safety
    /// `(i, j)` lies inside the matrix the operand describes.
    pub unsafe fn at(self, i: usize, j: usize) -> *const u16 {
        // SAFETY: the caller keeps (i, j) inside the matrix.
        unsafe { self.ptr.offset(i as isize * self.rs + j as isize * self.cs) }
    }
}

/// Row panel `rows` of A, all of k: `out[p * MR + r]` = pair `p` of row `r`.
///
/// # Safety
/// `a` addresses an `m x k` matrix; `out` holds `k.div_ceil(2) * MR` words;
/// `r0 < m`.
pub unsafe fn pack_a(out: &mut [u32], a: Operand16, r0: usize, m: usize, k: usize) {
    let rows = (m - r0).min(MR);
    let pairs = k / 2;
    for r in 0..rows {
        // SAFETY: row r0 + r is inside the matrix; every (row, col) read below is too.
        unsafe {
            let row = a.at(r0 + r, 0);
            if a.cs == 1 {
                // Contiguous bf16: each pair is one unaligned word.
                let words = row as *const u32;
                for p in 0..pairs {
                    out[p * MR + r] = words.add(p).read_unaligned();
                }
            } else {
                for p in 0..pairs {
                    let lo = *row.offset(2 * p as isize * a.cs) as u32;
                    let hi = *row.offset((2 * p + 1) as isize * a.cs) as u32;
                    out[p * MR + r] = lo | hi << 16;
                }
            }
            if k % 2 == 1 {
                out[pairs * MR + r] = *row.offset((k - 1) as isize * a.cs) as u32;
            }
        }
    }
    if rows < MR {
        for p in 0..k.div_ceil(2) {
            out[p * MR + rows..(p + 1) * MR].fill(0);
        }
    }
}

/// Column panel `j0..j0 + NR` of B, all of k: `out[p * NR + j]` = pair `p` of column `j`.
///
/// # Safety
/// `b` addresses a `k x n` matrix; `out` holds `k.div_ceil(2) * NR` words;
/// `j0 < n`; the CPU has AVX-512 BW.
pub unsafe fn pack_b(out: &mut [u32], b: Operand16, j0: usize, n: usize, k: usize) {
    let cols = (n - j0).min(NR);
    let pairs = k / 2;
    // SAFETY: every (row, col) read is inside the matrix: rows below k, columns below j0 + cols.
    unsafe {
        if b.cs == 1 && cols == NR {
            for p in 0..pairs {
                interleave_rows(&mut out[p * NR..(p + 1) * NR], b.at(2 * p, j0), b.at(2 * p + 1, j0));
            }
        } else if b.rs == 1 {
            // Column-major B (a transposed weight): the two k of a pair are
            // adjacent, one word; column by column, the reads run along memory.
            for j in 0..cols {
                let column = b.at(0, j0 + j);
                for p in 0..pairs {
                    out[p * NR + j] = (column.add(2 * p) as *const u32).read_unaligned();
                }
            }
            for p in 0..pairs {
                out[p * NR + cols..(p + 1) * NR].fill(0);
            }
        } else {
            for p in 0..pairs {
                let (even, odd) = (b.at(2 * p, j0), b.at(2 * p + 1, j0));
                for j in 0..cols {
                    let (lo, hi) = (*even.offset(j as isize * b.cs) as u32, *odd.offset(j as isize * b.cs) as u32);
                    out[p * NR + j] = lo | hi << 16;
                }
                out[p * NR + cols..(p + 1) * NR].fill(0);
            }
        }
        if k % 2 == 1 {
            let last = b.at(k - 1, j0);
            for j in 0..cols {
                out[pairs * NR + j] = *last.offset(j as isize * b.cs) as u32;
            }
            out[pairs * NR + cols..(pairs + 1) * NR].fill(0);
        }
    }
}

/// The 32 words pairing `even[j]` (low half) with `odd[j]` (high half).
///
/// # Safety
/// `even` and `odd` address 32 readable bf16 each; the CPU has AVX-512 BW.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn interleave_rows(out: &mut [u32], even: *const u16, odd: *const u16) {
    // Index i < 32 picks even[i], 32 + i picks odd[i]: alternate them.
    const LOW: [u16; 32] = {
        let mut idx = [0u16; 32];
        let mut i = 0;
        while i < 16 {
            idx[2 * i] = i as u16;
            idx[2 * i + 1] = 32 + i as u16;
            i += 1;
        }
        idx
    };
    const HIGH: [u16; 32] = {
        let mut idx = [0u16; 32];
        let mut i = 0;
        while i < 16 {
            idx[2 * i] = 16 + i as u16;
            idx[2 * i + 1] = 48 + i as u16;
            i += 1;
        }
        idx
    };
    debug_assert!(out.len() >= NR);
    // SAFETY: 64 bytes are read from each row and 128 written into `out`, which holds NR words.
    unsafe {
        let e = _mm512_loadu_si512(even as *const _);
        let o = _mm512_loadu_si512(odd as *const _);
        let low = _mm512_permutex2var_epi16(e, _mm512_loadu_si512(LOW.as_ptr() as *const _), o);
        let high = _mm512_permutex2var_epi16(e, _mm512_loadu_si512(HIGH.as_ptr() as *const _), o);
        _mm512_storeu_si512(out.as_mut_ptr() as *mut _, low);
        _mm512_storeu_si512(out.as_mut_ptr().add(16) as *mut _, high);
    }
}
