//! bf16 and f16 products against an f64 product of the same half-precision
//! inputs: each result within one rounding to the half format (plus f32
//! accumulation error) of the exact value, for every layout a view can give.
//! bf16 is checked every way: on AMX tiles and on the `vdpbf16ps` kernel
//! (where the CPU has them) and widened to f32, whichever this CPU prefers.

use half::{bf16, f16};

use crate::kernels::gemm::{Dims, GemmElement, Mat};
use crate::kernels::gemm_half::{bf16_gemm, Bf16Kernel};
use crate::kernels::test_forms::Form;

/// A product into `dst`: `(dst, dst_rs, accumulate, a, la, b, lb, dims, threads)`.
type Multiply<T> = fn(&mut [T], usize, bool, &[T], Mat, &[T], Mat, Dims, bool);

#[allow(clippy::too_many_arguments)]
fn amx(dst: &mut [bf16], rs: usize, acc: bool, a: &[bf16], la: Mat, b: &[bf16], lb: Mat, dims: Dims, threads: bool) {
    bf16_gemm(dst, rs, acc, a, la, b, lb, dims, threads, Bf16Kernel::Amx);
}

#[allow(clippy::too_many_arguments)]
fn native(dst: &mut [bf16], rs: usize, acc: bool, a: &[bf16], la: Mat, b: &[bf16], lb: Mat, dims: Dims, threads: bool) {
    bf16_gemm(dst, rs, acc, a, la, b, lb, dims, threads, Bf16Kernel::Vdpbf16);
}

#[allow(clippy::too_many_arguments)]
fn widened(dst: &mut [bf16], rs: usize, acc: bool, a: &[bf16], la: Mat, b: &[bf16], lb: Mat, dims: Dims, threads: bool) {
    bf16_gemm(dst, rs, acc, a, la, b, lb, dims, threads, Bf16Kernel::Widened);
}

/// Each kernel; one the CPU lacks widens instead (checked again, harmlessly).
const BF16_WAYS: [Multiply<bf16>; 3] = [amx, native, widened];

fn value(seed: usize) -> f64 {
    ((seed as f64 * 0.618_034).fract() - 0.5) * 4.0
}

/// A `rows x cols` matrix laid out as `form`, with the values each element reads.
fn matrix<T: Copy>(rows: usize, cols: usize, form: Form, seed: usize, make: impl Fn(f64) -> T) -> (Vec<T>, Mat) {
    let (len, mat) = form.layout(rows, cols);
    ((0..len).map(|i| make(value(seed + i))).collect(), mat)
}

fn read<T: Copy>(buf: &[T], mat: Mat, i: usize, j: usize) -> T {
    buf[(mat.offset as isize + i as isize * mat.rs + j as isize * mat.cs) as usize]
}

/// Check `T`'s product for one shape and pair of forms, against f64.
#[allow(clippy::too_many_arguments)]
fn check<T: Copy + Default>(multiply: Multiply<T>, m: usize, k: usize, n: usize, fa: Form, fb: Form, accumulate: bool, threads: bool, make: impl Fn(f64) -> T + Copy, back: impl Fn(T) -> f64, unit: f64) {
    let (a, la) = matrix(m, k, fa, 1, make);
    let (b, lb) = matrix(k, n, fb, 7919, make);
    let dst_rs = n + 5;
    let start: Vec<T> = (0..m * dst_rs).map(|i| make(value(31 + i) * 0.5)).collect();
    let mut dst = start.clone();
    multiply(&mut dst, dst_rs, accumulate, &a, la, &b, lb, Dims { m, k, n }, threads);
    for i in 0..m {
        for j in 0..n {
            let mut exact = if accumulate { back(start[i * dst_rs + j]) } else { 0.0 };
            let mut size = exact.abs();
            for p in 0..k {
                let term = back(read(&a, la, i, p)) * back(read(&b, lb, p, j));
                exact += term;
                size += term.abs();
            }
            let got = back(dst[i * dst_rs + j]);
            // One rounding to the half format, and f32 rounding along the sum.
            let bound = exact.abs() * unit + size * 1e-6 * (k as f64 + 2.0);
            assert!((got - exact).abs() <= bound, "{m}x{k}x{n} {fa:?} @ {fb:?} accumulate={accumulate}: ({i}, {j}) = {got}, expected {exact} within {bound}");
        }
        // Past the n columns of each row the destination is untouched.
        for j in n..dst_rs {
            assert_eq!(back(dst[i * dst_rs + j]), back(start[i * dst_rs + j]), "wrote past column {n} of row {i}");
        }
    }
}

