//! Half-precision products (bf16, f16): f32 accumulation and one rounding
//! of each result to the half format, whichever way they run.
//!
//! bf16 runs on AMX tiles where the CPU has AMX-BF16 ([`super::amx`]),
//! else on the `vdpbf16ps` kernel ([`super::bgemm`]) where that instruction
//! outruns f32 FMA, else (and f16 always) widened: each operand is read
//! once into an f32 copy laid out as it is stored, the f32 kernel
//! multiplies, and the result is rounded back.

use std::cell::RefCell;

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

use super::amx;
use super::bgemm;
use super::gemm::{prepare, threads_for, Dims, GemmElement, Mat};
use super::gemv;
use super::team;

/// Elements from which widening and rounding run on every thread.
const PAR_CONVERT: usize = 1 << 16;

impl GemmElement for bf16 {
    fn gemm_into(dst: &mut [Self], dst_rs: usize, accumulate: bool, lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, threads: bool) {
        bf16_gemm(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads, Bf16Kernel::preferred());
    }
}

/// The kernels a bf16 product can run on (past the few-row path, which
/// widens slices of B whatever the CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bf16Kernel {
    /// `tdpbf16ps` on AMX tiles.
    Amx,
    /// AVX-512 `vdpbf16ps` in registers.
    Vdpbf16,
    /// Widened to f32 and rounded back.
    Widened,
}

impl Bf16Kernel {
    /// The fastest this CPU has: AMX, else `vdpbf16ps` where it outruns f32
    /// FMA ([`bgemm::preferred`]), else widening.
    ///
    /// AMX at every size past the few-row path: on a Sapphire Rapids class
    /// Xeon (2 cores, `benches/bf16_matmul.py`) it was 2.4x to 4x faster than
    /// widening from 32^3 to 256^3 (23 against 9.5 GF/s at 32^3, 219 against
    /// 55 at 256^3) and as fast at 8^3 and 16^3, where a call costs about
    /// 3 us either way; the 128 products of 12 x 8 x 12 in a bmm took as long.
    pub(crate) fn preferred() -> Self {
        if Self::Amx.available() {
            Bf16Kernel::Amx
        } else if bgemm::preferred() {
            Bf16Kernel::Vdpbf16
        } else {
            Bf16Kernel::Widened
        }
    }

    /// Whether this CPU (and OS) runs the kernel.
    pub(crate) fn available(self) -> bool {
        match self {
            // The AMX path packs B and rounds its results with AVX-512 (every AMX CPU has it).
            Bf16Kernel::Amx => amx::bf16_available() && bgemm::available(),
            Bf16Kernel::Vdpbf16 => bgemm::available(),
            Bf16Kernel::Widened => true,
        }
    }
}

impl GemmElement for f16 {
    fn gemm_into(dst: &mut [Self], dst_rs: usize, accumulate: bool, lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, threads: bool) {
        if !prepare(dst, dst_rs, accumulate, lhs, l, rhs, r, dims) {
            return;
        }
        if gemv::applies(l, r, dims) {
            few_rows(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads);
        } else {
            widened(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads);
        }
    }
}

