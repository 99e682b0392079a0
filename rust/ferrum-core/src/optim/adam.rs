//! Adam and AdamW, as Burn's `Adam` and `AdamW`:
//!
//! ```text
//! g = grad + penalty * param                    (Adam's coupled weight decay)
//! m = beta_1 * m + (1 - beta_1) * g
//! v = beta_2 * v + (1 - beta_2) * g^2
//! update = m_hat / (sqrt(v_hat) + epsilon)      m_hat = m / (1 - beta_1^t), v_hat likewise
//! param = param - lr * update                   (Adam)
//! param = param * (1 - lr * decay) - lr * update  (AdamW: decoupled weight decay)
//! ```
//!
//! AdamW's cautious weight decay (Burn's `cautious_weight_decay`) decays a
//! weight only where its sign agrees with the new first moment's.
//!
//! The moments start at zero, which gives Burn's first step exactly.

use std::mem::MaybeUninit;

use super::buffers::{expect_finite, expect_like, half_update, step_into, Scale};
use crate::element::FloatElement;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::with_float;

const OP: &str = "adam_step";

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamOptions {
    pub lr: f64,
    pub beta_1: f64,
    pub beta_2: f64,
    pub epsilon: f64,
    /// Adam: the L2 penalty added to the gradient; AdamW: the decoupled
    /// decay rate. `None` (or 0) decays nothing.
    pub weight_decay: Option<f64>,
    /// AdamW's decoupled weight decay instead of Adam's L2 penalty.
    pub decoupled: bool,
    /// AdamW only: decay only where `param >= 0` and `moment_1 >= 0` agree.
    pub cautious: bool,
}

/// One Adam (or AdamW) update. `moment_1`/`moment_2` are the state of the
/// previous step (`None` on the first); `time` counts steps including this
/// one (1 on the first). Returns the parameter and both moments.
pub fn adam_step(
    param: Tensor,
    grad: &Tensor,
    mut moment_1: Option<Tensor>,
    mut moment_2: Option<Tensor>,
    time: u64,
    o: &AdamOptions,
) -> Result<(Tensor, Tensor, Tensor)> {
    let p = adam_update(param, grad, &mut moment_1, &mut moment_2, time, o)?;
    match (moment_1, moment_2) {
        (Some(m), Some(v)) => Ok((p, m, v)),
        _ => Err(Error::Internal { reason: format!("{OP}: the update left no moments") }),
    }
}

/// [`adam_step`] that leaves the new moments in `moment_1`/`moment_2` and
/// returns the new parameter. Moments no other tensor shares are rewritten
/// in their own buffers (copy-on-write: shared ones are left as they were
/// and replaced by new tensors); on an error both are left untouched.
pub fn adam_update(
    param: Tensor,
    grad: &Tensor,
    moment_1: &mut Option<Tensor>,
    moment_2: &mut Option<Tensor>,
    time: u64,
    o: &AdamOptions,
) -> Result<Tensor> {
    if let Some(r) = half_update(OP, &param, grad, [moment_1, moment_2], |p, g, [m, v]| adam_update(p, g, m, v, time, o)) {
        return r;
    }
    expect_like(OP, "the gradient", &param, grad)?;
    for (name, m) in [("moment_1", &*moment_1), ("moment_2", &*moment_2)] {
        if let Some(m) = m {
            expect_like(OP, name, &param, m)?;
        }
    }
    if moment_1.is_some() != moment_2.is_some() {
        return Err(Error::invalid(OP, "moment_1 and moment_2 must both be given or both be None"));
    }
    if time == 0 {
        return Err(Error::invalid(OP, "time counts steps from 1, found 0"));
    }
    for (name, v) in [("lr", o.lr), ("beta_1", o.beta_1), ("beta_2", o.beta_2), ("epsilon", o.epsilon)] {
        expect_finite(OP, name, v)?;
    }
    with_float!(OP, param.dtype(), T => run::<T>(param, grad, moment_1, moment_2, time, o))
}

/// The step's constants, folded once so the loop only multiplies and adds.
#[derive(Clone, Copy)]
struct Coefs<T> {
    b1: Scale<T>,
    b2: Scale<T>,
    c1: Scale<T>,
    c2: Scale<T>,
    factor: T,
    eps: T,
    lr: T,
    penalty: T,
    shrink: T,
    /// `lr * decay`: what cautious decay takes off where the signs agree.
    decay: T,
}

