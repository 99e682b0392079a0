//! The blocked loops around the microkernel and the split over threads.
//!
//! Loop order (BLIS): columns in blocks of `NC`, the shared dimension in
//! blocks of `KC` (a packed `KC x NC` block of B stays in L2/L3), rows in
//! blocks of `MC` (a packed `MC x KC` block of A stays in L2), then micro
//! tiles: one `KC x NR` micro-panel of B stays in L1 while the `MR`-row
//! micro-panels of A stream past it. The tile and the block sizes come
//! from the kernel ([`Tile`]): AVX-512 where the CPU has it, else AVX2.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::avx2::Avx2;
use super::avx512::Avx512;
use super::pack::{pack_a, pack_b};
use super::shared::{with_shared, SharedPacks};
use super::small;
use super::operand::{Aligned, Operand};
use super::tail::{help_until_done, Open, Tail};
use super::tile::Tile;
use crate::kernels::team;

/// The microkernels this engine has, by the instructions they need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// 6x16 tile on AVX2 and FMA.
    Avx2,
    /// 12x32 tile on AVX-512F (with AVX2 for packing).
    Avx512,
}

impl Kernel {
    /// Whether this CPU runs the kernel.
    pub fn supported(self) -> bool {
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        match self {
            Kernel::Avx2 => avx2,
            Kernel::Avx512 => avx2 && is_x86_feature_detected!("avx512f"),
        }
    }

    /// Columns of the kernel's register tile.
    pub fn columns(self) -> usize {
        match self {
            Kernel::Avx2 => Avx2::NR,
            Kernel::Avx512 => Avx512::NR,
        }
    }

    /// The widest kernel this CPU runs, detected once.
    pub fn best() -> Option<Kernel> {
        static BEST: OnceLock<Option<Kernel>> = OnceLock::new();
        *BEST.get_or_init(|| [Kernel::Avx512, Kernel::Avx2].into_iter().find(|k| k.supported()))
    }
}

