//! Fit a decoded tree to what a model expects: tensors rebuilt with the
//! model's dtypes, structure and shapes checked, every error naming the
//! parameter path. Runs on the whole tree before any module is touched.

use super::item::{child_path, Item};
use super::precision::{tensor_from_bytes, StoredDType};
use super::quantized;
use crate::dtype::DType;
use crate::error::{Error, Result};

fn fail(path: &str, reason: String) -> Error {
    let at = if path.is_empty() { "the record root" } else { path };
    Error::invalid("load record", format!("{at}: {reason}"))
}

fn is_tensor_data(item: &Item) -> bool {
    item.field("bytes").is_some() && item.field("shape").is_some() && item.field("dtype").is_some()
}

/// Rebuild a tensor from a decoded `TensorData`, as `target` (or the stored
/// type's natural dtype).
fn tensor_of(data: &Item, target: Option<DType>, path: &str) -> Result<Item> {
    let shape = match data.field("shape") {
        Some(Item::Seq(dims)) => dims
            .iter()
            .map(|d| match d {
                Item::U64(v) => Ok(*v as usize),
                other => Err(fail(path, format!("a shape holds integers, found {}", other.kind_name()))),
            })
            .collect::<Result<Vec<usize>>>()?,
        other => return Err(fail(path, format!("expected a shape list, found {}", other.map_or("nothing", Item::kind_name)))),
    };
    let bytes: Vec<u8> = match data.field("bytes") {
        Some(Item::Bytes(b)) => b.clone(),
        // JSON writes bytes as a list of numbers.
        Some(Item::Seq(nums)) => nums
            .iter()
            .map(|n| match n {
                Item::U64(v) if *v < 256 => Ok(*v as u8),
                other => Err(fail(path, format!("tensor bytes must be numbers 0..=255, found {other:?}"))),
            })
            .collect::<Result<Vec<u8>>>()?,
        other => return Err(fail(path, format!("expected tensor bytes, found {}", other.map_or("nothing", Item::kind_name)))),
    };
    let dtype = data.field("dtype");
    if let Some(scheme) = dtype.and_then(quantized::qfloat_scheme) {
        // Burn loads QFloat data as a quantized tensor, whatever the parameter held before.
        let (scheme, store) = quantized::parse_scheme(scheme, path)?;
        return Ok(Item::QTensor(Box::new(quantized::from_bytes(&bytes, &shape, &scheme, store, path)?)));
    }
    let stored = match dtype {
        Some(Item::Str(name)) => StoredDType::from_name(name),
        Some(Item::Enum { variant, .. }) => StoredDType::from_name(variant),
        _ => None,
    }
    .ok_or_else(|| fail(path, format!("unsupported or missing dtype {:?}", data.field("dtype"))))?;
    let t = tensor_from_bytes(&bytes, &shape, stored, target.unwrap_or(stored.default_dtype()), path)
        .map_err(|e| e.with_op("load record"))?;
    Ok(Item::tensor(t))
}

/// The shape of a schema's tensor or quantized tensor.
fn tensor_shape(schema: &Item) -> &[usize] {
    match schema {
        Item::Tensor(t) => t.shape(),
        Item::QTensor(q) => q.shape(),
        _ => &[],
    }
}

/// A record of constants only (nil, or arrays of nils): Burn's `ConstantRecord`s.
fn is_constant(schema: &Item) -> bool {
    match schema {
        Item::Unit | Item::Opt(None) => true,
        Item::Seq(items) | Item::Tuple(items) => items.iter().all(is_constant),
        _ => false,
    }
}

fn conform_items(items: Vec<Item>, path: &str) -> Result<Vec<Item>> {
    items.into_iter().enumerate().map(|(i, v)| conform(v, None, &child_path(path, &i.to_string()))).collect()
}

