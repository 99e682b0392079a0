//! Element-wise activations, each one `map_same` pass over the input.
//! Formulas avoid overflow and cancellation for large |x|, and use only
//! special functions that vectorise for f32 (`simd_exp`, `erfc_f32`,
//! `ln_1p_unit_f32`).

use crate::autodiff::{record_lazy, FnBackward, Var};
use crate::kernels::elementwise::zip_same;
use std::f64::consts::FRAC_1_SQRT_2;

use crate::element::{Element, FloatElement};
use crate::error::Result;
use crate::kernels::elementwise::map_same;
use crate::kernels::erfc::erfc_f32;
use crate::kernels::log1p::ln_1p_unit_f32;
use crate::kernels::parallel::{PAR_CHEAP, PAR_COSTLY};
use crate::kernels::tanh::tanh;
use crate::ops::unary::sigmoid;
use crate::tensor::Tensor;
use crate::{bail, with_float};

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
        with_float!("relu", self.dtype(), T => {
            map_same("relu", self.clone(), PAR_CHEAP, |x: T| if x <= T::ZERO { T::ZERO } else { x })
        })
    }

    /// `x` for `x >= 0`, else `negative_slope * x`.
    pub fn leaky_relu(&self, negative_slope: f64) -> Result<Tensor> {
        with_float!("leaky_relu", self.dtype(), T => {
            let slope = T::from_f64(negative_slope);
            map_same("leaky_relu", self.clone(), PAR_CHEAP, move |x: T| if x < T::ZERO { x * slope } else { x })
        })
    }

    /// Exact GELU, `x * 0.5 * (1 + erf(x / sqrt 2))`, computed as
    /// `x * 0.5 * erfc(-x / sqrt 2)` so the negative tail keeps its digits.
    pub fn gelu(&self) -> Result<Tensor> {
        with_float!("gelu", self.dtype(), T => {
            let (half, k) = (T::from_f64(0.5), T::from_f64(FRAC_1_SQRT_2));
            map_same("gelu", self.clone(), PAR_COSTLY, #[inline(always)] move |x: T| x * half * ActivationFloat::erfc(-x * k))
        })
    }

    /// `clamp(alpha * x + beta, 0, 1)`; NaN stays NaN.
    pub fn hard_sigmoid(&self, alpha: f64, beta: f64) -> Result<Tensor> {
        with_float!("hard_sigmoid", self.dtype(), T => {
            let (a, b) = (T::from_f64(alpha), T::from_f64(beta));
            map_same("hard_sigmoid", self.clone(), PAR_CHEAP, move |x: T| clamp01(x * a + b))
        })
    }

    /// `log(sigmoid(x)) = min(x, 0) - log1p(e^-|x|)`, finite for any finite x.
    pub fn log_sigmoid(&self) -> Result<Tensor> {
        with_float!("log_sigmoid", self.dtype(), T => {
            map_same("log_sigmoid", self.clone(), PAR_COSTLY, |x: T| {
                let neg = if x < T::ZERO { x } else { T::ZERO };
                neg - (-x.abs()).simd_exp().ln_1p_unit()
            })
        })
    }

    /// `x * sigmoid(x)`.
    pub fn silu(&self) -> Result<Tensor> {
        with_float!("silu", self.dtype(), T => map_same("silu", self.clone(), PAR_COSTLY, |x: T| x * sigmoid(x)))
    }

    /// `x * clamp(x + 3, 0, 6) / 6`.
    pub fn hard_swish(&self) -> Result<Tensor> {
        with_float!("hard_swish", self.dtype(), T => {
            let (three, six) = (T::from_f64(3.0), T::from_f64(6.0));
            map_same("hard_swish", self.clone(), PAR_CHEAP, move |x: T| {
                let c = x + three;
                let c = if c < T::ZERO { T::ZERO } else if c > six { six } else { c };
                x * c / six
            })
        })
    }

    /// `x * tanh(softplus(x))`.
    pub fn mish(&self) -> Result<Tensor> {
        with_float!("mish", self.dtype(), T => {
            let (twenty, two) = (T::from_f64(20.0), T::from_f64(2.0));
            map_same("mish", self.clone(), PAR_COSTLY, move |x: T| mish_of(x, twenty, two))
        })
    }

    /// `log(1 + e^(beta x)) / beta`, without overflow for large `beta * x`.
    /// `beta` must be finite and non-zero.
    pub fn softplus(&self, beta: f64) -> Result<Tensor> {
        with_float!("softplus", self.dtype(), T => {
            if beta == 0.0 || !beta.is_finite() {
                bail!("softplus", "beta must be finite and non-zero, found {beta}");
            }
            let b = T::from_f64(beta);
            if beta == 1.0 {
                map_same("softplus", self.clone(), PAR_COSTLY, softplus_of::<T>)
            } else {
                map_same("softplus", self.clone(), PAR_COSTLY, move |x: T| softplus_of(b * x) / b)
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
fn pointwise_grad<T: ActivationFloat>(name: &'static str, g: Tensor, x: &Tensor, f: impl Fn(T, T) -> T + Sync) -> Result<Tensor> {
    zip_same(name, g, x.clone(), PAR_COSTLY, f)
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
            with_float!("relu", g.dtype(), T => pointwise_grad("relu", g, x, |g: T, x: T| if x > T::ZERO { g } else { T::ZERO }))
        }))
    }

    pub fn leaky_relu(&self, negative_slope: f64) -> Result<Var> {
        let y = self.value.leaky_relu(negative_slope)?;
        Ok(self.pointwise("leaky_relu", y, move |x| x.leaky_relu(negative_slope), move |g, x| {
            with_float!("leaky_relu", g.dtype(), T => {
                let s = T::from_f64(negative_slope);
                pointwise_grad("leaky_relu", g, x, move |g: T, x: T| if x > T::ZERO { g } else { g * s })
            })
        }))
    }

    /// d/dx x Φ(x) = Φ(x) + x φ(x).
    pub fn gelu(&self) -> Result<Var> {
        let y = self.value.gelu()?;
        Ok(self.pointwise("gelu", y, move |x| x.gelu(), |g, x| {
            with_float!("gelu", g.dtype(), T => {
                let (half, r2, rpi) = (T::from_f64(0.5), T::from_f64(FRAC_1_SQRT_2), T::from_f64(0.5 * std::f64::consts::FRAC_2_SQRT_PI * FRAC_1_SQRT_2));
                // The forward's erfc and the vectorising exp (libm's erf and
                // exp are scalar calls), inlined into the SIMD loop: out of
                // line, the closure ran one element per call.
                pointwise_grad(
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
            with_float!("hard_sigmoid", g.dtype(), T => {
                let (a, b) = (T::from_f64(alpha), T::from_f64(beta));
                pointwise_grad("hard_sigmoid", g, x, move |g: T, x: T| {
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
            with_float!("log_sigmoid", g.dtype(), T => pointwise_grad("log_sigmoid", g, x, |g: T, x: T| g * sigmoid(-x)))
        }))
    }

    /// d/dx x σ(x) = σ(x) (1 + x (1 - σ(x))).
    pub fn silu(&self) -> Result<Var> {
        let y = self.value.silu()?;
        Ok(self.pointwise("silu", y, move |x| x.silu(), |g, x| {
            with_float!("silu", g.dtype(), T => pointwise_grad("silu", g, x, |g: T, x: T| {
                let s = sigmoid(x);
                g * s * (T::ONE + x * (T::ONE - s))
            }))
        }))
    }

    pub fn hard_swish(&self) -> Result<Var> {
        let y = self.value.hard_swish()?;
        Ok(self.pointwise("hard_swish", y, move |x| x.hard_swish(), |g, x| {
            with_float!("hard_swish", g.dtype(), T => {
                let (three, six) = (T::from_f64(3.0), T::from_f64(6.0));
                pointwise_grad("hard_swish", g, x, move |g: T, x: T| {
                    if x <= -three { T::ZERO } else if x >= three { g } else { g * (x + x + three) / six }
                })
            })
        }))
    }

    /// d/dx x tanh(sp(x)) = tanh(sp(x)) + x sech²(sp(x)) σ(x).
    pub fn mish(&self) -> Result<Var> {
        let y = self.value.mish()?;
        Ok(self.pointwise("mish", y, move |x| x.mish(), |g, x| {
            with_float!("mish", g.dtype(), T => pointwise_grad("mish", g, x, |g: T, x: T| {
                let t = tanh(softplus_of(x));
                g * (t + x * (T::ONE - t * t) * sigmoid(x))
            }))
        }))
    }

    /// d/dx softplus(x; β) = σ(βx).
    pub fn softplus(&self, beta: f64) -> Result<Var> {
        let y = self.value.softplus(beta)?;
        Ok(self.pointwise("softplus", y, move |x| x.softplus(beta), move |g, x| {
            with_float!("softplus", g.dtype(), T => {
                let b = T::from_f64(beta);
                pointwise_grad("softplus", g, x, move |g: T, x: T| g * sigmoid(b * x))
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