/// Whether this CPU runs any of the kernels (AVX2 and FMA at least).
pub fn available() -> bool {
    Kernel::best().is_some()
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

/// One thread's packing buffers, reused across calls so that a GEMM neither
/// allocates nor page-faults once the thread has run one of its size.
#[derive(Default)]
pub(super) struct Packs {
    pub(super) a: Aligned,
    pub(super) b: Aligned,
    /// The product (an id from [`PRODUCTS`], 0 for none) whose whole
    /// operand `a` or `b` holds for [`Sharing::ThreadA`] or
    /// [`Sharing::ThreadB`], and which of its blocks are packed.
    kept: u64,
    packed: Vec<bool>,
}

impl Packs {
    /// Whether block `index` (of `blocks`) of product `id`'s kept operand
    /// is packed already; from now on it counts as packed, so the caller
    /// packs it when this returns false.
    fn keep(&mut self, id: u64, blocks: usize, index: usize) -> bool {
        if self.kept != id {
            self.kept = id;
            self.packed.clear();
            self.packed.resize(blocks, false);
        }
        std::mem::replace(&mut self.packed[index], true)
    }
}

/// Counts threaded products, so each has an id that a thread's kept
/// operand ([`Packs::keep`]) can be matched against.
static PRODUCTS: AtomicU64 = AtomicU64::new(0);

/// Floats of the operand a thread keeps packed whole for the parts of a
/// product it runs (4 MiB); past it each part packs its own blocks.
const MAX_KEPT: usize = 1 << 20;

thread_local! {
    static PACKS: RefCell<Packs> = RefCell::new(Packs::default());
}

/// The block size for `len` elements in blocks of at most about `block`:
/// equal blocks, rounded up to whole `step`s, so the last block is not a
/// sliver (k = 300 runs as 2 x 150, not 256 + 44).
pub(super) fn balanced(len: usize, block: usize, step: usize) -> usize {
    let blocks = len.div_ceil(block).max(1);
    len.div_ceil(blocks).div_ceil(step) * step
}

/// The block sizes of an `m x k x n` product with tile `T`: rows of A,
/// depth, and columns of B per packed block.
fn blocking<T: Tile>(m: usize, k: usize, n: usize) -> (usize, usize, usize) {
    (balanced(m, T::MC, T::MR), balanced(k, T::KC, 1), balanced(n, T::NC, T::NR))
}

/// Parts per thread of a threaded product.
///
/// With one part per thread, a product lasts as long as its slowest
/// thread: a helper that starts late (woken from its park, or queued
/// behind another thread on its CPU) or shares its core with another
/// library's spinning threads (OpenBLAS's spin for about 0.1 s after each
/// call) held the whole call to one core's speed. With several parts per
/// thread the threads that are running take the late one's share. Two per thread
/// measured as steady as four (512^2 to 1024^2: p10/p50 0.93-0.97). Only
/// products below [`SHARE_FROM`] are cut this way, where a thread packs
/// the operand every part reads once for all its parts (up to
/// [`MAX_KEPT`] floats of it); larger ones claim [`Spans`].
const PARTS_PER_THREAD: usize = 2;

/// The fewest micro-tiles in a part (two 32-column panels on AVX-512), so
/// that a part's packed block of the operand it owns still feeds several
/// micro-panels of the shared one.
const MIN_PART_TILES: usize = 2;

/// How many parts a product of `tiles` micro-tiles along the split
/// dimension is cut into for `threads` threads: up to
/// [`PARTS_PER_THREAD`] per thread, each of at least [`MIN_PART_TILES`]
/// tiles, a multiple of the thread count, and at least one per thread
/// while there are tiles to go round.
pub(super) fn split_parts(tiles: usize, threads: usize) -> usize {
    let most = (tiles / MIN_PART_TILES).min(threads.saturating_mul(PARTS_PER_THREAD));
    // A whole number of parts per thread, so that no thread is left with
    // one part more than the others (6 tiles on 2 threads as 3 parts ran
    // 192^2 at 301 GF/s, as 2 parts at 419).
    (most / threads.max(1) * threads).max(threads.min(tiles))
}

/// Multiply-adds from which a threaded product runs as one span per
/// thread ([`Spans`]), each span packing the operand they all read whole
/// itself or all of them sharing its packed blocks ([`OWN_PACKS_FROM`]);
/// below it each thread packs that operand once, whole, and keeps it for
/// every part it runs ([`Sharing::ThreadA`], [`Sharing::ThreadB`]). Shared
/// packing makes each part wait for the other's panels and then read half
/// of them from the other core's cache; packing per part (as before) packed
/// the operand twice per thread. The gate was placed when the parts above
/// it shared packed blocks: on two threads (Xeon, AVX-512), against
/// sharing from 2^24 and packing per part below it, medians of 15-21
/// alternating rounds: 256^3 1.20x faster, 320^3 1.12x, 384^3 1.08x, the
/// MLP's 64x784x512 1.14x and its gradients' shapes 784x64x512 and
/// 64x512x784 1.09x; 128^3 and 192^3 (packed per part before) within 0.3%;
/// 256x784x512, 448^3, 512^3 and 384x784x1024 within 3% either way for a
/// gate at 2^26, 2^27 or 2^28.
const SHARE_FROM: usize = 1 << 26;

/// Micro-tiles per thread from which the spans of a product from
/// [`SHARE_FROM`] up each pack the operand they all read whole themselves,
/// into the cache of the core that reads it, instead of sharing its blocks
/// ([`with_shared`]): a shared block is half packed by the other core and
/// read from its cache or from L3, where an own block is read from L2 right
/// after it is packed. Each thread packs the whole operand whatever its
/// share, so narrow shares (many threads) keep sharing. On two threads
/// (Xeon, AVX-512, p50 of 30-800 single calls, two alternating runs), one
/// own span per thread against the two shared parts per thread it
/// replaced: 512^2 294-296 against 277-279 GF/s, 768^2 294 against
/// 282-285, 1024^2 289 against 275-277, 2048^2 286-288 against 267-271,
/// 256x784x512 282-283 against 268-270, 784x256x512 302-303 against
/// 291-295, 4096x256x768 293 against 292; two own parts per thread (the
/// operand packed twice per thread) ran 512^2 272, 768^2 275-279, 1024^2
/// 272-273, 2048^2 277-279.
const OWN_PACKS_FROM: usize = 8;

/// The spans of micro-tiles that the threads of a product from
/// [`SHARE_FROM`] up claim as they go.
///
/// A thread's first claim is an equal share, so when every thread starts
/// on time each runs one span and packs what it reads once. A thread that
/// finishes while tiles are left (another started late: woken from its
/// park, or queued behind another program on its CPU) claims a part of
/// what is left, `1 / threads` of it but at least [`MIN_PART_TILES`], so
/// the late thread's share goes to the threads that are running and the
/// late one still finds the rest.
pub(super) struct Spans {
    tiles: usize,
    threads: usize,
    /// Tiles claimed so far, from the front.
    next: AtomicUsize,
}

impl Spans {
    pub(super) fn new(tiles: usize, threads: usize) -> Spans {
        Spans { tiles, threads: threads.max(1), next: AtomicUsize::new(0) }
    }

    /// The next span `(start, end)` of tiles, or None when every tile is
    /// claimed. `first`: whether this is the calling thread's first claim.
    pub(super) fn claim(&self, first: bool) -> Option<(usize, usize)> {
        let share = self.tiles.div_ceil(self.threads);
        let mut start = self.next.load(Ordering::Relaxed);
        loop {
            let left = self.tiles.saturating_sub(start);
            if left == 0 {
                return None;
            }
            let size = if first { share } else { left.div_ceil(self.threads).max(MIN_PART_TILES) };
            let end = start + size.min(left);
            match self.next.compare_exchange_weak(start, end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some((start, end)),
                Err(now) => start = now,
            }
        }
    }
}

/// Which operand the parts of a threaded product pack together.
#[derive(Clone, Copy)]
enum Sharing<'a> {
    /// Each part packs its own blocks.
    Neither,
    /// Parts own columns of the output and share the packed blocks of A.
    A(&'a SharedPacks),
    /// Parts own rows of the output and share the packed blocks of B.
    B(&'a SharedPacks),
    /// Parts own columns of the output (of product `.0`); each thread packs
    /// all of A once, into its own buffer, for all the parts it runs.
    ThreadA(u64),
    /// Parts own rows of the output; each thread packs all of B once.
    ThreadB(u64),
}

/// `dst = (accumulate ? dst : 0) + a @ b` for `a: m x k`, `b: k x n` and an
/// `m x n` destination with row stride `dst_rs`, on `threads` threads, with
/// `kernel`'s register tile.
///
/// # Safety
/// `kernel` is supported by this CPU; every element of the `m x k` and
/// `k x n` operands is readable; `dst` addresses a writable `m x n` matrix
/// with row stride `dst_rs >= n` that nothing else accesses during the
/// call; `k > 0`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm(kernel: Kernel, dst: *mut f32, dst_rs: usize, accumulate: bool, a: Operand, b: Operand, m: usize, k: usize, n: usize, threads: usize) {
    if kernel == Kernel::Avx512 && small::narrow_applies((a.rs, a.cs), (b.rs, b.cs), m, k, n) {
        // SAFETY: forwarded from the caller; the CPU has AVX-512F.
        return unsafe { small::narrow(dst, dst_rs, accumulate, a, b, m, k, n, threads) };
    }
    if kernel == Kernel::Avx512 && threads <= 1 && small::applies(a, b, m, k, n) {
        // SAFETY: forwarded from the caller; the CPU has AVX-512F.
        return unsafe { small::sgemm(dst, dst_rs, accumulate, a, b, m, k, n) };
    }
    let out = Out { ptr: dst, rs: dst_rs };
    let product = Product { out, accumulate, a, b, m, k, n };
    // SAFETY: forwarded from the caller.
    unsafe {
        match kernel {
            Kernel::Avx2 => product.run::<Avx2>(threads),
            Kernel::Avx512 => product.run::<Avx512>(threads),
        }
    }
}

/// One product's operands and sizes.
#[derive(Clone, Copy)]
struct Product {
    out: Out,
    accumulate: bool,
    a: Operand,
    b: Operand,
    m: usize,
    k: usize,
    n: usize,
}

impl Product {
    /// Compute the product on `threads` threads with tile `T`.
    ///
    /// Split the larger output dimension in whole micro-tiles; columns
    /// when square, which measured faster than splitting rows (1024^3 on
    /// two threads: 14.1-15.9 ms vs 13.3-18.5 ms; 2048^3: 119-129 vs
    /// 126-149 ms). Below [`SHARE_FROM`] multiply-adds, into contiguous
    /// parts that the threads claim one at a time ([`split_parts`]), each
    /// thread packing the operand every part reads whole (A when columns
    /// are split) once for all the parts it runs (up to [`MAX_KEPT`] floats
    /// of it). From there up, into one span per thread ([`Spans`]), each
    /// packing its own blocks while a thread's share is at least
    /// [`OWN_PACKS_FROM`] tiles, and the blocks every span reads packed
    /// once for all ([`with_shared`]) when it is narrower. Own spans let
    /// threads that run out of spans take row blocks of the others' last
    /// depth step ([`Tail`]).
    ///
    /// # Safety
    /// As for [`sgemm`], with `T` the tile of a supported kernel.
    unsafe fn run<T: Tile>(self, threads: usize) {
        if threads <= 1 {
            // SAFETY: forwarded from the caller.
            return unsafe { with_packs(|p| self.blocked::<T>(p, Sharing::Neither, None)) };
        }
        let by_cols = self.n >= self.m;
        let (len, unit) = if by_cols { (self.n, T::NR) } else { (self.m, T::MR) };
        let tiles = len.div_ceil(unit);
        // Micro-tiles s..e along the split dimension: output rows (or
        // columns) in whole tiles.
        let span = |s: usize, e: usize, sharing: Sharing<'_>, tail: Option<&Tail<Step>>| {
            let (s, e) = ((s * unit).min(len), (e * unit).min(len));
            if s >= e {
                return;
            }
            // SAFETY: forwarded from the caller; a span reads a sub-block of
            // the operands and writes the rows (or columns) s..e of dst,
            // disjoint from every other span, and the loop returns only when
            // every span is done.
            unsafe {
                let part = if by_cols {
                    Product { out: self.out.from(0, s), b: self.b.from(0, s), n: e - s, ..self }
                } else {
                    Product { out: self.out.from(s, 0), a: self.a.from(s, 0), m: e - s, ..self }
                };
                with_packs(|p| part.blocked::<T>(p, sharing, tail));
            }
        };
        // Every part sees the whole shared operand, so it blocks it as the
        // whole product does.
        let (mc, kc, nc) = blocking::<T>(self.m, self.k, self.n);
        let (across, block) = if by_cols { (self.m.div_ceil(mc), mc * kc) } else { (self.n.div_ceil(nc), nc * kc) };
        if self.m.saturating_mul(self.k).saturating_mul(self.n) < SHARE_FROM {
            let whole = self.k.div_ceil(kc).saturating_mul(across).saturating_mul(block);
            let sharing = if whole > MAX_KEPT {
                Sharing::Neither
            } else {
                let id = PRODUCTS.fetch_add(1, Ordering::Relaxed) + 1;
                if by_cols {
                    Sharing::ThreadA(id)
                } else {
                    Sharing::ThreadB(id)
                }
            };
            let parts = split_parts(tiles, threads);
            return team::for_each_part(parts, |t| span(tiles * t / parts, tiles * (t + 1) / parts, sharing, None));
        }
        let spans = Spans::new(tiles, threads);
        // One part's spans, claimed until none is left.
        let claim_spans = |sharing: Sharing<'_>, tail: Option<&Tail<Step>>| {
            let mut first = true;
            while let Some((s, e)) = spans.claim(first) {
                first = false;
                span(s, e, sharing, tail);
            }
        };
        if tiles / threads >= OWN_PACKS_FROM {
            // Each part's spans open their last steps in the part's tail;
            // a part out of spans helps with the others'.
            let tails: Vec<Tail<Step>> = (0..threads).map(|_| Tail::default()).collect();
            let running = AtomicUsize::new(0);
            return team::for_each_part(threads, |t| {
                running.fetch_add(1, Ordering::AcqRel);
                claim_spans(Sharing::Neither, Some(&tails[t]));
                running.fetch_sub(1, Ordering::AcqRel);
                // SAFETY: a step opened in a tail stays valid while its
                // blocks are claimable (`Tail::share`).
                with_packs(|packs| help_until_done(&tails, &running, |step, block| unsafe { step.pack_and_run::<T>(packs, block) }));
            });
        }
        with_shared(self.k.div_ceil(kc), across, block, |shared| {
            let sharing = match shared {
                Some(s) if by_cols => Sharing::A(s),
                Some(s) => Sharing::B(s),
                None => Sharing::Neither,
            };
            team::for_each_part(threads, |_| claim_spans(sharing, None))
        });
    }

    /// The sequential blocked product on one thread.
    ///
    /// # Safety
    /// As for [`Product::run`].
    unsafe fn blocked<T: Tile>(self, packs: &mut Packs, sharing: Sharing<'_>, tail: Option<&Tail<Step>>) {
        let Product { out, accumulate, a, b, m, k, n } = self;
        let (tm, tn) = (T::MR, T::NR);
        let (mc_max, kc_max, nc_max) = blocking::<T>(m, k, n);
        let (m_blocks, k_blocks, n_blocks) = (m.div_ceil(mc_max), k.div_ceil(kc_max), n.div_ceil(nc_max));
        let (hold_a, hold_b) = match sharing {
            Sharing::Neither => (Held::Own, Held::Own),
            Sharing::A(s) => (Held::Shared(s), Held::Own),
            Sharing::B(s) => (Held::Own, Held::Shared(s)),
            Sharing::ThreadA(id) => (Held::Kept(id), Held::Own),
            Sharing::ThreadB(id) => (Held::Own, Held::Kept(id)),
        };
        let pa = packs.a.ensure(hold_a.floats(k_blocks * m_blocks, mc_max * kc_max));
        let pb = packs.b.ensure(hold_b.floats(k_blocks * n_blocks, nc_max * kc_max));
        for (jb, jc) in (0..n).step_by(nc_max).enumerate() {
            let nc = nc_max.min(n - jc);
            for (kb, pc) in (0..k).step_by(kc_max).enumerate() {
                let kc = kc_max.min(k - pc);
                // Later k-blocks add to what the first one wrote.
                let acc = accumulate || pc > 0;
                // SAFETY: the block is inside b; pb has room for nc_max *
                // kc_max floats per block it holds (nc_max is a multiple of
                // NR), and every part packs a shared block alike.
                let pb = unsafe {
                    packed_block(packs, hold_b, pb, (kb, jb), (k_blocks, n_blocks), nc_max * kc_max, nc.div_ceil(tn), |dst, first, count| {
                        let j = first * tn;
                        pack_b::<T>(dst.add(j * kc), b, pc, jc + j, kc, (count * tn).min(nc - j));
                    })
                };
                let step = Step { out, a, m, pb, jc, nc, pc, kc, acc, mc_max };
                // The last step writes the output for the last time, so
                // other threads may run some of its row blocks.
                if let Some(tail) = tail.filter(|_| jb + 1 == n_blocks && kb + 1 == k_blocks && m_blocks > 1) {
                    // SAFETY: as below; the tail's helpers pack their own A
                    // and `share` returns only when their blocks are done,
                    // before `pb` is packed again.
                    tail.share(Open { step, blocks: m_blocks }, |ib| unsafe { step.pack_and_run::<T>(packs, ib) });
                    continue;
                }
                for ib in 0..m_blocks {
                    // Between blocks (about a millisecond of work each on a
                    // large product) a stopped call leaves the rest undone.
                    // Stopping here claims no shared panel, so no other part
                    // is left waiting for one.
                    if crate::interrupt::poll() {
                        return;
                    }
                    let (ic, mc) = step.rows(ib);
                    // SAFETY: as for B, with mc_max a multiple of MR.
                    let pa = unsafe {
                        packed_block(packs, hold_a, pa, (kb, ib), (k_blocks, m_blocks), mc_max * kc_max, mc.div_ceil(tm), |dst, first, count| {
                            let i = first * tm;
                            pack_a::<T>(dst.add(i * kc), a, ic + i, pc, (count * tm).min(mc - i), kc);
                        })
                    };
                    // SAFETY: pa holds row block ib's packed A.
                    unsafe { step.run::<T>(ib, pa) };
                }
            }
        }
    }
}

