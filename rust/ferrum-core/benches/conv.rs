//! Convolution benchmarks: conv2d 3x3 with padding 1, forward alone and
//! forward + backward (input, weight and bias gradients), at the sizes the
//! Python comparison table uses; max pooling of large and of small planes. Run with `cargo bench --bench conv`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrum_core::autodiff::{backward, Var};
use ferrum_core::ops::conv::ConvOptions;
use ferrum_core::ops::pool::PoolOptions;
use ferrum_core::{DType, Distribution, Tensor};

fn random(shape: &[usize]) -> Tensor {
    Tensor::random(shape, Distribution::Uniform(-1.0, 1.0), DType::F32).expect("valid distribution")
}

/// (batch, channels_in, channels_out, height = width)
const SIZES: [(usize, usize, usize, usize); 3] = [(64, 1, 8, 28), (64, 8, 16, 28), (32, 64, 64, 56)];

fn conv2d(c: &mut Criterion) {
    let mut g = c.benchmark_group("conv2d_3x3_f32");
    g.sample_size(10);
    let opts = ConvOptions::new([1, 1], [1, 1], [1, 1], 1);
    for (n, ci, co, h) in SIZES {
        let label = format!("{n}x{ci}->{co}x{h}");
        let (x, w, b) = (random(&[n, ci, h, h]), random(&[co, ci, 3, 3]), random(&[co]));
        g.throughput(Throughput::Elements((2 * n * co * h * h * ci * 9) as u64));
        g.bench_with_input(BenchmarkId::new("forward", &label), &n, |bch, _| bch.iter(|| black_box(x.conv2d(&w, Some(&b), &opts).unwrap())));
        let (xv, wv, bv) = (Var::leaf(x.clone()), Var::leaf(w.clone()), Var::leaf(b.clone()));
        g.bench_with_input(BenchmarkId::new("forward_backward", &label), &n, |bch, _| {
            bch.iter(|| {
                let y = xv.conv2d(&wv, Some(&bv), &opts).unwrap();
                black_box(backward(&y.sum().unwrap()).unwrap())
            })
        });
    }
    g.finish();
}

fn max_pool2d(c: &mut Criterion) {
    let x = random(&[64, 16, 28, 28]);
    let opts = PoolOptions::new([2, 2]);
    c.bench_function("max_pool2d_2x2_64x16x28", |bch| bch.iter(|| black_box(x.max_pool2d(&opts).unwrap())));
}

/// GoogLeNet's poolings of small planes at batch 1 (3x3, ceil mode): stride 1 with padding 1 on
/// 512 planes of 4x4, stride 2 on 192 planes of 16x16.
fn max_pool2d_small(c: &mut Criterion) {
    let mut g = c.benchmark_group("max_pool2d_small");
    let pad = PoolOptions { kernel: [3, 3], stride: [1, 1], padding: [(1, 1), (1, 1)], dilation: [1, 1], ceil_mode: true };
    let down = PoolOptions { kernel: [3, 3], stride: [2, 2], padding: [(0, 0), (0, 0)], dilation: [1, 1], ceil_mode: true };
    for (shape, opts, label) in [([1, 512, 4, 4], &pad, "512x4x4_s1"), ([1, 192, 16, 16], &down, "192x16x16_s2")] {
        let x = random(&shape);
        g.bench_function(label, |bch| bch.iter(|| black_box(x.max_pool2d(opts).unwrap())));
    }
    g.finish();
}

criterion_group!(benches, conv2d, max_pool2d, max_pool2d_small);
criterion_main!(benches);
