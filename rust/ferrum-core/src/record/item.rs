//! The record tree: what a module (or optimizer) record is, independent of
//! the file format it is written in.

use crate::quant::QTensor;
use crate::tensor::Tensor;

/// One node of a record. A module is a `Struct` of its fields in declaration
/// order; a parameter is `Struct[("id", Str), ("param", Tensor)]`.
/// `Bytes` appears only in decoded files, before tensors are rebuilt.
#[derive(Debug, Clone)]
pub enum Item {
    Struct(Vec<(String, Item)>),
    Seq(Vec<Item>),
    /// A fixed-size sequence (Rust arrays and tuples): bincode writes no length.
    Tuple(Vec<Item>),
    Opt(Option<Box<Item>>),
    Unit,
    /// Boxed: a decoded file may hold millions of nodes, and every node is
    /// as large as the largest variant.
    Tensor(Box<Tensor>),
    /// A quantized tensor: Burn's `TensorData` of dtype `QFloat(scheme)` in files.
    QTensor(Box<QTensor>),
    Str(String),
    /// A `u8` (a `BlockSize` dim): bincode writes it as one raw byte, not a varint.
    U8(u8),
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    Bytes(Vec<u8>),
    Map(Vec<(Item, Item)>),
    Enum { variant: Box<str>, index: u32, value: Box<Item> },
}

impl Item {
    pub fn tensor(t: Tensor) -> Item {
        Item::Tensor(Box::new(t))
    }

    /// The value of a struct field, if this is a struct holding it.
    pub fn field(&self, name: &str) -> Option<&Item> {
        match self {
            Item::Struct(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A short name of the node's kind, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Item::Struct(_) => "a struct",
            Item::Seq(_) => "a list",
            Item::Tuple(_) => "a tuple",
            Item::Opt(_) => "an option",
            Item::Unit => "nil",
            Item::Tensor(_) => "a tensor",
            Item::QTensor(_) => "a quantized tensor",
            Item::Str(_) => "a string",
            Item::U64(_) | Item::I64(_) | Item::U8(_) => "an integer",
            Item::F64(_) => "a float",
            Item::Bool(_) => "a bool",
            Item::Bytes(_) => "bytes",
            Item::Map(_) => "a map",
            Item::Enum { .. } => "an enum",
        }
    }
}

/// The dotted path of a child, as users name parameters (`fc1.weight`, `layers.0`).
pub fn child_path(parent: &str, child: &str) -> String {
    if parent.is_empty() { child.to_string() } else { format!("{parent}.{child}") }
}
