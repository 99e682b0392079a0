//! The tensor value: a shared buffer seen through a layout.

mod access;
mod creation;
mod dispatch;
pub mod views;

#[cfg(test)]
mod cast_tests;
#[cfg(test)]
mod foreign_tests;


use crate::dtype::{DType, Kind};


use crate::element::Element;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::storage::Storage;

#[derive(Debug, Clone)]
pub struct Tensor {
    storage: Storage,
    layout: Layout,
}

impl Tensor {
    /// A tensor over `storage` seen through `layout`, or an error when the
    /// layout reaches outside the buffer (or its element count overflows).
    /// Every tensor is made here or by [`Tensor::view`], so every layout a
    /// kernel reads has been checked.
    pub fn from_parts(storage: Storage, layout: Layout) -> Result<Tensor> {
        layout.check_within("tensor", storage.len())?;
        Ok(Tensor { storage, layout })
    }

    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        // Cheaper than `from_parts`' general check, and as sound: a shape
        // whose count fits holds every contiguous stride and offset within
        // that count, so the layout stays inside a buffer of that length.
        let n = crate::shape::checked_numel("from_data", shape, 8)?;
        if n != data.len() {
            return Err(Error::invalid(
                "from_data",
                format!("{} values do not fill shape {:?} ({} elements)", data.len(), shape, n),
            ));
        }
        Ok(Tensor { storage: T::wrap_vec(data), layout: Layout::contiguous(shape) })
    }

    /// A tensor over `len` values at `ptr` that another library owns (no
    /// copy), seen through `layout`, the memory kept alive by `owner` until
    /// the last tensor sharing it is dropped. Ferrum only reads it: ops that
    /// would reuse a buffer in place allocate instead, and
    /// [`Tensor::into_vec`] copies.
    ///
    /// An error (and `owner` dropped) when `ptr` is null or misaligned for
    /// `T`, or `layout` reaches outside the `len` values.
    ///
    /// # Safety
    ///
    /// As [`Buffer::from_foreign`]: while `owner` lives, `ptr` is valid for
    /// reads of `len` valid values of `T`, not written while an op reads them.
    pub unsafe fn from_foreign<T: Element>(ptr: *const T, len: usize, owner: crate::buffer::ForeignOwner, layout: Layout) -> Result<Tensor> {
        // SAFETY: the caller's promise, passed on.
        let buffer = unsafe { crate::buffer::Buffer::from_foreign(ptr, len, owner)? };
        Tensor::from_parts(T::wrap(std::sync::Arc::new(buffer)), layout)
    }

    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn dtype(&self) -> DType {
        self.storage.dtype()
    }

    pub fn kind(&self) -> Kind {
        self.dtype().kind()
    }

    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    pub fn rank(&self) -> usize {
        self.layout.rank()
    }

    pub fn numel(&self) -> usize {
        self.layout.numel()
    }

    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// The same buffer under another layout (a view), or an error naming
    /// `op` when that layout reaches outside the buffer or its element count
    /// overflows (an expand or reshape to an absurd shape).
    pub(crate) fn view(&self, op: &'static str, layout: Layout) -> Result<Tensor> {
        layout.check_within(op, self.storage.len())?;
        Ok(Tensor { storage: self.storage.clone(), layout })
    }

    /// The same buffer under a layout derived from this tensor's own by
    /// steps that can only reach elements it reaches, with no more of them:
    /// dims permuted or flipped, a dim narrowed within its range, size-1
    /// dims added or removed. Such a layout needs no check (debug builds
    /// still make it); anything else (expand, reshape, windows) goes through
    /// [`Tensor::view`].
    pub(crate) fn subview(&self, layout: Layout) -> Tensor {
        debug_assert!(layout.check_within("subview", self.storage.len()).is_ok() && layout.numel() <= self.numel().max(1));
        Tensor { storage: self.storage.clone(), layout }
    }

    /// Fail unless this tensor is of `kind`.
    pub fn expect_kind(&self, op: &'static str, kind: Kind) -> Result<()> {
        if self.kind() != kind {
            return Err(Error::KindMismatch { op, expected: kind, found: self.kind() });
        }
        Ok(())
    }

    /// Fail with [`Error::StorageDType`] for an i32 or u8 tensor, in a
    /// kernel written for i64 alone: callers run the op again in i64 and
    /// narrow the result back, checked, so nothing wraps silently.
    pub(crate) fn expect_not_storage_int(&self, op: &'static str) -> Result<()> {
        match self.dtype() {
            dtype @ (DType::I32 | DType::U8) => Err(Error::StorageDType { op, dtype }),
            _ => Ok(()),
        }
    }

    /// An f16 or bf16 tensor's values in f32, for an op that reads them
    /// widened and rounds its result back once (a sum then accumulates in
    /// f32, as the matmul kernels of these dtypes do); `None` for the other
    /// dtypes.
    pub(crate) fn half_widened(&self) -> Option<Result<Tensor>> {
        matches!(self.dtype(), DType::F16 | DType::BF16).then(|| self.cast(DType::F32))
    }

    /// Fail unless both tensors share a dtype.
    pub fn expect_same_dtype(&self, op: &'static str, other: &Tensor) -> Result<()> {
        if self.dtype() != other.dtype() {
            return Err(Error::DTypeMismatch { op, lhs: self.dtype(), rhs: other.dtype() });
        }
        Ok(())
    }

    pub fn expect_rank(&self, op: &'static str, rank: usize) -> Result<()> {
        if self.rank() != rank {
            return Err(Error::RankMismatch { op, expected: rank, found: self.rank(), shape: self.shape().to_vec() });
        }
        Ok(())
    }

    pub fn dim(&self, op: &'static str, dim: isize) -> Result<usize> {
        self.layout.dim(op, dim)
    }
}
