//! AdaGrad with learning-rate decay, as Burn's `AdaGrad`:
//!
//! ```text
//! g = grad + penalty * param                 (weight decay)
//! sum = sum + g^2
//! lr_t = lr / (1 + (t - 1) * lr_decay)
//! param = param - lr_t * g / (sqrt(sum) + epsilon)
//! ```

use std::mem::MaybeUninit;

use super::buffers::{expect_finite, expect_like, half_update, step_into, Scale};
use crate::element::FloatElement;
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
pub fn adagrad_step(param: Tensor, grad: &Tensor, mut sum: Option<Tensor>, time: u64, o: &AdaGradOptions) -> Result<(Tensor, Tensor)> {
    let p = adagrad_update(param, grad, &mut sum, time, o)?;
    let sum = sum.ok_or_else(|| Error::Internal { reason: format!("{OP}: the update left no sum") })?;
    Ok((p, sum))
}

/// [`adagrad_step`] that leaves the new sum in `sum` and returns the new
/// parameter. A sum no other tensor shares is rewritten in its own buffer
/// (a shared one is left as it was and replaced by a new tensor); on an
/// error it is left untouched.
pub fn adagrad_update(param: Tensor, grad: &Tensor, sum: &mut Option<Tensor>, time: u64, o: &AdaGradOptions) -> Result<Tensor> {
    if let Some(r) = half_update(OP, &param, grad, [sum], |p, g, [s]| adagrad_update(p, g, s, time, o)) {
        return r;
    }
    expect_like(OP, "the gradient", &param, grad)?;
    if let Some(s) = sum {
        expect_like(OP, "sum", &param, s)?;
    }
    if time == 0 {
        return Err(Error::invalid(OP, "time counts steps from 1, found 0"));
    }
    for (name, v) in [("lr", o.lr), ("lr_decay", o.lr_decay), ("epsilon", o.epsilon)] {
        expect_finite(OP, name, v)?;
    }
    with_float!(OP, param.dtype(), T => run::<T>(param, grad, sum, time, o))
}

fn run<T: FloatElement>(param: Tensor, grad: &Tensor, sum: &mut Option<Tensor>, time: u64, o: &AdaGradOptions) -> Result<Tensor> {
    let c = Coefs {
        lr: T::from_f64(o.lr / (1.0 + (time as f64 - 1.0) * o.lr_decay)),
        eps: T::from_f64(o.epsilon),
        penalty: T::from_f64(o.weight_decay.unwrap_or(0.0)),
        // A square that would be subnormal adds zero: the sum only grows, so
        // one such square (a gradient below 1e-19 in f32) left in a sum that
        // gets nothing else would make every later step of that weight take
        // the CPU's slow path for subnormals (see `Scale`).
        square: Scale::one(),
    };
    let states = [Some(sum)];
    // One compiled loop per variant, so the loop tests no flag per element.
    macro_rules! run {
        ($d:literal) => {
            // SAFETY: `update` writes every element of its output piece.
            unsafe { step_into(OP, &param, grad, states, #[inline(always)] move |i, s, o| update::<T, $d>(i, s, o, c)) }
        };
    }
    if o.weight_decay.is_some() { run!(true) } else { run!(false) }
}

/// The step's constants, passed into the loop by value (see `step_into`).
#[derive(Clone, Copy)]
struct Coefs<T> {
    lr: T,
    eps: T,
    penalty: T,
    square: Scale<T>,
}

#[inline(always)]
fn update<T: FloatElement, const DECAYED: bool>([p0, g]: [&[T]; 2], [s]: [&mut [T]; 1], [p]: [&mut [MaybeUninit<T>]; 1], c: Coefs<T>) {
    let n = g.len();
    // Equal lengths up front let the compiler drop the bounds checks and vectorise.
    let (p0, s, p) = (&p0[..n], &mut s[..n], &mut p[..n]);
    for i in 0..n {
        let gi = if DECAYED { g[i] + c.penalty * p0[i] } else { g[i] };
        let si = s[i] + c.square.of_square(gi);
        s[i] = si;
        p[i].write(p0[i] - gi / (si.sqrt() + c.eps) * c.lr);
    }
}

#[cfg(test)]
mod tests {
    use super::super::buffers::in_place;
    use super::*;
    use crate::test_util::f64_row as t;

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
    fn the_sum_is_rewritten_in_place_unless_shared() {
        let o = AdaGradOptions { lr: 0.1, lr_decay: 0.25, epsilon: 1e-10, weight_decay: Some(0.5) };
        let grads: [&[f64]; 4] = [&[0.5, -0.25], &[-1.0, 0.5], &[0.25, 3.0], &[2.0, -1.0]];
        let step = |time, p, g: &Tensor, [s]: [&mut Option<Tensor>; 1]| adagrad_update(p, g, s, time, &o);
        let (p, _) = in_place::check(step, &[0.3, -0.2], &grads);
        for (k, (got, p0)) in p.to_vec::<f64>().into_iter().zip([0.3, -0.2]).enumerate() {
            let (mut p, mut sum) = (p0, 0.0);
            for (t, g) in (1..).zip(grads.map(|g| g[k])) {
                let g = g + 0.5 * p;
                sum += g * g;
                p -= 0.1 / (1.0 + (t - 1) as f64 * 0.25) * g / (sum.sqrt() + 1e-10);
            }
            assert!((got - p).abs() < 1e-12, "{got} vs {p}");
        }
    }

    #[test]
    fn the_sum_never_goes_subnormal() {
        // Gradients whose squares are subnormal in f32 (1e-20: 1e-40) add
        // nothing; ordinary ones follow the formula.
        let o = AdaGradOptions { lr: 0.1, lr_decay: 0.0, epsilon: 1e-10, weight_decay: None };
        let f = |v: Vec<f32>| Tensor::from_vec(v, &[3]).unwrap();
        let (mut p, mut s) = adagrad_step(f(vec![1.0; 3]), &f(vec![1e-20, -3e-20, 0.5]), None, 1, &o).unwrap();
        for step in 2..=50 {
            (p, s) = adagrad_step(p, &f(vec![1e-20, 0.0, 0.5]), Some(s), step, &o).unwrap();
            let sums = s.to_vec::<f32>();
            assert!(sums.iter().all(|x| *x == 0.0 || *x >= f32::MIN_POSITIVE), "step {step}: {sums:?}");
        }
        let (sums, p) = (s.to_vec::<f32>(), p.to_vec::<f32>());
        assert!(sums[0] == 0.0 && sums[1] == 0.0 && (sums[2] - 12.5).abs() < 1e-5, "{sums:?}");
        // Weight 2 in f64: 50 steps of 0.1 * 0.5 / (sqrt(0.25 t) + 1e-10).
        let want = 1.0 - (1..=50).map(|t| 0.1 * 0.5 / ((0.25 * t as f64).sqrt() + 1e-10)).sum::<f64>();
        assert!((p[2] as f64 - want).abs() < 1e-5, "{} vs {want}", p[2]);
    }

    #[test]
    fn weight_decay_adds_to_the_gradient() {
        let o = AdaGradOptions { lr: 1.0, lr_decay: 0.0, epsilon: 0.0, weight_decay: Some(1.0) };
        // g = 0 + 1 * 2 = 2; sum = 4; p = 2 - 2 / 2 = 1.
        let (p, _) = adagrad_step(t(&[2.0]), &t(&[0.0]), None, 1, &o).unwrap();
        assert_eq!(p.to_vec::<f64>(), vec![1.0]);
    }
}
