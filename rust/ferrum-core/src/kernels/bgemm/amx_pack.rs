//! Packing A for the AMX kernel: 32-row blocks cut into 32-k steps, each
//! step two 16 x 32 tiles of bf16 (the upper and lower 16 rows), 64
//! contiguous bytes a tile row.
//!
//! Rows past m and k past the matrix's end are written as zeros, so a
//! padded tile adds nothing to the sums (the buffer is reused between
//! products and holds whatever the last one left).

use super::pack::Operand16;

/// Rows of a packed A block: the two A tiles of one 32 x 32 output block.
pub const ROWS: usize = 32;
/// bf16 along k in one tile row (64 bytes): one `tdpbf16ps` step.
pub const K_STEP: usize = 32;

/// bf16 in one packed block step: 32 rows of 32 k.
pub const STEP_LEN: usize = ROWS * K_STEP;

/// Block `block` of A (rows `block * ROWS ..`), all of k, into `out`:
/// `out[(q * ROWS + r) * K_STEP + t]` = `a[block * ROWS + r][q * K_STEP + t]`.
///
/// # Safety
/// `a` addresses an `m x k` matrix; `out` holds `k.div_ceil(K_STEP) * STEP_LEN`
/// bf16; `block * ROWS < m`.
pub unsafe fn pack_a_block(out: &mut [u16], a: Operand16, block: usize, m: usize, k: usize) {
    let r0 = block * ROWS;
    let rows = (m - r0).min(ROWS);
    let steps = k.div_ceil(K_STEP);
    debug_assert!(out.len() >= steps * STEP_LEN);
    for q in 0..steps {
        out[(q * ROWS + rows) * K_STEP..(q + 1) * ROWS * K_STEP].fill(0);
    }
    if a.rs == 1 && a.cs != 1 {
        // SAFETY: as this function's contract.
        unsafe { pack_columns(out, a, r0, rows, k) };
        return;
    }
    for r in 0..rows {
        // SAFETY: row r0 + r is inside the matrix, and so is every column read below.
        let row = unsafe { a.at(r0 + r, 0) };
        for (q, k0) in (0..k).step_by(K_STEP).enumerate() {
            let len = (k - k0).min(K_STEP);
            let line = &mut out[(q * ROWS + r) * K_STEP..][..K_STEP];
            line[len..].fill(0);
            let line = &mut line[..len];
            if a.cs == 1 {
                // SAFETY: columns k0 .. k0 + len of the row are contiguous and inside the matrix.
                line.copy_from_slice(unsafe { std::slice::from_raw_parts(row.add(k0), len) });
            } else {
                for (t, v) in line.iter_mut().enumerate() {
                    // SAFETY: column k0 + t < k is inside the matrix.
                    *v = unsafe { *row.offset((k0 + t) as isize * a.cs) };
                }
            }
        }
    }
}

/// [`pack_a_block`] of a column-major A (a transposed operand, as the
/// weight gradient's `x^T` is): the block's rows lie side by side in memory,
/// so each k reads one contiguous run across them and scatters it into the
/// tile rows, which stay in L1. Read row by row instead, every element came
/// from another cache line, and the 1024-row `x^T` of a Linear's gradient
/// took as long to pack as to multiply.
///
/// # Safety
/// As [`pack_a_block`], with `rows` rows from `r0` and `a.rs == 1`; rows
/// past `rows` are already zero.
unsafe fn pack_columns(out: &mut [u16], a: Operand16, r0: usize, rows: usize, k: usize) {
    for (q, k0) in (0..k).step_by(K_STEP).enumerate() {
        let len = (k - k0).min(K_STEP);
        let tile = &mut out[q * STEP_LEN..(q + 1) * STEP_LEN];
        for t in 0..len {
            // SAFETY: column k0 + t < k, rows r0 .. r0 + rows are inside the matrix and adjacent (rs == 1).
            let run = unsafe { std::slice::from_raw_parts(a.at(r0, k0 + t), rows) };
            for (r, &v) in run.iter().enumerate() {
                tile[r * K_STEP + t] = v;
            }
        }
        if len < K_STEP {
            for r in 0..rows {
                tile[r * K_STEP + len..(r + 1) * K_STEP].fill(0);
            }
        }
    }
}
