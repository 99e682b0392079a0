//! Quantized tensors in records, laid out as Burn 0.20 writes them: a
//! `TensorData` whose dtype is `QFloat(scheme)` (cubecl's `QuantScheme`
//! serialized field by field) and whose bytes are the quantized values
//! followed by the scales, one little-endian f32 per tensor or per block
//! (whatever the scheme's `param` says: Burn's `QuantizedBytes` always
//! appends f32 scales).
//!
//! ferrum writes 8-bit values `Native` (one byte each, as Burn's NdArray
//! backend writes and reads them) and 4- and 2-bit values `PackedU32(0)`
//! (packed from the lowest bits of little-endian u32 words, the only store
//! Burn reads them from). Reading takes both stores for every value type.

use super::item::Item;
use crate::error::{Error, Result};
use crate::quant::{QTensor, QuantLevel, QuantParam, QuantScheme, QuantValue};

/// `QFloat`'s place in Burn's `DType` (its bincode variant index).
pub const QFLOAT_INDEX: u32 = 14;

/// cubecl's `QuantValue`, in declaration order (the bincode index).
pub const VALUE_NAMES: [&str; 9] = ["Q8F", "E5M2", "E4M3", "Q4F", "E2M1", "Q2F", "Q8S", "Q4S", "Q2S"];
/// cubecl's `QuantParam`.
pub const PARAM_NAMES: [&str; 5] = ["F32", "F16", "BF16", "UE8M0", "UE4M3"];
/// cubecl's `QuantStore`; the last two carry the packing dim (a usize).
pub const STORE_NAMES: [&str; 3] = ["Native", "PackedNative", "PackedU32"];
/// cubecl's `QuantLevel`; `Block` carries a `BlockSize`.
pub const LEVEL_NAMES: [&str; 2] = ["Tensor", "Block"];
/// cubecl's `QuantMode`.
pub const MODE_NAMES: [&str; 1] = ["Symmetric"];
/// cubecl's `BlockSize` holds its dims in a fixed array of this many bytes.
pub const BLOCK_STORAGE: usize = 5;

/// How the values are laid out in the bytes (cubecl's `QuantStore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// One byte a value.
    Native,
    /// `32 / bits` values a little-endian u32 word, from the lowest bits,
    /// packed along dim `0` (the innermost; the only one Burn unpacks).
    PackedU32(usize),
    /// A GPU format (e2m1x2) Burn's CPU code does not read either.
    PackedNative(usize),
}

/// The store ferrum writes a scheme's values in.
pub fn store_for(scheme: &QuantScheme) -> Store {
    if scheme.value.bits() == 8 {
        Store::Native
    } else {
        Store::PackedU32(0)
    }
}

fn value_index(v: QuantValue) -> u32 {
    VALUE_NAMES.iter().position(|n| *n == v.name()).unwrap_or(0) as u32
}

fn param_name(p: QuantParam) -> &'static str {
    match p {
        QuantParam::F32 => "F32",
        QuantParam::F16 => "F16",
        QuantParam::BF16 => "BF16",
    }
}

