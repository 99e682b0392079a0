//! Element-wise activations, each one `map_same` pass over the input.
//! Formulas avoid overflow and cancellation for large |x|, and use only
//! special functions that vectorise for f32 (`simd_exp`, `erfc_f32`,
//! `ln_1p_unit_f32`).

use crate::autodiff::{record_lazy, FnBackward, Var};
use crate::kernels::elementwise::zip_same;
use std::f64::consts::FRAC_1_SQRT_2;

use crate::element::{Element, FloatElement, FloatLanes};
use crate::error::Result;
use crate::kernels::elementwise::map_same;
use crate::kernels::erfc::erfc_f32;
use crate::kernels::log1p::ln_1p_unit_f32;
use crate::kernels::parallel::{PAR_CHEAP, PAR_COSTLY};
use crate::kernels::tanh::tanh;
use crate::ops::unary::sigmoid;
use crate::tensor::Tensor;
use crate::bail;

/// Run `$body` with `$S` bound to the element type of a Float `$dtype` and
/// `$T` to the type it computes in (f32 for f16 and bf16).
macro_rules! with_lanes {
    ($op:expr, $dtype:expr, $S:ident, $T:ident => $body:expr) => {
        $crate::with_float_lanes!($op, $dtype, $S => {
            type $T = <$S as FloatLanes>::Compute;
            $body
        })
    };
}

/// The special functions behind these activations: branch-free versions for
/// f32 so the loops vectorise, libm for f64.
trait ActivationFloat: FloatElement {
    fn erfc(self) -> Self;
    /// `ln(1 + u)` for `u` in [0, 1].
    fn ln_1p_unit(self) -> Self;
}

impl ActivationFloat for f32 {
    #[inline(always)]
    fn erfc(self) -> Self {
        erfc_f32(self)
    }
    #[inline(always)]
    fn ln_1p_unit(self) -> Self {
        ln_1p_unit_f32(self)
    }
}

impl ActivationFloat for f64 {
    #[inline(always)]
    fn erfc(self) -> Self {
        libm::erfc(self)
    }
    #[inline(always)]
    fn ln_1p_unit(self) -> Self {
        self.ln_1p()
    }
}

/// `log(1 + e^z)` without overflow: `max(z, 0) + log1p(e^-|z|)`.
#[inline(always)]
fn softplus_of<T: ActivationFloat>(z: T) -> T {
    let pos = if z > T::zero() { z } else { T::zero() };
    pos + (-z.abs()).simd_exp().ln_1p_unit()
}

/// `x * tanh(softplus(x))`. With `u = e^x`, `tanh(ln(1 + u)) = n / (n + 2)`
/// where `n = u (u + 2)`: one exp and no cancellation. Past x = 20 the ratio
/// is 1 to f64 precision, so mish(x) = x there, which also keeps `u^2` from
/// overflowing.
#[inline(always)]
fn mish_of<T: FloatElement>(x: T, twenty: T, two: T) -> T {
    let u = (if x > twenty { twenty } else { x }).simd_exp();
    let n = u * (u + two);
    if x > twenty { x } else { x * (n / (n + two)) }
}

impl Tensor {
    /// `max(x, 0)`; NaN stays NaN.
    pub fn relu(&self) -> Result<Tensor> {
        with_lanes!("relu", self.dtype(), S, T => {
            map_act::<S>("relu", self, PAR_CHEAP, |x: T| if x <= T::ZERO { T::ZERO } else { x })
        })
    }

    /// `x` for `x >= 0`, else `negative_slope * x`.
    pub fn leaky_relu(&self, negative_slope: f64) -> Result<Tensor> {
        with_lanes!("leaky_relu", self.dtype(), S, T => {
            let slope = T::from_f64(negative_slope);
            map_act::<S>("leaky_relu", self, PAR_CHEAP, move |x: T| if x < T::ZERO { x * slope } else { x })
        })
    }

