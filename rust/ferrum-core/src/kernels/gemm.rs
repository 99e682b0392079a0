//! Matrix multiply kernels. f32 runs on ferrum's own AVX-512 or AVX2/FMA
//! kernel ([`super::sgemm`]) where the CPU has one; other floats (and f32 elsewhere)
//! go to the `gemm` crate. Both take arbitrary strides, so transposed views
//! multiply without a copy. Int matmul is a plain cache-friendly loop.

use gemm::Parallelism;

use super::gemv;
use super::sgemm;
use super::team::{self, Shared};

/// Multiply-adds from which one GEMM call uses every core. Measured on Zen 5
/// with two cores, square products one thread against two: 64^3 (2^18)
/// took 3.4 us against 4.0 us, 96^3 8.5 us against 6.8 us. On a 2-vCPU
/// Xeon (AVX-512, one thread unpacked): 64^3 4.1-5.4 us against 4.3-5.4,
/// 80^3 and 96^3 within noise of each other, 112^3 and 128^3 faster on
/// two (17-21 us against 21-23, 23 against 30).
pub const PAR_GEMM_FLOPS: usize = 1 << 19;

pub use super::matrix::{Dims, Mat};

pub trait GemmElement: Copy + Send + Sync + 'static {
    /// `dst = (accumulate ? dst : 0) + lhs @ rhs` for an `m x n` `dst`
    /// whose rows start `dst_rs` elements apart.
    ///
    /// Panics if an operand reaches outside its slice or `dst` is too small:
    /// callers pass matrices described by valid layouts.
    #[allow(clippy::too_many_arguments)]
    fn gemm_into(dst: &mut [Self], dst_rs: usize, accumulate: bool, lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, threads: bool);

    /// `dst[m x n] = lhs[m x k] @ rhs[k x n]`, dst contiguous row-major.
    fn gemm(dst: &mut [Self], lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, threads: bool) {
        Self::gemm_into(dst, dims.n, false, lhs, l, rhs, r, dims, threads)
    }
}

/// Whether every element of a `rows x cols` matrix read through `mat` lies
/// inside a buffer of `len` elements (strides may be negative or zero).
pub(crate) fn fits(mat: Mat, rows: usize, cols: usize, len: usize) -> bool {
    if rows == 0 || cols == 0 {
        return true;
    }
    let reach = |d: usize, s: isize| (d as i128 - 1) * s as i128;
    let (r, c) = (reach(rows, mat.rs), reach(cols, mat.cs));
    let lo = mat.offset as i128 + r.min(0) + c.min(0);
    let hi = mat.offset as i128 + r.max(0) + c.max(0);
    lo >= 0 && hi < len as i128
}

/// Check the arguments of a GEMM and handle the cases without a product.
/// Returns whether a product remains to compute.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare<T: Copy + Default>(dst: &mut [T], dst_rs: usize, accumulate: bool, lhs: &[T], l: Mat, rhs: &[T], r: Mat, dims: Dims) -> bool {
    let Dims { m, k, n } = dims;
    if m == 0 || n == 0 {
        return false;
    }
    assert!(dst_rs >= n && (m - 1).checked_mul(dst_rs).and_then(|x| x.checked_add(n)).is_some_and(|end| end <= dst.len()), "gemm: destination too small");
    if k == 0 {
        if !accumulate {
            for row in 0..m {
                dst[row * dst_rs..row * dst_rs + n].fill(T::default());
            }
        }
        return false;
    }
    assert!(fits(l, m, k, lhs.len()) && fits(r, k, n, rhs.len()), "gemm: operand out of bounds");
    true
}

/// Threads for one product: all of rayon's above the size gate, else one.
pub(crate) fn threads_for(dims: Dims, threads: bool) -> usize {
    let Dims { m, k, n } = dims;
    if threads && m.saturating_mul(n).saturating_mul(k) >= PAR_GEMM_FLOPS {
        rayon::current_num_threads()
    } else {
        1
    }
}

