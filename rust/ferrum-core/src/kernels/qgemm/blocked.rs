//! The blocked loop both int8 products run: the output split into blocks of
//! row panels x column panels, one block per part of a team loop (both
//! cores), and within a block k walked in blocks of [`KC`] quads, so that a
//! column panel's slice of k (`KC * NR` words, 16 KiB) stays in L1 while
//! every row panel of the block passes over it, and the block's row panels'
//! slices (`ROW_PANELS * KC * MR` words, 48 KiB) stay in L2.

use super::{portable, MR, NR};
use crate::kernels::team;

/// Quads of k per block (512 values of k).
pub(super) const KC: usize = 128;
/// Row panels per block of work, and column panels: a block's packed weight
/// panels are reused by all its row panels while they sit in cache.
const ROW_PANELS: usize = 8;
const COL_PANELS: usize = 4;

/// One tile's exact sums.
pub(super) type Sums = [[i32; NR]; MR];

/// The sums of one tile over quads `q0..q0 + kq` on the VNNI tile or the
/// portable one, added to `acc` unless `first`.
fn dot(vnni: bool, kq: usize, a: &[u32], b: &[u32], acc: &mut Sums, first: bool) {
    debug_assert!(a.len() >= kq * MR && b.len() >= kq * NR);
    #[cfg(target_arch = "x86_64")]
    if vnni {
        // SAFETY: the caller checked vnni_available(); the slices hold kq quads (asserted above).
        unsafe { super::avx512::dot(kq, a.as_ptr(), b.as_ptr(), acc, first) };
        return;
    }
    let _ = vnni;
    portable::dot(kq, a, b, acc, first);
}

/// Runs `finish(ip, jp, sums)` for every tile of an `m x n` product of the
/// packed row panels `a` (`row_panels` of `kq * MR` words) and column panels
/// `b` (`col_panels` of `kq * NR` words), each tile's sums complete over all
/// of k. Tiles are split over `threads` (1: the caller alone); `finish` is
/// called once per tile, from whichever thread computed it.
#[allow(clippy::too_many_arguments)]
pub(super) fn for_each_tile(
    a: &[u32],
    b: &[u32],
    kq: usize,
    row_panels: usize,
    col_panels: usize,
    threads: usize,
    vnni: bool,
    finish: impl Fn(usize, usize, &Sums) + Sync,
) {
    let mut rows_per_block = ROW_PANELS.min(row_panels);
    let col_blocks = col_panels.div_ceil(COL_PANELS);
    while rows_per_block > 1 && row_panels.div_ceil(rows_per_block) * col_blocks < 2 * threads {
        rows_per_block = rows_per_block.div_ceil(2);
    }
    let row_blocks = row_panels.div_ceil(rows_per_block);
    let k_blocks = kq.div_ceil(KC).max(1);
    team::for_each_part_if(threads > 1, row_blocks * col_blocks, |part| {
        let (rb, cb) = (part / col_blocks, part % col_blocks);
        let (ips, jps) = (rb * rows_per_block..((rb + 1) * rows_per_block).min(row_panels), cb * COL_PANELS..((cb + 1) * COL_PANELS).min(col_panels));
        if k_blocks == 1 {
            // All of k in one pass: the sums need no home between blocks.
            let mut acc = [[0; NR]; MR];
            for jp in jps {
                for ip in ips.clone() {
                    dot(vnni, kq, &a[ip * kq * MR..], &b[jp * kq * NR..], &mut acc, true);
                    finish(ip, jp, &acc);
                }
            }
            return;
        }
        // The block's tiles keep their partial sums here from one block of k to the next.
        let mut held = vec![[[0i32; NR]; MR]; ips.len() * jps.len()];
        for kb in 0..k_blocks {
            let (q0, q1) = (kb * KC, ((kb + 1) * KC).min(kq));
            for (t, jp) in jps.clone().enumerate() {
                let pb = &b[jp * kq * NR + q0 * NR..];
                for (s, ip) in ips.clone().enumerate() {
                    let acc = &mut held[t * ips.len() + s];
                    dot(vnni, q1 - q0, &a[ip * kq * MR + q0 * MR..], pb, acc, kb == 0);
                    if kb + 1 == k_blocks {
                        finish(ip, jp, acc);
                    }
                }
            }
        }
    });
}
