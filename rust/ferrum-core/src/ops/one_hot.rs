//! One-hot encoding of class indices held in a Float or Int tensor: a new
//! class dim of `num_classes`, `on` at each index and `off` elsewhere, in the
//! input's dtype.

use std::borrow::Cow;

use num_traits::ToPrimitive;

use crate::dtype::{DType, Kind};

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::copy::contiguous_values;
use crate::shape::{checked_numel, norm_dim, try_filled};
use crate::tensor::Tensor;
use crate::with_num;

impl Tensor {
    /// A new last dim of `num_classes` with 1 at each index, 0 elsewhere.
    /// Indices outside `[0, num_classes)` are errors.
    pub fn one_hot(&self, num_classes: usize) -> Result<Tensor> {
        encode(self, "one_hot", num_classes, 1.0, 0.0, self.rank(), false)
    }

    /// The class dim goes at `axis` of the output (-1 = last), filled with
    /// `on_value`/`off_value`; negative indices count from the end, as in Burn.
    pub fn one_hot_fill(&self, num_classes: usize, on_value: f64, off_value: f64, axis: isize) -> Result<Tensor> {
        let op = "one_hot_fill";
        let a = norm_dim(op, axis, self.rank() + 1)?;
        encode(self, op, num_classes, on_value, off_value, a, true)
    }
}

fn encode(t: &Tensor, op: &'static str, classes: usize, on: f64, off: f64, axis: usize, wrap: bool) -> Result<Tensor> {
    let idx = class_indices(op, t, classes, axis, wrap)?;
    let mut shape = t.shape().to_vec();
    shape.insert(axis, classes);
    let n = checked_numel(op, &shape, t.dtype().size_in_bytes())?;
    // Input position p = (o, i) over [outer, inner] split at `axis` lands at
    // (o, class, i) of the output.
    let inner: usize = t.shape()[axis..].iter().product();
    with_num!(op, t.dtype(), T => {
        let (on, off) = (T::from_f64(on), T::from_f64(off));
        let mut out = try_filled(op, n, off)?;
        if inner > 0 {
            for (o, block) in idx.chunks(inner).enumerate() {
                let base = o * classes * inner;
                for (i, &k) in block.iter().enumerate() {
                    out[base + k * inner + i] = on;
                }
            }
        }
        Tensor::from_vec(out, &shape)
    })
}

/// The class of each element, checked against `[0, classes)` after wrapping
/// negatives when `wrap`. Floats truncate toward zero, as Burn's conversion.
fn class_indices(op: &'static str, t: &Tensor, classes: usize, axis: usize, wrap: bool) -> Result<Vec<usize>> {
    let raw: Cow<[i64]> = match t.dtype() {
        DType::I64 | DType::I32 | DType::U8 => contiguous_values::<i64>(op, t)?,
        DType::F16 | DType::BF16 => Cow::Owned(truncate(op, &contiguous_values::<f32>(op, t)?)?),
        DType::F32 => Cow::Owned(truncate(op, &contiguous_values::<f32>(op, t)?)?),
        DType::F64 => Cow::Owned(truncate(op, &contiguous_values::<f64>(op, t)?)?),
        DType::Bool => return Err(Error::KindMismatch { op, expected: Kind::Int, found: Kind::Bool }),
    };
    raw.iter()
        .map(|&k| {
            let w = if wrap && k < 0 { k.saturating_add(classes as i64) } else { k };
            if w < 0 || w as u64 >= classes as u64 {
                return Err(Error::IndexOutOfBounds { op, index: k, dim: axis, size: classes });
            }
            Ok(w as usize)
        })
        .collect()
}

