//! Quantizing and packing both operands into quads of consecutive k: a
//! 32-bit word holds four bytes of one row (A) or one column (B), the lowest
//! k in the low byte. Rows, columns and k past the matrix's edge are zero in
//! both operands, so padding adds nothing to the sums.

use super::{MAX_K, MR, NR};
use crate::error::{Error, Result};

/// Zero words after the last panel: the AMX tile reads k in steps of 16
/// quads, so its last step may run up to 15 quads past a panel's end. Past
/// k the activations are zero, so what it reads there (the next panel, or
/// these words) adds nothing; the words only keep the read in bounds.
pub(super) const AMX_TAIL: usize = 15 * NR;

/// Weights quantized symmetric per column and packed for [`super::linear_q8`].
#[derive(Clone, Debug)]
pub struct PackedQ8 {
    /// Rows of the weight matrix (the input features).
    pub k: usize,
    /// Columns (the output features).
    pub n: usize,
    /// `n.div_ceil(NR)` panels of `k.div_ceil(4) * NR` words, then
    /// [`AMX_TAIL`] zero words (see there).
    pub(super) words: Vec<u32>,
    /// `Σ_k q[k, j]` per column (the zero-point correction).
    pub(super) colsum: Vec<i32>,
    /// One scale per column, padded with zeros to a whole panel.
    pub(super) scales: Vec<f32>,
}

impl PackedQ8 {
    /// The per-column scales.
    pub fn scales(&self) -> &[f32] {
        &self.scales[..self.n]
    }

    /// The quantized values as a row-major `k x n` matrix (unpacked).
    pub fn values(&self) -> Vec<i8> {
        let kq = self.k.div_ceil(4);
        let mut out = vec![0i8; self.k * self.n];
        for j in 0..self.n {
            let panel = &self.words[(j / NR) * kq * NR..];
            for kk in 0..self.k {
                let word = panel[(kk / 4) * NR + j % NR];
                out[kk * self.n + j] = (word >> (8 * (kk % 4))) as u8 as i8;
            }
        }
        out
    }

    /// Bytes held by the packed weights.
    pub fn nbytes(&self) -> usize {
        self.words.len() * 4 + self.colsum.len() * 4 + self.scales.len() * 4
    }
}

/// Burn's `Q8S` per column: `scale[j] = max_k |w[k, j]| / 127`, `q =
/// round(w / scale)` (ties away from zero) clamped to -127..=127; an all-zero
/// column gets scale 1 (its values are 0 either way).
pub fn quantize_symmetric_columns(w: &[f32], k: usize, n: usize) -> (Vec<i8>, Vec<f32>) {
    let mut scales = vec![0f32; n];
    for row in w.chunks_exact(n).take(k) {
        for (s, &v) in scales.iter_mut().zip(row) {
            *s = s.max(v.abs());
        }
    }
    for s in &mut scales {
        *s = if *s > 0.0 && s.is_finite() { *s / 127.0 } else { 1.0 };
    }
    let q = w[..k * n]
        .iter()
        .enumerate()
        .map(|(i, &v)| (v / scales[i % n]).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (q, scales)
}

/// Packs a row-major `k x n` matrix of s8 values with its per-column scales.
pub fn pack_weights(q: &[i8], scales: &[f32], k: usize, n: usize) -> Result<PackedQ8> {
    if k == 0 || n == 0 || q.len() != k * n || scales.len() != n {
        return Err(Error::invalid(
            "quantize",
            format!("int8 weights: expected {k} x {n} values and {n} scales, found {} values and {} scales", q.len(), scales.len()),
        ));
    }
    if k > MAX_K {
        return Err(Error::invalid("quantize", format!("int8 weights: at most {MAX_K} input features keep the i32 sums exact, found {k}")));
    }
    let (kq, panels) = (k.div_ceil(4), n.div_ceil(NR));
    let mut words = vec![0u32; panels * kq * NR + AMX_TAIL];
    let mut colsum = vec![0i32; panels * NR];
    for (kk, row) in q.chunks_exact(n).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            words[(j / NR) * kq * NR + (kk / 4) * NR + j % NR] |= (v as u8 as u32) << (8 * (kk % 4));
            colsum[j] += v as i32;
        }
    }
    let mut padded = scales.to_vec();
    padded.resize(panels * NR, 0.0);
    Ok(PackedQ8 { k, n, words, colsum, scales: padded })
}

/// Lanes of the vectorized row passes.
const LANES: usize = 16;

/// The smallest and largest value of `row` and 0 (NaN ignored), over
/// [`LANES`] independent lanes so that the compiler vectorizes it.
#[inline(always)]
fn range_with_zero(row: &[f32]) -> (f32, f32) {
    let (mut lo, mut hi) = ([0f32; LANES], [0f32; LANES]);
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for l in 0..LANES {
            lo[l] = lo[l].min(chunk[l]);
            hi[l] = hi[l].max(chunk[l]);
        }
    }
    let (mut lo, mut hi) = (lo.iter().fold(0f32, |a, &b| a.min(b)), hi.iter().fold(0f32, |a, &b| a.max(b)));
    for &v in tail {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    (lo, hi)
}