/// The bf16 product on `kernel` when the CPU runs it, else widened;
/// `bf16::gemm_into` passes the CPU's preference, the tests each kernel.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bf16_gemm(dst: &mut [bf16], dst_rs: usize, accumulate: bool, lhs: &[bf16], l: Mat, rhs: &[bf16], r: Mat, dims: Dims, threads: bool, kernel: Bf16Kernel) {
    if !prepare(dst, dst_rs, accumulate, lhs, l, rhs, r, dims) {
        return;
    }
    if gemv::applies(l, r, dims) {
        return few_rows(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads);
    }
    if kernel == Bf16Kernel::Widened || !kernel.available() {
        return widened(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads);
    }
    #[cfg(target_arch = "x86_64")]
    {
        let Dims { m, k, n } = dims;
        let bits = |buf: &[bf16], mat: Mat| bgemm::Operand16 {
            // SAFETY: prepare checked that the matrix lies inside the slice.
            ptr: unsafe { (buf.as_ptr() as *const u16).add(mat.offset) },
            rs: mat.rs,
            cs: mat.cs,
        };
        let (out, a, b, threads) = (dst.as_mut_ptr() as *mut u16, bits(lhs, l), bits(rhs, r), threads_for(dims, threads));
        // SAFETY: prepare returned true (m, n, k > 0, operands and destination in bounds);
        // dst is borrowed mutably, so the operands (shared borrows) cannot overlap it; the
        // CPU runs the kernel (checked above); bf16 and u16 share size and alignment.
        unsafe {
            if kernel == Bf16Kernel::Amx {
                bgemm::bgemm_amx(out, dst_rs, accumulate, a, b, m, k, n, threads);
            } else {
                bgemm::bgemm(out, dst_rs, accumulate, a, b, m, k, n, threads);
            }
        }
    }
}

/// The product through the f32 kernel, after [`prepare`] returned true.
#[allow(clippy::too_many_arguments)]
fn widened<T: HalfFloat>(dst: &mut [T], dst_rs: usize, accumulate: bool, lhs: &[T], l: Mat, rhs: &[T], r: Mat, dims: Dims, threads: bool) {
    let Dims { m, k, n } = dims;
    with_scratch(|[a, b, out]| {
        let (a, b, out) = (sized(a, m * k), sized(b, k * n), sized(out, m * n));
        let la = widen_matrix(a, lhs, l, m, k, threads);
        let lb = widen_matrix(b, rhs, r, k, n, threads);
        let rows_of = |len: usize| threads && m * n >= PAR_CONVERT && len > 1;
        if accumulate {
            each_row(out, n, rows_of(m), |i, row| T::widen_slice(&dst[i * dst_rs..i * dst_rs + n], row));
        }
        f32::gemm_into(out, n, accumulate, a, la, b, lb, dims, threads);
        // Rows of dst are dst_rs apart; each part rounds the n results of one.
        let covered = (m - 1) * dst_rs + n;
        each_row(&mut dst[..covered], dst_rs, rows_of(m), |i, row| T::narrow_slice(&out[i * n..(i + 1) * n], &mut row[..n]));
    });
}

/// Floats of B a thread of a few-row product widens at a time (256 KiB:
/// the slice stays in L2 while the rows of A pass over it).
const FEW_ROWS_SLICE: usize = 1 << 16;

