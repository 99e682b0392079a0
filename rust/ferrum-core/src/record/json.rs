//! JSON, compact or pretty (serde_json); tensor bytes are arrays of numbers.

use serde::de::DeserializeSeed;

use super::item::Item;
use super::wire::{Budget, Raw};
use crate::error::{Error, Result};

pub fn to_bytes(wire: &Item, pretty: bool) -> Result<Vec<u8>> {
    let r = if pretty { serde_json::to_vec_pretty(wire) } else { serde_json::to_vec(wire) };
    r.map_err(|e| Error::invalid("save record", format!("JSON encoding failed: {e}")))
}

/// The one JSON value `data` holds (trailing whitespace only), read within the record limits.
pub fn from_bytes(data: &[u8]) -> Result<Item> {
    let budget = Budget::new(data.len());
    let mut de = serde_json::Deserializer::from_slice(data);
    let item = Raw::root(&budget).deserialize(&mut de).and_then(|item| de.end().map(|_| item));
    item.map_err(|e| budget.error(|| format!("not valid JSON ({e})")))
}