/// `round(v * inv + z)` (ties away from zero) clamped to 0..=255; clamping
/// first gives the same value (the bounds are integers) and lets the
/// rounding be a truncation plus a compare, which vectorizes.
#[inline(always)]
pub(super) fn quantize_u8(v: f32, inv: f32, z: f32) -> u8 {
    let y = (v * inv + z).clamp(0.0, 255.0);
    let t = y as u8;
    t + u8::from(y - f32::from(t) >= 0.5)
}

/// Quantizes rows `r0..r0 + MR` of a row-major `m x k` f32 matrix (affine
/// per row, u8) into one packed panel `out` (`k.div_ceil(4) * MR` words),
/// writing each row's scale and zero point into `scale`/`zero` (MR each).
/// `wide` runs it compiled for AVX-512 (where the CPU has it).
#[allow(clippy::too_many_arguments)]
pub(super) fn quantize_panel(out: &mut [u32], scale: &mut [f32], zero: &mut [i32], x: &[f32], r0: usize, m: usize, k: usize, wide: bool) {
    #[cfg(target_arch = "x86_64")]
    if wide && super::vnni_available() {
        // SAFETY: vnni_available() said the CPU has AVX-512 F and BW.
        unsafe { quantize_panel_avx512(out, scale, zero, x, r0, m, k) };
        return;
    }
    let _ = wide;
    quantize_panel_body(out, scale, zero, x, r0, m, k);
}

/// [`quantize_panel_body`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn quantize_panel_avx512(out: &mut [u32], scale: &mut [f32], zero: &mut [i32], x: &[f32], r0: usize, m: usize, k: usize) {
    quantize_panel_body(out, scale, zero, x, r0, m, k);
}

#[inline(always)]
fn quantize_panel_body(out: &mut [u32], scale: &mut [f32], zero: &mut [i32], x: &[f32], r0: usize, m: usize, k: usize) {
    out.fill(0);
    scale.fill(0.0);
    zero.fill(0);
    let mut bytes = vec![0u8; k.next_multiple_of(4)];
    for r in 0..(m - r0).min(MR) {
        (scale[r], zero[r]) = quantize_row(&x[(r0 + r) * k..(r0 + r + 1) * k], &mut bytes);
        for (kq, quad) in bytes.chunks_exact(4).enumerate() {
            out[kq * MR + r] = u32::from_le_bytes([quad[0], quad[1], quad[2], quad[3]]);
        }
    }
}

/// Quantizes `row` (affine, u8) into the first `row.len()` of `bytes`;
/// returns its scale and zero point.
#[inline(always)]
fn quantize_row(row: &[f32], bytes: &mut [u8]) -> (f32, i32) {
    // The range holds 0 so that zero padding is exact.
    let (lo, hi) = range_with_zero(row);
    let s = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
    let z = (-lo / s).round().clamp(0.0, 255.0);
    let inv = 1.0 / s;
    for (q, &v) in bytes.iter_mut().zip(row) {
        *q = quantize_u8(v, inv, z);
    }
    (s, z as i32)
}

/// Quantizes rows `r0..r0 + 16` of a row-major `m x k` f32 matrix like
/// [`quantize_panel`], into one AMX row tile `out`: `k.div_ceil(64)` blocks
/// of 16 rows x 64 bytes, zero past the matrix's edge.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
pub(super) fn quantize_amx_rows(out: &mut [u8], scale: &mut [f32], zero: &mut [i32], x: &[f32], r0: usize, m: usize, k: usize) {
    if super::vnni_available() {
        // SAFETY: vnni_available() said the CPU has AVX-512 F and BW.
        unsafe { quantize_amx_rows_avx512(out, scale, zero, x, r0, m, k) };
    } else {
        quantize_amx_rows_body(out, scale, zero, x, r0, m, k);
    }
}

/// [`quantize_amx_rows_body`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn quantize_amx_rows_avx512(out: &mut [u8], scale: &mut [f32], zero: &mut [i32], x: &[f32], r0: usize, m: usize, k: usize) {
    quantize_amx_rows_body(out, scale, zero, x, r0, m, k);
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn quantize_amx_rows_body(out: &mut [u8], scale: &mut [f32], zero: &mut [i32], x: &[f32], r0: usize, m: usize, k: usize) {
    use super::amx::{AR, KB};
    let rows = (m - r0).min(AR);
    // Rows past m stay zero; the rows' tails past k are zeroed by the copies below.
    out.fill(0);
    scale.fill(0.0);
    zero.fill(0);
    let mut bytes = vec![0u8; k.next_multiple_of(KB)];
    for r in 0..rows {
        (scale[r], zero[r]) = quantize_row(&x[(r0 + r) * k..(r0 + r + 1) * k], &mut bytes);
        for (kb, chunk) in bytes.chunks_exact(KB).enumerate() {
            out[(kb * AR + r) * KB..][..KB].copy_from_slice(chunk);
        }
    }
}
