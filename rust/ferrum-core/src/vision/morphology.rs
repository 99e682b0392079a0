//! Morphology: erode and dilate by a structuring element (Burn's `erode`,
//! `dilate`, `MorphOptions` and `create_structuring_element`, with OpenCV's
//! semantics).
//!
//! `dst(y, x) = op over (ky, kx) in the element of src(y + ky - anchor.y,
//! x + kx - anchor.x)`, with `op` min (erode) or max (dilate) and pixels
//! outside the image given by the border type. A rectangular element is
//! applied as a row pass then a column pass; any other one row by row of
//! the element. Source rows are padded one at a time, so memory stays the
//! size of the image plus one padded row per thread.

use crate::dtype::{DType, Kind};

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::{parallel, team};
use crate::shape::try_filled;
use crate::tensor::Tensor;
use crate::with_dtype;

/// Width and height of a structuring element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Size {
    pub width: usize,
    pub height: usize,
}

/// A position in a structuring element: `x` the column, `y` the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Point {
    pub x: usize,
    pub y: usize,
}

/// Shapes [`create_structuring_element`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelShape {
    Rect,
    Cross,
    Ellipse,
}

/// What a pixel outside the image reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BorderType {
    /// `border_value` per channel, or by default the value that changes
    /// nothing (the type's largest for erode, its smallest for dilate).
    #[default]
    Constant,
    /// The nearest edge pixel: `aaa|abcd|ddd`.
    Replicate,
    /// Mirrored, edge included: `cba|abcd|dcb`.
    Reflect,
    /// Mirrored about the edge pixel: `dcb|abcd|cba`.
    Reflect101,
    /// Periodic; not supported by erode and dilate (as in Burn and OpenCV).
    Wrap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MorphOp {
    Erode,
    Dilate,
}

impl MorphOp {
    fn name(self) -> &'static str {
        match self {
            MorphOp::Erode => "erode",
            MorphOp::Dilate => "dilate",
        }
    }
}

/// Burn's `MorphOptions`.
#[derive(Debug, Clone, PartialEq)]
pub struct MorphOptions {
    /// The element's origin; its centre `(width / 2, height / 2)` by default.
    pub anchor: Option<Point>,
    /// Times the op is applied (each pass reads the previous one's output).
    pub iterations: usize,
    pub border_type: BorderType,
    /// One value per channel for [`BorderType::Constant`].
    pub border_value: Option<Vec<f64>>,
}

impl Default for MorphOptions {
    fn default() -> Self {
        MorphOptions { anchor: None, iterations: 1, border_type: BorderType::Constant, border_value: None }
    }
}

/// A Bool `[height, width]` structuring element: all true for `Rect` (and
/// any 1 x 1), the anchor's row and column for `Cross` (anchor defaults to
/// the centre), and for `Ellipse` the rows of the ellipse inscribed in the
/// box, as OpenCV's `getStructuringElement` (and Burn's) draws it.
pub fn create_structuring_element(shape: KernelShape, ksize: Size, anchor: Option<Point>) -> Result<Tensor> {
    let op = "create_structuring_element";
    let Size { width, height } = ksize;
    if width == 0 || height == 0 {
        return Err(Error::invalid(op, format!("the size must be at least 1 x 1, found width {width} and height {height}")));
    }
    crate::shape::checked_numel(op, &[height, width], 1)?;
    let anchor = anchor.unwrap_or(Point { x: width / 2, y: height / 2 });
    if anchor.x >= width || anchor.y >= height {
        return Err(Error::invalid(op, format!("the anchor ({}, {}) lies outside a {width} x {height} element", anchor.x, anchor.y)));
    }
    let mut elem: Vec<bool> = try_filled(op, width * height, false)?;
    if shape == KernelShape::Rect || (width == 1 && height == 1) {
        elem.fill(true);
        return Tensor::from_vec(elem, &[height, width]);
    }
    // Ellipse: half-axes from the box; each row spans the chord at its
    // distance from the centre row, rounded as Burn rounds it (half away
    // from zero).
    let (r, c) = (height / 2, width / 2);
    let inv_r2 = if r > 0 { 1.0 / (r * r) as f64 } else { 0.0 };
    for i in 0..height {
        let (j1, j2) = match shape {
            KernelShape::Cross if i == anchor.y => (0, width),
            KernelShape::Cross => (anchor.x, anchor.x + 1),
            _ => {
                let dy = i.abs_diff(r);
                if dy <= r {
                    let dx = (c as f64 * (((r * r - dy * dy) as f64) * inv_r2).sqrt()).round() as usize;
                    (c.saturating_sub(dx), (c + dx + 1).min(width))
                } else {
                    (0, 0)
                }
            }
        };
        elem[i * width + j1..i * width + j2].fill(true);
    }
    Tensor::from_vec(elem, &[height, width])
}

