//! The f32 GEMM against a naive f64-accumulating product, called through
//! `gemm::sgemm_into`: `f32::gemm_into`'s argument checks without its size
//! gate, so small shapes reach these kernels too. Every kernel the CPU runs
//! is checked (both tiles on an AVX-512 machine).

use super::avx2::Avx2;
use super::avx512::Avx512;
use super::tile::Tile;
use super::small;
use super::{Kernel, Operand};
use crate::kernels::gemm::{sgemm_into, Dims, GemmElement, Mat};
use crate::kernels::test_forms::Form;

/// A matrix stored in a buffer of its own with arbitrary strides.
struct Strided {
    buf: Vec<f32>,
    mat: Mat,
}

impl Strided {
    fn get(&self, i: usize, j: usize) -> f32 {
        self.buf[(self.mat.offset as isize + i as isize * self.mat.rs + j as isize * self.mat.cs) as usize]
    }
}

fn value(seed: usize) -> f32 {
    ((seed as f32 * 0.618_034).fract() - 0.5) * 2.0
}

fn make(rows: usize, cols: usize, form: Form, seed: usize) -> Strided {
    let (len, mat) = form.layout(rows, cols);
    Strided { buf: (0..len).map(|i| value(i * 7 + seed)).collect(), mat }
}

/// Runs `dst = (acc ? dst : 0) + a @ b` with destination row stride `dst_rs`
/// and checks it against the f64 reference, and that the padding between
/// rows is untouched.
fn check(a: &Strided, b: &Strided, dims: Dims, dst_rs: usize, accumulate: bool, threads: bool) {
    for kernel in kernels() {
        let entry = |d: &mut [f32], rs, acc, l: &[f32], lm, r: &[f32], rm, dims, t| sgemm_into(kernel, d, rs, acc, l, lm, r, rm, dims, t);
        check_entry(&format!("{kernel:?}"), &entry, a, b, dims, dst_rs, accumulate, threads);
    }
}

/// The kernels this CPU runs; where it runs none, the AVX2 one, which
/// `sgemm_into` then hands to the `gemm` crate.
fn kernels() -> Vec<Kernel> {
    let supported: Vec<Kernel> = [Kernel::Avx2, Kernel::Avx512].into_iter().filter(|k| k.supported()).collect();
    if supported.is_empty() {
        vec![Kernel::Avx2]
    } else {
        supported
    }
}

type Entry<'a> = &'a dyn Fn(&mut [f32], usize, bool, &[f32], Mat, &[f32], Mat, Dims, bool);

/// [`check`] through `entry` (named `what` in failures): one of ferrum's
/// kernels, or the gated `f32::gemm_into`.
#[allow(clippy::too_many_arguments)]
fn check_entry(what: &str, entry: Entry<'_>, a: &Strided, b: &Strided, dims: Dims, dst_rs: usize, accumulate: bool, threads: bool) {
    let Dims { m, k, n } = dims;
    let len = if m == 0 { 0 } else { (m - 1) * dst_rs + n };
    let init: Vec<f32> = (0..len).map(|i| value(i + 11)).collect();
    let mut dst = init.clone();
    entry(&mut dst, dst_rs, accumulate, &a.buf, a.mat, &b.buf, b.mat, dims, threads);
    for i in 0..m {
        for j in 0..dst_rs.min(len - i * dst_rs) {
            let at = i * dst_rs + j;
            if j >= n {
                assert_eq!(dst[at], init[at], "{what}: padding ({i}, {j}) changed");
                continue;
            }
            let mut want = if accumulate { init[at] as f64 } else { 0.0 };
            let mut scale = want.abs();
            for p in 0..k {
                let t = a.get(i, p) as f64 * b.get(p, j) as f64;
                want += t;
                scale += t.abs();
            }
            let err = (dst[at] as f64 - want).abs();
            assert!(err <= 1e-5 * scale + 1e-6, "{what} {dims:?} dst_rs={dst_rs} acc={accumulate} ({i}, {j}): got {} want {want}", dst[at]);
        }
    }
}

