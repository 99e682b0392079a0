//! Fuzz targets: every parser of untrusted bytes, fed arbitrary input. The
//! libFuzzer crate (`fuzz/`, run by `cargo fuzz`) and the bounded replay and
//! mutation test (`tests/fuzz_records.rs`) call these same functions, so a
//! crasher found by either is replayed by both.
//!
//! Each target may return an error for any input, never panic, abort, hang or
//! allocate without bound; what decodes must survive a round trip.

use super::bincode::ANY_VARIANT;
use super::item::Item;
use super::precision::Precision;
use super::{from_bytes, gzip, limits, param_id, to_bytes, Format};
use crate::dtype::DType;
use crate::kernels::copy::contiguous_values;
use crate::tensor::Tensor;

/// A fuzz target: any bytes in, no panic out.
pub type Target = fn(&[u8]);

/// The targets, by name (the folder names of the corpus).
pub const TARGETS: [(&str, Target); 3] =
    [("record_self_describing", self_describing), ("record_bincode", bincode), ("param_id", param_id_text)];

/// The first byte picks the format, the rest is the file: named MessagePack,
/// JSON, and both gzipped, decoded without a model (tensors take the shapes
/// the file holds) and then against a model.
pub fn self_describing(data: &[u8]) {
    let Some((&which, file)) = data.split_first() else { return };
    let format = [Format::NamedMpk, Format::PrettyJson, Format::NamedMpkGz, Format::JsonGz][which as usize % 4];
    if let Ok(item) = from_bytes(file, format, None) {
        round_trip(&item, format, None);
    }
    if which & 4 != 0 {
        let schema = model_schema();
        if let Ok(item) = from_bytes(file, format, Some(&schema)) {
            round_trip(&item, format, Some(&schema));
        }
    }
}

/// bincode (plain, or gzipped when the first byte is odd) against the record
/// of a small model and against an Adam optimizer's record schema, whose
/// tensors take the shapes the file holds. (The decoded tree drops the marks
/// bincode needs to be written again, which the Python layer adds from the
/// schema, so there is no round trip here.)
pub fn bincode(data: &[u8]) {
    let Some((&which, file)) = data.split_first() else { return };
    let format = if which & 1 == 0 { Format::BinBytes } else { Format::BinGz };
    let schema = if which & 2 == 0 { model_schema() } else { optimizer_schema() };
    if let Ok(item) = from_bytes(file, format, Some(&schema)) {
        assert!(same(&item, &item));
    }
}

/// Parameter id text, and gzip on its own (its limits and its one-member rule).
pub fn param_id_text(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(id) = param_id::decode(text) {
            // Burn's text of the id decodes back to it.
            assert_eq!(param_id::decode(&param_id::encode(id)).ok(), Some(id), "{text:?}");
        }
    }
    if let Ok(out) = gzip::decompress(data, limits::InflateCap::Model(1 << 20)) {
        assert!(out.len() <= 1 << 20);
    }
}

/// What decoded encodes (in double precision: every stored value exactly),
/// and decodes again to the same tree.
fn round_trip(item: &Item, format: Format, schema: Option<&Item>) {
    let bytes = to_bytes(item, format, Precision::Double).unwrap_or_else(|e| panic!("a decoded record does not encode: {e}"));
    let again = from_bytes(&bytes, format, schema).unwrap_or_else(|e| panic!("a decoded record does not load back: {e}"));
    assert!(same(item, &again), "a record changed in a round trip:\n{item:?}\n{again:?}");
}

fn values(t: &Tensor) -> Vec<f64> {
    let t = t.cast(DType::F64).unwrap_or_else(|e| panic!("{e}"));
    let values = contiguous_values::<f64>("fuzz", &t).unwrap_or_else(|e| panic!("{e}")).into_owned();
    assert_eq!(values.len(), t.shape().iter().product::<usize>());
    values
}