impl<T: FloatElement> Coefs<T> {
    fn new(time: u64, o: &AdamOptions) -> Self {
        let t = time.min(i32::MAX as u64) as i32;
        let correction_1 = 1.0 - o.beta_1.powi(t);
        let correction_2_sqrt = (1.0 - o.beta_2.powi(t)).sqrt();
        let decay = o.weight_decay.unwrap_or(0.0);
        Coefs {
            b1: Scale::new(T::from_f64(o.beta_1)),
            b2: Scale::new(T::from_f64(o.beta_2)),
            c1: Scale::new(T::from_f64(1.0 - o.beta_1)),
            c2: Scale::new(T::from_f64(1.0 - o.beta_2)),
            // m_hat / (sqrt(v_hat) + eps) == m * c / (sqrt(v) + eps * sqrt(1 - beta_2^t)),
            // which saves two divisions per element.
            factor: T::from_f64(correction_2_sqrt / correction_1),
            eps: T::from_f64(o.epsilon * correction_2_sqrt),
            lr: T::from_f64(o.lr),
            penalty: T::from_f64(if o.decoupled { 0.0 } else { decay }),
            shrink: T::from_f64(if o.decoupled && !o.cautious { 1.0 - o.lr * decay } else { 1.0 }),
            decay: T::from_f64(o.lr * decay),
        }
    }
}

fn run<T: FloatElement>(
    param: Tensor,
    grad: &Tensor,
    moment_1: &mut Option<Tensor>,
    moment_2: &mut Option<Tensor>,
    time: u64,
    o: &AdamOptions,
) -> Result<Tensor> {
    // The moments are rewritten where they are (the optimizer holds them
    // alone): the step reads their cache lines and writes them back instead
    // of also filling two fresh buffers, which each store first reads in
    // (the W1 update of a 784-512 MLP: 259 -> 193 us).
    let c = Coefs::<T>::new(time, o);
    let decay = o.weight_decay.unwrap_or(0.0) != 0.0;
    let states = [Some(moment_1), Some(moment_2)];
    // One compiled loop per variant, so the loop tests no flag per element.
    macro_rules! run {
        ($coupled:literal, $cautious:literal) => {
            // SAFETY: `update` writes every element of its output piece.
            unsafe {
                step_into(OP, &param, grad, states, #[inline(always)] move |i, s, o| {
                    update::<T, $coupled, $cautious>(i, s, o, c)
                })
            }
        };
    }
    match (!o.decoupled && decay, o.decoupled && o.cautious && decay) {
        (true, _) => run!(true, false),
        (false, true) => run!(false, true),
        (false, false) => run!(false, false),
    }
}

/// One piece of the update: the new parameter from the old one and the
/// gradient; the moments rewritten in place.
#[inline(always)]
fn update<T: FloatElement, const COUPLED: bool, const CAUTIOUS: bool>(
    [p0, g]: [&[T]; 2],
    [m, v]: [&mut [T]; 2],
    [p]: [&mut [MaybeUninit<T>]; 1],
    c: Coefs<T>,
) {
    let n = g.len();
    // Equal lengths up front let the compiler drop the bounds checks and vectorise.
    let (p0, m, v, p) = (&p0[..n], &mut m[..n], &mut v[..n], &mut p[..n]);
    for i in 0..n {
        let g = if COUPLED { g[i] + c.penalty * p0[i] } else { g[i] };
        // Moments that would go subnormal become zero (see `Scale`).
        let mi = c.b1.of(m[i]) + c.c1.of(g);
        let vi = c.b2.of(v[i]) + c.c2.of_square(g);
        let step = c.lr * (mi * c.factor / (vi.sqrt() + c.eps));
        let kept = if CAUTIOUS && ((p0[i] >= T::zero()) == (mi >= T::zero())) { p0[i] - c.decay * p0[i] } else { p0[i] * c.shrink };
        p[i].write(kept - step);
        m[i] = mi;
        v[i] = vi;
    }
}

#[cfg(test)]
mod tests {
    use super::super::buffers::in_place;
    use super::*;
    use crate::test_util::f64_row as t;

    fn options(weight_decay: Option<f64>, decoupled: bool) -> AdamOptions {
        AdamOptions { lr: 0.01, beta_1: 0.9, beta_2: 0.999, epsilon: 1e-8, weight_decay, decoupled, cautious: false }
    }

    /// The textbook formulas, one element at a time.
    fn reference(p0: f64, grads: &[f64], o: &AdamOptions) -> f64 {
        let (mut p, mut m, mut v) = (p0, 0.0, 0.0);
        for (i, &g) in grads.iter().enumerate() {
            let t = (i + 1) as i32;
            let decay = o.weight_decay.unwrap_or(0.0);
            let g = if o.decoupled { g } else { g + decay * p };
            m = o.beta_1 * m + (1.0 - o.beta_1) * g;
            v = o.beta_2 * v + (1.0 - o.beta_2) * g * g;
            let m_hat = m / (1.0 - o.beta_1.powi(t));
            let v_hat = v / (1.0 - o.beta_2.powi(t));
            let update = m_hat / (v_hat.sqrt() + o.epsilon);
            p = if o.decoupled { p * (1.0 - o.lr * decay) } else { p } - o.lr * update;
        }
        p
    }

