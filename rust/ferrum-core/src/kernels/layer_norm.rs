//! LayerNorm's row loops, forward and backward side by side. A row is the
//! `n` contiguous elements of the last dim; elements of `S` (f32, f64, or
//! f16/bf16 read in place) are computed in `S::Compute` and each result is
//! rounded once. Rows are split into parts of a fixed size, so the sums of
//! the parameter gradients over rows add up in the same order whatever the
//! number of threads.

use rayon::prelude::*;

use super::parallel::{go_parallel, simd, CHUNK, PAR_COSTLY};
use super::reduce::fold_seq;
use crate::element::{FloatElement, FloatLanes};

/// Lanes of the hand-unrolled sums (a 512-bit register of f32).
const LANES: usize = 16;

/// Rows per part: about `CHUNK` elements each, at least one row.
fn rows_per_part(n: usize) -> usize {
    (CHUNK / n.max(1)).max(1)
}

/// `(mean, 1 / sqrt(biased variance + epsilon))` of one row (two passes, so
/// that no cancellation of a one-pass sum of squares enters the variance).
#[inline(always)]
fn row_stats<S: FloatLanes<Compute = C>, C: FloatElement>(row: &[S], epsilon: C) -> (C, C) {
    let count = C::from(row.len()).unwrap_or_else(C::one);
    let add = |a: C, b: C| a + b;
    let mean = fold_seq(row, C::zero(), &add, &|v: S| v.widen()) / count;
    let var = fold_seq(row, C::zero(), &add, &|v: S| (v.widen() - mean) * (v.widen() - mean)) / count;
    (mean, C::one() / (var + epsilon).sqrt())
}

/// `out = (x - mean) * rstd * gamma + beta` for every row of `x`; `out` has
/// `x`'s length, `gamma` (and `beta`) `n` values. `n` must not be zero.
pub fn forward<S: FloatLanes<Compute = C>, C: FloatElement>(x: &[S], n: usize, gamma: &[C], beta: Option<&[C]>, epsilon: C, out: &mut [S]) {
    let part = |src: &[S], dst: &mut [S]| {
        simd(
            #[inline(always)]
            || {
                for (row, o) in src.chunks_exact(n).zip(dst.chunks_exact_mut(n)) {
                    let (mean, rstd) = row_stats(row, epsilon);
                    match beta {
                        Some(b) => {
                            for (((o, &v), &w), &b) in o.iter_mut().zip(row).zip(gamma).zip(b) {
                                *o = S::narrow((v.widen() - mean) * rstd * w + b);
                            }
                        }
                        None => {
                            for ((o, &v), &w) in o.iter_mut().zip(row).zip(gamma) {
                                *o = S::narrow((v.widen() - mean) * rstd * w);
                            }
                        }
                    }
                }
            },
        )
    };
    let per = rows_per_part(n) * n;
    if go_parallel(x.len(), PAR_COSTLY) && x.len() > per {
        x.par_chunks(per).zip(out.par_chunks_mut(per)).for_each(|(s, d)| part(s, d));
    } else {
        part(x, out);
    }
}

/// Gradients of one row: `dx` written, `g * xhat` and `g` added into the
/// part's sums for gamma and beta.
#[inline(always)]
fn backward_row<S: FloatLanes<Compute = C>, C: FloatElement>(g: &[S], x: &[S], gamma: &[C], epsilon: C, dx: &mut [S], dgamma: &mut [C], dbeta: &mut [C]) {
    let (mean, rstd) = row_stats(x, epsilon);
    // mean(g * gamma) and mean(g * gamma * xhat), summed over LANES
    // accumulators so that the loop vectorises.
    let (mut s1, mut s2) = ([C::zero(); LANES], [C::zero(); LANES]);
    let (gc, xc, wc) = (g.chunks_exact(LANES), x.chunks_exact(LANES), gamma.chunks_exact(LANES));
    let (gr, xr, wr) = (gc.remainder(), xc.remainder(), wc.remainder());
    for ((g, x), w) in gc.zip(xc).zip(wc) {
        for l in 0..LANES {
            let gg = g[l].widen() * w[l];
            s1[l] = s1[l] + gg;
            s2[l] = s2[l] + gg * ((x[l].widen() - mean) * rstd);
        }
    }
    let (mut t1, mut t2) = (C::zero(), C::zero());
    for ((&g, &x), &w) in gr.iter().zip(xr).zip(wr) {
        let gg = g.widen() * w;
        t1 = t1 + gg;
        t2 = t2 + gg * ((x.widen() - mean) * rstd);
    }
    let count = C::from(x.len()).unwrap_or_else(C::one);
    let a = s1.iter().fold(t1, |s, &v| s + v) / count;
    let b = s2.iter().fold(t2, |s, &v| s + v) / count;
    for (((((d, &g), &x), &w), dg), db) in dx.iter_mut().zip(g).zip(x).zip(gamma).zip(dgamma.iter_mut()).zip(dbeta.iter_mut()) {
        let (g, xhat) = (g.widen(), (x.widen() - mean) * rstd);
        *d = S::narrow(rstd * (g * w - a - xhat * b));
        *dg = *dg + g * xhat;
        *db = *db + g;
    }
}

/// The gradients of [`forward`] for the output gradient `g` (`x`'s length):
/// `dx = rstd * (g*gamma - mean(g*gamma) - xhat * mean(g*gamma*xhat))` per
/// row, written into `dx`, and the sums over rows of `g * xhat` (gamma's
/// gradient) and of `g` (beta's), returned. `n` must not be zero.
pub fn backward<S: FloatLanes<Compute = C>, C: FloatElement>(g: &[S], x: &[S], n: usize, gamma: &[C], epsilon: C, dx: &mut [S]) -> (Vec<C>, Vec<C>) {
    let per = rows_per_part(n) * n;
    let parts = x.len().div_ceil(per);
    // Each part sums its rows into its own pair of n-vectors.
    let mut partial = vec![C::zero(); parts * 2 * n];
    let part = |g: &[S], x: &[S], dx: &mut [S], sums: &mut [C]| {
        let (dgamma, dbeta) = sums.split_at_mut(n);
        simd(
            #[inline(always)]
            || {
                for ((g, x), dx) in g.chunks_exact(n).zip(x.chunks_exact(n)).zip(dx.chunks_exact_mut(n)) {
                    backward_row(g, x, gamma, epsilon, dx, dgamma, dbeta);
                }
            },
        )
    };
    if go_parallel(x.len(), PAR_COSTLY) && parts > 1 {
        g.par_chunks(per)
            .zip(x.par_chunks(per))
            .zip(dx.par_chunks_mut(per))
            .zip(partial.par_chunks_mut(2 * n))
            .for_each(|(((g, x), dx), sums)| part(g, x, dx, sums));
    } else {
        for (((g, x), dx), sums) in g.chunks(per).zip(x.chunks(per)).zip(dx.chunks_mut(per)).zip(partial.chunks_mut(2 * n)) {
            part(g, x, dx, sums);
        }
    }
    let (mut dgamma, mut dbeta) = (vec![C::zero(); n], vec![C::zero(); n]);
    for sums in partial.chunks_exact(2 * n) {
        let (pg, pb) = sums.split_at(n);
        dgamma.iter_mut().zip(pg).for_each(|(s, &v)| *s = *s + v);
        dbeta.iter_mut().zip(pb).for_each(|(s, &v)| *s = *s + v);
    }
    (dgamma, dbeta)
}
