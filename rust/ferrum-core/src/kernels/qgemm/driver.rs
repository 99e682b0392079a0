//! The quantized linear: the activations quantized into row panels, then
//! the blocked product with the f32 epilogue applied to each finished tile.

use super::blocked::for_each_tile;
use super::epilogue::Epilogue;
use super::pack::{quantize_panel, PackedQ8};
use super::{MR, NR};
use crate::error::{Error, Result};
use crate::kernels::team::{self, Shared};

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
                vnni,
            );
        }
    });
    let dst = Shared(out.as_mut_ptr());
    for_each_tile(&packed, &w.words, kq, row_panels, col_panels, threads, vnni, |ip, jp, acc| {
        // A reference to the whole `Shared` (Sync), not a capture of its raw-pointer field.
        let dst = &dst;
        let (i0, j0) = (ip * MR, jp * NR);
        let (rows, cols) = ((m - i0).min(MR), (n - j0).min(NR));
        let e = Epilogue {
            sx: &sx[i0..i0 + MR],
            zx: &zx[i0..i0 + MR],
            sw: &w.scales[j0..j0 + NR],
            colsum: &w.colsum[j0..j0 + NR],
            bias: bias.map(|b| &b[j0..j0 + cols]),
        };
        // SAFETY: the tile (rows i0.., columns j0..) lies inside `out` and this call alone writes it.
        let c = unsafe { dst.0.add(i0 * n + j0) };
        #[cfg(target_arch = "x86_64")]
        if vnni {
            // SAFETY: vnni_available() said the CPU has AVX-512; the slices and the tile fit (above).
            unsafe { super::avx512::finish_f32(acc, &e, c, n, rows, cols) };
            return;
        }
        for (r, row) in acc.iter().enumerate().take(rows) {
            for (j, &s) in row.iter().enumerate().take(cols) {
                // Wrapping: the true difference fits in i32 (|q - zero| <= 255), its parts may not.
                let centred = s.wrapping_sub(e.zx[r].wrapping_mul(e.colsum[j])) as f32;
                // SAFETY: (r, j) lies inside the tile.
                unsafe { *c.add(r * n + j) = centred.mul_add(e.sx[r] * e.sw[j], e.bias.map_or(0.0, |b| b[j])) };
            }
        }
    });
    Ok(())
}
