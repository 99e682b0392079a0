//! Reading elements out: typed buffers, contiguous copies, scalars, and
//! taking a buffer back for in-place reuse.

use std::sync::Arc;

use super::Tensor;
use crate::dtype::{Element, Scalar};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::with_dtype;

impl Tensor {
    /// The whole underlying buffer, typed. Panics on a dtype mismatch, which
    /// callers rule out by dispatching on `dtype()` first.
    pub fn buffer<T: Element>(&self) -> &[T] {
        T::unwrap(&self.storage).expect("buffer: dtype checked by the caller")
    }

    /// The elements as one slice when the layout is contiguous.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        if self.numel() == 0 {
            return Some(&[]);
        }
        let (s, e) = self.layout.contiguous_range()?;
        Some(&self.buffer::<T>()[s..e])
    }

    /// All elements in row-major order, copied.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        if let Some(s) = self.as_slice::<T>() {
            return s.to_vec();
        }
        let buf = self.buffer::<T>();
        crate::kernels::strided::gather_strided(buf, &self.layout)
    }

    /// The elements as an owned row-major vector, taking the buffer without a
    /// copy when this tensor is its only owner and already lays it out so.
    pub fn into_vec<T: Element>(self) -> Vec<T> {
        let n = self.numel();
        if self.layout.offset == 0 && self.layout.is_contiguous() && self.storage.len() == n {
            let mut storage = self.storage;
            let arc = T::unwrap_mut(&mut storage).expect("into_vec: dtype checked by the caller");
            let arc = std::mem::replace(arc, Arc::new(Vec::new()));
            return Arc::try_unwrap(arc).unwrap_or_else(|shared| shared.as_ref().clone());
        }
        self.to_vec()
    }

    /// Mutable access to the elements when the buffer can be written in
    /// place: unique owner, contiguous, covering the whole buffer.
    pub fn try_mut_slice<T: Element>(&mut self) -> Option<&mut [T]> {
        let n = self.numel();
        if self.layout.offset != 0 || !self.layout.is_contiguous() || self.storage.len() != n {
            return None;
        }
        let arc = T::unwrap_mut(&mut self.storage)?;
        Arc::get_mut(arc).map(|v| v.as_mut_slice())
    }

    /// A contiguous tensor with the same values: itself when already so.
    pub fn contiguous(&self) -> Tensor {
        if self.layout.is_contiguous() {
            return self.clone();
        }
        with_dtype!(self.dtype(), T => {
            Tensor::from_parts(T::wrap(Arc::new(self.to_vec::<T>())), Layout::contiguous(self.shape()))
        })
    }

    /// The one element of a tensor with a single element.
    pub fn into_scalar(&self) -> Result<Scalar> {
        if self.numel() != 1 {
            return Err(Error::invalid(
                "into_scalar",
                format!("expected a tensor with exactly one element, found shape {:?}", self.shape()),
            ));
        }
        let off = self.layout.offset;
        Ok(with_dtype!(self.dtype(), T => self.buffer::<T>()[off].to_scalar()))
    }

    /// The element at a multi-index (for tests and printing).
    pub fn get(&self, index: &[usize]) -> Result<Scalar> {
        if index.len() != self.rank() {
            return Err(Error::RankMismatch { op: "get", expected: self.rank(), found: index.len(), shape: self.shape().to_vec() });
        }
        let mut off = self.layout.offset as isize;
        for (d, (&i, &n)) in index.iter().zip(self.shape()).enumerate() {
            if i >= n {
                return Err(Error::IndexOutOfBounds { op: "get", index: i as i64, dim: d, size: n });
            }
            off += i as isize * self.layout.strides[d];
        }
        Ok(with_dtype!(self.dtype(), T => self.buffer::<T>()[off as usize].to_scalar()))
    }
}
