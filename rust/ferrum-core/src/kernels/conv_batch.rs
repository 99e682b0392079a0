//! How a convolution spreads over threads: whether a pass is large enough
//! for several, whether to split the batch rather than each image's GEMMs,
//! and the batch sums of weight gradients, added in a fixed order. Shared by
//! the im2col path (`conv.rs`) and the direct kernels (`conv_direct.rs`).

use super::im2col::ConvGeom;
use super::team;
use crate::element::Element;
use crate::interrupt;

/// Multiply-adds below which a whole convolution stays on one thread.
pub(super) const PAR_CONV_FLOPS: usize = 1 << 17;

/// Multiply-adds of one pass over the batch.
pub(super) fn flops(g: &ConvGeom) -> usize {
    g.batch * g.c_out * g.p() * g.k()
}

/// Whether a pass over the batch is large enough for several threads.
pub(super) fn threaded(g: &ConvGeom) -> bool {
    flops(g) >= PAR_CONV_FLOPS && rayon::current_num_threads() > 1
}

/// Whether to split the batch over threads (each image then runs its GEMMs
/// single-threaded) rather than thread inside each GEMM.
pub(super) fn batch_parallel(g: &ConvGeom) -> bool {
    g.batch > 1 && threaded(g)
}

/// The sum over `batch` images of `len`-value contributions, where
/// `add(image, sum, first)` adds one image's into `sum` (which holds zeros
/// when `first`, so it may overwrite instead). In `parallel`, the batch is
/// cut into a fixed number of runs of consecutive images, each summed by one
/// part of a team loop, and the runs' sums are added in order: the same bits
/// on every call, so that a seeded training run repeats exactly (rayon's
/// fold/reduce grouped images by work stealing, and the float sums changed
/// from run to run). On the team, the calling thread works too, and so
/// watches for interrupts between images.
pub(super) fn batch_sum<T: Element + std::ops::AddAssign>(batch: usize, len: usize, parallel: bool, add: impl Fn(usize, &mut [T], bool) + Sync + Send) -> Vec<T> {
    let run = |images: std::ops::Range<usize>| {
        let mut sum = vec![T::ZERO; len];
        let first = images.start;
        for i in images {
            if interrupt::poll() {
                break;
            }
            add(i, &mut sum, i == first);
        }
        sum
    };
    if !parallel || batch < 2 {
        return run(0..batch);
    }
    // A few runs per thread, so a thread slowed by other work leaves little waiting.
    let per = batch.div_ceil((RUNS_PER_THREAD * rayon::current_num_threads()).min(batch));
    let mut sums: Vec<Vec<T>> = vec![Vec::new(); batch.div_ceil(per)];
    team::for_each_chunk_mut(&mut sums, 1, |r, slot| slot[0] = run(r * per..((r + 1) * per).min(batch)));
    let mut sums = sums.into_iter();
    let mut total = sums.next().unwrap_or_else(|| vec![T::ZERO; len]);
    for sum in sums {
        total.iter_mut().zip(sum).for_each(|(t, v)| *t += v);
    }
    total
}

/// Runs of images per thread in a parallel [`batch_sum`].
const RUNS_PER_THREAD: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_batch_sums_repeat_bit_for_bit_and_follow_a_fixed_order() {
        // Values whose float sum depends on the order of the adds.
        let value = |i: usize, j: usize| ((i * 7919 + j * 104_729) % 1000) as f32 * 1e-3 + if i.is_multiple_of(3) { 1e6 } else { -1e-7 };
        let (batch, len) = (61, 37);
        let add = |i: usize, sum: &mut [f32], first: bool| {
            for (j, s) in sum.iter_mut().enumerate() {
                *s = if first { value(i, j) } else { *s + value(i, j) };
            }
        };
        let first = batch_sum::<f32>(batch, len, true, add);
        for _ in 0..20 {
            assert_eq!(batch_sum::<f32>(batch, len, true, add), first);
        }
        // The same as summing the fixed runs one after the other, in order.
        let per = batch.div_ceil((RUNS_PER_THREAD * rayon::current_num_threads()).min(batch));
        let mut expected = vec![0.0f32; len];
        for start in (0..batch).step_by(per) {
            let mut run = vec![0.0f32; len];
            (start..(start + per).min(batch)).for_each(|i| add(i, &mut run, i == start));
            expected.iter_mut().zip(&run).for_each(|(e, r)| *e += r);
        }
        assert_eq!(first, expected);
        let sequential = batch_sum::<f32>(batch, len, false, add);
        assert!(first.iter().zip(&sequential).all(|(a, b)| (a - b).abs() <= 1e-6 * b.abs().max(1.0)));
        assert_eq!(batch_sum::<f32>(0, len, true, add), vec![0.0; len]);
    }
}
