//! Quantizing the activations into row panels, then tiles of the output
//! split over threads, each tile running over all of k with its sums in
//! registers.

use super::epilogue::Epilogue;
use super::pack::{quantize_panel, PackedQ8};
use super::portable;
use super::{MR, NR};
use crate::error::{Error, Result};
use crate::kernels::team::{self, Shared};

/// Row panels per block of work, and column panels: a block's packed weight
/// panels are reused by all its row panels while they sit in L2.
const ROW_PANELS: usize = 8;
const COL_PANELS: usize = 4;

/// `out[m x n] = x[m x k] @ w + bias` with `x` quantized per row to u8 on the
/// fly and `w` the packed s8 weights; `x` and `out` are row-major.
pub fn linear_q8(x: &[f32], m: usize, w: &PackedQ8, bias: Option<&[f32]>, out: &mut [f32], threads: usize) -> Result<()> {
    linear_q8_on(x, m, w, bias, out, threads, super::vnni_available())
}

/// [`linear_q8`] on the VNNI tile or the portable one (`vnni` is only
/// honoured where the CPU has it).
pub(super) fn linear_q8_on(x: &[f32], m: usize, w: &PackedQ8, bias: Option<&[f32]>, out: &mut [f32], threads: usize, vnni: bool) -> Result<()> {
    let vnni = vnni && super::vnni_available();
    let (k, n) = (w.k, w.n);
    if x.len() != m * k || out.len() != m * n || bias.is_some_and(|b| b.len() != n) {
        return Err(Error::invalid(
            "quantized linear",
            format!(
                "expected an input of {m} x {k}, an output of {m} x {n} and {n} biases, found {}, {} and {}",
                x.len(),
                out.len(),
                bias.map_or(n, <[f32]>::len)
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
    let mut sx = vec![0f32; row_panels * MR];
    let mut zx = vec![0i32; row_panels * MR];
    let (pa, ps, pz) = (Shared(packed.as_mut_ptr()), Shared(sx.as_mut_ptr()), Shared(zx.as_mut_ptr()));
    team::for_each_part_if(threaded, row_panels, |i| {
        let (pa, ps, pz) = (pa, ps, pz);
        // SAFETY: part i writes panel i of each buffer, disjoint from every other part's.
        unsafe {
            quantize_panel(
                std::slice::from_raw_parts_mut(pa.0.add(i * kq * MR), kq * MR),
                std::slice::from_raw_parts_mut(ps.0.add(i * MR), MR),
                std::slice::from_raw_parts_mut(pz.0.add(i * MR), MR),
                x,
                i * MR,
                m,
                k,
            );
        }
    });
    let mut rows_per_block = ROW_PANELS.min(row_panels);
    let col_blocks = col_panels.div_ceil(COL_PANELS);
    while rows_per_block > 1 && row_panels.div_ceil(rows_per_block) * col_blocks < 2 * threads {
        rows_per_block = rows_per_block.div_ceil(2);
    }
    let row_blocks = row_panels.div_ceil(rows_per_block);
    let dst = Shared(out.as_mut_ptr());
    team::for_each_part_if(threaded, row_blocks * col_blocks, |part| {
        // A reference to the whole `Shared` (Sync), not a capture of its raw-pointer field.
        let dst = &dst;
        let (rb, cb) = (part / col_blocks, part % col_blocks);
        for jp in cb * COL_PANELS..((cb + 1) * COL_PANELS).min(col_panels) {
            let j0 = jp * NR;
            let b = &w.words[jp * kq * NR..(jp + 1) * kq * NR];
            for ip in rb * rows_per_block..((rb + 1) * rows_per_block).min(row_panels) {
                let i0 = ip * MR;
                let e = Epilogue {
                    sx: &sx[i0..i0 + MR],
                    zx: &zx[i0..i0 + MR],
                    sw: &w.scales[j0..j0 + NR],
                    colsum: &w.colsum[j0..j0 + NR],
                    bias: bias.map(|b| &b[j0..]),
                };
                let a = &packed[ip * kq * MR..(ip + 1) * kq * MR];
                let (rows, cols) = ((m - i0).min(MR), (n - j0).min(NR));
                // SAFETY: the tile (rows i0.., columns j0..) lies inside `out` and belongs to this
                // part alone; the panels hold kq quads; vnni_available() said the CPU runs the kernel.
                unsafe {
                    let c = dst.0.add(i0 * n + j0);
                    #[cfg(target_arch = "x86_64")]
                    if vnni {
                        super::avx512::tile(kq, a.as_ptr(), b.as_ptr(), &e, c, n, rows, cols);
                        continue;
                    }
                    let _ = vnni;
                    let acc = portable::sums(kq, a, b);
                    for (r, row) in acc.iter().enumerate().take(rows) {
                        for (j, &s) in row.iter().enumerate().take(cols) {
                            // Wrapping: the true difference fits in i32 (|q - zero| <= 255), its parts may not.
                            let centred = s.wrapping_sub(e.zx[r].wrapping_mul(e.colsum[j])) as f32;
                            *c.add(r * n + j) = centred.mul_add(e.sx[r] * e.sw[j], e.bias.map_or(0.0, |b| b[j]));
                        }
                    }
                }
            }
        }
    });
    Ok(())
}