/// A product of at most `gemv::MAX_ROWS` rows, after [`prepare`] returned
/// true and `gemv::applies` holds: B is widened a slice at a time by the
/// thread that multiplies it (rows of B when it is row-major, columns when
/// column-major), so it is read once in its half format and never written
/// whole as f32, which for a batch-1 Linear took longer than the product.
#[allow(clippy::too_many_arguments)]
fn few_rows<T: HalfFloat>(dst: &mut [T], dst_rs: usize, accumulate: bool, lhs: &[T], l: Mat, rhs: &[T], r: Mat, dims: Dims, threads: bool) {
    let Dims { m, k, n } = dims;
    let path = gemv::Path::best();
    let mut a = vec![0.0f32; m * k];
    let la = widen_matrix(&mut a, lhs, l, m, k, false);
    // The f32 sums, rounded once at the end.
    let mut out = vec![0.0f32; m * n];
    if accumulate {
        for (i, row) in out.chunks_mut(n).enumerate() {
            T::widen_slice(&dst[i * dst_rs..i * dst_rs + n], row);
        }
    }
    let parts = gemv::parts_for(n, threads_for(dims, threads));
    let (c, b) = (team::Shared(out.as_mut_ptr()), team::Shared(rhs.as_ptr().cast_mut()));
    let a_ptr = a.as_ptr() as usize;
    team::for_each_part(parts, |t| {
        let (c, b) = (&c, &b);
        let (s, e) = gemv::part_columns(n, parts, t);
        if s >= e {
            return;
        }
        let (w, a) = (e - s, a_ptr as *const f32);
        let at = |i: usize, j: usize| (r.offset as isize + i as isize * r.rs + j as isize * r.cs) as usize;
        let mut slice = Vec::<f32>::new();
        if r.cs == 1 {
            let rows = (FEW_ROWS_SLICE / w).max(1);
            for p0 in (0..k).step_by(rows) {
                let kb = rows.min(k - p0);
                slice.resize(kb * w, 0.0);
                for (q, line) in slice.chunks_mut(w).enumerate() {
                    // SAFETY: prepare checked that B's rows lie inside rhs.
                    let src = unsafe { std::slice::from_raw_parts(b.0.add(at(p0 + q, s)), w) };
                    T::widen_slice(src, line);
                }
                // SAFETY: A (m x k, la) and the widened kb x w slice are whole;
                // the part writes columns s..e of `out`, no other part does.
                unsafe {
                    let ap = a.offset(la.offset as isize + p0 as isize * la.cs);
                    gemv::gemv_part(path, c.0.add(s), n, true, (ap, la.rs, la.cs), (slice.as_ptr(), w as isize, 1), m, kb, w);
                }
            }
        } else {
            let cols = (FEW_ROWS_SLICE / k).max(1);
            for j0 in (s..e).step_by(cols) {
                let cb = cols.min(e - j0);
                slice.resize(cb * k, 0.0);
                for (q, line) in slice.chunks_mut(k).enumerate() {
                    // SAFETY: prepare checked that B's columns lie inside rhs.
                    let src = unsafe { std::slice::from_raw_parts(b.0.add(at(0, j0 + q)), k) };
                    T::widen_slice(src, line);
                }
                // SAFETY: as above, for columns j0 .. j0 + cb; A's rows are
                // contiguous (widened row-major, as `applies` needs A's
                // column stride 1 here).
                unsafe {
                    let ap = a.add(la.offset);
                    gemv::gemv_part(path, c.0.add(j0), n, true, (ap, la.rs, la.cs), (slice.as_ptr(), 1, k as isize), m, k, cb);
                }
            }
        }
    });
    for (i, row) in out.chunks(n).enumerate() {
        T::narrow_slice(row, &mut dst[i * dst_rs..i * dst_rs + n]);
    }
}

/// Widened copies up to this many floats stay with their thread for the
/// next product (a fresh buffer costs a page fault every 4 KiB: 16 MiB of
/// weights took 1.5 ms to widen into new memory, about what the product
/// of a batch of 64 rows with them takes).
const KEEP_FLOATS: usize = 1 << 22;

thread_local! {
    static SCRATCH: RefCell<[Vec<f32>; 3]> = const { RefCell::new([Vec::new(), Vec::new(), Vec::new()]) };
}

/// Run `f` with this thread's three widening buffers (fresh ones if it is
/// already inside a widened product).
fn with_scratch(f: impl FnOnce(&mut [Vec<f32>; 3])) {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffers) => {
            f(&mut buffers);
            for buffer in buffers.iter_mut().filter(|b| b.capacity() > KEEP_FLOATS) {
                *buffer = Vec::new();
            }
        }
        Err(_) => f(&mut [Vec::new(), Vec::new(), Vec::new()]),
    })
}

/// The first `len` floats of `buffer`, grown (with zeros) when it is
/// shorter; what an earlier product left there is overwritten before use.
fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}

/// `f(i, row)` for the `width`-element rows of `buf` (the last may be
/// shorter), on every thread when `threaded`.
fn each_row<T: Send>(buf: &mut [T], width: usize, threaded: bool, f: impl Fn(usize, &mut [T]) + Sync) {
    if threaded {
        team::for_each_chunk_mut(buf, width, f);
    } else {
        buf.chunks_mut(width.max(1)).enumerate().for_each(|(i, row)| f(i, row));
    }
}

