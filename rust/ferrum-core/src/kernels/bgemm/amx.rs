//! The bf16 product on AMX tiles (`tdpbf16ps`).
//!
//! An output block of 32 x 32 lives in four f32 tiles (tmm0-3) over the
//! whole of k, fed each 32-k step by two A tiles (tmm4-5, 16 rows each) and
//! two B tiles (tmm6-7, 16 columns each): four tile products for four
//! tile loads. A is packed in 32-row blocks by [`super::amx_pack`]; B
//! reuses the 32-column k-pair panels of [`super::pack`], whose rows hold
//! the two B tiles' rows side by side (64 bytes each, 128 apart). k is
//! padded with zero pairs to whole 32-k steps, rows and columns past the
//! matrix with zeros. The block's sums go through a small f32 scratch and
//! are rounded to bf16 once (`vcvtneps2bf16`, as the `vdpbf16ps` kernel).

use std::arch::x86_64::*;
use std::cell::RefCell;
use std::mem::transmute;

use super::amx_pack::{pack_a_block, K_STEP, ROWS, STEP_LEN};
use super::pack::{pack_b, Operand16};
use super::NR;
use crate::kernels::amx::{tile_dpbf16ps, tile_load, tile_store, tile_zero, TileConfig};
use crate::kernels::team::{self, Shared};

/// Row blocks per part of work, and column panels: a part's B panels
/// (4 x 32 columns) are reused by its row blocks (up to 8 x 32 rows), so
/// they stay in L2 while A's blocks pass.
const ROW_BLOCKS: usize = 8;
const COL_PANELS: usize = 4;

/// Bytes between rows of the f32 block scratch (32 floats).
const SCRATCH_RS: usize = 32 * 4;

/// `dst[m x n] = (accumulate ? dst : 0) + a[m x k] @ b[k x n]` in bf16 with
/// f32 accumulation on AMX; `dst` rows start `dst_rs` elements apart.
///
/// # Safety
/// `crate::kernels::amx::bf16_available()` and [`super::available`] are true;
/// `a` and `b` address `m x k` and `k x n` matrices; `dst` addresses a
/// writable `m x n` matrix that neither operand overlaps; `m`, `n` and `k`
/// are above 0.
#[allow(clippy::too_many_arguments)]
pub unsafe fn bgemm_amx(dst: *mut u16, dst_rs: usize, accumulate: bool, a: Operand16, b: Operand16, m: usize, k: usize, n: usize, threads: usize) {
    let steps = k.div_ceil(K_STEP);
    // A's blocks, and B's panels of k pairs padded to whole steps.
    let a_len = m.div_ceil(ROWS) * steps * STEP_LEN;
    let b_len = n.div_ceil(NR) * steps * (K_STEP / 2) * NR;
    with_buffers(a_len, b_len, |a_buf, b_buf| {
        // SAFETY: as this function's (the buffers hold every block and panel).
        unsafe { multiply(dst, dst_rs, accumulate, a, b, m, k, n, threads, a_buf, b_buf) }
    });
}

/// Packed elements of each operand kept with the calling thread for its
/// next product (8 Mi: 16 MiB of A's bf16, 32 MiB of B's pair words; a
/// 2048 x 2048 operand either way): a fresh buffer page-faults every 4 KiB
/// it first touches.
const KEEP: usize = 1 << 23;

