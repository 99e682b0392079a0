//! RMSNorm in one pass per row: `x / sqrt(mean(x²) + epsilon) * scale` over
//! the trailing dims (ONNX's RMSNormalization; Llama's and T5's norm, which
//! their exports spell as Pow, ReduceMean, Add, Sqrt, Div or Reciprocal, Mul).
//! Forward only: compiled plans run it in inference.

use rayon::prelude::*;

use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::{with_float, Kind};

/// Elements above which the rows are normalized in parallel.
const PAR_ELEMS: usize = 1 << 15;

impl Tensor {
    /// RMSNorm over the dims from `start` on: each row of `n = prod(shape[start..])` elements
    /// divided by `sqrt(mean(row²) + epsilon)`, then multiplied by `scale` (one value per element
    /// of a row: its shape is the trailing dims of this one, or any shape of `n` elements whose
    /// trailing dims match). The mean is summed in f64.
    ///
    /// ```
    /// # use ferrum_core::Tensor;
    /// let x = Tensor::from_vec(vec![3.0f32, 4.0], &[1, 2]).unwrap();
    /// let y = x.rms_norm(1, 0.0, None).unwrap(); // rms = sqrt((9 + 16) / 2)
    /// assert!((y.try_to_vec::<f32>("example").unwrap()[0] - 3.0 / 12.5f32.sqrt()).abs() < 1e-6);
    /// ```
    pub fn rms_norm(&self, start: usize, epsilon: f64, scale: Option<&Tensor>) -> Result<Tensor> {
        let op = "rms_norm";
        self.expect_kind(op, Kind::Float)?;
        let rank = self.rank();
        if start >= rank.max(1) {
            return Err(Error::DimOutOfRange { op, dim: start as isize, rank });
        }
        if !(epsilon.is_finite() && epsilon >= 0.0) {
            return Err(Error::invalid(op, format!("epsilon must be finite and non-negative, found {epsilon}")));
        }
        let n: usize = self.shape()[start..].iter().product();
        if let Some(s) = scale {
            self.expect_same_dtype(op, s)?;
            let fits = s.numel() == n && s.shape().iter().rev().zip(self.shape().iter().rev()).all(|(a, b)| a == b);
            if !fits {
                return Err(Error::shapes(op, self.shape(), s.shape(), format!("the scale must hold one value per element of the normalized dims {:?}", &self.shape()[start..])));
            }
        }
        with_float!(op, self.dtype(), T => rows::<T>(op, self, n, epsilon, scale))
    }
}

fn rows<T: FloatElement>(op: &'static str, x: &Tensor, n: usize, epsilon: f64, scale: Option<&Tensor>) -> Result<Tensor> {
    let x = x.try_contiguous(op)?;
    let xs = x.as_slice::<T>().ok_or_else(|| Error::Internal { reason: format!("{op}: a contiguous tensor without its slice") })?;
    let g: Option<Vec<T>> = scale.map(|s| s.try_to_vec::<T>(op)).transpose()?;
    let mut out = vec![T::ZERO; xs.len()];
    if n == 0 {
        return Tensor::from_vec(out, x.shape());
    }
    let row = |(src, dst): (&[T], &mut [T])| {
        let squares = src.iter().map(|v| Element::to_f64(*v).powi(2)).sum::<f64>();
        let inv = 1.0 / (squares / n as f64 + epsilon).sqrt();
        match &g {
            Some(g) => {
                for ((o, v), w) in dst.iter_mut().zip(src).zip(g) {
                    *o = <T as Element>::from_f64(Element::to_f64(*v) * inv * Element::to_f64(*w));
                }
            }
            None => {
                for (o, v) in dst.iter_mut().zip(src) {
                    *o = <T as Element>::from_f64(Element::to_f64(*v) * inv);
                }
            }
        }
    };
    if xs.len() >= PAR_ELEMS {
        xs.par_chunks(n).zip(out.par_chunks_mut(n)).for_each(row);
    } else {
        xs.chunks(n).zip(out.chunks_mut(n)).for_each(row);
    }
    Tensor::from_vec(out, x.shape())
}

#[cfg(test)]
mod tests {
    use crate::tensor::Tensor;

    #[test]
    fn rows_over_the_trailing_dims_with_a_scale() {
        // rows [1, 2, 2] and [0, 0, 3]: mean squares 3 and 3, so each row divided by sqrt(3 + 1)
        let x = Tensor::from_vec(vec![1.0f64, 2.0, 2.0, 0.0, 0.0, 3.0], &[2, 3]).unwrap();
        let w = Tensor::from_vec(vec![1.0f64, 10.0, -1.0], &[3]).unwrap();
        let y = x.rms_norm(1, 1.0, Some(&w)).unwrap().to_vec::<f64>();
        assert_eq!(y, vec![0.5, 10.0, -1.0, 0.0, 0.0, -1.5]);
        // over both dims: mean square 18 / 6 = 3, epsilon 1: divided by 2
        let all = x.rms_norm(0, 1.0, None).unwrap().to_vec::<f64>();
        assert_eq!(all, vec![0.5, 1.0, 1.0, 0.0, 0.0, 1.5]);
    }

    #[test]
    fn a_scale_of_the_wrong_size_and_bad_arguments_raise() {
        let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
        let w = Tensor::from_vec(vec![1.0f32; 2], &[2]).unwrap();
        assert!(x.rms_norm(1, 1e-6, Some(&w)).unwrap_err().to_string().contains("one value per element"));
        assert!(x.rms_norm(2, 1e-6, None).is_err());
        assert!(x.rms_norm(1, f64::NAN, None).is_err());
        let ints = Tensor::from_vec(vec![1i64; 2], &[2]).unwrap();
        assert!(ints.rms_norm(0, 1e-6, None).is_err());
    }
}
