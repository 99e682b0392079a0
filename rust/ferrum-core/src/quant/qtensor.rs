//! A quantized tensor: its integer values, its scales, its scheme; made
//! from float values with given scales (`quantize`) or with scales from the
//! values' own range (`quantize_dynamic`, min-max calibration).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use super::scheme::{QuantLevel, QuantScheme};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::qgemm::{self, PackedQ8};
use crate::ops::conv::values;
use crate::tensor::Tensor;
use crate::Kind;

/// Products below this many multiply-adds run on one thread.
const PAR_FLOPS: usize = 1 << 18;

/// Values `q` and scales `s` standing for `s * q`, one scale per tensor or
/// per block of consecutive values.
#[derive(Clone, Debug)]
pub struct QTensor {
    values: Arc<Vec<i8>>,
    shape: Vec<usize>,
    scales: Arc<Vec<f32>>,
    scheme: QuantScheme,
    /// The values packed for the int8 product, made on first use as a
    /// linear layer's weight and shared by the clones.
    packed: Arc<OnceLock<PackedQ8>>,
}

/// A float tensor's values as f32 (a copy only when it is strided or not f32).
pub(super) fn floats<'a>(op: &'static str, t: &'a Tensor) -> Result<Cow<'a, [f32]>> {
    t.expect_kind(op, Kind::Float)?;
    if t.dtype() == DType::F32 {
        values(op, t)
    } else {
        Ok(Cow::Owned(values::<f32>(op, &t.cast(DType::F32)?)?.into_owned()))
    }
}

/// Burn's rule for a zero scale (a block of zeros): 0.1, so nothing divides by zero.
fn valid_scale(scale: f32) -> f32 {
    if scale == 0.0 {
        0.1
    } else {
        scale
    }
}

/// Min-max scales of `x` in runs of `block` values: `2 * max(|min|, |max|) / (b - a)`.
fn min_max(op: &'static str, x: &[f32], block: usize, scheme: &QuantScheme) -> Result<Vec<f32>> {
    let (a, b) = scheme.value.range();
    if x.is_empty() {
        return Ok(vec![valid_scale(0.0)]);
    }
    x.chunks(block)
        .map(|run| {
            let (lo, hi) = run.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            if !(lo.is_finite() && hi.is_finite()) {
                return Err(Error::invalid(op, format!("min-max calibration needs finite values, found the range [{lo}, {hi}]")));
            }
            let alpha = lo.abs().max(hi.abs());
            Ok(valid_scale(scheme.param.round(2.0 * alpha / (b - a))))
        })
        .collect()
}