fn plain(m: usize, k: usize, n: usize, fa: Form, fb: Form, acc: bool, threads: bool) {
    let (a, b) = (make(m, k, fa, 1), make(k, n, fb, 2));
    check(&a, &b, Dims { m, k, n }, n, acc, threads);
}

#[test]
fn every_edge_of_the_register_tile() {
    let sizes = [1, 2, 5, 6, 7, 11, 12, 13, 15, 16, 17, 23, 31, 32, 33, 47, 48, 49, 64, 70];
    for &m in &sizes {
        for &n in &sizes {
            for k in [1, 2, 7, 16, 37] {
                // Row-major operands take the unpacked path on AVX-512; a
                // transposed A takes the packed tiles' edges there too.
                plain(m, k, n, Form::RowMajor, Form::RowMajor, false, false);
                plain(m, k, n, Form::Transposed, Form::RowMajor, false, false);
            }
        }
    }
}

/// Runs `product(dst, a, b)` for the m x k and k x n views `lm` of `l` and
/// `rm` of `r`, into a copy of `d` followed by 64 NaNs that must stay NaN
/// (the unpacked kernels' last columns are masked stores), then copies the
/// output back into `d`. `dst` holds `d`'s m x n output with its row stride.
fn unpacked_entry(d: &mut [f32], l: &[f32], lm: Mat, r: &[f32], rm: Mat, dims: Dims, product: impl FnOnce(*mut f32, Operand, Operand)) {
    let mut padded = d.to_vec();
    padded.extend([f32::NAN; 64]);
    // SAFETY: the offsets are those of views inside their buffers.
    let (a, b) = unsafe {
        (Operand { ptr: l.as_ptr().add(lm.offset), rs: lm.rs, cs: lm.cs }, Operand { ptr: r.as_ptr().add(rm.offset), rs: rm.rs, cs: rm.cs })
    };
    product(padded.as_mut_ptr(), a, b);
    assert!(padded[d.len()..].iter().all(|x| x.is_nan()), "{dims:?}: written past the output");
    d.copy_from_slice(&padded[..d.len()]);
}

/// The transpose of `s`, as a view of the same buffer.
fn transposed(s: Strided) -> Strided {
    let Mat { offset, rs, cs } = s.mat;
    Strided { buf: s.buf, mat: Mat { offset, rs: cs, cs: rs } }
}

#[test]
fn narrow_products_unpacked() {
    // The narrow tile entered directly: outputs of 1 to 16 columns, A
    // column-major (the weight gradient's A^T, alone and as a view into a
    // wider matrix), row counts that cut the 24-row tile and the threaded
    // parts anywhere, on one thread and split over two; nothing past the
    // output's last element may be written.
    if !Kernel::Avx512.supported() {
        return;
    }
    let entry = |d: &mut [f32], rs: usize, acc: bool, l: &[f32], lm: Mat, r: &[f32], rm: Mat, dims: Dims, threaded: bool| {
        let Dims { m, k, n } = dims;
        assert!(small::narrow_applies((lm.rs, lm.cs), (rm.rs, rm.cs), m.max(16), k, n), "{dims:?} is not a narrow product");
        unpacked_entry(d, l, lm, r, rm, dims, |dst, a, b| {
            // SAFETY: as `unpacked_entry` vouches, and the gate holds.
            unsafe { small::narrow(dst, rs, acc, a, b, m, k, n, if threaded { 2 } else { 1 }) }
        });
    };
    for m in [1, 3, 5, 9, 23, 24, 25, 97, 200] {
        for n in [1, 2, 10, 15, 16] {
            for (k, fb) in [(1, Form::RowMajor), (7, Form::Sliced), (64, Form::RowMajor), (300, Form::Sliced)] {
                // A^T of a sliced k x m matrix: a column-major view with gaps.
                let a = if k == 64 { transposed(make(k, m, Form::Sliced, 11)) } else { make(m, k, Form::Transposed, 11) };
                let b = make(k, n, fb, 12);
                for (dst_rs, acc, threaded) in [(n, false, false), (n + 3, true, true), (n, false, true)] {
                    check_entry("narrow", &entry, &a, &b, Dims { m, k, n }, dst_rs, acc, threaded);
                }
            }
        }
    }
    // The gate: A column-major, B row-major (or a row view) with at most 16
    // columns, and 16 rows or more (the kernel itself takes any, as above).
    assert!(small::narrow_applies((1, 512), (10, 1), 512, 256, 10) && small::narrow_applies((1, 600), (16, 1), 16, 256, 16));
    assert!(!small::narrow_applies((512, 1), (10, 1), 256, 512, 10), "A row-major");
    assert!(!small::narrow_applies((1, 512), (1, 512), 512, 256, 10), "B column-major");
    assert!(!small::narrow_applies((1, 512), (17, 1), 512, 256, 17), "17 columns");
    assert!(!small::narrow_applies((1, -512), (10, 1), 512, 256, 10), "A walked backwards");
    assert!(!small::narrow_applies((1, 512), (10, 1), 8, 256, 10), "8 rows");
}

