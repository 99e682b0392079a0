//! f32 products of a few rows (`m <= 4`): a Linear layer at batch 1, as a
//! generated token runs every weight. Nothing is packed: B is streamed once,
//! straight from where it lies.
//!
//! The packed GEMM copies the whole of B into panels on every call, and at
//! one row each packed float is used once, so the copy doubled the memory
//! traffic of a product that is bound by memory anyway. Two layouts of B
//! run here:
//!
//! - row-major (unit column stride, a `[d_in, d_out]` weight): the rows of
//!   B are read a few at a time ([`KB`]), each sequentially across the
//!   part's columns, and added into the output rows, which stay in L1;
//!   walking the columns in narrow panels instead would jump a whole row of
//!   B between every 512 bytes read, which the prefetchers do not follow.
//! - column-major (unit row stride, a weight used transposed, as a tied LM
//!   head): each output is a dot product of a row of A with a column of B,
//!   four columns at a time.
//!
//! The columns are split over the threads. AVX-512, AVX2 with FMA, or plain
//! Rust, picked at run time.

use super::matrix::{Dims, Mat};
use super::team::{self, Shared};

/// Most rows of A a product runs here with.
pub const MAX_ROWS: usize = 4;

/// Rows of B added into the output per pass over the columns: the output's
/// load and store are shared by this many multiply-adds per row of A.
const KB: usize = 8;

/// Columns of B a column-major product reads at a time.
const COLS: usize = 4;

/// Columns per part are a multiple of this (one AVX-512 vector).
const LANES: usize = 16;

/// The instructions a product runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Plain Rust, on any CPU.
    Portable,
    /// Plain Rust compiled for AVX2 with FMA.
    Avx2,
    /// AVX-512F intrinsics.
    Avx512,
}

