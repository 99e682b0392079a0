//! Reading elements out: typed buffers, contiguous copies, scalars, and
//! taking a buffer back for in-place reuse.

use std::sync::Arc;

use super::Tensor;
use crate::buffer::Buffer;
use crate::dtype::Scalar;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::with_dtype;

impl Tensor {
    /// The whole underlying buffer, typed. Panics on a dtype mismatch, which
    /// callers rule out by dispatching on `dtype()` first.
    pub fn buffer<T: Element>(&self) -> &[T] {
        T::unwrap(&self.storage).expect("buffer: dtype checked by the caller")
    }

    /// The elements as one slice when the layout is contiguous and the
    /// buffer holds `T`.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        let buf = T::unwrap(&self.storage)?;
        if self.numel() == 0 {
            return Some(&[]);
        }
        let (s, e) = self.layout.contiguous_range()?;
        Some(&buf[s..e])
    }

    /// All elements in row-major order, copied; an error naming `op` when a
    /// view (a broadcast one can be far larger than its buffer) does not fit
    /// in memory.
    ///
    /// A storage dtype read as its compute dtype (an i32 or u8 index
    /// tensor read as i64, f16 as f32) is converted on the way, which is
    /// how kernels written for i64 and f32 accept them.
    pub fn try_to_vec<T: Element>(&self, op: &'static str) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            if self.dtype().compute() == T::DTYPE {
                return self.cast(T::DTYPE)?.into_vec(op);
            }
            return Err(Error::Internal { reason: format!("{op}: read a {} tensor as {}", self.dtype(), T::DTYPE) });
        }
        if let Some(s) = self.as_slice::<T>() {
            return Ok(s.to_vec());
        }
        crate::kernels::strided::gather_strided(op, self.buffer::<T>(), &self.layout)
    }

    /// [`Tensor::try_to_vec`] for tests, which only build small tensors.
    #[cfg(test)]
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        self.try_to_vec("to_vec").expect("to_vec: a test tensor fits in memory")
    }

    /// The elements as an owned row-major vector, taking the buffer without a
    /// copy when this tensor is its only owner and already lays it out so.
    pub fn into_vec<T: Element>(self, op: &'static str) -> Result<Vec<T>> {
        let n = self.numel();
        if T::DTYPE == self.dtype() && self.layout.offset == 0 && self.layout.is_contiguous() && self.storage.len() == n {
            let mut storage = self.storage;
            let arc = T::unwrap_mut(&mut storage).expect("into_vec: dtype checked by the caller");
            let arc = std::mem::replace(arc, Arc::new(Buffer::from(Vec::new())));
            // Foreign memory comes out as a copy: the vector is the caller's to write.
            return Ok(Arc::try_unwrap(arc).map_or_else(|shared| shared.to_vec(), Buffer::into_vec));
        }
        self.try_to_vec(op)
    }

    /// Mutable access to the elements when the buffer can be written in
    /// place: unique owner, allocated by ferrum (not foreign memory),
    /// contiguous, covering the whole buffer.
    pub fn try_mut_slice<T: Element>(&mut self) -> Option<&mut [T]> {
        let n = self.numel();
        if self.layout.offset != 0 || !self.layout.is_contiguous() || self.storage.len() != n {
            return None;
        }
        let arc = T::unwrap_mut(&mut self.storage)?;
        Arc::get_mut(arc).and_then(Buffer::as_mut_slice)
    }

    /// A contiguous tensor with the same values: itself when already so;
    /// an error naming `op` when the copy does not fit in memory.
    pub fn try_contiguous(&self, op: &'static str) -> Result<Tensor> {
        if self.layout.is_contiguous() {
            return Ok(self.clone());
        }
        with_dtype!(self.dtype(), T => {
            Tensor::from_vec(self.try_to_vec::<T>(op)?, self.shape())
        })
    }

    /// [`Tensor::try_contiguous`] for tests, which only build small tensors.
    #[cfg(test)]
    pub fn contiguous(&self) -> Tensor {
        self.try_contiguous("contiguous").expect("contiguous: a test tensor fits in memory")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autodiff::Var;
    use crate::ops::binary::BinaryOp;
    use crate::ops::compare::CompareOp;
    use crate::ops::unary::FloatUnary;
    use crate::DType;

    /// A stride-0 view of 2^40 elements over one stored value: 4 TiB once
    /// materialised, far more than any test machine has.
    fn huge_view() -> Tensor {
        Tensor::from_vec(vec![1.0f32], &[1, 1]).unwrap().expand(&[1 << 20, 1 << 20]).unwrap()
    }

    /// The op's own error, raised before anything is allocated.
    fn assert_refused(op: &str, r: Result<impl std::fmt::Debug>) {
        let e = r.expect_err(op).to_string();
        assert!(e.starts_with(&format!("{op}: ")) && e.contains("more than this machine's memory"), "{e}");
    }

    #[test]
    fn materialising_a_huge_view_is_an_error_naming_the_op() {
        let x = huge_view();
        let e = x.try_to_vec::<f32>("to_list").unwrap_err().to_string();
        assert!(e.starts_with("to_list: materialising a view of shape [1048576, 1048576]: cannot allocate 1099511627776 elements"), "{e}");
        assert_refused("to_data", x.try_contiguous("to_data"));
        assert_refused("exp", x.float_unary(FloatUnary::Exp));
        assert_refused("add", x.binary_scalar(BinaryOp::Add, Scalar::Float(1.0)));
        assert_refused("abs", x.abs());
        assert_refused("is_nan", x.is_nan());
        assert_refused("greater", x.compare_scalar(CompareOp::Greater, Scalar::Float(0.0)));
        assert_refused("cast", x.cast(DType::F64));
        assert_refused("prod", x.prod());
        assert_refused("argmax", x.argmax(1));
        // Not a view of the buffer once flattened: rows of two alternate.
        let rows = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap().expand(&[1 << 40, 2]).unwrap();
        assert_refused("reshape", rows.reshape(&[-1]));
        assert_refused("sort", x.sort(1, false));
        assert_refused("cat", Tensor::cat(&[x.clone(), x.clone()], 0));
        assert_refused("roll", x.roll(&[1], &[0]));
    }

    #[test]
    fn autodiff_extrema_of_a_huge_view_need_no_copy_unless_tracked() {
        let x = huge_view();
        assert_eq!(Var::constant(x.clone()).max().unwrap().value.to_vec::<f32>(), vec![1.0]);
        assert_eq!(Var::constant(x).min().unwrap().value.to_vec::<f32>(), vec![1.0]);
        // Tracked, the winner's position is needed: flattening the view to
        // find it is refused, not attempted.
        let leaf = Var::leaf(Tensor::from_vec(vec![1.0f32], &[1, 1]).unwrap());
        let big = leaf.expand(&[1 << 20, 1 << 20]).unwrap();
        assert_refused("max", big.max());
        assert_refused("prod", big.prod());
    }
}
