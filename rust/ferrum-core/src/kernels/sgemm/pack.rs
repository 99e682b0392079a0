//! Packing: copies of operand blocks into the order the microkernel reads,
//! micro-panel after micro-panel, zero-padded to whole panels, so the inner
//! loop walks memory with unit stride whatever the operands' strides were.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::operand::Operand;
use super::tile::Tile;

/// The micro-panels of `width` lines (rows of A or columns of B) that hold
/// `lines` lines `kc` deep: each panel's `width * kc` floats of `out`
/// (zeroed when the edge cuts the panel short), its first line and how many
/// lines it holds.
///
/// # Safety
/// `out` has room for `lines.div_ceil(width) * width * kc` floats that
/// nothing else accesses while the panels are in use.
unsafe fn panels<'a>(out: *mut f32, lines: usize, width: usize, kc: usize) -> impl Iterator<Item = (&'a mut [f32], usize, usize)> {
    (0..lines).step_by(width).enumerate().map(move |(panel, first)| {
        // SAFETY: panel `panel` lies inside `out` by the caller's size
        // bound, and the panels do not overlap.
        let dst = unsafe { std::slice::from_raw_parts_mut(out.add(panel * width * kc), width * kc) };
        let count = width.min(lines - first);
        if count < width {
            dst.fill(0.0);
        }
        (dst, first, count)
    })
}

/// Pack the `rows x kc` block of `a` at `(r0, p0)` into micro-panels of
/// `T::MR` rows, each stored k-major (`T::MR` values per step of k).
///
/// # Safety
/// The CPU has AVX2; every element of the block is readable through `a`;
/// `out` has room for `rows.div_ceil(T::MR) * T::MR * kc` floats.
pub unsafe fn pack_a<T: Tile>(out: *mut f32, a: Operand, r0: usize, p0: usize, rows: usize, kc: usize) {
    // SAFETY: `out` has room for every panel, by the caller's size bound.
    for (dst, i0, mr) in unsafe { panels(out, rows, T::MR, kc) } {
        if a.cs == 1 && mr == T::MR && interleaves(T::MR) {
            // SAFETY: rows r0 + i0 .. + MR, columns p0 .. p0 + kc are in the
            // block; the CPU has AVX2.
            unsafe { interleave(dst, T::MR, |i| std::slice::from_raw_parts(a.at(r0 + i0 + i, p0), kc)) };
            continue;
        }
        if a.rs == 1 && mr == T::MR {
            // Column-major (a transposed view): each step of k reads MR
            // contiguous floats.
            // SAFETY: elements (r0 + i0 .. + MR, p0 + p) are in the block.
            unsafe { copy_steps(dst, T::MR, |p| a.at(r0 + i0, p0 + p)) };
            continue;
        }
        for i in 0..mr {
            // SAFETY: row r0 + i0 + i, columns p0 .. p0 + kc are in the block.
            unsafe { pack_line(dst, i, T::MR, a.at(r0 + i0 + i, p0), a.cs, kc) };
        }
    }
}

/// Pack the `kc x cols` block of `b` at `(p0, j0)` into micro-panels of
/// `T::NR` columns, each stored k-major (`T::NR` values per step of k).
///
/// # Safety
/// The CPU has AVX2; every element of the block is readable through `b`;
/// `out` has room for `cols.div_ceil(T::NR) * T::NR * kc` floats.
pub unsafe fn pack_b<T: Tile>(out: *mut f32, b: Operand, p0: usize, j0: usize, kc: usize, cols: usize) {
    let whole = if b.cs == 1 { cols / T::NR * T::NR } else { 0 };
    if whole > 0 {
        // SAFETY: rows p0 .. p0 + kc, columns j0 .. j0 + whole are in the
        // block; `out` has room for their panels.
        unsafe { copy_rows(out, T::NR, kc, whole, |p| b.at(p0 + p, j0)) };
    }
    // SAFETY: `out` has room for every panel, by the caller's size bound;
    // the whole panels above come first.
    for (dst, jp, nr) in unsafe { panels(out.add(whole * kc), cols - whole, T::NR, kc) } {
        let jp = whole + jp;
        if b.cs == 1 {
            // Row-major: each step of k copies one contiguous run of a row.
            for (p, d) in dst.chunks_exact_mut(T::NR).enumerate() {
                // SAFETY: elements (p0 + p, j0 + jp .. + nr) are in the block.
                let src = unsafe { std::slice::from_raw_parts(b.at(p0 + p, j0 + jp), nr) };
                d[..nr].copy_from_slice(src);
            }
        } else if b.rs == 1 && nr == T::NR && interleaves(T::NR) {
            // Column-major (a transposed view, as the im2col matrix in a
            // weight gradient): each column is contiguous.
            // SAFETY: rows p0 .. p0 + kc of columns j0 + jp .. + NR are in
            // the block; the CPU has AVX2.
            unsafe { interleave(dst, T::NR, |j| std::slice::from_raw_parts(b.at(p0, j0 + jp + j), kc)) };
        } else {
            for j in 0..nr {
                // SAFETY: rows p0 .. p0 + kc of column j0 + jp + j are in the block.
                unsafe { pack_line(dst, j, T::NR, b.at(p0, j0 + jp + j), b.rs, kc) };
            }
        }
    }
}