/// The `rows x cols` matrix `mat` of `buf` as f32 in `out`, laid out as
/// the matrix is stored (rows contiguous stay rows, columns contiguous stay
/// columns, so a transposed view converts in long runs), gathered row by
/// row otherwise; returns its layout in `out`.
fn widen_matrix<T: HalfFloat>(out: &mut [f32], buf: &[T], mat: Mat, rows: usize, cols: usize, threads: bool) -> Mat {
    let threaded = threads && rows * cols >= PAR_CONVERT;
    let at = |i: usize, j: usize| (mat.offset as isize + i as isize * mat.rs + j as isize * mat.cs) as usize;
    if mat.cs == 1 {
        each_row(out, cols, threaded && rows > 1, |i, line| {
            let start = at(i, 0);
            T::widen_slice(&buf[start..start + cols], line);
        });
        Mat { offset: 0, rs: cols as isize, cs: 1 }
    } else if mat.rs == 1 {
        // Columns contiguous (a transposed view): converted column by column.
        each_row(out, rows, threaded && cols > 1, |j, line| {
            let start = at(0, j);
            T::widen_slice(&buf[start..start + rows], line);
        });
        Mat { offset: 0, rs: 1, cs: rows as isize }
    } else {
        each_row(out, cols, threaded && rows > 1, |i, line| line.iter_mut().enumerate().for_each(|(j, v)| *v = buf[at(i, j)].widen()));
        Mat { offset: 0, rs: cols as isize, cs: 1 }
    }
}

/// The two half floats: read as f32, and rounded back to nearest, ties to
/// even (NaN stays NaN, overflow gives infinity).
pub(crate) trait HalfFloat: Copy + Send + Sync {
    fn widen(self) -> f32;
    fn widen_slice(src: &[Self], dst: &mut [f32]);
    fn narrow_slice(src: &[f32], dst: &mut [Self]);
}

impl HalfFloat for bf16 {
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn widen_slice(src: &[Self], dst: &mut [f32]) {
        // bf16 is the high half of an f32: a shift, which the compiler vectorizes.
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits(u32::from(s.to_bits()) << 16);
        }
    }
    fn narrow_slice(src: &[f32], dst: &mut [Self]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = bf16::from_bits(round_to_bf16(s));
        }
    }
}

/// `value` rounded to the nearest bf16 (ties to even), as bits; a NaN stays
/// a (quiet) NaN. Branch-free, so a loop of it vectorizes.
#[inline(always)]
pub(crate) fn round_to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    let rounded = ((u64::from(bits) + 0x7FFF + u64::from((bits >> 16) & 1)) >> 16) as u16;
    if value.is_nan() {
        (bits >> 16) as u16 | 0x40
    } else {
        rounded
    }
}

impl HalfFloat for f16 {
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn widen_slice(src: &[Self], dst: &mut [f32]) {
        // F16C where the CPU has it (the half crate detects it).
        src.convert_to_f32_slice(dst);
    }
    fn narrow_slice(src: &[f32], dst: &mut [Self]) {
        dst.convert_from_f32_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding_matches_the_half_crate() {
        let specials = [0.0f32, -0.0, 1.0, -1.5, f32::MAX, f32::MIN, f32::MIN_POSITIVE, 1e-40, -1e-45, f32::INFINITY, f32::NEG_INFINITY, 3.389_531_4e38];
        let walk = (0..200_000u32).map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761)));
        for value in specials.into_iter().chain(walk) {
            let expected = bf16::from_f32(value);
            let got = bf16::from_bits(round_to_bf16(value));
            if value.is_nan() {
                assert!(got.is_nan(), "{value:e}");
            } else {
                assert_eq!(got.to_bits(), expected.to_bits(), "{value:e} ({:#x})", value.to_bits());
            }
        }
        // Ties go to even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7.
        assert_eq!(round_to_bf16(1.0 + 2f32.powi(-8)), bf16::ONE.to_bits());
        assert_eq!(round_to_bf16(1.0 + 3.0 * 2f32.powi(-8)), bf16::from_f32(1.0 + 2f32.powi(-6)).to_bits());
    }
}
