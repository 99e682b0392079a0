//! The int8 2-d convolution with its weight packed once: `Int8Conv` holds
//! a constant s8 filter bank (ONNX's `QLinearConv`/`ConvInteger` weight) in
//! the tile layout, and each call runs im2col, packing, the exact u8 x s8
//! product and the output pass (i32 sums, or requantized to u8/int8) image
//! by image on the team, writing NCHW planes directly.
//!
//! The product is `out[o, p] = Σ_k w[o, k] * x[k, p]` with `k` the filter's
//! (channel, ky, kx) and `p` the output position, so the output tile is a
//! run of channels by a run of positions and lands in the channel planes
//! with no transpose. `vpdpbusd` takes its u8 operand as the vector (32
//! positions' quads of consecutive k) and its s8 operand broadcast (one
//! channel's quad), the reverse of the linear layer's tile.
//!
//! Receptive fields reaching into the padding read the input's zero point,
//! so padding adds nothing once the zero points come out of the sum:
//! `Σ (x - zx)(w - zw) = acc - zx * Σw - zw * (Σx - k * zx)` in wrapping
//! i32, ONNX's int32 result mod 2^32.

use super::qconv_amx::{self, AmxFilters, TR};
use crate::error::{Error, Result};
use crate::kernels::qgemm::{Path, MAX_K};
use crate::kernels::team::{self, Shared};

/// Output channels per tile (broadcast operands).
pub const CMR: usize = 8;
/// Output positions per tile: two vectors of 16 i32 lanes.
pub const CNR: usize = 32;
/// Receptive-field bytes gathered by one part of the loop (the im2col rows
/// and their packed copy stay in L2).
const PART_BYTES: usize = 96 << 10;
/// Products below this many multiply-adds run on one thread.
const PAR_FLOPS: usize = 1 << 18;

/// Stride, padding (top, left, bottom, right), dilation and groups of an
/// integer 2-d convolution.
#[derive(Clone, Copy, Debug)]
pub struct IntConv2d {
    pub stride: [usize; 2],
    pub pads: [usize; 4],
    pub dilation: [usize; 2],
    pub groups: usize,
}

/// One tile's exact sums: `CMR` channels by `CNR` positions.
type Sums = [[i32; CNR]; CMR];

/// A `[c_out, c_in / groups, kh, kw]` int8 filter bank and its zero points
/// (one, or one per output channel), packed for the convolution tile.
#[derive(Clone, Debug)]
pub struct Int8Conv {
    c_out: usize,
    cg: usize,
    kh: usize,
    kw: usize,
    groups: usize,
    /// Per group, `co_g.div_ceil(CMR)` panels of `kq * CMR` words (a word is
    /// four consecutive k of one channel, the lowest k in the low byte).
    words: Vec<u32>,
    /// The same filters as AMX's tile operand, where the CPU has AMX-INT8.
    amx: Option<AmxFilters>,
    /// `Σ_k w[o, k]` per output channel.
    wsum: Vec<i32>,
    /// The weight zero point of each output channel.
    zero: Vec<i32>,
}

/// How a call's exact sums leave the product.
pub enum ConvOut<'a> {
    /// The i32 sums (`ConvInteger`).
    Sums(&'a mut [i32]),
    /// `clamp(round_half_even((sum + bias[o]) * scale[o] + y_zero), lo, hi)`
    /// (`QLinearConv`, in f64 as the f64 path computes it), as u8 values.
    U8(Requant<'a>, &'a mut [u8]),
    /// As [`ConvOut::U8`], held in i32 (an int8 output).
    I32(Requant<'a>, &'a mut [i32]),
}

/// The requantization of `QLinearConv`: per output channel scale (1 or
/// `c_out` values) and int32 bias, the output zero point and range.
#[derive(Clone, Copy, Debug)]
pub struct Requant<'a> {
    pub scale: &'a [f64],
    pub bias: Option<&'a [i32]>,
    pub y_zero: i32,
    pub lo: i32,
    pub hi: i32,
}

