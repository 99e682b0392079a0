//! JSON, compact or pretty (serde_json); tensor bytes are arrays of numbers.

use super::item::Item;
use super::wire::Raw;
use crate::error::{Error, Result};

pub fn to_bytes(wire: &Item, pretty: bool) -> Result<Vec<u8>> {
    let r = if pretty { serde_json::to_vec_pretty(wire) } else { serde_json::to_vec(wire) };
    r.map_err(|e| Error::invalid("save record", format!("JSON encoding failed: {e}")))
}

pub fn from_bytes(data: &[u8]) -> Result<Item> {
    let Raw(item) = serde_json::from_slice(data).map_err(|e| Error::invalid("load record", format!("not valid JSON ({e})")))?;
    Ok(item)
}