fn unit_variant(names: &[&'static str], name: &str) -> Item {
    let index = names.iter().position(|n| *n == name).unwrap_or(0) as u32;
    Item::Enum { variant: name.into(), index, value: Box::new(Item::Unit) }
}

/// cubecl's `QuantScheme` as serde writes it: `{value, param, store, level, mode}`.
pub fn scheme_item(scheme: &QuantScheme, store: Store) -> Item {
    let store = match store {
        Store::Native => unit_variant(&STORE_NAMES, "Native"),
        Store::PackedNative(d) => Item::Enum { variant: "PackedNative".into(), index: 1, value: Box::new(Item::U64(d as u64)) },
        Store::PackedU32(d) => Item::Enum { variant: "PackedU32".into(), index: 2, value: Box::new(Item::U64(d as u64)) },
    };
    let level = match &scheme.level {
        QuantLevel::Tensor => unit_variant(&LEVEL_NAMES, "Tensor"),
        QuantLevel::Block(dims) => {
            // BlockSize { storage: [u8; 5], len: u8 }: the dims, then 1s.
            let mut storage = [1u8; BLOCK_STORAGE];
            for (s, &d) in storage.iter_mut().zip(dims) {
                *s = d as u8;
            }
            let block = Item::Struct(vec![
                ("storage".into(), Item::Tuple(storage.iter().map(|&b| Item::U8(b)).collect())),
                ("len".into(), Item::U8(dims.len() as u8)),
            ]);
            Item::Enum { variant: "Block".into(), index: 1, value: Box::new(block) }
        }
    };
    Item::Struct(vec![
        ("value".into(), Item::Enum { variant: scheme.value.name().into(), index: value_index(scheme.value), value: Box::new(Item::Unit) }),
        ("param".into(), unit_variant(&PARAM_NAMES, param_name(scheme.param))),
        ("store".into(), store),
        ("level".into(), level),
        ("mode".into(), unit_variant(&MODE_NAMES, "Symmetric")),
    ])
}

/// The values (in `store`) then the scales as little-endian f32.
pub fn to_bytes(q: &QTensor) -> Vec<u8> {
    let values = q.raw_values();
    let scales = q.raw_scales();
    let mut out = match store_for(q.scheme()) {
        Store::PackedU32(_) => pack_u32(values, q.scheme().value.bits()),
        Store::Native | Store::PackedNative(_) => values.iter().map(|&v| v as u8).collect(),
    };
    out.reserve(scales.len() * 4);
    scales.iter().for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
    out
}

/// Burn's `TensorData { bytes, shape, dtype: QFloat(scheme) }` of `q`.
pub fn tensor_data(q: &QTensor) -> Item {
    let dtype = Item::Enum { variant: "QFloat".into(), index: QFLOAT_INDEX, value: Box::new(scheme_item(q.scheme(), store_for(q.scheme()))) };
    Item::Struct(vec![
        ("bytes".into(), Item::Bytes(to_bytes(q))),
        ("shape".into(), Item::Seq(q.shape().iter().map(|d| Item::U64(*d as u64)).collect())),
        ("dtype".into(), dtype),
    ])
}

/// Values of `bits` bits packed into u32 words from the lowest bits, the
/// last word padded with zeros (Burn's `pack_i8s_to_u32s` generalised).
fn pack_u32(values: &[i8], bits: usize) -> Vec<u8> {
    let per_word = 32 / bits;
    let mask = (1u32 << bits) - 1;
    values
        .chunks(per_word)
        .flat_map(|run| run.iter().enumerate().fold(0u32, |w, (i, &v)| w | ((v as u8 as u32 & mask) << (i * bits))).to_le_bytes())
        .collect()
}

/// The first `numel` values of packed words, sign-extended from `bits` bits.
fn unpack_u32(bytes: &[u8], numel: usize, bits: usize) -> Vec<i8> {
    let per_word = 32 / bits;
    let shift = 8 - bits;
    let mask = (1u32 << bits) - 1;
    let mut out = Vec::with_capacity(numel);
    for word in bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])) {
        for i in 0..per_word.min(numel - out.len()) {
            let raw = ((word >> (i * bits)) & mask) as u8;
            out.push(((raw << shift) as i8) >> shift);
        }
    }
    out
}

/// An engine error's reason, without its op (the record error names its own).
fn why(e: Error) -> String {
    match e {
        Error::InvalidArgument { reason, .. } => reason,
        other => other.to_string(),
    }
}

fn fail(path: &str, reason: impl std::fmt::Display) -> Error {
    let at = if path.is_empty() { "the record root" } else { path };
    Error::invalid("load record", format!("{at}: quantized tensor: {reason}"))
}