impl Int8Conv {
    /// Packs `w` (row-major `[c_out, cg, kh, kw]` s8 values) in `groups`
    /// groups with `zero` (1 or `c_out` weight zero points).
    pub fn new(w: &[i8], shape: [usize; 4], groups: usize, zero: &[i32]) -> Result<Int8Conv> {
        let op = "int8 conv2d";
        let [c_out, cg, kh, kw] = shape;
        let k = cg * kh * kw;
        if groups == 0 || c_out % groups != 0 || k == 0 || w.len() != c_out * k {
            return Err(Error::invalid(
                op,
                format!("expected a [{c_out}, {cg}, {kh}, {kw}] weight of {} values in groups dividing {c_out}, found {} values and {groups} groups", c_out * k, w.len()),
            ));
        }
        if k > MAX_K {
            return Err(Error::invalid(op, format!("at most {MAX_K} values per filter keep the i32 sums exact, found {k}")));
        }
        if zero.len() != 1 && zero.len() != c_out {
            return Err(Error::invalid(op, format!("a weight of {c_out} output channels takes 1 or {c_out} zero points, found {}", zero.len())));
        }
        let (co_g, kq) = (c_out / groups, k.div_ceil(4));
        let panels = co_g.div_ceil(CMR);
        let mut words = vec![0u32; groups * panels * kq * CMR];
        for o in 0..c_out {
            let (g, oi) = (o / co_g, o % co_g);
            let base = (g * panels + oi / CMR) * kq * CMR + oi % CMR;
            for (kk, &v) in w[o * k..(o + 1) * k].iter().enumerate() {
                words[base + (kk / 4) * CMR] |= (v as u8 as u32) << (8 * (kk % 4));
            }
        }
        let wsum = w.chunks_exact(k).map(|f| f.iter().map(|&v| v as i32).sum()).collect();
        let zero = if zero.len() == 1 { vec![zero[0]; c_out] } else { zero.to_vec() };
        let amx = (Path::best() == Path::Amx).then(|| AmxFilters::new(w, c_out, groups, k));
        Ok(Int8Conv { c_out, cg, kh, kw, groups, words, amx, wsum, zero })
    }

    /// `[c_out, c_in / groups, kh, kw]`.
    pub fn shape(&self) -> [usize; 4] {
        [self.c_out, self.cg, self.kh, self.kw]
    }

    /// The groups the filter bank was packed in.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// The output's `(oh, ow)` for an `h x w` input, or an error naming the
    /// geometry that does not fit.
    pub fn output_size(&self, (h, w): (usize, usize), g: &IntConv2d) -> Result<(usize, usize)> {
        let op = "int8 conv2d";
        if g.stride.contains(&0) || g.dilation.contains(&0) {
            return Err(Error::invalid(op, format!("strides and dilations must be positive, found {:?} and {:?}", g.stride, g.dilation)));
        }
        let span = |size: usize, pad: usize, k: usize, d: usize, s: usize| -> Option<usize> {
            let reach = d * (k - 1) + 1;
            (size + pad >= reach).then(|| (size + pad - reach) / s + 1)
        };
        match (span(h, g.pads[0] + g.pads[2], self.kh, g.dilation[0], g.stride[0]), span(w, g.pads[1] + g.pads[3], self.kw, g.dilation[1], g.stride[1])) {
            (Some(oh), Some(ow)) => Ok((oh, ow)),
            _ => Err(Error::invalid(op, format!("the kernel {} x {} (dilation {:?}) is larger than the padded {h} x {w} input", self.kh, self.kw, g.dilation))),
        }
    }

    /// Convolves `x` (row-major `[batch, c_in, h, w]` u8 values, zero point
    /// `x_zero`) into `out` (`[batch, c_out, oh, ow]`): the exact sums, or
    /// requantized. `g.groups` must be the packed groups.
    pub fn run(&self, x: &[u8], [batch, c_in, h, w]: [usize; 4], x_zero: u8, g: &IntConv2d, out: ConvOut<'_>, threads: usize) -> Result<()> {
        self.run_on(x, [batch, c_in, h, w], x_zero, g, out, threads, Path::best())
    }

