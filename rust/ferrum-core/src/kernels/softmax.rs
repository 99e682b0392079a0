//! Softmax-family kernels on a contiguous buffer seen as `[outer, n, inner]`,
//! normalising along `n`. Three passes, each a flat loop over slices: max,
//! exp-and-sum (writing the exponentials), then scale (or, for log-softmax,
//! subtract the log of the sum). Along the last dim (`inner == 1`) a pass
//! walks one row; otherwise it walks whole rows of `inner` elements with
//! running max/sum vectors, so every loop stays contiguous.

use rayon::prelude::*;

use super::parallel::{go_parallel, simd, CHUNK, PAR_COSTLY};
use super::team::for_each_chunk_mut;
use crate::element::FloatElement;

/// What the normalisation produces from `e_i = exp(y_i - max)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalise {
    /// `e_i / sum e`
    Softmax,
    /// `y_i - max - ln(sum e)`
    LogSoftmax,
    /// `e_i / (exp(-max) + sum e)`, which is `exp(y_i) / (1 + sum exp(y))`
    /// (Burn's quiet softmax) without overflow.
    Quiet,
}

/// One softmax-family op: `y = -x` when `negate` (softmin), else `y = x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftmaxOp {
    pub kind: Normalise,
    pub negate: bool,
}

/// Independent accumulators, so float sums and maxima (which LLVM may not
/// reorder) still fill whole SIMD registers.
const LANES: usize = 16;
/// Exponentials written per block before summing them back, while the
/// block is still in L1.
const BLOCK: usize = 1024;

/// Write `op` of `src` (`[outer, n, inner]`, contiguous) into `dst`.
pub fn softmax<T: FloatElement>(src: &[T], dst: &mut [T], n: usize, inner: usize, op: SoftmaxOp) {
    debug_assert_eq!(src.len(), dst.len());
    if src.is_empty() {
        return;
    }
    let sign = if op.negate { -T::one() } else { T::one() };
    if inner == 1 {
        rows(src, dst, n, sign, op.kind);
    } else {
        columns(src, dst, n, inner, sign, op.kind);
    }
}

/// Tasks that split a parallel loop well across the pool.
fn enough_tasks(tasks: usize) -> bool {
    tasks >= 2 * rayon::current_num_threads()
}