/// One step `(jc, pc)` of a part's blocked product, its block of B packed:
/// what any thread needs to run one of its row blocks besides the block
/// of A.
#[derive(Clone, Copy)]
pub(super) struct Step {
    out: Out,
    a: Operand,
    /// Rows of the part.
    m: usize,
    /// The packed `kc x nc` block of B.
    pb: *const f32,
    jc: usize,
    nc: usize,
    pc: usize,
    kc: usize,
    /// Whether the step adds to the output.
    acc: bool,
    mc_max: usize,
}

// SAFETY: a step is shared only through a `Tail`, whose owner keeps the
// packed block and the operands alive and unchanged while any thread can
// claim a block of it; threads write disjoint row blocks of the output.
unsafe impl Send for Step {}

impl Step {
    /// The first row and the rows of row block `ib`.
    fn rows(&self, ib: usize) -> (usize, usize) {
        let ic = ib * self.mc_max;
        (ic, self.mc_max.min(self.m - ic))
    }

    /// Row block `ib`'s tiles from its packed block of A, `pa`.
    ///
    /// # Safety
    /// `pa` holds row block `ib` of A packed for columns `pc .. pc + kc`
    /// with tile `T`; the step's operands and packed B are alive, and no
    /// other thread writes row block `ib` of the step's output meanwhile.
    unsafe fn run<T: Tile>(&self, ib: usize, pa: *const f32) {
        let (ic, mc) = self.rows(ib);
        let (kc, out) = (self.kc, self.out);
        for jr in (0..self.nc).step_by(T::NR) {
            for ir in (0..mc).step_by(T::MR) {
                let (mr, nr) = (T::MR.min(mc - ir), T::NR.min(self.nc - jr));
                // SAFETY: panels ir / MR and jr / NR of the packed blocks;
                // the tile (ic + ir, jc + jr) of size mr x nr is inside the
                // output.
                unsafe {
                    let (ap, bp) = (pa.add(ir * kc), self.pb.add(jr * kc));
                    let c = out.ptr.add((ic + ir) * out.rs + self.jc + jr);
                    T::any(kc, ap, bp, c, out.rs, self.acc, mr, nr);
                }
            }
        }
    }

