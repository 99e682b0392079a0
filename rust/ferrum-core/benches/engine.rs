//! Engine benchmarks: matmul, element-wise ops, reductions, and the fixed
//! cost of dispatching a tiny op. Run with `cargo bench` at the root.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrum_core::ops::binary::BinaryOp;
use ferrum_core::ops::unary::FloatUnary;
use ferrum_core::{DType, Distribution, Tensor};

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
            bch.iter_batched(|| Tensor::from_vec(a.to_vec::<f32>(), &[n]).unwrap(), |x| black_box(x.binary_owned(BinaryOp::Add, b.clone()).unwrap()), criterion::BatchSize::LargeInput)
        });
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

criterion_group!(benches, matmul, elementwise, reductions, tiny_dispatch);
criterion_main!(benches);
