//! Masked selection: where a Bool mask is true take a value (from a tensor
//! or one scalar), elsewhere keep the tensor. The tensor, the mask and the
//! value broadcast to their common shape (Burn's rule: equal ranks, size-1
//! dims stretch), which the result has.

use crate::autodiff::{record, sum_to_shape, FnBackward, Var};

use rayon::prelude::*;

use crate::dtype::{Kind, Scalar};

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::parallel::{go_parallel, simd, CHUNK, PAR_CHEAP};
use crate::kernels::strided::{for_each_row, for_each_row2};
use crate::layout::Layout;
use crate::tensor::Tensor;
use crate::with_dtype;

impl Tensor {
    /// `value` where `mask` is true, `self` elsewhere.
    pub fn mask_where(&self, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
        let op = "mask_where";
        mask.expect_kind(op, Kind::Bool)?;
        self.expect_same_dtype(op, value)?;
        let shape = common_shape(op, &[self, mask, value])?;
        let x = self.expand_to(op, &shape)?;
        let ml = broadcast_onto(op, "mask", mask, &shape)?;
        let vl = broadcast_onto(op, "value", value, &shape)?;
        with_dtype!(self.dtype(), T => where_tensor::<T>(&x, mask.buffer::<bool>(), &ml, value.buffer::<T>(), &vl))
    }

    /// `value` (converted to this dtype) where `mask` is true, `self` elsewhere.
    pub fn mask_fill(&self, mask: &Tensor, value: Scalar) -> Result<Tensor> {
        let op = "mask_fill";
        mask.expect_kind(op, Kind::Bool)?;
        let shape = common_shape(op, &[self, mask])?;
        let x = self.expand_to(op, &shape)?;
        let ml = broadcast_onto(op, "mask", mask, &shape)?;
        with_dtype!(self.dtype(), T => where_scalar::<T>(&x, mask.buffer::<bool>(), &ml, T::from_scalar(value)))
    }

    /// This tensor stretched to `shape` (a view), or itself when it has it.
    fn expand_to(&self, op: &'static str, shape: &[usize]) -> Result<Tensor> {
        if self.shape() == shape {
            return Ok(self.clone());
        }
        self.view(op, self.layout().broadcast_to(op, shape)?)
    }
}

/// The shape the tensor, mask (and value) broadcast to; the messages name
/// which operand does not fit.
fn common_shape(op: &'static str, operands: &[&Tensor]) -> Result<crate::layout::DimVec<usize>> {
    let x = operands[0];
    if operands.iter().all(|t| t.shape() == x.shape()) {
        return Ok(crate::layout::DimVec::from_slice(x.shape()));
    }
    for (t, what) in operands[1..].iter().zip(["mask", "value"]) {
        if t.rank() != x.rank() {
            return Err(Error::shapes(op, x.shape(), t.shape(), format!("the {what} has rank {}, the tensor rank {}", t.rank(), x.rank())));
        }
    }
    let shapes: Vec<&[usize]> = operands.iter().map(|t| t.shape()).collect();
    crate::shape::broadcast_shapes(op, &shapes)
}

/// `t`'s layout stretched onto `shape`: same rank, each dim equal or 1.
fn broadcast_onto(op: &'static str, what: &str, t: &Tensor, shape: &[usize]) -> Result<Layout> {
    if t.rank() != shape.len() {
        return Err(Error::shapes(op, shape, t.shape(), format!("the {what} has rank {}, the tensor rank {}", t.rank(), shape.len())));
    }
    if let Some(e) = (0..shape.len()).find(|&e| t.shape()[e] != shape[e] && t.shape()[e] != 1) {
        return Err(Error::shapes(
            op,
            shape,
            t.shape(),
            format!("the {what} has size {} in dim {e} where the tensor has {}; only size 1 broadcasts", t.shape()[e], shape[e]),
        ));
    }
    t.layout().broadcast_to(op, shape)
}

fn finish<T: Element>(out: Vec<T>, shape: &[usize]) -> Result<Tensor> {
    Tensor::from_vec(out, shape)
}

