//! What decoding an untrusted record may cost. Files are untrusted input: a
//! few megabytes must never make the decoder nest without end, build more
//! nodes than the bytes can describe, or inflate a gzip stream without limit.

use super::bincode::ANY_VARIANT;
use super::item::Item;

/// The deepest a record nests. Burn's modules nest a few levels (model,
/// layers, layer, sub-module, parameter, tensor data, shape); a deeper file
/// is damaged or hostile, and refusing it keeps every recursive walk short
/// (decoding takes about 2.5 KB of stack a level in a release build, 20 KB
/// in a debug one).
pub const MAX_DEPTH: usize = 100;

/// Nodes (maps, lists, numbers, strings, nils) any record may hold, whatever
/// its size. Tensor bytes are one node however long.
const MIN_NODES: usize = 1 << 20;

/// Beyond [`MIN_NODES`], at most one node per this many input bytes: a real
/// record spends its bytes on tensors, not on millions of nils.
const BYTES_PER_NODE: usize = 4;

/// The node budget of a record of `input_len` bytes, which bounds the
/// decoder's memory by the size of its input.
pub fn node_budget(input_len: usize) -> usize {
    MIN_NODES.saturating_add(input_len / BYTES_PER_NODE)
}

/// Without a model to size a record, a gzip stream may inflate to this many
/// times its compressed size (real records compress less than 4 times) ...
const MAX_RATIO: usize = 64;

/// ... and to at least this many bytes.
const MIN_INFLATED: usize = 256 << 20;

/// Room for the metadata and for keys a newer writer may add.
const SLACK: usize = 1 << 20;

/// Per node of a schema: a field name, a parameter id, a shape, a dtype.
const NODE_BYTES: usize = 256;

/// The most bytes a gzipped record may inflate to, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InflateCap {
    /// Sized from the model the record loads into.
    Model(usize),
    /// Without a model (or for an optimizer record, whose entry count the
    /// schema does not tell): a multiple of the compressed size.
    Default(usize),
}

impl InflateCap {
    pub fn bytes(self) -> usize {
        match self {
            InflateCap::Model(n) | InflateCap::Default(n) => n,
        }
    }

    /// Why the limit is what it is, and what to do when a real file passes it.
    pub fn explain(self) -> String {
        match self {
            InflateCap::Model(n) => format!(
                "more than the {n} bytes a record of this model can take: the file is damaged, \
                 a decompression bomb, or the record of a larger model"
            ),
            InflateCap::Default(n) => format!(
                "more than {n} bytes, the limit for a record loaded without a model \
                 ({MAX_RATIO} times its compressed size, at least {} MiB): the file is damaged or a \
                 decompression bomb; a larger record loads with its model as the schema",
                MIN_INFLATED >> 20
            ),
        }
    }
}

/// The inflate limit of a gzipped record of `compressed_len` bytes, loaded
/// against `schema` when there is one. `json` records write each tensor
/// byte as up to four characters (`255,`).
pub fn inflate_cap(schema: Option<&Item>, json: bool, compressed_len: usize) -> InflateCap {
    let per_byte = if json { 4 } else { 1 };
    match schema.and_then(|s| most_bytes(s, per_byte)) {
        Some(n) => InflateCap::Model(n.saturating_add(SLACK)),
        None => InflateCap::Default(compressed_len.saturating_mul(MAX_RATIO).max(MIN_INFLATED)),
    }
}

/// The most bytes the record of `schema` takes in a file, whatever the
/// stored dtypes (up to 8 bytes an element); `None` when the schema cannot
/// tell (a map: an optimizer record holds one entry per parameter).
fn most_bytes(schema: &Item, per_byte: usize) -> Option<usize> {
    let sum = |items: &[Item]| items.iter().try_fold(NODE_BYTES, |acc, v| acc.checked_add(most_bytes(v, per_byte)?));
    match schema {
        Item::Tensor(t) => t.numel().checked_mul(8 * per_byte)?.checked_add(NODE_BYTES),
        // A quantized parameter may load a float record of any stored dtype.
        Item::QTensor(q) => q.shape().iter().product::<usize>().checked_mul(8 * per_byte)?.checked_add(NODE_BYTES),
        Item::Struct(fields) => {
            fields.iter().try_fold(NODE_BYTES, |acc, (_, v)| acc.checked_add(most_bytes(v, per_byte)?))
        }
        Item::Seq(items) | Item::Tuple(items) => sum(items),
        Item::Opt(Some(v)) => most_bytes(v, per_byte)?.checked_add(NODE_BYTES),
        Item::Enum { index: ANY_VARIANT, value, .. } => match value.as_ref() {
            Item::Seq(alternatives) => alternatives
                .iter()
                .map(|a| most_bytes(a, per_byte))
                .try_fold(0usize, |acc, n| Some(acc.max(n?)))?
                .checked_add(NODE_BYTES),
            other => most_bytes(other, per_byte),
        },
        Item::Enum { value, .. } => most_bytes(value, per_byte)?.checked_add(NODE_BYTES),
        Item::Map(_) => None,
        Item::Str(s) => s.len().checked_add(NODE_BYTES),
        Item::Bytes(b) => b.len().checked_mul(per_byte)?.checked_add(NODE_BYTES),
        _ => Some(NODE_BYTES),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor;

    #[test]
    fn a_model_sizes_its_record() {
        let t = Tensor::from_vec(vec![0f32; 1000], &[10, 100]).unwrap();
        let schema = Item::Struct(vec![("w".into(), Item::Struct(vec![("id".into(), Item::Str("x".into())), ("param".into(), Item::tensor(t))]))]);
        let InflateCap::Model(mpk) = inflate_cap(Some(&schema), false, 10) else { panic!("expected a model cap") };
        let InflateCap::Model(json) = inflate_cap(Some(&schema), true, 10) else { panic!("expected a model cap") };
        assert!((8000..8000 + SLACK + 2048).contains(&mpk), "{mpk}");
        assert!((32000..32000 + SLACK + 2048).contains(&json), "{json}");
    }

    #[test]
    fn without_a_model_or_with_a_map_the_cap_follows_the_compressed_size() {
        assert_eq!(inflate_cap(None, false, 10), InflateCap::Default(MIN_INFLATED));
        assert_eq!(inflate_cap(None, false, 100 << 20), InflateCap::Default(6400 << 20));
        let map = Item::Map(vec![(Item::Str(String::new()), Item::Unit)]);
        assert_eq!(inflate_cap(Some(&map), false, 10), InflateCap::Default(MIN_INFLATED));
    }

    #[test]
    fn node_budget_grows_with_the_input() {
        assert_eq!(node_budget(0), MIN_NODES);
        assert_eq!(node_budget(40 << 20), MIN_NODES + (10 << 20));
        assert_eq!(node_budget(usize::MAX), MIN_NODES + usize::MAX / 4);
    }
}
