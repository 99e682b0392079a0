//! Engine benchmarks: matmul, element-wise ops, reductions, the fixed
//! cost of dispatching a tiny op, and parallel ops issued after a pause.
//! Run with `cargo bench` at the root.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrum_core::kernels::gemm::{Dims, GemmElement, Mat};
use ferrum_core::ops::binary::BinaryOp;
use ferrum_core::ops::unary::FloatUnary;
use ferrum_core::{DType, Distribution, Tensor};
use rayon::prelude::*;

fn random(shape: &[usize]) -> Tensor {
    Tensor::random(shape, Distribution::Uniform(-1.0, 1.0), DType::F32).expect("valid distribution")
}

fn matmul(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul_f32");
    g.sample_size(10);
    for n in [256usize, 512, 1024, 2048] {
        let (a, b) = (random(&[n, n]), random(&[n, n]));
        g.throughput(Throughput::Elements((2 * n * n * n) as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |bch, _| bch.iter(|| black_box(a.matmul(&b).unwrap())));
    }
    g.finish();
}

/// Single-thread f32 GEMMs of the shapes convolutions run (im2col bands and
/// their gradients) and a square one, ferrum's kernel next to the `gemm`
/// crate it replaced, to place the size gate between them.
fn gemm_shapes(c: &mut Criterion) {
    let mut g = c.benchmark_group("gemm_f32_1thread");
    g.sample_size(20);
    for (m, k, n) in [(16, 72, 784), (72, 16, 784), (16, 784, 72), (8, 8, 8), (32, 32, 32), (64, 64, 64), (6, 512, 512), (512, 512, 6), (256, 256, 256), (1024, 1024, 1024)] {
        let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 - 2.0).collect();
        let mut dst = vec![0.0f32; m * n];
        let (la, lb) = (Mat { offset: 0, rs: k as isize, cs: 1 }, Mat { offset: 0, rs: n as isize, cs: 1 });
        let id = format!("{m}x{k}x{n}");
        g.throughput(Throughput::Elements((2 * m * n * k) as u64));
        g.bench_function(BenchmarkId::new("ferrum", &id), |bch| bch.iter(|| f32::gemm_into(&mut dst, n, false, &a, la, &b, lb, Dims { m, k, n }, false)));
        g.bench_function(BenchmarkId::new("gemm_crate", &id), |bch| {
            // SAFETY: a, b and dst hold the m x k, k x n and m x n row-major matrices.
            bch.iter(|| unsafe { gemm::gemm(m, n, k, dst.as_mut_ptr(), 1, n as isize, false, a.as_ptr(), 1, k as isize, b.as_ptr(), 1, n as isize, 0.0, 1.0, false, false, false, gemm::Parallelism::None) })
        });
    }
    g.finish();
}

const SIZES: [(usize, &str); 3] = [(1 << 10, "1K"), (1 << 20, "1M"), (1 << 24, "16M")];

fn elementwise(c: &mut Criterion) {
    let mut g = c.benchmark_group("elementwise_f32");
    g.sample_size(10);
    for (n, label) in SIZES {
        let (a, b) = (random(&[n]), random(&[n]));
        g.throughput(Throughput::Bytes((3 * 4 * n) as u64));
        g.bench_with_input(BenchmarkId::new("add", label), &n, |bch, _| bch.iter(|| black_box(a.binary(BinaryOp::Add, &b).unwrap())));
        g.throughput(Throughput::Bytes((2 * 4 * n) as u64));
        g.bench_with_input(BenchmarkId::new("exp", label), &n, |bch, _| bch.iter(|| black_box(a.float_unary(FloatUnary::Exp).unwrap())));
        // An owned operand is overwritten in place: the engine's buffer reuse.
        g.bench_with_input(BenchmarkId::new("add_owned", label), &n, |bch, _| {
            bch.iter_batched(|| Tensor::from_vec(a.try_to_vec::<f32>("bench").unwrap(), &[n]).unwrap(), |x| black_box(x.binary_owned(BinaryOp::Add, b.clone()).unwrap()), criterion::BatchSize::LargeInput)
        });
    }
    g.finish();
}