/// The source index a padded position `p` reads along a dim of `len`, or
/// None for the constant border.
fn border_index(p: isize, len: usize, border: BorderType) -> Option<usize> {
    let n = len as isize;
    if (0..n).contains(&p) {
        return Some(p as usize);
    }
    match border {
        BorderType::Constant | BorderType::Wrap => None,
        BorderType::Replicate => Some(if p < 0 { 0 } else { len - 1 }),
        BorderType::Reflect | BorderType::Reflect101 => {
            if len == 1 {
                return Some(0);
            }
            let skip = (border == BorderType::Reflect101) as isize;
            let mut p = p;
            // Fold at the edges until inside (more than once when the
            // element is wider than the image).
            while !(0..n).contains(&p) {
                p = if p < 0 { -p - 1 + skip } else { 2 * n - 1 - p - skip };
            }
            Some(p as usize)
        }
    }
}

/// The extremes of an element type: the constant border that leaves erode
/// (largest) and dilate (smallest) unchanged.
trait Extremes: Element {
    const LOWEST: Self;
    const HIGHEST: Self;
}

macro_rules! extremes {
    ($($t:ty: $lo:expr, $hi:expr;)*) => {
        $(impl Extremes for $t {
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
        })*
    };
}

// Floats take their finite extremes, as Burn does (`T::MIN`, `T::MAX`).
extremes! {
    f32: f32::MIN, f32::MAX;
    f64: f64::MIN, f64::MAX;
    half::f16: half::f16::MIN, half::f16::MAX;
    half::bf16: half::bf16::MIN, half::bf16::MAX;
    i64: i64::MIN, i64::MAX;
    i32: i32::MIN, i32::MAX;
    u8: u8::MIN, u8::MAX;
    bool: false, true;
}

/// Min (erode) or max (dilate) of two values.
trait Pick<T>: Sync {
    fn pick(a: T, b: T) -> T;
}

struct Min;
struct Max;

impl<T: PartialOrd> Pick<T> for Min {
    #[inline(always)]
    fn pick(a: T, b: T) -> T {
        if b < a { b } else { a }
    }
}

impl<T: PartialOrd> Pick<T> for Max {
    #[inline(always)]
    fn pick(a: T, b: T) -> T {
        if b > a { b } else { a }
    }
}

#[inline(always)]
fn fold_into<T: Copy, P: Pick<T>>(acc: &mut [T], src: &[T]) {
    for (a, &s) in acc.iter_mut().zip(src) {
        *a = P::pick(*a, s);
    }
}

/// Everything a pass needs about the element and the image.
struct Plan<T> {
    h: usize,
    w: usize,
    c: usize,
    kh: usize,
    kw: usize,
    ax: usize,
    ay: usize,
    /// Columns of the element that are set, per element row.
    rows: Vec<Vec<usize>>,
    rect: bool,
    border: BorderType,
    /// One `w * c` row of the constant border value.
    fill_row: Vec<T>,
}

