//! The tree as files hold it: tensors become Burn's `TensorData`
//! (`{bytes, shape, dtype}`), and serde writes and reads any tree, so
//! MessagePack and JSON share one encoding of the structure.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, SerializeTuple, Serializer};

use super::item::Item;
use super::limits::{node_budget, MAX_DEPTH};
use super::precision::{stored_dtype, tensor_to_bytes, Precision, StoredDType};

/// Replace every tensor by its `TensorData` struct under `precision`.
pub fn encode_tensors(item: &Item, precision: Precision) -> crate::error::Result<Item> {
    let all = |items: &[Item]| items.iter().map(|v| encode_tensors(v, precision)).collect::<crate::error::Result<Vec<_>>>();
    Ok(match item {
        Item::Tensor(t) => {
            let stored = stored_dtype(t.dtype(), precision);
            tensor_data(tensor_to_bytes(t, stored)?, t.shape(), stored)
        }
        // Burn converts float tensors to the precision setting, never quantized ones.
        Item::QTensor(q) => super::quantized::tensor_data(q),
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
            Item::U8(v) => s.serialize_u8(*v),
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
            Item::Tensor(_) | Item::QTensor(_) => Err(ser::Error::custom("tensors must be encoded as TensorData before serialization")),
        }
    }
}

/// Why decoding a self-describing file stopped short of the format's own
/// errors: the record passed one of the [`limits`](super::limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    Depth,
    Nodes(usize),
}

/// The limits one decode runs under, shared by every node it reads.
pub struct Budget {
    nodes_left: Cell<usize>,
    /// Set when the value just read was a list of numbers kept as bytes.
    compacted: Cell<bool>,
    exceeded: Cell<Option<Exceeded>>,
    input_len: usize,
}

impl Budget {
    pub fn new(input_len: usize) -> Self {
        Budget { nodes_left: Cell::new(node_budget(input_len)), compacted: Cell::new(false), exceeded: Cell::new(None), input_len }
    }

    fn take<E: de::Error>(&self) -> Result<(), E> {
        self.take_n(1)
    }

    fn take_n<E: de::Error>(&self, n: usize) -> Result<(), E> {
        match self.nodes_left.get().checked_sub(n) {
            Some(n) => {
                self.nodes_left.set(n);
                Ok(())
            }
            None => self.stop(Exceeded::Nodes(node_budget(self.input_len))),
        }
    }

    fn refund(&self) {
        self.nodes_left.set(self.nodes_left.get() + 1);
    }

    fn stop<T, E: de::Error>(&self, why: Exceeded) -> Result<T, E> {
        self.exceeded.set(Some(why));
        Err(E::custom("record limit exceeded"))
    }

    /// The error of a failed decode: the limit it passed, or the format's
    /// own error in `format_error`.
    pub fn error(&self, format_error: impl FnOnce() -> String) -> crate::error::Error {
        let reason = match self.exceeded.get() {
            Some(Exceeded::Depth) => format!("the record nests deeper than {MAX_DEPTH} levels: it is damaged or not a record"),
            Some(Exceeded::Nodes(n)) => format!(
                "the record holds more than {n} values for its {} bytes: it is damaged or not a record",
                self.input_len
            ),
            None => format_error(),
        };
        crate::error::Error::invalid("load record", reason)
    }
}

/// Reads one node of a self-describing file (MessagePack or JSON) at `depth`.
pub struct Raw<'b> {
    budget: &'b Budget,
    depth: usize,
    /// The value of a `bytes` key: a list of small integers is kept as bytes
    /// (JSON writes tensor bytes as numbers), not as one node per number.
    byte_list: bool,
}

impl<'b> Raw<'b> {
    pub fn root(budget: &'b Budget) -> Self {
        Raw { budget, depth: 0, byte_list: false }
    }

    fn child(&self, byte_list: bool) -> Raw<'b> {
        Raw { budget: self.budget, depth: self.depth + 1, byte_list }
    }

    fn enter<E: de::Error>(&self) -> Result<(), E> {
        if self.depth >= MAX_DEPTH {
            return self.budget.stop(Exceeded::Depth);
        }
        self.budget.take()
    }
}

impl<'de> DeserializeSeed<'de> for Raw<'_> {
    type Value = Item;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Item, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Raw<'_> {
    type Value = Item;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Item, E> {
        self.budget.take()?;
        Ok(Item::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Item, E> {
        self.budget.take()?;
        Ok(if v >= 0 { Item::U64(v as u64) } else { Item::I64(v) })
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Item, E> {
        self.budget.take()?;
        Ok(Item::U64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Item, E> {
        self.budget.take()?;
        Ok(Item::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Item, E> {
        self.budget.take()?;
        Ok(Item::Str(v.to_string()))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Item, E> {
        self.budget.take()?;
        Ok(Item::Bytes(v.to_vec()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Item, E> {
        self.budget.take()?;
        Ok(Item::Unit)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Item, E> {
        self.budget.take()?;
        Ok(Item::Unit)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Item, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
        self.enter()?;
        // No capacity from the size hint: a corrupted length must not allocate.
        let mut bytes = Vec::new();
        if self.byte_list {
            loop {
                match seq.next_element_seed(self.child(false))? {
                    Some(Item::U64(v)) if v < 256 => {
                        self.budget.refund();
                        bytes.push(v as u8);
                    }
                    Some(other) => {
                        self.budget.take_n(bytes.len())?;
                        let mut items: Vec<Item> = bytes.drain(..).map(|b| Item::U64(b as u64)).collect();
                        items.push(other);
                        return self.rest_of_seq(items, seq);
                    }
                    None if bytes.is_empty() => return Ok(Item::Seq(Vec::new())),
                    None => {
                        self.budget.compacted.set(true);
                        return Ok(Item::Bytes(bytes));
                    }
                }
            }
        }
        self.rest_of_seq(Vec::new(), seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
        self.enter()?;
        let mut pairs = Vec::new();
        let mut compacted = Vec::new();
        while let Some(k) = map.next_key_seed(self.child(false))? {
            let byte_list = matches!(&k, Item::Str(s) if s == "bytes");
            let v = map.next_value_seed(self.child(byte_list))?;
            if self.budget.compacted.replace(false) {
                compacted.push(pairs.len());
            }
            pairs.push((k, v));
        }
        // A list of numbers kept as bytes belongs to tensor data only: any
        // other struct gets its list back.
        let is_tensor_data = ["shape", "dtype"].iter().all(|name| pairs.iter().any(|(k, _)| matches!(k, Item::Str(s) if s == name)));
        if !is_tensor_data {
            for i in compacted {
                if let Item::Bytes(b) = &pairs[i].1 {
                    self.budget.take_n(b.len())?;
                    pairs[i].1 = Item::Seq(b.iter().map(|x| Item::U64(*x as u64)).collect());
                }
            }
        }
        if !pairs.iter().all(|(k, _)| matches!(k, Item::Str(_))) {
            return Ok(Item::Map(pairs));
        }
        Ok(Item::Struct(pairs.into_iter().map(|(k, v)| (if let Item::Str(s) = k { s } else { String::new() }, v)).collect()))
    }
}

impl Raw<'_> {
    fn rest_of_seq<'de, A: SeqAccess<'de>>(&self, mut items: Vec<Item>, mut seq: A) -> Result<Item, A::Error> {
        while let Some(v) = seq.next_element_seed(self.child(false))? {
            items.push(v);
        }
        Ok(Item::Seq(items))
    }
}
