//! Named MessagePack (rmp-serde, structs as maps keyed by field name).

use serde::de::{DeserializeSeed, IgnoredAny};
use serde::Deserialize;

use super::item::Item;
use super::wire::{Budget, Raw};
use crate::error::{Error, Result};

pub fn to_bytes(wire: &Item) -> Result<Vec<u8>> {
    rmp_serde::to_vec_named(wire).map_err(|e| Error::invalid("save record", format!("MessagePack encoding failed: {e}")))
}

/// The one MessagePack value `data` holds, read within the record limits.
pub fn from_bytes(data: &[u8]) -> Result<Item> {
    let budget = Budget::new(data.len());
    // Borrowing the input: a binary's length header never allocates more
    // than the bytes the input holds.
    let mut de = rmp_serde::Deserializer::from_read_ref(data);
    let item = Raw::root(&budget)
        .deserialize(&mut de)
        .map_err(|e| budget.error(|| format!("not valid MessagePack ({e})")))?;
    // Anything after the record is damage (or a second record), never ignored.
    match IgnoredAny::deserialize(&mut de) {
        Err(rmp_serde::decode::Error::InvalidMarkerRead(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(item),
        _ => Err(Error::invalid(
            "load record",
            "the file holds more bytes after its MessagePack record: it is damaged or holds two records",
        )),
    }
}
