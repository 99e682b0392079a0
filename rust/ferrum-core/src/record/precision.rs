//! Precision settings and the tensor <-> stored-bytes conversion. On save,
//! Float tensors take the setting's float type and Int tensors its int type;
//! on load any stored element type converts to the dtype the model expects.

use half::{bf16, f16};

use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::kernels::copy::contiguous_values;
use crate::shape::try_with_capacity;
use crate::tensor::Tensor;

/// Burn's `FullPrecisionSettings` (f32/i32), `HalfPrecisionSettings`
/// (f16/i16) and `DoublePrecisionSettings` (f64/i64).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    Full,
    Half,
    Double,
}

impl Precision {
    pub fn float(self) -> StoredDType {
        match self {
            Precision::Full => StoredDType::F32,
            Precision::Half => StoredDType::F16,
            Precision::Double => StoredDType::F64,
        }
    }

    pub fn int(self) -> StoredDType {
        match self {
            Precision::Full => StoredDType::I32,
            Precision::Half => StoredDType::I16,
            Precision::Double => StoredDType::I64,
        }
    }

    /// The Rust type name of the settings struct, as Burn's metadata has it.
    pub fn settings_name(self) -> &'static str {
        match self {
            Precision::Full => "FullPrecisionSettings",
            Precision::Half => "HalfPrecisionSettings",
            Precision::Double => "DoublePrecisionSettings",
        }
    }
}

/// Burn's `DType`, in its declaration order (the bincode variant index).
/// Quantized tensors are not supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredDType {
    F64,
    F32,
    Flex32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    Bool,
}

const ALL: [StoredDType; 14] = [
    StoredDType::F64,
    StoredDType::F32,
    StoredDType::Flex32,
    StoredDType::F16,
    StoredDType::BF16,
    StoredDType::I64,
    StoredDType::I32,
    StoredDType::I16,
    StoredDType::I8,
    StoredDType::U64,
    StoredDType::U32,
    StoredDType::U16,
    StoredDType::U8,
    StoredDType::Bool,
];

impl StoredDType {
    pub fn index(self) -> u32 {
        ALL.iter().position(|d| *d == self).unwrap_or(0) as u32
    }

    pub fn from_index(index: u32) -> Option<StoredDType> {
        ALL.get(index as usize).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            StoredDType::F64 => "F64",
            StoredDType::F32 => "F32",
            StoredDType::Flex32 => "Flex32",
            StoredDType::F16 => "F16",
            StoredDType::BF16 => "BF16",
            StoredDType::I64 => "I64",
            StoredDType::I32 => "I32",
            StoredDType::I16 => "I16",
            StoredDType::I8 => "I8",
            StoredDType::U64 => "U64",
            StoredDType::U32 => "U32",
            StoredDType::U16 => "U16",
            StoredDType::U8 => "U8",
            StoredDType::Bool => "Bool",
        }
    }

    /// `core::any::type_name` of the element type, which Burn's metadata holds
    /// (`f32`, `i16`, but `half::binary16::f16` for half floats).
    pub fn rust_type_name(self) -> &'static str {
        match self {
            StoredDType::F64 => "f64",
            StoredDType::F32 | StoredDType::Flex32 => "f32",
            StoredDType::F16 => "half::binary16::f16",
            StoredDType::BF16 => "half::bfloat::bf16",
            StoredDType::I64 => "i64",
            StoredDType::I32 => "i32",
            StoredDType::I16 => "i16",
            StoredDType::I8 => "i8",
            StoredDType::U64 => "u64",
            StoredDType::U32 => "u32",
            StoredDType::U16 => "u16",
            StoredDType::U8 => "u8",
            StoredDType::Bool => "bool",
        }
    }

    pub fn from_name(name: &str) -> Option<StoredDType> {
        ALL.iter().copied().find(|d| d.name() == name)
    }

    pub fn size(self) -> usize {
        match self {
            StoredDType::F64 | StoredDType::I64 | StoredDType::U64 => 8,
            StoredDType::F32 | StoredDType::Flex32 | StoredDType::I32 | StoredDType::U32 => 4,
            StoredDType::F16 | StoredDType::BF16 | StoredDType::I16 | StoredDType::U16 => 2,
            StoredDType::I8 | StoredDType::U8 | StoredDType::Bool => 1,
        }
    }

    /// The dtype a tensor of this stored type loads as when nothing else is asked.
    pub fn default_dtype(self) -> DType {
        match self {
            StoredDType::F64 => DType::F64,
            StoredDType::F32 | StoredDType::Flex32 | StoredDType::F16 | StoredDType::BF16 => DType::F32,
            StoredDType::Bool => DType::Bool,
            _ => DType::I64,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, StoredDType::F64 | StoredDType::F32 | StoredDType::Flex32 | StoredDType::F16 | StoredDType::BF16)
    }
}

