//! The exact integer product ONNX's `MatMulInteger` and `QLinearMatMul`
//! define, on the int8 tiles: u8 rows (`a`, zero point per tensor or per
//! row) times packed s8 columns (`w`, zero point per tensor or per column),
//! `y[i, j] = Σ_k (a[i, k] - za[i]) * (w[k, j] - zw[j])` in i32.
//!
//! The tiles sum `a * w` exactly; the zero points come out after the sum:
//! `y = acc - za[i] * colsum[j] - zw[j] * rowsum[i] + k * za[i] * zw[j]`,
//! computed in wrapping i32 arithmetic, which gives the true value mod 2^32
//! as ONNX's int32 output holds it.

use super::blocked::for_each_tile;
use super::pack::PackedQ8;
use super::rows::Rows;
use super::{Path, MR, NR};
use crate::error::{Error, Result};
use crate::kernels::team::{self, Shared};

/// Packs rows `r0..r0 + MR` of a row-major `m x k` u8 matrix into one panel
/// of `k.div_ceil(4) * MR` words (the activation layout of the tiles: a
/// word is four consecutive bytes of a row, read little-endian), writing
/// each row's sum into `rowsum`.
fn pack_rows(out: &mut [u32], rowsum: &mut [i32], a: &Rows<'_>, r0: usize, m: usize, k: usize) {
    out.fill(0);
    rowsum.fill(0);
    let mut buf = row_buffer(a, k);
    for r in 0..(m - r0).min(MR) {
        let row = a.row(r0 + r, k, &mut buf);
        let quads = row.chunks_exact(4);
        let tail = quads.remainder();
        let full = quads.len();
        for (q, quad) in quads.enumerate() {
            out[q * MR + r] = u32::from_le_bytes([quad[0], quad[1], quad[2], quad[3]]);
        }
        let mut last = [0u8; 4];
        last[..tail.len()].copy_from_slice(tail);
        if !tail.is_empty() {
            out[full * MR + r] = u32::from_le_bytes(last);
        }
        rowsum[r] = row.iter().map(|&v| v as i32).sum();
    }
}

/// Copies rows `r0..r0 + 16` of a row-major `m x k` u8 matrix into one AMX
/// row tile `out` (`k.div_ceil(64)` blocks of 16 rows x 64 bytes, zero past
/// the matrix's edges), writing each row's sum into `rowsum`.
#[cfg(target_arch = "x86_64")]
fn pack_amx_rows(out: &mut [u8], rowsum: &mut [i32], a: &Rows<'_>, r0: usize, m: usize, k: usize) {
    use super::amx::{AR, KB};
    out.fill(0);
    rowsum.fill(0);
    let mut buf = row_buffer(a, k);
    for r in 0..(m - r0).min(AR) {
        let row = a.row(r0 + r, k, &mut buf);
        for (kb, chunk) in row.chunks(KB).enumerate() {
            out[(kb * AR + r) * KB..][..chunk.len()].copy_from_slice(chunk);
        }
        rowsum[r] = row.iter().map(|&v| v as i32).sum();
    }
}

/// Room for one quantized row (none for rows already u8).
fn row_buffer(a: &Rows<'_>, k: usize) -> Vec<u8> {
    match a {
        Rows::U8(_) => Vec::new(),
        Rows::Quantized { .. } => vec![0; k],
    }
}

/// A zero point list of one value (per tensor) or `len` values.
fn zero_at(zero: &[i32], i: usize) -> i32 {
    if zero.len() == 1 {
        zero[0]
    } else {
        zero[i]
    }
}

/// `out[m x n] = (a - a_zero) @ (w - w_zero)` exactly (wrapped to i32);
/// `a` is row-major `m x k` u8, `a_zero` holds 1 or `m` values, `w_zero`
/// 1 or `n`.
pub fn matmul_u8s8(a: &[u8], m: usize, a_zero: &[i32], w: &PackedQ8, w_zero: &[i32], out: &mut [i32], threads: usize) -> Result<()> {
    matmul_u8s8_on(a, m, a_zero, w, w_zero, out, threads, Path::best())
}

/// [`matmul_u8s8`] on the given tile (or the next slower one where the CPU lacks it).
#[allow(clippy::too_many_arguments)]
pub(super) fn matmul_u8s8_on(a: &[u8], m: usize, a_zero: &[i32], w: &PackedQ8, w_zero: &[i32], out: &mut [i32], threads: usize, path: Path) -> Result<()> {
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
    let dst = Shared(out.as_mut_ptr());
    matmul_u8s8_with(Rows::U8(a), m, a_zero, w, w_zero, threads, path, |i, j0, sums| {
        let dst = &dst;
        // SAFETY: row i, columns j0..j0 + sums.len() lie inside `out`, in the tile this call alone writes.
        let d = unsafe { std::slice::from_raw_parts_mut(dst.0.add(i * n + j0), sums.len()) };
        d.copy_from_slice(sums);
    })
}