fn rows<T: FloatElement>(src: &[T], dst: &mut [T], n: usize, sign: T, kind: Normalise) {
    let outer = src.len() / n;
    if !go_parallel(src.len(), PAR_COSTLY) {
        row_batch(src, dst, n, sign, kind);
    } else if enough_tasks(outer) || n < CHUNK {
        let per_task = CHUNK.div_ceil(n) * n;
        for_each_chunk_mut(dst, per_task, |i, d| row_batch(&src[i * per_task..][..d.len()], d, n, sign, kind));
    } else {
        // Few long rows: split each row across threads and combine the
        // partial maxima and sums.
        for (x, d) in src.chunks_exact(n).zip(dst.chunks_exact_mut(n)) {
            let m = x.par_chunks(CHUNK).map(|c| simd(#[inline(always)] || row_max(c, sign))).reduce(T::neg_infinity, max_ignoring_nan);
            let s: T = d
                .par_chunks_mut(CHUNK)
                .zip(x.par_chunks(CHUNK))
                .map(|(d, x)| simd(#[inline(always)] || row_exp_sum(x, d, sign, m)))
                .reduce(T::zero, |a, b| a + b);
            d.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK)).for_each(|(d, x)| simd(#[inline(always)] || row_finish(x, d, sign, m, s, kind)));
        }
    }
}

/// Whole rows of `n`, one after another.
fn row_batch<T: FloatElement>(x: &[T], d: &mut [T], n: usize, sign: T, kind: Normalise) {
    simd(
        #[inline(always)]
        || {
            for (x, d) in x.chunks_exact(n).zip(d.chunks_exact_mut(n)) {
                let m = row_max(x, sign);
                let s = row_exp_sum(x, d, sign, m);
                row_finish(x, d, sign, m, s, kind);
            }
        },
    )
}

/// NaN is skipped here: a NaN input still reaches every output of its row
/// through the sum, which keeps this a plain compare-and-select.
#[inline(always)]
fn max_ignoring_nan<T: FloatElement>(a: T, b: T) -> T {
    if b > a { b } else { a }
}

#[inline(always)]
fn row_max<T: FloatElement>(x: &[T], sign: T) -> T {
    let mut acc = [T::neg_infinity(); LANES];
    let mut chunks = x.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = max_ignoring_nan(*a, v * sign);
        }
    }
    let m = chunks.remainder().iter().fold(T::neg_infinity(), |m, &v| max_ignoring_nan(m, v * sign));
    acc.iter().fold(m, |m, &a| max_ignoring_nan(m, a))
}

/// `d = exp(sign * x - m)`, returning the sum of `d`. Each block is summed
/// on its own before joining the total, so rounding grows with the number of
/// blocks rather than the row length.
#[inline(always)]
fn row_exp_sum<T: FloatElement>(x: &[T], d: &mut [T], sign: T, m: T) -> T {
    let mut total = T::zero();
    for (x, d) in x.chunks(BLOCK).zip(d.chunks_mut(BLOCK)) {
        for (o, &v) in d.iter_mut().zip(x) {
            *o = (v * sign - m).simd_exp();
        }
        let mut acc = [T::zero(); LANES];
        let mut chunks = d.chunks_exact(LANES);
        for c in &mut chunks {
            for (a, &e) in acc.iter_mut().zip(c) {
                *a = *a + e;
            }
        }
        for (a, &e) in acc.iter_mut().zip(chunks.remainder()) {
            *a = *a + e;
        }
        total = total + acc.iter().fold(T::zero(), |s, &a| s + a);
    }
    total
}

/// Turn the exponentials in `d` into the result, given the row's max and sum.
#[inline(always)]
fn row_finish<T: FloatElement>(x: &[T], d: &mut [T], sign: T, m: T, s: T, kind: Normalise) {
    match kind {
        Normalise::Softmax | Normalise::Quiet => {
            let r = T::one() / if kind == Normalise::Quiet { s + (-m).exp() } else { s };
            for o in d.iter_mut() {
                *o = *o * r;
            }
        }
        // (y - m) - ln s rather than y - (m + ln s): for large inputs m + ln s
        // would round ln s to the coarse spacing of m.
        Normalise::LogSoftmax => {
            let lse = s.ln();
            for (o, &v) in d.iter_mut().zip(x) {
                *o = (v * sign - m) - lse;
            }
        }
    }
}

fn columns<T: FloatElement>(src: &[T], dst: &mut [T], n: usize, inner: usize, sign: T, kind: Normalise) {
    let block = n * inner;
    let outer = src.len() / block;
    let blocks = |x: &[T], d: &mut [T]| {
        let mut stats = vec![T::zero(); 2 * inner];
        simd(
            #[inline(always)]
            || {
                for (x, d) in x.chunks_exact(block).zip(d.chunks_exact_mut(block)) {
                    column_block(x, d, &mut stats, sign, kind);
                }
            },
        )
    };
    if !go_parallel(src.len(), PAR_COSTLY) {
        blocks(src, dst);
    } else if enough_tasks(outer) || block < CHUNK {
        let per_task = CHUNK.div_ceil(block) * block;
        for_each_chunk_mut(dst, per_task, |i, d| blocks(&src[i * per_task..][..d.len()], d));
    } else {
        // Few large blocks: split each block's rows across threads and
        // combine the partial max and sum vectors.
        let per_task = CHUNK.div_ceil(inner) * inner;
        for (x, d) in src.chunks_exact(block).zip(dst.chunks_exact_mut(block)) {
            let m = x
                .par_chunks(per_task)
                .map(|c| {
                    let mut m = vec![T::neg_infinity(); inner];
                    simd(#[inline(always)] || column_max(c, &mut m, sign));
                    m
                })
                .reduce_with(|mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, &b)| *a = max_ignoring_nan(*a, b));
                    a
                })
                .expect("a non-empty block has at least one chunk");
            let mut f = d
                .par_chunks_mut(per_task)
                .zip(x.par_chunks(per_task))
                .map(|(d, x)| {
                    let mut s = vec![T::zero(); inner];
                    simd(#[inline(always)] || column_exp_sum(x, d, &m, &mut s, sign));
                    s
                })
                .reduce_with(|mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, &b)| *a = *a + b);
                    a
                })
                .expect("a non-empty block has at least one chunk");
            column_factors(&mut f, &m, kind);
            d.par_chunks_mut(per_task)
                .zip(x.par_chunks(per_task))
                .for_each(|(d, x)| simd(#[inline(always)] || column_finish(x, d, &m, &f, sign, kind)));
        }
    }
}

