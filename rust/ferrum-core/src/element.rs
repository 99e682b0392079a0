//! The Rust types a tensor buffer holds: `Element` ties each to its dtype
//! and its `Storage` variant; `NumElement`, `FloatElement` and `FloatLanes`
//! are what the arithmetic, float and element-wise kernels ask of it. Apart
//! from `dtype.rs` so that dtypes (which errors name) stand below buffers and
//! storage, and elements above them.

use std::fmt;
use std::sync::Arc;

use crate::buffer::Buffer;
use crate::dtype::{DType, Scalar};
use crate::storage::Storage;

/// A Rust type that can live in a tensor buffer.
pub trait Element: Copy + Send + Sync + PartialEq + PartialOrd + fmt::Debug + 'static {
    const DTYPE: DType;
    const ZERO: Self;
    const ONE: Self;
    fn wrap(buf: Arc<Buffer<Self>>) -> Storage;
    fn unwrap(storage: &Storage) -> Option<&Arc<Buffer<Self>>>;
    fn unwrap_mut(storage: &mut Storage) -> Option<&mut Arc<Buffer<Self>>>;
    /// A new buffer holding `values` (no copy).
    fn wrap_vec(values: Vec<Self>) -> Storage {
        Self::wrap(Arc::new(Buffer::from(values)))
    }
    fn from_scalar(s: Scalar) -> Self;
    fn to_scalar(self) -> Scalar;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

macro_rules! element {
    ($t:ty, $dt:ident, $zero:expr, $one:expr, $from:expr, $to:expr, $tof:expr, $fromf:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            fn wrap(buf: Arc<Buffer<Self>>) -> Storage {
                Storage::$dt(buf)
            }
            fn unwrap(storage: &Storage) -> Option<&Arc<Buffer<Self>>> {
                match storage {
                    Storage::$dt(b) => Some(b),
                    _ => None,
                }
            }
            fn unwrap_mut(storage: &mut Storage) -> Option<&mut Arc<Buffer<Self>>> {
                match storage {
                    Storage::$dt(b) => Some(b),
                    _ => None,
                }
            }
            fn from_scalar(s: Scalar) -> Self {
                ($from)(s)
            }
            fn to_scalar(self) -> Scalar {
                ($to)(self)
            }
            fn to_f64(self) -> f64 {
                ($tof)(self)
            }
            fn from_f64(v: f64) -> Self {
                ($fromf)(v)
            }
        }
    };
}

element!(f32, F32, 0.0, 1.0, |s: Scalar| s.to_f64() as f32, |v: f32| Scalar::Float(v as f64), |v: f32| v as f64, |v: f64| v as f32);
element!(f64, F64, 0.0, 1.0, |s: Scalar| s.to_f64(), Scalar::Float, |v: f64| v, |v: f64| v);
element!(i64, I64, 0, 1, |s: Scalar| s.to_i64(), Scalar::Int, |v: i64| v as f64, |v: f64| v as i64);
element!(half::f16, F16, half::f16::ZERO, half::f16::ONE, |s: Scalar| half::f16::from_f64(s.to_f64()), |v: half::f16| Scalar::Float(v.to_f64()), |v: half::f16| v.to_f64(), half::f16::from_f64);
element!(half::bf16, BF16, half::bf16::ZERO, half::bf16::ONE, |s: Scalar| bf16_from_f64(s.to_f64()), |v: half::bf16| Scalar::Float(v.to_f64()), |v: half::bf16| v.to_f64(), bf16_from_f64);

