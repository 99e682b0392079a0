//! Writing into a region: a copy of the tensor with a sliced region replaced
//! by other values or by one value.

use crate::autodiff::{record, FnBackward, Var};

use crate::dtype::Scalar;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::copy::{copy_strided, fill_strided};
use crate::layout::Layout;
use crate::tensor::views::SliceSpec;
use crate::tensor::Tensor;
use crate::with_dtype;

impl Tensor {
    /// A copy with the region `specs` selects replaced by `values`, whose
    /// shape must be the region's.
    pub fn slice_assign(&self, specs: &[SliceSpec], values: &Tensor) -> Result<Tensor> {
        let op = "slice_assign";
        self.expect_same_dtype(op, values)?;
        let region = self.region(op, specs)?;
        if values.shape() != region.shape.as_slice() {
            return Err(Error::shapes(op, &region.shape, values.shape(), "the values must have the shape of the sliced region"));
        }
        with_dtype!(self.dtype(), T => {
            let mut out = self.try_to_vec::<T>(op)?;
            copy_strided(values.buffer::<T>(), values.layout(), &mut out, &region);
            Tensor::from_vec(out, self.shape())
        })
    }

    /// [`Tensor::slice_assign`] taking the tensor by value: when nothing else
    /// holds its buffer (one owner, allocated by ferrum, contiguous and
    /// covering the whole buffer) the region is written in place and the
    /// same buffer returned, so writing one position of a preallocated
    /// cache costs the region, not the whole tensor. Otherwise a copy is
    /// written and every other holder of the buffer still sees the old values.
    pub fn slice_assign_owned(mut self, specs: &[SliceSpec], values: &Tensor) -> Result<Tensor> {
        let op = "slice_assign";
        self.expect_same_dtype(op, values)?;
        let region = self.region(op, specs)?;
        if values.shape() != region.shape.as_slice() {
            return Err(Error::shapes(op, &region.shape, values.shape(), "the values must have the shape of the sliced region"));
        }
        let written = with_dtype!(self.dtype(), T => {
            // `values` cannot share the buffer: then it would have two owners.
            match self.try_mut_slice::<T>() {
                Some(dst) => {
                    copy_strided(values.buffer::<T>(), values.layout(), dst, &region);
                    true
                }
                None => false,
            }
        });
        if written {
            return Ok(self);
        }
        self.slice_assign(specs, values)
    }

    /// A copy with every element of the region `specs` selects set to `value`.
    pub fn slice_fill(&self, specs: &[SliceSpec], value: Scalar) -> Result<Tensor> {
        let region = self.region("slice_fill", specs)?;
        with_dtype!(self.dtype(), T => {
            let mut out = self.try_to_vec::<T>("slice_fill")?;
            fill_strided(&mut out, &region, T::from_scalar(value));
            Tensor::from_vec(out, self.shape())
        })
    }

    /// The layout of the selected region inside a contiguous copy of self.
    fn region(&self, op: &'static str, specs: &[SliceSpec]) -> Result<Layout> {
        if specs.len() > self.rank() {
            return Err(Error::invalid(
                op,
                format!("{} ranges given for a tensor of rank {} (shape {:?})", specs.len(), self.rank(), self.shape()),
            ));
        }
        let mut l = Layout::contiguous(self.shape());
        for (d, spec) in specs.iter().enumerate() {
            let (start, count, step) = spec.resolve(op, self.shape()[d])?;
            l = l.narrow_step(d, start, count, step);
        }
        Ok(l)
    }
}

impl Var {
    /// The region's gradient goes to `values`; the rest to `self`.
    pub fn slice_assign(&self, specs: &[SliceSpec], values: &Var) -> Result<Var> {
        let y = self.value.slice_assign(specs, &values.value)?;
        let s = specs.to_vec();
        Ok(record(y, &[self, values], move || {
            FnBackward::new("slice_assign", move |g, needs| {
                let gv = if needs[1] { Some(g.slice(&s)?.try_contiguous("slice_assign")?) } else { None };
                let gs = if needs[0] { Some(g.slice_fill(&s, Scalar::Int(0))?) } else { None };
                Ok(vec![gs, gv])
            })
        }))
    }

