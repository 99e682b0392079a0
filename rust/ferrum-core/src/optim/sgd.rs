//! Stochastic gradient descent with optional weight decay and momentum
//! (dampening, Nesterov), as Burn's `Sgd`:
//!
//! ```text
//! g = grad + penalty * param                          (weight decay)
//! v = g on the first step, else momentum * v + (1 - dampening) * g
//! g = momentum * v + g  (Nesterov)  or  v
//! param = param - lr * g
//! ```

use std::mem::MaybeUninit;

use super::buffers::{expect_finite, expect_like, half_update, step_into, Scale};
use crate::element::FloatElement;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::with_float;

const OP: &str = "sgd_step";

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Momentum {
    pub momentum: f64,
    pub dampening: f64,
    pub nesterov: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgdOptions {
    pub lr: f64,
    /// The L2 penalty added to the gradient, if any.
    pub weight_decay: Option<f64>,
    pub momentum: Option<Momentum>,
}

/// One SGD update of `param` from `grad`. `velocity` is the momentum state
/// of the previous step (`None` on the first); it comes back updated when
/// momentum is on.
pub fn sgd_step(param: Tensor, grad: &Tensor, mut velocity: Option<Tensor>, o: &SgdOptions) -> Result<(Tensor, Option<Tensor>)> {
    let p = sgd_update(param, grad, &mut velocity, o)?;
    Ok((p, velocity))
}

/// [`sgd_step`] that leaves the new velocity in `velocity` and returns the
/// new parameter. A velocity no other tensor shares is rewritten in its own
/// buffer (a shared one is left as it was and replaced by a new tensor);
/// on an error it is left untouched.
pub fn sgd_update(param: Tensor, grad: &Tensor, velocity: &mut Option<Tensor>, o: &SgdOptions) -> Result<Tensor> {
    if let Some(r) = half_update(OP, &param, grad, [velocity], |p, g, [v]| sgd_update(p, g, v, o)) {
        return r;
    }
    expect_like(OP, "the gradient", &param, grad)?;
    expect_finite(OP, "lr", o.lr)?;
    if let Some(v) = velocity {
        if o.momentum.is_none() {
            return Err(Error::invalid(OP, "a velocity was given but momentum is off"));
        }
        expect_like(OP, "the velocity", &param, v)?;
    }
    with_float!(OP, param.dtype(), T => run::<T>(param, grad, velocity, o))
}

fn run<T: FloatElement>(param: Tensor, grad: &Tensor, velocity: &mut Option<Tensor>, o: &SgdOptions) -> Result<Tensor> {
    let decayed = o.weight_decay.is_some();
    let (lr, decay) = (T::from_f64(o.lr), T::from_f64(o.weight_decay.unwrap_or(0.0)));
    // One compiled loop per variant, so the loop tests no flag per element.
    let Some(m) = o.momentum else {
        macro_rules! run {
            ($d:literal) => {
                // SAFETY: `plain` writes every element of its output piece.
                unsafe { step_into(OP, &param, grad, [], #[inline(always)] move |i, [], o| plain::<T, $d>(i, o, lr, decay)) }
            };
        }
        return if decayed { run!(true) } else { run!(false) };
    };
    let momentum = T::from_f64(m.momentum);
    // The velocity decays by `momentum` and takes `1 - dampening` of the
    // gradient; what would be subnormal becomes zero (see `Scale`).
    let c = Coefs { lr, decay, momentum, fade: Scale::new(momentum), keep: Scale::new(T::from_f64(1.0 - m.dampening)) };
    let first = velocity.is_none();
    let states = [Some(velocity)];
    macro_rules! run {
        ($d:literal, $f:literal, $n:literal) => {
            // SAFETY: `with_velocity` writes every element of its output piece.
            unsafe {
                step_into(OP, &param, grad, states, #[inline(always)] move |i, s, o| {
                    with_velocity::<T, $d, $f, $n>(i, s, o, c)
                })
            }
        };
    }
    with_flags3!((decayed, first, m.nesterov), run)
}

/// The constants of a step with momentum, passed into the loop by value
/// (see `step_into`).
#[derive(Clone, Copy)]
struct Coefs<T> {
    lr: T,
    decay: T,
    momentum: T,
    fade: Scale<T>,
    keep: Scale<T>,
}

/// The update without momentum; `lr` and `decay` by value, as `Coefs`.
#[inline(always)]
fn plain<T: FloatElement, const DECAYED: bool>([p0, g]: [&[T]; 2], [p]: [&mut [MaybeUninit<T>]; 1], lr: T, decay: T) {
    let n = g.len();
    // Equal lengths up front let the compiler drop the bounds checks and vectorise.
    let (p0, p) = (&p0[..n], &mut p[..n]);
    for i in 0..n {
        let d = if DECAYED { g[i] + decay * p0[i] } else { g[i] };
        p[i].write(p0[i] - lr * d);
    }
}

/// The update with momentum: the velocity rewritten in place (on the
/// first step it holds zeros, and is not read).
#[inline(always)]
fn with_velocity<T: FloatElement, const DECAYED: bool, const FIRST: bool, const NESTEROV: bool>(
    [p0, g]: [&[T]; 2],
    [v]: [&mut [T]; 1],
    [p]: [&mut [MaybeUninit<T>]; 1],
    c: Coefs<T>,
) {
    let n = g.len();
    let (p0, v, p) = (&p0[..n], &mut v[..n], &mut p[..n]);
    for i in 0..n {
        let d = if DECAYED { g[i] + c.decay * p0[i] } else { g[i] };
        let vi = if FIRST { d } else { c.keep.of(d) + c.fade.of(v[i]) };
        v[i] = vi;
        let step = if NESTEROV { vi * c.momentum + d } else { vi };
        p[i].write(p0[i] - c.lr * step);
    }
}

#[cfg(test)]
mod tests {
    use super::super::buffers::in_place;
    use super::*;
    use crate::test_util::f64_row as t;

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-12, "{a:?} != {b:?}");
        }
    }

    #[test]
    fn plain_step_with_weight_decay() {
        let o = SgdOptions { lr: 0.1, weight_decay: Some(0.5), momentum: None };
        let (p, v) = sgd_step(t(&[1.0, -2.0]), &t(&[0.5, 1.0]), None, &o).unwrap();
        // g = 0.5 + 0.5*1 = 1.0 -> 1 - 0.1; g = 1 + 0.5*-2 = 0 -> -2.
        close(&p.to_vec::<f64>(), &[0.9, -2.0]);
        assert!(v.is_none());
    }

    #[test]
    fn momentum_skips_dampening_on_the_first_step() {
        let m = Momentum { momentum: 0.9, dampening: 0.1, nesterov: false };
        let o = SgdOptions { lr: 0.1, weight_decay: None, momentum: Some(m) };
        let (p, v) = sgd_step(t(&[1.0]), &t(&[2.0]), None, &o).unwrap();
        let v = v.unwrap();
        close(&v.to_vec::<f64>(), &[2.0]);
        close(&p.to_vec::<f64>(), &[0.8]);
        // v = 0.9 * 2 + 0.9 * 1 = 2.7; p = 0.8 - 0.27.
        let (p, v) = sgd_step(p, &t(&[1.0]), Some(v), &o).unwrap();
        close(&v.unwrap().to_vec::<f64>(), &[2.7]);
        close(&p.to_vec::<f64>(), &[0.8 - 0.27]);
    }

    #[test]
    fn the_velocity_is_rewritten_in_place_unless_shared() {
        let grads: [&[f64]; 4] = [&[0.5, -0.25], &[-1.0, 0.5], &[0.25, 3.0], &[2.0, -1.0]];
        for (momentum, nesterov) in [(None, false), (Some(0.9), false), (Some(0.9), true)] {
            let m = momentum.map(|momentum| Momentum { momentum, dampening: 0.1, nesterov });
            let o = SgdOptions { lr: 0.1, weight_decay: Some(0.01), momentum: m };
            let (p, [v]) = in_place::check(|_, p, g, [v]: [&mut Option<Tensor>; 1]| sgd_update(p, g, v, &o), &[0.3, -0.2], &grads);
            assert_eq!(v.is_some(), momentum.is_some());
            for (k, (got, p0)) in p.to_vec::<f64>().into_iter().zip([0.3, -0.2]).enumerate() {
                let (mut p, mut v) = (p0, None);
                for g in grads.map(|g| g[k]) {
                    let d = g + 0.01 * p;
                    let step = match momentum {
                        None => d,
                        Some(mu) => {
                            let vi = v.map_or(d, |v| mu * v + 0.9 * d);
                            v = Some(vi);
                            if nesterov { mu * vi + d } else { vi }
                        }
                    };
                    p -= 0.1 * step;
                }
                assert!((got - p).abs() < 1e-12, "{momentum:?} {nesterov}: {got} vs {p}");
            }
        }
    }

    #[test]
    fn velocity_decays_to_zero_without_going_subnormal() {
        // With the gradient zero from the second step on, the velocity
        // decays by 0.5 a step: from 1 it would pass through f32's
        // subnormals around step 127; it goes from normal to zero instead.
        let m = Momentum { momentum: 0.5, dampening: 0.0, nesterov: false };
        let o = SgdOptions { lr: 0.1, weight_decay: None, momentum: Some(m) };
        let f = |x: f32| Tensor::from_vec(vec![x], &[1]).unwrap();
        let (mut p, mut v) = sgd_step(f(0.0), &f(1.0), None, &o).unwrap();
        for step in 2..200 {
            (p, v) = sgd_step(p, &f(0.0), v, &o).unwrap();
            let x = v.as_ref().unwrap().to_vec::<f32>()[0];
            assert!(x == 0.0 || x >= f32::MIN_POSITIVE, "step {step}: velocity {x:e}");
        }
        assert_eq!(v.unwrap().to_vec::<f32>()[0], 0.0);
        // p = -0.1 * (1 + 0.5 + 0.25 + ...) = -0.2, up to f32 rounding.
        assert!((p.to_vec::<f32>()[0] + 0.2).abs() < 1e-6);
    }

    #[test]
    fn nesterov_looks_ahead() {
        let m = Momentum { momentum: 0.5, dampening: 0.0, nesterov: true };
        let o = SgdOptions { lr: 1.0, weight_decay: None, momentum: Some(m) };
        // v = g = 2; step = 0.5 * 2 + 2 = 3.
        let (p, v) = sgd_step(t(&[10.0]), &t(&[2.0]), None, &o).unwrap();
        close(&p.to_vec::<f64>(), &[7.0]);
        // v = 0.5 * 2 + 1 = 2; step = 0.5 * 2 + 1 = 2.
        let (p, _) = sgd_step(p, &t(&[1.0]), v, &o).unwrap();
        close(&p.to_vec::<f64>(), &[5.0]);
    }

    #[test]
    fn shared_parameter_is_left_unchanged() {
        let o = SgdOptions { lr: 1.0, weight_decay: None, momentum: None };
        let old = t(&[1.0, 2.0]);
        let (new, _) = sgd_step(old.clone(), &t(&[1.0, 1.0]), None, &o).unwrap();
        assert_eq!(old.to_vec::<f64>(), vec![1.0, 2.0]);
        assert_eq!(new.to_vec::<f64>(), vec![0.0, 1.0]);
    }

    #[test]
    fn large_f32_tensors_split_across_threads_match() {
        let n = 300_001;
        let p: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.01).collect();
        let g: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
        let m = Momentum { momentum: 0.9, dampening: 0.0, nesterov: true };
        let o = SgdOptions { lr: 0.01, weight_decay: Some(0.1), momentum: Some(m) };
        let pt = Tensor::from_vec(p.clone(), &[n]).unwrap();
        let gt = Tensor::from_vec(g.clone(), &[n]).unwrap();
        let (out, _) = sgd_step(pt, &gt, None, &o).unwrap();
        let out = out.to_vec::<f32>();
        for i in (0..n).step_by(7919) {
            let d = g[i] + 0.1 * p[i];
            let expected = p[i] - 0.01 * (0.9 * d + d);
            assert!((out[i] - expected).abs() < 1e-5, "{i}: {} vs {expected}", out[i]);
        }
    }

    #[test]
    fn mismatched_inputs_are_errors() {
        let o = SgdOptions { lr: 0.1, weight_decay: None, momentum: None };
        assert!(matches!(sgd_step(t(&[1.0, 2.0]), &t(&[1.0]), None, &o), Err(Error::ShapeMismatch { .. })));
        assert!(sgd_step(t(&[1.0]), &t(&[1.0]), Some(t(&[0.0])), &o).is_err());
        let i = Tensor::from_vec(vec![1i64], &[1]).unwrap();
        assert!(sgd_step(i.clone(), &i, None, &o).is_err());
    }
}