impl<T: Copy> Plan<T> {
    /// Image row `y` with `ax` pixels of border on the left and `kw - 1 -
    /// ax` on the right, written to `out` (`(w + kw - 1) * c` values).
    fn pad_row(&self, row: &[T], out: &mut [T]) {
        let (w, c, ax) = (self.w, self.c, self.ax);
        out[ax * c..(ax + w) * c].copy_from_slice(row);
        let outside = (0..ax).chain(ax + w..w + self.kw - 1);
        for px in outside {
            let dst = &mut out[px * c..(px + 1) * c];
            match border_index(px as isize - ax as isize, w, self.border) {
                Some(sx) => dst.copy_from_slice(&row[sx * c..(sx + 1) * c]),
                None => dst.copy_from_slice(&self.fill_row[..c]),
            }
        }
    }

    /// The source row a padded row `y + ky` reads, or None for the
    /// constant border.
    fn source_row(&self, y: usize, ky: usize) -> Option<usize> {
        border_index(y as isize + ky as isize - self.ay as isize, self.h, self.border)
    }
}

/// Run `f(first_row, rows)` over `rows` rows of `row_len` values in `dst`,
/// split across threads when there is enough work.
fn for_rows<T: Send>(dst: &mut [T], row_len: usize, rows: usize, work_per_row: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    if row_len == 0 || rows == 0 {
        return;
    }
    let total = rows.saturating_mul(work_per_row.max(1));
    if rows < 2 || !parallel::go_parallel(total, parallel::PAR_CHEAP) {
        f(0, dst);
        return;
    }
    let parts = (total / (parallel::PAR_CHEAP / 4)).clamp(2, rows);
    let per = rows.div_ceil(parts);
    team::for_each_chunk_mut(dst, per * row_len, |i, piece| f(i * per, piece));
}

/// One pass of the op over a batch of `[h, w, c]` images.
fn pass<T: Copy + Send + Sync, P: Pick<T>>(plan: &Plan<T>, src: &[T], dst: &mut [T], batch: usize) -> Result<()> {
    let op = "morphology";
    let (h, w, c, kw) = (plan.h, plan.w, plan.c, plan.kw);
    let (row_len, plane) = (w * c, h * w * c);
    let padded_len = (w + kw - 1) * c;
    let nnz: usize = plan.rows.iter().map(Vec::len).sum();
    let image = |b: usize| &src[b * plane..(b + 1) * plane];
    if plan.rect {
        // Row pass: each image row reduced over the element's width.
        let mut tmp: Vec<T> = try_filled(op, batch * plane, src[0])?;
        for_rows(&mut tmp, row_len, batch * h, padded_len * kw, |first, out| {
            let mut padded = plan.fill_row[..c].repeat(w + kw - 1);
            for (j, out_row) in out.chunks_mut(row_len).enumerate() {
                let (b, y) = ((first + j) / h, (first + j) % h);
                plan.pad_row(&image(b)[y * row_len..(y + 1) * row_len], &mut padded);
                parallel::simd(|| {
                    out_row.copy_from_slice(&padded[..row_len]);
                    for kx in 1..kw {
                        fold_into::<T, P>(out_row, &padded[kx * c..kx * c + row_len]);
                    }
                });
            }
        });
        // Column pass over the row-reduced rows (a constant border row stays
        // constant through the row pass).
        for_rows(dst, row_len, batch * h, row_len * plan.kh, |first, out| {
            for (j, out_row) in out.chunks_mut(row_len).enumerate() {
                let (b, y) = ((first + j) / h, (first + j) % h);
                let rows = &tmp[b * plane..(b + 1) * plane];
                let read = |ky: usize| match plan.source_row(y, ky) {
                    Some(s) => &rows[s * row_len..(s + 1) * row_len],
                    None => &plan.fill_row[..],
                };
                parallel::simd(|| {
                    out_row.copy_from_slice(read(0));
                    for ky in 1..plan.kh {
                        fold_into::<T, P>(out_row, read(ky));
                    }
                });
            }
        });
        return Ok(());
    }
    for_rows(dst, row_len, batch * h, row_len * nnz + padded_len, |first, out| {
        // Padded source rows, cached: one slot per element row, keyed by
        // the image row it holds, so each image row is padded about once per
        // part rather than once per element row that reads it. A slot
        // reused for another row is padded again before it is read.
        let kh = plan.kh;
        let mut padded = plan.fill_row[..c].repeat((w + kw - 1) * kh);
        let mut held = vec![usize::MAX; kh];
        for (j, out_row) in out.chunks_mut(row_len).enumerate() {
            let (b, y) = ((first + j) / h, (first + j) % h);
            let img = image(b);
            let mut started = false;
            let mut fold = |seg: &[T]| {
                if started {
                    parallel::simd(|| fold_into::<T, P>(out_row, seg));
                } else {
                    out_row.copy_from_slice(seg);
                    started = true;
                }
            };
            for (ky, cols) in plan.rows.iter().enumerate() {
                if cols.is_empty() {
                    continue;
                }
                match plan.source_row(y, ky) {
                    // Every set column of a border row reads the same value.
                    None => fold(&plan.fill_row),
                    Some(s) => {
                        let slot = s % kh;
                        let row = &mut padded[slot * padded_len..(slot + 1) * padded_len];
                        if held[slot] != b * h + s {
                            plan.pad_row(&img[s * row_len..(s + 1) * row_len], row);
                            held[slot] = b * h + s;
                        }
                        for &kx in cols {
                            fold(&row[kx * c..kx * c + row_len]);
                        }
                    }
                }
            }
        }
    });
    Ok(())
}