/// Fill a whole panel `width` lanes wide step by step of k, step `p` from
/// the `width` contiguous floats at `src(p)`. The tiles' widths copy as
/// fixed-size arrays (vector moves, not a memmove call per step).
///
/// # Safety
/// For every step `p` of the panel, `width` floats from `src(p)` on are
/// readable; `dst` holds whole steps.
unsafe fn copy_steps(dst: &mut [f32], width: usize, src: impl Fn(usize) -> *const f32) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match width {
            6 => copy_fixed::<6>(dst, src),
            12 => copy_fixed::<12>(dst, src),
            16 => copy_fixed::<16>(dst, src),
            32 => copy_fixed::<32>(dst, src),
            _ => dst.chunks_exact_mut(width).enumerate().for_each(|(p, d)| d.copy_from_slice(std::slice::from_raw_parts(src(p), width))),
        }
    }
}

/// Whole row-major panels `width` wide holding `cols` columns, filled a row
/// of the block at a time: `row(p)` is step `p`'s first column, and each
/// row's `width`-float pieces go to their panels. Reading B front to back
/// lets the prefetchers follow; a panel at a time walks `kc` rows a row
/// stride apart, often a page each, which they do not.
///
/// # Safety
/// For every step `p < kc`, `cols` floats from `row(p)` on are readable;
/// `out` has room for `cols * kc` floats; `cols` is a multiple of `width`.
unsafe fn copy_rows(out: *mut f32, width: usize, kc: usize, cols: usize, row: impl Fn(usize) -> *const f32) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match width {
            16 => copy_rows_fixed::<16>(out, kc, cols, row),
            32 => copy_rows_fixed::<32>(out, kc, cols, row),
            _ => {
                for p in 0..kc {
                    for q in (0..cols).step_by(width) {
                        std::ptr::copy_nonoverlapping(row(p).add(q), out.add(q * kc + p * width), width);
                    }
                }
            }
        }
    }
}

/// [`copy_rows`] for a width known at compile time.
///
/// # Safety
/// As for [`copy_rows`] with `width = W`.
unsafe fn copy_rows_fixed<const W: usize>(out: *mut f32, kc: usize, cols: usize, row: impl Fn(usize) -> *const f32) {
    for p in 0..kc {
        let src = row(p);
        for q in (0..cols).step_by(W) {
            // SAFETY: the caller vouches for the row's `cols` floats and
            // for room for panel q / W's step p.
            unsafe { *out.add(q * kc + p * W).cast::<[f32; W]>() = *src.add(q).cast::<[f32; W]>() };
        }
    }
}

/// [`copy_steps`] for a width known at compile time.
///
/// # Safety
/// As for [`copy_steps`] with `width = W`.
unsafe fn copy_fixed<const W: usize>(dst: &mut [f32], src: impl Fn(usize) -> *const f32) {
    for (p, d) in dst.chunks_exact_mut(W).enumerate() {
        // SAFETY: the caller vouches for the W floats of step p.
        let s = unsafe { &*src(p).cast::<[f32; W]>() };
        if let Ok(d) = <&mut [f32; W]>::try_from(d) {
            *d = *s;
        }
    }
}

/// Copy `kc` values `step` elements apart, from `src` on, into lane `lane`
/// of a panel `width` lanes wide; a unit step reads them as one slice.
///
/// # Safety
/// The `kc` values are readable; `dst` holds `width * kc` floats.
unsafe fn pack_line(dst: &mut [f32], lane: usize, width: usize, src: *const f32, step: isize, kc: usize) {
    let slots = dst.iter_mut().skip(lane).step_by(width);
    if step == 1 {
        // SAFETY: the caller vouches for the kc contiguous values.
        let src = unsafe { std::slice::from_raw_parts(src, kc) };
        slots.zip(src).for_each(|(d, &s)| *d = s);
    } else {
        for (p, d) in slots.enumerate() {
            // SAFETY: value p of the line, p < kc.
            *d = unsafe { *src.offset(p as isize * step) };
        }
    }
}

/// Whether [`interleave`] handles panels `width` lanes wide.
fn interleaves(width: usize) -> bool {
    width == 6 || width.is_multiple_of(4)
}

/// Interleave `width` lines of equal length `kc` (rows of A, or columns of
/// B, each contiguous) into a k-major panel: `dst[p * width + i] =
/// line(i)[p]`, through register transposes.
///
/// # Safety
/// The CPU supports AVX2; [`interleaves`] accepts `width`; `dst` holds
/// `width * kc` floats.
unsafe fn interleave<'a>(dst: &mut [f32], width: usize, line: impl Fn(usize) -> &'a [f32]) {
    // SAFETY: forwarded from the caller.
    unsafe {
        if width == 6 {
            transpose_rows(dst, &std::array::from_fn(line));
        } else {
            for g in (0..width).step_by(4) {
                transpose_quad(dst, width, g, &std::array::from_fn(|i| line(g + i)));
            }
        }
    }
}

