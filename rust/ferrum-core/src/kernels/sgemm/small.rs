//! Products too small to pay for packing, on the AVX-512 tile: the kernel
//! reads A and B where they are.
//!
//! Packing copies each operand once into the order the microkernel walks;
//! on a large product that copy is a sliver of the work, but a 64^3
//! product multiplies each packed float only 64 times, and packing both
//! operands took a quarter of its time. Here the kernel broadcasts A's
//! values straight from its rows (one stream per row of the tile) and
//! loads B's rows where they are, with masked loads and stores for the
//! last columns, so nothing is copied and no lane of padding is multiplied.
//! Both operands of such a product fit in L2 together, which is what the
//! packing would otherwise be buying.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::avx512::Avx512;
use super::operand::Operand;
use super::tile::Tile;
use crate::kernels::team;

/// Rows of the register tile (as the packed AVX-512 tile's).
const MR: usize = Avx512::MR;
/// Columns of the register tile: two vectors.
const NR: usize = Avx512::NR;

/// Largest operand (floats) read unpacked: A and B together stay in L2
/// (2 MiB on the Xeon this was measured on, 1 MiB on Zen 5) while the row
/// tiles stream past each 32-column panel of B, and A is read again for
/// every panel.
const MAX_OPERAND_FLOATS: usize = 1 << 17;

/// Whether an `m x k x n` product on one thread runs here: both operands
/// row-major (unit column stride, positive row stride) and small enough
/// to stay in cache unpacked.
pub fn applies(a: Operand, b: Operand, m: usize, k: usize, n: usize) -> bool {
    let small = |rows: usize, cols: usize| rows.saturating_mul(cols) <= MAX_OPERAND_FLOATS;
    a.cs == 1 && b.cs == 1 && a.rs > 0 && b.rs > 0 && small(m, k) && small(k, n)
}

/// `dst = (accumulate ? dst : 0) + a @ b` on one thread, without packing.
///
/// # Safety
/// The CPU has AVX-512F; [`applies`] holds; every element of the `m x k`
/// and `k x n` operands is readable; `dst` addresses a writable `m x n`
/// matrix with row stride `dst_rs >= n`; `k > 0`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm(dst: *mut f32, dst_rs: usize, accumulate: bool, a: Operand, b: Operand, m: usize, k: usize, n: usize) {
    let (a_rs, b_rs) = (a.rs as usize, b.rs as usize);
    // A 32-column panel of B stays in L1 while every row tile passes it.
    for j in (0..n).step_by(NR) {
        let cols = NR.min(n - j);
        // Lanes of the two vectors that hold columns j .. j + cols.
        let lo = if cols >= 16 { u16::MAX } else { (1u16 << cols) - 1 };
        let hi = if cols >= NR { u16::MAX } else if cols > 16 { (1u16 << (cols - 16)) - 1 } else { 0 };
        for i in (0..m).step_by(MR) {
            // SAFETY: rows i .. i + rows of A and columns j .. j + cols of B
            // and of dst are inside the matrices the caller vouches for.
            unsafe {
                let (ap, bp, c) = (a.at(i, 0), b.at(0, j), dst.add(i * dst_rs + j));
                let tile = UnpackedTile { kc: k, a: ap, a_rs, b: bp, b_rs, c, c_rs: dst_rs, accumulate, lo, hi };
                by_rows!(MR.min(m - i), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], MR, R => tile.rows::<R>())
            }
        }
    }
}

/// One register tile of an unpacked product: rows of A from `a`, `a_rs`
/// apart; rows of B from `b`, `b_rs` apart; the output tile at `c`, rows
/// `c_rs` apart; `lo` and `hi` mask the lanes of the two 16-column halves
/// that lie inside the matrix.
struct UnpackedTile {
    kc: usize,
    a: *const f32,
    a_rs: usize,
    b: *const f32,
    b_rs: usize,
    c: *mut f32,
    c_rs: usize,
    accumulate: bool,
    lo: __mmask16,
    hi: __mmask16,
}