/// One `[n, inner]` block, sequentially; `stats` holds `2 * inner` scratch
/// values (max and sum vectors).
#[inline(always)]
fn column_block<T: FloatElement>(x: &[T], d: &mut [T], stats: &mut [T], sign: T, kind: Normalise) {
    let (m, s) = stats.split_at_mut(stats.len() / 2);
    m.fill(T::neg_infinity());
    s.fill(T::zero());
    column_max(x, m, sign);
    column_exp_sum(x, d, m, s, sign);
    column_factors(s, m, kind);
    column_finish(x, d, m, s, sign, kind);
}

#[inline(always)]
fn column_max<T: FloatElement>(x: &[T], m: &mut [T], sign: T) {
    for row in x.chunks_exact(m.len()) {
        for (m, &v) in m.iter_mut().zip(row) {
            *m = max_ignoring_nan(*m, v * sign);
        }
    }
}

#[inline(always)]
fn column_exp_sum<T: FloatElement>(x: &[T], d: &mut [T], m: &[T], s: &mut [T], sign: T) {
    let inner = m.len();
    for (x, d) in x.chunks_exact(inner).zip(d.chunks_exact_mut(inner)) {
        for (((o, &v), &m), s) in d.iter_mut().zip(x).zip(m).zip(s.iter_mut()) {
            let e = (v * sign - m).simd_exp();
            *o = e;
            *s = *s + e;
        }
    }
}

/// Per column, replace the sum by the reciprocal to scale by, or by its log.
#[inline(always)]
fn column_factors<T: FloatElement>(s: &mut [T], m: &[T], kind: Normalise) {
    match kind {
        Normalise::Softmax => s.iter_mut().for_each(|s| *s = T::one() / *s),
        Normalise::Quiet => s.iter_mut().zip(m).for_each(|(s, &m)| *s = T::one() / (*s + (-m).exp())),
        Normalise::LogSoftmax => s.iter_mut().for_each(|s| *s = s.ln()),
    }
}