    /// [`Int8Conv::run`] on the given tile (or the next slower one where the
    /// CPU lacks it).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_on(&self, x: &[u8], [batch, c_in, h, w]: [usize; 4], x_zero: u8, g: &IntConv2d, out: ConvOut<'_>, threads: usize, path: Path) -> Result<()> {
        let op = "int8 conv2d";
        let path = match path.usable() {
            Path::Amx if self.amx.is_none() => Path::Vnni.usable(),
            usable => usable,
        };
        if g.groups != self.groups || c_in != self.cg * self.groups || x.len() != batch * c_in * h * w {
            return Err(Error::invalid(
                op,
                format!(
                    "a [{}, {}, {}, {}] weight in {} groups takes an input of {} channels, found {c_in} channels in {} groups ({} values for [{batch}, {c_in}, {h}, {w}])",
                    self.c_out,
                    self.cg,
                    self.kh,
                    self.kw,
                    self.groups,
                    self.cg * self.groups,
                    g.groups,
                    x.len()
                ),
            ));
        }
        let (oh, ow) = self.output_size((h, w), g)?;
        let (p, c_out) = (oh * ow, self.c_out);
        let want = batch * c_out * p;
        let (found, requant) = match &out {
            ConvOut::Sums(o) => (o.len(), None),
            ConvOut::U8(r, o) => (o.len(), Some(*r)),
            ConvOut::I32(r, o) => (o.len(), Some(*r)),
        };
        if found != want {
            return Err(Error::invalid(op, format!("expected an output of {want} values ([{batch}, {c_out}, {oh}, {ow}]), found {found}")));
        }
        if let Some(r) = requant {
            if (r.scale.len() != 1 && r.scale.len() != c_out) || r.bias.is_some_and(|b| b.len() != c_out) || r.lo > r.hi {
                return Err(Error::invalid(
                    op,
                    format!("expected 1 or {c_out} scales, {c_out} biases and a range lo <= hi, found {} scales, {} biases, {}..={}", r.scale.len(), r.bias.map_or(c_out, <[i32]>::len), r.lo, r.hi),
                ));
            }
        }
        if want == 0 {
            return Ok(());
        }
        let k = self.cg * self.kh * self.kw;
        // Positions per part: a multiple of the tile, the part's fields within
        // PART_BYTES, and enough parts for every thread.
        let mut pc = (PART_BYTES / k).max(CNR) / CNR * CNR;
        while pc > CNR && batch * p.div_ceil(pc) < 2 * threads {
            pc = (pc / 2).div_ceil(CNR) * CNR;
        }
        let pc = pc.min(p.next_multiple_of(CNR));
        let chunks = p.div_ceil(pc);
        let flops = batch.saturating_mul(p).saturating_mul(k).saturating_mul(c_out);
        let threaded = threads > 1 && flops >= PAR_FLOPS && batch * chunks > 1;
        let dst = match out {
            ConvOut::Sums(o) => Dst::Sums(Shared(o.as_mut_ptr())),
            ConvOut::U8(r, o) => Dst::U8(r, Shared(o.as_mut_ptr())),
            ConvOut::I32(r, o) => Dst::I32(r, Shared(o.as_mut_ptr())),
        };
        let geo = Geometry { h, w, oh, ow, k, x_zero, g: *g };
        team::for_each_part_if(threaded, batch * chunks, |part| {
            let (n, c) = (part / chunks, part % chunks);
            let (p0, p1) = (c * pc, ((c + 1) * pc).min(p));
            let img = &x[n * c_in * h * w..(n + 1) * c_in * h * w];
            #[cfg(target_arch = "x86_64")]
            if path != Path::Portable {
                // SAFETY: both faster paths come from usable(), which checked the CPU has AVX-512
                // F, BW and VNNI (and AMX-INT8 for Amx).
                unsafe { self.part_avx512(img, n, p0, p1, &geo, &dst, path) };
                return;
            }
            self.part(img, n, p0, p1, &geo, &dst, Path::Portable);
        });
        Ok(())
    }

    /// [`Int8Conv::part`] compiled for AVX-512, holding the AMX tiles for
    /// the part when `path` is AMX.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI, and AMX-INT8 when `path` is AMX.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn part_avx512(&self, img: &[u8], n: usize, p0: usize, p1: usize, geo: &Geometry, dst: &Dst<'_>, path: Path) {
        let _tiles = if path == Path::Amx {
            // SAFETY: the caller's contract: AMX-INT8 is usable.
            Some(unsafe { qconv_amx::tile_config().load() })
        } else {
            None
        };
        self.part(img, n, p0, p1, geo, dst, path);
    }

    /// Output positions `p0..p1` of image `n`, every channel.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn part(&self, img: &[u8], n: usize, p0: usize, p1: usize, geo: &Geometry, dst: &Dst<'_>, path: Path) {
        let kq = geo.k.div_ceil(4);
        // Quads per packed panel: the AMX tiles read k in whole steps.
        let kq_panel = match (&self.amx, path) {
            (Some(amx), Path::Amx) => amx.panel_quads(),
            _ => kq,
        };
        let width = (p1 - p0).next_multiple_of(CNR);
        // The thread's buffers, taken out and put back (no closure: the body keeps this function's
        // target features), grown to the largest part it ran: fresh ones cost a page clear a call.
        let (mut fields, mut packed, mut colsum) = SCRATCH.take();
        fields.resize(kq * 4 * width, 0);
        packed.resize(width * kq_panel, 0);
        colsum.resize(width, 0);
        self.part_in(img, n, p0, p1, geo, dst, path, &mut fields[..kq * 4 * width], &mut packed[..width * kq_panel], &mut colsum[..width]);
        SCRATCH.set((fields, packed, colsum));
    }

    /// [`Int8Conv::part`] on the thread's scratch buffers.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn part_in(&self, img: &[u8], n: usize, p0: usize, p1: usize, geo: &Geometry, dst: &Dst<'_>, path: Path, fields: &mut [u8], packed: &mut [u32], colsum: &mut [i32]) {
        let k = geo.k;
        let (kq, cols) = (k.div_ceil(4), p1 - p0);
        let width = cols.next_multiple_of(CNR);
        let panels = width / CNR;
        let kq_panel = packed.len() / width;
        let amx = self.amx.as_ref().filter(|_| path == Path::Amx);
        let vnni = path != Path::Portable;
        let co_g = self.c_out / self.groups;
        let o_panels = co_g.div_ceil(CMR);
        let need_colsum = self.zero.iter().any(|&z| z != 0);
        colsum.fill(0);
        let mut acc: Sums = [[0; CNR]; CMR];
        for gi in 0..self.groups {
            im2col(img, gi * self.cg, self.cg, (self.kh, self.kw), geo, p0, p1, width, fields);
            pack(fields, kq, kq_panel, width, packed);
            if need_colsum {
                colsum.fill(0);
                for row in fields.chunks_exact(width).take(k) {
                    for (s, &v) in colsum.iter_mut().zip(row) {
                        *s += v as i32;
                    }
                }
            }
            let wbase = gi * o_panels * kq * CMR;
            for jp in 0..panels {
                let b = &packed[jp * kq_panel * CNR..(jp + 1) * kq_panel * CNR];
                let j0 = jp * CNR;
                let ncols = (cols - j0).min(CNR);
                if let Some(amx) = amx {
                    let mut block = [[0; CNR]; 2 * TR];
                    for pair in 0..co_g.div_ceil(2 * TR) {
                        // SAFETY: part_avx512 loaded the tile configuration for this part; the
                        // panel holds kq_panel (the filters' panel_quads) quads.
                        unsafe { amx.block(gi, pair, b, &mut block) };
                        let o0 = gi * co_g + pair * 2 * TR;
                        let rows = (co_g - pair * 2 * TR).min(2 * TR);
                        self.finish(&block, n, o0, rows, p0 + j0, ncols, &colsum[j0..j0 + CNR], geo, dst);
                    }
                    continue;
                }
                for op in 0..o_panels {
                    let a = &self.words[wbase + op * kq * CMR..wbase + (op + 1) * kq * CMR];
                    dot(vnni, kq, a, b, &mut acc);
                    let o0 = gi * co_g + op * CMR;
                    let rows = (co_g - op * CMR).min(CMR);
                    self.finish(&acc, n, o0, rows, p0 + j0, ncols, &colsum[j0..j0 + CNR], geo, dst);
                }
            }
        }
    }

    /// Writes one tile: channels `o0..o0 + rows` at positions `q0..q0 + ncols`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn finish(&self, acc: &[[i32; CNR]], n: usize, o0: usize, rows: usize, q0: usize, ncols: usize, colsum: &[i32], geo: &Geometry, dst: &Dst<'_>) {
        let p = geo.oh * geo.ow;
        let (zx, kz) = (geo.x_zero as i32, geo.k as i32);
        for (r, sums) in acc.iter().enumerate().take(rows) {
            let o = o0 + r;
            let (zw, ws) = (self.zero[o], self.wsum[o]);
            let mut t = [0i32; CNR];
            for ((t, &s), &cs) in t.iter_mut().zip(sums).zip(colsum) {
                *t = s.wrapping_sub(zx.wrapping_mul(ws)).wrapping_sub(zw.wrapping_mul(cs.wrapping_sub(kz.wrapping_mul(zx))));
            }
            let at = (n * self.c_out + o) * p + q0;
            match dst {
                Dst::Sums(d) => {
                    // SAFETY: the tile's row lies inside the output, written by this part alone.
                    let d = unsafe { std::slice::from_raw_parts_mut(d.0.add(at), ncols) };
                    d.copy_from_slice(&t[..ncols]);
                }
                Dst::U8(rq, d) => {
                    let y = requant_row(&t, o, rq);
                    let mut bytes = [0u8; CNR];
                    for (b, &v) in bytes.iter_mut().zip(&y) {
                        *b = v as u8;
                    }
                    // SAFETY: as above.
                    let d = unsafe { std::slice::from_raw_parts_mut(d.0.add(at), ncols) };
                    d.copy_from_slice(&bytes[..ncols]);
                }
                Dst::I32(rq, d) => {
                    let y = requant_row(&t, o, rq);
                    // SAFETY: as above.
                    let d = unsafe { std::slice::from_raw_parts_mut(d.0.add(at), ncols) };
                    d.copy_from_slice(&y[..ncols]);
                }
            }
        }
    }
}

