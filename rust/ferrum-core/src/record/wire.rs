//! The tree as files hold it: tensors become Burn's `TensorData`
//! (`{bytes, shape, dtype}`), and serde writes and reads any tree, so
//! MessagePack and JSON share one encoding of the structure.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, SerializeTuple, Serializer};

use super::item::Item;
use super::precision::{stored_dtype, tensor_to_bytes, Precision, StoredDType};

/// Replace every tensor by its `TensorData` struct under `precision`.
pub fn encode_tensors(item: &Item, precision: Precision) -> crate::error::Result<Item> {
    let all = |items: &[Item]| items.iter().map(|v| encode_tensors(v, precision)).collect::<crate::error::Result<Vec<_>>>();
    Ok(match item {
        Item::Tensor(t) => {
            let stored = stored_dtype(t.dtype(), precision);
            tensor_data(tensor_to_bytes(t, stored)?, t.shape(), stored)
        }
        Item::Struct(fields) => {
            Item::Struct(fields.iter().map(|(k, v)| Ok((k.clone(), encode_tensors(v, precision)?))).collect::<crate::error::Result<_>>()?)
        }
        Item::Seq(items) => Item::Seq(all(items)?),
        Item::Tuple(items) => Item::Tuple(all(items)?),
        Item::Opt(v) => Item::Opt(v.as_ref().map(|v| encode_tensors(v, precision).map(Box::new)).transpose()?),
        Item::Map(pairs) => {
            Item::Map(pairs.iter().map(|(k, v)| Ok((encode_tensors(k, precision)?, encode_tensors(v, precision)?))).collect::<crate::error::Result<_>>()?)
        }
        Item::Enum { variant, index, value } => {
            Item::Enum { variant: variant.clone(), index: *index, value: Box::new(encode_tensors(value, precision)?) }
        }
        other => other.clone(),
    })
}

/// Burn's `TensorData { bytes, shape, dtype }`.
pub fn tensor_data(bytes: Vec<u8>, shape: &[usize], stored: StoredDType) -> Item {
    Item::Struct(vec![
        ("bytes".into(), Item::Bytes(bytes)),
        ("shape".into(), Item::Seq(shape.iter().map(|d| Item::U64(*d as u64)).collect())),
        ("dtype".into(), Item::Enum { variant: stored.name().into(), index: stored.index(), value: Box::new(Item::Unit) }),
    ])
}

impl Serialize for Item {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            // Maps keyed by field name: exactly what rmp-serde's named structs write.
            Item::Struct(fields) => {
                let mut m = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Item::Map(pairs) => {
                let mut m = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Item::Seq(items) => {
                let mut q = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    q.serialize_element(v)?;
                }
                q.end()
            }
            Item::Tuple(items) => {
                let mut q = s.serialize_tuple(items.len())?;
                for v in items {
                    q.serialize_element(v)?;
                }
                q.end()
            }
            Item::Opt(None) => s.serialize_none(),
            Item::Opt(Some(v)) => s.serialize_some(v.as_ref()),
            Item::Unit => s.serialize_unit(),
            Item::Str(v) => s.serialize_str(v),
            Item::U64(v) => s.serialize_u64(*v),
            Item::I64(v) => s.serialize_i64(*v),
            Item::F64(v) => s.serialize_f64(*v),
            Item::Bool(v) => s.serialize_bool(*v),
            Item::Bytes(v) => s.serialize_bytes(v),
            // serde's externally tagged enums: a unit variant is its name,
            // any other is `{name: value}`.
            Item::Enum { variant, value, .. } => match value.as_ref() {
                Item::Unit => s.serialize_str(variant),
                v => {
                    let mut m = s.serialize_map(Some(1))?;
                    m.serialize_entry(variant, v)?;
                    m.end()
                }
            },
            Item::Tensor(_) => Err(ser::Error::custom("tensors must be encoded as TensorData before serialization")),
        }
    }
}

/// A tree read from a self-describing file (MessagePack or JSON).
pub struct Raw(pub Item);

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor).map(Raw)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Item;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Item, E> {
        Ok(Item::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Item, E> {
        Ok(if v >= 0 { Item::U64(v as u64) } else { Item::I64(v) })
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Item, E> {
        Ok(Item::U64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Item, E> {
        Ok(Item::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Item, E> {
        Ok(Item::Str(v.to_string()))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Item, E> {
        Ok(Item::Bytes(v.to_vec()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Item, E> {
        Ok(Item::Unit)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Item, E> {
        Ok(Item::Unit)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Item, D::Error> {
        d.deserialize_any(RawVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
        // No capacity from the size hint: a corrupted length must not allocate.
        let mut items = Vec::new();
        while let Some(Raw(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Item::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
        let mut pairs = Vec::new();
        while let Some((Raw(k), Raw(v))) = map.next_entry()? {
            pairs.push((k, v));
        }
        if pairs.iter().all(|(k, _)| matches!(k, Item::Str(_))) {
            Ok(Item::Struct(
                pairs.into_iter().map(|(k, v)| (if let Item::Str(s) = k { s } else { String::new() }, v)).collect(),
            ))
        } else {
            Ok(Item::Map(pairs))
        }
    }
}
