//! The AMX kernel called directly, on shapes that cut its 32 x 32 blocks
//! and 32-k steps at every edge, against an f64 product of the same bf16
//! inputs; skipped where the CPU or the OS has no AMX-BF16.

use half::bf16;

use super::{available, bgemm_amx, Operand16};
use crate::kernels::amx;
use crate::kernels::gemm::Mat;
use crate::kernels::gemm_half::Bf16Kernel;
use crate::kernels::test_forms::Form;

fn runs() -> bool {
    amx::bf16_available() && available()
}

fn value(seed: usize) -> f64 {
    ((seed as f64 * 0.754_877_7).fract() - 0.5) * 3.0
}

fn matrix(rows: usize, cols: usize, form: Form, seed: usize) -> (Vec<bf16>, Mat) {
    let (len, mat) = form.layout(rows, cols);
    ((0..len).map(|i| bf16::from_f64(value(seed + i))).collect(), mat)
}

fn at(buf: &[bf16], mat: Mat, i: usize, j: usize) -> f64 {
    buf[(mat.offset as isize + i as isize * mat.rs + j as isize * mat.cs) as usize].to_f64()
}

fn operand(buf: &[bf16], mat: Mat) -> Operand16 {
    Operand16 { ptr: buf[mat.offset..].as_ptr() as *const u16, rs: mat.rs, cs: mat.cs }
}

/// `bgemm_amx` on one shape and pair of layouts, each result within one bf16
/// rounding (plus f32 summation error) of the exact sum.
#[allow(clippy::too_many_arguments)]
fn check(m: usize, k: usize, n: usize, fa: Form, fb: Form, accumulate: bool, threads: usize) {
    let (a, la) = matrix(m, k, fa, 3);
    let (b, lb) = matrix(k, n, fb, 1009);
    let dst_rs = n + 3;
    let start: Vec<bf16> = (0..m * dst_rs).map(|i| bf16::from_f64(value(77 + i))).collect();
    let mut dst = start.clone();
    // SAFETY: runs() said the CPU and OS have AMX-BF16 and AVX-512 BF16; the operands'
    // layouts cover m x k and k x n inside their buffers; dst holds m rows of dst_rs.
    unsafe { bgemm_amx(dst.as_mut_ptr() as *mut u16, dst_rs, accumulate, operand(&a, la), operand(&b, lb), m, k, n, threads) };
    for i in 0..m {
        for j in 0..n {
            let mut exact = if accumulate { start[i * dst_rs + j].to_f64() } else { 0.0 };
            let mut size = exact.abs();
            for p in 0..k {
                let term = at(&a, la, i, p) * at(&b, lb, p, j);
                exact += term;
                size += term.abs();
            }
            let got = dst[i * dst_rs + j].to_f64();
            let bound = exact.abs() * 2f64.powi(-8) + size * 1e-6 * (k as f64 + 2.0);
            assert!((got - exact).abs() <= bound, "{m}x{k}x{n} {fa:?} @ {fb:?} accumulate={accumulate}: ({i}, {j}) = {got}, expected {exact} within {bound}");
        }
        for j in n..dst_rs {
            assert_eq!(dst[i * dst_rs + j].to_bits(), start[i * dst_rs + j].to_bits(), "wrote past column {n} of row {i}");
        }
    }
}

const EDGES: [usize; 7] = [1, 15, 16, 17, 32, 33, 100];

#[test]
fn amx_products_match_f64_at_every_edge() {
    if !runs() {
        return;
    }
    for &m in &EDGES {
        for &k in &EDGES {
            for &n in &EDGES {
                check(m, k, n, Form::RowMajor, Form::RowMajor, false, 1);
            }
        }
    }
}

#[test]
fn amx_products_read_every_layout() {
    if !runs() {
        return;
    }
    const FORMS: [Form; 5] = [Form::RowMajor, Form::Transposed, Form::Sliced, Form::BroadcastRows, Form::Flipped];
    for fa in FORMS {
        for fb in FORMS {
            check(33, 47, 35, fa, fb, false, 1);
            check(17, 64, 65, fa, fb, true, 2);
        }
    }
}

#[test]
fn amx_products_accumulate_into_the_destination() {
    if !runs() {
        return;
    }
    for &(m, k, n) in &[(1, 1, 1), (15, 33, 17), (100, 100, 100), (64, 31, 96)] {
        check(m, k, n, Form::RowMajor, Form::Transposed, true, 1);
        check(m, k, n, Form::Sliced, Form::RowMajor, true, 2);
    }
}

#[test]
fn amx_products_split_over_threads() {
    if !runs() {
        return;
    }
    // More 32 x 32 blocks than a part holds, in both directions, on every thread.
    check(300, 257, 290, Form::RowMajor, Form::RowMajor, false, rayon::current_num_threads().max(2));
    check(1, 300, 600, Form::RowMajor, Form::Transposed, true, 2);
    check(520, 40, 8, Form::Transposed, Form::RowMajor, false, 3);
}

#[test]
fn preferred_kernel_is_amx_where_the_cpu_has_it() {
    assert_eq!(Bf16Kernel::preferred() == Bf16Kernel::Amx, runs());
    assert!(Bf16Kernel::Widened.available());
}
