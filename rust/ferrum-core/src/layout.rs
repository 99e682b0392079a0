//! A layout is a plain value: shape, strides (in elements, possibly negative
//! or zero) and an offset into the buffer. Every view op changes only this.
//!
//! Kernels index buffers through layouts (some with raw pointers, and NumPy
//! reads them through `to_numpy`), so a tensor never holds a layout that
//! reaches outside its buffer: [`Layout::check_within`] proves it when a
//! tensor is made ([`crate::Tensor::from_parts`], `Tensor::view`), with
//! checked arithmetic, since a shape whose element count overflows could
//! otherwise wrap around to a small, plausible number.

use crate::error::{Error, Result};
use crate::shape::{contiguous_strides, norm_dim, numel};

pub use crate::shape::DimVec;

/// The largest stride magnitude (in elements) a layout may hold: its byte
/// stride must fit in `isize` for every element size (NumPy's strides are
/// in bytes).
const MAX_STRIDE: isize = isize::MAX / 8;

/// The most elements a layout may have: their size in bytes must fit in
/// `isize` for every element size, as NumPy requires of any array (a
/// broadcast view included), so that no byte count derived from a layout
/// can overflow.
const MAX_ELEMENTS: usize = isize::MAX as usize / 8;

#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    pub(crate) shape: DimVec<usize>,
    pub(crate) strides: DimVec<isize>,
    pub(crate) offset: usize,
}

// By hand: the derived clone copies the dims one element at a time.
impl Clone for Layout {
    fn clone(&self) -> Self {
        Layout { shape: DimVec::from_slice(&self.shape), strides: DimVec::from_slice(&self.strides), offset: self.offset }
    }
}

impl Layout {
    pub fn contiguous(shape: &[usize]) -> Self {
        Layout { shape: DimVec::from_slice(shape), strides: contiguous_strides(shape), offset: 0 }
    }