#[test]
fn small_products_unpacked() {
    // The unpacked path entered directly, on shapes that cut its register
    // tile at every row count and its masked columns at every width class,
    // with operands that are views into wider matrices; nothing past the
    // output's last element may be written (the last columns are masked
    // stores).
    if !Kernel::Avx512.supported() {
        return;
    }
    let entry = |d: &mut [f32], rs: usize, acc: bool, l: &[f32], lm: Mat, r: &[f32], rm: Mat, dims: Dims, _: bool| {
        let Dims { m, k, n } = dims;
        unpacked_entry(d, l, lm, r, rm, dims, |dst, a, b| {
            assert!(small::applies(a, b, m, k, n), "{dims:?} is not a small row-major product");
            // SAFETY: as `unpacked_entry` vouches, and the gate holds.
            unsafe { small::sgemm(dst, rs, acc, a, b, m, k, n) }
        });
    };
    for m in [1, 5, 11, 12, 13, 24, 25, 64, 70] {
        for n in [1, 5, 15, 16, 17, 31, 32, 33, 48, 64, 70] {
            for (k, fa, fb) in [(1, Form::RowMajor, Form::RowMajor), (7, Form::Sliced, Form::RowMajor), (64, Form::RowMajor, Form::Sliced), (300, Form::Sliced, Form::Sliced)] {
                let (a, b) = (make(m, k, fa, 9), make(k, n, fb, 10));
                for (dst_rs, acc) in [(n, false), (n + 3, true)] {
                    check_entry("unpacked", &entry, &a, &b, Dims { m, k, n }, dst_rs, acc, false);
                }
            }
        }
    }
}

#[test]
fn depth_across_several_k_blocks() {
    // Around each tile's depth block and across several of them.
    for kc in [Avx2::KC, Avx512::KC] {
        for k in [kc - 1, kc, kc + 1, kc + 44, 2 * kc + 1, 4 * kc - 3] {
            plain(13, k, 21, Form::RowMajor, Form::RowMajor, false, false);
            plain(13, k, 21, Form::RowMajor, Form::RowMajor, true, false);
        }
    }
}

#[test]
fn large_products_on_threads() {
    plain(300, 257, 129, Form::RowMajor, Form::RowMajor, false, true);
    plain(129, 257, 300, Form::RowMajor, Form::RowMajor, true, true);
    // Wider than one column block of B, and taller than one row block of A.
    plain(160, 40, 3100, Form::RowMajor, Form::RowMajor, false, true);
    // More threads than micro-tiles along the split dimension.
    plain(2, 9000, 20, Form::RowMajor, Form::RowMajor, false, true);
    plain(20, 9000, 2, Form::Transposed, Form::Transposed, true, true);
    // Several depth blocks per part, added in order; with several column
    // blocks too.
    plain(200, 1700, 150, Form::RowMajor, Form::Transposed, true, true);
    plain(50, 850, 3200, Form::Transposed, Form::RowMajor, false, true);
    // Tall: split by rows.
    plain(700, 300, 90, Form::RowMajor, Form::RowMajor, true, true);
    plain(1000, 40, 70, Form::Transposed, Form::Sliced, false, true);
    // Past the sharing gate (2^26 multiply-adds), in one span per thread:
    // split by rows, each span packing its own blocks of B; and narrow
    // (under 8 tiles per thread), the spans sharing the packed blocks of A.
    plain(1100, 300, 210, Form::RowMajor, Form::Sliced, false, true);
    plain(150, 2300, 200, Form::Transposed, Form::RowMajor, true, true);
    // Past the gate split by columns, each span's last step open to the
    // other threads: one depth block, and several added in order.
    plain(400, 300, 600, Form::RowMajor, Form::RowMajor, false, true);
    plain(300, 1700, 600, Form::Transposed, Form::RowMajor, true, true);
}

