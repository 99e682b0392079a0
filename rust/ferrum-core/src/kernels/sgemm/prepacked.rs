//! A right-hand operand packed once for many products: the recurrent weight
//! of an LSTM or GRU multiplies the hidden state at every step of a
//! sequence, and repacking its megabyte per step cost about a third of each
//! step's product (`[32, 256] @ [256, 1024]`).
//!
//! The blocks are those the blocked product packs, all of them kept; a
//! product then packs only the (small) left operand and runs the
//! microkernel over the stored panels. Threads split the output columns in
//! whole micro-panels.

use super::avx2::Avx2;
use super::avx512::Avx512;
use super::driver::{balanced, with_packs, Kernel};
use super::operand::{Aligned, Operand};
use super::tile::Tile;
use super::pack::{pack_a, pack_b};
use crate::kernels::team;

/// `b` (`k x n`) packed in the blocks of the tile of `kernel`.
pub struct PackedB {
    kernel: Kernel,
    buf: Aligned,
    k: usize,
    n: usize,
    kc: usize,
    nc: usize,
    /// Floats per stored block: `nc` rounded up to whole panels, times `kc`.
    block: usize,
}

impl PackedB {
    /// Pack `b`, a `k x n` matrix, for `kernel`.
    ///
    /// # Safety
    /// The CPU runs `kernel`; every element of the `k x n` matrix is
    /// readable through `b`; `k > 0` and `n > 0`.
    pub unsafe fn new(kernel: Kernel, b: Operand, k: usize, n: usize) -> PackedB {
        // SAFETY: forwarded from the caller.
        unsafe {
            match kernel {
                Kernel::Avx2 => Self::build::<Avx2>(kernel, b, k, n),
                Kernel::Avx512 => Self::build::<Avx512>(kernel, b, k, n),
            }
        }
    }

    unsafe fn build<T: Tile>(kernel: Kernel, b: Operand, k: usize, n: usize) -> PackedB {
        let (kc, nc) = (balanced(k, T::KC, 1), balanced(n, T::NC, T::NR));
        let block = nc.div_ceil(T::NR) * T::NR * kc;
        let mut buf = Aligned::default();
        let base = buf.ensure(block * k.div_ceil(kc) * n.div_ceil(nc));
        for (kb, pc) in (0..k).step_by(kc).enumerate() {
            for (jb, jc) in (0..n).step_by(nc).enumerate() {
                let at = (kb * n.div_ceil(nc) + jb) * block;
                // SAFETY: the block (pc, jc) of kc x nc lies inside b; the
                // buffer holds every block's panels.
                unsafe { pack_b::<T>(base.add(at), b, pc, jc, kc.min(k - pc), nc.min(n - jc)) };
            }
        }
        PackedB { kernel, buf, k, n, kc, nc, block }
    }

    /// Rows of `b` (the shared dimension of a product).
    pub fn k(&self) -> usize {
        self.k
    }

    /// Columns of `b`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `dst = (accumulate ? dst : 0) + a @ b` for `a: m x k` and an `m x n`
    /// destination with row stride `dst_rs`, on up to `threads` threads.
    ///
    /// # Safety
    /// Every element of the `m x k` matrix is readable through `a`; `dst`
    /// addresses a writable `m x n` matrix with row stride `dst_rs >= n`
    /// that nothing else accesses during the call.
    pub unsafe fn product(&self, dst: *mut f32, dst_rs: usize, accumulate: bool, a: Operand, m: usize, threads: usize) {
        if m == 0 {
            return;
        }
        // SAFETY: forwarded from the caller; the kernel was checked at packing.
        unsafe {
            match self.kernel {
                Kernel::Avx2 => self.run::<Avx2>(dst, dst_rs, accumulate, a, m, threads),
                Kernel::Avx512 => self.run::<Avx512>(dst, dst_rs, accumulate, a, m, threads),
            }
        }
    }

    unsafe fn run<T: Tile>(&self, dst: *mut f32, dst_rs: usize, accumulate: bool, a: Operand, m: usize, threads: usize) {
        let panels = self.n.div_ceil(T::NR);
        let parts = threads.clamp(1, panels);
        let out = Dst(dst);
        let work = |t: usize| {
            // Part t: micro-panels [first, last) of the output's columns.
            let (first, last) = (panels * t / parts, panels * (t + 1) / parts);
            // SAFETY: forwarded from the caller; parts write disjoint columns.
            unsafe { self.columns::<T>(out, dst_rs, accumulate, a, m, first * T::NR, (last * T::NR).min(self.n)) };
        };
        if parts == 1 {
            work(0);
        } else {
            team::for_each_part(parts, work);
        }
    }

    /// The output columns `j0..j1` (starting on a micro-panel) on this thread.
    #[allow(clippy::too_many_arguments)]
    unsafe fn columns<T: Tile>(&self, out: Dst, dst_rs: usize, accumulate: bool, a: Operand, m: usize, j0: usize, j1: usize) {
        let (tm, tn) = (T::MR, T::NR);
        let mc_max = balanced(m, T::MC, T::MR);
        let blocks_across = self.n.div_ceil(self.nc);
        with_packs(|packs| {
            let pa = packs.a.ensure(mc_max * self.kc);
            for (jb, jc) in (0..self.n).step_by(self.nc).enumerate() {
                let (lo, hi) = (j0.max(jc), j1.min(jc + self.nc));
                if lo >= hi {
                    continue;
                }
                for (kb, pc) in (0..self.k).step_by(self.kc).enumerate() {
                    let kc = self.kc.min(self.k - pc);
                    let acc = accumulate || pc > 0;
                    // SAFETY: block (kb, jb) was packed into the buffer.
                    let pb = unsafe { self.buf_ptr().add((kb * blocks_across + jb) * self.block) };
                    for ic in (0..m).step_by(mc_max) {
                        let mc = mc_max.min(m - ic);
                        // SAFETY: rows ic .. ic + mc, columns pc .. pc + kc of a are readable.
                        unsafe { pack_a::<T>(pa, a, ic, pc, mc, kc) };
                        for jr in ((lo - jc)..(hi - jc)).step_by(tn) {
                            let nr = tn.min(hi - jc - jr);
                            for ir in (0..mc).step_by(tm) {
                                let mr = tm.min(mc - ir);
                                // SAFETY: panel jr / NR of block (kb, jb) and panel
                                // ir / MR of the packed A block; the tile is in dst.
                                unsafe {
                                    let (ap, bp) = (pa.add(ir * kc), pb.add(jr * kc));
                                    let c = out.0.add((ic + ir) * dst_rs + jc + jr);
                                    T::any(kc, ap, bp, c, dst_rs, acc, mr, nr);
                                }
                            }
                        }
                    }
                }
            }
        });
    }

    fn buf_ptr(&self) -> *const f32 {
        self.buf.ptr()
    }
}

/// The destination, shared by the parts (each writes its own columns).
#[derive(Clone, Copy)]
struct Dst(*mut f32);
// SAFETY: parts write disjoint columns of the destination.
unsafe impl Send for Dst {}
// SAFETY: as above.
unsafe impl Sync for Dst {}

// SAFETY: the packed buffer is only read once built.
unsafe impl Sync for PackedB {}
// SAFETY: as above; it owns its buffer.
unsafe impl Send for PackedB {}