    /// A layout of `shape` with `strides` (in elements, possibly negative
    /// or zero) from element `offset`: an error when the two lengths
    /// differ. Whether it fits a buffer is checked when a tensor is made of
    /// it ([`crate::Tensor::from_parts`]).
    pub fn strided(shape: &[usize], strides: &[isize], offset: usize) -> Result<Self> {
        if shape.len() != strides.len() {
            return Err(Error::invalid("layout", format!("expected one stride per dim of shape {shape:?}, found strides {strides:?}")));
        }
        Ok(Layout { shape: DimVec::from_slice(shape), strides: DimVec::from_slice(strides), offset })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Strides in elements, one per dim.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Index of the first element in the buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Fail unless every element of this layout lies inside a buffer of
    /// `len` elements: ranks agree, the element count's size in bytes fits
    /// in `isize` (as does every stride's), and the lowest and highest offsets reached
    /// are in `0..len` (an empty layout reaches none, but its offset must
    /// still not point past the buffer). Computed in `i128`, so no step of
    /// the check itself can overflow.
    pub fn check_within(&self, op: &'static str, len: usize) -> Result<()> {
        let bad = |why: String| Err(Error::invalid(op, format!("layout of shape {:?}, strides {:?}, offset {} {why}", self.shape, self.strides, self.offset)));
        if self.shape.len() != self.strides.len() {
            return bad(format!("has {} dims but {} strides", self.shape.len(), self.strides.len()));
        }
        let count = crate::shape::count(&self.shape);
        let Some(count) = count.filter(|&n| n <= MAX_ELEMENTS) else {
            return bad("has more elements than can be addressed".into());
        };
        if self.strides.iter().any(|s| !(-MAX_STRIDE..=MAX_STRIDE).contains(s)) {
            return bad("has a stride too large to address".into());
        }
        if count == 0 {
            return if self.offset <= len { Ok(()) } else { bad(format!("points past a buffer of {len} elements")) };
        }
        let (mut lo, mut hi) = (self.offset as i128, self.offset as i128);
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let span = s as i128 * (d as i128 - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        if lo < 0 || hi >= len as i128 {
            return bad(format!("reaches elements {lo}..={hi}, outside a buffer of {len} elements"));
        }
        Ok(())
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// True when the elements are laid out row-major without gaps (an
    /// empty tensor always is: there is nothing to lay out).
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut acc = 1isize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d != 1 && s != acc {
                return false;
            }
            acc *= d as isize;
        }
        true
    }

    /// The buffer range `[offset, offset + numel)` when contiguous.
    pub fn contiguous_range(&self) -> Option<(usize, usize)> {
        self.is_contiguous().then(|| (self.offset, self.offset + self.numel()))
    }

    pub fn transpose(&self, a: usize, b: usize) -> Layout {
        let mut l = self.clone();
        l.shape.swap(a, b);
        l.strides.swap(a, b);
        l
    }

    pub fn permute(&self, axes: &[usize]) -> Layout {
        Layout {
            shape: axes.iter().map(|&a| self.shape[a]).collect(),
            strides: axes.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        }
    }

    /// Restrict `dim` to `start..start + len` with a step; a negative step
    /// walks backwards from `start`.
    pub fn narrow_step(&self, dim: usize, start: usize, len: usize, step: isize) -> Layout {
        let mut l = self.clone();
        // Only a start that names an element moves the offset: in an empty
        // tensor (another dim of size 0) it names none and could point past
        // the buffer.
        if len > 0 && self.numel() > 0 {
            l.offset = (self.offset as isize + start as isize * self.strides[dim]) as usize;
        }
        l.shape[dim] = len;
        // With one element or none (or an empty tensor) the step is never
        // taken: keeping the old stride spares a product that a huge step
        // would overflow. Otherwise stride * step * (len - 1) lies inside
        // the buffer, so the product fits.
        if len > 1 && self.numel() > 0 {
            l.strides[dim] = self.strides[dim].saturating_mul(step);
        }
        l
    }

    pub fn flip(&self, dim: usize) -> Layout {
        let n = self.shape[dim];
        if n == 0 {
            return self.clone();
        }
        self.narrow_step(dim, n - 1, n, -1)
    }

    pub fn unsqueeze(&self, dim: usize) -> Layout {
        let mut l = self.clone();
        // Any stride does for a size-1 dim; this one keeps the layout
        // contiguous when it was. Saturating: it can never be stepped along.
        let stride = if dim < self.rank() { self.strides[dim].saturating_mul(self.shape[dim] as isize).clamp(-MAX_STRIDE, MAX_STRIDE) } else { 1 };
        l.shape.insert(dim, 1);
        l.strides.insert(dim, stride);
        l
    }

    /// `unsqueeze(0)` `n` times, built in one pass with fallible allocation
    /// (one insert at a time is quadratic in `n`: a huge rank hung).
    pub fn unsqueeze_leading(&self, op: &'static str, n: usize) -> crate::Result<Layout> {
        let rank = self.rank().checked_add(n).ok_or_else(|| crate::Error::invalid(op, format!("rank {} + {n} overflows", self.rank())))?;
        let lead = if self.rank() > 0 { self.strides[0].saturating_mul(self.shape[0] as isize).clamp(-MAX_STRIDE, MAX_STRIDE) } else { 1 };
        let mut shape: Vec<usize> = crate::shape::try_with_capacity(op, rank)?;
        let mut strides: Vec<isize> = crate::shape::try_with_capacity(op, rank)?;
        shape.resize(n, 1);
        strides.resize(n, lead);
        shape.extend_from_slice(&self.shape);
        strides.extend_from_slice(&self.strides);
        Ok(Layout { shape: DimVec::from_vec(shape), strides: DimVec::from_vec(strides), offset: self.offset })
    }

    pub fn squeeze(&self, dim: usize) -> Layout {
        let mut l = self.clone();
        l.shape.remove(dim);
        l.strides.remove(dim);
        l
    }

    /// Stretch size-1 dims to `shape` (same rank) with stride 0.
    pub fn broadcast_to(&self, op: &'static str, shape: &[usize]) -> Result<Layout> {
        if shape.len() != self.rank() {
            return Err(Error::shapes(op, &self.shape, shape, "expand keeps the rank"));
        }
        let mut strides = self.strides.clone();
        for (i, (&from, &to)) in self.shape.iter().zip(shape).enumerate() {
            if from != to {
                if from != 1 {
                    return Err(Error::shapes(op, &self.shape, shape, format!("dim {i} has size {from}, only size 1 expands")));
                }
                strides[i] = 0;
            }
        }
        Ok(Layout { shape: DimVec::from_slice(shape), strides, offset: self.offset })
    }

    /// A view of the same elements with a new shape, when the strides allow
    /// it without copying (always for contiguous layouts). Dims are grouped
    /// into runs that are contiguous with each other; each run of old dims
    /// must map onto whole new dims (size-1 dims fit anywhere).
    pub fn reshape_view(&self, shape: &[usize]) -> Option<Layout> {
        let numel = self.numel();
        if numel == 0 || self.is_contiguous() {
            return Some(Layout { shape: DimVec::from_slice(shape), strides: contiguous_strides(shape), offset: self.offset });
        }
        let (old, old_strides) = (&self.shape, &self.strides);
        let mut strides: DimVec<isize> = smallvec::smallvec![0isize; shape.len()];
        let mut view_d = shape.len() as isize - 1;
        let mut base = *old_strides.last()?;
        let (mut tensor_numel, mut view_numel) = (1usize, 1usize);
        for d in (0..old.len()).rev() {
            tensor_numel *= old[d];
            let run_ends = d == 0 || (old[d - 1] != 1 && old_strides[d - 1] != tensor_numel as isize * base);
            if run_ends {
                while view_d >= 0 && (view_numel < tensor_numel || shape[view_d as usize] == 1) {
                    strides[view_d as usize] = view_numel as isize * base;
                    view_numel *= shape[view_d as usize];
                    view_d -= 1;
                }
                if view_numel != tensor_numel {
                    return None;
                }
                if d > 0 {
                    base = old_strides[d - 1];
                    tensor_numel = 1;
                    view_numel = 1;
                }
            }
        }
        if view_d != -1 {
            return None;
        }
        Some(Layout { shape: DimVec::from_slice(shape), strides, offset: self.offset })
    }

    pub fn dim(&self, op: &'static str, dim: isize) -> Result<usize> {
        norm_dim(op, dim, self.rank())
    }

    /// Buffer offsets of every element in row-major order.
    pub fn offsets(&self) -> OffsetIter<'_> {
        OffsetIter::new(self)
    }
}

