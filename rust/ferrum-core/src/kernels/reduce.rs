//! Reduction loops. A slice folds with independent lane accumulators inside
//! small leaves whose results combine pairwise, which gives NumPy's pairwise
//! summation accuracy (error growing with log n, not n) at SIMD speed. A
//! reduction along one axis of a contiguous buffer is split into row or
//! column-tile tasks that run on threads above a size gate.

use std::mem::MaybeUninit;

use super::parallel::{go_parallel, simd, simd_streaming, CHUNK};
use super::team::for_each_chunk_mut;

/// Independent accumulators per leaf: four AVX-512 registers of f32 (eight
/// AVX2 ones). With one register each add waited for the one before it.
const LANES: usize = 64;
/// Lanes in one row of a leaf's accumulators: one AVX-512 register of f32.
const WIDTH: usize = 16;
const _: () = assert!(LANES == 4 * WIDTH, "fold_leaf combines four rows of accumulators");
/// Elements per leaf of the pairwise tree: each lane adds 16 values in order.
const LEAF: usize = LANES * 16;
/// Elements per rayon task of a whole-slice fold. A power-of-two number of
/// leaves, so the parallel tree equals the sequential one and results do not
/// depend on the thread count.
const PAR_SPAN: usize = LEAF * 64;
/// Columns reduced together along a non-innermost axis: the accumulator rows
/// of one tile stay in L2, and each input row is read a few pages at a time.
const TILE: usize = 4096;
/// The narrowest tile made only to give every thread some work.
const MIN_TILE: usize = 256;
/// Rows a tile accumulates in order before its partial rows combine pairwise.
const ROW_LEAF: usize = 16;
/// Rows per task when the first axis of a wide slab is split between
/// threads ([`fold_row_blocks`]): a power-of-two number of `ROW_LEAF` runs.
const ROW_SPAN: usize = ROW_LEAF * 32;

/// A contiguous buffer seen as `[outer, n, inner]`, reduced or scanned along `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    pub outer: usize,
    pub n: usize,
    pub inner: usize,
}

impl Axis {
    /// The axis `dim` of a tensor of `shape` (`dim < shape.len()`).
    pub fn new(shape: &[usize], dim: usize) -> Axis {
        Axis { outer: shape[..dim].iter().product(), n: shape[dim], inner: shape[dim + 1..].iter().product() }
    }
}

/// Binary-counter form of pairwise combination: after 2^k pushes it holds
/// one value, the balanced tree of those k levels. `vals[l]` holds the fold
/// of 2^l consecutive pushes exactly when bit `l` of `count` is set, so only
/// those slots are ever read.
///
/// The slots start uninitialised and `finish` reads them in place. When
/// all 64 were filled with the identity and the 4 KiB moved into `finish`
/// once per 256 KiB span, a one-thread sum of 64 MiB took 5-7% longer than
/// a single fold over the whole buffer; now it is within 1.5% of it.
struct Pairwise<A: Copy> {
    vals: [MaybeUninit<A>; 64],
    count: u64,
}

impl<A: Copy> Pairwise<A> {
    #[inline(always)]
    fn new() -> Self {
        Pairwise { vals: [MaybeUninit::uninit(); 64], count: 0 }
    }

    #[inline(always)]
    fn push(&mut self, mut v: A, op: &impl Fn(A, A) -> A) {
        let mut level = 0;
        while self.count >> level & 1 == 1 {
            // SAFETY: bit `level` of `count` is set, so `vals[level]` was written.
            v = op(unsafe { self.vals[level].assume_init() }, v);
            level += 1;
        }
        self.vals[level].write(v);
        self.count += 1;
    }

    /// The fold of everything pushed, older values on the left; `id` when
    /// nothing was.
    #[inline(always)]
    fn finish(&self, id: A, op: &impl Fn(A, A) -> A) -> A {
        let mut bits = self.count;
        if bits == 0 {
            return id;
        }
        let take = |bits: &mut u64| {
            let level = bits.trailing_zeros() as usize;
            *bits &= *bits - 1;
            // SAFETY: bit `level` of `count` is set, so `vals[level]` was written.
            unsafe { self.vals[level].assume_init() }
        };
        let mut acc = take(&mut bits);
        while bits != 0 {
            acc = op(take(&mut bits), acc);
        }
        acc
    }
}