impl Path {
    /// The widest path this CPU runs, detected once.
    pub fn best() -> Path {
        #[cfg(target_arch = "x86_64")]
        {
            use std::sync::OnceLock;
            static BEST: OnceLock<Path> = OnceLock::new();
            *BEST.get_or_init(|| {
                let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
                if avx2 && is_x86_feature_detected!("avx512f") {
                    Path::Avx512
                } else if avx2 {
                    Path::Avx2
                } else {
                    Path::Portable
                }
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Path::Portable
        }
    }

    /// Whether this CPU runs the path.
    pub fn supported(self) -> bool {
        match self {
            Path::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => Path::best() == Path::Avx512,
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// Whether an `m x k x n` product runs here: at most [`MAX_ROWS`] rows, and B
/// row-major (unit column stride) or column-major (unit row stride, with A's
/// rows contiguous too, for the dot products).
pub fn applies(l: Mat, r: Mat, dims: Dims) -> bool {
    dims.m <= MAX_ROWS && (r.cs == 1 || (r.rs == 1 && l.cs == 1))
}

/// `dst = (accumulate ? dst : 0) + lhs @ rhs` on `path`, the columns split
/// over `threads` threads.
///
/// # Safety
/// `gemm::prepare` returned true for these arguments (every element of both
/// operands and of the `m x n` destination lies inside its slice, `k > 0`);
/// [`applies`] holds; the CPU runs `path`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv(path: Path, dst: &mut [f32], dst_rs: usize, accumulate: bool, lhs: &[f32], l: Mat, rhs: &[f32], r: Mat, dims: Dims, threads: usize) {
    let Dims { m, k, n } = dims;
    let parts = parts_for(n, threads);
    let (d, a, b) = (Shared(dst.as_mut_ptr()), Shared(lhs.as_ptr().cast_mut()), Shared(rhs.as_ptr().cast_mut()));
    team::for_each_part(parts, |t| {
        let (d, a, b) = (&d, &a, &b);
        let (s, e) = part_columns(n, parts, t);
        if s >= e {
            return;
        }
        // SAFETY: prepare checked that every element read or written lies
        // inside its slice; parts write disjoint columns s..e of dst, which
        // is borrowed mutably for the whole call; lhs and rhs are only read.
        unsafe {
            let part = Part {
                a: a.0.add(l.offset),
                a_rs: l.rs,
                a_cs: l.cs,
                b: b.0.add(r.offset).offset(s as isize * r.cs),
                b_rs: r.rs,
                b_cs: r.cs,
                c: d.0.add(s),
                c_rs: dst_rs,
                accumulate,
                k,
                n: e - s,
            };
            part.run(path, m);
        }
    });
}

/// The columns `s .. e` of `n` that part `t` of `parts` owns: whole vectors
/// of [`LANES`] columns, but for the last part's end.
pub(crate) fn part_columns(n: usize, parts: usize, t: usize) -> (usize, usize) {
    let vectors = n.div_ceil(LANES);
    ((vectors * t / parts * LANES).min(n), (vectors * (t + 1) / parts * LANES).min(n))
}

/// How many parts the columns of an `n`-column product are split into for
/// `threads` threads.
pub(crate) fn parts_for(n: usize, threads: usize) -> usize {
    threads.clamp(1, n.div_ceil(LANES))
}

/// `c = (accumulate ? c : 0) + a @ b` on the calling thread, for a `rows x k`
/// A and a `k x n` B given by pointers to element (0, 0) and (row, column)
/// strides, and an output with row stride `c_rs`.
///
/// # Safety
/// Every element of the three matrices is addressable as given (readable,
/// and writable for `c`) and nothing else writes them during the call;
/// `1 <= rows <= MAX_ROWS`; `k > 0`; B's column stride is 1, or its row
/// stride and A's column stride are; the CPU runs `path`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemv_part(path: Path, c: *mut f32, c_rs: usize, accumulate: bool, a: (*const f32, isize, isize), b: (*const f32, isize, isize), rows: usize, k: usize, n: usize) {
    let part = Part { a: a.0, a_rs: a.1, a_cs: a.2, b: b.0, b_rs: b.1, b_cs: b.2, c, c_rs, accumulate, k, n };
    // SAFETY: forwarded from the caller.
    unsafe { part.run(path, rows) }
}

/// One thread's columns of the product: A (all its rows), B from the part's
/// first column, and the output from the part's first column.
#[derive(Clone, Copy)]
struct Part {
    a: *const f32,
    a_rs: isize,
    a_cs: isize,
    b: *const f32,
    b_rs: isize,
    b_cs: isize,
    c: *mut f32,
    c_rs: usize,
    accumulate: bool,
    k: usize,
    n: usize,
}

/// `call` with the constant `R` set to `rows` (1 to [`MAX_ROWS`]).
macro_rules! with_rows {
    ($rows:expr, $R:ident => $call:expr) => {
        match $rows {
            1 => {
                const $R: usize = 1;
                $call
            }
            2 => {
                const $R: usize = 2;
                $call
            }
            3 => {
                const $R: usize = 3;
                $call
            }
            _ => {
                const $R: usize = 4;
                $call
            }
        }
    };
}

impl Part {
    /// # Safety
    /// The part's matrices are valid for `rows x k`, `k x n`, `rows x n`; the
    /// CPU runs `path`; `1 <= rows <= MAX_ROWS`.
    unsafe fn run(self, path: Path, rows: usize) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match path {
                #[cfg(target_arch = "x86_64")]
                Path::Avx512 if self.b_cs == 1 => with_rows!(rows, R => avx512::rows_by_rows::<R>(self)),
                #[cfg(target_arch = "x86_64")]
                Path::Avx512 => with_rows!(rows, R => avx512::dots::<R>(self)),
                #[cfg(target_arch = "x86_64")]
                Path::Avx2 if self.b_cs == 1 => with_rows!(rows, R => fused::rows_by_rows::<R>(self)),
                #[cfg(target_arch = "x86_64")]
                Path::Avx2 => with_rows!(rows, R => fused::dots::<R>(self)),
                _ if self.b_cs == 1 => with_rows!(rows, R => plain_rows_by_rows::<R, false>(self)),
                _ => with_rows!(rows, R => plain_dots::<R, false>(self)),
            }
        }
    }

    /// Address of A's element `(i, p)`.
    #[inline(always)]
    unsafe fn a_at(&self, i: usize, p: usize) -> *const f32 {
        // SAFETY: the caller keeps (i, p) inside A.
        unsafe { self.a.offset(i as isize * self.a_rs + p as isize * self.a_cs) }
    }

    /// Address of B's element `(p, j)`.
    #[inline(always)]
    unsafe fn b_at(&self, p: usize, j: usize) -> *const f32 {
        // SAFETY: the caller keeps (p, j) inside B.
        unsafe { self.b.offset(p as isize * self.b_rs + j as isize * self.b_cs) }
    }
}

#[inline(always)]
fn madd<const FUSED: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FUSED {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Row-major B in plain Rust: rows of B in groups of [`KB`], each group
/// added across all the part's columns. `FUSED` uses `mul_add` (only where
/// the CPU has FMA: elsewhere it is a library call).
///
/// # Safety
/// As for [`Part::run`], with `b_cs == 1`.
#[inline(always)]
unsafe fn plain_rows_by_rows<const R: usize, const FUSED: bool>(part: Part) {
    let (k, n) = (part.k, part.n);
    // SAFETY: every index stays inside the part's matrices.
    unsafe {
        let out: [&mut [f32]; R] = std::array::from_fn(|i| std::slice::from_raw_parts_mut(part.c.add(i * part.c_rs), n));
        let mut out = out;
        if !part.accumulate {
            out.iter_mut().for_each(|row| row.fill(0.0));
        }
        for p0 in (0..k).step_by(KB) {
            let kb = KB.min(k - p0);
            let brows: [&[f32]; KB] = std::array::from_fn(|q| if q < kb { std::slice::from_raw_parts(part.b_at(p0 + q, 0), n) } else { &[][..] });
            for (i, row) in out.iter_mut().enumerate() {
                let av: [f32; KB] = std::array::from_fn(|q| if q < kb { *part.a_at(i, p0 + q) } else { 0.0 });
                for (q, brow) in brows.iter().enumerate().take(kb) {
                    let aq = av[q];
                    for (c, &bv) in row.iter_mut().zip(brow.iter()) {
                        *c = madd::<FUSED>(aq, bv, *c);
                    }
                }
            }
        }
    }
}

/// Column-major B in plain Rust: each output a dot product of a row of A
/// (contiguous) with a column of B (contiguous).
///
/// # Safety
/// As for [`Part::run`], with `b_rs == 1` and `a_cs == 1`.
#[inline(always)]
unsafe fn plain_dots<const R: usize, const FUSED: bool>(part: Part) {
    let k = part.k;
    // SAFETY: every index stays inside the part's matrices.
    unsafe {
        let arows: [&[f32]; R] = std::array::from_fn(|i| std::slice::from_raw_parts(part.a_at(i, 0), k));
        for j in 0..part.n {
            let col = std::slice::from_raw_parts(part.b_at(0, j), k);
            for (i, arow) in arows.iter().enumerate() {
                // Eight partial sums, so the adds need not wait on each other.
                let mut acc = [0.0f32; 8];
                let (ac, bc) = (arow.chunks_exact(8), col.chunks_exact(8));
                let (ar, br) = (ac.remainder(), bc.remainder());
                for (x, y) in ac.zip(bc) {
                    for ((s, &x), &y) in acc.iter_mut().zip(x).zip(y) {
                        *s = madd::<FUSED>(x, y, *s);
                    }
                }
                let mut sum = acc.iter().sum::<f32>();
                for (x, y) in ar.iter().zip(br) {
                    sum = madd::<FUSED>(*x, *y, sum);
                }
                let c = part.c.add(i * part.c_rs + j);
                *c = if part.accumulate { *c + sum } else { sum };
            }
        }
    }
}

/// The plain loops compiled for AVX2 with FMA.
#[cfg(target_arch = "x86_64")]
mod fused {
    use super::{plain_dots, plain_rows_by_rows, Part};

    /// # Safety
    /// As for `plain_rows_by_rows`; the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn rows_by_rows<const R: usize>(part: Part) {
        // SAFETY: forwarded from the caller.
        unsafe { plain_rows_by_rows::<R, true>(part) }
    }

    /// # Safety
    /// As for `plain_dots`; the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dots<const R: usize>(part: Part) {
        // SAFETY: forwarded from the caller.
        unsafe { plain_dots::<R, true>(part) }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{Part, COLS, KB, LANES};

    /// The lanes of a vector from column `j` that lie before column `n`.
    #[inline(always)]
    fn mask(j: usize, n: usize) -> __mmask16 {
        let left = n - j;
        if left >= LANES {
            u16::MAX
        } else {
            (1u16 << left) - 1
        }
    }

    /// Row-major B: for each group of [`KB`] rows of B, every vector of the
    /// part's columns gets `R` rows' multiply-adds from the group.
    ///
    /// # Safety
    /// As for `Part::run`, with `b_cs == 1`; the CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn rows_by_rows<const R: usize>(part: Part) {
        let (k, n) = (part.k, part.n);
        // SAFETY: masked lanes keep every access inside the part's columns;
        // rows stay below k and R.
        unsafe {
            let mut p0 = 0;
            while p0 < k {
                let kb = KB.min(k - p0);
                let first = p0 == 0 && !part.accumulate;
                match kb {
                    8 => group::<R, 8>(part, p0, first, n),
                    7 => group::<R, 7>(part, p0, first, n),
                    6 => group::<R, 6>(part, p0, first, n),
                    5 => group::<R, 5>(part, p0, first, n),
                    4 => group::<R, 4>(part, p0, first, n),
                    3 => group::<R, 3>(part, p0, first, n),
                    2 => group::<R, 2>(part, p0, first, n),
                    _ => group::<R, 1>(part, p0, first, n),
                }
                p0 += kb;
            }
        }
    }

