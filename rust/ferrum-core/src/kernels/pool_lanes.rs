//! Max and average pooling of small planes, vectorised across planes.
//!
//! A row-by-row pass has nothing to vectorise when an output row holds a
//! handful of columns (GoogLeNet's 4x4 and 2x2 planes, SqueezeNet's 7x7):
//! its time goes to loop overhead per row and per plane. Here a block of
//! [`LANES`] planes is copied channel-last into a tile whose border holds
//! the padding value (-inf for max, 0 for a sum), so every window reads the
//! same tap offsets with no bounds to check, and every tap is one
//! `LANES`-wide operation across the block's planes. The results go back
//! plane by plane (`benches/conv.rs`, `max_pool2d_small`, times GoogLeNet's).

use super::parallel::{go_parallel, simd, PAR_CHEAP};
use super::pool::{pick, PoolGeom};
use super::team;
use crate::element::FloatElement;

/// Planes per block: one 512-bit vector of f32.
const LANES: usize = 16;

type Lanes<T> = [T; LANES];

/// Whether planes of `g` pool faster across planes than row by row: output
/// rows shorter than a vector, on planes small enough that a block's tile
/// stays in the first-level cache.
pub(super) fn suits(g: &PoolGeom) -> bool {
    let (hp, wp) = tile_size(g);
    g.ow < 16 && hp * wp <= 24 * 24
}

/// Height and width of the padded tile: the input with its padding, grown
/// to the last window of a ceil-mode pooling when that overhangs the padding.
fn tile_size(g: &PoolGeom) -> (usize, usize) {
    let reach = |o: usize, s: usize, k: usize, d: usize| (o.max(1) - 1) * s + (k - 1) * d + 1;
    let hp = (g.pad[0] + g.h + g.pad_end[0]).max(reach(g.oh, g.stride[0], g.kh, g.dilation[0]));
    let wp = (g.pad[1] + g.w + g.pad_end[1]).max(reach(g.ow, g.stride[1], g.kw, g.dilation[1]));
    (hp, wp)
}

/// The reduction a pooling runs over each window's taps.
pub(super) enum Reduce<'a, T> {
    /// The largest tap, NaN winning over numbers.
    Max,
    /// The sum of the taps divided by the output position's divisor.
    Mean(&'a [T]),
}

/// Pool `x` (`[planes, h, w]`) into `out` (`[planes, oh, ow]`).
pub(super) fn pool<T: FloatElement>(x: &[T], g: &PoolGeom, reduce: &Reduce<'_, T>, out: &mut [T]) {
    let p = g.oh * g.ow;
    if p == 0 || g.planes == 0 {
        return;
    }
    let plan = TilePlan::new(g);
    let run = |first_block: usize, o: &mut [T]| simd(#[inline(always)] || plan.blocks(x, first_block * LANES, reduce, o));
    let blocks = g.planes.div_ceil(LANES);
    let work = g.planes * (p * g.kh * g.kw + plan.hp * plan.wp);
    if go_parallel(work, PAR_CHEAP) {
        // Two runs of blocks per thread of the team: each pays for one tile.
        let per = blocks.div_ceil(2 * rayon::current_num_threads()).max(1);
        team::for_each_chunk_mut(out, per * LANES * p, |i, o| run(i * per, o));
    } else {
        run(0, out);
    }
}

/// Where each output window starts in the tile, and the offsets of its taps.
struct TilePlan<'g> {
    g: &'g PoolGeom,
    hp: usize,
    wp: usize,
    starts: Vec<usize>,
    taps: Vec<usize>,
}

impl<'g> TilePlan<'g> {
    fn new(g: &'g PoolGeom) -> Self {
        let (hp, wp) = tile_size(g);
        let starts = (0..g.oh).flat_map(|i| (0..g.ow).map(move |j| i * g.stride[0] * wp + j * g.stride[1])).collect();
        let taps = (0..g.kh).flat_map(|i| (0..g.kw).map(move |j| i * g.dilation[0] * wp + j * g.dilation[1])).collect();
        TilePlan { g, hp, wp, starts, taps }
    }

    /// Pool the planes from `first` on whose outputs `out` holds, block by
    /// block through one tile.
    #[inline(always)]
    fn blocks<T: FloatElement>(&self, x: &[T], first: usize, reduce: &Reduce<'_, T>, out: &mut [T]) {
        let g = self.g;
        let (hw, p) = (g.h * g.w, g.oh * g.ow);
        let border = match reduce {
            Reduce::Max => T::neg_infinity(),
            Reduce::Mean(_) => T::ZERO,
        };
        let mut tile: Vec<Lanes<T>> = vec![[border; LANES]; self.hp * self.wp];
        let mut results: Vec<Lanes<T>> = vec![[T::ZERO; LANES]; p];
        for (b, ob) in out.chunks_mut(LANES * p).enumerate() {
            let planes = ob.len() / p;
            let xb = &x[(first + b * LANES) * hw..][..planes * hw];
            // A last block's unused lanes keep the block before's planes, whose results go nowhere.
            for (l, xp) in xb.chunks_exact(hw).enumerate() {
                for (r, row) in xp.chunks_exact(g.w).enumerate() {
                    let at = (r + g.pad[0]) * self.wp + g.pad[1];
                    for (t, &v) in tile[at..at + g.w].iter_mut().zip(row) {
                        t[l] = v;
                    }
                }
            }
            match reduce {
                Reduce::Max => self.reduce(&tile, &mut results, pick, |_, acc| acc),
                Reduce::Mean(divisors) => self.reduce(&tile, &mut results, |a, b| a + b, |k, acc| acc.map(|a| a / divisors[k])),
            }
            for (l, op) in ob.chunks_exact_mut(p).enumerate() {
                for (o, r) in op.iter_mut().zip(&results) {
                    *o = r[l];
                }
            }
        }
    }

    /// `results[k]` = `finish(k, taps of window k folded by combine)`, lane by lane.
    #[inline(always)]
    fn reduce<T: FloatElement>(
        &self,
        tile: &[Lanes<T>],
        results: &mut [Lanes<T>],
        combine: impl Fn(T, T) -> T,
        finish: impl Fn(usize, Lanes<T>) -> Lanes<T>,
    ) {
        for (k, (res, &start)) in results.iter_mut().zip(&self.starts).enumerate() {
            let window = &tile[start..];
            let mut acc = window[self.taps[0]];
            for &t in &self.taps[1..] {
                let v = &window[t];
                for (a, &b) in acc.iter_mut().zip(v) {
                    *a = combine(*a, b);
                }
            }
            *res = finish(k, acc);
        }
    }
}