/// The stored type of a tensor under a precision setting.
pub fn stored_dtype(dtype: DType, precision: Precision) -> StoredDType {
    match dtype.kind() {
        Kind::Float => precision.float(),
        Kind::Int => precision.int(),
        Kind::Bool => StoredDType::Bool,
    }
}

/// A tensor's elements as little-endian bytes of `stored`.
pub fn tensor_to_bytes(t: &Tensor, stored: StoredDType) -> Result<Vec<u8>> {
    const OP: &str = "save";
    let mut out = try_with_capacity(OP, t.numel().saturating_mul(stored.size()))?;
    match t.dtype() {
        DType::Bool => contiguous_values::<bool>(OP, t)?.iter().for_each(|&b| out.push(b as u8)),
        DType::I64 => contiguous_values::<i64>(OP, t)?.iter().for_each(|&v| push_int(&mut out, v, stored)),
        DType::F32 => contiguous_values::<f32>(OP, t)?.iter().for_each(|&v| push_float(&mut out, v as f64, stored)),
        DType::F64 => contiguous_values::<f64>(OP, t)?.iter().for_each(|&v| push_float(&mut out, v, stored)),
        DType::F16 => contiguous_values::<f16>(OP, t)?.iter().for_each(|&v| push_float(&mut out, v.to_f64(), stored)),
        DType::BF16 => contiguous_values::<bf16>(OP, t)?.iter().for_each(|&v| push_float(&mut out, v.to_f64(), stored)),
        DType::I32 => contiguous_values::<i32>(OP, t)?.iter().for_each(|&v| push_int(&mut out, v as i64, stored)),
        DType::U8 => contiguous_values::<u8>(OP, t)?.iter().for_each(|&v| push_int(&mut out, v as i64, stored)),
    }
    Ok(out)
}

fn push_float(out: &mut Vec<u8>, v: f64, stored: StoredDType) {
    match stored {
        StoredDType::F64 => out.extend_from_slice(&v.to_le_bytes()),
        StoredDType::F16 => out.extend_from_slice(&f16::from_f64(v).to_le_bytes()),
        StoredDType::BF16 => out.extend_from_slice(&crate::element::bf16_from_f64(v).to_le_bytes()),
        _ => out.extend_from_slice(&(v as f32).to_le_bytes()),
    }
}

fn push_int(out: &mut Vec<u8>, v: i64, stored: StoredDType) {
    match stored {
        StoredDType::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
        StoredDType::I16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
        StoredDType::I8 => out.extend_from_slice(&(v as i8).to_le_bytes()),
        _ => out.extend_from_slice(&v.to_le_bytes()),
    }
}

/// Rebuild a tensor of `target` dtype from stored bytes; `what` names it in errors.
/// The shape comes from an untrusted file: its element count (and every
/// stride a layout derives from it) must fit in memory before anything is built.
pub fn tensor_from_bytes(bytes: &[u8], shape: &[usize], stored: StoredDType, target: DType, what: &str) -> Result<Tensor> {
    let fail = |reason: String| Error::invalid("record", format!("{what}: {reason}"));
    if target.is_storage_only() {
        // Read as the compute dtype, then narrow with the checked cast: a
        // stored value the target cannot hold is an error naming it.
        let wide = tensor_from_bytes(bytes, shape, stored, target.compute(), what)?;
        return wide.cast(target).map_err(|e| fail(e.to_string()));
    }
    let widest = shape.iter().filter(|d| **d != 0).try_fold(stored.size(), |acc, &d| acc.checked_mul(d));
    if widest.is_none_or(|b| b > isize::MAX as usize) {
        return Err(fail(format!("a {} tensor of shape {shape:?} has more elements than memory can hold", stored.name())));
    }
    let numel: usize = shape.iter().product();
    if bytes.len() != numel * stored.size() {
        return Err(fail(format!(
            "a {} tensor of shape {shape:?} needs {} bytes, found {}",
            stored.name(),
            numel * stored.size(),
            bytes.len()
        )));
    }
    let sz = stored.size();
    let chunks = bytes.chunks_exact(sz);
    let t = if target == DType::Bool {
        Tensor::from_vec(bytes.iter().map(|b| *b != 0).collect::<Vec<bool>>(), shape)?
    } else if target == DType::I64 && !stored.is_float() {
        // Exact for every integer width, where going through f64 would round i64.
        Tensor::from_vec(chunks.map(|c| read_int(c, stored)).collect::<Vec<i64>>(), shape)?
    } else {
        let vals: Vec<f64> = chunks.map(|c| read_number(c, stored)).collect();
        match target {
            DType::F32 => Tensor::from_vec(vals.into_iter().map(|v| v as f32).collect::<Vec<f32>>(), shape)?,
            DType::F64 => Tensor::from_vec(vals, shape)?,
            DType::I64 => Tensor::from_vec(vals.into_iter().map(|v| v as i64).collect::<Vec<i64>>(), shape)?,
            DType::Bool => Tensor::from_vec(vals.into_iter().map(|v| v != 0.0).collect::<Vec<bool>>(), shape)?,
            storage => unreachable!("{storage} is read through its compute dtype above"),
        }
    };
    Ok(t)
}