fn morph_typed<T: Extremes>(x: &Tensor, kernel: &[bool], dims: (usize, usize, usize, usize), morph: MorphOp, opts: &MorphOptions, k: (usize, usize, Point)) -> Result<Tensor> {
    let op = morph.name();
    let (batch, h, w, c) = dims;
    let (kh, kw, anchor) = k;
    let mut data = x.try_to_vec::<T>(op)?;
    if data.is_empty() {
        return Tensor::from_vec(data, x.shape());
    }
    let fill: Vec<T> = match &opts.border_value {
        Some(v) => v.iter().map(|&f| T::from_f64(f)).collect(),
        None => vec![if morph == MorphOp::Erode { T::HIGHEST } else { T::LOWEST }; c],
    };
    let rows: Vec<Vec<usize>> = (0..kh).map(|ky| (0..kw).filter(|&kx| kernel[ky * kw + kx]).collect()).collect();
    let fill_row = fill.repeat(w);
    let plan = Plan { h, w, c, kh, kw, ax: anchor.x, ay: anchor.y, rect: kernel.iter().all(|&b| b), rows, border: opts.border_type, fill_row };
    let mut out: Vec<T> = try_filled(op, data.len(), data[0])?;
    for _ in 0..opts.iterations {
        match morph {
            MorphOp::Erode => pass::<T, Min>(&plan, &data, &mut out, batch)?,
            MorphOp::Dilate => pass::<T, Max>(&plan, &data, &mut out, batch)?,
        }
        std::mem::swap(&mut data, &mut out);
        if crate::interrupt::stopped() {
            return Err(Error::Interrupted);
        }
    }
    Tensor::from_vec(data, x.shape())
}

impl Tensor {
    /// Erode (min over the element) an image `[h, w, channels]` or a
    /// batch `[n, h, w, channels]` of any dtype by a Bool `[kh, kw]`
    /// structuring element. The result has the input's shape and dtype.
    pub fn erode(&self, kernel: &Tensor, opts: &MorphOptions) -> Result<Tensor> {
        self.morph(kernel, MorphOp::Erode, opts)
    }

    /// Dilate (max over the element); as [`Tensor::erode`] otherwise.
    pub fn dilate(&self, kernel: &Tensor, opts: &MorphOptions) -> Result<Tensor> {
        self.morph(kernel, MorphOp::Dilate, opts)
    }

