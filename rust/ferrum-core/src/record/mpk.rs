//! Named MessagePack (rmp-serde, structs as maps keyed by field name).

use super::item::Item;
use super::wire::Raw;
use crate::error::{Error, Result};

pub fn to_bytes(wire: &Item) -> Result<Vec<u8>> {
    rmp_serde::to_vec_named(wire).map_err(|e| Error::invalid("save record", format!("MessagePack encoding failed: {e}")))
}

pub fn from_bytes(data: &[u8]) -> Result<Item> {
    let Raw(item) = rmp_serde::from_slice(data)
        .map_err(|e| Error::invalid("load record", format!("not valid MessagePack ({e})")))?;
    Ok(item)
}