#[inline(always)]
fn column_finish<T: FloatElement>(x: &[T], d: &mut [T], m: &[T], f: &[T], sign: T, kind: Normalise) {
    let inner = m.len();
    for (x, d) in x.chunks_exact(inner).zip(d.chunks_exact_mut(inner)) {
        if kind == Normalise::LogSoftmax {
            for (((o, &v), &m), &lse) in d.iter_mut().zip(x).zip(m).zip(f) {
                *o = (v * sign - m) - lse;
            }
        } else {
            for (o, &r) in d.iter_mut().zip(f) {
                *o = *o * r;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Straightforward f64 reference, one (outer, inner) line at a time.
    fn reference(x: &[f64], n: usize, inner: usize, op: SoftmaxOp) -> Vec<f64> {
        let mut out = vec![0.0; x.len()];
        for o in 0..x.len() / (n * inner) {
            for k in 0..inner {
                let at = |j: usize| o * n * inner + j * inner + k;
                let y = |j: usize| if op.negate { -x[at(j)] } else { x[at(j)] };
                let m = (0..n).map(y).fold(f64::NEG_INFINITY, f64::max);
                let s: f64 = (0..n).map(|j| (y(j) - m).exp()).sum();
                for j in 0..n {
                    out[at(j)] = match op.kind {
                        Normalise::Softmax => (y(j) - m).exp() / s,
                        Normalise::Quiet => y(j).exp() / (1.0 + (0..n).map(|j| y(j).exp()).sum::<f64>()),
                        Normalise::LogSoftmax => y(j) - m - s.ln(),
                    };
                }
            }
        }
        out
    }

    fn ops() -> Vec<SoftmaxOp> {
        let kinds = [Normalise::Softmax, Normalise::LogSoftmax, Normalise::Quiet];
        kinds.iter().flat_map(|&kind| [false, true].map(|negate| SoftmaxOp { kind, negate })).collect()
    }

    fn check(outer: usize, n: usize, inner: usize) {
        let len = outer * n * inner;
        let x: Vec<f64> = (0..len).map(|i| ((i * 7919) % 1013) as f64 / 50.0 - 10.0).collect();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        for op in ops() {
            let want = reference(&x, n, inner, op);
            let mut got = vec![0.0f64; len];
            softmax(&x, &mut got, n, inner, op);
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{op:?} [{outer},{n},{inner}] at {i}: {g} vs {w}");
            }
            let mut got = vec![0.0f32; len];
            softmax(&x32, &mut got, n, inner, op);
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!((g as f64 - w).abs() <= 2e-6 * (1.0 + w.abs()), "{op:?} f32 [{outer},{n},{inner}] at {i}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn rows_match_reference() {
        check(3, 5, 1);
        check(7, 37, 1);
        check(2, 1, 1);
    }

    #[test]
    fn columns_match_reference() {
        check(3, 4, 5);
        check(2, 33, 19);
        check(1, 5, 2);
    }

    #[test]
    fn parallel_paths_match_reference() {
        // Many rows, one long row, many blocks, one large block.
        check(300, 100, 1);
        check(1, 3 * CHUNK + 5, 1);
        check(40, 30, 30);
        check(1, 300, 200);
    }

    #[test]
    fn nan_poisons_its_row_only() {
        let x = [1.0f32, f32::NAN, 2.0, 1.0, 2.0, 3.0];
        for op in ops() {
            let mut d = [0.0f32; 6];
            softmax(&x, &mut d, 3, 1, op);
            assert!(d[..3].iter().all(|v| v.is_nan()), "{op:?} {d:?}");
            assert!(d[3..].iter().all(|v| v.is_finite()), "{op:?} {d:?}");
            softmax(&x, &mut d, 2, 3, op);
            assert!(d[1].is_nan() && d[4].is_nan() && d[0].is_finite() && d[5].is_finite(), "{op:?} {d:?}");
        }
    }

    #[test]
    fn quiet_softmax_is_burns_function() {
        // Burn's test_quiet_softmax_d2: [[1, 7], [13, -3]] along dim 1.
        let quiet = SoftmaxOp { kind: Normalise::Quiet, negate: false };
        let x = [1.0f32, 7.0, 13.0, -3.0];
        let mut d = [0.0f32; 4];
        softmax(&x, &mut d, 2, 1, quiet);
        for (g, w) in d.iter().zip([2.47e-3f32, 9.975e-1, 1.0, 1.1254e-7]) {
            assert!((g - w).abs() <= 1e-3 * w.max(1e-4), "{d:?}");
        }
        // exp(x) / (1 + sum exp(x)) without overflow, and tiny everywhere when
        // every input is very negative (a row can attend to nothing).
        let x = [1e4f32, 1e4, -1e4, -1e4];
        softmax(&x, &mut d, 2, 1, quiet);
        assert_eq!(d, [0.5, 0.5, 0.0, 0.0]);
        let x = [-3.0f64, -2.0, -3.0, -2.0];
        let mut d = [0.0f64; 4];
        softmax(&x, &mut d, 2, 2, quiet);
        let total = (-3.0f64).exp() + (-3.0f64).exp();
        assert!((d[0] - (-3.0f64).exp() / (1.0 + total)).abs() < 1e-15, "{d:?}");
    }

    #[test]
    fn huge_inputs_do_not_overflow() {
        let x = [1e4f32, -1e4, 0.0, 1e4];
        let mut d = [0.0f32; 4];
        softmax(&x, &mut d, 4, 1, SoftmaxOp { kind: Normalise::Softmax, negate: false });
        assert_eq!(d, [0.5, 0.0, 0.0, 0.5]);
        softmax(&x, &mut d, 4, 1, SoftmaxOp { kind: Normalise::LogSoftmax, negate: false });
        assert_eq!(d, [-std::f32::consts::LN_2, -2e4 - std::f32::consts::LN_2, -1e4 - std::f32::consts::LN_2, -std::f32::consts::LN_2]);
    }
}
