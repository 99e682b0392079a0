//! Packing both operands whole, then tiles of the output split over threads.
//!
//! Each tile runs over all of k with its accumulators in registers, so the
//! packed B panel of a column block (32 columns x k, 64 KiB at k = 1024)
//! stays in L2 while the row panels of A stream past it.

use super::avx512::tile;
use super::pack::{pack_a, pack_b, Operand16};
use super::{MR, NR};
use crate::kernels::team::{self, Shared};

/// Row panels per block of work, and column panels: a block's B panels
/// (4 x 32 columns) are reused by its 8 row panels (96 rows).
const ROW_PANELS: usize = 8;
const COL_PANELS: usize = 4;

/// `dst[m x n] = (accumulate ? dst : 0) + a[m x k] @ b[k x n]` in bf16 with
/// f32 accumulation; `dst` rows start `dst_rs` elements apart.
///
/// # Safety
/// [`super::available`] is true; `a` and `b` address `m x k` and `k x n`
/// matrices; `dst` addresses a writable `m x n` matrix that neither operand
/// overlaps; `m`, `n` and `k` are above 0.
#[allow(clippy::too_many_arguments)]
pub unsafe fn bgemm(dst: *mut u16, dst_rs: usize, accumulate: bool, a: Operand16, b: Operand16, m: usize, k: usize, n: usize, threads: usize) {
    let kp = k.div_ceil(2);
    let (row_panels, col_panels) = (m.div_ceil(MR), n.div_ceil(NR));
    let threaded = threads > 1;
    let mut packed_a = vec![0u32; row_panels * kp * MR];
    let mut packed_b = vec![0u32; col_panels * kp * NR];
    let (pa, pb) = (Shared(packed_a.as_mut_ptr()), Shared(packed_b.as_mut_ptr()));
    team::for_each_part_if(threaded, row_panels + col_panels, |i| {
        let (pa, pb) = (pa, pb);
        // SAFETY: part i writes panel i of one packed buffer, disjoint from every other part's;
        // the operands cover the matrices (caller's contract).
        unsafe {
            if i < row_panels {
                let out = std::slice::from_raw_parts_mut(pa.0.add(i * kp * MR), kp * MR);
                pack_a(out, a, i * MR, m, k);
            } else {
                let j = i - row_panels;
                let out = std::slice::from_raw_parts_mut(pb.0.add(j * kp * NR), kp * NR);
                pack_b(out, b, j * NR, n, k);
            }
        }
    });
    // Enough blocks for every thread: fewer row panels per block when the matrix is short.
    let mut rows_per_block = ROW_PANELS.min(row_panels);
    let col_blocks = col_panels.div_ceil(COL_PANELS);
    while rows_per_block > 1 && row_panels.div_ceil(rows_per_block) * col_blocks < 2 * threads {
        rows_per_block = rows_per_block.div_ceil(2);
    }
    let row_blocks = row_panels.div_ceil(rows_per_block);
    let out = Shared(dst);
    let (pa, pb) = (Shared(packed_a.as_ptr().cast_mut()), Shared(packed_b.as_ptr().cast_mut()));
    team::for_each_part_if(threaded, row_blocks * col_blocks, |part| {
        let (out, pa, pb) = (out, pa, pb);
        let (rb, cb) = (part / col_blocks, part % col_blocks);
        for jp in cb * COL_PANELS..((cb + 1) * COL_PANELS).min(col_panels) {
            for ip in rb * rows_per_block..((rb + 1) * rows_per_block).min(row_panels) {
                let (i0, j0) = (ip * MR, jp * NR);
                // SAFETY: the panels were packed above with kp steps each; the tile
                // (rows i0.., columns j0..) lies inside dst and belongs to this part alone;
                // available() said the CPU runs the kernel.
                unsafe {
                    tile(
                        kp,
                        pa.0.add(ip * kp * MR),
                        pb.0.add(jp * kp * NR),
                        out.0.add(i0 * dst_rs + j0),
                        dst_rs,
                        (m - i0).min(MR),
                        (n - j0).min(NR),
                        accumulate,
                    );
                }
            }
        }
    });
}
