//! Inclusive scans (running sums, products, extrema) along one axis of a
//! contiguous buffer. Along the innermost axis each row is one dependency
//! chain; along an outer axis whole rows combine with the previous output
//! row, a loop that vectorises.

use rayon::prelude::*;

use super::parallel::{go_parallel, simd, CHUNK};
use super::reduce::Axis;

/// `out[.., j, ..] = op(out[.., j - 1, ..], x[.., j, ..])` along `ax`, with
/// `out[.., 0, ..] = x[.., 0, ..]`; blocks of the outer dim run on threads
/// when `x` is longer than `gate`.
pub fn scan_axis<T>(x: &[T], ax: Axis, out: &mut [T], gate: usize, op: impl Fn(T, T) -> T + Sync)
where
    T: Copy + Send + Sync,
{
    let Axis { n, inner, .. } = ax;
    let block = n * inner;
    if block == 0 {
        return;
    }
    let task = |dst: &mut [T], src: &[T]| {
        for (d, s) in dst.chunks_exact_mut(block).zip(src.chunks_exact(block)) {
            d[..inner].copy_from_slice(&s[..inner]);
            if inner == 1 {
                let mut acc = s[0];
                for (o, &v) in d[1..].iter_mut().zip(&s[1..]) {
                    acc = op(acc, v);
                    *o = acc;
                }
                continue;
            }
            for j in 1..n {
                let (done, rest) = d.split_at_mut(j * inner);
                let prev = &done[(j - 1) * inner..];
                let row = &s[j * inner..(j + 1) * inner];
                for ((o, &p), &v) in rest[..inner].iter_mut().zip(prev).zip(row) {
                    *o = op(p, v);
                }
            }
        }
    };
    if ax.outer > 1 && go_parallel(x.len(), gate) {
        let span = (CHUNK / block).max(1) * block;
        out.par_chunks_mut(span).zip(x.par_chunks(span)).for_each(|(d, s)| simd(#[inline(always)] || task(d, s)));
    } else {
        simd(#[inline(always)] || task(out, x));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_rows_and_columns() {
        // [2, 3] along dim 1 (rows) and along dim 0 (columns).
        let x = [1, 2, 3, 4, 5, 6];
        let mut out = [0; 6];
        scan_axis(&x, Axis { outer: 2, n: 3, inner: 1 }, &mut out, usize::MAX, |a, b| a + b);
        assert_eq!(out, [1, 3, 6, 4, 9, 15]);
        scan_axis(&x, Axis { outer: 1, n: 2, inner: 3 }, &mut out, usize::MAX, |a, b| a + b);
        assert_eq!(out, [1, 2, 3, 5, 7, 9]);
    }

    #[test]
    fn threaded_blocks_match() {
        let ax = Axis { outer: 64, n: 3, inner: 5 };
        let x: Vec<i64> = (0..64 * 3 * 5).map(|i| i % 11 - 5).collect();
        let (mut a, mut b) = (vec![0; x.len()], vec![0; x.len()]);
        scan_axis(&x, ax, &mut a, usize::MAX, |p, q| p * q);
        scan_axis(&x, ax, &mut b, 0, |p, q| p * q);
        assert_eq!(a, b);
    }

    #[test]
    fn empty_axis_is_a_no_op() {
        let mut out: [f32; 0] = [];
        scan_axis(&[], Axis { outer: 3, n: 0, inner: 2 }, &mut out, 0, |a: f32, b| a + b);
    }
}