    /// Rows `p0 .. p0 + Q` of B added into the output (which starts from
    /// zero when `first`).
    ///
    /// # Safety
    /// As for [`rows_by_rows`], with `p0 + Q <= k`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn group<const R: usize, const Q: usize>(part: Part, p0: usize, first: bool, n: usize) {
        // SAFETY: as for the caller; every load and store is masked to the
        // columns below n.
        unsafe {
            let av: [[__m512; Q]; R] = std::array::from_fn(|i| std::array::from_fn(|q| _mm512_set1_ps(*part.a_at(i, p0 + q))));
            let brows: [*const f32; Q] = std::array::from_fn(|q| part.b_at(p0 + q, 0));
            let mut j = 0;
            while j < n {
                let m = mask(j, n);
                let bv: [__m512; Q] = std::array::from_fn(|q| _mm512_maskz_loadu_ps(m, brows[q].add(j)));
                for (i, ai) in av.iter().enumerate() {
                    let c = part.c.add(i * part.c_rs + j);
                    let mut acc = if first { _mm512_setzero_ps() } else { _mm512_maskz_loadu_ps(m, c) };
                    for (&aq, &bq) in ai.iter().zip(&bv) {
                        acc = _mm512_fmadd_ps(aq, bq, acc);
                    }
                    _mm512_mask_storeu_ps(c, m, acc);
                }
                j += LANES;
            }
        }
    }

    /// Column-major B: [`COLS`] columns at a time, each output a dot product
    /// of a row of A with a column of B, 16 depths a step.
    ///
    /// # Safety
    /// As for `Part::run`, with `b_rs == 1` and `a_cs == 1`; the CPU has
    /// AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn dots<const R: usize>(part: Part) {
        let (k, n) = (part.k, part.n);
        // SAFETY: masked lanes keep every access inside rows of A and columns
        // of B of k values each; columns stay below n.
        unsafe {
            let mut j = 0;
            while j + COLS <= n {
                columns::<R, COLS>(part, j, k);
                j += COLS;
            }
            while j < n {
                columns::<R, 1>(part, j, k);
                j += 1;
            }
        }
    }

    /// Outputs `(i, j .. j + C)` for every row `i < R`.
    ///
    /// # Safety
    /// As for [`dots`], with `j + C <= n`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn columns<const R: usize, const C: usize>(part: Part, j: usize, k: usize) {
        // SAFETY: as for the caller.
        unsafe {
            let mut acc = [[_mm512_setzero_ps(); C]; R];
            let cols: [*const f32; C] = std::array::from_fn(|c| part.b_at(0, j + c));
            let rows: [*const f32; R] = std::array::from_fn(|i| part.a_at(i, 0));
            let mut p = 0;
            while p < k {
                let m = mask(p, k);
                let bv: [__m512; C] = std::array::from_fn(|c| _mm512_maskz_loadu_ps(m, cols[c].add(p)));
                for (i, row) in acc.iter_mut().enumerate() {
                    let av = _mm512_maskz_loadu_ps(m, rows[i].add(p));
                    for (v, &bc) in row.iter_mut().zip(&bv) {
                        *v = _mm512_fmadd_ps(av, bc, *v);
                    }
                }
                p += LANES;
            }
            for (i, row) in acc.iter().enumerate() {
                for (c, v) in row.iter().enumerate() {
                    let out = part.c.add(i * part.c_rs + j + c);
                    let sum = _mm512_reduce_add_ps(*v);
                    *out = if part.accumulate { *out + sum } else { sum };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matrix of `rows x cols` in a buffer of its own, with the given layout.
    struct Stored {
        buf: Vec<f32>,
        mat: Mat,
    }

    fn values(len: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// `rows x cols` values stored row-major (with row stride `cols + pad`)
    /// or column-major (column stride `rows + pad`), from offset 3.
    fn stored(rows: usize, cols: usize, col_major: bool, pad: usize, seed: u64) -> Stored {
        let (outer, inner) = if col_major { (cols, rows) } else { (rows, cols) };
        let buf = values(3 + outer * (inner + pad), seed);
        let ld = (inner + pad) as isize;
        let mat = if col_major { Mat { offset: 3, rs: 1, cs: ld } } else { Mat { offset: 3, rs: ld, cs: 1 } };
        Stored { buf, mat }
    }

    fn at(s: &Stored, i: usize, j: usize) -> f64 {
        s.buf[(s.mat.offset as isize + i as isize * s.mat.rs + j as isize * s.mat.cs) as usize] as f64
    }

    fn paths() -> Vec<Path> {
        [Path::Portable, Path::Avx2, Path::Avx512].into_iter().filter(|p| p.supported()).collect()
    }

    /// Every path against an f64 reference: M = 1..4, odd K and N, B
    /// row-major and transposed, padded strides, with and without
    /// accumulation, on one and two threads.
    #[test]
    fn matches_f64_reference() {
        assert!(paths().contains(&Path::Portable));
        for path in paths() {
            for m in 1..=MAX_ROWS {
                for &(k, n) in &[(1, 1), (7, 5), (9, 17), (33, 31), (768, 97), (129, 300), (17, 1)] {
                    for b_col_major in [false, true] {
                        for &(threads, accumulate) in &[(1, false), (2, true), (2, false)] {
                            let a = stored(m, k, false, 2, 1 + m as u64);
                            let b = stored(k, n, b_col_major, 1, 7 + k as u64);
                            let dims = Dims { m, k, n };
                            assert!(applies(a.mat, b.mat, dims));
                            let dst_rs = n + 3;
                            let start = values(m * dst_rs, 99);
                            let mut dst = start.clone();
                            // SAFETY: both operands and dst hold every element
                            // of their matrices; k > 0; the path is supported.
                            unsafe { gemv(path, &mut dst, dst_rs, accumulate, &a.buf, a.mat, &b.buf, b.mat, dims, threads) };
                            for i in 0..m {
                                for j in 0..dst_rs {
                                    let got = dst[i * dst_rs + j] as f64;
                                    if j >= n {
                                        assert_eq!(got, start[i * dst_rs + j] as f64, "{path:?} wrote past column {n}");
                                        continue;
                                    }
                                    let mut want: f64 = (0..k).map(|p| at(&a, i, p) * at(&b, p, j)).sum();
                                    if accumulate {
                                        want += start[i * dst_rs + j] as f64;
                                    }
                                    let tol = 1e-5 * (k as f64).sqrt() * 4.0 + 1e-6;
                                    assert!((got - want).abs() <= tol, "{path:?} m={m} k={k} n={n} col_major={b_col_major} acc={accumulate}: ({i},{j}) {got} vs {want}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn applies_only_to_few_rows_and_unit_strides() {
        let row = Mat { offset: 0, rs: 8, cs: 1 };
        let col = Mat { offset: 0, rs: 1, cs: 8 };
        let neither = Mat { offset: 0, rs: 2, cs: 16 };
        assert!(applies(row, row, Dims { m: 4, k: 8, n: 8 }));
        assert!(!applies(row, row, Dims { m: 5, k: 8, n: 8 }));
        assert!(applies(row, col, Dims { m: 1, k: 8, n: 8 }));
        assert!(!applies(col, col, Dims { m: 2, k: 8, n: 8 }), "dot products need A's rows contiguous");
        assert!(!applies(row, neither, Dims { m: 1, k: 8, n: 8 }));
    }

    /// Through `f32::gemm_into`, which routes few-row products here.
    #[test]
    fn gemm_routes_few_rows_here() {
        use crate::kernels::gemm::GemmElement;
        let (m, k, n) = (3, 300, 257);
        let a = stored(m, k, false, 0, 5);
        let b = stored(k, n, true, 0, 6);
        let mut dst = vec![0.0f32; m * n];
        f32::gemm(&mut dst, &a.buf, a.mat, &b.buf, b.mat, Dims { m, k, n }, true);
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|p| at(&a, i, p) * at(&b, p, j)).sum();
                assert!((dst[i * n + j] as f64 - want).abs() < 1e-4, "({i},{j})");
            }
        }
    }
}