thread_local! {
    static BUFFERS: RefCell<(Vec<u16>, Vec<u32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// `f` with `a_len` bf16 and `b_len` words, each starting on a cache line: this thread's
/// kept buffers, or fresh ones when they are taken (a product inside a product).
fn with_buffers(a_len: usize, b_len: usize, f: impl FnOnce(*mut u16, *mut u32)) {
    fn run(bufs: &mut (Vec<u16>, Vec<u32>), a_len: usize, b_len: usize, f: impl FnOnce(*mut u16, *mut u32)) {
        // 64 bytes more than asked, to start on a cache line.
        if bufs.0.len() < a_len + 32 {
            bufs.0.resize(a_len + 32, 0);
        }
        if bufs.1.len() < b_len + 16 {
            bufs.1.resize(b_len + 16, 0);
        }
        let (a_off, b_off) = (bufs.0.as_ptr().align_offset(64), bufs.1.as_ptr().align_offset(64));
        f(bufs.0[a_off..].as_mut_ptr(), bufs.1[b_off..].as_mut_ptr());
        if bufs.0.len() > KEEP {
            bufs.0 = Vec::new();
        }
        if bufs.1.len() > KEEP {
            bufs.1 = Vec::new();
        }
    }
    BUFFERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut bufs) => run(&mut bufs, a_len, b_len, f),
        Err(_) => run(&mut (Vec::new(), Vec::new()), a_len, b_len, f),
    })
}

/// [`bgemm_amx`] with its packing buffers, `row_blocks * a_len` bf16 at `a_buf` and
/// `col_panels * b_len` words at `b_buf`, 64-byte aligned.
///
/// # Safety
/// As [`bgemm_amx`]; the buffers hold that much and nothing else reads them meanwhile.
#[allow(clippy::too_many_arguments)]
unsafe fn multiply(dst: *mut u16, dst_rs: usize, accumulate: bool, a: Operand16, b: Operand16, m: usize, k: usize, n: usize, threads: usize, a_buf: *mut u16, b_buf: *mut u32) {
    let steps = k.div_ceil(K_STEP);
    let kp = steps * K_STEP / 2;
    let (row_blocks, col_panels) = (m.div_ceil(ROWS), n.div_ceil(NR));
    let threaded = threads > 1;
    let (a_len, b_len) = (steps * STEP_LEN, kp * NR);
    let (pa, pb) = (Shared(a_buf), Shared(b_buf));
    team::for_each_part_if(threaded, row_blocks + col_panels, |i| {
        let (pa, pb) = (pa, pb);
        // SAFETY: part i writes block or panel i of one packed buffer, disjoint from every
        // other part's; the operands cover the matrices (caller's contract); the CPU has
        // AVX-512 BW (super::available).
        unsafe {
            if i < row_blocks {
                pack_a_block(std::slice::from_raw_parts_mut(pa.0.add(i * a_len), a_len), a, i, m, k);
            } else {
                let j = i - row_blocks;
                let panel = std::slice::from_raw_parts_mut(pb.0.add(j * b_len), b_len);
                pack_b(panel, b, j * NR, n, k);
                // The pairs past k, to the whole last step.
                panel[k.div_ceil(2) * NR..].fill(0);
            }
        }
    });
    // Enough parts for every thread: fewer row blocks per part when the matrix is short.
    let mut rows_per_part = ROW_BLOCKS.min(row_blocks);
    let col_parts = col_panels.div_ceil(COL_PANELS);
    while rows_per_part > 1 && row_blocks.div_ceil(rows_per_part) * col_parts < 2 * threads {
        rows_per_part = rows_per_part.div_ceil(2);
    }
    let row_parts = row_blocks.div_ceil(rows_per_part);
    let out = Shared(dst);
    let config = TileConfig::default()
        .with(0, 16, 64)
        .with(1, 16, 64)
        .with(2, 16, 64)
        .with(3, 16, 64)
        .with(4, 16, 64)
        .with(5, 16, 64)
        .with(6, 16, 64)
        .with(7, 16, 64);
    team::for_each_part_if(threaded, row_parts * col_parts, |part| {
        let (out, pa, pb) = (out, pa, pb);
        let (rp, cp) = (part / col_parts, part % col_parts);
        #[repr(align(64))]
        struct Scratch([f32; ROWS * NR]);
        let mut scratch = Scratch([0.0; ROWS * NR]);
        // SAFETY: the caller checked AMX-BF16 is usable; the guard releases the tiles.
        let _tiles = unsafe { config.load() };
        for jp in cp * COL_PANELS..((cp + 1) * COL_PANELS).min(col_panels) {
            for ib in rp * rows_per_part..((rp + 1) * rows_per_part).min(row_blocks) {
                let (i0, j0) = (ib * ROWS, jp * NR);
                // SAFETY: the block and panel were packed above with `steps` steps each; the
                // output block (rows i0.., columns j0..) lies inside dst and belongs to this
                // part alone; the tiles are configured on this thread.
                unsafe {
                    block(steps, pa.0.add(ib * a_len), pb.0.add(jp * b_len), &mut scratch.0);
                    store(&scratch.0, out.0.add(i0 * dst_rs + j0), dst_rs, (m - i0).min(ROWS), (n - j0).min(NR), accumulate);
                }
            }
        }
    });
}