/// `clamp(round_half_even((t[j] + bias) * scale + zero), lo, hi)` for the
/// tile row, each step in f64; a NaN (from a NaN scale) goes to `lo`, as the
/// f64 path's mask sends it. Plain lane loops, so that they vectorize.
#[inline(always)]
fn requant_row(t: &[i32; CNR], o: usize, rq: &Requant<'_>) -> [i32; CNR] {
    let scale = if rq.scale.len() == 1 { rq.scale[0] } else { rq.scale[o] };
    let bias = f64::from(rq.bias.map_or(0, |b| b[o]));
    let (zero, lo, hi) = (rq.y_zero as f64, rq.lo as f64, rq.hi as f64);
    let mut y = [0f64; CNR];
    for (y, &v) in y.iter_mut().zip(t) {
        // The bias added in f64 (exact), so that a sum near i32's ends does not wrap.
        *y = ((f64::from(v) + bias) * scale + zero).round_ties_even();
    }
    let mut out = [0i32; CNR];
    for (o, &y) in out.iter_mut().zip(&y) {
        // `max` takes the other operand when one is NaN: a NaN lands on lo.
        *o = y.max(lo).min(hi) as i32;
    }
    out
}

thread_local! {
    /// Receptive fields, their packed copy and column sums of the parts a thread runs.
    static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<u32>, Vec<i32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new(), Vec::new())) };
}

