//! RMSProp, optionally centered and with momentum, as Burn's `RmsProp`:
//!
//! ```text
//! g = grad + penalty * param                          (weight decay)
//! square_avg = alpha * square_avg + (1 - alpha) * g^2
//! grad_avg = alpha * grad_avg + (1 - alpha) * g        (centered only)
//! avg = square_avg - grad_avg^2  (centered)  or  square_avg
//! d = g / (sqrt(avg) + epsilon)
//! buf = momentum * buf + d; d = buf                   (momentum > 0 only)
//! param = param - lr * d
//! ```
//!
//! Every state starts at zero, which gives Burn's first step exactly.

use std::mem::MaybeUninit;

use super::buffers::{expect_finite, expect_like, half_update, step_into, Scale};
use crate::element::FloatElement;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::with_float;

const OP: &str = "rmsprop_step";

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RmsPropOptions {
    pub lr: f64,
    pub alpha: f64,
    pub momentum: f64,
    pub epsilon: f64,
    pub centered: bool,
    pub weight_decay: Option<f64>,
}

/// The state RMSProp keeps per parameter: `grad_avg` only when centered,
/// `momentum` only when momentum > 0. All `None` before the first step.
#[derive(Debug, Clone, Default)]
pub struct RmsPropState {
    pub square_avg: Option<Tensor>,
    pub grad_avg: Option<Tensor>,
    pub momentum: Option<Tensor>,
}

/// One RMSProp update; returns the parameter and the new state.
pub fn rmsprop_step(param: Tensor, grad: &Tensor, mut state: RmsPropState, o: &RmsPropOptions) -> Result<(Tensor, RmsPropState)> {
    let p = rmsprop_update(param, grad, &mut state, o)?;
    Ok((p, state))
}

/// [`rmsprop_step`] that leaves the new state in `state` and returns the new
/// parameter. State tensors no other tensor shares are rewritten in their
/// own buffers (shared ones are left as they were and replaced by new
/// tensors); on an error the state is left untouched.
pub fn rmsprop_update(param: Tensor, grad: &Tensor, state: &mut RmsPropState, o: &RmsPropOptions) -> Result<Tensor> {
    let states = [&mut state.square_avg, &mut state.grad_avg, &mut state.momentum];
    let half = half_update(OP, &param, grad, states, |p, g, [square_avg, grad_avg, momentum]| {
        let mut wide = RmsPropState { square_avg: square_avg.take(), grad_avg: grad_avg.take(), momentum: momentum.take() };
        let r = rmsprop_update(p, g, &mut wide, o);
        (*square_avg, *grad_avg, *momentum) = (wide.square_avg, wide.grad_avg, wide.momentum);
        r
    });
    if let Some(r) = half {
        return r;
    }
    expect_like(OP, "the gradient", &param, grad)?;
    for (name, s) in [("square_avg", &state.square_avg), ("grad_avg", &state.grad_avg), ("momentum", &state.momentum)] {
        if let Some(s) = s {
            expect_like(OP, name, &param, s)?;
        }
    }
    if state.grad_avg.is_some() && !o.centered {
        return Err(Error::invalid(OP, "a grad_avg state was given but centered is off"));
    }
    if state.momentum.is_some() && o.momentum <= 0.0 {
        return Err(Error::invalid(OP, format!("a momentum state was given but momentum is {}", o.momentum)));
    }
    for (name, v) in [("lr", o.lr), ("alpha", o.alpha), ("momentum", o.momentum), ("epsilon", o.epsilon)] {
        expect_finite(OP, name, v)?;
    }
    with_float!(OP, param.dtype(), T => run::<T>(param, grad, state, o))
}