/// The variant name and value of an enum as any format decodes it: a
/// string (a unit variant in MessagePack and JSON), a map of one entry, or
/// an `Enum` node (bincode).
fn variant<'a>(item: &'a Item, what: &str, path: &str) -> Result<(&'a str, &'a Item)> {
    match item {
        Item::Str(name) => Ok((name, &Item::Unit)),
        Item::Enum { variant, value, .. } => Ok((variant, value)),
        Item::Struct(fields) if fields.len() == 1 => Ok((&fields[0].0, &fields[0].1)),
        other => Err(fail(path, format!("the scheme's {what} must be an enum variant, found {}", other.kind_name()))),
    }
}

fn small_int(item: &Item, what: &str, max: u64, path: &str) -> Result<u64> {
    match item {
        Item::U64(v) if *v <= max => Ok(*v),
        Item::U8(v) => Ok(*v as u64),
        other => Err(fail(path, format!("{what} must be an integer 0..={max}, found {other:?}"))),
    }
}

fn unit(value: &Item, what: &str, name: &str, path: &str) -> Result<()> {
    match value {
        Item::Unit => Ok(()),
        other => Err(fail(path, format!("the {what} {name} holds no value, found {}", other.kind_name()))),
    }
}

fn block_size(item: &Item, path: &str) -> Result<Vec<usize>> {
    let Item::Struct(fields) = item else {
        return Err(fail(path, format!("a block size is {{storage, len}}, found {}", item.kind_name())));
    };
    if let Some((k, _)) = fields.iter().find(|(k, _)| k != "storage" && k != "len") {
        return Err(fail(path, format!("a block size has the fields storage and len, found the unknown field {k:?}")));
    }
    let storage = match item.field("storage") {
        Some(Item::Seq(v) | Item::Tuple(v)) if v.len() == BLOCK_STORAGE => {
            v.iter().map(|d| small_int(d, "a block dim", 255, path)).collect::<Result<Vec<u64>>>()?
        }
        // JSON and MessagePack lists of small numbers read as bytes only under `bytes` keys; accept them anyway.
        Some(Item::Bytes(b)) if b.len() == BLOCK_STORAGE => b.iter().map(|&d| d as u64).collect(),
        other => {
            return Err(fail(path, format!("a block size's storage holds {BLOCK_STORAGE} dims, found {}", other.map_or("nothing", Item::kind_name))))
        }
    };
    let len = small_int(item.field("len").unwrap_or(&Item::Unit), "a block size's len", BLOCK_STORAGE as u64, path)? as usize;
    let dims: Vec<usize> = storage[..len].iter().map(|&d| d as usize).collect();
    if dims.is_empty() || dims.contains(&0) {
        return Err(fail(path, format!("a block has 1 to {BLOCK_STORAGE} dims, each 1 to 255, found {dims:?}")));
    }
    Ok(dims)
}

