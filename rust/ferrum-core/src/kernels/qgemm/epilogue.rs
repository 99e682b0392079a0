//! The per-row and per-column terms that turn a tile's exact i32 sums into
//! the f32 outputs of a quantized linear layer; the VNNI tile applies them
//! in registers, the driver after the portable tile.

/// What turns a tile's i32 sums into f32 outputs: the rows' scales and zero
/// points, the columns' scales, sums and bias (NR columns from the tile's first).
pub(super) struct Epilogue<'a> {
    pub sx: &'a [f32],
    pub zx: &'a [i32],
    pub sw: &'a [f32],
    pub colsum: &'a [i32],
    pub bias: Option<&'a [f32]>,
}