    fn check(o: AdamOptions) {
        let grads = [0.5, -1.0, 0.25, 2.0];
        let (mut p, mut m, mut v) = (t(&[0.3]), None, None);
        for (i, &g) in grads.iter().enumerate() {
            let (np, nm, nv) = adam_step(p, &t(&[g]), m, v, i as u64 + 1, &o).unwrap();
            (p, m, v) = (np, Some(nm), Some(nv));
        }
        let got = p.to_vec::<f64>()[0];
        let expected = reference(0.3, &grads, &o);
        assert!((got - expected).abs() < 1e-12, "{got} vs {expected}");
    }

    #[test]
    fn first_step_moves_by_lr_times_sign() {
        // m_hat = g and v_hat = g^2 on step 1, so the update is ~ sign(g).
        let (p, m, v) = adam_step(t(&[1.0, 1.0]), &t(&[3.0, -0.5]), None, None, 1, &options(None, false)).unwrap();
        let p = p.to_vec::<f64>();
        assert!((p[0] - 0.99).abs() < 1e-9 && (p[1] - 1.01).abs() < 1e-9, "{p:?}");
        assert!((m.to_vec::<f64>()[0] - 0.3).abs() < 1e-12);
        assert!((v.to_vec::<f64>()[0] - 0.009).abs() < 1e-12);
    }

    #[test]
    fn adam_matches_the_formulas_over_steps() {
        check(options(None, false));
        check(options(Some(0.5), false));
    }