/// Interleave six rows into a k-major panel: `dst[p * MR + i] = rows[i][p]`.
/// Eight steps of k at a time go through registers as a 6 x 8 transpose, so
/// the rows are read with vector loads and the panel written front to back
/// once, instead of 48 scalar loads and stores.
///
/// # Safety
/// The CPU supports AVX2; `dst` holds `MR * kc` floats, every row `kc`.
#[target_feature(enable = "avx2")]
unsafe fn transpose_rows(dst: &mut [f32], rows: &[&[f32]; 6]) {
    const MR: usize = 6;
    let kc = rows[0].len();
    let body = kc - kc % 8;
    debug_assert!(dst.len() >= MR * kc && rows.iter().all(|r| r.len() == kc));
    // SAFETY: every load reads floats p .. p + 8 <= body <= kc of a row,
    // every store writes inside the 48 floats of steps p .. p + 8 of dst.
    unsafe {
        for p in (0..body).step_by(8) {
            let r: [__m256; MR] = std::array::from_fn(|i| _mm256_loadu_ps(rows[i].as_ptr().add(p)));
            // Pairs of rows interleaved: (0,1), (2,3), (4,5), each low and high.
            let (t0, t1) = (_mm256_unpacklo_ps(r[0], r[1]), _mm256_unpackhi_ps(r[0], r[1]));
            let (t2, t3) = (_mm256_unpacklo_ps(r[2], r[3]), _mm256_unpackhi_ps(r[2], r[3]));
            let (t4, t5) = (_mm256_unpacklo_ps(r[4], r[5]), _mm256_unpackhi_ps(r[4], r[5]));
            // Rows 0..4 of steps (j, j + 4) for j = 0..4.
            let quads = [_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2), _mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3)];
            // Rows 4..6: step j's pair is the low (even j) or high (odd j)
            // 64 bits of t4 (j < 2) or t5, in each 128-bit half.
            let pairs = [t4, t4, t5, t5];
            let out = dst.as_mut_ptr().add(p * MR);
            for (j, (q, pr)) in quads.into_iter().zip(pairs).enumerate() {
                // Step j is in the low 128-bit halves, step j + 4 in the high.
                let halves = [(_mm256_castps256_ps128(q), _mm256_castps256_ps128(pr)), (_mm256_extractf128_ps::<1>(q), _mm256_extractf128_ps::<1>(pr))];
                for (h, (q, pr)) in halves.into_iter().enumerate() {
                    let d = out.add((j + 4 * h) * MR);
                    _mm_storeu_ps(d, q);
                    if j % 2 == 0 {
                        _mm_storel_pd(d.add(4).cast(), _mm_castps_pd(pr));
                    } else {
                        _mm_storeh_pd(d.add(4).cast(), _mm_castps_pd(pr));
                    }
                }
            }
        }
    }
    for p in body..kc {
        for (i, row) in rows.iter().enumerate() {
            dst[p * MR + i] = row[p];
        }
    }
}

/// Interleave four lines (rows of A, or columns of B) into lanes
/// `g..g + 4` of a k-major panel `mr` lanes wide: `dst[p * mr + g + i] =
/// rows[i][p]`. Eight steps of k at a
/// time go through registers as a 4 x 8 transpose: each step's four values
/// land as one 128-bit store.
///
/// # Safety
/// The CPU supports AVX2; `dst` holds `mr * kc` floats, every row `kc`,
/// `g + 4 <= mr`.
#[target_feature(enable = "avx2")]
unsafe fn transpose_quad(dst: &mut [f32], mr: usize, g: usize, rows: &[&[f32]; 4]) {
    let kc = rows[0].len();
    let body = kc - kc % 8;
    debug_assert!(g + 4 <= mr && dst.len() >= mr * kc && rows.iter().all(|r| r.len() == kc));
    // SAFETY: every load reads floats p .. p + 8 <= body <= kc of a row,
    // every store writes lanes g .. g + 4 of a step p + j < body of dst.
    unsafe {
        for p in (0..body).step_by(8) {
            let r: [__m256; 4] = std::array::from_fn(|i| _mm256_loadu_ps(rows[i].as_ptr().add(p)));
            let (t0, t1) = (_mm256_unpacklo_ps(r[0], r[1]), _mm256_unpackhi_ps(r[0], r[1]));
            let (t2, t3) = (_mm256_unpacklo_ps(r[2], r[3]), _mm256_unpackhi_ps(r[2], r[3]));
            // Steps (j, j + 4) for j = 0..4, in the low and high halves.
            let quads = [_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2), _mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3)];
            let out = dst.as_mut_ptr().add(p * mr + g);
            for (j, q) in quads.into_iter().enumerate() {
                _mm_storeu_ps(out.add(j * mr), _mm256_castps256_ps128(q));
                _mm_storeu_ps(out.add((j + 4) * mr), _mm256_extractf128_ps::<1>(q));
            }
        }
    }
    for p in body..kc {
        for (i, row) in rows.iter().enumerate() {
            dst[p * mr + g + i] = row[p];
        }
    }
}