const FORMS: [Form; 5] = [Form::RowMajor, Form::Transposed, Form::Sliced, Form::BroadcastRows, Form::Flipped];
const SHAPES: [(usize, usize, usize); 8] = [(1, 1, 1), (1, 7, 40), (12, 32, 32), (13, 33, 31), (25, 2, 65), (40, 129, 70), (97, 64, 129), (3, 300, 5)];

fn bf16_of(v: f64) -> bf16 {
    bf16::from_f64(v)
}

fn f16_of(v: f64) -> f16 {
    f16::from_f64(v)
}

#[test]
fn bf16_products_match_f64_for_every_layout() {
    for way in BF16_WAYS {
        for &(m, k, n) in &SHAPES {
            for fa in FORMS {
                for fb in FORMS {
                    check(way, m, k, n, fa, fb, false, true, bf16_of, |v| v.to_f64(), 2f64.powi(-8));
                }
            }
        }
    }
}

#[test]
fn bf16_products_accumulate_into_the_destination() {
    for way in BF16_WAYS {
        for &(m, k, n) in &SHAPES {
            check(way, m, k, n, Form::RowMajor, Form::Transposed, true, true, bf16_of, |v| v.to_f64(), 2f64.powi(-8));
            check(way, m, k, n, Form::Sliced, Form::RowMajor, true, false, bf16_of, |v| v.to_f64(), 2f64.powi(-8));
        }
    }
}

#[test]
fn bf16_products_large_enough_for_every_thread() {
    for way in BF16_WAYS {
        check(way, 300, 513, 260, Form::RowMajor, Form::RowMajor, false, true, bf16_of, |v| v.to_f64(), 2f64.powi(-8));
        check(way, 64, 1024, 96, Form::RowMajor, Form::Transposed, false, true, bf16_of, |v| v.to_f64(), 2f64.powi(-8));
    }
}

#[test]
fn f16_products_match_f64() {
    let way: Multiply<f16> = f16::gemm_into;
    for &(m, k, n) in &SHAPES {
        check(way, m, k, n, Form::RowMajor, Form::Flipped, false, true, f16_of, |v| v.to_f64(), 2f64.powi(-11));
        check(way, m, k, n, Form::Transposed, Form::Sliced, true, true, f16_of, |v| v.to_f64(), 2f64.powi(-11));
    }
    check(way, 200, 300, 150, Form::Transposed, Form::Transposed, false, true, f16_of, |v| v.to_f64(), 2f64.powi(-11));
}

#[test]
fn few_row_products_widen_b_slice_by_slice() {
    // Rows of B (row-major) or columns (transposed) in several widened
    // slices per thread, on two threads.
    for way in BF16_WAYS {
        check(way, 4, 1000, 300, Form::Sliced, Form::RowMajor, true, true, bf16_of, |v| v.to_f64(), 2f64.powi(-8));
        check(way, 3, 300, 701, Form::RowMajor, Form::Transposed, false, true, bf16_of, |v| v.to_f64(), 2f64.powi(-8));
    }
    let way: Multiply<f16> = f16::gemm_into;
    check(way, 1, 1000, 333, Form::RowMajor, Form::Sliced, false, true, f16_of, |v| v.to_f64(), 2f64.powi(-11));
    check(way, 2, 257, 600, Form::RowMajor, Form::Transposed, true, true, f16_of, |v| v.to_f64(), 2f64.powi(-11));
}

#[test]
fn bf16_specials_propagate() {
    // Infinity and NaN in an operand reach the products they touch, as in f32.
    let (m, k, n) = (2, 3, 2);
    let mut a = vec![bf16::ONE; m * k];
    a[0] = bf16::INFINITY;
    a[4] = bf16::NAN;
    let b = vec![bf16::ONE; k * n];
    let mut dst = vec![bf16::ZERO; m * n];
    let mat = |cols: usize| Mat { offset: 0, rs: cols as isize, cs: 1 };
    for way in BF16_WAYS {
        way(&mut dst, n, false, &a, mat(k), &b, mat(n), Dims { m, k, n }, false);
        assert!(dst[0].is_infinite() && dst[1].is_infinite());
        assert!(dst[2].is_nan() && dst[3].is_nan());
    }
}
