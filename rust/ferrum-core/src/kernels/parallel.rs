//! When to use threads and SIMD. Small tensors never pay for a thread pool;
//! loops are compiled for the best instruction set found at run time.

use std::sync::LazyLock;

/// Elements below which cheap element-wise work stays on one thread: under
/// this, waking rayon costs more than the loop.
pub const PAR_CHEAP: usize = 1 << 17;
/// The same gate for transcendental ops (exp, tanh, ...), ~10x costlier each.
pub const PAR_COSTLY: usize = 1 << 14;
/// Elements each rayon task handles.
pub const CHUNK: usize = 1 << 14;

static ARCH: LazyLock<pulp::Arch> = LazyLock::new(pulp::Arch::new);

/// Run `f` compiled for the widest SIMD this CPU offers (AVX2/AVX-512 when
/// present), so plain loops inside it auto-vectorise to that width.
#[inline(always)]
pub fn simd<R>(f: impl FnOnce() -> R) -> R {
    ARCH.dispatch(f)
}

/// The 256-bit level, and the bytes above which a streaming loop uses it,
/// when [`simd`] would run 512-bit code on a CPU where 256 bits read memory
/// faster ([`streams_better_at_256_bits`](super::cpu_model::streams_better_at_256_bits)).
#[cfg(target_arch = "x86_64")]
static STREAM_V3: LazyLock<Option<(pulp::x86::V3, usize)>> = LazyLock::new(|| {
    if !matches!(*ARCH, pulp::Arch::V4(_)) {
        return None;
    }
    Some((pulp::x86::V3::try_new()?, super::cpu_model::streams_better_at_256_bits()?))
});

/// As [`simd`], for a loop that reads `bytes` once, in order: above the
/// last-level cache on a Zen 4 core it is compiled for 256-bit vectors.
/// One thread summing 64 MiB that way took 5-16% less time than at 512
/// bits (paired calls, three runs); with both threads of a 2-vCPU VM the
/// memory bus was the limit either way. Results are the same at both
/// widths when the loop's order of operations is fixed by its code (as
/// [`fold_seq`](super::reduce::fold_seq)'s is), not by the vector width.
#[inline(always)]
pub fn simd_streaming<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if let Some((v3, from)) = *STREAM_V3 {
        if bytes > from {
            return pulp::Simd::vectorize(v3, f);
        }
    }
    let _ = bytes;
    simd(f)
}

/// Whether a loop over `n` elements should be split across threads.
#[inline]
pub fn go_parallel(n: usize, gate: usize) -> bool {
    n >= gate && rayon::current_num_threads() > 1
}
