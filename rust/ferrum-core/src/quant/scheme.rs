//! What a quantization scheme says about the values: their integer range,
//! the granularity of the scales and the precision the scales are kept in.

use crate::error::{Error, Result};

/// The integer type of the quantized values (Burn's `QuantValue`; the
/// float formats `E5M2`, `E4M3`, `E2M1` are not supported here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantValue {
    /// 8 bits, full range -128..=127.
    Q8F,
    /// 8 bits, symmetric range -127..=127.
    Q8S,
    /// 4 bits, full range -8..=7.
    Q4F,
    /// 4 bits, symmetric range -7..=7.
    Q4S,
    /// 2 bits, full range -2..=1.
    Q2F,
    /// 2 bits, symmetric range -1..=1.
    Q2S,
}

impl QuantValue {
    /// Burn's names, as the Python layer passes them.
    pub fn parse(name: &str) -> Result<QuantValue> {
        Ok(match name {
            "Q8F" => QuantValue::Q8F,
            "Q8S" => QuantValue::Q8S,
            "Q4F" => QuantValue::Q4F,
            "Q4S" => QuantValue::Q4S,
            "Q2F" => QuantValue::Q2F,
            "Q2S" => QuantValue::Q2S,
            "E5M2" | "E4M3" | "E2M1" => {
                return Err(Error::invalid(
                    "quantize",
                    format!("the float quantization value {name} is not supported; use Q8F, Q8S, Q4F, Q4S, Q2F or Q2S"),
                ))
            }
            other => return Err(Error::invalid("quantize", format!("unknown quantization value {other:?}"))),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            QuantValue::Q8F => "Q8F",
            QuantValue::Q8S => "Q8S",
            QuantValue::Q4F => "Q4F",
            QuantValue::Q4S => "Q4S",
            QuantValue::Q2F => "Q2F",
            QuantValue::Q2S => "Q2S",
        }
    }

    /// The range `[a, b]` of the quantized values.
    pub fn range(self) -> (f32, f32) {
        match self {
            QuantValue::Q8F => (-128.0, 127.0),
            QuantValue::Q8S => (-127.0, 127.0),
            QuantValue::Q4F => (-8.0, 7.0),
            QuantValue::Q4S => (-7.0, 7.0),
            QuantValue::Q2F => (-2.0, 1.0),
            QuantValue::Q2S => (-1.0, 1.0),
        }
    }

    pub fn bits(self) -> usize {
        match self {
            QuantValue::Q8F | QuantValue::Q8S => 8,
            QuantValue::Q4F | QuantValue::Q4S => 4,
            QuantValue::Q2F | QuantValue::Q2S => 2,
        }
    }
}

/// The precision the scales are kept in (Burn's `QuantParam`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantParam {
    F32,
    F16,
    BF16,
}

impl QuantParam {
    pub fn parse(name: &str) -> Result<QuantParam> {
        Ok(match name {
            "F32" => QuantParam::F32,
            "F16" => QuantParam::F16,
            "BF16" => QuantParam::BF16,
            "UE8M0" | "UE4M3" => {
                return Err(Error::invalid("quantize", format!("scales in {name} are not supported; use F32, F16 or BF16")))
            }
            other => return Err(Error::invalid("quantize", format!("unknown quantization parameter precision {other:?}"))),
        })
    }

    /// `scale` as this precision holds it.
    pub fn round(self, scale: f32) -> f32 {
        match self {
            QuantParam::F32 => scale,
            QuantParam::F16 => half::f16::from_f32(scale).to_f32(),
            QuantParam::BF16 => half::bf16::from_f32(scale).to_f32(),
        }
    }
}

/// One scale for the whole tensor, or one per block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QuantLevel {
    Tensor,
    /// Burn's `BlockSize`: up to 5 dims, aligned with the tensor's last
    /// dims. A block is a run of `product(block)` consecutive values in
    /// row-major order, as Burn's CPU backend reads it.
    Block(Vec<usize>),
}

/// A symmetric quantization scheme.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QuantScheme {
    pub value: QuantValue,
    pub level: QuantLevel,
    pub param: QuantParam,
}

impl QuantScheme {
    /// A scheme from Burn's names (as the Python layer's `QuantScheme` passes them);
    /// `block` is None for one scale per tensor.
    pub fn from_names(value: &str, block: Option<Vec<usize>>, param: &str) -> Result<QuantScheme> {
        Ok(QuantScheme { value: QuantValue::parse(value)?, level: block.map_or(QuantLevel::Tensor, QuantLevel::Block), param: QuantParam::parse(param)? })
    }

    /// Values per scale for a tensor of `numel` values: all of them, or a
    /// block's, which must divide `numel`.
    pub fn block_len(&self, shape: &[usize]) -> Result<usize> {
        let numel: usize = shape.iter().product();
        match &self.level {
            QuantLevel::Tensor => Ok(numel.max(1)),
            QuantLevel::Block(block) => {
                if block.is_empty() || block.len() > 5 || block.iter().any(|&b| b == 0 || b > 255) {
                    return Err(Error::invalid(
                        "quantize",
                        format!("a block size has 1 to 5 dims, each 1 to 255 (Burn's BlockSize), found {block:?}"),
                    ));
                }
                let len: usize = block.iter().product();
                if !numel.is_multiple_of(len) {
                    return Err(Error::invalid(
                        "quantize",
                        format!("a tensor of shape {shape:?} ({numel} values) does not split into blocks of {block:?} ({len} values)"),
                    ));
                }
                Ok(len)
            }
        }
    }

    /// The shape of the scales tensor (Burn's `params_shape`).
    pub fn params_shape(&self, shape: &[usize]) -> Vec<usize> {
        match &self.level {
            QuantLevel::Tensor => vec![1],
            QuantLevel::Block(block) => {
                let r = shape.len();
                let mut dims = vec![1usize; r];
                for (d, &b) in block.iter().rev().enumerate().take(r) {
                    dims[r - 1 - d] = b;
                }
                let params: Vec<usize> = shape.iter().zip(&dims).map(|(&s, &b)| s.div_ceil(b)).collect();
                if params.iter().product::<usize>() * self.block_len(shape).unwrap_or(1) == shape.iter().product::<usize>() {
                    params
                } else {
                    // Blocks that do not tile the dims (runs across rows): one flat list.
                    vec![shape.iter().product::<usize>() / self.block_len(shape).unwrap_or(1)]
                }
            }
        }
    }
}