    /// Pack row block `ib` of A into this thread's buffer and run it.
    ///
    /// # Safety
    /// As for [`Step::run`], without `pa`; `packs` are the calling thread's.
    unsafe fn pack_and_run<T: Tile>(&self, packs: &mut Packs, ib: usize) {
        // As between the blocks of `blocked`.
        if crate::interrupt::poll() {
            return;
        }
        let (ic, mc) = self.rows(ib);
        let pa = packs.a.ensure(self.mc_max * self.kc);
        // SAFETY: pa has room for the block's panels (mc_max is a multiple
        // of MR); the block lies inside A.
        unsafe {
            pack_a::<T>(pa, self.a, ic, self.pc, mc, self.kc);
            self.run::<T>(ib, pa);
        }
    }
}

/// Where a part finds the packed blocks of one operand.
#[derive(Clone, Copy)]
enum Held<'a> {
    /// Packed by the part itself, block after block, into one block's room.
    Own,
    /// In the buffer all parts pack together.
    Shared(&'a SharedPacks),
    /// Packed whole into this thread's buffer, once for all the parts of
    /// product `.0` that the thread runs ([`Packs::keep`]).
    Kept(u64),
}

impl Held<'_> {
    /// Floats of this thread's buffer the operand needs, for `blocks` blocks
    /// of `block` floats.
    fn floats(self, blocks: usize, block: usize) -> usize {
        match self {
            Held::Own => block,
            Held::Shared(_) => 0,
            Held::Kept(_) => blocks * block,
        }
    }
}