/// Random fills: a dropout mask (Bernoulli), uniform and normal draws, at the
/// size of the guide CNN's second convolution output (64 x 16 x 24 x 24).
fn random_fills(c: &mut Criterion) {
    let mut g = c.benchmark_group("random_f32");
    g.sample_size(20);
    let n = 64 * 16 * 24 * 24;
    g.throughput(Throughput::Elements(n as u64));
    for (name, dist) in [
        ("bernoulli", Distribution::Bernoulli(0.5)),
        ("default", Distribution::Default),
        ("uniform", Distribution::Uniform(-1.0, 1.0)),
        ("normal", Distribution::Normal(0.0, 1.0)),
    ] {
        g.bench_function(BenchmarkId::new(name, "590K"), |bch| bch.iter(|| black_box(Tensor::random(&[n], dist, DType::F32).unwrap())));
    }
    g.finish();
}

fn reductions(c: &mut Criterion) {
    let mut g = c.benchmark_group("reduce_f32");
    g.sample_size(10);
    for (n, label) in SIZES {
        let a = random(&[n]);
        let m = random(&[n / 1024, 1024]);
        g.throughput(Throughput::Bytes((4 * n) as u64));
        g.bench_with_input(BenchmarkId::new("sum", label), &n, |bch, _| bch.iter(|| black_box(a.sum().unwrap())));
        g.bench_with_input(BenchmarkId::new("sum_dim_rows", label), &n, |bch, _| bch.iter(|| black_box(m.sum_dim(1).unwrap())));
        g.bench_with_input(BenchmarkId::new("sum_dim_cols", label), &n, |bch, _| bch.iter(|| black_box(m.sum_dim(0).unwrap())));
    }
    g.finish();
}

fn tiny_dispatch(c: &mut Criterion) {
    let (a, b) = (random(&[4]), random(&[4]));
    c.bench_function("tiny_add_4", |bch| bch.iter(|| black_box(a.binary(BinaryOp::Add, &b).unwrap())));
    c.bench_function("tiny_exp_4", |bch| bch.iter(|| black_box(a.float_unary(FloatUnary::Exp).unwrap())));
}

/// Total time of `iters` calls of `f`, each after `pause` asleep; the
/// pauses are not counted.
fn timed_after_pauses(iters: u64, pause: Duration, mut f: impl FnMut()) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        std::thread::sleep(pause);
        let start = Instant::now();
        f();
        total += start.elapsed();
    }
    total
}

/// Parallel ops issued after a short pause, as a training loop issues them
/// between lines of Python: the engine (its thread team) against the same
/// chunked loop on rayon, whose idle workers have parked by then.
fn after_pause(c: &mut Criterion) {
    let mut g = c.benchmark_group("after_pause_300us");
    g.sample_size(20);
    let pause = Duration::from_micros(300);
    for n in [1 << 17, 1 << 19] {
        let (a, b) = (random(&[n]), random(&[n]));
        let (sa, sb) = (a.try_to_vec::<f32>("bench").unwrap(), b.try_to_vec::<f32>("bench").unwrap());
        let mut out = vec![0f32; n];
        g.bench_function(BenchmarkId::new("add_engine", n), |bch| {
            bch.iter_custom(|iters| timed_after_pauses(iters, pause, || drop(black_box(a.binary(BinaryOp::Add, &b).unwrap()))))
        });
        g.bench_function(BenchmarkId::new("add_rayon_loop", n), |bch| {
            bch.iter_custom(|iters| {
                timed_after_pauses(iters, pause, || {
                    out.par_chunks_mut(1 << 14).zip(sa.par_chunks(1 << 14).zip(sb.par_chunks(1 << 14))).for_each(|(o, (x, y))| {
                        o.iter_mut().zip(x.iter().zip(y)).for_each(|(o, (x, y))| *o = x + y)
                    });
                    black_box(&out);
                })
            })
        });
    }
    let (x, w) = (random(&[256, 784]), random(&[784, 512]));
    g.bench_function("matmul_256x784x512", |bch| bch.iter_custom(|iters| timed_after_pauses(iters, pause, || drop(black_box(x.matmul(&w).unwrap())))));
    g.finish();
}

criterion_group!(benches, matmul, gemm_shapes, elementwise, random_fills, reductions, tiny_dispatch, after_pause);
criterion_main!(benches);