/// Where a call's tiles go.
enum Dst<'a> {
    Sums(Shared<i32>),
    U8(Requant<'a>, Shared<u8>),
    I32(Requant<'a>, Shared<i32>),
}

/// The shape of one call.
struct Geometry {
    h: usize,
    w: usize,
    oh: usize,
    ow: usize,
    k: usize,
    x_zero: u8,
    g: IntConv2d,
}

/// The receptive fields of positions `p0..p1` for channels `c0..c0 + cg`:
/// `fields[kk * width + j]` for `kk` (channel, ky, kx) and position `p0 + j`,
/// the zero point where a field reaches into the padding and past `p1`;
/// rows `k..` up to the next quad are zero.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn im2col(img: &[u8], c0: usize, cg: usize, (kh, kw): (usize, usize), geo: &Geometry, p0: usize, p1: usize, width: usize, fields: &mut [u8]) {
    let (h, w, ow) = (geo.h, geo.w, geo.ow);
    let g = &geo.g;
    let zero = geo.x_zero;
    let k = cg * kh * kw;
    fields[k * width..].fill(0);
    let mut kk = 0;
    for c in c0..c0 + cg {
        let plane = &img[c * h * w..(c + 1) * h * w];
        for ky in 0..kh {
            for kx in 0..kw {
                let row = &mut fields[kk * width..(kk + 1) * width];
                row[p1 - p0..].fill(zero);
                let mut q = p0;
                while q < p1 {
                    let (oy, ox0) = (q / ow, q % ow);
                    let ox1 = ow.min(ox0 + p1 - q);
                    let seg = &mut row[q - p0..q - p0 + ox1 - ox0];
                    let iy = (oy * g.stride[0] + ky * g.dilation[0]).wrapping_sub(g.pads[0]);
                    if iy >= h {
                        seg.fill(zero);
                    } else {
                        let src = &plane[iy * w..(iy + 1) * w];
                        let off = kx * g.dilation[1];
                        if g.stride[1] == 1 {
                            // ix = ox + off - pad: zero point left of 0 and right of w, a copy between.
                            let first = g.pads[1].saturating_sub(off).clamp(ox0, ox1);
                            let last = (w + g.pads[1]).saturating_sub(off).clamp(first, ox1);
                            seg[..first - ox0].fill(zero);
                            seg[first - ox0..last - ox0].copy_from_slice(&src[first + off - g.pads[1]..last + off - g.pads[1]]);
                            seg[last - ox0..].fill(zero);
                        } else {
                            for (v, ox) in seg.iter_mut().zip(ox0..ox1) {
                                let ix = (ox * g.stride[1] + off).wrapping_sub(g.pads[1]);
                                *v = if ix < w { src[ix] } else { zero };
                            }
                        }
                    }
                    q += ox1 - ox0;
                }
                kk += 1;
            }
        }
    }
}