/// The 32 x 32 f32 sums of a packed A block and B panel, over `steps` 32-k steps, into `c`.
///
/// # Safety
/// The tiles are configured as 16 rows of 64 bytes; `a` holds `steps * STEP_LEN` bf16 and
/// `b` `steps * 16 * NR` pair words.
#[inline(always)]
unsafe fn block(steps: usize, a: *const u16, b: *const u32, c: &mut [f32; ROWS * NR]) {
    const A_RS: usize = K_STEP * 2;
    const B_RS: usize = NR * 4;
    // SAFETY: every tile load reads 16 rows of 64 bytes inside the packed step (caller's
    // contract); the stores write the 32 x 32 scratch.
    unsafe {
        tile_zero!(tmm0);
        tile_zero!(tmm1);
        tile_zero!(tmm2);
        tile_zero!(tmm3);
        for q in 0..steps {
            let (a, b) = (a.add(q * STEP_LEN), b.add(q * (K_STEP / 2) * NR));
            tile_load!(tmm4, a, A_RS);
            tile_load!(tmm5, a.add(16 * K_STEP), A_RS);
            tile_load!(tmm6, b, B_RS);
            tile_load!(tmm7, b.add(16), B_RS);
            tile_dpbf16ps!(tmm0, tmm4, tmm6);
            tile_dpbf16ps!(tmm1, tmm4, tmm7);
            tile_dpbf16ps!(tmm2, tmm5, tmm6);
            tile_dpbf16ps!(tmm3, tmm5, tmm7);
        }
        let c = c.as_mut_ptr();
        tile_store!(tmm0, c, SCRATCH_RS);
        tile_store!(tmm1, c.add(16), SCRATCH_RS);
        tile_store!(tmm2, c.add(16 * NR), SCRATCH_RS);
        tile_store!(tmm3, c.add(16 * NR + 16), SCRATCH_RS);
    }
}

/// `c[0..rows][0..cols] = (accumulate ? c : 0) + sums`, rounded to bf16 once.
///
/// # Safety
/// The CPU has AVX-512 F, BW, VL and BF16; `c` addresses a writable `rows x cols` block
/// (`rows <= 32`, `cols <= 32`) whose rows start `rs_c` elements apart.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
unsafe fn store(sums: &[f32; ROWS * NR], c: *mut u16, rs_c: usize, rows: usize, cols: usize, accumulate: bool) {
    for r in 0..rows {
        for half in 0..2 {
            let lanes = cols.saturating_sub(half * 16).min(16);
            if lanes == 0 {
                break;
            }
            let mask: __mmask16 = if lanes == 16 { 0xFFFF } else { (1u16 << lanes) - 1 };
            // SAFETY: row r < rows and columns below cols are inside the block; the scratch
            // row holds 32 floats; the bf16 vectors are the same bits reinterpreted.
            unsafe {
                let at = c.add(r * rs_c + half * 16) as *mut i16;
                let mut v = _mm512_loadu_ps(sums.as_ptr().add(r * NR + half * 16));
                if accumulate {
                    // bf16 is the high half of an f32: widen by shifting into place.
                    let old = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, at));
                    v = _mm512_add_ps(v, _mm512_castsi512_ps(_mm512_slli_epi32::<16>(old)));
                }
                let narrow: __m256i = transmute(_mm512_cvtneps_pbh(v));
                _mm256_mask_storeu_epi16(at, mask, narrow);
            }
        }
    }
}
