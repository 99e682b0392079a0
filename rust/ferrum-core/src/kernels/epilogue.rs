//! What a fused kernel does to each output value once it is complete, while
//! the value is still in cache: the layers that follow a convolution in an
//! inference network (bias, BatchNorm's scale and shift, a residual add, a
//! relu or another activation), which would otherwise each read and write
//! the whole output again.

use super::exp::exp_f32;
use super::parallel::simd;

/// An activation applied last, after the relu (which stays a flag of its
/// own: the GEMM tiles specialise on it). MobileNetV3 follows most of its
/// convolutions with a hard swish, EfficientNet with a SiLU, and their
/// squeeze-excitation gates end in a (hard) sigmoid: as separate passes they
/// read and wrote every activation once more.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Activation {
    #[default]
    None,
    /// `min(max(v, low), high)`; NaN stays NaN.
    Clip { low: f32, high: f32 },
    /// `clamp(alpha * v + beta, 0, 1)`; NaN stays NaN.
    HardSigmoid { alpha: f32, beta: f32 },
    /// `v * clamp(v + 3, 0, 6) / 6`.
    HardSwish,
    /// `1 / (1 + e^-v)`.
    Sigmoid,
    /// `v * sigmoid(v)`.
    Silu,
}

/// `1 / (1 + e^-v)` from `e^-|v|`, which never overflows (as the element-wise sigmoid).
#[inline(always)]
fn sigmoid(v: f32) -> f32 {
    let e = exp_f32(-v.abs());
    let s = 1.0 / (1.0 + e);
    if v >= 0.0 {
        s
    } else {
        e * s
    }
}

/// `v` clamped to `low..=high`, NaN kept (comparisons with NaN are false).
#[inline(always)]
fn clamp(v: f32, low: f32, high: f32) -> f32 {
    if v < low {
        low
    } else if v > high {
        high
    } else {
        v
    }
}

impl Activation {
    /// Whether it leaves values as they are.
    pub fn is_none(self) -> bool {
        self == Activation::None
    }

    /// The activation of one value.
    #[inline(always)]
    pub fn apply(self, v: f32) -> f32 {
        match self {
            Activation::None => v,
            Activation::Clip { low, high } => clamp(v, low, high),
            Activation::HardSigmoid { alpha, beta } => clamp(v * alpha + beta, 0.0, 1.0),
            Activation::HardSwish => v * clamp(v + 3.0, 0.0, 6.0) / 6.0,
            Activation::Sigmoid => sigmoid(v),
            Activation::Silu => v * sigmoid(v),
        }
    }

    /// The activation of every value of `values`, in place: one loop per
    /// activation, so that each vectorises.
    pub fn apply_slice(self, values: &mut [f32]) {
        // `apply` on a constant variant: the match folds away inside each loop.
        macro_rules! each {
            ($act:expr) => {
                simd(
                    #[inline(always)]
                    || values.iter_mut().for_each(|v| *v = $act.apply(*v)),
                )
            };
        }
        match self {
            Activation::None => {}
            Activation::Clip { low, high } => each!(Activation::Clip { low, high }),
            Activation::HardSigmoid { alpha, beta } => each!(Activation::HardSigmoid { alpha, beta }),
            Activation::HardSwish => each!(Activation::HardSwish),
            Activation::Sigmoid => each!(Activation::Sigmoid),
            Activation::Silu => each!(Activation::Silu),
        }
    }
}

/// What happens to each output value once its sum is complete, while its
/// tile is still in L1: `v * scale[c] + shift[c] + residual`, then `max(v,
/// 0)` when `relu`, then `act` (a bias is a shift without a scale; an
/// inference BatchNorm a scale and a shift; a residual block's skip
/// connection the residual, shaped as the output).
#[derive(Clone, Copy, Default)]
pub struct Epilogue<'a> {
    pub scale: Option<&'a [f32]>,
    pub shift: Option<&'a [f32]>,
    pub residual: Option<&'a [f32]>,
    pub relu: bool,
    pub act: Activation,
}

impl Epilogue<'_> {
    /// Whether it leaves the sums as they are.
    pub fn is_identity(&self) -> bool {
        self.scale.is_none() && self.shift.is_none() && self.residual.is_none() && !self.relu && self.act.is_none()
    }

    /// Apply it to `v`, a value of output channel `c`; `r` is the residual's.
    #[inline(always)]
    pub fn apply(&self, v: f32, c: usize, r: f32) -> f32 {
        let v = self.scale.map_or(v, |s| v * s[c]);
        let v = self.shift.map_or(v, |s| v + s[c]) + r;
        // As the element-wise relu: NaN stays NaN.
        let v = if self.relu && v <= 0.0 { 0.0 } else { v };
        self.act.apply(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each activation against its formula in f64 (the definitions ONNX gives), over a sweep that
    /// crosses every kink and both tails.
    #[test]
    fn activations_match_their_definitions() {
        let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
        let cases: [(Activation, &dyn Fn(f64) -> f64); 5] = [
            (Activation::Clip { low: -1.5, high: 6.0 }, &|v| v.clamp(-1.5, 6.0)),
            (Activation::HardSigmoid { alpha: 0.2, beta: 0.5 }, &|v| (0.2 * v + 0.5).clamp(0.0, 1.0)),
            (Activation::HardSwish, &|v| v * (v + 3.0).clamp(0.0, 6.0) / 6.0),
            (Activation::Sigmoid, &sig),
            (Activation::Silu, &|v| v * sig(v)),
        ];
        let xs: Vec<f32> = (0..4001).map(|i| (i as f32 - 2000.0) * 0.01).chain([-90.0, 90.0, -1e30, 1e30]).collect();
        for (act, f) in cases {
            let mut ys = xs.clone();
            act.apply_slice(&mut ys);
            for (&x, &y) in xs.iter().zip(&ys) {
                let want = f(x as f64);
                assert!((y as f64 - want).abs() <= 1e-6 * want.abs().max(1.0), "{act:?}({x}) = {y}, expected {want}");
                assert_eq!(y.to_bits(), act.apply(x).to_bits(), "{act:?}({x}): slice and scalar differ");
            }
            let mut nan = [f32::NAN; 3];
            act.apply_slice(&mut nan);
            assert!(nan.iter().all(|v| v.is_nan()), "{act:?} of NaN: {nan:?}");
        }
        let mut none = xs.clone();
        Activation::None.apply_slice(&mut none);
        assert_eq!(none, xs);
    }
}
