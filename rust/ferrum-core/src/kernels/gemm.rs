//! Matrix multiply kernels. Float GEMM goes to the `gemm` crate, which picks
//! AVX2/AVX-512 code at run time and takes arbitrary strides, so transposed
//! views multiply without a copy. Int matmul is a plain cache-friendly loop.

use gemm::Parallelism;

/// Multiply-adds above which one GEMM call uses every core.
const PAR_GEMM_FLOPS: usize = 1 << 18;

/// One matrix: base pointer offset into its buffer and (row, col) strides.
#[derive(Clone, Copy, Debug)]
pub struct Mat {
    pub offset: usize,
    pub rs: isize,
    pub cs: isize,
}

/// Matrix sizes of one product: `[m x k] @ [k x n]`.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

pub trait GemmElement: Copy + Send + Sync + 'static {
    /// `dst[m x n] = lhs[m x k] @ rhs[k x n]`, dst contiguous row-major.
    fn gemm(dst: &mut [Self], lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, threads: bool);
}

macro_rules! float_gemm {
    ($t:ty) => {
        impl GemmElement for $t {
            fn gemm(dst: &mut [Self], lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, threads: bool) {
                let Dims { m, k, n } = dims;
                if m == 0 || n == 0 {
                    return;
                }
                if k == 0 {
                    dst.iter_mut().for_each(|v| *v = 0.0);
                    return;
                }
                let par = if threads && m * n * k >= PAR_GEMM_FLOPS && rayon::current_num_threads() > 1 {
                    Parallelism::Rayon(0)
                } else {
                    Parallelism::None
                };
                assert!(dst.len() >= m * n);
                // SAFETY: the offsets and strides come from layouts that the
                // engine keeps inside their buffers, for m x k and k x n
                // matrices; dst holds m * n contiguous elements.
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        dst.as_mut_ptr(),
                        1,
                        n as isize,
                        false,
                        lhs.as_ptr().add(l.offset),
                        l.cs,
                        l.rs,
                        rhs.as_ptr().add(r.offset),
                        r.cs,
                        r.rs,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        par,
                    );
                }
            }
        }
    };
}

float_gemm!(f32);
float_gemm!(f64);

impl GemmElement for i64 {
    fn gemm(dst: &mut [Self], lhs: &[Self], l: Mat, rhs: &[Self], r: Mat, dims: Dims, _threads: bool) {
        let Dims { m, k, n } = dims;
        let at = |buf: &[i64], mat: Mat, i: usize, j: usize| buf[(mat.offset as isize + i as isize * mat.rs + j as isize * mat.cs) as usize];
        for i in 0..m {
            let row = &mut dst[i * n..(i + 1) * n];
            row.iter_mut().for_each(|v| *v = 0);
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
