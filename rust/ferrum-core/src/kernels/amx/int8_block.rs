//! The int8 block both AMX int8 products run: 32 x 32 exact sums (four i32
//! tiles) from two row tiles and two column tiles a step, four loads for
//! four products, the ratio that keeps the tile multiplier busy.
//!
//! The int8 GEMM (`kernels::qgemm::amx`) and the int8 convolution
//! (`quant::qconv_amx`) lay their operands out differently (activations
//! packed block after block, or filter rows `kpad` bytes long) and take the
//! signed operand on different sides (`tdpbusd`: u8 rows times s8 columns;
//! `tdpbsud`: s8 rows times u8 columns), so [`RowTiles`] says where the
//! rows lie and the const parameter which instruction multiplies.

use super::{tile_dpbsud, tile_dpbusd, tile_load, tile_store, tile_zero};

/// `tdpbusd`: the row tiles hold u8, the column tiles s8.
pub(crate) const U8_ROWS: u8 = 0;
/// `tdpbsud`: the row tiles hold s8, the column tiles u8.
pub(crate) const S8_ROWS: u8 = 1;

/// Bytes of k in a tile row (16 quads).
const KB: usize = 64;
/// i32 columns of an output tile.
const TC: usize = 16;
/// Rows of an output tile.
const TR: usize = 16;

/// Where a block's row operand lies: the first row tile of step `s` at
/// `first + s * step_bytes`, its rows `row_bytes` apart; the second row
/// tile (the block's rows 16..32) `second` bytes after the first, or none
/// when the operand has no more rows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowTiles {
    pub first: *const u8,
    pub row_bytes: usize,
    pub step_bytes: usize,
    pub second: Option<usize>,
}

/// Where a block's column operand lies: a panel of quads, each holding its
/// 32 columns' words side by side (`row_bytes` = 4 x 32 bytes: one quad of k
/// per tile row), 16 quads per step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColumnPanel {
    pub first: *const u8,
    pub row_bytes: usize,
}

/// The sums over `steps` steps of 64 bytes of k of the row tiles times the
/// panel, stored into `c` (rows `c_row_bytes` apart: 16 rows, or 32 when the
/// rows have a second tile; 32 i32 columns).
///
/// # Safety
/// This thread loaded a configuration of eight 16 x 64-byte tiles; the row
/// tiles and the panel's `steps` steps are readable where they say, and
/// `c` has room for the rows stored.
#[inline(always)]
pub(crate) unsafe fn int8_block<const OP: u8>(steps: usize, rows: RowTiles, panel: ColumnPanel, c: *mut i32, c_row_bytes: usize) {
    let (a, b, rs_a, rs_b) = (rows.first, panel.first, rows.row_bytes, panel.row_bytes);
    // A step reads 16 quads of the panel, one per tile row.
    let step_b = TR * rs_b;
    // SAFETY: the reads stay inside the caller's row tiles and panel, the stores inside `c`
    // (the caller's contract); OP is a constant, so each product is one instruction.
    unsafe {
        macro_rules! dot {
            ($c:ident, $a:ident, $b:ident) => {
                if OP == U8_ROWS {
                    tile_dpbusd!($c, $a, $b)
                } else {
                    tile_dpbsud!($c, $a, $b)
                }
            };
        }
        tile_zero!(tmm0);
        tile_zero!(tmm1);
        if let Some(second) = rows.second {
            let a1 = a.add(second);
            tile_zero!(tmm2);
            tile_zero!(tmm3);
            for s in 0..steps {
                let w = b.add(s * step_b);
                tile_load!(tmm4, a.add(s * rows.step_bytes), rs_a);
                tile_load!(tmm6, w, rs_b);
                tile_load!(tmm7, w.add(KB), rs_b);
                dot!(tmm0, tmm4, tmm6);
                dot!(tmm1, tmm4, tmm7);
                tile_load!(tmm5, a1.add(s * rows.step_bytes), rs_a);
                dot!(tmm2, tmm5, tmm6);
                dot!(tmm3, tmm5, tmm7);
            }
            let lower = (c as *mut u8).add(TR * c_row_bytes);
            tile_store!(tmm2, lower, c_row_bytes);
            tile_store!(tmm3, lower.add(4 * TC), c_row_bytes);
        } else {
            for s in 0..steps {
                let w = b.add(s * step_b);
                tile_load!(tmm4, a.add(s * rows.step_bytes), rs_a);
                tile_load!(tmm6, w, rs_b);
                tile_load!(tmm7, w.add(KB), rs_b);
                dot!(tmm0, tmm4, tmm6);
                dot!(tmm1, tmm4, tmm7);
            }
        }
        let upper = c as *mut u8;
        tile_store!(tmm0, upper, c_row_bytes);
        tile_store!(tmm1, upper.add(4 * TC), c_row_bytes);
    }
}