fn read_int(c: &[u8], stored: StoredDType) -> i64 {
    match stored {
        StoredDType::I64 => i64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
        StoredDType::I32 => i32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as i64,
        StoredDType::I16 => i16::from_le_bytes(c.try_into().unwrap_or([0; 2])) as i64,
        StoredDType::I8 => c[0] as i8 as i64,
        StoredDType::U64 => u64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as i64,
        StoredDType::U32 => u32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as i64,
        StoredDType::U16 => u16::from_le_bytes(c.try_into().unwrap_or([0; 2])) as i64,
        StoredDType::U8 | StoredDType::Bool => c[0] as i64,
        _ => read_number(c, stored) as i64,
    }
}

fn read_number(c: &[u8], stored: StoredDType) -> f64 {
    match stored {
        StoredDType::F64 => f64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
        StoredDType::F32 | StoredDType::Flex32 => f32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
        StoredDType::F16 => f16::from_le_bytes(c.try_into().unwrap_or([0; 2])).to_f64(),
        StoredDType::BF16 => bf16::from_le_bytes(c.try_into().unwrap_or([0; 2])).to_f64(),
        _ => read_int(c, stored) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_indices_follow_burn_order() {
        assert_eq!(StoredDType::F64.index(), 0);
        assert_eq!(StoredDType::F32.index(), 1);
        assert_eq!(StoredDType::F16.index(), 3);
        assert_eq!(StoredDType::I64.index(), 5);
        assert_eq!(StoredDType::I32.index(), 6);
        assert_eq!(StoredDType::Bool.index(), 13);
        assert_eq!(StoredDType::from_name("BF16"), Some(StoredDType::BF16));
    }

    #[test]
    fn half_and_int_conversions() {
        let t = Tensor::from_vec(vec![1.5f32, -2.0, 0.1], &[3]).unwrap();
        let b = tensor_to_bytes(&t, StoredDType::F16).unwrap();
        assert_eq!(b.len(), 6);
        assert_eq!(&b[0..2], &f16::from_f32(1.5).to_le_bytes());
        let back = tensor_from_bytes(&b, &[3], StoredDType::F16, DType::F32, "w").unwrap();
        let v = back.to_vec::<f32>();
        assert!((v[2] - 0.1).abs() < 1e-3 && v[0] == 1.5);
        let i = Tensor::from_vec(vec![-3i64, 7], &[2]).unwrap();
        let b = tensor_to_bytes(&i, StoredDType::I32).unwrap();
        assert_eq!(b, vec![0xfd, 0xff, 0xff, 0xff, 7, 0, 0, 0]);
        assert_eq!(tensor_from_bytes(&b, &[2], StoredDType::I32, DType::I64, "i").unwrap().to_vec::<i64>(), vec![-3, 7]);
        assert!(tensor_from_bytes(&b[..7], &[2], StoredDType::I32, DType::I64, "i").is_err());
    }

    #[test]
    fn shapes_whose_element_count_overflows_are_refused() {
        let b = [0u8; 16];
        // 2**62 + 1 rows of 4: the product wraps to 4 elements, 16 bytes.
        for shape in [vec![(1usize << 62) + 1, 4], vec![usize::MAX, 2], vec![0, 1 << 40, 1 << 40], vec![1 << 61, 1]] {
            let err = tensor_from_bytes(&b, &shape, StoredDType::F32, DType::F32, "layer.weight").unwrap_err().to_string();
            assert!(err.contains("layer.weight: a F32 tensor of shape") && err.contains("more elements than memory"), "{err}");
        }
        assert_eq!(tensor_from_bytes(&[], &[0, 5], StoredDType::F32, DType::F32, "w").unwrap().shape(), &[0, 5]);
    }
}