/// Check `decoded` against `schema` (a record of a freshly built model) and
/// return the tree to load. Without a schema, tensors take their natural dtype.
pub fn conform(decoded: Item, schema: Option<&Item>, path: &str) -> Result<Item> {
    let schema = match schema {
        Some(Item::Unit) | Some(Item::Opt(None)) | None => None,
        Some(Item::Opt(Some(inner))) => {
            return match decoded {
                Item::Unit | Item::Opt(None) => Ok(Item::Opt(None)),
                Item::Opt(Some(v)) => conform(*v, Some(inner), path),
                v => conform(v, Some(inner), path),
            }
        }
        Some(s) => Some(s),
    };
    match (decoded, schema) {
        (Item::Opt(None), _) | (Item::Unit, None) => Ok(Item::Opt(None)),
        (Item::Opt(Some(v)), s) => conform(*v, s, path),
        (Item::QTensor(q), Some(s @ (Item::Tensor(_) | Item::QTensor(_)))) => {
            let want = tensor_shape(s);
            if q.shape() != want {
                return Err(fail(path, format!("the record holds shape {:?}, the model expects {want:?}", q.shape())));
            }
            Ok(Item::QTensor(q))
        }
        (Item::QTensor(q), None) => Ok(Item::QTensor(q)),
        // A float record loads into a quantized parameter as floats (Burn's parameter takes what the record holds).
        (Item::Tensor(t), Some(Item::QTensor(expected))) => {
            if t.shape() != expected.shape() {
                return Err(fail(path, format!("the record holds shape {:?}, the model expects {:?}", t.shape(), expected.shape())));
            }
            Ok(Item::Tensor(t))
        }
        (d, Some(s @ Item::QTensor(_))) => {
            if !is_tensor_data(&d) {
                return Err(fail(path, format!("expected a tensor, found {}", d.kind_name())));
            }
            let t = tensor_of(&d, None, path)?;
            conform(t, Some(s), path)
        }
        (Item::Tensor(t), Some(Item::Tensor(expected))) => {
            if t.shape() != expected.shape() {
                return Err(fail(path, format!("the record holds shape {:?}, the model expects {:?}", t.shape(), expected.shape())));
            }
            Ok(if t.dtype() == expected.dtype() { Item::Tensor(t) } else { Item::tensor(t.cast(expected.dtype())?) })
        }
        (Item::Tensor(t), None) => Ok(Item::Tensor(t)),
        (d, Some(Item::Tensor(expected))) => {
            if !is_tensor_data(&d) {
                return Err(fail(path, format!("expected a tensor, found {}", d.kind_name())));
            }
            let t = tensor_of(&d, Some(expected.dtype()), path)?;
            conform(t, Some(&Item::Tensor(expected.clone())), path)
        }
        (d, None) if is_tensor_data(&d) => tensor_of(&d, None, path),
        (Item::Struct(fields), None) => Ok(Item::Struct(
            fields
                .into_iter()
                .map(|(k, v)| {
                    let p = child_path(path, &k);
                    conform(v, None, &p).map(|v| (k, v))
                })
                .collect::<Result<_>>()?,
        )),
        (Item::Struct(mut fields), Some(Item::Struct(expected))) => {
            let mut out = Vec::with_capacity(expected.len());
            for (name, want) in expected {
                let p = child_path(path, name);
                let found = fields.iter().position(|(k, _)| k == name).map(|i| fields.swap_remove(i).1);
                let v = match found {
                    Some(v) => conform(v, Some(want), &p)?,
                    // Burn ignores the records of constants, so files may leave them out.
                    None if matches!(want, Item::Opt(_)) || is_constant(want) => Item::Opt(None),
                    None => return Err(fail(&p, format!("missing from the record (expected {})", want.kind_name()))),
                };
                out.push((name.clone(), v));
            }
            Ok(Item::Struct(out))
        }
        (Item::Seq(items), None) => Ok(Item::Seq(conform_items(items, path)?)),
        (Item::Tuple(items), None) => Ok(Item::Tuple(conform_items(items, path)?)),
        // A fixed-size array and a list share one shape in MessagePack and JSON.
        (Item::Seq(items) | Item::Tuple(items), Some(s @ (Item::Seq(expected) | Item::Tuple(expected)))) => {
            if items.len() != expected.len() {
                return Err(fail(path, format!("the record holds {} items, the model expects {}", items.len(), expected.len())));
            }
            let out = items
                .into_iter()
                .zip(expected)
                .enumerate()
                .map(|(i, (v, s))| conform(v, Some(s), &child_path(path, &i.to_string())))
                .collect::<Result<_>>()?;
            Ok(if matches!(s, Item::Tuple(_)) { Item::Tuple(out) } else { Item::Seq(out) })
        }
        (Item::Map(pairs), _) => Ok(Item::Map(
            pairs
                .into_iter()
                .map(|(k, v)| {
                    // MessagePack allows any key; a record's keys are names, ids or numbers.
                    if !matches!(k, Item::Str(_) | Item::U64(_) | Item::I64(_) | Item::F64(_) | Item::Bool(_)) {
                        return Err(fail(path, format!("a map key must be a string or a number, found {}", k.kind_name())));
                    }
                    Ok((k, conform(v, None, path)?))
                })
                .collect::<Result<_>>()?,
        )),
        // Self-describing formats write an enum as a map of one entry, `{variant: value}`.
        (Item::Struct(mut fields), Some(Item::Enum { variant: want, index, value: expected })) if fields.len() == 1 => {
            let (variant, value) = fields.remove(0);
            let p = child_path(path, &variant);
            let (index, expected) = if *variant == **want { (*index, Some(&**expected)) } else { (0, None) };
            Ok(Item::Enum { value: Box::new(conform(value, expected, &p)?), variant: variant.into(), index })
        }
        (Item::Enum { variant, index, value }, s) => {
            let p = child_path(path, &variant);
            let expected = match s {
                Some(Item::Enum { variant: want, value: expected, .. }) if *want == variant => Some(&**expected),
                _ => None,
            };
            Ok(Item::Enum { value: Box::new(conform(*value, expected, &p)?), variant, index })
        }
        (d @ (Item::Struct(_) | Item::Seq(_) | Item::Tuple(_)), Some(s)) => Err(fail(path, format!("the record holds {}, the model expects {}", d.kind_name(), s.kind_name()))),
        (leaf, Some(s @ (Item::Struct(_) | Item::Seq(_) | Item::Tuple(_)))) => {
            Err(fail(path, format!("the record holds {}, the model expects {}", leaf.kind_name(), s.kind_name())))
        }
        (leaf, _) => Ok(leaf),
    }
}