    #[test]
    fn cautious_decay_only_where_signs_agree() {
        // Step 1: m = 0.1 g. Weights 0.5 (g > 0: agree) and -0.5 (g > 0: differ).
        let o = AdamOptions { weight_decay: Some(0.5), decoupled: true, cautious: true, ..options(None, true) };
        let (p, _, _) = adam_step(t(&[0.5, -0.5]), &t(&[1.0, 1.0]), None, None, 1, &o).unwrap();
        let p = p.to_vec::<f64>();
        let step = 0.01 / (1.0 + 1e-8);
        assert!((p[0] - (0.5 - 0.01 * 0.5 * 0.5 - step)).abs() < 1e-12, "{p:?}");
        assert!((p[1] - (-0.5 - step)).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn adamw_decays_the_weights_directly() {
        check(options(Some(0.5), true));
        check(options(Some(0.0), true));
    }

    #[test]
    fn f32_matches_f64() {
        let o = options(Some(0.1), true);
        let p32 = Tensor::from_vec(vec![0.3f32, -0.7], &[2]).unwrap();
        let g32 = Tensor::from_vec(vec![0.5f32, 0.2], &[2]).unwrap();
        let (p, _, _) = adam_step(p32, &g32, None, None, 1, &o).unwrap();
        let (q, _, _) = adam_step(t(&[0.3, -0.7]), &t(&[0.5, 0.2]), None, None, 1, &o).unwrap();
        for (a, b) in p.to_vec::<f32>().iter().zip(q.to_vec::<f64>()) {
            assert!((*a as f64 - b).abs() < 1e-6);
        }
    }

    #[test]
    fn moments_never_go_subnormal() {
        // A weight whose gradient stays zero, one whose gradient is so small
        // that its square is subnormal, and one with an ordinary gradient:
        // as the moments decay step after step, each is either zero or at
        // least f32's smallest normal, and the ordinary weight follows the
        // formulas (in f64).
        let o = options(None, false);
        let f = |v: Vec<f32>| Tensor::from_vec(v, &[3]).unwrap();
        let grad = f(vec![0.0, 1e-20, 0.5]);
        let (mut p, mut m, mut v) = adam_step(f(vec![1.0, 1.0, 1.0]), &f(vec![1e-3, 1e-3, 0.5]), None, None, 1, &o).unwrap();
        for step in 2..=1200 {
            (p, m, v) = adam_step(p, &grad, Some(m), Some(v), step, &o).unwrap();
            for (name, state) in [("m", &m), ("v", &v)] {
                let values = state.to_vec::<f32>();
                assert!(values.iter().all(|x| *x == 0.0 || x.abs() >= f32::MIN_POSITIVE), "step {step}: {name} = {values:?}");
            }
        }
        // m of a zero gradient decays to zero; m of 1e-20 settles at 1e-20.
        let m = m.to_vec::<f32>();
        assert!(m[0] == 0.0 && (m[1] - 1e-20).abs() < 1e-23, "{m:?}");
        let want = reference(1.0, &[0.5; 1200], &o);
        let got = p.to_vec::<f32>()[2] as f64;
        assert!((got - want).abs() < 1e-3 * want.abs().max(1.0), "{got} vs {want}");
    }

    #[test]
    fn moments_are_rewritten_in_place_unless_shared() {
        let o = options(Some(0.5), false);
        let grads: [&[f64]; 4] = [&[0.5, 3.0], &[-1.0, 0.0], &[0.25, -2.0], &[2.0, 1.0]];
        let step = |time, p, g: &Tensor, [m, v]: [&mut Option<Tensor>; 2]| adam_update(p, g, m, v, time, &o);
        let (p, _) = in_place::check(step, &[0.3, -0.1], &grads);
        let p = p.to_vec::<f64>();
        for (k, p0) in [0.3, -0.1].into_iter().enumerate() {
            let expected = reference(p0, &grads.map(|g| g[k]), &o);
            assert!((p[k] - expected).abs() < 1e-12, "{} vs {expected}", p[k]);
        }
    }

    #[test]
    fn bad_state_is_an_error() {
        let o = options(None, false);
        assert!(adam_step(t(&[1.0]), &t(&[1.0]), Some(t(&[0.0])), None, 2, &o).is_err());
        assert!(adam_step(t(&[1.0]), &t(&[1.0]), Some(t(&[0.0, 1.0])), Some(t(&[0.0])), 2, &o).is_err());
        assert!(adam_step(t(&[1.0]), &t(&[1.0]), None, None, 0, &o).is_err());
    }

    #[test]
    fn a_bf16_parameter_steps_in_f32_with_f32_moments() {
        use crate::DType;
        let o = options(Some(0.1), true);
        let bf16 = |v: Vec<f32>| Tensor::from_vec(v, &[3]).unwrap().cast(DType::BF16).unwrap();
        let (p0, g) = (bf16(vec![0.3, -0.7, 1.5]), bf16(vec![0.5, 0.2, -3.0]));
        let (start, grad) = (p0.cast(DType::F64).unwrap().to_vec::<f64>(), g.cast(DType::F64).unwrap().to_vec::<f64>());
        let (mut m, mut v) = (None, None);
        let p = adam_update(p0, &g, &mut m, &mut v, 1, &o).unwrap();
        assert_eq!(p.dtype(), DType::BF16);
        assert_eq!((m.as_ref().unwrap().dtype(), v.as_ref().unwrap().dtype()), (DType::F32, DType::F32));
        let got = p.cast(DType::F64).unwrap().to_vec::<f64>();
        for k in 0..3 {
            // The f64 formula rounded to bf16 (none of these lies near a midpoint, where f32's
            // own rounding could tip it).
            let want = half::bf16::from_f64(reference(start[k], &[grad[k]], &o)).to_f64();
            assert_eq!(got[k], want, "weight {k}");
        }
        let m1 = m.unwrap().to_vec::<f32>();
        assert!((m1[2] as f64 - 0.1 * grad[2]).abs() < 1e-7, "{m1:?}");
    }

    #[test]
    fn a_failed_half_step_leaves_a_half_state_as_it_was() {
        use crate::DType;
        let bf16 = |v: Vec<f32>| Tensor::from_vec(v, &[2]).unwrap().cast(DType::BF16).unwrap();
        let (mut m, mut v) = (Some(bf16(vec![0.25, -0.5])), Some(bf16(vec![0.125, 1.0])));
        let bad = AdamOptions { lr: f64::NAN, ..options(None, false) };
        assert!(adam_update(bf16(vec![1.0, 2.0]), &bf16(vec![0.5, 0.5]), &mut m, &mut v, 2, &bad).is_err());
        let m = m.unwrap();
        assert_eq!((m.dtype(), m.cast(DType::F32).unwrap().to_vec::<f32>()), (DType::BF16, vec![0.25, -0.5]));
        // A gradient in another dtype than the parameter's is refused.
        let f32_grad = Tensor::from_vec(vec![0.5f32, 0.5], &[2]).unwrap();
        let err = adam_update(bf16(vec![1.0, 2.0]), &f32_grad, &mut None, &mut None, 1, &options(None, false)).unwrap_err();
        assert!(err.to_string().contains("the gradient has dtype f32, the parameter has dtype bf16"), "{err}");
    }
}