/// Interleaves the fields' rows by quads: panel `jp` (`kq_panel` quads
/// apart), quad `q`, lane `j` holds rows `4q..4q + 4` of column
/// `jp * CNR + j`, the lowest row in the low byte. Quads `kq..kq_panel` are
/// left as they are: the AMX filters are zero there, so whatever they hold
/// adds nothing.
#[inline(always)]
fn pack(fields: &[u8], kq: usize, kq_panel: usize, width: usize, packed: &mut [u32]) {
    for q in 0..kq {
        let rows = &fields[4 * q * width..4 * (q + 1) * width];
        let (r0, rest) = rows.split_at(width);
        let (r1, rest) = rest.split_at(width);
        let (r2, r3) = rest.split_at(width);
        for jp in 0..width / CNR {
            let out = &mut packed[(jp * kq_panel + q) * CNR..(jp * kq_panel + q + 1) * CNR];
            let s = jp * CNR;
            let (a, b, c, d) = (&r0[s..s + CNR], &r1[s..s + CNR], &r2[s..s + CNR], &r3[s..s + CNR]);
            for j in 0..CNR {
                out[j] = u32::from(a[j]) | u32::from(b[j]) << 8 | u32::from(c[j]) << 16 | u32::from(d[j]) << 24;
            }
        }
    }
}