/// `out[i, j] = f32(Σ_k (a[i, k] - a_zero) * w[k, j]) * scale[j] + bias[j]`,
/// then `max(., 0)` with `relu`: each step rounded in f32 as the separate
/// Cast, Mul, Add and Relu nodes of onnxruntime's dynamically quantized
/// linear compute it (no fused multiply-add). `scale` holds 1 or `n`
/// values, `bias` `n`; `a` is u8 rows, or f32 rows quantized as they are
/// packed (`a_zero` then being their zero point).
#[allow(clippy::too_many_arguments)]
pub fn matmul_u8s8_scaled(a: Rows<'_>, m: usize, a_zero: i32, w: &PackedQ8, w_zero: &[i32], scale: &[f32], bias: Option<&[f32]>, relu: bool, out: &mut [f32], threads: usize) -> Result<()> {
    matmul_u8s8_scaled_on(a, m, a_zero, w, w_zero, scale, bias, relu, out, threads, Path::best())
}

/// [`matmul_u8s8_scaled`] on the given tile (or the next slower one).
#[allow(clippy::too_many_arguments)]
pub(super) fn matmul_u8s8_scaled_on(
    a: Rows<'_>,
    m: usize,
    a_zero: i32,
    w: &PackedQ8,
    w_zero: &[i32],
    scale: &[f32],
    bias: Option<&[f32]>,
    relu: bool,
    out: &mut [f32],
    threads: usize,
    path: Path,
) -> Result<()> {
    let n = w.n;
    if out.len() != m * n || (scale.len() != 1 && scale.len() != n) || bias.is_some_and(|b| b.len() != n) {
        return Err(Error::invalid(
            "integer matmul",
            format!("expected a {m} x {n} output, 1 or {n} scales and {n} biases, found {}, {} and {}", out.len(), scale.len(), bias.map_or(n, <[f32]>::len)),
        ));
    }
    let scales: Vec<f32> = if scale.len() == 1 { vec![scale[0]; n] } else { scale.to_vec() };
    let dst = Shared(out.as_mut_ptr());
    let wide = path != Path::Portable;
    matmul_u8s8_with(a, m, &[a_zero], w, w_zero, threads, path, |i, j0, sums| {
        let dst = &dst;
        // SAFETY: as in matmul_u8s8_on.
        let d = unsafe { std::slice::from_raw_parts_mut(dst.0.add(i * n + j0), sums.len()) };
        let s = &scales[j0..j0 + sums.len()];
        let b = bias.map(|b| &b[j0..j0 + sums.len()]);
        #[cfg(target_arch = "x86_64")]
        if wide {
            // SAFETY: both faster paths need AVX-512 (usable() checked it).
            unsafe { scale_row_avx512(d, sums, s, b, relu) };
            return;
        }
        let _ = wide;
        scale_row(d, sums, s, b, relu);
    })
}

/// One output row of [`matmul_u8s8_scaled`]: `d[j] = f32(sums[j]) * s[j]
/// (+ b[j])`, then relu, each step rounded on its own.
#[inline(always)]
fn scale_row(d: &mut [f32], sums: &[i32], s: &[f32], b: Option<&[f32]>, relu: bool) {
    match b {
        Some(b) => {
            for (((y, &v), &s), &b) in d.iter_mut().zip(sums).zip(s).zip(b) {
                *y = v as f32 * s + b;
            }
        }
        None => {
            for ((y, &v), &s) in d.iter_mut().zip(sums).zip(s) {
                *y = v as f32 * s;
            }
        }
    }
    if relu {
        for y in d.iter_mut() {
            *y = y.max(0.0);
        }
    }
}

/// [`scale_row`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scale_row_avx512(d: &mut [f32], sums: &[i32], s: &[f32], b: Option<&[f32]>, relu: bool) {
    scale_row(d, sums, s, b, relu);
}


