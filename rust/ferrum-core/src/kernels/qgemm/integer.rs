//! The exact integer product ONNX's `MatMulInteger` and `QLinearMatMul`
//! define, on the int8 tiles: u8 rows (`a`, zero point per tensor or per
//! row) times packed s8 columns (`w`, zero point per tensor or per column),
//! `y[i, j] = Σ_k (a[i, k] - za[i]) * (w[k, j] - zw[j])` in i32.
//!
//! The tiles sum `a * w` exactly; the zero points come out after the sum:
//! `y = acc - za[i] * colsum[j] - zw[j] * rowsum[i] + k * za[i] * zw[j]`,
//! computed in i64 and wrapped to i32 as ONNX's int32 output holds it.

use super::pack::PackedQ8;
use super::portable;
use super::{MR, NR};
use crate::error::{Error, Result};
use crate::kernels::team::{self, Shared};

/// Packs rows `r0..r0 + MR` of a row-major `m x k` u8 matrix into one panel
/// of `k.div_ceil(4) * MR` words (the activation layout of the tiles),
/// writing each row's sum into `rowsum`.
fn pack_rows(out: &mut [u32], rowsum: &mut [i32], a: &[u8], r0: usize, m: usize, k: usize) {
    out.fill(0);
    rowsum.fill(0);
    for r in 0..(m - r0).min(MR) {
        let row = &a[(r0 + r) * k..(r0 + r + 1) * k];
        for (kk, &v) in row.iter().enumerate() {
            out[(kk / 4) * MR + r] |= (v as u32) << (8 * (kk % 4));
        }
        rowsum[r] = row.iter().map(|&v| v as i32).sum();
    }
}

/// Row panels per block of work, and column panels: a block's weight panels
/// are reused by all its row panels while they sit in L2 (as in the linear's driver).
const ROW_PANELS: usize = 8;
const COL_PANELS: usize = 4;

/// A zero point list of one value (per tensor) or `len` values.
fn zero_at(zero: &[i32], i: usize) -> i64 {
    i64::from(if zero.len() == 1 { zero[0] } else { zero[i] })
}

/// `out[m x n] = (a - a_zero) @ (w - w_zero)` exactly (wrapped to i32);
/// `a` is row-major `m x k` u8, `a_zero` holds 1 or `m` values, `w_zero`
/// 1 or `n`.
pub fn matmul_u8s8(a: &[u8], m: usize, a_zero: &[i32], w: &PackedQ8, w_zero: &[i32], out: &mut [i32], threads: usize) -> Result<()> {
    matmul_u8s8_on(a, m, a_zero, w, w_zero, out, threads, super::vnni_available())
}

/// [`matmul_u8s8`] on the VNNI tile or the portable one (`vnni` is only
/// honoured where the CPU has it).
#[allow(clippy::too_many_arguments)]
pub(super) fn matmul_u8s8_on(a: &[u8], m: usize, a_zero: &[i32], w: &PackedQ8, w_zero: &[i32], out: &mut [i32], threads: usize, vnni: bool) -> Result<()> {
    let vnni = vnni && super::vnni_available();
    let (k, n) = (w.k, w.n);
    let zeros_fit = (a_zero.len() == 1 || a_zero.len() == m) && (w_zero.len() == 1 || w_zero.len() == n);
    if a.len() != m * k || out.len() != m * n || !zeros_fit {
        return Err(Error::invalid(
            "integer matmul",
            format!(
                "expected a {m} x {k} input, a {m} x {n} output, 1 or {m} input zero points and 1 or {n} weight zero points, \
                 found {}, {}, {} and {} values",
                a.len(),
                out.len(),
                a_zero.len(),
                w_zero.len()
            ),
        ));
    }
    if m == 0 {
        return Ok(());
    }
    let kq = k.div_ceil(4);
    let (row_panels, col_panels) = (m.div_ceil(MR), n.div_ceil(NR));
    let threaded = threads > 1;
    let mut packed = vec![0u32; row_panels * kq * MR];
    let mut rowsum = vec![0i32; row_panels * MR];
    let (pa, ps) = (Shared(packed.as_mut_ptr()), Shared(rowsum.as_mut_ptr()));
    team::for_each_part_if(threaded, row_panels, |i| {
        let (pa, ps) = (pa, ps);
        // SAFETY: part i writes panel i of each buffer, disjoint from every other part's.
        unsafe {
            pack_rows(
                std::slice::from_raw_parts_mut(pa.0.add(i * kq * MR), kq * MR),
                std::slice::from_raw_parts_mut(ps.0.add(i * MR), MR),
                a,
                i * MR,
                m,
                k,
            );
        }
    });
    let dst = Shared(out.as_mut_ptr());
    let k64 = k as i64;
    // One 12 x 32 tile of the output: its exact sums, then the zero points taken out.
    let tile = |ip: usize, jp: usize| {
        let dst = &dst;
        let (i0, j0) = (ip * MR, jp * NR);
        let pa = &packed[ip * kq * MR..(ip + 1) * kq * MR];
        let pb = &w.words[jp * kq * NR..(jp + 1) * kq * NR];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: vnni_available() said the CPU runs the kernel; the panels hold kq quads.
        let acc = if vnni { unsafe { super::avx512::sums(kq, pa.as_ptr(), pb.as_ptr()) } } else { portable::sums(kq, pa, pb) };
        #[cfg(not(target_arch = "x86_64"))]
        let acc = {
            let _ = vnni;
            portable::sums(kq, pa, pb)
        };
        let (rows, cols) = ((m - i0).min(MR), (n - j0).min(NR));
        for (r, sums) in acc.iter().enumerate().take(rows) {
            let (i, za) = (i0 + r, zero_at(a_zero, i0 + r));
            let rs = i64::from(rowsum[i0 + r]);
            for (c, &s) in sums.iter().enumerate().take(cols) {
                let j = j0 + c;
                let zw = zero_at(w_zero, j);
                let y = i64::from(s) - za * i64::from(w.colsum[j]) - zw * rs + k64 * za * zw;
                // SAFETY: (i, j) lies inside `out`, in the tile this part alone writes.
                unsafe { *dst.0.add(i * n + j) = y as i32 };
            }
        }
    };
    let mut rows_per_block = ROW_PANELS.min(row_panels);
    let col_blocks = col_panels.div_ceil(COL_PANELS);
    while rows_per_block > 1 && row_panels.div_ceil(rows_per_block) * col_blocks < 2 * threads {
        rows_per_block = rows_per_block.div_ceil(2);
    }
    let row_blocks = row_panels.div_ceil(rows_per_block);
    team::for_each_part_if(threaded, row_blocks * col_blocks, |part| {
        let (rb, cb) = (part / col_blocks, part % col_blocks);
        for jp in cb * COL_PANELS..((cb + 1) * COL_PANELS).min(col_panels) {
            for ip in rb * rows_per_block..((rb + 1) * rows_per_block).min(row_panels) {
                tile(ip, jp);
            }
        }
    });
    Ok(())
}