fn run<T: FloatElement>(param: Tensor, grad: &Tensor, state: &mut RmsPropState, o: &RmsPropOptions) -> Result<Tensor> {
    let centered = o.centered;
    let with_momentum = o.momentum > 0.0;
    // Averages that would go subnormal become zero (see `Scale`).
    let c = Coefs {
        lr: T::from_f64(o.lr),
        alpha: Scale::new(T::from_f64(o.alpha)),
        rest: Scale::new(T::from_f64(1.0 - o.alpha)),
        momentum: Scale::new(T::from_f64(o.momentum)),
        square: Scale::one(),
        eps: T::from_f64(o.epsilon),
        penalty: T::from_f64(o.weight_decay.unwrap_or(0.0)),
    };
    // A state this configuration does not keep stays None; its pieces are empty.
    let states = [
        Some(&mut state.square_avg),
        centered.then_some(&mut state.grad_avg),
        with_momentum.then_some(&mut state.momentum),
    ];
    macro_rules! run {
        ($d:literal, $c:literal, $m:literal) => {
            // SAFETY: `update` writes every element of its output piece.
            unsafe {
                step_into(OP, &param, grad, states, #[inline(always)] move |i, s, o| update::<T, $d, $c, $m>(i, s, o, c))
            }
        };
    }
    with_flags3!((o.weight_decay.is_some(), centered, with_momentum), run)
}

/// The step's constants, passed into the loop by value (see `step_into`).
#[derive(Clone, Copy)]
struct Coefs<T> {
    lr: T,
    alpha: Scale<T>,
    rest: Scale<T>,
    momentum: Scale<T>,
    square: Scale<T>,
    eps: T,
    penalty: T,
}

/// One piece of the update; `ga` (`buf`) is empty unless `CENTERED`
/// (`MOMENTUM`).
#[inline(always)]
fn update<T: FloatElement, const DECAYED: bool, const CENTERED: bool, const MOMENTUM: bool>(
    [p0, g]: [&[T]; 2],
    [sq, ga, buf]: [&mut [T]; 3],
    [p]: [&mut [MaybeUninit<T>]; 1],
    c: Coefs<T>,
) {
    let n = g.len();
    // Equal lengths up front let the compiler drop the bounds checks and vectorise.
    let (p0, sq, p) = (&p0[..n], &mut sq[..n], &mut p[..n]);
    let ga = &mut ga[..if CENTERED { n } else { 0 }];
    let buf = &mut buf[..if MOMENTUM { n } else { 0 }];
    for i in 0..n {
        let gi = if DECAYED { g[i] + c.penalty * p0[i] } else { g[i] };
        let sqi = c.alpha.of(sq[i]) + c.rest.of_square(gi);
        sq[i] = sqi;
        let avg = if CENTERED {
            let gai = c.alpha.of(ga[i]) + c.rest.of(gi);
            ga[i] = gai;
            // As it decays, the mean gradient spends thousands of steps
            // between 1e-38 and 1e-19, where its square is subnormal.
            sqi - c.square.of_square(gai)
        } else {
            sqi
        };
        let mut d = gi / (avg.sqrt() + c.eps);
        if MOMENTUM {
            let bi = c.momentum.of(buf[i]) + d;
            buf[i] = bi;
            d = bi;
        }
        p[i].write(p0[i] - d * c.lr);
    }
}

#[cfg(test)]
mod tests {
    use super::super::buffers::in_place;
    use super::*;
    use crate::test_util::f64_row as t;

    /// The formulas one element at a time, over several steps.
    fn reference(p0: f64, grads: &[f64], o: &RmsPropOptions) -> f64 {
        let (mut p, mut sq, mut ga, mut buf) = (p0, 0.0, 0.0, 0.0);
        for &g in grads {
            let g = g + o.weight_decay.unwrap_or(0.0) * p;
            sq = o.alpha * sq + (1.0 - o.alpha) * g * g;
            ga = o.alpha * ga + (1.0 - o.alpha) * g;
            let avg = if o.centered { sq - ga * ga } else { sq };
            let mut d = g / (avg.sqrt() + o.epsilon);
            if o.momentum > 0.0 {
                buf = o.momentum * buf + d;
                d = buf;
            }
            p -= o.lr * d;
        }
        p
    }

    /// Four steps of every element through the in-place harness (state
    /// rewritten where it is unless shared), against the formulas.
    fn check(centered: bool, momentum: f64, weight_decay: Option<f64>) {
        let o = RmsPropOptions { lr: 0.01, alpha: 0.9, momentum, epsilon: 1e-8, centered, weight_decay };
        let grads: [&[f64]; 4] = [&[0.5, -0.25], &[-1.0, 0.5], &[0.25, 3.0], &[2.0, -1.0]];
        let step = |_, p, g: &Tensor, [sq, ga, buf]: [&mut Option<Tensor>; 3]| {
            let mut state = RmsPropState { square_avg: sq.take(), grad_avg: ga.take(), momentum: buf.take() };
            let p = rmsprop_update(p, g, &mut state, &o);
            (*sq, *ga, *buf) = (state.square_avg, state.grad_avg, state.momentum);
            p
        };
        let (p, [_, grad_avg, buf]) = in_place::check(step, &[0.3, -0.2], &grads);
        assert_eq!(grad_avg.is_some(), centered);
        assert_eq!(buf.is_some(), momentum > 0.0);
        for (k, (got, p0)) in p.to_vec::<f64>().into_iter().zip([0.3, -0.2]).enumerate() {
            let expected = reference(p0, &grads.map(|g| g[k]), &o);
            assert!((got - expected).abs() < 1e-12, "{got} vs {expected}");
        }
    }

    #[test]
    fn every_variant_matches_the_formulas() {
        for centered in [false, true] {
            for momentum in [0.0, 0.9] {
                for decay in [None, Some(0.05)] {
                    check(centered, momentum, decay);
                }
            }
        }
    }

    #[test]
    fn averages_decay_to_zero_without_going_subnormal() {
        // One step with a gradient of 1, then zeros: every state decays by
        // 0.5 a step and would pass through f32's subnormals around step
        // 127; each goes from normal to zero instead.
        let o = RmsPropOptions { lr: 0.01, alpha: 0.5, momentum: 0.5, epsilon: 1e-8, centered: true, weight_decay: None };
        let f = |x: f32| Tensor::from_vec(vec![x], &[1]).unwrap();
        let (mut p, mut state) = rmsprop_step(f(0.0), &f(1.0), RmsPropState::default(), &o).unwrap();
        for step in 2..200 {
            (p, state) = rmsprop_step(p, &f(0.0), state, &o).unwrap();
            for (name, s) in [("square_avg", &state.square_avg), ("grad_avg", &state.grad_avg), ("momentum", &state.momentum)] {
                let x = s.as_ref().unwrap().to_vec::<f32>()[0];
                assert!(x == 0.0 || x.abs() >= f32::MIN_POSITIVE, "step {step}: {name} {x:e}");
            }
        }
        for s in [&state.square_avg, &state.grad_avg, &state.momentum] {
            assert_eq!(s.as_ref().unwrap().to_vec::<f32>()[0], 0.0);
        }
        assert!(p.to_vec::<f32>()[0].is_finite());
    }

    #[test]
    fn a_tiny_gradient_leaves_a_centered_weight_finite() {
        // g = 1e-18 with alpha 0.99: the square average's share, 1e-38, is
        // subnormal in f32 and becomes zero, and the mean gradient is 1e-20.
        // Its square (1e-40) subtracted from that zero made the average
        // negative and the weight NaN; a subnormal square counts as zero too.
        let o = RmsPropOptions { lr: 0.01, alpha: 0.99, momentum: 0.0, epsilon: 1e-8, centered: true, weight_decay: None };
        let f = |x: f32| Tensor::from_vec(vec![x, 1.0], &[2]).unwrap();
        let (mut p, mut state) = rmsprop_step(f(1.0), &f(1e-18), RmsPropState::default(), &o).unwrap();
        for _ in 0..3 {
            (p, state) = rmsprop_step(p, &f(1e-18), state, &o).unwrap();
        }
        let p = p.to_vec::<f32>();
        // Weight 0 moves by lr * g / epsilon = 1e-12 a step: nothing in f32.
        assert_eq!(p[0], 1.0, "{p:?}");
        let want = reference(1.0, &[1.0; 4], &o);
        assert!((p[1] as f64 - want).abs() < 1e-5, "{p:?} vs {want}");
    }

    #[test]
    fn state_for_a_disabled_feature_is_an_error() {
        let o = RmsPropOptions { lr: 0.01, alpha: 0.9, momentum: 0.0, epsilon: 1e-8, centered: false, weight_decay: None };
        let state = RmsPropState { square_avg: None, grad_avg: Some(t(&[0.0])), momentum: None };
        assert!(rmsprop_step(t(&[1.0]), &t(&[1.0]), state, &o).is_err());
    }
}
