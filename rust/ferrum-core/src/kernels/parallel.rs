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

/// Whether a loop over `n` elements should be split across threads.
#[inline]
pub fn go_parallel(n: usize, gate: usize) -> bool {
    n >= gate && rayon::current_num_threads() > 1
}