/// Block `at` = (k-block, block across) of an operand held as `held`, in
/// a grid of `grid` = (k-blocks, blocks across) blocks of `block` floats,
/// packed where it is not yet: `pack(dst, first, count)` packs its panels
/// `first .. first + count` into `dst`, the block's start. `own` is this
/// thread's buffer for the operand.
///
/// # Safety
/// `own` has room for `held.floats(grid.0 * grid.1, block)` floats; `pack`
/// writes only inside the block it is given.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn packed_block(
    packs: &mut Packs,
    held: Held<'_>,
    own: *mut f32,
    at: (usize, usize),
    grid: (usize, usize),
    block: usize,
    panels: usize,
    pack: impl Fn(*mut f32, usize, usize),
) -> *const f32 {
    match held {
        // SAFETY: forwarded from the caller.
        Held::Shared(s) => unsafe { s.get(at.0, at.1, panels, |first, count, dst| pack(dst, first, count)) },
        Held::Kept(id) => {
            let index = at.0 * grid.1 + at.1;
            // SAFETY: block `index` of the grid lies in `own`.
            let dst = unsafe { own.add(index * block) };
            if !packs.keep(id, grid.0 * grid.1, index) {
                pack(dst, 0, panels);
            }
            dst
        }
        Held::Own => {
            pack(own, 0, panels);
            own
        }
    }
}

/// Run `f` with this thread's packing buffers (fresh ones if this thread is
/// already inside a GEMM, which only a re-entrant caller could cause).
pub(super) fn with_packs(f: impl FnOnce(&mut Packs)) {
    PACKS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut packs) => f(&mut packs),
        Err(_) => f(&mut Packs::default()),
    })
}
