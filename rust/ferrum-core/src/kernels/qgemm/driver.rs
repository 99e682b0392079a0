//! The quantized linear: the activations quantized into row panels, then
//! the blocked product with the f32 epilogue applied to each finished tile.

use super::blocked::for_each_tile;
use super::epilogue::Epilogue;
use super::pack::{quantize_panel, PackedQ8};
use super::{Path, MR, NR};
use crate::error::{Error, Result};
use crate::kernels::team::{self, Shared};

/// `out[m x n] = x[m x k] @ w + bias` with `x` quantized per row to u8 on the
/// fly and `w` the packed s8 weights; `x` and `out` are row-major.
pub fn linear_q8(x: &[f32], m: usize, w: &PackedQ8, bias: Option<&[f32]>, out: &mut [f32], threads: usize) -> Result<()> {
    linear_q8_on(x, m, w, bias, out, threads, Path::best())
}

/// [`linear_q8`] on the given tile (or the next slower one where the CPU lacks it).
pub(super) fn linear_q8_on(x: &[f32], m: usize, w: &PackedQ8, bias: Option<&[f32]>, out: &mut [f32], threads: usize, path: Path) -> Result<()> {
    let path = path.usable();
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
    let col_panels = n.div_ceil(NR);
    let threaded = threads > 1;
    let dst = Shared(out.as_mut_ptr());
    // The epilogue of the block of sums `acc` (rows from i0, the NR columns of panel jp).
    let finish = |i0: usize, jp: usize, acc: &[[i32; NR]], sx: &[f32], zx: &[i32]| {
        // A reference to the whole `Shared` (Sync), not a capture of its raw-pointer field.
        let dst = &dst;
        let j0 = jp * NR;
        let (rows, cols) = ((m - i0).min(acc.len()), (n - j0).min(NR));
        let e = Epilogue {
            sx: &sx[i0..i0 + rows],
            zx: &zx[i0..i0 + rows],
            sw: &w.scales[j0..j0 + NR],
            colsum: &w.colsum[j0..j0 + NR],
            bias: bias.map(|b| &b[j0..j0 + cols]),
        };
        // SAFETY: the block (rows i0.., columns j0..) lies inside `out` and this call alone writes it.
        let c = unsafe { dst.0.add(i0 * n + j0) };
        #[cfg(target_arch = "x86_64")]
        if path != Path::Portable {
            // SAFETY: both faster paths need AVX-512; the slices and the block fit (above).
            unsafe { super::avx512::finish_f32(acc, &e, c, n, rows, cols) };
            return;
        }
        for (r, row) in acc.iter().enumerate().take(rows) {
            for (j, &s) in row.iter().enumerate().take(cols) {
                // Wrapping: the true difference fits in i32 (|q - zero| <= 255), its parts may not.
                let centred = s.wrapping_sub(e.zx[r].wrapping_mul(e.colsum[j])) as f32;
                // SAFETY: (r, j) lies inside the block.
                unsafe { *c.add(r * n + j) = centred.mul_add(e.sx[r] * e.sw[j], e.bias.map_or(0.0, |b| b[j])) };
            }
        }
    };
    #[cfg(target_arch = "x86_64")]
    if path == Path::Amx {
        use super::amx::{for_each_block, AR, BLOCK, KB};
        let (tiles, steps) = (m.div_ceil(AR), k.div_ceil(KB));
        let mut packed = vec![0u8; tiles * steps * BLOCK];
        let mut sx = vec![0f32; tiles * AR];
        let mut zx = vec![0i32; tiles * AR];
        let (pa, ps, pz) = (Shared(packed.as_mut_ptr()), Shared(sx.as_mut_ptr()), Shared(zx.as_mut_ptr()));
        team::for_each_part_if(threaded, tiles, |i| {
            let (pa, ps, pz) = (pa, ps, pz);
            // SAFETY: part i writes row tile i of each buffer, disjoint from every other part's.
            unsafe {
                super::pack::quantize_amx_rows(
                    std::slice::from_raw_parts_mut(pa.0.add(i * steps * BLOCK), steps * BLOCK),
                    std::slice::from_raw_parts_mut(ps.0.add(i * AR), AR),
                    std::slice::from_raw_parts_mut(pz.0.add(i * AR), AR),
                    x,
                    i * AR,
                    m,
                    k,
                );
            }
        });
        for_each_block(&packed, &w.words, kq, tiles, col_panels, threads, |i0, jp, acc| finish(i0, jp, acc, &sx, &zx));
        return Ok(());
    }
    let vnni = path == Path::Vnni;
    let row_panels = m.div_ceil(MR);
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
                vnni,
            );
        }
    });
    for_each_tile(&packed, &w.words, kq, row_panels, col_panels, threads, vnni, |ip, jp, acc| finish(ip * MR, jp, acc, &sx, &zx));
    Ok(())
}
