//! A large product runs on more than one thread. A product that ran on one
//! core would still give the right answer, so the kernel tests cannot see
//! it; this one asks the team which parts other threads ran. It is a file
//! of its own so that no other test holds the team or the pool meanwhile.

use std::thread::sleep;
use std::time::Duration;

use ferrum_core::kernels::gemm::{Dims, GemmElement, Mat};
use ferrum_core::kernels::team;

fn shared_parts(n: usize, pause: Duration) -> usize {
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
    let mut dst = vec![0.0f32; n * n];
    let mat = Mat { offset: 0, rs: n as isize, cs: 1 };
    // After the pause the team's helpers have parked: the call must wake them.
    sleep(pause);
    f32::gemm(&mut dst, &a, mat, &a, mat, Dims { m: n, k: n, n }, true);
    team::last_loop_parts_by_others()
}

#[test]
fn a_large_product_is_shared_even_after_the_helpers_parked() {
    if rayon::current_num_threads() < 2 {
        return;
    }
    // 2048^3 takes tens of milliseconds on one core, so a helper woken at
    // its start has time to take parts even on a loaded machine; a few
    // tries tolerate a machine that deschedules it for the whole call.
    for (n, pause) in [(512, Duration::ZERO), (2048, Duration::from_millis(20))] {
        let helped = (0..5).any(|_| shared_parts(n, pause) > 0);
        assert!(helped, "{n}^3 after {pause:?}: every part ran on the calling thread");
    }
}