/// Row-major walk over a strided layout, yielding buffer offsets.
pub struct OffsetIter<'a> {
    layout: &'a Layout,
    index: Vec<usize>,
    next: isize,
    remaining: usize,
}

impl<'a> OffsetIter<'a> {
    fn new(layout: &'a Layout) -> Self {
        OffsetIter { layout, index: vec![0; layout.rank()], next: layout.offset as isize, remaining: layout.numel() }
    }
}

impl Iterator for OffsetIter<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.next as usize;
        let l = self.layout;
        for d in (0..self.index.len()).rev() {
            self.index[d] += 1;
            self.next += l.strides[d];
            if self.index[d] < l.shape[d] {
                break;
            }
            self.next -= l.strides[d] * l.shape[d] as isize;
            self.index[d] = 0;
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for OffsetIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_is_a_view() {
        let l = Layout::contiguous(&[2, 3]).transpose(0, 1);
        assert_eq!(l.shape(), [3, 2]);
        assert!(!l.is_contiguous());
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn flip_walks_backwards() {
        let l = Layout::contiguous(&[4]).flip(0);
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![3, 2, 1, 0]);
    }

    #[test]
    fn narrow_with_step() {
        let l = Layout::contiguous(&[2, 6]).narrow_step(1, 1, 3, 2);
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![1, 3, 5, 7, 9, 11]);
    }

    #[test]
    fn reshape_view_of_non_contiguous() {
        // [2, 3, 4] with the first two dims transposed: dims 1-2 stay contiguous.
        let l = Layout::contiguous(&[3, 2, 4]).transpose(0, 1);
        let v = l.reshape_view(&[2, 3, 2, 2]).unwrap();
        let direct: Vec<usize> = l.offsets().collect();
        assert_eq!(v.offsets().collect::<Vec<_>>(), direct);
        assert!(l.reshape_view(&[6, 4]).is_none());
    }

    #[test]
    fn empty_layouts_are_contiguous() {
        let l = Layout { shape: DimVec::from_slice(&[3, 0]), strides: DimVec::from_slice(&[7, 1]), offset: 5 };
        assert!(l.is_contiguous());
        assert_eq!(l.contiguous_range(), Some((5, 5)));
    }

    #[test]
    fn reshape_view_across_unit_dims() {
        // [2, 1, 2] flipped on the last dim: size-1 dim in the middle.
        let l = Layout::contiguous(&[2, 1, 2]).flip(2);
        let direct: Vec<usize> = l.offsets().collect();
        // Strides 2 and -1 cannot merge into one dim: that reshape copies.
        assert!(l.reshape_view(&[4]).is_none());
        let v = l.reshape_view(&[2, 2]).expect("unit dims fold away");
        assert_eq!(v.offsets().collect::<Vec<_>>(), direct);
        let w = l.reshape_view(&[2, 1, 1, 2]).expect("unit dims can be added");
        assert_eq!(w.offsets().collect::<Vec<_>>(), direct);
    }

    #[test]
    fn broadcast_uses_zero_strides() {
        let l = Layout::contiguous(&[1, 3]).broadcast_to("expand", &[2, 3]).unwrap();
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![0, 1, 2, 0, 1, 2]);
        assert!(Layout::contiguous(&[2, 3]).broadcast_to("expand", &[4, 3]).is_err());
    }
}