#[test]
fn more_threads_than_cores() {
    // Parts of preempted threads are waited for, not skipped or run twice.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(5).build().expect("a thread pool");
    pool.install(|| {
        plain(300, 800, 200, Form::RowMajor, Form::RowMajor, true, true);
        plain(97, 530, 61, Form::Sliced, Form::Flipped, false, true);
        plain(1500, 300, 40, Form::RowMajor, Form::Transposed, true, true);
        // Spans past the sharing gate, own and shared.
        plain(1100, 300, 210, Form::RowMajor, Form::RowMajor, false, true);
        plain(150, 2300, 200, Form::RowMajor, Form::RowMajor, true, true);
        plain(300, 1700, 1200, Form::RowMajor, Form::Transposed, true, true);
    });
}

#[test]
fn a_thread_repacks_the_operand_it_keeps_for_each_product() {
    // Below the sharing gate each thread packs the operand every part reads
    // once and keeps it for the parts it runs; the next product of the same
    // shape, with other values, must not find it packed. Many threads make
    // each of them run several parts, and slower ones run parts of the
    // first product after others started on the second.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(6).build().expect("a thread pool");
    pool.install(|| {
        for (m, k, n) in [(150, 1000, 400), (400, 1000, 150), (64, 784, 512)] {
            for seed in 0..3 {
                let (a, b) = (make(m, k, Form::RowMajor, 10 * seed + 1), make(k, n, Form::Transposed, 10 * seed + 2));
                check(&a, &b, Dims { m, k, n }, n, seed % 2 == 1, true);
            }
        }
    });
}

#[test]
fn strided_operands() {
    let forms = [Form::RowMajor, Form::Transposed, Form::Sliced, Form::BroadcastRows, Form::Flipped];
    for fa in forms {
        for fb in forms {
            for (m, k, n) in [(1, 1, 1), (7, 5, 17), (19, 33, 40), (64, 260, 50)] {
                plain(m, k, n, fa, fb, false, false);
                plain(m, k, n, fa, fb, true, true);
            }
        }
    }
}

#[test]
fn destination_row_stride_and_accumulate() {
    for (m, k, n) in [(1, 3, 1), (6, 16, 16), (7, 9, 18), (40, 70, 33)] {
        for dst_rs in [n, n + 1, n + 13] {
            for acc in [false, true] {
                let (a, b) = (make(m, k, Form::RowMajor, 3), make(k, n, Form::Transposed, 4));
                check(&a, &b, Dims { m, k, n }, dst_rs, acc, false);
            }
        }
    }
}

#[test]
fn empty_dimensions() {
    for acc in [false, true] {
        // k = 0: the product is zero; dst is cleared or kept.
        plain(5, 0, 7, Form::RowMajor, Form::RowMajor, acc, true);
        plain(0, 4, 7, Form::RowMajor, Form::RowMajor, acc, true);
        plain(5, 4, 0, Form::RowMajor, Form::RowMajor, acc, true);
    }
}

#[test]
#[should_panic(expected = "operand out of bounds")]
fn operand_outside_its_buffer_is_refused() {
    let a = make(4, 4, Form::RowMajor, 1);
    let b = make(4, 4, Form::RowMajor, 2);
    let mut dst = vec![0.0; 20];
    sgemm_into(kernels()[0], &mut dst, 4, false, &a.buf, a.mat, &b.buf, b.mat, Dims { m: 5, k: 4, n: 4 }, false);
}