impl QTensor {
    /// Quantizes `t` with the given `scales` (one per tensor or block, in
    /// any shape holding that many): `q = clamp(round(x / scale), a, b)`.
    pub fn quantize(t: &Tensor, scheme: &QuantScheme, scales: &Tensor) -> Result<QTensor> {
        let op = "quantize";
        let block = scheme.block_len(t.shape())?;
        let s = floats(op, scales)?;
        let blocks = t.numel() / block;
        if s.len() != blocks.max(1) {
            return Err(Error::invalid(
                op,
                format!("{} scales for a tensor of shape {:?} in blocks of {block} values: expected {}", s.len(), t.shape(), blocks.max(1)),
            ));
        }
        if let Some(bad) = s.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(Error::invalid(op, format!("scales must be finite and not negative, found {bad}")));
        }
        let scales: Vec<f32> = s.iter().map(|&v| valid_scale(scheme.param.round(v))).collect();
        Self::with_scales(op, &floats(op, t)?, t.shape(), scheme, block, scales)
    }

    /// Quantizes `t` with scales from each block's range (Burn's min-max
    /// calibration): `scale = 2 * max(|min|, |max|) / (b - a)`.
    pub fn quantize_dynamic(t: &Tensor, scheme: &QuantScheme) -> Result<QTensor> {
        let op = "quantize_dynamic";
        let block = scheme.block_len(t.shape())?;
        let x = floats(op, t)?;
        let scales = min_max(op, &x, block, scheme)?;
        Self::with_scales(op, &x, t.shape(), scheme, block, scales)
    }

    /// The scales min-max calibration gives `t` (Burn's `compute_range`
    /// then `compute_q_params`), in the precision of the scheme's `param`.
    pub fn min_max_scales(t: &Tensor, scheme: &QuantScheme) -> Result<Vec<f32>> {
        let op = "quantize_dynamic";
        min_max(op, &floats(op, t)?, scheme.block_len(t.shape())?, scheme)
    }

    fn with_scales(op: &'static str, x: &[f32], shape: &[usize], scheme: &QuantScheme, block: usize, scales: Vec<f32>) -> Result<QTensor> {
        let (a, b) = scheme.value.range();
        let mut q = Vec::with_capacity(x.len());
        for (run, &s) in x.chunks(block).zip(&scales) {
            for &v in run {
                if v.is_nan() {
                    return Err(Error::invalid(op, "cannot quantize NaN"));
                }
                q.push((v / s).round().clamp(a, b) as i8);
            }
        }
        Ok(QTensor {
            values: Arc::new(q),
            shape: shape.to_vec(),
            scales: Arc::new(scales),
            scheme: scheme.clone(),
            packed: Arc::new(OnceLock::new()),
        })
    }

    /// Rebuilds a quantized tensor from its parts (a record's).
    pub fn from_parts(values: Vec<i8>, shape: &[usize], scales: Vec<f32>, scheme: &QuantScheme) -> Result<QTensor> {
        let op = "quantized tensor";
        let numel: usize = shape.iter().product();
        let block = scheme.block_len(shape)?;
        let (a, b) = scheme.value.range();
        if values.len() != numel || scales.len() != (numel / block).max(1) {
            return Err(Error::invalid(
                op,
                format!("shape {shape:?} in blocks of {block}: expected {numel} values and {} scales, found {} and {}", (numel / block).max(1), values.len(), scales.len()),
            ));
        }
        if let Some(v) = values.iter().find(|&&v| (v as f32) < a || (v as f32) > b) {
            return Err(Error::invalid(op, format!("value {v} is outside {}'s range [{a}, {b}]", scheme.value.name())));
        }
        if let Some(bad) = scales.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(Error::invalid(op, format!("scales must be finite and above 0, found {bad}")));
        }
        Ok(QTensor { values: Arc::new(values), shape: shape.to_vec(), scales: Arc::new(scales), scheme: scheme.clone(), packed: Arc::new(OnceLock::new()) })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn scheme(&self) -> &QuantScheme {
        &self.scheme
    }

    /// The integer values, as i8 (every supported value type fits).
    pub fn raw_values(&self) -> &[i8] {
        &self.values
    }

    /// The scales, one per tensor or block, in block order.
    pub fn raw_scales(&self) -> &[f32] {
        &self.scales
    }

    /// The integer values as an i32 tensor of the tensor's shape.
    pub fn values(&self) -> Result<Tensor> {
        Tensor::from_vec(self.values.iter().map(|&v| i32::from(v)).collect::<Vec<i32>>(), &self.shape)
    }

    /// The scales as an f32 tensor of Burn's parameter shape.
    pub fn scales(&self) -> Result<Tensor> {
        Tensor::from_vec(self.scales.to_vec(), &self.scheme.params_shape(&self.shape))
    }

    /// `scale * q` as an f32 tensor.
    pub fn dequantize(&self) -> Result<Tensor> {
        let block = self.scheme.block_len(&self.shape)?;
        let out: Vec<f32> = self.values.chunks(block).zip(self.scales.iter()).flat_map(|(run, &s)| run.iter().map(move |&q| s * q as f32)).collect();
        Tensor::from_vec(out, &self.shape)
    }

    /// Bytes the values take at their bit width, plus the scales.
    pub fn nbytes(&self) -> usize {
        (self.values.len() * self.scheme.value.bits()).div_ceil(8) + self.scales.len() * 4
    }

    /// Whether `linear` runs on the int8 product: a rank-2 weight with
    /// 8-bit values and one scale per tensor. Block scales change along the
    /// shared dim, so they cannot be applied after an integer sum.
    pub fn has_int8_product(&self) -> bool {
        self.shape.len() == 2 && self.scheme.value.bits() == 8 && self.scheme.level == QuantLevel::Tensor && self.shape[0] <= qgemm::MAX_K
    }

    /// The values packed for the int8 product by `make` (given the values and
    /// scales) on first use, then shared by the clones.
    pub(super) fn cached_packed(&self, make: impl FnOnce(&[i8], &[f32]) -> Result<PackedQ8>) -> Result<&PackedQ8> {
        if let Some(p) = self.packed.get() {
            return Ok(p);
        }
        let packed = make(&self.values, &self.scales)?;
        Ok(self.packed.get_or_init(|| packed))
    }

    fn packed(&self) -> Result<&PackedQ8> {
        let (k, n) = (self.shape[0], self.shape[1]);
        self.cached_packed(|values, scales| qgemm::pack_weights(values, &vec![scales[0]; n], k, n))
    }

    /// `x @ self + bias` for `x` of shape `[..., d_input]` and this tensor a
    /// `[d_input, d_output]` weight, in `x`'s dtype: on the int8 product
    /// with `x` quantized per row at each call where
    /// [`QTensor::has_int8_product`], else on the dequantized weight.
    pub fn linear(&self, x: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        let op = "quantized linear";
        x.expect_kind(op, Kind::Float)?;
        if x.dtype().is_storage_only() {
            return Err(Error::StorageDType { op, dtype: x.dtype() });
        }
        if self.shape.len() != 2 {
            return Err(Error::RankMismatch { op, expected: 2, found: self.shape.len(), shape: self.shape.clone() });
        }
        let (k, n) = (self.shape[0], self.shape[1]);
        let shape = x.shape();
        if shape.is_empty() || shape[shape.len() - 1] != k {
            return Err(Error::shapes(op, shape, &self.shape, format!("the input's last dim must be d_input = {k}")));
        }
        let bias: Option<Cow<'_, [f32]>> = match bias {
            None => None,
            Some(b) => {
                if b.shape() != [n] {
                    return Err(Error::shapes(op, b.shape(), &[n], format!("the bias must have shape [{n}] (d_output)")));
                }
                Some(floats(op, b)?)
            }
        };
        let xs = floats(op, x)?;
        let m: usize = shape[..shape.len() - 1].iter().product();
        let mut out = vec![0f32; m * n];
        if k == 0 || n == 0 {
            // An empty sum: the bias alone.
            if let (Some(b), true) = (&bias, n > 0) {
                out.chunks_exact_mut(n).for_each(|row| row.copy_from_slice(b));
            }
        } else if self.has_int8_product() {
            let threads = if m.saturating_mul(n).saturating_mul(k) >= PAR_FLOPS { rayon::current_num_threads() } else { 1 };
            qgemm::linear_q8(&xs, m, self.packed()?, bias.as_deref(), &mut out, threads)?;
        } else if m > 0 {
            let lhs = Tensor::from_vec(xs.into_owned(), &[m, k])?;
            let y = lhs.matmul(&self.dequantize()?)?;
            out.copy_from_slice(&values::<f32>(op, &y)?);
            if let Some(b) = &bias {
                for row in out.chunks_exact_mut(n) {
                    row.iter_mut().zip(b.iter()).for_each(|(y, &b)| *y += b);
                }
            }
        }
        let mut out_shape = shape.to_vec();
        *out_shape.last_mut().expect("rank checked above") = n;
        let y = Tensor::from_vec(out, &out_shape)?;
        if x.dtype() == DType::F32 {
            Ok(y)
        } else {
            y.cast(x.dtype())
        }
    }
}