/// `value` rounded to the nearest bf16, ties to even.
///
/// `half::bf16::from_f64` (2.7) drops the bits below the round bit that
/// decide a near-tie: f32 0xbec48005 (-0.38378918), just above the midpoint
/// of two bf16 values, came out 0xbec4 instead of 0xbec5, about one value in
/// 20,000 of a normal sample. Rounded to f32 by round-to-odd first (the
/// nearest f32 towards zero, its last bit set when inexact), the second
/// rounding to bf16 is exact: f32 keeps 16 bits more than bf16.
pub fn bf16_from_f64(value: f64) -> half::bf16 {
    let nearest = value as f32;
    if value.is_nan() || nearest as f64 == value || nearest.is_infinite() {
        return half::bf16::from_f32(nearest);
    }
    // Inexact: step back towards zero if the cast rounded away from it, then mark the loss.
    let mut bits = nearest.to_bits();
    if (nearest as f64).abs() > value.abs() {
        bits -= 1;
    }
    half::bf16::from_f32(f32::from_bits(bits | 1))
}
// Saturating, as `as` is: checked conversions (casts, NumPy) refuse
// out-of-range values before they get here.
element!(i32, I32, 0, 1, |s: Scalar| s.to_i64().clamp(i32::MIN as i64, i32::MAX as i64) as i32, |v: i32| Scalar::Int(v as i64), |v: i32| v as f64, |v: f64| v as i32);
element!(u8, U8, 0, 1, |s: Scalar| s.to_i64().clamp(0, 255) as u8, |v: u8| Scalar::Int(v as i64), |v: u8| v as f64, |v: f64| v as u8);
element!(bool, Bool, false, true, |s: Scalar| s.to_bool(), Scalar::Bool, |v: bool| v as u8 as f64, |v: f64| v != 0.0);

/// Numeric elements: Float and Int kinds.
pub trait NumElement:
    Element
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::iter::Sum
    + num_traits::Signed
{
    const MIN_VALUE: Self;
    const MAX_VALUE: Self;
    /// Remainder with the sign of the divisor (Burn's and Python's `%`).
    fn remainder(self, rhs: Self) -> Self;
    /// Division; Int truncates toward zero and maps a zero divisor to 0
    /// rather than trapping.
    fn div_of(self, rhs: Self) -> Self;
    fn max_of(self, rhs: Self) -> Self;
    fn min_of(self, rhs: Self) -> Self;
    fn powi_of(self, e: i32) -> Self;
    fn is_nan_value(self) -> bool;
}

/// Implements [`NumElement`] for a float type `$t` (f32, f64): IEEE
/// division, a remainder with the divisor's sign, and max/min that keep a
/// NaN operand (so a NaN anywhere propagates through a reduction).
macro_rules! float_num_element {
    ($t:ident) => {
        impl NumElement for $t {
            const MIN_VALUE: Self = $t::NEG_INFINITY;
            const MAX_VALUE: Self = $t::INFINITY;
            #[inline(always)]
            fn div_of(self, rhs: Self) -> Self {
                self / rhs
            }
            fn remainder(self, rhs: Self) -> Self {
                let r = self % rhs;
                if r != 0.0 && ((r < 0.0) != (rhs < 0.0)) { r + rhs } else { r }
            }
            #[inline(always)]
            fn max_of(self, rhs: Self) -> Self {
                if self >= rhs || self.is_nan() { self } else { rhs }
            }
            #[inline(always)]
            fn min_of(self, rhs: Self) -> Self {
                if self <= rhs || self.is_nan() { self } else { rhs }
            }
            fn powi_of(self, e: i32) -> Self {
                self.powi(e)
            }
            fn is_nan_value(self) -> bool {
                self.is_nan()
            }
        }
    };
}

float_num_element!(f32);
float_num_element!(f64);

impl NumElement for i64 {
    const MIN_VALUE: Self = i64::MIN;
    const MAX_VALUE: Self = i64::MAX;
    #[inline(always)]
    fn div_of(self, rhs: Self) -> Self {
        if rhs == 0 { 0 } else { self.wrapping_div(rhs) }
    }
    fn remainder(self, rhs: Self) -> Self {
        if rhs == 0 {
            return 0;
        }
        let r = self.wrapping_rem(rhs);
        if r != 0 && ((r < 0) != (rhs < 0)) { r + rhs } else { r }
    }
    #[inline(always)]
    fn max_of(self, rhs: Self) -> Self {
        self.max(rhs)
    }
    #[inline(always)]
    fn min_of(self, rhs: Self) -> Self {
        self.min(rhs)
    }
    fn powi_of(self, e: i32) -> Self {
        if e < 0 {
            match self {
                1 => 1,
                -1 => if e % 2 == 0 { 1 } else { -1 },
                _ => 0,
            }
        } else {
            self.wrapping_pow(e as u32)
        }
    }
    fn is_nan_value(self) -> bool {
        false
    }
}

/// Float elements: f32 and f64.
pub trait FloatElement: NumElement + num_traits::Float {
    fn erf(self) -> Self;
    /// `exp` that lets loops vectorise: branch-free arithmetic for f32
    /// (within 1 ulp of `f32::exp`), the libm call for f64.
    fn simd_exp(self) -> Self;
}