fn truncate<F: ToPrimitive + Copy + std::fmt::Debug>(op: &'static str, values: &[F]) -> Result<Vec<i64>> {
    values
        .iter()
        .map(|&v| v.to_i64().ok_or_else(|| Error::invalid(op, format!("class index {v:?} is not a number in the i64 range"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::i64s as ints;

    #[test]
    fn one_hot_of_ints_and_floats() {
        let y = ints(&[0, 2, 1], &[3]).one_hot(3).unwrap();
        assert_eq!(y.dtype(), DType::I64);
        assert_eq!((y.shape(), y.to_vec::<i64>()), (&[3usize, 3][..], vec![1, 0, 0, 0, 0, 1, 0, 1, 0]));
        let f = Tensor::from_vec(vec![1.0f32, 0.0], &[2]).unwrap().one_hot(2).unwrap();
        assert_eq!(f.to_vec::<f32>(), vec![0.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn one_hot_of_a_view_keeps_leading_dims() {
        let x = ints(&[0, 1, 2, 3, 0, 1], &[2, 3]).transpose();
        let y = x.one_hot(4).unwrap();
        assert_eq!(y.shape(), &[3, 2, 4]);
        let classes = x.to_vec::<i64>();
        for (p, &k) in classes.iter().enumerate() {
            for c in 0..4 {
                let v = y.get(&[p / 2, p % 2, c]).unwrap().to_i64();
                assert_eq!(v, (c as i64 == k) as i64);
            }
        }
    }

    #[test]
    fn one_hot_errors() {
        let e = ints(&[0, 3], &[2]).one_hot(3).unwrap_err();
        assert_eq!(e.to_string(), "one_hot: index 3 is out of bounds for dim 1 of size 3");
        let e = ints(&[-1], &[1]).one_hot(3).unwrap_err();
        assert_eq!(e, Error::IndexOutOfBounds { op: "one_hot", index: -1, dim: 1, size: 3 });
        let b = Tensor::from_vec(vec![true], &[1]).unwrap();
        assert!(matches!(b.one_hot(2), Err(Error::KindMismatch { op: "one_hot", expected: Kind::Int, found: Kind::Bool })));
        let n = Tensor::from_vec(vec![f32::NAN], &[1]).unwrap();
        assert_eq!(n.one_hot(2).unwrap_err().to_string(), "one_hot: class index NaN is not a number in the i64 range");
    }

    #[test]
    fn fill_at_an_axis_with_negative_indices() {
        // Burn's example: [[1, -1], [2, 0]] with 3 classes, on 5, off 0, axis 1 (= -2).
        let x = ints(&[1, -1, 2, 0], &[2, 2]);
        let y = x.one_hot_fill(3, 5.0, 0.0, -2).unwrap();
        assert_eq!(y.shape(), &[2, 3, 2]);
        assert_eq!(y.to_vec::<i64>(), vec![0, 0, 5, 0, 0, 5, 0, 5, 0, 0, 5, 0]);
        let z = x.one_hot_fill(3, 1.0, -1.0, 0).unwrap();
        assert_eq!(z.shape(), &[3, 2, 2]);
        assert_eq!(z.to_vec::<i64>(), vec![-1, -1, -1, 1, 1, -1, -1, -1, -1, 1, 1, -1]);
    }

    #[test]
    fn fill_errors_and_empty() {
        let x = Tensor::from_vec(vec![-4.0f64], &[1]).unwrap();
        let e = x.one_hot_fill(3, 1.0, 0.0, -1).unwrap_err();
        assert_eq!(e, Error::IndexOutOfBounds { op: "one_hot_fill", index: -4, dim: 1, size: 3 });
        assert!(matches!(x.one_hot_fill(3, 1.0, 0.0, 2), Err(Error::DimOutOfRange { op: "one_hot_fill", dim: 2, rank: 2 })));
        let e = Tensor::zeros(&[0], DType::F32).one_hot_fill(4, 1.0, 0.0, -1).unwrap();
        assert_eq!(e.shape(), &[0, 4]);
        assert_eq!(ints(&[1], &[1]).one_hot(0).unwrap_err().to_string(), "one_hot: index 1 is out of bounds for dim 1 of size 0");
    }

    #[test]
    fn huge_class_counts_are_errors() {
        let idx = ints(&[0, 1], &[2]);
        let err = idx.one_hot(1 << 62).unwrap_err().to_string();
        assert!(err.contains("one_hot") && err.contains("too many elements"), "{err}");
    }
}