/// The product of [`matmul_u8s8_on`] with the exact sums (zero points out,
/// wrapped to i32) handed to `finish(row, j0, sums)` a block row at a time
/// (columns `j0..j0 + sums.len()`), from whichever thread computed them.
#[allow(clippy::too_many_arguments)]
fn matmul_u8s8_with(a: Rows<'_>, m: usize, a_zero: &[i32], w: &PackedQ8, w_zero: &[i32], threads: usize, path: Path, finish: impl Fn(usize, usize, &[i32]) + Sync) -> Result<()> {
    let path = path.usable();
    let (k, n) = (w.k, w.n);
    let zeros_fit = (a_zero.len() == 1 || a_zero.len() == m) && (w_zero.len() == 1 || w_zero.len() == n);
    if a.len() != m * k || !zeros_fit {
        return Err(Error::invalid(
            "integer matmul",
            format!("expected a {m} x {k} input, 1 or {m} input zero points and 1 or {n} weight zero points, found {}, {} and {} values", a.len(), a_zero.len(), w_zero.len()),
        ));
    }
    if m == 0 {
        return Ok(());
    }
    let kq = k.div_ceil(4);
    let col_panels = n.div_ceil(NR);
    // The calling thread's buffers, taken out and put back: fresh ones cost a page clear a call
    // (every word is written by the packing).
    let (mut packed, mut rowsum) = SCRATCH.take();
    let zw: Vec<i32> = if w_zero.len() == 1 { vec![w_zero[0]; n] } else { w_zero.to_vec() };
    // The zero points out of the sum, in wrapping i32 (ONNX's int32 result is
    // the true value mod 2^32, and so is every wrapped step):
    // y = acc - za * colsum[j] - zw[j] * (rowsum - k * za).
    let tile_done = |i0: usize, jp: usize, acc: &[[i32; NR]], row_term: &[i32]| {
        let j0 = jp * NR;
        let (rows, cols) = ((m - i0).min(acc.len()), (n - j0).min(NR));
        let (colsum, zw) = (&w.colsum[j0..j0 + cols], &zw[j0..j0 + cols]);
        let mut y = [0i32; NR];
        for (r, sums) in acc.iter().enumerate().take(rows) {
            let (za, t) = (zero_at(a_zero, i0 + r), row_term[i0 + r]);
            for (((y, &s), &cs), &z) in y.iter_mut().zip(sums).zip(colsum).zip(zw) {
                *y = s.wrapping_sub(za.wrapping_mul(cs)).wrapping_sub(z.wrapping_mul(t));
            }
            finish(i0 + r, j0, &y[..cols]);
        }
    };
    let row_term = |rowsum: &[i32]| -> Vec<i32> { (0..m).map(|i| rowsum[i].wrapping_sub((k as i32).wrapping_mul(zero_at(a_zero, i)))).collect() };
    #[cfg(target_arch = "x86_64")]
    if path == Path::Amx {
        use super::amx::{for_each_block, AR, BLOCK, KB};
        let (tiles, steps) = (m.div_ceil(AR), k.div_ceil(KB));
        // The AMX tiles read bytes: the same buffer, viewed as bytes (4 to a word).
        packed.resize((tiles * steps * BLOCK).div_ceil(4), 0);
        rowsum.resize(tiles * AR, 0);
        // SAFETY: u32 words viewed as their bytes: any bytes are valid, alignment only drops.
        let bytes = unsafe { std::slice::from_raw_parts_mut(packed.as_mut_ptr() as *mut u8, tiles * steps * BLOCK) };
        let (pa, ps) = (Shared(bytes.as_mut_ptr()), Shared(rowsum.as_mut_ptr()));
        team::for_each_part_if(threads > 1, tiles, |i| {
            let (pa, ps) = (pa, ps);
            // SAFETY: part i writes row tile i of each buffer, disjoint from every other part's.
            unsafe {
                pack_amx_rows(
                    std::slice::from_raw_parts_mut(pa.0.add(i * steps * BLOCK), steps * BLOCK),
                    std::slice::from_raw_parts_mut(ps.0.add(i * AR), AR),
                    &a,
                    i * AR,
                    m,
                    k,
                );
            }
        });
        let terms = row_term(&rowsum);
        for_each_block(bytes, &w.words, kq, tiles, col_panels, threads, |i0, jp, acc| tile_done(i0, jp, acc, &terms));
        SCRATCH.set((packed, rowsum));
        return Ok(());
    }
    let row_panels = m.div_ceil(MR);
    packed.resize(row_panels * kq * MR, 0);
    rowsum.resize(row_panels * MR, 0);
    let (pa, ps) = (Shared(packed.as_mut_ptr()), Shared(rowsum.as_mut_ptr()));
    team::for_each_part_if(threads > 1, row_panels, |i| {
        let (pa, ps) = (pa, ps);
        // SAFETY: part i writes panel i of each buffer, disjoint from every other part's.
        unsafe {
            pack_rows(
                std::slice::from_raw_parts_mut(pa.0.add(i * kq * MR), kq * MR),
                std::slice::from_raw_parts_mut(ps.0.add(i * MR), MR),
                &a,
                i * MR,
                m,
                k,
            );
        }
    });
    let terms = row_term(&rowsum);
    for_each_tile(&packed, &w.words, kq, row_panels, col_panels, threads, path == Path::Vnni, |ip, jp, acc| tile_done(ip * MR, jp, acc, &terms));
    SCRATCH.set((packed, rowsum));
    Ok(())
}

thread_local! {
    /// The packed rows and row sums of the products a thread starts.
    static SCRATCH: std::cell::RefCell<(Vec<u32>, Vec<i32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}
