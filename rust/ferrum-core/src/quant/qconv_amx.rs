//! The int8 convolution's product on AMX-INT8 tiles.
//!
//! `tdpbsud` multiplies a tile of s8 rows by a tile of u8 quads, so the
//! filter bank is the row operand (16 output channels by 64 bytes of k) and
//! the receptive fields the column operand (16 quads of k by 16 positions):
//! the sums come out as channels by positions, the orientation of the
//! output planes, and the fields are the same interleaved quads the VNNI
//! tile reads ([`super::qconv`]'s `pack`), only with each panel padded to
//! whole steps of 16 quads.
//!
//! A block is 32 channels by 32 positions (four i32 tiles) from two filter
//! tiles and two field tiles a step: four loads for four products.

use super::qconv::CNR;
use crate::kernels::amx::int8_block::{int8_block, ColumnPanel, RowTiles, S8_ROWS};
use crate::kernels::amx::TileConfig;

/// Channels of a filter tile.
pub(super) const TR: usize = 16;
/// Bytes of k in a tile row (16 quads).
const KB: usize = 64;

/// One block's exact sums: 32 channels by a panel's `CNR` positions.
pub(super) type Block = [[i32; CNR]; 2 * TR];

/// The filter bank as the tiles' row operand: per group, `co_g.div_ceil(16)`
/// tiles of 16 channel rows of `kpad` bytes (k in the filter's (channel,
/// ky, kx) order), zero past k and past the group's channels, so that
/// padding adds nothing whatever the fields hold there.
#[derive(Clone, Debug)]
pub(super) struct AmxFilters {
    bytes: Vec<i8>,
    /// Bytes per channel row: k rounded up to whole steps.
    kpad: usize,
    /// Filter tiles per group.
    tiles: usize,
}

impl AmxFilters {
    /// Lays out `w` (row-major `[c_out, k]` s8 values) in `groups` groups.
    pub(super) fn new(w: &[i8], c_out: usize, groups: usize, k: usize) -> AmxFilters {
        let co_g = c_out / groups;
        let (kpad, tiles) = (k.next_multiple_of(KB), co_g.div_ceil(TR));
        let mut bytes = vec![0i8; groups * tiles * TR * kpad];
        for (o, filter) in w.chunks_exact(k).enumerate() {
            let (g, oi) = (o / co_g, o % co_g);
            let row = (g * tiles * TR + oi) * kpad;
            bytes[row..row + k].copy_from_slice(filter);
        }
        AmxFilters { bytes, kpad, tiles }
    }

    /// Quads per field panel the tiles read: k in whole steps.
    pub(super) fn panel_quads(&self) -> usize {
        self.kpad / 4
    }

    /// The sums of group `g`'s channels `32 * pair..` over the field panel
    /// `b` into `c`: 32 rows, or 16 when no more remain in the group (rows
    /// past the group's channels are zero).
    ///
    /// # Safety
    /// This thread loaded [`tile_config`]; `b` holds [`Self::panel_quads`]
    /// quads of `CNR` words.
    #[inline(always)]
    pub(super) unsafe fn block(&self, g: usize, pair: usize, b: &[u32], c: &mut Block) {
        let t0 = 2 * pair;
        debug_assert!(t0 < self.tiles && b.len() >= self.panel_quads() * CNR);
        // A filter tile is 16 channel rows of kpad bytes; a step moves 64 bytes along them.
        let rows = RowTiles {
            first: self.bytes[(g * self.tiles + t0) * TR * self.kpad..].as_ptr().cast(),
            row_bytes: self.kpad,
            step_bytes: KB,
            second: (t0 + 1 < self.tiles).then_some(TR * self.kpad),
        };
        let panel = ColumnPanel { first: b.as_ptr().cast(), row_bytes: 4 * CNR };
        // SAFETY: the filter tiles t0 (and t0 + 1 when there is one) lie inside `bytes` (16 rows
        // of kpad each), the panel's kpad / 64 steps inside `b` (caller's contract), the stores
        // inside `c`.
        unsafe { int8_block::<S8_ROWS>(self.kpad / KB, rows, panel, c.as_mut_ptr().cast(), 4 * CNR) };
    }
}

/// Eight tiles of 16 rows x 64 bytes: outputs, filters and fields alike.
pub(super) fn tile_config() -> TileConfig {
    (0..8).fold(TileConfig::default(), |c, t| c.with(t, TR, KB))
}
