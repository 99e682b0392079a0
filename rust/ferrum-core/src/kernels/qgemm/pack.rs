//! Quantizing and packing both operands into quads of consecutive k: a
//! 32-bit word holds four bytes of one row (A) or one column (B), the lowest
//! k in the low byte. Rows, columns and k past the matrix's edge are zero in
//! both operands, so padding adds nothing to the sums.

use super::{MAX_K, MR, NR};
use crate::error::{Error, Result};

/// Weights quantized symmetric per column and packed for [`super::linear_q8`].
#[derive(Clone, Debug)]
pub struct PackedQ8 {
    /// Rows of the weight matrix (the input features).
    pub k: usize,
    /// Columns (the output features).
    pub n: usize,
    /// `n.div_ceil(NR)` panels of `k.div_ceil(4) * NR` words.
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
    let mut words = vec![0u32; panels * kq * NR];
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

/// Quantizes rows `r0..r0 + MR` of a row-major `m x k` f32 matrix (affine
/// per row, u8) into one packed panel `out` (`k.div_ceil(4) * MR` words),
/// writing each row's scale and zero point into `scale`/`zero` (MR each).
pub(super) fn quantize_panel(out: &mut [u32], scale: &mut [f32], zero: &mut [i32], x: &[f32], r0: usize, m: usize, k: usize) {
    out.fill(0);
    scale.fill(0.0);
    zero.fill(0);
    for r in 0..(m - r0).min(MR) {
        let row = &x[(r0 + r) * k..(r0 + r + 1) * k];
        // The range holds 0 so that zero padding is exact.
        let (lo, hi) = row.iter().fold((0f32, 0f32), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let s = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
        let z = (-lo / s).round().clamp(0.0, 255.0);
        let inv = 1.0 / s;
        scale[r] = s;
        zero[r] = z as i32;
        for (kk, &v) in row.iter().enumerate() {
            let q = (v * inv + z).round().clamp(0.0, 255.0) as u8;
            out[(kk / 4) * MR + r] |= (q as u32) << (8 * (kk % 4));
        }
    }
}
