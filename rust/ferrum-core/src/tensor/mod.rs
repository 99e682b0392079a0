//! The tensor value: a shared buffer seen through a layout.

mod access;
mod creation;
mod dispatch;
pub mod views;

use std::sync::Arc;

use crate::dtype::{DType, Element, Kind};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::storage::Storage;

#[derive(Debug, Clone)]
pub struct Tensor {
    storage: Storage,
    layout: Layout,
}

impl Tensor {
    /// A tensor over `storage` seen through `layout`. The layout must stay
    /// inside the buffer; views built by this crate guarantee it.
    pub fn from_parts(storage: Storage, layout: Layout) -> Tensor {
        Tensor { storage, layout }
    }

    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(Error::invalid(
                "from_data",
                format!("{} values do not fill shape {:?} ({} elements)", data.len(), shape, n),
            ));
        }
        Ok(Tensor { storage: T::wrap(Arc::new(data)), layout: Layout::contiguous(shape) })
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

    /// The same buffer under another layout (a view).
    pub(crate) fn with_layout(&self, layout: Layout) -> Tensor {
        Tensor { storage: self.storage.clone(), layout }
    }

    /// Fail unless this tensor is of `kind`.
    pub fn expect_kind(&self, op: &'static str, kind: Kind) -> Result<()> {
        if self.kind() != kind {
            return Err(Error::KindMismatch { op, expected: kind, found: self.kind() });
        }
        Ok(())
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