/// The scheme of a `QFloat` dtype, however the format decoded it. Every
/// field must be there, no other, and hold a variant ferrum computes.
pub fn parse_scheme(item: &Item, path: &str) -> Result<(QuantScheme, Store)> {
    const FIELDS: [&str; 5] = ["value", "param", "store", "level", "mode"];
    let Item::Struct(fields) = item else {
        return Err(fail(path, format!("the QFloat scheme must be a struct of {FIELDS:?}, found {}", item.kind_name())));
    };
    if let Some((k, _)) = fields.iter().find(|(k, _)| !FIELDS.contains(&k.as_str())) {
        return Err(fail(path, format!("the QFloat scheme has the unknown field {k:?} (expected {FIELDS:?})")));
    }
    let field = |name: &str| item.field(name).ok_or_else(|| fail(path, format!("the QFloat scheme has no field {name:?}")));
    let (value, v) = variant(field("value")?, "value", path)?;
    unit(v, "value", value, path)?;
    let (param, v) = variant(field("param")?, "param", path)?;
    unit(v, "param", param, path)?;
    let (mode, v) = variant(field("mode")?, "mode", path)?;
    unit(v, "mode", mode, path)?;
    if mode != "Symmetric" {
        return Err(fail(path, format!("unknown quantization mode {mode:?} (Burn 0.20 has Symmetric only)")));
    }
    let store = match variant(field("store")?, "store", path)? {
        ("Native", v) => unit(v, "store", "Native", path).map(|_| Store::Native)?,
        ("PackedU32", d) => Store::PackedU32(small_int(d, "the packing dim", u32::MAX as u64, path)? as usize),
        ("PackedNative", d) => Store::PackedNative(small_int(d, "the packing dim", u32::MAX as u64, path)? as usize),
        (other, _) => return Err(fail(path, format!("unknown quantization store {other:?} (expected one of {STORE_NAMES:?})"))),
    };
    let level = match variant(field("level")?, "level", path)? {
        ("Tensor", v) => unit(v, "level", "Tensor", path).map(|_| QuantLevel::Tensor)?,
        ("Block", b) => QuantLevel::Block(block_size(b, path)?),
        (other, _) => return Err(fail(path, format!("unknown quantization level {other:?} (expected one of {LEVEL_NAMES:?})"))),
    };
    if !VALUE_NAMES.contains(&value) {
        return Err(fail(path, format!("unknown quantization value {value:?} (expected one of {VALUE_NAMES:?})")));
    }
    let value = QuantValue::parse(value).map_err(|e| fail(path, why(e)))?;
    let param = QuantParam::parse(param).map_err(|e| fail(path, why(e)))?;
    match store {
        Store::PackedU32(0) | Store::Native => {}
        Store::PackedU32(d) => return Err(fail(path, format!("values packed along dim {d}: Burn packs and unpacks along dim 0 only"))),
        Store::PackedNative(_) => return Err(fail(path, "the PackedNative store (a GPU float format) is not supported; Burn's CPU code cannot read it either")),
    }
    Ok((QuantScheme { value, level, param }, store))
}

/// The quantized tensor of `bytes` (values then f32 scales), checked
/// against the shape and the scheme before anything is allocated.
pub fn from_bytes(bytes: &[u8], shape: &[usize], scheme: &QuantScheme, store: Store, path: &str) -> Result<QTensor> {
    let numel = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| fail(path, format!("the shape {shape:?} has more elements than memory can hold")))?;
    let block = scheme.block_len(shape).map_err(|e| fail(path, why(e)))?;
    let scales = (numel / block).max(1);
    let bits = scheme.value.bits();
    let value_bytes = match store {
        Store::PackedU32(_) => numel.div_ceil(32 / bits) * 4,
        Store::Native | Store::PackedNative(_) => numel,
    };
    let expected = value_bytes + scales * 4;
    if bytes.len() != expected {
        let stored = if store == Store::Native { "one byte a value" } else { "packed in u32 words" };
        let found_scales = bytes.len().checked_sub(value_bytes).filter(|n| n % 4 == 0 && *n > 0).map(|n| n / 4);
        let reason = match found_scales {
            Some(found) => format!(
                "{} {} values of shape {shape:?} ({stored}) take {value_bytes} bytes, leaving room for {found} f32 scales; the scheme needs {scales}",
                numel,
                scheme.value.name()
            ),
            None => format!(
                "{numel} {} values of shape {shape:?} ({stored}) and {scales} f32 scales take {expected} bytes, found {}",
                scheme.value.name(),
                bytes.len()
            ),
        };
        return Err(fail(path, reason));
    }
    let (value_part, scale_part) = bytes.split_at(value_bytes);
    let values = match store {
        Store::PackedU32(_) => unpack_u32(value_part, numel, bits),
        Store::Native | Store::PackedNative(_) => value_part.iter().map(|&b| b as i8).collect(),
    };
    let scales = scale_part.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    QTensor::from_parts(values, shape, scales, scheme).map_err(|e| fail(path, why(e)))
}

/// The scheme of a decoded `dtype` node when it is `QFloat(scheme)`.
pub fn qfloat_scheme(dtype: &Item) -> Option<&Item> {
    match dtype {
        Item::Enum { variant, value, .. } if &**variant == "QFloat" => Some(value),
        Item::Struct(fields) if fields.len() == 1 && fields[0].0 == "QFloat" => Some(&fields[0].1),
        _ => None,
    }
}