// The selects below store unconditionally (`*o = if m { v } else { *o }`)
// so they compile to SIMD blends rather than branches.

fn select_dense<T: Element>(out: &mut [T], x: &[T], m: &[bool], v: &[T]) {
    simd(#[inline(always)] || {
        for (((o, &x), &m), &v) in out.iter_mut().zip(x).zip(m).zip(v) {
            *o = if m { v } else { x };
        }
    })
}

fn select_dense_scalar<T: Element>(out: &mut [T], x: &[T], m: &[bool], v: T) {
    simd(#[inline(always)] || {
        for ((o, &x), &m) in out.iter_mut().zip(x).zip(m) {
            *o = if m { v } else { x };
        }
    })
}

fn where_tensor<T: Element>(x: &Tensor, m: &[bool], ml: &Layout, v: &[T], vl: &Layout) -> Result<Tensor> {
    if let (Some(xs), Some((m0, m1)), Some((v0, v1))) = (x.as_slice::<T>(), ml.contiguous_range(), vl.contiguous_range()) {
        let (ms, vs) = (&m[m0..m1], &v[v0..v1]);
        let mut out = vec![T::ZERO; xs.len()];
        if go_parallel(out.len(), PAR_CHEAP) {
            out.par_chunks_mut(CHUNK)
                .zip(xs.par_chunks(CHUNK))
                .zip(ms.par_chunks(CHUNK).zip(vs.par_chunks(CHUNK)))
                .for_each(|((o, x), (m, v))| select_dense(o, x, m, v));
        } else {
            select_dense(&mut out, xs, ms, vs);
        }
        return finish(out, x.shape());
    }
    let mut out = x.try_to_vec::<T>("mask_where")?;
    simd(#[inline(always)] || {
        for_each_row2(ml, vl, |o, (om, sm), (ov, sv), len| {
            let dst = &mut out[o..o + len];
            match (sm, sv) {
                (1, 1) => dst.iter_mut().zip(&m[om..om + len]).zip(&v[ov..ov + len]).for_each(|((o, &m), &v)| *o = if m { v } else { *o }),
                (1, 0) => {
                    let v = v[ov];
                    dst.iter_mut().zip(&m[om..om + len]).for_each(|(o, &m)| *o = if m { v } else { *o });
                }
                _ => {
                    let (mut im, mut iv) = (om as isize, ov as isize);
                    for o in dst.iter_mut() {
                        if m[im as usize] {
                            *o = v[iv as usize];
                        }
                        im += sm;
                        iv += sv;
                    }
                }
            }
        })
    });
    finish(out, x.shape())
}

fn where_scalar<T: Element>(x: &Tensor, m: &[bool], ml: &Layout, v: T) -> Result<Tensor> {
    if let (Some(xs), Some((m0, m1))) = (x.as_slice::<T>(), ml.contiguous_range()) {
        let ms = &m[m0..m1];
        let mut out = vec![T::ZERO; xs.len()];
        if go_parallel(out.len(), PAR_CHEAP) {
            out.par_chunks_mut(CHUNK)
                .zip(xs.par_chunks(CHUNK))
                .zip(ms.par_chunks(CHUNK))
                .for_each(|((o, x), m)| select_dense_scalar(o, x, m, v));
        } else {
            select_dense_scalar(&mut out, xs, ms, v);
        }
        return finish(out, x.shape());
    }
    let mut out = x.try_to_vec::<T>("mask_fill")?;
    let mut o = 0;
    simd(#[inline(always)] || {
        for_each_row(ml, |om, sm, len| {
            let dst = &mut out[o..o + len];
            o += len;
            match sm {
                1 => dst.iter_mut().zip(&m[om..om + len]).for_each(|(o, &m)| *o = if m { v } else { *o }),
                0 if m[om] => dst.fill(v),
                0 => {}
                _ => {
                    let mut im = om as isize;
                    for o in dst.iter_mut() {
                        if m[im as usize] {
                            *o = v;
                        }
                        im += sm;
                    }
                }
            }
        })
    });
    finish(out, x.shape())
}