/// One leaf: `LANES` accumulators side by side in four rows of [`WIDTH`]
/// (loops LLVM turns into four vector registers), the rows combined into
/// one vector of `WIDTH` lane results, and the fold of the leftover
/// elements (fewer than `LANES`, only in a slice's last leaf).
///
/// The loops are written so that every index is a constant once unrolled:
/// with one 64-wide row, or with the tree over the lanes inlined after it,
/// LLVM kept the accumulators on the stack and each add went through
/// memory (6-14 Gfloat/s on one core instead of 30+).
#[inline(always)]
fn fold_leaf<T: Copy, A: Copy>(x: &[T], id: A, op: &impl Fn(A, A) -> A, map: &impl Fn(T) -> A) -> ([A; WIDTH], A) {
    let mut acc = [[id; WIDTH]; LANES / WIDTH];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder().iter().fold(id, |a, &v| op(a, map(v)));
    for c in chunks {
        let c: &[T; LANES] = c.try_into().expect("chunks_exact gives LANES elements");
        for (j, row) in acc.iter_mut().enumerate() {
            for (i, a) in row.iter_mut().enumerate() {
                *a = op(*a, map(c[WIDTH * j + i]));
            }
        }
    }
    let mut v = [id; WIDTH];
    for (i, v) in v.iter_mut().enumerate() {
        *v = op(op(acc[0][i], acc[1][i]), op(acc[2][i], acc[3][i]));
    }
    (v, tail)
}

/// The fold of one vector of lane results: a tree over the lanes. Kept out
/// of line so that it does not reshape the loops it follows (see
/// [`fold_leaf`]); it runs once per slice.
#[inline(never)]
fn across_lanes<A: Copy>(v: [A; WIDTH], op: &impl Fn(A, A) -> A) -> A {
    let mut a = v;
    for w in [8, 4, 2, 1] {
        for i in 0..w {
            a[i] = op(a[i], a[i + w]);
        }
    }
    a[0]
}

/// Fold a slice on the current thread (call inside `simd`): leaves combine
/// pairwise lane by lane, then the lanes combine.
#[inline(always)]
pub fn fold_seq<T: Copy, A: Copy>(x: &[T], id: A, op: &impl Fn(A, A) -> A, map: &impl Fn(T) -> A) -> A {
    if x.len() <= LEAF {
        let (v, tail) = fold_leaf(x, id, op, map);
        return op(across_lanes(v, op), tail);
    }
    let lanes = |a: [A; WIDTH], b: [A; WIDTH]| {
        let mut r = a;
        for (r, b) in r.iter_mut().zip(b) {
            *r = op(*r, b);
        }
        r
    };
    let mut tree = Pairwise::new();
    let mut tail = id;
    for leaf in x.chunks(LEAF) {
        let (v, t) = fold_leaf(leaf, id, op, map);
        tree.push(v, &lanes);
        tail = op(tail, t);
    }
    op(across_lanes(tree.finish([id; WIDTH], &lanes), op), tail)
}

/// Combine the folds of a slice's `PAR_SPAN` spans pairwise: the same tree
/// whether the spans ran on one thread or many.
#[inline(always)]
fn combine_spans<A: Copy>(spans: impl IntoIterator<Item = A>, id: A, op: &impl Fn(A, A) -> A) -> A {
    let mut tree = Pairwise::new();
    for v in spans {
        tree.push(v, op);
    }
    tree.finish(id, op)
}

