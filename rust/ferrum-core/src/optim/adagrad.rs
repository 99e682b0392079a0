//! AdaGrad with learning-rate decay, as Burn's `AdaGrad`:
//!
//! ```text
//! g = grad + penalty * param                 (weight decay)
//! sum = sum + g^2
//! lr_t = lr / (1 + (t - 1) * lr_decay)
//! param = param - lr_t * g / (sqrt(sum) + epsilon)
//! ```

use super::buffers::{chunked, expect_finite, expect_like, take, take_or_zeros, wrap};
use crate::kernels::copy::contiguous_values;
use crate::dtype::FloatElement;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::with_float;

const OP: &str = "adagrad_step";

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaGradOptions {
    pub lr: f64,
    pub lr_decay: f64,
    pub epsilon: f64,
    pub weight_decay: Option<f64>,
}

/// One AdaGrad update. `sum` is the running sum of squared gradients of the
/// previous steps (`None` on the first); `time` counts steps including this
/// one. Returns the parameter and the new sum.
pub fn adagrad_step(param: Tensor, grad: &Tensor, sum: Option<Tensor>, time: u64, o: &AdaGradOptions) -> Result<(Tensor, Tensor)> {
    expect_like(OP, "the gradient", &param, grad)?;
    if let Some(s) = &sum {
        expect_like(OP, "sum", &param, s)?;
    }
    if time == 0 {
        return Err(Error::invalid(OP, "time counts steps from 1, found 0"));
    }
    for (name, v) in [("lr", o.lr), ("lr_decay", o.lr_decay), ("epsilon", o.epsilon)] {
        expect_finite(OP, name, v)?;
    }
    let shape = param.shape().to_vec();
    with_float!(OP, param.dtype(), T => {
        let (p, s) = run::<T>(param, grad, sum, time, o)?;
        Ok((wrap(p, &shape)?, wrap(s, &shape)?))
    })
}

fn run<T: FloatElement>(param: Tensor, grad: &Tensor, sum: Option<Tensor>, time: u64, o: &AdaGradOptions) -> Result<(Vec<T>, Vec<T>)> {
    let g = contiguous_values::<T>(OP, grad)?;
    let mut p = take::<T>(OP, param)?;
    let mut s = take_or_zeros::<T>(OP, sum, g.len())?;
    let lr = T::from_f64(o.lr / (1.0 + (time as f64 - 1.0) * o.lr_decay));
    let eps = T::from_f64(o.epsilon);
    let decayed = o.weight_decay.is_some();
    let penalty = T::from_f64(o.weight_decay.unwrap_or(0.0));
    chunked([&mut p, &mut s], &g, #[inline(always)] |[p, s], g| {
        for ((p, s), &g) in p.iter_mut().zip(s.iter_mut()).zip(g) {
            let g = if decayed { g + penalty * *p } else { g };
            *s = *s + g * g;
            *p = *p - g / (s.sqrt() + eps) * lr;
        }
    });
    Ok((p, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), &[v.len()]).unwrap()
    }

    #[test]
    fn steps_follow_the_formula_with_decay() {
        let o = AdaGradOptions { lr: 0.1, lr_decay: 0.5, epsilon: 0.0, weight_decay: None };
        // Step 1: sum = 4, p = 1 - 0.1 * 2 / 2 = 0.9.
        let (p, s) = adagrad_step(t(&[1.0]), &t(&[2.0]), None, 1, &o).unwrap();
        assert!((p.to_vec::<f64>()[0] - 0.9).abs() < 1e-12);
        assert_eq!(s.to_vec::<f64>(), vec![4.0]);
        // Step 2: sum = 4 + 9 = 13, lr = 0.1 / 1.5, p = 0.9 - lr * 3 / sqrt(13).
        let (p, s) = adagrad_step(p, &t(&[3.0]), Some(s), 2, &o).unwrap();
        let expected = 0.9 - 0.1 / 1.5 * 3.0 / 13f64.sqrt();
        assert!((p.to_vec::<f64>()[0] - expected).abs() < 1e-12);
        assert_eq!(s.to_vec::<f64>(), vec![13.0]);
    }

    #[test]
    fn weight_decay_adds_to_the_gradient() {
        let o = AdaGradOptions { lr: 1.0, lr_decay: 0.0, epsilon: 0.0, weight_decay: Some(1.0) };
        // g = 0 + 1 * 2 = 2; sum = 4; p = 2 - 2 / 2 = 1.
        let (p, _) = adagrad_step(t(&[2.0]), &t(&[0.0]), None, 1, &o).unwrap();
        assert_eq!(p.to_vec::<f64>(), vec![1.0]);
    }
}