/// Whether an f32 product runs on ferrum's `kernel` rather than the `gemm`
/// crate (which, built without its nightly feature, has no AVX-512 code).
///
/// AVX2 tile, measured on Zen 3 (criterion group `gemm_f32_1thread`): the
/// crate is faster on thin products (the convolutions' m = 16 or k = 16
/// GEMMs, 16x784x72: 26 us vs 44 us) and, on one thread, up to about 512^3
/// (256^3: 394 us vs 455 us); ferrum's kernel is faster for large products
/// (1024^3: 27 ms vs 34 ms on one thread) and splits better over threads.
///
/// AVX-512 tile, measured on Zen 5 on one thread: faster than the crate
/// from 64^3 up (64^3: 3.3 vs 4.8 us; 256^3: 157 vs 292 us; the 64x576x112
/// convolution band: 54 vs 76 us) and on short depths (72x16x784: 10 vs
/// 18 us; 256x10x512: 20 vs 29 us), slower on outputs narrower than its
/// 32-column tile (256x512x10: 49 vs 36 us; 16x784x72: 22 vs 17 us). At
/// 32 columns it is faster: attention's per-head 128x128x32 product ran
/// 256 heads at 270 GF/s against 205 on the crate.
///
/// Outputs of at most 16 columns from a column-major A (a classifier's
/// weight gradient) run on the AVX-512 narrow tile instead, unpacked: see
/// `sgemm::narrow_applies`.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
fn use_sgemm(kernel: sgemm::Kernel, dims: Dims, l: Mat, r: Mat, threads: usize) -> bool {
    let Dims { m, k, n } = dims;
    match kernel {
        #[cfg(target_arch = "x86_64")]
        sgemm::Kernel::Avx2 => m >= 64 && n >= 64 && k >= 64 && (threads > 1 || m * n * k >= SGEMM_ONE_THREAD_FLOPS),
        #[cfg(target_arch = "x86_64")]
        sgemm::Kernel::Avx512 => (m >= 64 && n >= kernel.columns() && k >= 8) || sgemm::narrow_applies((l.rs, l.cs), (r.rs, r.cs), m, k, n),
    }
}

/// Multiply-adds from which a single-thread f32 product runs on ferrum's
/// AVX2 kernel.
#[cfg(target_arch = "x86_64")]
const SGEMM_ONE_THREAD_FLOPS: usize = 1 << 27;

/// The `gemm` crate's product, after [`prepare`] has checked the arguments.
/// On several threads the longer side of the output is split into one part
/// per thread, each a one-thread call run on the [`team`]: the crate's own
/// threading goes through rayon, whose park/wake per call made a threaded
/// 256x512x10 product after a short pause 4x slower than one thread.
///
/// # Safety
/// [`prepare`] returned true for these arguments.
#[allow(clippy::too_many_arguments)]
unsafe fn crate_gemm<T: Copy + Send + Sync + 'static>(dst: &mut [T], dst_rs: usize, accumulate: bool, lhs: &[T], l: Mat, rhs: &[T], r: Mat, dims: Dims, threads: usize, one: T) {
    let Dims { m, k, n } = dims;
    let by_cols = n >= m;
    let len = if by_cols { n } else { m };
    let parts = threads.clamp(1, len);
    let (d, a, b) = (Shared(dst.as_mut_ptr()), Shared(lhs.as_ptr().cast_mut()), Shared(rhs.as_ptr().cast_mut()));
    let (a_off, b_off) = (l.offset as isize, r.offset as isize);
    team::for_each_part(parts, |t| {
        let (d, a, b) = (&d, &a, &b);
        let (s, e) = (len * t / parts, len * (t + 1) / parts);
        // Part t: output columns (or rows) s..e, from the matching columns
        // of rhs (or rows of lhs).
        let (rows, cols) = if by_cols { (m, e - s) } else { (e - s, n) };
        let (d_at, a_at, b_at) = if by_cols { (s as isize, a_off, b_off + s as isize * r.cs) } else { ((s * dst_rs) as isize, a_off + s as isize * l.rs, b_off) };
        // SAFETY: prepare checked that every element read or written is
        // inside its slice; dst is borrowed mutably for the whole loop and
        // parts write disjoint columns (or rows) of it; lhs and rhs are only read.
        unsafe {
            gemm::gemm(rows, cols, k, d.0.offset(d_at), 1, dst_rs as isize, accumulate, a.0.offset(a_at), l.cs, l.rs, b.0.offset(b_at), r.cs, r.rs, one, one, false, false, false, Parallelism::None);
        }
    });
}

impl GemmElement for f32 {
    fn gemm_into(dst: &mut [Self], dst_rs: usize, accumulate: bool, lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, threads: bool) {
        f32_gemm(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads, None);
    }
}

