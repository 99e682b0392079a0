//! The blocked loops around the microkernel and the split over threads.
//!
//! Loop order (BLIS): columns in blocks of `NC`, the shared dimension in
//! blocks of `KC` (a packed `KC x NC` block of B stays in L2/L3), rows in
//! blocks of `MC` (a packed `MC x KC` block of A stays in L2), then micro
//! tiles: one `KC x 16` micro-panel of B stays in L1 while the 6-row
//! micro-panels of A stream past it.

use std::cell::RefCell;
use std::sync::OnceLock;

use super::avx2::{kernel_6x16, kernel_edge, MR, NR};
use super::pack::{pack_a, pack_b};
use crate::kernels::team;

/// Rows of a packed block of A (a multiple of `MR`).
const MC: usize = 144;
/// Shared-dimension depth of the packed blocks.
const KC: usize = 256;
/// Columns of a packed block of B (a multiple of `NR`).
const NC: usize = 3072;

/// Whether this CPU runs the kernel (AVX2 and FMA), detected once.
pub fn available() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    })
}

/// One operand: a pointer to element (0, 0) and its (row, col) strides,
/// which may be negative (flipped views) or zero (expanded views).
#[derive(Clone, Copy, Debug)]
pub struct Operand {
    pub ptr: *const f32,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: an Operand is only read through, by threads that the caller of
// `sgemm` keeps inside its borrow of the buffer.
unsafe impl Send for Operand {}
// SAFETY: as above; reads only.
unsafe impl Sync for Operand {}

impl Operand {
    /// Address of element `(i, j)`.
    ///
    /// # Safety
    /// `(i, j)` lies inside the matrix the operand describes.
    #[inline(always)]
    pub unsafe fn at(self, i: usize, j: usize) -> *const f32 {
        // SAFETY: the caller keeps (i, j) inside the matrix, whose elements
        // are all inside one allocation.
        unsafe { self.ptr.offset(i as isize * self.rs + j as isize * self.cs) }
    }

    /// The operand from element `(i, j)` on.
    ///
    /// # Safety
    /// `(i, j)` lies inside the matrix.
    unsafe fn from(self, i: usize, j: usize) -> Operand {
        // SAFETY: forwarded from the caller.
        Operand { ptr: unsafe { self.at(i, j) }, ..self }
    }
}

/// The output: element `(i, j)` at `ptr + i * rs + j`.
#[derive(Clone, Copy)]
struct Out {
    ptr: *mut f32,
    rs: usize,
}

impl Out {
    /// The output from element `(i, j)` on.
    ///
    /// # Safety
    /// `(i, j)` lies inside the output.
    unsafe fn from(self, i: usize, j: usize) -> Out {
        // SAFETY: the caller keeps (i, j) inside the output's allocation.
        Out { ptr: unsafe { self.ptr.add(i * self.rs + j) }, rs: self.rs }
    }
}

// SAFETY: threads receive disjoint row or column ranges of the output.
unsafe impl Send for Out {}
// SAFETY: as above.
unsafe impl Sync for Out {}

/// A 32-byte aligned float buffer that only grows.
#[derive(Default)]
struct Aligned(Vec<Lane>);

#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Lane([f32; 8]);

impl Aligned {
    fn ensure(&mut self, floats: usize) -> *mut f32 {
        let lanes = floats.div_ceil(8);
        if self.0.len() < lanes {
            self.0.resize(lanes, Lane([0.0; 8]));
        }
        self.0.as_mut_ptr().cast()
    }
}

/// One thread's packing buffers, reused across calls so that a GEMM neither
/// allocates nor page-faults once the thread has run one of its size.
#[derive(Default)]
struct Packs {
    a: Aligned,
    b: Aligned,
}

thread_local! {
    static PACKS: RefCell<Packs> = RefCell::new(Packs::default());
}

/// The block size for `len` elements in blocks of at most about `block`:
/// equal blocks, rounded up to whole `step`s, so the last block is not a
/// sliver (k = 300 runs as 2 x 150, not 256 + 44).
fn balanced(len: usize, block: usize, step: usize) -> usize {
    let blocks = len.div_ceil(block).max(1);
    len.div_ceil(blocks).div_ceil(step) * step
}

/// `dst = (accumulate ? dst : 0) + a @ b` for `a: m x k`, `b: k x n` and an
/// `m x n` destination with row stride `dst_rs`, on `threads` threads.
///
/// # Safety
/// [`available`] is true; every element of the `m x k` and `k x n` operands
/// is readable; `dst` addresses a writable `m x n` matrix with row stride
/// `dst_rs >= n` that nothing else accesses during the call; `k > 0`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm(dst: *mut f32, dst_rs: usize, accumulate: bool, a: Operand, b: Operand, m: usize, k: usize, n: usize, threads: usize) {
    let out = Out { ptr: dst, rs: dst_rs };
    if threads <= 1 {
        // SAFETY: forwarded from the caller.
        return unsafe { with_packs(|p| blocked(p, out, accumulate, a, b, m, k, n)) };
    }
    // Split the larger output dimension in whole micro-tiles, one
    // contiguous part per thread; columns when square: each part's packed
    // block of B is then half as wide (KC x 512 for n = 1024, 512 KiB, one
    // Zen 3 L2), which measured faster than splitting rows (1024^3 on two
    // threads: 14.1-15.9 ms vs 13.3-18.5 ms; 2048^3: 119-129 vs 126-149 ms).
    let by_cols = n >= m;
    let (len, unit) = if by_cols { (n, NR) } else { (m, MR) };
    let tiles = len.div_ceil(unit);
    let parts = threads.min(tiles);
    let split = Split { out, accumulate, a, b, m, k, n, by_cols, len, unit, tiles, parts };
    // SAFETY: forwarded from the caller; parts are disjoint, and the loop
    // returns only when every part is done.
    team::for_each_part(parts, |t| unsafe { split.part(t) });
}