    pub fn slice_fill(&self, specs: &[SliceSpec], value: Scalar) -> Result<Var> {
        let y = self.value.slice_fill(specs, value)?;
        let s = specs.to_vec();
        Ok(record(y, &[self], move || FnBackward::new("slice_fill", move |g, _| Ok(vec![Some(g.slice_fill(&s, Scalar::Int(0))?)]))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec((0..n as i64).collect::<Vec<_>>(), shape).unwrap()
    }

    fn spec(start: Option<isize>, end: Option<isize>, step: isize) -> SliceSpec {
        SliceSpec { start, end, step }
    }

    #[test]
    fn assigns_a_block() {
        let x = range(&[3, 4]);
        let v = Tensor::from_vec(vec![-1i64, -2, -3, -4], &[2, 2]).unwrap();
        let y = x.slice_assign(&[SliceSpec::range(1, 3), SliceSpec::range(-2, 4)], &v).unwrap();
        assert_eq!(y.to_vec::<i64>(), vec![0, 1, 2, 3, 4, 5, -1, -2, 8, 9, -3, -4]);
        assert_eq!(x.to_vec::<i64>(), (0..12).collect::<Vec<_>>(), "the input is untouched");
    }

    #[test]
    fn assigns_with_steps_from_a_view() {
        // Every other column, walked backwards, from a transposed source.
        let x = range(&[2, 4]);
        let v = Tensor::from_vec(vec![10i64, 20, 30, 40], &[2, 2]).unwrap().transpose();
        let y = x.slice_assign(&[SliceSpec::full(), spec(None, None, -2)], &v).unwrap();
        // Row i of the values lands in columns 3 then 1 of row i.
        assert_eq!(y.to_vec::<i64>(), vec![0, 30, 2, 10, 4, 40, 6, 20]);
    }

    #[test]
    fn assign_into_a_transposed_tensor() {
        let x = range(&[2, 3]).transpose();
        let v = Tensor::from_vec(vec![7i64, 8], &[1, 2]).unwrap();
        let y = x.slice_assign(&[SliceSpec::range(1, 2)], &v).unwrap();
        assert_eq!(y.to_vec::<i64>(), vec![0, 3, 7, 8, 2, 5]);
    }

    #[test]
    fn owned_assign_writes_in_place_when_unique() {
        let x = Tensor::from_vec((0..12).map(|v| v as f32).collect::<Vec<_>>(), &[3, 4]).unwrap();
        let before = x.buffer::<f32>().as_ptr();
        let v = Tensor::from_vec(vec![-1.0f32, -2.0], &[1, 2]).unwrap();
        let y = x.slice_assign_owned(&[SliceSpec::range(2, 3), SliceSpec::range(1, 3)], &v).unwrap();
        assert_eq!(y.buffer::<f32>().as_ptr(), before, "a sole owner's buffer is reused");
        assert_eq!(y.to_vec::<f32>(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -2.0, 11.0]);
    }

    #[test]
    fn owned_assign_copies_a_shared_buffer() {
        let x = range(&[2, 3]);
        let other = x.clone();
        let v = Tensor::from_vec(vec![9i64, 9, 9], &[1, 3]).unwrap();
        let y = x.slice_assign_owned(&[SliceSpec::range(0, 1)], &v).unwrap();
        assert_eq!(y.to_vec::<i64>(), vec![9, 9, 9, 3, 4, 5]);
        assert_eq!(other.to_vec::<i64>(), (0..6).collect::<Vec<_>>(), "the other holder keeps its values");
        assert_ne!(y.buffer::<i64>().as_ptr(), other.buffer::<i64>().as_ptr());
        // A view (transposed: not contiguous) is copied too, with the view's values.
        let t = range(&[2, 3]).transpose();
        let w = Tensor::from_vec(vec![7i64, 8], &[1, 2]).unwrap();
        assert_eq!(t.slice_assign_owned(&[SliceSpec::range(1, 2)], &w).unwrap().to_vec::<i64>(), vec![0, 3, 7, 8, 2, 5]);
        let e = range(&[3, 4]).slice_assign_owned(&[SliceSpec::range(0, 2)], &range(&[2, 3])).unwrap_err().to_string();
        assert_eq!(e, "slice_assign: incompatible shapes [2, 4] and [2, 3]: the values must have the shape of the sliced region");
    }

    #[test]
    fn fills_a_region() {
        let x = Tensor::zeros(&[2, 3], crate::DType::F32);
        let y = x.slice_fill(&[SliceSpec::range(0, 1)], Scalar::Float(2.5)).unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![2.5, 2.5, 2.5, 0.0, 0.0, 0.0]);
        let e = x.slice_fill(&[SliceSpec::range(2, 1)], Scalar::Float(1.0)).unwrap();
        assert_eq!(e.to_vec::<f32>(), vec![0.0; 6], "an empty region changes nothing");
        let b = Tensor::zeros(&[3], crate::DType::Bool).slice_fill(&[spec(Some(0), None, 2)], Scalar::Bool(true)).unwrap();
        assert_eq!(b.to_vec::<bool>(), vec![true, false, true]);
    }

    #[test]
    fn errors_name_shapes() {
        let x = range(&[3, 4]);
        let v = range(&[2, 3]);
        let e = x.slice_assign(&[SliceSpec::range(0, 2)], &v).unwrap_err().to_string();
        assert_eq!(e, "slice_assign: incompatible shapes [2, 4] and [2, 3]: the values must have the shape of the sliced region");
        let e = x.slice_fill(&[SliceSpec::full(); 3], Scalar::Int(0)).unwrap_err().to_string();
        assert_eq!(e, "slice_fill: 3 ranges given for a tensor of rank 2 (shape [3, 4])");
        let e = x.slice_fill(&[spec(None, None, 0)], Scalar::Int(0)).unwrap_err().to_string();
        assert_eq!(e, "slice_fill: slice step must not be 0");
        let f = Tensor::zeros(&[2, 4], crate::DType::F32);
        assert!(matches!(x.slice_assign(&[SliceSpec::range(0, 2)], &f), Err(Error::DTypeMismatch { .. })));
    }
}
