//! bincode 2 with the standard config (little endian, varint ints and
//! lengths, zigzag signed ints), as Burn's `BinFileRecorder` writes it.
//! bincode holds no names or types, so reading follows a schema: the record
//! of a freshly built model, whose tensors give the dtypes to load into.

use super::item::{child_path, Item};
use super::precision::{tensor_from_bytes, StoredDType};
use super::quantized::{self, BLOCK_STORAGE, LEVEL_NAMES, MODE_NAMES, PARAM_NAMES, QFLOAT_INDEX, STORE_NAMES, VALUE_NAMES};
use crate::dtype::DType;
use crate::error::{Error, Result};

pub fn write_varint(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v <= u16::MAX as u64 {
        out.push(251);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v <= u32::MAX as u64 {
        out.push(252);
        out.extend_from_slice(&(v as u32).to_le_bytes());
    } else {
        out.push(253);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn varint_len(v: u64) -> usize {
    match v {
        0..=250 => 1,
        251..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Append a wire tree (tensors already encoded as `TensorData`).
pub fn write(out: &mut Vec<u8>, item: &Item) -> Result<()> {
    match item {
        Item::Struct(fields) => fields.iter().try_for_each(|(_, v)| write(out, v))?,
        Item::Seq(items) => {
            write_varint(out, items.len() as u64);
            items.iter().try_for_each(|v| write(out, v))?
        }
        Item::Tuple(items) => items.iter().try_for_each(|v| write(out, v))?,
        Item::Map(pairs) => {
            write_varint(out, pairs.len() as u64);
            for (k, v) in pairs {
                write(out, k)?;
                write(out, v)?;
            }
        }
        Item::Opt(None) => out.push(0),
        Item::Opt(Some(v)) => {
            out.push(1);
            write(out, v)?
        }
        Item::Unit => {}
        Item::Str(s) => {
            write_varint(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        Item::Bytes(b) => {
            write_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        Item::U64(v) => write_varint(out, *v),
        Item::U8(v) => out.push(*v),
        Item::I64(v) => write_varint(out, zigzag(*v)),
        Item::F64(v) => out.extend_from_slice(&v.to_le_bytes()),
        Item::Bool(v) => out.push(*v as u8),
        Item::Enum { index, value, .. } => {
            write_varint(out, *index as u64);
            write(out, value)?
        }
        Item::Tensor(_) | Item::QTensor(_) => return Err(Error::invalid("bincode", "tensors must be encoded as TensorData before writing")),
    }
    Ok(())
}

/// A cursor over bincode bytes that names the path being read in errors.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Inside a map's values, whose entries differ in shape (one optimizer
    /// state per parameter): tensors take the shape the file holds.
    in_map: bool,
}

/// The index of a schema enum that stands for any of the alternatives it
/// holds (a `Seq` of enums), chosen by the variant index the file holds.
pub const ANY_VARIANT: u32 = u32::MAX;

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0, in_map: false }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn fail(&self, path: &str, what: &str) -> Error {
        let at = if path.is_empty() { "the record root" } else { path };
        Error::invalid("load record", format!("{at}: {what} at byte {} of {}", self.pos, self.data.len()))
    }

    fn take(&mut self, n: usize, path: &str) -> Result<&'a [u8]> {
        if self.remaining() < n {
            return Err(self.fail(path, &format!("truncated: expected {n} more bytes, found {}", self.remaining())));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn varint(&mut self, path: &str) -> Result<u64> {
        let tag = self.take(1, path)?[0];
        Ok(match tag {
            0..=250 => tag as u64,
            251 => u16::from_le_bytes(self.take(2, path)?.try_into().unwrap_or_default()) as u64,
            252 => u32::from_le_bytes(self.take(4, path)?.try_into().unwrap_or_default()) as u64,
            253 => u64::from_le_bytes(self.take(8, path)?.try_into().unwrap_or_default()),
            _ => return Err(self.fail(path, &format!("invalid varint tag {tag}"))),
        })
    }

    fn len(&mut self, path: &str) -> Result<usize> {
        let n = self.varint(path)?;
        // Every element takes at least a byte: a longer length is corruption.
        if n > self.remaining() as u64 {
            return Err(self.fail(path, &format!("length {n} exceeds the {} bytes left", self.remaining())));
        }
        Ok(n as usize)
    }

    pub fn string(&mut self, path: &str) -> Result<String> {
        let n = self.len(path)?;
        let b = self.take(n, path)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.fail(path, "a string is not valid UTF-8"))
    }

    /// One variant index of an enum whose variants are `names`.
    fn variant(&mut self, names: &[&'static str], what: &str, path: &str) -> Result<(&'static str, u32)> {
        let index = self.varint(path)?;
        match names.get(index as usize) {
            Some(name) => Ok((name, index as u32)),
            None => Err(self.fail(path, &format!("unknown quantization {what} variant index {index} (Burn has {names:?})"))),
        }
    }

    /// cubecl's `QuantScheme` as bincode writes it: five enums in field
    /// order; `PackedU32`/`PackedNative` carry a usize, `Block` a `BlockSize`
    /// (five raw bytes, then the length byte).
    fn quant_scheme(&mut self, path: &str) -> Result<Item> {
        let unit = |(name, index): (&'static str, u32)| Item::Enum { variant: name.into(), index, value: Box::new(Item::Unit) };
        let value = unit(self.variant(&VALUE_NAMES, "value", path)?);
        let param = unit(self.variant(&PARAM_NAMES, "param", path)?);
        let (name, index) = self.variant(&STORE_NAMES, "store", path)?;
        let store = if index == 0 { Item::Unit } else { Item::U64(self.varint(path)?) };
        let store = Item::Enum { variant: name.into(), index, value: Box::new(store) };
        let (name, index) = self.variant(&LEVEL_NAMES, "level", path)?;
        let level = if index == 0 {
            Item::Unit
        } else {
            let storage = self.take(BLOCK_STORAGE, path)?.iter().map(|&b| Item::U8(b)).collect();
            let len = self.take(1, path)?[0];
            Item::Struct(vec![("storage".into(), Item::Tuple(storage)), ("len".into(), Item::U8(len))])
        };
        let level = Item::Enum { variant: name.into(), index, value: Box::new(level) };
        let mode = unit(self.variant(&MODE_NAMES, "mode", path)?);
        Ok(Item::Struct(vec![("value".into(), value), ("param".into(), param), ("store".into(), store), ("level".into(), level), ("mode".into(), mode)]))
    }

    /// A `TensorData` for a parameter of `expected_shape`, read as `dtype`
    /// (None: a quantized parameter, whose float data loads as f32).
    fn tensor(&mut self, expected_shape: &[usize], dtype: Option<DType>, path: &str) -> Result<Item> {
        let n = self.len(path)?;
        let bytes = self.take(n, path)?;
        let rank = self.len(path)?;
        let shape = (0..rank).map(|_| self.varint(path).map(|d| d as usize)).collect::<Result<Vec<_>>>()?;
        let index = self.varint(path)?;
        let scheme = if index == QFLOAT_INDEX as u64 { Some(self.quant_scheme(path)?) } else { None };
        // Checked here: past a wrong-sized tensor the rest of the stream is misread.
        if !self.in_map && shape != expected_shape {
            let at = if path.is_empty() { "the record root" } else { path };
            return Err(Error::invalid("load record", format!("{at}: the record holds shape {shape:?}, the model expects {expected_shape:?}")));
        }
        if let Some(scheme) = scheme {
            let (scheme, store) = quantized::parse_scheme(&scheme, path)?;
            return Ok(Item::QTensor(Box::new(quantized::from_bytes(bytes, &shape, &scheme, store, path)?)));
        }
        let stored = StoredDType::from_index(index as u32)
            .ok_or_else(|| self.fail(path, &format!("unknown dtype index {index}")))?;
        Ok(Item::tensor(tensor_from_bytes(bytes, &shape, stored, dtype.unwrap_or(stored.default_dtype()), path)?))
    }

    /// Read one value shaped like `schema`.
    pub fn read(&mut self, schema: &Item, path: &str) -> Result<Item> {
        Ok(match schema {
            Item::Struct(fields) => Item::Struct(
                fields
                    .iter()
                    .map(|(k, s)| self.read(s, &child_path(path, k)).map(|v| (k.clone(), v)))
                    .collect::<Result<_>>()?,
            ),
            Item::Seq(items) => {
                let n = self.len(path)?;
                if n != items.len() {
                    return Err(self.fail(path, &format!("the record holds {n} items, the model expects {}", items.len())));
                }
                Item::Seq(items.iter().enumerate().map(|(i, s)| self.read(s, &child_path(path, &i.to_string()))).collect::<Result<_>>()?)
            }
            Item::Tuple(items) => {
                Item::Tuple(items.iter().enumerate().map(|(i, s)| self.read(s, &child_path(path, &i.to_string()))).collect::<Result<_>>()?)
            }
            Item::Opt(inner) => match self.take(1, path)?[0] {
                0 => Item::Opt(None),
                1 => match inner {
                    Some(s) => self.read(s, path)?,
                    None => return Err(self.fail(path, "the record holds a value where the model has none")),
                },
                t => return Err(self.fail(path, &format!("invalid option tag {t}"))),
            },
            Item::Unit => Item::Unit,
            Item::Tensor(t) => self.tensor(t.shape(), Some(t.dtype()), path)?,
            Item::QTensor(q) => self.tensor(q.shape(), None, path)?,
            Item::Str(_) => Item::Str(self.string(path)?),
            Item::Bytes(_) => {
                let n = self.len(path)?;
                Item::Bytes(self.take(n, path)?.to_vec())
            }
            Item::U64(_) => Item::U64(self.varint(path)?),
            Item::U8(_) => Item::U8(self.take(1, path)?[0]),
            Item::I64(_) => {
                let z = self.varint(path)?;
                Item::I64(((z >> 1) as i64) ^ -((z & 1) as i64))
            }
            Item::F64(_) => Item::F64(f64::from_le_bytes(self.take(8, path)?.try_into().unwrap_or_default())),
            Item::Bool(_) => match self.take(1, path)?[0] {
                0 => Item::Bool(false),
                1 => Item::Bool(true),
                t => return Err(self.fail(path, &format!("invalid bool byte {t}"))),
            },
            Item::Map(pairs) => {
                let n = self.len(path)?;
                let (ks, vs) = pairs.first().ok_or_else(|| self.fail(path, "cannot read a map without an example entry"))?;
                let outer = std::mem::replace(&mut self.in_map, true);
                let entries = (0..n)
                    .map(|_| {
                        let key = self.read(ks, path)?;
                        let at = match &key {
                            Item::Str(k) => child_path(path, k),
                            _ => path.to_string(),
                        };
                        Ok((key, self.read(vs, &at)?))
                    })
                    .collect::<Result<_>>();
                self.in_map = outer;
                Item::Map(entries?)
            }
            Item::Enum { index: ANY_VARIANT, value, .. } => {
                let found = self.varint(path)?;
                let alternatives = match value.as_ref() {
                    Item::Seq(alts) => alts.as_slice(),
                    _ => &[],
                };
                let chosen = alternatives.iter().find(|a| matches!(a, Item::Enum { index, .. } if *index as u64 == found));
                match chosen {
                    Some(schema) => {
                        self.pos -= varint_len(found);
                        self.read(schema, path)?
                    }
                    None => {
                        let names: Vec<&str> = alternatives
                            .iter()
                            .filter_map(|a| match a {
                                Item::Enum { variant, .. } => Some(&**variant),
                                _ => None,
                            })
                            .collect();
                        return Err(self.fail(path, &format!("expected one of the enum variants {names:?}, found variant index {found}")));
                    }
                }
            }
            Item::Enum { variant, index, value } => {
                let found = self.varint(path)?;
                if found != *index as u64 {
                    return Err(self.fail(path, &format!("expected enum variant {index} ({variant}), found {found}")));
                }
                Item::Enum { variant: variant.clone(), index: *index, value: Box::new(self.read(value, &child_path(path, variant))?) }
            }
        })
    }
}