#[test]
fn gated_entry_point_matches_on_both_sides_of_the_gate() {
    for (m, k, n) in [(16, 72, 100), (64, 64, 64), (130, 70, 90)] {
        let (a, b) = (make(m, k, Form::Transposed, 5), make(k, n, Form::RowMajor, 6));
        let (mut gated, mut forced) = (vec![0.0; m * n], vec![0.0; m * n]);
        for (threads, kernel) in [false, true].into_iter().flat_map(|t| kernels().into_iter().map(move |k| (t, k))) {
            f32::gemm_into(&mut gated, n, false, &a.buf, a.mat, &b.buf, b.mat, Dims { m, k, n }, threads);
            sgemm_into(kernel, &mut forced, n, false, &a.buf, a.mat, &b.buf, b.mat, Dims { m, k, n }, threads);
            assert!(gated.iter().zip(&forced).all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + y.abs())), "{kernel:?} {m}x{k}x{n}");
        }
    }
}

#[test]
fn thin_products_split_over_threads_on_the_gemm_crate() {
    // Thin products (a side under 64) go to the gemm crate, split into one
    // one-thread call per thread: by columns when wide, by rows when tall.
    let cases = [(300, 200, 10, Form::RowMajor, Form::RowMajor), (10, 200, 300, Form::Transposed, Form::Sliced), (256, 10, 512, Form::Flipped, Form::Transposed), (517, 200, 3, Form::Sliced, Form::BroadcastRows)];
    let run = || {
        for (m, k, n, fa, fb) in cases {
            let (a, b) = (make(m, k, fa, 7), make(k, n, fb, 8));
            for (dst_rs, acc) in [(n, false), (n + 5, true)] {
                check_entry("gemm crate", &<f32 as GemmElement>::gemm_into, &a, &b, Dims { m, k, n }, dst_rs, acc, true);
            }
        }
    };
    run();
    // From inside a rayon pool the parts run on rayon instead of the team.
    rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a thread pool").install(run);
}

#[test]
fn parts_let_a_late_thread_leave_its_share_to_others() {
    use super::driver::split_parts;
    // (micro-tiles along the split dimension, threads) -> parts: several per
    // thread when there is room, never a part under two tiles unless there
    // are fewer tiles than threads, at least one per thread otherwise.
    let cases = [
        // 1024 columns of 32-wide tiles on 2 threads: 4 parts of 8 tiles.
        ((32, 2), 4),
        // 512 columns: 4 parts of 4 tiles; 256: 4 parts of 2.
        ((16, 2), 4),
        ((8, 2), 4),
        // 6 tiles: 2 parts of 3, not 3 parts of 2 (a thread would run two).
        ((6, 2), 2),
        // 64 columns on 2 threads: one part per thread.
        ((2, 2), 2),
        ((1, 2), 1),
        // A simulated 16-core pool: 32 parts for 2048 columns and up, one
        // part per thread when the tiles are few, all tiles when they are
        // fewer still.
        ((64, 16), 32),
        ((1024, 16), 32),
        ((40, 16), 16),
        ((20, 16), 16),
        ((9, 16), 9),
        ((0, 16), 0),
    ];
    for ((tiles, threads), parts) in cases {
        assert_eq!(split_parts(tiles, threads), parts, "{tiles} tiles on {threads} threads");
    }
    for threads in 1..=16 {
        for tiles in 0..300 {
            let parts = split_parts(tiles, threads);
            assert!(parts <= tiles && parts <= 2 * threads, "{tiles} tiles, {threads} threads: {parts} parts");
            assert!(parts >= threads.min(tiles), "{tiles} tiles, {threads} threads: {parts} parts leaves a thread idle");
            assert!(parts < threads || parts.is_multiple_of(threads), "{tiles} tiles, {threads} threads: {parts} parts are uneven");
            // Parts of whole tiles that cover the tiles exactly, as the
            // driver cuts them.
            let covered: usize = (0..parts).map(|t| tiles * (t + 1) / parts - tiles * t / parts).sum();
            assert_eq!(covered, tiles);
        }
    }
}