/// One product split into parts, one per thread.
struct Split {
    out: Out,
    accumulate: bool,
    a: Operand,
    b: Operand,
    m: usize,
    k: usize,
    n: usize,
    by_cols: bool,
    len: usize,
    unit: usize,
    tiles: usize,
    parts: usize,
}

impl Split {
    /// Run part `t`: output rows (or columns) `s..e` in whole micro-tiles.
    ///
    /// # Safety
    /// As for [`sgemm`]; no other thread runs part `t` at the same time.
    unsafe fn part(&self, t: usize) {
        let (unit, tiles, parts, len) = (self.unit, self.tiles, self.parts, self.len);
        let (s, e) = ((tiles * t / parts * unit).min(len), (tiles * (t + 1) / parts * unit).min(len));
        if s >= e {
            return;
        }
        // SAFETY: part `t` reads a sub-block of the operands and writes the
        // rows (or columns) s..e of dst, disjoint from every other part.
        unsafe {
            if self.by_cols {
                let (bp, op) = (self.b.from(0, s), self.out.from(0, s));
                with_packs(|p| blocked(p, op, self.accumulate, self.a, bp, self.m, self.k, e - s));
            } else {
                let (ap, op) = (self.a.from(s, 0), self.out.from(s, 0));
                with_packs(|p| blocked(p, op, self.accumulate, ap, self.b, e - s, self.k, self.n));
            }
        }
    }
}

/// Run `f` with this thread's packing buffers (fresh ones if this thread is
/// already inside a GEMM, which only a re-entrant caller could cause).
fn with_packs(f: impl FnOnce(&mut Packs)) {
    PACKS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut packs) => f(&mut packs),
        Err(_) => f(&mut Packs::default()),
    })
}

/// The sequential blocked product on one thread.
///
/// # Safety
/// As for [`sgemm`].
#[allow(clippy::too_many_arguments)]
unsafe fn blocked(packs: &mut Packs, out: Out, accumulate: bool, a: Operand, b: Operand, m: usize, k: usize, n: usize) {
    let (mc_max, kc_max, nc_max) = (balanced(m, MC, MR), balanced(k, KC, 1), balanced(n, NC, NR));
    let pa = packs.a.ensure(mc_max * kc_max);
    let pb = packs.b.ensure(nc_max * kc_max);
    for jc in (0..n).step_by(nc_max) {
        let nc = nc_max.min(n - jc);
        for pc in (0..k).step_by(kc_max) {
            let kc = kc_max.min(k - pc);
            // Later k-blocks add to what the first one wrote.
            let acc = accumulate || pc > 0;
            // SAFETY: the block is inside b; pb has nc_max.div_ceil(NR) * NR * kc_max floats.
            unsafe { pack_b(pb, b, pc, jc, kc, nc) };
            for ic in (0..m).step_by(mc_max) {
                let mc = mc_max.min(m - ic);
                // SAFETY: the block is inside a; pa has mc_max * kc_max floats (mc_max is a multiple of MR).
                unsafe { pack_a(pa, a, ic, pc, mc, kc) };
                for jr in (0..nc).step_by(NR) {
                    let nr = NR.min(nc - jr);
                    // SAFETY: panel jr / NR of the packed B block.
                    let bp = unsafe { pb.add(jr * kc) };
                    for ir in (0..mc).step_by(MR) {
                        let mr = MR.min(mc - ir);
                        // SAFETY: panel ir / MR of the packed A block; the
                        // tile (ic + ir, jc + jr) of size mr x nr is inside dst.
                        unsafe {
                            let ap = pa.add(ir * kc);
                            let c = out.ptr.add((ic + ir) * out.rs + jc + jr);
                            if mr == MR && nr == NR {
                                kernel_6x16(kc, ap, bp, c, out.rs, acc);
                            } else {
                                kernel_edge(kc, ap, bp, c, out.rs, acc, mr, nr);
                            }
                        }
                    }
                }
            }
        }
    }
}