impl FloatElement for f32 {
    fn erf(self) -> Self {
        libm::erff(self)
    }
    #[inline(always)]
    fn simd_exp(self) -> Self {
        crate::kernels::exp::exp_f32(self)
    }
}
impl FloatElement for f64 {
    fn erf(self) -> Self {
        libm::erf(self)
    }
    #[inline(always)]
    fn simd_exp(self) -> Self {
        self.exp()
    }
}

/// A Float dtype as the element-wise kernels compute it: f32 and f64 as
/// themselves, f16 and bf16 converted to f32 in registers and each result
/// rounded back once. So an element-wise op on a half tensor reads and
/// writes two bytes per element in one pass, with the values and rounding
/// of computing in f32 and casting the result.
pub trait FloatLanes: Element {
    type Compute: FloatElement;
    fn widen(self) -> Self::Compute;
    fn narrow(value: Self::Compute) -> Self;
}

macro_rules! same_lanes {
    ($($t:ty),*) => {$(
        impl FloatLanes for $t {
            type Compute = $t;
            #[inline(always)]
            fn widen(self) -> $t {
                self
            }
            #[inline(always)]
            fn narrow(value: $t) -> $t {
                value
            }
        }
    )*};
}
same_lanes!(f32, f64);

macro_rules! half_lanes {
    ($($t:ty),*) => {$(
        impl FloatLanes for $t {
            type Compute = f32;
            #[inline(always)]
            fn widen(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn narrow(value: f32) -> $t {
                <$t>::from_f32(value)
            }
        }
    )*};
}
half_lanes!(half::f16);

impl FloatLanes for half::bf16 {
    type Compute = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits(u32::from(self.to_bits()) << 16)
    }
    /// The half crate's rounding (nearest, ties to even; NaN stays NaN),
    /// written without branches so that a loop of it vectorises: through
    /// `bf16::from_f32` an element-wise bf16 op ran at scalar speed.
    #[inline(always)]
    fn narrow(value: f32) -> half::bf16 {
        half::bf16::from_bits(crate::kernels::gemm_half::round_to_bf16(value))
    }
}

#[cfg(test)]
mod tests {
    use super::bf16_from_f64;
    use half::bf16;

    #[test]
    fn bf16_from_f64_rounds_f32_values_as_from_f32_does() {
        // `bf16::from_f32` rounds correctly; `bf16::from_f64` missed near-ties such as these.
        let near_ties = [0xbec4_8005u32, 0x3f80_8001, 0x3f80_8000, 0x3f81_8000, 0x7f7f_ffff, 0x0000_8001, 0x8080_8001];
        let walk = (0..300_000u32).map(|i| i.wrapping_mul(2_654_435_761));
        for bits in near_ties.into_iter().chain(walk) {
            let value = f32::from_bits(bits);
            let (got, expected) = (bf16_from_f64(value as f64), bf16::from_f32(value));
            if value.is_nan() {
                assert!(got.is_nan());
            } else {
                assert_eq!(got.to_bits(), expected.to_bits(), "{value:e} ({bits:#x})");
            }
        }
    }

    #[test]
    fn bf16_from_f64_rounds_once() {
        // Just above and below the midpoint between 1 and 1 + 2^-7, by less than f32 can hold:
        // rounding to f32 first would land on the midpoint and round to even (1).
        let mid = 1.0 + 2f64.powi(-8);
        assert_eq!(bf16_from_f64(mid + 2f64.powi(-40)), bf16::from_f32(1.0 + 2f32.powi(-7)));
        assert_eq!(bf16_from_f64(-(mid + 2f64.powi(-40))), bf16::from_f32(-(1.0 + 2f32.powi(-7))));
        assert_eq!(bf16_from_f64(mid - 2f64.powi(-40)), bf16::ONE);
        assert_eq!(bf16_from_f64(mid), bf16::ONE);
        assert_eq!(bf16_from_f64(1e300), bf16::INFINITY);
        assert_eq!(bf16_from_f64(-1e300), bf16::NEG_INFINITY);
        assert_eq!(bf16_from_f64(1e-300).to_bits(), 0);
        assert_eq!(bf16_from_f64(-1e-300).to_bits(), 0x8000);
        assert!(bf16_from_f64(f64::NAN).is_nan());
    }
}