impl UnpackedTile {
    /// `c[0..R][cols] = (accumulate ? c : 0) + a[0..R][0..kc] @ b[0..kc][cols]`.
    ///
    /// # Safety
    /// The CPU has AVX-512F; rows `0..R` of A (`kc` floats each), rows
    /// `0..kc` of B and rows `0..R` of `c` are readable (and `c` writable)
    /// in every lane the masks set.
    #[target_feature(enable = "avx512f")]
    unsafe fn rows<const R: usize>(&self) {
        let UnpackedTile { kc, a, a_rs, b, b_rs, c, c_rs, accumulate, lo, hi } = *self;
        // SAFETY: every access reads or writes a lane the masks allow, of a
        // row the caller vouches for.
        unsafe {
            let mut acc = [[_mm512_setzero_ps(); 2]; R];
            let rows: [*const f32; R] = std::array::from_fn(|i| a.add(i * a_rs));
            let mut b = b;
            for p in 0..kc {
                // b + 16 lies past a row of 16 columns or fewer only when `hi`
                // masks every lane of it off.
                let b0 = _mm512_maskz_loadu_ps(lo, b);
                let b1 = _mm512_maskz_loadu_ps(hi, b.wrapping_add(16));
                for (row, r) in acc.iter_mut().zip(rows) {
                    let ai = _mm512_set1_ps(*r.add(p));
                    row[0] = _mm512_fmadd_ps(ai, b0, row[0]);
                    row[1] = _mm512_fmadd_ps(ai, b1, row[1]);
                }
                b = b.wrapping_add(b_rs);
            }
            for (i, [v0, v1]) in acc.into_iter().enumerate() {
                let p = c.add(i * c_rs);
                let (v0, v1) = if accumulate {
                    (_mm512_add_ps(_mm512_maskz_loadu_ps(lo, p), v0), _mm512_add_ps(_mm512_maskz_loadu_ps(hi, p.wrapping_add(16)), v1))
                } else {
                    (v0, v1)
                };
                _mm512_mask_storeu_ps(p, lo, v0);
                // Past the last column only when `hi` masks every lane off.
                _mm512_mask_storeu_ps(p.wrapping_add(16), hi, v1);
            }
        }
    }
}

/// Columns of the narrow tile: one vector.
const NARROW: usize = 16;
/// Rows of the narrow tile: a broadcast of A per multiply-add either way,
/// so more rows only amortise B's load; 24 accumulators leave registers
/// for B's vector and the addresses.
const NARROW_MR: usize = 24;
/// Rows a part of a threaded narrow product runs at least (and a multiple
/// of the tile), so that a thread's part pays for its wake-up.
const NARROW_PART_ROWS: usize = 4 * NARROW_MR;

/// Whether an `m x k x n` product with at most 16 output columns runs on
/// the narrow tile: A column-major (a transposed activation, as in a
/// weight gradient `[batch, 512]^T @ [batch, 10]`), B row-major with its
/// `k x n` values in cache, and 16 rows or more (fewer leave too few
/// accumulators to hide the multiply-add's latency). Strides are (row,
/// column) pairs.
///
/// On the 32-column tile two thirds of every multiply-add was padding, and
/// the `gemm` crate's AVX2 code ran 512x256x10 at 70-80 GFLOP/s on two
/// threads, against 93-104 here. A row-major A stays on the crate: its
/// rows' values are a stride apart, and the compiler chains the 24
/// addresses of a step one after another, which ran no faster.
pub fn narrow_applies(a: (isize, isize), b: (isize, isize), m: usize, k: usize, n: usize) -> bool {
    m >= 16 && n <= NARROW && a.0 == 1 && a.1 > 0 && b.1 == 1 && b.0 > 0 && k.saturating_mul(n) <= MAX_OPERAND_FLOATS
}