/// Structural equality; tensors by shape, kind and values (a stored F32 may
/// come back F64), NaN equal to NaN.
fn same(a: &Item, b: &Item) -> bool {
    let all = |x: &[Item], y: &[Item]| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q));
    let number = |u: f64, v: f64| u == v || (u.is_nan() && v.is_nan());
    match (a, b) {
        (Item::Tensor(x), Item::Tensor(y)) => {
            x.shape() == y.shape() && x.kind() == y.kind() && values(x).into_iter().zip(values(y)).all(|(u, v)| number(u, v))
        }
        (Item::QTensor(x), Item::QTensor(y)) => {
            x.shape() == y.shape() && x.scheme() == y.scheme() && x.raw_values() == y.raw_values() && x.raw_scales() == y.raw_scales()
        }
        (Item::U8(x), Item::U8(y)) => x == y,
        (Item::Struct(x), Item::Struct(y)) => x.len() == y.len() && x.iter().zip(y).all(|((k, p), (l, q))| k == l && same(p, q)),
        (Item::Map(x), Item::Map(y)) => x.len() == y.len() && x.iter().zip(y).all(|((k, p), (l, q))| same(k, l) && same(p, q)),
        (Item::Seq(x), Item::Seq(y)) | (Item::Tuple(x), Item::Tuple(y)) => all(x, y),
        (Item::Opt(x), Item::Opt(y)) => match (x, y) {
            (Some(p), Some(q)) => same(p, q),
            (None, None) => true,
            _ => false,
        },
        (Item::Enum { variant: v, index: i, value: p }, Item::Enum { variant: w, index: j, value: q }) => {
            v == w && i == j && same(p, q)
        }
        (Item::F64(x), Item::F64(y)) => number(*x, *y),
        (Item::Str(x), Item::Str(y)) => x == y,
        (Item::U64(x), Item::U64(y)) => x == y,
        (Item::I64(x), Item::I64(y)) => x == y,
        (Item::Bool(x), Item::Bool(y)) => x == y,
        (Item::Bytes(x), Item::Bytes(y)) => x == y,
        (Item::Unit, Item::Unit) => true,
        _ => false,
    }
}

fn param(shape: &[usize]) -> Item {
    let n = shape.iter().product();
    let t = Tensor::from_vec(vec![0f32; n], shape).unwrap_or_else(|e| panic!("{e}"));
    Item::Struct(vec![("id".into(), Item::Str(param_id::encode(1))), ("param".into(), Item::tensor(t))])
}

/// A small model: a linear layer with an optional bias, and a list of layers.
pub fn model_schema() -> Item {
    let linear = |i: usize, o: usize| Item::Struct(vec![("weight".into(), param(&[i, o])), ("bias".into(), Item::Opt(Some(Box::new(param(&[o])))))]);
    Item::Struct(vec![("first".into(), linear(3, 4)), ("layers".into(), Item::Seq(vec![linear(4, 2), linear(2, 2)])), ("scale".into(), Item::Unit)])
}

/// Adam's record schema: `{param id: {V1: {Rank<N>: {momentum: {time, moment_1, moment_2}}}}}`.
pub fn optimizer_schema() -> Item {
    let t = Tensor::from_vec(vec![0f32], &[1]).unwrap_or_else(|e| panic!("{e}"));
    let state = Item::Struct(vec![(
        "momentum".into(),
        Item::Struct(vec![("time".into(), Item::U64(0)), ("moment_1".into(), Item::tensor(t.clone())), ("moment_2".into(), Item::tensor(t))]),
    )]);
    let ranks = (0..=8).map(|r| Item::Enum { variant: format!("Rank{r}").into(), index: r, value: Box::new(state.clone()) }).collect();
    let any_rank = Item::Enum { variant: "Rank".into(), index: ANY_VARIANT, value: Box::new(Item::Seq(ranks)) };
    Item::Map(vec![(Item::Str(String::new()), Item::Enum { variant: "V1".into(), index: 0, value: Box::new(any_rank) })])
}
