//! Quantized tensors as Burn 0.20 has them: float values stored as small
//! integers and scales (`x ≈ scale * q`, symmetric), per tensor or per
//! block of consecutive values, with min-max calibration; and the int8
//! product that a linear layer with quantized weights runs on.

mod conv;
mod conv_integer;
mod dynamic;
mod integer;
mod qconv;
mod qconv_amx;
mod qtensor;
mod scheme;

pub use conv_integer::{conv2d_u8s8, pack_int8_conv, run_int8_conv, IntConvResult};
pub use qconv::{ConvOut, Int8Conv, IntConv2d, Requant};
pub use dynamic::dynamic_quantize_u8;
pub use integer::Int8Matrix;
pub use qtensor::QTensor;
pub use scheme::{QuantLevel, QuantParam, QuantScheme, QuantValue};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_integer_conv;
#[cfg(test)]
mod tests_qconv;