/// Fold a whole slice: `op` over `map(x)` starting from the identity `id`;
/// on threads when `x` is longer than `gate`. `op` must be associative.
pub fn fold_all<T, A>(x: &[T], gate: usize, id: A, op: impl Fn(A, A) -> A + Sync, map: impl Fn(T) -> A + Sync) -> A
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
{
    let bytes = std::mem::size_of_val(x);
    if !go_parallel(x.len(), gate) {
        return combine_spans(x.chunks(PAR_SPAN).map(|s| simd_streaming(bytes, #[inline(always)] || fold_seq(s, id, &op, &map))), id, &op);
    }
    let mut spans = vec![id; x.len().div_ceil(PAR_SPAN)];
    for_each_chunk_mut(&mut spans, 1, |i, v| {
        let span = &x[i * PAR_SPAN..][..PAR_SPAN.min(x.len() - i * PAR_SPAN)];
        v[0] = simd_streaming(bytes, #[inline(always)] || fold_seq(span, id, &op, &map))
    });
    combine_spans(spans, id, &op)
}

/// Fold along `ax`: `out[o * inner + c]` = the fold of `x[(o * n + j) * inner + c]`
/// over `j`. `out` holds `outer * inner` elements.
pub fn fold_axis<T, A>(x: &[T], ax: Axis, out: &mut [A], gate: usize, id: A, op: impl Fn(A, A) -> A + Sync, map: impl Fn(T) -> A + Sync)
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
{
    if ax.inner == 1 && ax.outer < 2 * rayon::current_num_threads() && go_parallel(x.len(), gate) {
        // A few long rows: split inside each row instead of across rows.
        for (o, dst) in out.iter_mut().enumerate() {
            *dst = fold_all(&x[o * ax.n..(o + 1) * ax.n], gate, id, &op, &map);
        }
        return;
    }
    if ax.outer == 1 && ax.inner > 1 && ax.inner <= TILE && ax.n >= 2 * ROW_SPAN && go_parallel(x.len(), gate) {
        fold_row_blocks(x, ax, out, id, &op, &map);
        return;
    }
    reduce_axis(
        x,
        ax,
        out,
        gate,
        // Inlined into reduce_axis's `simd` so that the folds compile for the
        // CPU's vector width, not as SSE2 code behind a call.
        #[inline(always)]
        |row| fold_seq(row, id, &op, &map),
        #[inline(always)]
        |src, stride, dst| fold_tile(src, stride, ax.n, dst, id, &op, &map),
    );
}

/// Fold the first axis of `x` (`ax.outer == 1`) in blocks of [`ROW_SPAN`]
/// whole rows, one block per task, and combine the blocks' rows pairwise.
///
/// Splitting the columns instead gave each thread a quarter of every row,
/// 1 KiB in each 4 KiB page, which the prefetchers do not follow:
/// `sum_dim(0)` of [16K, 1K] read 16 GB/s. A block is a power-of-two
/// number of [`ROW_LEAF`] runs, so the combined tree is the one
/// [`fold_tile`] builds on one thread, bit for bit.
fn fold_row_blocks<T, A>(x: &[T], ax: Axis, out: &mut [A], id: A, op: &(impl Fn(A, A) -> A + Sync), map: &(impl Fn(T) -> A + Sync))
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
{
    let (n, inner) = (ax.n, ax.inner);
    let mut partial = vec![id; n.div_ceil(ROW_SPAN) * inner];
    for_each_chunk_mut(&mut partial, inner, |b, dst| {
        let rows = ROW_SPAN.min(n - b * ROW_SPAN);
        let src = &x[b * ROW_SPAN * inner..][..rows * inner];
        simd(#[inline(always)] || fold_tile(src, inner, rows, dst, id, op, map));
    });
    let mut tree = RowPairwise::new();
    for block in partial.chunks_exact(inner) {
        let mut row = tree.spare(inner, id);
        row.copy_from_slice(block);
        tree.push(row, op);
    }
    tree.finish(out, op);
}

/// Fold `n` rows of `dst.len()` columns (row `j` starts at `src[j * stride]`)
/// into `dst` (call inside `simd`).
#[inline(always)]
pub fn fold_tile<T: Copy, A: Copy>(src: &[T], stride: usize, n: usize, dst: &mut [A], id: A, op: &impl Fn(A, A) -> A, map: &impl Fn(T) -> A) {
    // A vector of `()` holds no memory: the context costs nothing here.
    let ctx = vec![(); dst.len()];
    fold_tile_with(src, stride, n, &ctx, dst, id, op, &|v, ()| map(v));
}

/// As [`fold_tile`], with `map` also given its column's entry of `ctx`:
/// runs of `ROW_LEAF` rows accumulate in order, the runs combine pairwise.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn fold_tile_with<T: Copy, C: Copy, A: Copy>(
    src: &[T],
    stride: usize,
    n: usize,
    ctx: &[C],
    dst: &mut [A],
    id: A,
    op: &impl Fn(A, A) -> A,
    map: &impl Fn(T, C) -> A,
) {
    let w = dst.len();
    let run = |acc: &mut [A], rows: std::ops::Range<usize>| {
        acc.fill(id);
        for j in rows {
            for ((a, &v), &c) in acc.iter_mut().zip(&src[j * stride..j * stride + w]).zip(ctx) {
                *a = op(*a, map(v, c));
            }
        }
    };
    if n <= ROW_LEAF {
        run(dst, 0..n);
        return;
    }
    let mut tree = RowPairwise::new();
    for start in (0..n).step_by(ROW_LEAF) {
        let mut acc = tree.spare(w, id);
        run(&mut acc, start..(start + ROW_LEAF).min(n));
        tree.push(acc, op);
    }
    tree.finish(dst, op);
}

/// [`Pairwise`] over whole rows, recycling the row buffers it frees.
struct RowPairwise<A> {
    rows: Vec<(Vec<A>, u32)>,
    free: Vec<Vec<A>>,
}

impl<A: Copy> RowPairwise<A> {
    fn new() -> Self {
        RowPairwise { rows: Vec::new(), free: Vec::new() }
    }

    fn spare(&mut self, w: usize, id: A) -> Vec<A> {
        self.free.pop().unwrap_or_else(|| vec![id; w])
    }

    #[inline(always)]
    fn push(&mut self, mut v: Vec<A>, op: &impl Fn(A, A) -> A) {
        let mut level = 0;
        while let Some((top, l)) = self.rows.pop() {
            if l != level {
                self.rows.push((top, l));
                break;
            }
            v.iter_mut().zip(&top).for_each(|(a, &b)| *a = op(b, *a));
            self.free.push(top);
            level += 1;
        }
        self.rows.push((v, level));
    }

    #[inline(always)]
    fn finish(self, dst: &mut [A], op: &impl Fn(A, A) -> A) {
        let mut rows = self.rows.into_iter().rev();
        let Some((top, _)) = rows.next() else { return };
        dst.copy_from_slice(&top);
        for (row, _) in rows {
            dst.iter_mut().zip(&row).for_each(|(a, &b)| *a = op(b, *a));
        }
    }
}

/// Run a reduction along `ax` as tasks writing disjoint parts of `out`
/// (`outer * inner` elements), on threads when `x` is longer than `gate`.
/// With `inner == 1`, `row` reduces one contiguous row of `n` elements.
/// Otherwise `tile(src, stride, dst)` reduces `dst.len()` adjacent columns
/// whose row `j` starts at `src[j * stride]`. An empty axis (`n == 0`) calls
/// `row(&[])` for every output.
pub fn reduce_axis<T, U>(
    x: &[T],
    ax: Axis,
    out: &mut [U],
    gate: usize,
    row: impl Fn(&[T]) -> U + Sync,
    tile: impl Fn(&[T], usize, &mut [U]) + Sync,
) where
    T: Sync,
    U: Send,
{
    let Axis { n, inner, .. } = ax;
    if out.is_empty() {
        return;
    }
    if n == 0 {
        out.iter_mut().for_each(|o| *o = row(&[]));
        return;
    }
    let parallel = go_parallel(x.len(), gate);
    if inner == 1 {
        let rows_per_task = (CHUNK / n).max(1);
        // A `for` loop, not `for_each`: `Zip::fold` stayed out of line, so
        // the rows were folded by SSE2 code outside `simd`'s dispatch.
        let bytes = std::mem::size_of_val(x);
        let task = |dst: &mut [U], src: &[T]| {
            simd_streaming(
                bytes,
                #[inline(always)]
                || {
                    for (o, r) in dst.iter_mut().zip(src.chunks_exact(n)) {
                        *o = row(r);
                    }
                },
            )
        };
        if parallel {
            for_each_chunk_mut(out, rows_per_task, |i, d| task(d, &x[i * rows_per_task * n..][..d.len() * n]));
        } else {
            task(out, x);
        }
        return;
    }
    let block = n * inner;
    let span = (n - 1) * inner;
    let threads = rayon::current_num_threads();
    let width = if parallel && ax.outer < 2 * threads { inner.div_ceil(2 * threads).clamp(MIN_TILE, TILE) } else { TILE };
    let tiles = out.chunks_mut(inner).enumerate().flat_map(|(o, dst_row)| {
        dst_row.chunks_mut(width).enumerate().map(move |(t, dst)| (o * block + t * width, dst))
    });
    let task = |(start, dst): (usize, &mut [U])| {
        let w = dst.len();
        tile(&x[start..start + span + w], inner, dst)
    };
    if parallel {
        let mut tiles: Vec<(usize, &mut [U])> = tiles.collect();
        let min_len = (CHUNK / (n * width)).max(1);
        for_each_chunk_mut(&mut tiles, min_len, |_, group| {
            simd(
                #[inline(always)]
                || {
                    for (start, dst) in group.iter_mut() {
                        task((*start, &mut **dst));
                    }
                },
            )
        });
    } else {
        simd(
            #[inline(always)]
            || {
                for t in tiles {
                    task(t);
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(a: f64, b: f64) -> f64 {
        a + b
    }

    #[test]
    fn pairwise_matches_a_naive_sum() {
        for n in [0, 1, 15, 16, 17, 255, 256, 257, 1000, 70_000] {
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
            let want: f64 = x.iter().sum();
            let got = fold_all(&x, usize::MAX, 0.0, add, |v| v);
            assert!((got - want).abs() < 1e-9, "n={n}: {got} vs {want}");
        }
    }

    #[test]
    fn pairwise_builds_balanced_blocks_combined_from_the_right() {
        // An operation that is neither associative nor commutative, so any
        // other grouping or order gives another number.
        let op = |a: i64, b: i64| a.wrapping_mul(3).wrapping_add(b);
        fn balanced(x: &[i64], op: &impl Fn(i64, i64) -> i64) -> i64 {
            match x {
                [v] => *v,
                _ => op(balanced(&x[..x.len() / 2], op), balanced(&x[x.len() / 2..], op)),
            }
        }
        for n in 0..300usize {
            let x: Vec<i64> = (0..n as i64).map(|i| i * 7 + 1).collect();
            // n = 2^a + 2^b + ... (a > b > ...): a balanced tree per block,
            // the blocks in order, each combined with everything after it.
            let mut blocks = Vec::new();
            let mut start = 0;
            for bit in (0..usize::BITS).rev().filter(|b| n >> b & 1 == 1) {
                blocks.push(balanced(&x[start..start + (1 << bit)], &op));
                start += 1 << bit;
            }
            let want = blocks.iter().rev().copied().reduce(|acc, b| op(b, acc)).unwrap_or(-1);
            let mut tree = Pairwise::new();
            for &v in &x {
                tree.push(v, &op);
            }
            assert_eq!(tree.finish(-1, &op), want, "n = {n}");
        }
    }

    #[test]
    fn f32_sum_stays_accurate_over_millions() {
        let n = 3_000_000;
        let x: Vec<f32> = (0..n).map(|i| 0.1 + (i % 7) as f32 * 0.01).collect();
        let exact: f64 = x.iter().map(|&v| v as f64).sum();
        let got = fold_all(&x, usize::MAX, 0.0f32, |a, b| a + b, |v| v) as f64;
        assert!(((got - exact) / exact).abs() < 1e-6, "{got} vs {exact}");
    }

    #[test]
    fn parallel_spans_give_the_sequential_tree() {
        let x: Vec<f32> = (0..PAR_SPAN * 3 + 1234).map(|i| ((i as f32) * 0.37).sin() * 1e3).collect();
        let seq = fold_all(&x, usize::MAX, 0.0f32, |a, b| a + b, |v| v);
        let mut tree = Pairwise::new();
        for s in x.chunks(PAR_SPAN) {
            tree.push(fold_seq(s, 0.0, &|a, b| a + b, &|v| v), &|a, b| a + b);
        }
        assert_eq!(seq.to_bits(), tree.finish(0.0, &|a, b| a + b).to_bits());
        assert_eq!(seq.to_bits(), fold_all(&x, 0, 0.0f32, |a, b| a + b, |v| v).to_bits());
    }

    #[test]
    fn a_sum_past_the_cache_has_the_bits_of_the_widest_vectors() {
        // 36 MiB: on a Zen 4 core with 32 MiB of L3 this runs at 256 bits
        // (`simd_streaming`); the spans folded here run at the widest.
        let x: Vec<f32> = (0..9 << 20).map(|i| ((i as f32) * 0.37).sin() * 1e3).collect();
        let widest = combine_spans(x.chunks(PAR_SPAN).map(|s| simd(|| fold_seq(s, 0.0, &|a, b| a + b, &|v| v))), 0.0f32, &|a, b| a + b);
        for gate in [usize::MAX, 0] {
            assert_eq!(fold_all(&x, gate, 0.0f32, |a, b| a + b, |v| v).to_bits(), widest.to_bits(), "gate {gate}");
        }
        let rows = Axis { outer: 9 << 10, n: 1 << 10, inner: 1 };
        let mut out = vec![0.0f32; rows.outer];
        fold_axis(&x, rows, &mut out, 0, 0.0f32, |a, b| a + b, |v| v);
        for (o, row) in out.iter().zip(x.chunks(rows.n)) {
            assert_eq!(o.to_bits(), simd(|| fold_seq(row, 0.0, &|a, b| a + b, &|v| v)).to_bits());
        }
    }

    #[test]
    fn row_blocks_give_the_one_thread_tree() {
        for n in [2 * ROW_SPAN, 3 * ROW_SPAN + 77, 5 * ROW_SPAN - 1] {
            let inner = 300;
            let x: Vec<f32> = (0..n * inner).map(|i| ((i as f32) * 0.37).sin() * 1e3).collect();
            let ax = Axis { outer: 1, n, inner };
            let (mut threaded, mut single) = (vec![0.0f32; inner], vec![0.0f32; inner]);
            fold_row_blocks(&x, ax, &mut threaded, 0.0, &|a, b| a + b, &|v| v);
            fold_axis(&x, ax, &mut single, usize::MAX, 0.0, |a, b| a + b, |v| v);
            assert!(threaded.iter().zip(&single).all(|(a, b)| a.to_bits() == b.to_bits()), "n = {n}");
            let want: Vec<f64> = (0..inner).map(|c| (0..n).map(|j| x[j * inner + c] as f64).sum()).collect();
            assert!(threaded.iter().zip(&want).all(|(&a, &b)| (a as f64 - b).abs() <= 1e-3 * (1.0 + b.abs())));
        }
    }

    fn naive_axis(x: &[f64], ax: Axis) -> Vec<f64> {
        let mut out = vec![0.0; ax.outer * ax.inner];
        for o in 0..ax.outer {
            for j in 0..ax.n {
                for c in 0..ax.inner {
                    out[o * ax.inner + c] += x[(o * ax.n + j) * ax.inner + c];
                }
            }
        }
        out
    }

    #[test]
    fn axis_folds_match_naive_in_every_shape() {
        for (outer, n, inner) in [(3, 5, 1), (2, 40, 1), (2, 5, 3), (3, 37, 700), (1, 33, 9000), (1, 1, 9), (4, 0, 3), (0, 3, 2), (2, 3, 0)] {
            let ax = Axis { outer, n, inner };
            let x: Vec<f64> = (0..outer * n * inner).map(|i| (i as f64 * 0.13).cos()).collect();
            let want = naive_axis(&x, ax);
            for gate in [usize::MAX, 0] {
                let mut out = vec![f64::NAN; outer * inner];
                fold_axis(&x, ax, &mut out, gate, 0.0, add, |v| v);
                assert!(out.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-9), "{ax:?}");
            }
        }
    }
}