    /// Exact GELU, `x * 0.5 * (1 + erf(x / sqrt 2))`, computed as
    /// `x * 0.5 * erfc(-x / sqrt 2)` so the negative tail keeps its digits.
    pub fn gelu(&self) -> Result<Tensor> {
        with_lanes!("gelu", self.dtype(), S, T => {
            let (half, k) = (T::from_f64(0.5), T::from_f64(FRAC_1_SQRT_2));
            map_act::<S>("gelu", self, PAR_COSTLY, #[inline(always)] move |x: T| x * half * ActivationFloat::erfc(-x * k))
        })
    }

    /// `clamp(alpha * x + beta, 0, 1)`; NaN stays NaN.
    pub fn hard_sigmoid(&self, alpha: f64, beta: f64) -> Result<Tensor> {
        with_lanes!("hard_sigmoid", self.dtype(), S, T => {
            let (a, b) = (T::from_f64(alpha), T::from_f64(beta));
            map_act::<S>("hard_sigmoid", self, PAR_CHEAP, move |x: T| clamp01(x * a + b))
        })
    }

    /// `log(sigmoid(x)) = min(x, 0) - log1p(e^-|x|)`, finite for any finite x.
    pub fn log_sigmoid(&self) -> Result<Tensor> {
        with_lanes!("log_sigmoid", self.dtype(), S, T => {
            map_act::<S>("log_sigmoid", self, PAR_COSTLY, |x: T| {
                let neg = if x < T::ZERO { x } else { T::ZERO };
                neg - (-x.abs()).simd_exp().ln_1p_unit()
            })
        })
    }

    /// `x * sigmoid(x)`.
    pub fn silu(&self) -> Result<Tensor> {
        with_lanes!("silu", self.dtype(), S, T => map_act::<S>("silu", self, PAR_COSTLY, |x: T| x * sigmoid(x)))
    }

    /// `x * clamp(x + 3, 0, 6) / 6`.
    pub fn hard_swish(&self) -> Result<Tensor> {
        with_lanes!("hard_swish", self.dtype(), S, T => {
            let (three, six) = (T::from_f64(3.0), T::from_f64(6.0));
            map_act::<S>("hard_swish", self, PAR_CHEAP, move |x: T| {
                let c = x + three;
                let c = if c < T::ZERO { T::ZERO } else if c > six { six } else { c };
                x * c / six
            })
        })
    }

    /// `x * tanh(softplus(x))`.
    pub fn mish(&self) -> Result<Tensor> {
        with_lanes!("mish", self.dtype(), S, T => {
            let (twenty, two) = (T::from_f64(20.0), T::from_f64(2.0));
            map_act::<S>("mish", self, PAR_COSTLY, move |x: T| mish_of(x, twenty, two))
        })
    }

    /// `log(1 + e^(beta x)) / beta`, without overflow for large `beta * x`.
    /// `beta` must be finite and non-zero.
    pub fn softplus(&self, beta: f64) -> Result<Tensor> {
        with_lanes!("softplus", self.dtype(), S, T => {
            if beta == 0.0 || !beta.is_finite() {
                bail!("softplus", "beta must be finite and non-zero, found {beta}");
            }
            let b = T::from_f64(beta);
            if beta == 1.0 {
                map_act::<S>("softplus", self, PAR_COSTLY, softplus_of::<T>)
            } else {
                map_act::<S>("softplus", self, PAR_COSTLY, move |x: T| softplus_of(b * x) / b)
            }
        })
    }
}

#[inline(always)]
fn clamp01<T: FloatElement>(v: T) -> T {
    if v < T::zero() {
        T::zero()
    } else if v > T::one() {
        T::one()
    } else {
        v
    }
}

/// The derivative of an element-wise activation as one fused pass over
/// (grad, input).
///
/// A half-float pass (f16, bf16) reads both in place and computes in f32,
/// rounding each result once: the cast nodes it otherwise ran through cost
/// three more passes each way. A gradient of another dtype than the input
/// is brought to the input's first.
fn pointwise_grad<S: FloatLanes>(name: &'static str, g: Tensor, x: &Tensor, f: impl Fn(S::Compute, S::Compute) -> S::Compute + Sync) -> Result<Tensor> {
    let g = if g.dtype() == x.dtype() { g } else { g.cast(x.dtype())? };
    zip_same(name, g, x.clone(), PAR_COSTLY, #[inline(always)] move |g: S, x: S| S::narrow(f(g.widen(), x.widen())))
}

/// `f` on every element of `x`, computed in its compute type (f32 for f16
/// and bf16, which round each result once).
fn map_act<S: FloatLanes>(name: &'static str, x: &Tensor, gate: usize, f: impl Fn(S::Compute) -> S::Compute + Sync) -> Result<Tensor> {
    map_same(name, x.clone(), gate, #[inline(always)] move |s: S| S::narrow(f(s.widen())))
}

impl Var {
    /// An activation whose derivative reads its input; memory-bound, so
    /// `forward` recomputes it under balanced checkpointing.
    fn pointwise(
        &self,
        name: &'static str,
        y: Tensor,
        forward: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
        grad: impl Fn(Tensor, &Tensor) -> Result<Tensor> + Send + Sync + 'static,
    ) -> Var {
        record_lazy(
            y,
            &[self],
            move |v| forward(&v[0]),
            |_| {
                let x = self.saved();
                FnBackward::new(name, move |g, _| Ok(vec![Some(grad(g, &x.get()?)?)]))
            },
        )
    }

    pub fn relu(&self) -> Result<Var> {
        let y = self.value.relu()?;
        Ok(self.pointwise("relu", y, move |x| x.relu(), |g, x| {
            with_lanes!("relu", x.dtype(), S, T => pointwise_grad::<S>("relu", g, x, |g: T, x: T| if x > T::ZERO { g } else { T::ZERO }))
        }))
    }

    pub fn leaky_relu(&self, negative_slope: f64) -> Result<Var> {
        let y = self.value.leaky_relu(negative_slope)?;
        Ok(self.pointwise("leaky_relu", y, move |x| x.leaky_relu(negative_slope), move |g, x| {
            with_lanes!("leaky_relu", x.dtype(), S, T => {
                let s = T::from_f64(negative_slope);
                pointwise_grad::<S>("leaky_relu", g, x, move |g: T, x: T| if x > T::ZERO { g } else { g * s })
            })
        }))
    }

    /// d/dx x Φ(x) = Φ(x) + x φ(x).
    pub fn gelu(&self) -> Result<Var> {
        let y = self.value.gelu()?;
        Ok(self.pointwise("gelu", y, move |x| x.gelu(), |g, x| {
            with_lanes!("gelu", x.dtype(), S, T => {
                let (half, r2, rpi) = (T::from_f64(0.5), T::from_f64(FRAC_1_SQRT_2), T::from_f64(0.5 * std::f64::consts::FRAC_2_SQRT_PI * FRAC_1_SQRT_2));
                // The forward's erfc and the vectorising exp (libm's erf and
                // exp are scalar calls), inlined into the SIMD loop: out of
                // line, the closure ran one element per call.
                pointwise_grad::<S>(
                    "gelu",
                    g,
                    x,
                    #[inline(always)]
                    move |g: T, x: T| {
                        let cdf = half * ActivationFloat::erfc(-x * r2);
                        let pdf = rpi * (-(x * x) * half).simd_exp();
                        g * (cdf + x * pdf)
                    },
                )
            })
        }))
    }

    pub fn hard_sigmoid(&self, alpha: f64, beta: f64) -> Result<Var> {
        let y = self.value.hard_sigmoid(alpha, beta)?;
        Ok(self.pointwise("hard_sigmoid", y, move |x| x.hard_sigmoid(alpha, beta), move |g, x| {
            with_lanes!("hard_sigmoid", x.dtype(), S, T => {
                let (a, b) = (T::from_f64(alpha), T::from_f64(beta));
                pointwise_grad::<S>("hard_sigmoid", g, x, move |g: T, x: T| {
                    let z = a * x + b;
                    if z > T::ZERO && z < T::ONE { g * a } else { T::ZERO }
                })
            })
        }))
    }

    /// d/dx log σ(x) = 1 - σ(x).
    pub fn log_sigmoid(&self) -> Result<Var> {
        let y = self.value.log_sigmoid()?;
        Ok(self.pointwise("log_sigmoid", y, move |x| x.log_sigmoid(), |g, x| {
            with_lanes!("log_sigmoid", x.dtype(), S, T => pointwise_grad::<S>("log_sigmoid", g, x, |g: T, x: T| g * sigmoid(-x)))
        }))
    }

    /// d/dx x σ(x) = σ(x) (1 + x (1 - σ(x))).
    pub fn silu(&self) -> Result<Var> {
        let y = self.value.silu()?;
        Ok(self.pointwise("silu", y, move |x| x.silu(), |g, x| {
            with_lanes!("silu", x.dtype(), S, T => pointwise_grad::<S>("silu", g, x, |g: T, x: T| {
                let s = sigmoid(x);
                g * s * (T::ONE + x * (T::ONE - s))
            }))
        }))
    }

    pub fn hard_swish(&self) -> Result<Var> {
        let y = self.value.hard_swish()?;
        Ok(self.pointwise("hard_swish", y, move |x| x.hard_swish(), |g, x| {
            with_lanes!("hard_swish", x.dtype(), S, T => {
                let (three, six) = (T::from_f64(3.0), T::from_f64(6.0));
                pointwise_grad::<S>("hard_swish", g, x, move |g: T, x: T| {
                    if x <= -three { T::ZERO } else if x >= three { g } else { g * (x + x + three) / six }
                })
            })
        }))
    }

    /// d/dx x tanh(sp(x)) = tanh(sp(x)) + x sech²(sp(x)) σ(x).
    pub fn mish(&self) -> Result<Var> {
        let y = self.value.mish()?;
        Ok(self.pointwise("mish", y, move |x| x.mish(), |g, x| {
            with_lanes!("mish", x.dtype(), S, T => pointwise_grad::<S>("mish", g, x, |g: T, x: T| {
                let t = tanh(softplus_of(x));
                g * (t + x * (T::ONE - t * t) * sigmoid(x))
            }))
        }))
    }

    /// d/dx softplus(x; β) = σ(βx).
    pub fn softplus(&self, beta: f64) -> Result<Var> {
        let y = self.value.softplus(beta)?;
        Ok(self.pointwise("softplus", y, move |x| x.softplus(beta), move |g, x| {
            with_lanes!("softplus", x.dtype(), S, T => {
                let b = T::from_f64(beta);
                pointwise_grad::<S>("softplus", g, x, move |g: T, x: T| g * sigmoid(b * x))
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    type Op = fn(&Tensor) -> Result<Tensor>;
    type Case = (&'static str, Op, fn(f64) -> f64);

    /// Each activation with a straightforward f64 reference. References
    /// split by sign only where the textbook formula would overflow f64, and
    /// GELU's uses erfc since 1 + erf(x) cancels to 0 below x = -8 in f64.
    fn cases() -> Vec<Case> {
        fn sig(x: f64) -> f64 {
            if x >= 0.0 { 1.0 / (1.0 + (-x).exp()) } else { x.exp() / (1.0 + x.exp()) }
        }
        fn softplus(x: f64) -> f64 {
            if x > 30.0 { x + (-x).exp() } else { x.exp().ln_1p() }
        }
        vec![
            ("relu", |t| t.relu(), |x| if x > 0.0 { x } else { 0.0 }),
            ("leaky_relu", |t| t.leaky_relu(0.01), |x| if x >= 0.0 { x } else { 0.01 * x }),
            ("gelu", |t| t.gelu(), |x| x * 0.5 * libm::erfc(-x / 2f64.sqrt())),
            ("hard_sigmoid", |t| t.hard_sigmoid(0.2, 0.5), |x| (0.2 * x + 0.5).clamp(0.0, 1.0)),
            ("log_sigmoid", |t| t.log_sigmoid(), |x| -softplus(-x)),
            ("silu", |t| t.silu(), |x| x * sig(x)),
            ("hard_swish", |t| t.hard_swish(), |x| x * (x + 3.0).clamp(0.0, 6.0) / 6.0),
            ("mish", |t| t.mish(), |x| x * softplus(x).tanh()),
            ("softplus", |t| t.softplus(1.0), softplus),
            ("softplus_beta2", |t| t.softplus(2.0), |x| softplus(2.0 * x) / 2.0),
            ("softplus_beta_neg", |t| t.softplus(-0.5), |x| softplus(-0.5 * x) / -0.5),
        ]
    }

    fn inputs() -> Vec<f64> {
        let mut v = vec![-1e4, -100.0, -30.0, -20.0, -5.0, -3.0, -1e-3, -0.0, 0.0, 1e-3, 3.0, 5.0, 20.0, 30.0, 100.0, 1e4];
        v.extend((0..=400).map(|i| -10.0 + i as f64 * 0.05));
        v
    }

    fn assert_close(name: &str, dtype: DType, x: f64, got: f64, want: f64) {
        let (rtol, atol) = match dtype {
            // In GELU's tail erfc(y) shifts by 2y^2 times the relative rounding
            // of y = x / sqrt 2, ~1e-5 of the result at x = -12 in f32.
            DType::F32 if name == "gelu" => (2e-5, 1e-37),
            DType::F32 => (2e-6, 1e-37),
            _ => (1e-12, 1e-15),
        };
        assert!((got - want).abs() <= rtol * want.abs() + atol, "{name} {dtype}: f({x}) = {got:e}, expected {want:e}");
    }

    #[test]
    fn match_f64_references() {
        let xs = inputs();
        for (name, op, reference) in cases() {
            for dtype in [DType::F32, DType::F64] {
                let t = Tensor::from_vec(xs.clone(), &[xs.len()]).unwrap().cast(dtype).unwrap();
                let got = op(&t).unwrap().cast(DType::F64).unwrap().to_vec::<f64>();
                // Compare against the input as rounded to the dtype.
                for (&x, &g) in t.cast(DType::F64).unwrap().to_vec::<f64>().iter().zip(&got) {
                    assert_close(name, dtype, x, g, reference(x));
                }
            }
        }
    }

    /// Each activation on `Var`s, for the half-float gradients.
    type VarOp = fn(&Var) -> Result<Var>;
    fn var_ops() -> Vec<(&'static str, VarOp)> {
        vec![
            ("relu", |v| v.relu()),
            ("leaky_relu", |v| v.leaky_relu(0.01)),
            ("gelu", |v| v.gelu()),
            ("hard_sigmoid", |v| v.hard_sigmoid(0.2, 0.5)),
            ("log_sigmoid", |v| v.log_sigmoid()),
            ("silu", |v| v.silu()),
            ("hard_swish", |v| v.hard_swish()),
            ("mish", |v| v.mish()),
            ("softplus", |v| v.softplus(1.0)),
            ("softplus_beta2", |v| v.softplus(2.0)),
            ("softplus_beta_neg", |v| v.softplus(-0.5)),
        ]
    }

    /// Inputs exact in bf16 (and so in f16), away from the kinks of relu,
    /// hard_sigmoid and hard_swish where a central difference is no derivative.
    fn half_inputs() -> Vec<f64> {
        (0..160)
            .map(|i| half::bf16::from_f64(-9.0 + i as f64 * 0.1137).to_f64())
            .filter(|x| [0.0f64, -2.5, 2.5, -3.0, 3.0].iter().all(|k| (x - k).abs() > 0.02))
            .collect()
    }

    #[test]
    fn half_floats_run_in_their_own_dtype_within_their_precision() {
        // bf16 and f16 read and write their dtype (no cast in the graph) and
        // compute in f32: each value is the f64 reference within half an ulp of
        // the dtype (plus f32's own error, and f16's subnormal spacing), each gradient of sum(c * f(x)) is
        // c * f'(x), f' by central differences of the f64 reference.
        let xs = half_inputs();
        let refs: Vec<Case> = cases();
        for dtype in [DType::BF16, DType::F16] {
            // Half an ulp, relative: at most 2^-8 in bf16, 2^-11 in f16.
            let ulp = if dtype == DType::BF16 { 2f64.powi(-8) } else { 2f64.powi(-11) };
            let x = Tensor::from_vec(xs.clone(), &[xs.len()]).unwrap().cast(dtype).unwrap();
            let cs: Vec<f64> = (0..xs.len()).map(|i| half::bf16::from_f64(0.5 + (i as f64 * 0.37).sin()).to_f64()).collect();
            let c = Tensor::from_vec(cs.clone(), &[xs.len()]).unwrap().cast(dtype).unwrap();
            for ((name, op), (rname, _, reference)) in var_ops().into_iter().zip(&refs) {
                assert_eq!(name, *rname);
                let v = Var::leaf(x.clone());
                let y = op(&v).unwrap();
                assert_eq!(y.value.dtype(), dtype, "{name}");
                for (i, got) in y.value.cast(DType::F64).unwrap().to_vec::<f64>().into_iter().enumerate() {
                    let want = reference(xs[i]);
                    let tol = ulp * want.abs() * (1.0 + 1e-3) + if dtype == DType::F16 { 6e-8 } else { 1e-30 };
                    assert!((got - want).abs() <= tol, "{name} {dtype}: f({}) = {got}, expected {want}", xs[i]);
                }
                let loss = y.binary(crate::ops::binary::BinaryOp::Mul, &Var::constant(c.clone())).unwrap().sum().unwrap();
                let grads = crate::autodiff::backward(&loss).unwrap();
                let gx = grads.get(v.id().unwrap()).unwrap();
                assert_eq!(gx.dtype(), dtype, "{name}");
                for (i, got) in gx.cast(DType::F64).unwrap().to_vec::<f64>().into_iter().enumerate() {
                    let h = 1e-5;
                    let want = cs[i] * (reference(xs[i] + h) - reference(xs[i] - h)) / (2.0 * h);
                    // Half an ulp of rounding, and the f32 derivative's own error.
                    let tol = ulp * want.abs() * (1.0 + 1e-2) + 1e-5 * cs[i].abs();
                    assert!((got - want).abs() <= tol, "{name} {dtype}: f'({}) * {} = {got}, expected {want}", xs[i], cs[i]);
                }
            }
        }
    }

    #[test]
    fn nan_propagates() {
        for (name, op, _) in cases() {
            for dtype in [DType::F32, DType::F64] {
                let t = Tensor::from_vec(vec![f64::NAN, 1.0], &[2]).unwrap().cast(dtype).unwrap();
                let y = op(&t).unwrap().cast(DType::F64).unwrap().to_vec::<f64>();
                assert!(y[0].is_nan() && !y[1].is_nan(), "{name} {dtype}: {y:?}");
            }
        }
    }

    #[test]
    fn transposed_view_matches_its_values() {
        let v: Vec<f32> = (0..12).map(|i| i as f32 * 0.7 - 4.0).collect();
        let t = Tensor::from_vec(v, &[3, 4]).unwrap().transpose();
        for (name, op, reference) in cases() {
            let y = op(&t).unwrap();
            assert_eq!(y.shape(), &[4, 3], "{name}");
            for (&x, &g) in t.to_vec::<f32>().iter().zip(&y.to_vec::<f32>()) {
                assert_close(name, DType::F32, x as f64, g as f64, reference(x as f64));
            }
        }
    }

    #[test]
    fn relu_of_negative_zero_is_zero() {
        let t = Tensor::from_vec(vec![-0.0f32], &[1]).unwrap();
        assert!(t.relu().unwrap().to_vec::<f32>()[0].is_sign_positive());
    }

    #[test]
    fn gelu_keeps_the_negative_tail() {
        // 1 + erf(x / sqrt 2) would cancel to a few significant bits in f32.
        let t = Tensor::from_vec(vec![-5.0f32, -8.0], &[2]).unwrap();
        let y = t.gelu().unwrap().to_vec::<f32>();
        assert!((y[0] as f64 / -1.433_257_859_4e-6 - 1.0).abs() < 1e-6, "{}", y[0]);
        assert!((y[1] as f64 / -4.976_768_459_4e-15 - 1.0).abs() < 1e-5, "{}", y[1]);
    }

    #[test]
    fn empty_tensors_keep_their_shape() {
        let t = Tensor::zeros(&[0, 3], DType::F32);
        for (name, op, _) in cases() {
            assert_eq!(op(&t).unwrap().shape(), &[0, 3], "{name}");
        }
    }

    #[test]
    fn non_float_is_a_kind_error() {
        let i = Tensor::from_vec(vec![1i64], &[1]).unwrap();
        assert_eq!(i.relu().unwrap_err().to_string(), "relu: expected a Float tensor, found Int");
        let b = Tensor::from_vec(vec![true], &[1]).unwrap();
        assert_eq!(b.mish().unwrap_err().to_string(), "mish: expected a Float tensor, found Bool");
        for (name, op, _) in cases() {
            assert!(op(&i).unwrap_err().to_string().contains("expected a Float tensor, found Int"), "{name}");
        }
    }

    #[test]
    fn softplus_rejects_a_degenerate_beta() {
        let t = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
        assert_eq!(t.softplus(0.0).unwrap_err().to_string(), "softplus: beta must be finite and non-zero, found 0");
        assert!(t.softplus(f64::INFINITY).is_err());
        assert!(t.softplus(f64::NAN).is_err());
    }
}