/// An f32 product on ferrum's kernel or the `gemm` crate, as the size gate
/// says; `forced` takes that kernel of ferrum's whatever the gate says (for
/// its tests), where the CPU runs it.
#[allow(clippy::too_many_arguments)]
fn f32_gemm(dst: &mut [f32], dst_rs: usize, accumulate: bool, lhs: &[f32], l: Mat, rhs: &[f32], r: Mat, dims: Dims, threads: bool, forced: Option<sgemm::Kernel>) {
    if !prepare(dst, dst_rs, accumulate, lhs, l, rhs, r, dims) {
        return;
    }
    let threads = threads_for(dims, threads);
    if forced.is_none() && gemv::applies(l, r, dims) {
        // SAFETY: prepare returned true; applies holds; best() is a path the CPU runs.
        return unsafe { gemv::gemv(gemv::Path::best(), dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads) };
    }
    let kernel = match forced {
        Some(kernel) => Some(kernel).filter(|k| k.supported()),
        None => sgemm::Kernel::best().filter(|&k| use_sgemm(k, dims, l, r, threads)),
    };
    // SAFETY: prepare returned true; the kernel is one the CPU runs.
    unsafe {
        match kernel {
            Some(kernel) => run_sgemm(kernel, dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads),
            None => crate_gemm(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads, 1.0),
        }
    }
}

/// ferrum's f32 kernel, after [`prepare`] has checked the arguments.
///
/// # Safety
/// [`prepare`] returned true for these arguments; the CPU runs `kernel`.
#[allow(clippy::too_many_arguments)]
unsafe fn run_sgemm(kernel: sgemm::Kernel, dst: &mut [f32], dst_rs: usize, accumulate: bool, lhs: &[f32], l: Mat, rhs: &[f32], r: Mat, dims: Dims, threads: usize) {
    let Dims { m, k, n } = dims;
    // SAFETY: prepare checked that every element of both operands and the
    // m x n destination lies inside its slice, so the offsets are in bounds;
    // dst is borrowed mutably, so nothing else touches it; k > 0.
    unsafe {
        let a = sgemm::Operand { ptr: lhs.as_ptr().add(l.offset), rs: l.rs, cs: l.cs };
        let b = sgemm::Operand { ptr: rhs.as_ptr().add(r.offset), rs: r.rs, cs: r.cs };
        sgemm::sgemm(kernel, dst.as_mut_ptr(), dst_rs, accumulate, a, b, m, k, n, threads);
    }
}

/// `f32::gemm_into` forced onto `kernel` whatever the size gate says (on
/// the `gemm` crate when the CPU does not run it), for its tests.
#[cfg(all(test, target_arch = "x86_64"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sgemm_into(kernel: sgemm::Kernel, dst: &mut [f32], dst_rs: usize, accumulate: bool, lhs: &[f32], l: Mat, rhs: &[f32], r: Mat, dims: Dims, threads: bool) {
    f32_gemm(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads, Some(kernel));
}

impl GemmElement for f64 {
    fn gemm_into(dst: &mut [Self], dst_rs: usize, accumulate: bool, lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, threads: bool) {
        if prepare(dst, dst_rs, accumulate, lhs, l, rhs, r, dims) {
            // SAFETY: prepare returned true.
            unsafe { crate_gemm(dst, dst_rs, accumulate, lhs, l, rhs, r, dims, threads_for(dims, threads), 1.0) };
        }
    }
}

impl GemmElement for i64 {
    fn gemm_into(dst: &mut [Self], dst_rs: usize, accumulate: bool, lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, _threads: bool) {
        if !prepare(dst, dst_rs, accumulate, lhs, l, rhs, r, dims) {
            return;
        }
        let Dims { m, k, n } = dims;
        let at = |buf: &[i64], mat: Mat, i: usize, j: usize| buf[(mat.offset as isize + i as isize * mat.rs + j as isize * mat.cs) as usize];
        for i in 0..m {
            let row = &mut dst[i * dst_rs..i * dst_rs + n];
            if !accumulate {
                row.iter_mut().for_each(|v| *v = 0);
            }
            for p in 0..k {
                let a = at(lhs, l, i, p);
                if a == 0 {
                    continue;
                }
                for (j, v) in row.iter_mut().enumerate() {
                    *v = v.wrapping_add(a.wrapping_mul(at(rhs, r, p, j)));
                }
            }
        }
    }
}