/// `dst = (accumulate ? dst : 0) + a @ b` for a product [`narrow_applies`]
/// to, its rows split over `threads` threads; nothing is packed.
///
/// # Safety
/// The CPU has AVX-512F; [`narrow_applies`] holds, but for `m`, which may
/// be any; every element of the `m x k` and `k x n` operands is readable;
/// `dst` addresses a writable `m x n` matrix with row stride `dst_rs >= n`
/// that nothing else accesses during the call; `k > 0`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn narrow(dst: *mut f32, dst_rs: usize, accumulate: bool, a: Operand, b: Operand, m: usize, k: usize, n: usize, threads: usize) {
    let parts = threads.min(m.div_ceil(NARROW_PART_ROWS)).max(1);
    let tiles = m.div_ceil(NARROW_MR);
    let out = SharedOut(dst);
    let mask = if n >= NARROW { u16::MAX } else { (1u16 << n) - 1 };
    team::for_each_part(parts, |t| {
        let dst = &out;
        let (s, e) = ((tiles * t / parts * NARROW_MR).min(m), (tiles * (t + 1) / parts * NARROW_MR).min(m));
        for i in (s..e).step_by(NARROW_MR) {
            if crate::interrupt::poll() {
                return;
            }
            // SAFETY: rows i .. i + rows of A and of dst lie inside the
            // matrices the caller vouches for; parts write disjoint rows.
            unsafe {
                let tile = NarrowTile { kc: k, a: a.at(i, 0), a_cs: a.cs as usize, b: b.at(0, 0), b_rs: b.rs as usize, c: dst.0.add(i * dst_rs), c_rs: dst_rs, accumulate, mask };
                by_rows!(e - i, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23], NARROW_MR, R => tile.rows::<R>())
            }
        }
    });
}

/// The output pointer, shared by the parts (each writes its own rows).
struct SharedOut(*mut f32);
// SAFETY: the parts of `narrow` write disjoint rows through it, inside the
// caller's exclusive borrow of the output.
unsafe impl Sync for SharedOut {}

/// One tile of a narrow product: A's values from `a`, rows adjacent and
/// steps `a_cs` apart; rows of B from `b`, `b_rs` apart; the output tile at
/// `c`, rows `c_rs` apart; `mask` sets the lanes of the columns inside the
/// matrix.
#[derive(Clone, Copy)]
struct NarrowTile {
    kc: usize,
    a: *const f32,
    a_cs: usize,
    b: *const f32,
    b_rs: usize,
    c: *mut f32,
    c_rs: usize,
    accumulate: bool,
    mask: __mmask16,
}

impl NarrowTile {
    /// `c[0..R][cols] = (accumulate ? c : 0) + a[0..R][0..kc] @ b[0..kc][cols]`;
    /// the R values of a step are constant offsets from one pointer.
    ///
    /// # Safety
    /// The CPU has AVX-512F; rows `0..R` of A (`kc` values each), rows
    /// `0..kc` of B and rows `0..R` of `c` are readable (and `c` writable)
    /// in every lane the mask sets.
    #[target_feature(enable = "avx512f")]
    unsafe fn rows<const R: usize>(self) {
        let NarrowTile { kc, a, a_cs, b, b_rs, c, c_rs, accumulate, mask } = self;
        // SAFETY: every access reads or writes a lane the mask allows, of a
        // row the caller vouches for.
        unsafe {
            let mut acc = [_mm512_setzero_ps(); R];
            let (mut a, mut b) = (a, b);
            for _ in 0..kc {
                let bv = _mm512_maskz_loadu_ps(mask, b);
                for (r, acc) in acc.iter_mut().enumerate() {
                    *acc = _mm512_fmadd_ps(_mm512_set1_ps(*a.add(r)), bv, *acc);
                }
                a = a.wrapping_add(a_cs);
                b = b.wrapping_add(b_rs);
            }
            for (r, v) in acc.into_iter().enumerate() {
                let p = c.add(r * c_rs);
                let v = if accumulate { _mm512_add_ps(_mm512_maskz_loadu_ps(mask, p), v) } else { v };
                _mm512_mask_storeu_ps(p, mask, v);
            }
        }
    }
}