/// `acc = Σ_q a[q] x b[q]` over `kq` quads: `a` (s8 weights) holds `CMR`
/// words a quad, `b` (u8 fields) `CNR`.
#[inline(always)]
fn dot(vnni: bool, kq: usize, a: &[u32], b: &[u32], acc: &mut Sums) {
    assert!(a.len() >= kq * CMR && b.len() >= kq * CNR);
    #[cfg(target_arch = "x86_64")]
    if vnni {
        // SAFETY: the caller checked vnni_available(); the slices hold kq quads (asserted above).
        unsafe { dot_vnni(kq, a.as_ptr(), b.as_ptr(), acc) };
        return;
    }
    let _ = vnni;
    dot_portable(kq, a, b, acc);
}

/// [`dot`] in plain Rust: the CPUs without VNNI and the tests' reference.
fn dot_portable(kq: usize, a: &[u32], b: &[u32], acc: &mut Sums) {
    *acc = [[0; CNR]; CMR];
    for q in 0..kq {
        let (aw, bw) = (&a[q * CMR..(q + 1) * CMR], &b[q * CNR..(q + 1) * CNR]);
        for byte in 0..4 {
            let shift = 8 * byte;
            let mut col = [0i32; CNR];
            for (c, &v) in col.iter_mut().zip(bw) {
                *c = ((v >> shift) & 0xFF) as i32;
            }
            for (row, &v) in acc.iter_mut().zip(aw) {
                let wv = (v >> shift) as u8 as i8 as i32;
                for (s, &c) in row.iter_mut().zip(&col) {
                    *s += wv * c;
                }
            }
        }
    }
}

/// [`dot`] on `vpdpbusd`: the fields' quads as the u8 vector, each
/// channel's quad broadcast as the s8 operand.
///
/// # Safety
/// The CPU has AVX-512 F, BW and VNNI; `a` holds `kq * CMR` words and `b`
/// `kq * CNR`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn dot_vnni(kq: usize, a: *const u32, b: *const u32, acc: &mut Sums) {
    use std::arch::x86_64::*;
    let mut regs = [[_mm512_setzero_si512(); 2]; CMR];
    // SAFETY: the reads stay inside the panels (caller's contract), the writes inside `acc`.
    unsafe {
        for q in 0..kq {
            let b0 = _mm512_loadu_si512(b.add(q * CNR) as *const _);
            let b1 = _mm512_loadu_si512(b.add(q * CNR + 16) as *const _);
            let aq = a.add(q * CMR);
            for (r, row) in regs.iter_mut().enumerate() {
                let wv = _mm512_set1_epi32(*aq.add(r) as i32);
                row[0] = _mm512_dpbusd_epi32(row[0], b0, wv);
                row[1] = _mm512_dpbusd_epi32(row[1], b1, wv);
            }
        }
        for (row, reg) in acc.iter_mut().zip(&regs) {
            _mm512_storeu_si512(row.as_mut_ptr() as *mut _, reg[0]);
            _mm512_storeu_si512(row.as_mut_ptr().add(16) as *mut _, reg[1]);
        }
    }
}

/// The team's threads for a call of this many multiply-adds.
pub fn conv_threads(macs: usize) -> usize {
    if macs >= PAR_FLOPS {
        rayon::current_num_threads()
    } else {
        1
    }
}