impl Var {
    /// Where `mask` holds, the gradient goes to `value`; elsewhere to `self`.
    /// A tensor or value broadcast to the result gets the sum of the
    /// gradients of the positions it fed.
    pub fn mask_where(&self, mask: &Tensor, value: &Var) -> Result<Var> {
        let y = self.value.mask_where(mask, &value.value)?;
        let (m, vshape, xshape) = (mask.clone(), value.value.shape().to_vec(), self.value.shape().to_vec());
        Ok(record(y, &[self, value], move || {
            FnBackward::new("mask_where", move |g, needs| {
                let gv = if needs[1] { Some(sum_to_shape(g.mask_fill(&m.bool_not()?, Scalar::Int(0))?, &vshape)?) } else { None };
                let gs = if needs[0] { Some(sum_to_shape(g.mask_fill(&m, Scalar::Int(0))?, &xshape)?) } else { None };
                Ok(vec![gs, gv])
            })
        }))
    }

    pub fn mask_fill(&self, mask: &Tensor, value: Scalar) -> Result<Var> {
        let y = self.value.mask_fill(mask, value)?;
        let (m, xshape) = (mask.clone(), self.value.shape().to_vec());
        Ok(record(y, &[self], move || FnBackward::new("mask_fill", move |g, _| Ok(vec![Some(sum_to_shape(g.mask_fill(&m, Scalar::Int(0))?, &xshape)?)]))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;
    use crate::test_util::{f32s as f, bools as b};

    /// Naive reference: element by element with broadcast coordinates.
    fn reference(x: &Tensor, m: &Tensor, v: &Tensor) -> Vec<f32> {
        let (xs, ms, vs) = (x.to_vec::<f32>(), m.to_vec::<bool>(), v.to_vec::<f32>());
        let (rows, cols) = (x.shape()[0], x.shape()[1]);
        let pick = |t: &Tensor, i: usize, j: usize| (if t.shape()[0] == 1 { 0 } else { i }) * t.shape()[1] + if t.shape()[1] == 1 { 0 } else { j };
        (0..rows * cols)
            .map(|p| {
                let (i, j) = (p / cols, p % cols);
                if ms[pick(m, i, j)] { vs[pick(v, i, j)] } else { xs[p] }
            })
            .collect()
    }

    #[test]
    fn where_dense() {
        let x = f(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let m = b(&[true, false, false, true], &[2, 2]);
        let v = f(&[10.0, 20.0, 30.0, 40.0], &[2, 2]);
        assert_eq!(x.mask_where(&m, &v).unwrap().to_vec::<f32>(), vec![10.0, 2.0, 3.0, 40.0]);
    }

    #[test]
    fn where_broadcasts_mask_and_value_and_reads_views() {
        let x = f(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).transpose();
        let cases = [
            (b(&[true, false], &[1, 2]), f(&[7.0, 8.0, 9.0], &[3, 1])),
            (b(&[true, false, true], &[3, 1]), f(&[7.0, 8.0], &[1, 2])),
            (b(&[false, true, true, false, true, false], &[2, 3]).transpose(), f(&[-1.0], &[1, 1])),
            (b(&[true], &[1, 1]), f(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).transpose()),
        ];
        for (m, v) in cases {
            assert_eq!(x.mask_where(&m, &v).unwrap().to_vec::<f32>(), reference(&x, &m, &v), "mask {:?}", m.shape());
        }
    }

    #[test]
    fn fill_dense_broadcast_and_strided() {
        let x = f(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        let m = b(&[false, true, false, true, false, true], &[2, 3]);
        assert_eq!(x.mask_fill(&m, Scalar::Float(0.5)).unwrap().to_vec::<f32>(), vec![1.0, 0.5, 3.0, 0.5, 5.0, 0.5]);
        let col = b(&[true, false], &[2, 1]);
        assert_eq!(x.mask_fill(&col, Scalar::Int(0)).unwrap().to_vec::<f32>(), vec![0.0, 0.0, 0.0, 4.0, 5.0, 6.0]);
        let row = b(&[false, true, false], &[1, 3]);
        assert_eq!(x.mask_fill(&row, Scalar::Int(-1)).unwrap().to_vec::<f32>(), vec![1.0, -1.0, 3.0, 4.0, -1.0, 6.0]);
        let mt = b(&[true, false, false, true, true, false], &[3, 2]).transpose();
        assert_eq!(x.mask_fill(&mt, Scalar::Int(0)).unwrap().to_vec::<f32>(), vec![0.0, 2.0, 0.0, 4.0, 0.0, 6.0]);
    }

    #[test]
    fn fill_ints_bools_and_empty() {
        let x = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
        let m = b(&[true, false, true], &[3]);
        assert_eq!(x.mask_fill(&m, Scalar::Int(9)).unwrap().to_vec::<i64>(), vec![9, 2, 9]);
        let y = b(&[false, false, true], &[3]);
        assert_eq!(y.mask_fill(&m, Scalar::Bool(true)).unwrap().to_vec::<bool>(), vec![true, false, true]);
        let e = Tensor::zeros(&[0, 2], DType::F32);
        assert_eq!(e.mask_fill(&b(&[true, true], &[1, 2]), Scalar::Float(1.0)).unwrap().shape(), &[0, 2]);
    }

    #[test]
    fn the_tensor_broadcasts_too() {
        // Burn's should_support_mask_where_broadcast: a [1, 2, 2] tensor, a [4, 2, 2] mask and value.
        let x = f(&[2.0, 3.0, 4.0, 5.0], &[1, 2, 2]);
        let m = b(&[true, false, false, true, false, true, true, false, false, false, false, false, true, true, true, true], &[4, 2, 2]);
        let v = f(&[1.0; 16], &[4, 2, 2]);
        let y = x.mask_where(&m, &v).unwrap();
        assert_eq!(y.shape(), &[4, 2, 2]);
        assert_eq!(y.to_vec::<f32>(), vec![1., 3., 4., 1., 2., 1., 1., 5., 2., 3., 4., 5., 1., 1., 1., 1.]);
        // Value and tensor stretched along different dims.
        let y = f(&[1.0, 2.0], &[2, 1]).mask_where(&b(&[true, false, false], &[1, 3]), &f(&[9.0], &[1, 1])).unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![9.0, 1.0, 1.0, 9.0, 2.0, 2.0]);
        let y = f(&[1.0, 2.0], &[1, 2]).mask_fill(&b(&[true, false, false, true], &[2, 2]), Scalar::Float(0.0)).unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0.0, 2.0, 1.0, 0.0]);
    }

    #[test]
    fn errors_name_the_mask() {
        let x = f(&[1.0; 6], &[2, 3]);
        let e = x.mask_fill(&b(&[true; 4], &[2, 2]), Scalar::Int(0)).unwrap_err().to_string();
        assert_eq!(e, "mask_fill: incompatible shapes [2, 3] and [2, 2]: dim 1 has sizes 3 and 2, neither is 1");
        let e = x.mask_fill(&b(&[true; 3], &[3]), Scalar::Int(0)).unwrap_err().to_string();
        assert_eq!(e, "mask_fill: incompatible shapes [2, 3] and [3]: the mask has rank 1, the tensor rank 2");
        let e = x.mask_where(&b(&[true; 6], &[2, 3]), &f(&[1.0; 4], &[4, 1])).unwrap_err().to_string();
        assert!(e.contains("dim 0 has sizes 2 and 4"), "{e}");
        assert!(matches!(x.mask_fill(&x, Scalar::Int(0)), Err(Error::KindMismatch { op: "mask_fill", expected: Kind::Bool, found: Kind::Float })));
        let i = Tensor::zeros(&[2, 3], DType::I64);
        assert!(matches!(x.mask_where(&b(&[true; 6], &[2, 3]), &i), Err(Error::DTypeMismatch { op: "mask_where", .. })));
    }
}