#[test]
fn spans_give_each_thread_one_share_and_a_late_threads_share_to_the_others() {
    use super::driver::Spans;
    // Threads that all start on time: one equal span each.
    let spans = Spans::new(64, 2);
    assert_eq!(spans.claim(true), Some((0, 32)));
    assert_eq!(spans.claim(true), Some((32, 64)));
    assert_eq!(spans.claim(false), None);
    // A thread that finishes while the other has not started takes half of
    // what is left, and the late one still finds the rest.
    let spans = Spans::new(64, 2);
    assert_eq!(spans.claim(true), Some((0, 32)));
    assert_eq!(spans.claim(false), Some((32, 48)));
    assert_eq!(spans.claim(true), Some((48, 64)));
    assert_eq!(spans.claim(false), None);
    // A later claim is never a span under two tiles while there are two
    // left.
    let spans = Spans::new(5, 2);
    assert_eq!(spans.claim(true), Some((0, 3)));
    assert_eq!(spans.claim(false), Some((3, 5)));
    // Simulated pools up to 16 threads, with threads starting late: one
    // claim per thread per turn, the `late` last threads joining on turn 3;
    // the spans cover the tiles exactly, in order, and on-time threads
    // each get a full share.
    for threads in 1..=16 {
        for tiles in [0, 1, 2, 7, 31, 64, 1000] {
            for late in 0..threads {
                let spans = Spans::new(tiles, threads);
                let share = tiles.div_ceil(threads);
                let mut claimed = Vec::new();
                let mut first = vec![true; threads];
                let mut turn = 0;
                loop {
                    let mut any = false;
                    for (t, first) in first.iter_mut().enumerate() {
                        // Threads `threads - late ..` join on turn 3.
                        if t >= threads - late && turn < 3 {
                            continue;
                        }
                        if let Some((s, e)) = spans.claim(*first) {
                            if *first && turn == 0 {
                                assert_eq!(e - s, share.min(tiles - s), "{tiles} tiles, {threads} threads: an on-time share");
                            }
                            assert!(*first || e - s >= 2.min(tiles - s), "{tiles} tiles, {threads} threads: a sliver {s}..{e}");
                            *first = false;
                            claimed.push((s, e));
                            any = true;
                        }
                    }
                    turn += 1;
                    if !any && turn > 3 {
                        break;
                    }
                }
                let mut end = 0;
                for &(s, e) in &claimed {
                    assert!(s == end && e > s, "{tiles} tiles, {threads} threads, {late} late: spans {claimed:?}");
                    end = e;
                }
                assert_eq!(end, tiles, "{tiles} tiles, {threads} threads, {late} late: spans {claimed:?}");
            }
        }
    }
}

#[test]
fn a_shared_last_step_runs_each_row_block_once_whoever_takes_it() {
    use super::tail::{Open, Tail};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};
    // The owner's first block waits until the helper has taken one, so the
    // helper is sure to run some; every block runs exactly once, and the
    // owner returns only after the helper's blocks are done.
    let tail: Tail<usize> = Tail::default();
    let runs: Vec<AtomicUsize> = (0..40).map(|_| AtomicUsize::new(0)).collect();
    let (by_helper, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Acquire) {
                tail.help(|step, block| {
                    assert_eq!(*step, 7, "the step the owner opened");
                    by_helper.fetch_add(1, Ordering::AcqRel);
                    std::thread::sleep(Duration::from_millis(2));
                    runs[block].fetch_add(1, Ordering::AcqRel);
                });
                std::hint::spin_loop();
            }
        });
        for round in 0..3 {
            let before = by_helper.load(Ordering::Acquire);
            tail.share(Open { step: 7, blocks: 40 }, |block| {
                let deadline = Instant::now() + Duration::from_secs(20);
                while block == 0 && by_helper.load(Ordering::Acquire) == before && Instant::now() < deadline {
                    std::hint::spin_loop();
                }
                runs[block].fetch_add(1, Ordering::AcqRel);
            });
            // Everything ran by the time `share` returned, once a round.
            for (block, count) in runs.iter().enumerate() {
                assert_eq!(count.load(Ordering::Acquire), round + 1, "block {block} in round {round}");
            }
            assert!(by_helper.load(Ordering::Acquire) > before, "round {round}: the helper ran none of the blocks");
        }
        // Closed between steps: a helper finds nothing.
        assert!(!tail.help(|_, _| panic!("a block of a closed step")));
        stop.store(true, Ordering::Release);
    });
}
