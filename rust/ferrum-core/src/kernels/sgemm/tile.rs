//! The register-tile microkernel's interface: what the AVX2 and AVX-512
//! tiles implement, and what packing and the blocked loops ask of them
//! (their shape and block sizes).

/// A register-tile microkernel and the block sizes that suit it.
pub trait Tile {
    /// Rows of the register tile.
    const MR: usize;
    /// Columns of the register tile (a multiple of 8).
    const NR: usize;
    /// Rows of a packed block of A (a multiple of `MR`).
    const MC: usize;
    /// Shared-dimension depth of the packed blocks.
    const KC: usize;
    /// Columns of a packed block of B (a multiple of `NR`).
    const NC: usize;

    /// `c[0..MR][0..NR] = (accumulate ? c : 0) + a_panel @ b_panel`, with
    /// the rows of `c` starting `rs_c` elements apart.
    ///
    /// # Safety
    /// The CPU runs this tile; `a` holds `kc * MR` and `b` holds `kc * NR`
    /// readable floats, `b` is 64-byte aligned; `c` addresses a writable
    /// `MR x NR` tile with row stride `rs_c`.
    unsafe fn full(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool);

    /// The `mr x nr` tile (`mr <= MR`, `nr <= NR`) through the kernel
    /// that fits it: [`Tile::full`], [`Tile::short`] or [`Tile::edge`].
    ///
    /// # Safety
    /// As for [`Tile::edge`].
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn any(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool, mr: usize, nr: usize) {
        // SAFETY: forwarded from the caller; each kernel gets a tile it covers.
        unsafe {
            if nr == Self::NR && mr == Self::MR {
                Self::full(kc, a, b, c, rs_c, accumulate);
            } else if nr == Self::NR {
                Self::short(kc, a, b, c, rs_c, accumulate, mr);
            } else {
                Self::edge(kc, a, b, c, rs_c, accumulate, mr, nr);
            }
        }
    }

    /// [`Tile::full`] for a tile of full width cut short by the last rows
    /// of the matrix (`mr < MR` rows); by default through [`Tile::edge`].
    ///
    /// # Safety
    /// As for [`Tile::full`], except that `c` needs only an `mr x NR` tile.
    #[allow(clippy::too_many_arguments)]
    unsafe fn short(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool, mr: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::edge(kc, a, b, c, rs_c, accumulate, mr, Self::NR) }
    }

    /// [`Tile::full`] for a tile cut short by the matrix edge (`mr <= MR`
    /// rows, `nr <= NR` columns): computed whole into a local tile (the
    /// packed panels are zero-padded), then only the valid part is written.
    ///
    /// # Safety
    /// As for [`Tile::full`], except that `c` needs only an `mr x nr` tile.
    #[allow(clippy::too_many_arguments)]
    unsafe fn edge(kc: usize, a: *const f32, b: *const f32, c: *mut f32, rs_c: usize, accumulate: bool, mr: usize, nr: usize) {
        #[repr(align(64))]
        struct Local([f32; MAX_TILE]);
        const { assert!(Self::MR * Self::NR <= MAX_TILE, "register tile larger than the edge buffer") };
        let mut tile = Local([0.0; MAX_TILE]);
        // SAFETY: the local buffer holds a full MR x NR tile with row stride
        // NR.
        unsafe { Self::full(kc, a, b, tile.0.as_mut_ptr(), Self::NR, false) };
        for (i, src) in tile.0.chunks_exact(Self::NR).take(mr).enumerate() {
            // SAFETY: row i of the `mr x nr` part of `c` the caller vouches for.
            let dst = unsafe { std::slice::from_raw_parts_mut(c.add(i * rs_c), nr) };
            if accumulate {
                dst.iter_mut().zip(src).for_each(|(d, s)| *d += s);
            } else {
                dst.copy_from_slice(&src[..nr]);
            }
        }
    }
}

/// Floats of the largest register tile (AVX-512's 12 x 32).
const MAX_TILE: usize = 12 * 32;
