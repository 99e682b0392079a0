//! The int8 products on AMX tiles: `tdpbusd` on 32 x 32 blocks of output
//! (four i32 tiles), from two activation tiles (16 rows x 64 bytes of k
//! each) and two weight tiles (16 quads of k x 16 columns).
//!
//! The activations come packed in row tiles: `k.div_ceil(64)` blocks of 16
//! rows x 64 bytes, one after the other, zero past the matrix's edges. The
//! weights are the packed panels every tile reads (`PackedQ8`): a panel's
//! quad `q` holds its 32 columns' words side by side, so a weight tile is
//! 16 quads of one 16-column half, rows `4 * NR` bytes apart.
//!
//! A block's sums stay in the tiles over all of k: each step loads four
//! tiles for four products, the ratio that keeps the multiplier busy.
//! Blocks are split over the team's threads in groups (row tiles x column
//! panels) so that a weight panel is read once by all the row tiles of its
//! group while it sits in L2; each part of the loop loads the tile
//! configuration once and releases the tiles when done.

use super::NR;
use crate::kernels::amx::int8_block::{int8_block, ColumnPanel, RowTiles, U8_ROWS};
use crate::kernels::amx::TileConfig;
use crate::kernels::team;

/// Rows of an activation tile.
pub(super) const AR: usize = 16;
/// Bytes of k in an activation tile's row (16 quads).
pub(super) const KB: usize = 64;
/// Bytes of one activation block (16 rows x 64 bytes).
pub(super) const BLOCK: usize = AR * KB;
/// Quads of k per step.
const KQ_STEP: usize = KB / 4;

/// Row tiles (pairs of them) and column panels per part of the loop.
const ROW_PAIRS: usize = 4;
const COL_PANELS: usize = 4;

/// One block's exact sums: 32 rows of a panel's NR columns.
type Block = [[i32; NR]; 2 * AR];

/// Runs `finish(i0, jp, rows)` for every 32 x 32 block (16 x 32 in the last
/// row tile when their count is odd) of the product of the row tiles `a`
/// (`row_tiles` of `kq.div_ceil(16)` blocks) and the weight panels `b`
/// (`col_panels` of `kq * NR` words and the zero tail): `rows` are the
/// block's sums from row `i0` on (rows past the matrix's edge included),
/// complete over all of k. Blocks are split over `threads` (1: the caller
/// alone); `finish` runs on the thread that computed the block.
///
/// The caller checked [`crate::kernels::amx::int8_available`].
pub(super) fn for_each_block(a: &[u8], b: &[u32], kq: usize, row_tiles: usize, col_panels: usize, threads: usize, finish: impl Fn(usize, usize, &[[i32; NR]]) + Sync) {
    let steps = kq.div_ceil(KQ_STEP);
    // The tiles read whole steps: every row tile and panel must be there in full.
    assert!(a.len() >= row_tiles * steps * BLOCK, "AMX row tiles: {} bytes for {row_tiles} tiles of {steps} blocks", a.len());
    assert!(col_panels == 0 || b.len() >= (col_panels - 1) * kq * NR + steps * KQ_STEP * NR, "AMX weight panels: {} words", b.len());
    assert!(crate::kernels::amx::int8_available(), "AMX-INT8 is not usable");
    let pairs = row_tiles.div_ceil(2);
    let mut pairs_per_part = ROW_PAIRS.min(pairs);
    let col_parts = col_panels.div_ceil(COL_PANELS);
    while pairs_per_part > 1 && pairs.div_ceil(pairs_per_part) * col_parts < 2 * threads {
        pairs_per_part = pairs_per_part.div_ceil(2);
    }
    let row_parts = pairs.div_ceil(pairs_per_part);
    let config = (0..8).fold(TileConfig::default(), |c, t| c.with(t, AR, KB));
    team::for_each_part_if(threads > 1, row_parts * col_parts, |part| {
        let (rp, cp) = (part / col_parts, part % col_parts);
        let ps = rp * pairs_per_part..((rp + 1) * pairs_per_part).min(pairs);
        let mut sums: Block = [[0; NR]; 2 * AR];
        // SAFETY: int8_available() (asserted above) said AMX-INT8 is usable.
        let _tiles = unsafe { config.load() };
        for jp in cp * COL_PANELS..((cp + 1) * COL_PANELS).min(col_panels) {
            let panel = ColumnPanel { first: b[jp * kq * NR..].as_ptr().cast(), row_bytes: 4 * NR };
            for p in ps.clone() {
                let t0 = 2 * p;
                let two = t0 + 1 < row_tiles;
                // Row tile t0's steps are blocks one after the other, and tile t0 + 1 follows them.
                let rows = RowTiles { first: a[t0 * steps * BLOCK..].as_ptr(), row_bytes: KB, step_bytes: BLOCK, second: two.then_some(steps * BLOCK) };
                // SAFETY: the configuration is loaded; the row tiles t0 (and t0 + 1 when `two`)
                // and the panel's `steps` steps lie inside `a` and `b` (asserted above).
                unsafe { int8_block::<U8_ROWS>(steps, rows, panel, sums.as_mut_ptr().cast(), 4 * NR) };
                finish(t0 * AR, jp, &sums[..if two { 2 * AR } else { AR }]);
            }
        }
    });
}
