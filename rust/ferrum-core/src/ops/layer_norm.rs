//! LayerNorm over the last dim as one op,
//! `(x - mean) / sqrt(var + epsilon) * gamma + beta` with the biased variance
//! (Burn's `LayerNorm`), and its backward beside it. Composed of element-wise
//! ops, a training step paid for six broadcasting nodes and their sums over
//! broadcast dims; here the forward is one pass per row and the backward
//! another (the row's mean and rstd recomputed there, which keeps nothing but
//! the input alive).

use crate::autodiff::{record_lazy, FnBackward, Var};
use crate::element::{Element, FloatLanes};
use crate::error::{Error, Result};
use crate::kernels::layer_norm;
use crate::tensor::Tensor;
use crate::{with_float_lanes, Kind};

const OP: &str = "layer_norm";

/// Checks the operands: a Float input of rank >= 1, `gamma` (and `beta`) of
/// its dtype and shape `[d]` for a last dim of size `d`, a finite epsilon.
fn check(x: &Tensor, gamma: &Tensor, beta: Option<&Tensor>, epsilon: f64) -> Result<usize> {
    x.expect_kind(OP, Kind::Float)?;
    if x.rank() == 0 {
        return Err(Error::invalid(OP, "the input must have at least one dim (normalized over the last); found a scalar"));
    }
    let d = x.shape()[x.rank() - 1];
    for (name, p) in std::iter::once(("gamma", gamma)).chain(beta.map(|b| ("beta", b))) {
        x.expect_same_dtype(OP, p)?;
        if p.shape() != [d] {
            return Err(Error::shapes(OP, x.shape(), p.shape(), format!("{name} must have shape [{d}], one value per element of the input's last dim")));
        }
    }
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(Error::invalid(OP, format!("epsilon must be finite and non-negative, found {epsilon}")));
    }
    Ok(d)
}

/// `t`'s values widened to `C` (f32 for f16 and bf16).
fn widened<S: FloatLanes<Compute = C>, C: Element>(t: &Tensor) -> Result<Vec<C>> {
    Ok(t.try_to_vec::<S>(OP)?.into_iter().map(FloatLanes::widen).collect())
}

fn forward_typed<S: FloatLanes<Compute = C>, C: crate::element::FloatElement>(x: &Tensor, n: usize, gamma: &Tensor, beta: Option<&Tensor>, epsilon: f64) -> Result<Tensor> {
    let x = x.try_contiguous(OP)?;
    let xs = x.as_slice::<S>().ok_or_else(|| Error::Internal { reason: format!("{OP}: a contiguous tensor without its slice") })?;
    let mut out = crate::shape::try_zeroed(OP, xs.len(), S::ZERO)?;
    if n > 0 {
        let (w, b) = (widened::<S, C>(gamma)?, beta.map(widened::<S, C>).transpose()?);
        layer_norm::forward(xs, n, &w, b.as_deref(), C::from_f64(epsilon), &mut out);
    }
    Tensor::from_vec(out, x.shape())
}

/// `(dx, dgamma, dbeta)` for the output gradient `g`.
fn backward_typed<S: FloatLanes<Compute = C>, C: crate::element::FloatElement>(g: &Tensor, x: &Tensor, n: usize, gamma: &Tensor, epsilon: f64) -> Result<(Tensor, Tensor, Tensor)> {
    let (g, x) = (g.try_contiguous(OP)?, x.try_contiguous(OP)?);
    let missing = || Error::Internal { reason: format!("{OP}: a contiguous tensor without its slice") };
    let (gs, xs) = (g.as_slice::<S>().ok_or_else(missing)?, x.as_slice::<S>().ok_or_else(missing)?);
    let mut dx = crate::shape::try_zeroed(OP, xs.len(), S::ZERO)?;
    let (dgamma, dbeta) = if n > 0 && !xs.is_empty() {
        layer_norm::backward(gs, xs, n, &widened::<S, C>(gamma)?, C::from_f64(epsilon), &mut dx)
    } else {
        (vec![C::zero(); n], vec![C::zero(); n])
    };
    let narrow = |v: Vec<C>| Tensor::from_vec(v.into_iter().map(S::narrow).collect::<Vec<S>>(), &[n]);
    Ok((Tensor::from_vec(dx, x.shape())?, narrow(dgamma)?, narrow(dbeta)?))
}

impl Tensor {
    /// LayerNorm over the last dim, `(x - mean) / sqrt(var + epsilon) * gamma + beta`:
    /// the mean and biased variance taken over each row of the last dim,
    /// `gamma` and `beta` of shape `[d]` for a last dim of size `d`. f16 and
    /// bf16 are read and written directly, computed in f32.
    ///
    /// ```
    /// # use ferrum_core::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0], &[1, 2]).unwrap();
    /// let gamma = Tensor::from_vec(vec![2.0f32, 2.0], &[2]).unwrap();
    /// let y = x.layer_norm(&gamma, None, 0.0).unwrap(); // mean 2, variance 1
    /// assert_eq!(y.try_to_vec::<f32>("example").unwrap(), vec![-2.0, 2.0]);
    /// ```
    pub fn layer_norm(&self, gamma: &Tensor, beta: Option<&Tensor>, epsilon: f64) -> Result<Tensor> {
        let n = check(self, gamma, beta, epsilon)?;
        with_float_lanes!(OP, self.dtype(), S => forward_typed::<S, <S as FloatLanes>::Compute>(self, n, gamma, beta, epsilon))
    }

    /// The gradients of [`Tensor::layer_norm`] for the output gradient `g`
    /// (`self`'s shape and dtype): `(dx, dgamma, dbeta)`.
    pub fn layer_norm_backward(&self, g: &Tensor, gamma: &Tensor, epsilon: f64) -> Result<(Tensor, Tensor, Tensor)> {
        let n = check(self, gamma, None, epsilon)?;
        self.expect_same_dtype(OP, g)?;
        if g.shape() != self.shape() {
            return Err(Error::shapes(OP, self.shape(), g.shape(), "the output gradient must have the input's shape"));
        }
        with_float_lanes!(OP, self.dtype(), S => backward_typed::<S, <S as FloatLanes>::Compute>(g, self, n, gamma, epsilon))
    }
}

impl Var {
    /// [`Tensor::layer_norm`], differentiable in the input, `gamma` and
    /// `beta`. Under balanced checkpointing its output is recomputed, not kept.
    pub fn layer_norm(&self, gamma: &Var, beta: Option<&Var>, epsilon: f64) -> Result<Var> {
        let y = self.value.layer_norm(&gamma.value, beta.map(|b| &b.value), epsilon)?;
        let mut inputs = vec![self, gamma];
        inputs.extend(beta);
        let dtype = y.dtype();
        Ok(record_lazy(
            y,
            &inputs,
            move |v| v[0].layer_norm(&v[1], v.get(2), epsilon),
            |_| {
                let (x, w) = (self.saved(), gamma.value.clone());
                FnBackward::new(OP, move |g, needs| {
                    let g = if g.dtype() == dtype { g } else { g.cast(dtype)? };
                    let (dx, dgamma, dbeta) = x.get()?.layer_norm_backward(&g, &w, epsilon)?;
                    let mut grads = vec![needs[0].then_some(dx), needs[1].then_some(dgamma)];
                    if needs.len() > 2 {
                        grads.push(needs[2].then_some(dbeta));
                    }
                    Ok(grads)
                })
            },
        ))
    }
}

#[cfg(test)]
#[path = "layer_norm_tests.rs"]
mod tests;