    pub fn morph(&self, kernel: &Tensor, morph: MorphOp, opts: &MorphOptions) -> Result<Tensor> {
        let op = morph.name();
        let dims = match self.shape() {
            &[h, w, c] => (1, h, w, c),
            &[n, h, w, c] => (n, h, w, c),
            s => return Err(Error::invalid(op, format!("expected an image [height, width, channels] or a batch [batch, height, width, channels], found shape {s:?}"))),
        };
        if kernel.kind() != Kind::Bool {
            return Err(Error::invalid(op, format!("the structuring element must be a Bool tensor [height, width], found a {} tensor", kernel.kind())));
        }
        let (kh, kw) = match kernel.shape() {
            &[kh, kw] if kh > 0 && kw > 0 => (kh, kw),
            s => return Err(Error::invalid(op, format!("the structuring element must be a Bool tensor [height, width] of at least 1 x 1, found shape {s:?}"))),
        };
        let k = kernel.try_to_vec::<bool>(op)?;
        if !k.iter().any(|&b| b) {
            return Err(Error::invalid(op, format!("the {kh} x {kw} structuring element has no true element")));
        }
        let anchor = opts.anchor.unwrap_or(Point { x: kw / 2, y: kh / 2 });
        if anchor.x >= kw || anchor.y >= kh {
            return Err(Error::invalid(op, format!("the anchor (x {}, y {}) lies outside the {kh} x {kw} structuring element", anchor.x, anchor.y)));
        }
        if opts.iterations == 0 {
            return Err(Error::invalid(op, "iterations must be at least 1, found 0"));
        }
        if opts.border_type == BorderType::Wrap {
            return Err(Error::invalid(op, "the Wrap border type is not supported by erode and dilate; use Constant, Replicate, Reflect or Reflect101"));
        }
        let c = dims.3;
        if let Some(v) = &opts.border_value {
            if v.len() != c {
                return Err(Error::invalid(op, format!("border_value must hold one value per channel ({c}), found {} values", v.len())));
            }
            if opts.border_type != BorderType::Constant {
                return Err(Error::invalid(op, format!("border_value is for the Constant border type, found {:?}", opts.border_type)));
            }
        }
        let dtype: DType = self.dtype();
        with_dtype!(dtype, T => morph_typed::<T>(self, &k, dims, morph, opts, (kh, kw, anchor)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elem(shape: KernelShape, w: usize, h: usize, anchor: Option<Point>) -> Vec<u8> {
        create_structuring_element(shape, Size { width: w, height: h }, anchor).unwrap().to_vec::<bool>().iter().map(|&b| b as u8).collect()
    }

    // Burn's manual elements (tests/morphology.rs), which OpenCV's
    // getStructuringElement also gives.
    #[test]
    fn structuring_elements_match_burn() {
        assert_eq!(elem(KernelShape::Rect, 5, 5, None), [1; 25]);
        #[rustfmt::skip]
        let cross = [0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0];
        assert_eq!(elem(KernelShape::Cross, 5, 5, None), cross);
        #[rustfmt::skip]
        let ellipse = [0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0];
        assert_eq!(elem(KernelShape::Ellipse, 5, 5, None), ellipse);
    }

    // Hand-drawn from OpenCV's getStructuringElement.
    #[test]
    fn structuring_elements_of_other_sizes() {
        // 3 wide, 5 high cross anchored at (1, 2); a Cross with its anchor moved.
        assert_eq!(elem(KernelShape::Cross, 3, 5, None), [0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 1, 0, 0, 1, 0]);
        assert_eq!(elem(KernelShape::Cross, 3, 3, Some(Point { x: 0, y: 2 })), [1, 0, 0, 1, 0, 0, 1, 1, 1]);
        // 7 x 3 ellipse: r = 1, c = 3.
        assert_eq!(elem(KernelShape::Ellipse, 7, 3, None), [0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(elem(KernelShape::Ellipse, 1, 1, None), [1]);
        let shape = create_structuring_element(KernelShape::Ellipse, Size { width: 4, height: 6 }, None).unwrap();
        assert_eq!(shape.shape(), &[6, 4]);
        assert!(create_structuring_element(KernelShape::Rect, Size { width: 0, height: 3 }, None).is_err());
        let e = create_structuring_element(KernelShape::Cross, Size { width: 3, height: 3 }, Some(Point { x: 3, y: 0 })).unwrap_err().to_string();
        assert!(e.contains("outside a 3 x 3 element"), "{e}");
    }

    fn img(values: &[f64], h: usize, w: usize, c: usize) -> Tensor {
        Tensor::from_vec(values.to_vec(), &[h, w, c]).unwrap()
    }

    fn kernel(rows: &[&[u8]]) -> Tensor {
        let v: Vec<bool> = rows.iter().flat_map(|r| r.iter().map(|&x| x != 0)).collect();
        Tensor::from_vec(v, &[rows.len(), rows[0].len()]).unwrap()
    }

    /// The definition, directly: for checking the row/column passes.
    fn reference(src: &[f64], (h, w, c): (usize, usize, usize), k: &[bool], (kh, kw): (usize, usize), dilate: bool, o: &MorphOptions) -> Vec<f64> {
        let a = o.anchor.unwrap_or(Point { x: kw / 2, y: kh / 2 });
        let mut cur = src.to_vec();
        for _ in 0..o.iterations {
            let mut out = vec![0.0; cur.len()];
            for y in 0..h {
                for x in 0..w {
                    for ch in 0..c {
                        let mut acc: Option<f64> = None;
                        for ky in 0..kh {
                            for kx in 0..kw {
                                if !k[ky * kw + kx] {
                                    continue;
                                }
                                let sy = border_index(y as isize + ky as isize - a.y as isize, h, o.border_type);
                                let sx = border_index(x as isize + kx as isize - a.x as isize, w, o.border_type);
                                let v = match (sy, sx) {
                                    (Some(sy), Some(sx)) => cur[(sy * w + sx) * c + ch],
                                    _ => match &o.border_value {
                                        Some(b) => b[ch],
                                        None if dilate => f64::MIN,
                                        None => f64::MAX,
                                    },
                                };
                                acc = Some(match acc {
                                    None => v,
                                    Some(p) if dilate => p.max(v),
                                    Some(p) => p.min(v),
                                });
                            }
                        }
                        out[(y * w + x) * c + ch] = acc.unwrap();
                    }
                }
            }
            cur = out;
        }
        cur
    }

    #[test]
    fn border_indices() {
        let at = |p, b| border_index(p, 4, b);
        assert_eq!([-2, -1, 4, 5].map(|p| at(p, BorderType::Replicate)), [Some(0), Some(0), Some(3), Some(3)]);
        assert_eq!([-2, -1, 4, 5].map(|p| at(p, BorderType::Reflect)), [Some(1), Some(0), Some(3), Some(2)]);
        assert_eq!([-2, -1, 4, 5].map(|p| at(p, BorderType::Reflect101)), [Some(2), Some(1), Some(2), Some(1)]);
        assert_eq!(at(-1, BorderType::Constant), None);
        // Folding more than once: an element wider than the image.
        assert_eq!(border_index(-5, 2, BorderType::Reflect), Some(0));
        assert_eq!(border_index(7, 3, BorderType::Reflect101), Some(1));
        assert_eq!(border_index(-3, 1, BorderType::Reflect101), Some(0));
    }

    // Hand-computed: a 3 x 3 rectangle on a 3 x 4 ramp.
    #[test]
    fn rect_by_hand() {
        let x = img(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0], 3, 4, 1);
        let k = kernel(&[&[1, 1, 1], &[1, 1, 1], &[1, 1, 1]]);
        let d = x.dilate(&k, &MorphOptions::default()).unwrap();
        assert_eq!(d.to_vec::<f64>(), [6.0, 7.0, 8.0, 8.0, 10.0, 11.0, 12.0, 12.0, 10.0, 11.0, 12.0, 12.0]);
        let e = x.erode(&k, &MorphOptions::default()).unwrap();
        assert_eq!(e.to_vec::<f64>(), [1.0, 1.0, 2.0, 3.0, 1.0, 1.0, 2.0, 3.0, 5.0, 5.0, 6.0, 7.0]);
        // A constant border of 0 makes every edge pixel's erosion 0; the two
        // interior ones see only the image.
        let zero = MorphOptions { border_value: Some(vec![0.0]), ..Default::default() };
        assert_eq!(x.erode(&k, &zero).unwrap().to_vec::<f64>(), [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }

    // Hand-computed: a cross on a single bright pixel spreads to a plus.
    #[test]
    fn cross_by_hand_on_u8_and_bool() {
        let mut v = vec![0u8; 25];
        v[12] = 200;
        let x = Tensor::from_vec(v.clone(), &[5, 5, 1]).unwrap();
        let k = create_structuring_element(KernelShape::Cross, Size { width: 3, height: 3 }, None).unwrap();
        let d = x.dilate(&k, &MorphOptions::default()).unwrap();
        assert_eq!(d.dtype(), DType::U8);
        let mut want = vec![0u8; 25];
        for i in [7, 11, 12, 13, 17] {
            want[i] = 200;
        }
        assert_eq!(d.to_vec::<u8>(), want);
        let b = Tensor::from_vec(v.iter().map(|&x| x > 0).collect::<Vec<_>>(), &[5, 5, 1]).unwrap();
        let db = b.dilate(&k, &MorphOptions::default()).unwrap();
        assert_eq!(db.to_vec::<bool>(), want.iter().map(|&x| x > 0).collect::<Vec<_>>());
        // Eroding the plus by the cross leaves the centre; the constant border is true for erode.
        assert_eq!(db.erode(&k, &MorphOptions::default()).unwrap().to_vec::<bool>(), b.to_vec::<bool>());
        let ones = Tensor::from_vec(vec![true; 9], &[3, 3, 1]).unwrap();
        assert_eq!(ones.erode(&k, &MorphOptions::default()).unwrap().to_vec::<bool>(), vec![true; 9]);
    }

    #[test]
    fn every_option_matches_the_definition() {
        let (h, w, c) = (7, 9, 3);
        let src: Vec<f64> = (0..h * w * c).map(|i| ((i * 37 + 11) % 101) as f64 - 50.0).collect();
        let x = img(&src, h, w, c);
        let kernels: Vec<(Vec<bool>, usize, usize)> = vec![
            (vec![true; 15], 3, 5),
            (create_structuring_element(KernelShape::Cross, Size { width: 5, height: 3 }, None).unwrap().to_vec::<bool>(), 3, 5),
            (create_structuring_element(KernelShape::Ellipse, Size { width: 5, height: 5 }, None).unwrap().to_vec::<bool>(), 5, 5),
            (vec![true, false, false, false, false, true], 2, 3),
            (vec![true; 10 * 2], 10, 2),
        ];
        let borders = [BorderType::Constant, BorderType::Replicate, BorderType::Reflect, BorderType::Reflect101];
        for (k, kh, kw) in &kernels {
            let kt = Tensor::from_vec(k.clone(), &[*kh, *kw]).unwrap();
            for border in borders {
                for (anchor, iterations) in [(None, 1), (Some(Point { x: 0, y: kh - 1 }), 2), (Some(Point { x: kw - 1, y: 0 }), 3)] {
                    for dilate in [false, true] {
                        let mut o = MorphOptions { anchor, iterations, border_type: border, border_value: None };
                        if border == BorderType::Constant && iterations == 2 {
                            o.border_value = Some(vec![-7.0, 3.0, 60.0]);
                        }
                        let got = if dilate { x.dilate(&kt, &o) } else { x.erode(&kt, &o) }.unwrap().to_vec::<f64>();
                        let want = reference(&src, (h, w, c), k, (*kh, *kw), dilate, &o);
                        assert_eq!(got, want, "kernel {kh}x{kw} {k:?} {o:?} dilate={dilate}");
                    }
                }
            }
        }
    }

    #[test]
    fn dtypes_agree_and_batches_are_per_image() {
        let (n, h, w, c) = (3, 40, 50, 2);
        let src: Vec<i64> = (0..n * h * w * c).map(|i| ((i * 7919) % 251) as i64).collect();
        let k = create_structuring_element(KernelShape::Ellipse, Size { width: 7, height: 5 }, None).unwrap();
        let o = MorphOptions { border_type: BorderType::Reflect101, iterations: 2, ..Default::default() };
        let batch = Tensor::from_vec(src.clone(), &[n, h, w, c]).unwrap();
        let want = batch.dilate(&k, &o).unwrap().to_vec::<i64>();
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::U8] {
            let got = batch.cast(dtype).unwrap().dilate(&k, &o).unwrap();
            assert_eq!(got.dtype(), dtype);
            assert_eq!(got.cast(DType::I64).unwrap().to_vec::<i64>(), want, "{dtype}");
        }
        let plane = h * w * c;
        for b in 0..n {
            let one = Tensor::from_vec(src[b * plane..(b + 1) * plane].to_vec(), &[h, w, c]).unwrap();
            assert_eq!(one.dilate(&k, &o).unwrap().to_vec::<i64>(), &want[b * plane..(b + 1) * plane]);
        }
    }

    #[test]
    fn large_images_split_across_threads_give_the_same_result() {
        let (h, w) = (300, 257);
        let src: Vec<f32> = (0..h * w).map(|i| ((i * 104729) % 1009) as f32).collect();
        let x = Tensor::from_vec(src.clone(), &[h, w, 1]).unwrap();
        let k = create_structuring_element(KernelShape::Cross, Size { width: 5, height: 5 }, None).unwrap();
        let got = x.erode(&k, &MorphOptions::default()).unwrap().to_vec::<f32>();
        let src64: Vec<f64> = src.iter().map(|&v| v as f64).collect();
        let want = reference(&src64, (h, w, 1), &k.to_vec::<bool>(), (5, 5), false, &MorphOptions::default());
        assert!(got.iter().zip(&want).all(|(&g, &w)| g as f64 == w));
    }

    #[test]
    fn bad_inputs_are_errors() {
        let x = Tensor::zeros(&[4, 4, 1], DType::F32);
        let k = Tensor::ones(&[3, 3], DType::Bool);
        let d = MorphOptions::default();
        let msg = |r: Result<Tensor>| r.unwrap_err().to_string();
        assert!(msg(Tensor::zeros(&[4, 4], DType::F32).erode(&k, &d)).contains("found shape [4, 4]"));
        assert!(msg(x.erode(&Tensor::ones(&[3, 3], DType::F32), &d)).contains("must be a Bool tensor"));
        assert!(msg(x.erode(&Tensor::zeros(&[3, 3], DType::Bool), &d)).contains("no true element"));
        assert!(msg(x.erode(&Tensor::ones(&[0, 3], DType::Bool), &d)).contains("at least 1 x 1"));
        assert!(msg(x.erode(&k, &MorphOptions { anchor: Some(Point { x: 3, y: 0 }), ..Default::default() })).contains("anchor (x 3, y 0) lies outside"));
        assert!(msg(x.erode(&k, &MorphOptions { iterations: 0, ..Default::default() })).contains("iterations must be at least 1"));
        assert!(msg(x.dilate(&k, &MorphOptions { border_type: BorderType::Wrap, ..Default::default() })).contains("Wrap border type is not supported"));
        assert!(msg(x.dilate(&k, &MorphOptions { border_value: Some(vec![1.0, 2.0]), ..Default::default() })).contains("one value per channel (1), found 2"));
        // Empty images come back as they are.
        assert_eq!(Tensor::zeros(&[0, 4, 1], DType::U8).dilate(&k, &d).unwrap().shape(), &[0, 4, 1]);
    }
}
