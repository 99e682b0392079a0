//! GLU: split a dim in halves `a`, `b` and gate, `a * sigmoid(b)`.

use crate::autodiff::{record, FnBackward, Var};
use crate::kernels::copy::contiguous_values;
use crate::ops::binary::BinaryOp;
use crate::ops::unary::FloatUnary;
use rayon::prelude::*;

use crate::element::FloatElement;
use crate::error::Result;
use crate::kernels::parallel::{go_parallel, simd, CHUNK, PAR_COSTLY};
use crate::ops::unary::sigmoid;
use crate::tensor::Tensor;
use crate::{bail, with_float};

impl Tensor {
    /// `a * sigmoid(b)` where `a` and `b` are the first and second halves of
    /// `dim`, whose size must be even; the result has that dim halved.
    pub fn glu(&self, dim: isize) -> Result<Tensor> {
        let op = "glu";
        with_float!(op, self.dtype(), T => {
            let d = self.dim(op, dim)?;
            let size = self.shape()[d];
            if !size.is_multiple_of(2) {
                bail!(op, "dim {d} has size {size}, which must be even to split into two halves (shape {:?})", self.shape());
            }
            let mut shape = self.shape().to_vec();
            shape[d] = size / 2;
            // Seen as [outer, 2, half]: each outer block holds a then b, both contiguous.
            let half = shape[d..].iter().product::<usize>();
            let values = contiguous_values::<T>(op, self)?;
            let src: &[T] = &values;
            Tensor::from_vec(gate(src, half), &shape)
        })
    }
}

fn gate<T: FloatElement>(src: &[T], half: usize) -> Vec<T> {
    let mut out = vec![T::ZERO; src.len() / 2];
    if out.is_empty() {
        return out;
    }
    let outer = out.len() / half;
    let blocks = |x: &[T], d: &mut [T]| {
        simd(
            #[inline(always)]
            || {
                for (x, d) in x.chunks_exact(2 * half).zip(d.chunks_exact_mut(half)) {
                    let (a, b) = x.split_at(half);
                    gate_into(a, b, d);
                }
            },
        )
    };
    if !go_parallel(out.len(), PAR_COSTLY) {
        blocks(src, &mut out);
    } else if outer >= 2 * rayon::current_num_threads() || half < CHUNK {
        let per_task = CHUNK.div_ceil(half);
        out.par_chunks_mut(per_task * half).zip(src.par_chunks(per_task * 2 * half)).for_each(|(d, x)| blocks(x, d));
    } else {
        // Few large blocks: split each block's halves across threads.
        for (x, d) in src.chunks_exact(2 * half).zip(out.chunks_exact_mut(half)) {
            let (a, b) = x.split_at(half);
            d.par_chunks_mut(CHUNK)
                .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
                .for_each(|(d, (a, b))| simd(#[inline(always)] || gate_into(a, b, d)));
        }
    }
    out
}

#[inline(always)]
fn gate_into<T: FloatElement>(a: &[T], b: &[T], d: &mut [T]) {
    for ((o, &a), &b) in d.iter_mut().zip(a).zip(b) {
        *o = a * sigmoid(b);
    }
}

impl Var {
    /// out = a σ(b): ga = g σ(b), gb = g a σ(b)(1 - σ(b)), rejoined along dim.
    pub fn glu(&self, dim: isize) -> Result<Var> {
        let y = self.value.glu(dim)?;
        let x = self.value.clone();
        Ok(record(y, &[self], move || {
            FnBackward::new("glu", move |g, _| {
                let halves = x.chunk(2, dim)?;
                let (a, b) = (&halves[0], &halves[1]);
                let s = b.float_unary(FloatUnary::Sigmoid)?;
                let ga = g.binary(BinaryOp::Mul, &s)?;
                let ds = s.binary(BinaryOp::Mul, &s.binary_scalar(BinaryOp::Sub, crate::Scalar::Float(1.0))?.neg()?)?;
                let gb = g.binary(BinaryOp::Mul, a)?.binary_owned(BinaryOp::Mul, ds)?;
                Ok(vec![Some(Tensor::cat(&[ga, gb], dim)?)])
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn sig(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    /// Reference through views: narrow both halves, then combine elementwise.
    fn reference(t: &Tensor, dim: isize) -> Vec<f64> {
        let d = t.dim("glu", dim).unwrap();
        let h = t.shape()[d] / 2;
        let a = t.narrow(dim, 0, h).unwrap().to_vec::<f64>();
        let b = t.narrow(dim, h, h).unwrap().to_vec::<f64>();
        a.iter().zip(&b).map(|(&a, &b)| a * sig(b)).collect()
    }

    fn values(n: usize) -> Vec<f64> {
        (0..n).map(|i| ((i * 31) % 17) as f64 * 0.5 - 4.0).collect()
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-14 * (1.0 + w.abs()), "{g} vs {w}");
        }
    }

    #[test]
    fn every_dim_of_a_3d_tensor() {
        let t = Tensor::from_vec(values(4 * 6 * 2), &[4, 6, 2]).unwrap();
        for dim in [0, 1, 2, -1, -2, -3] {
            let y = t.glu(dim).unwrap();
            let mut shape = vec![4, 6, 2];
            shape[t.dim("glu", dim).unwrap()] /= 2;
            assert_eq!(y.shape(), shape.as_slice());
            assert_close(&y.to_vec::<f64>(), &reference(&t, dim));
        }
    }

    #[test]
    fn transposed_input() {
        let t = Tensor::from_vec(values(24), &[4, 6]).unwrap().transpose();
        for dim in [0, 1] {
            assert_close(&t.glu(dim).unwrap().to_vec::<f64>(), &reference(&t, dim));
        }
    }

    #[test]
    fn large_inputs_take_the_parallel_paths() {
        for (shape, dim) in [(vec![64, 1024], 1), (vec![2, 2 * CHUNK + 6], 1), (vec![8, 2, 4096], 1)] {
            let n = shape.iter().product();
            let t = Tensor::from_vec(values(n), &shape).unwrap();
            assert_close(&t.glu(dim).unwrap().to_vec::<f64>(), &reference(&t, dim));
        }
    }

    #[test]
    fn f32_and_extremes() {
        let t = Tensor::from_vec(vec![2.0f32, f32::NAN, 3.0, 1e4, -1e4, 0.0], &[2, 3]).unwrap();
        let y = t.glu(0).unwrap().to_vec::<f32>();
        assert_eq!(y[0], 2.0);
        assert!(y[1].is_nan());
        assert_eq!(y[2], 1.5);
    }

    #[test]
    fn empty_and_errors() {
        let e = Tensor::zeros(&[0, 4], DType::F32);
        assert_eq!(e.glu(1).unwrap().shape(), &[0, 2]);
        let z = Tensor::zeros(&[3, 0], DType::F32);
        assert_eq!(z.glu(1).unwrap().shape(), &[3, 0]);
        let t = Tensor::zeros(&[2, 3], DType::F32);
        assert_eq!(
            t.glu(1).unwrap_err().to_string(),
            "glu: dim 1 has size 3, which must be even to split into two halves (shape [2, 3])"
        );
        assert_eq!(t.glu(2).unwrap_err().to_string(), "glu: dim 2 is out of range for a tensor of rank 2");
        let i = Tensor::zeros(&[2, 2], DType::I64);
        assert_eq!(i.glu(0).unwrap_err().to_string(), "glu: expected a Float tensor, found Int");
    }
}
