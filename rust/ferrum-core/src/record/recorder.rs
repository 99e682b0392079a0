//! The recorders: a record tree to the bytes of one of Burn's formats and
//! back. Every file starts with Burn's `BurnRecord` header (metadata naming
//! the format, version and precision); decoding checks the whole file before
//! returning anything.

use std::path::Path;

use super::bincode::{self, Reader};
use super::item::Item;
use super::limits::inflate_cap;
use super::precision::Precision;
use super::schema::conform;
use super::wire::encode_tensors;
use super::{file, gzip, json, mpk};
use crate::error::{Error, Result};

/// The Burn version whose files these are.
pub const BURN_VERSION: &str = "0.20.1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    NamedMpk,
    NamedMpkGz,
    Bin,
    BinGz,
    JsonGz,
    PrettyJson,
    BinBytes,
    NamedMpkBytes,
}

impl Format {
    pub fn recorder_name(self) -> &'static str {
        match self {
            Format::NamedMpk => "burn_core::record::file::NamedMpkFileRecorder",
            Format::NamedMpkGz => "burn_core::record::file::NamedMpkGzFileRecorder",
            Format::Bin => "burn_core::record::file::BinFileRecorder",
            Format::BinGz => "burn_core::record::file::BinGzFileRecorder",
            Format::JsonGz => "burn_core::record::file::JsonGzFileRecorder",
            Format::PrettyJson => "burn_core::record::file::PrettyJsonFileRecorder",
            Format::BinBytes => "burn_core::record::memory::BinBytesRecorder",
            Format::NamedMpkBytes => "burn_core::record::memory::NamedMpkBytesRecorder",
        }
    }

    /// The extension a file recorder adds (`None` for in-memory recorders).
    pub fn extension(self) -> Option<&'static str> {
        match self {
            Format::NamedMpk => Some("mpk"),
            Format::NamedMpkGz => Some("mpk.gz"),
            Format::Bin => Some("bin"),
            Format::BinGz => Some("bin.gz"),
            Format::JsonGz => Some("json.gz"),
            Format::PrettyJson => Some("json"),
            Format::BinBytes | Format::NamedMpkBytes => None,
        }
    }

    pub fn from_name(name: &str) -> Result<Format> {
        Ok(match name {
            "named_mpk" => Format::NamedMpk,
            "named_mpk_gz" => Format::NamedMpkGz,
            "bin" => Format::Bin,
            "bin_gz" => Format::BinGz,
            "json_gz" => Format::JsonGz,
            "pretty_json" => Format::PrettyJson,
            "bin_bytes" => Format::BinBytes,
            "named_mpk_bytes" => Format::NamedMpkBytes,
            other => return Err(Error::invalid("record", format!("unknown record format {other:?}"))),
        })
    }

    fn is_bincode(self) -> bool {
        matches!(self, Format::Bin | Format::BinGz | Format::BinBytes)
    }

    fn is_gzip(self) -> bool {
        matches!(self, Format::NamedMpkGz | Format::BinGz | Format::JsonGz)
    }

    fn is_json(self) -> bool {
        matches!(self, Format::JsonGz | Format::PrettyJson)
    }
}

/// Burn's `BurnMetadata`, field for field.
pub fn metadata(format: Format, precision: Precision) -> Item {
    let s = |v: &str| Item::Str(v.to_string());
    Item::Struct(vec![
        ("float".into(), s(precision.float().rust_type_name())),
        ("int".into(), s(precision.int().rust_type_name())),
        ("format".into(), s(&format!("{}<burn_core::record::settings::{}>", format.recorder_name(), precision.settings_name()))),
        ("version".into(), s(BURN_VERSION)),
        ("settings".into(), s(precision.settings_name())),
    ])
}

/// Encode a record tree in `format`, tensors stored under `precision`.
pub fn to_bytes(item: &Item, format: Format, precision: Precision) -> Result<Vec<u8>> {
    let wire = encode_tensors(item, precision)?;
    let meta = metadata(format, precision);
    let raw = if format.is_bincode() {
        let mut out = Vec::new();
        bincode::write(&mut out, &meta)?;
        bincode::write(&mut out, &wire)?;
        out
    } else {
        // `_b` is Burn's PhantomData marker: an empty array in MessagePack, null in JSON.
        let marker = if format.is_json() { Item::Unit } else { Item::Seq(Vec::new()) };
        let top = Item::Struct(vec![("metadata".into(), meta), ("item".into(), wire), ("_b".into(), marker)]);
        match format {
            Format::JsonGz => json::to_bytes(&top, false)?,
            Format::PrettyJson => json::to_bytes(&top, true)?,
            _ => mpk::to_bytes(&top)?,
        }
    };
    if format.is_gzip() { gzip::compress(&raw) } else { Ok(raw) }
}

/// Decode bytes of `format` into a tree fitted to `schema` (required for
/// bincode, which holds no field names).
pub fn from_bytes(data: &[u8], format: Format, schema: Option<&Item>) -> Result<Item> {
    let unzipped;
    let data = if format.is_gzip() {
        unzipped = gzip::decompress(data, inflate_cap(schema, format.is_json(), data.len()))?;
        &unzipped[..]
    } else {
        data
    };
    if format.is_bincode() {
        let schema = schema.ok_or_else(|| {
            Error::invalid("load record", "bincode records hold no field names: loading needs the model's record as a schema")
        })?;
        let mut r = Reader::new(data);
        for field in ["metadata.float", "metadata.int", "metadata.format", "metadata.version", "metadata.settings"] {
            r.string(field)?;
        }
        let item = r.read(schema, "")?;
        if r.remaining() != 0 {
            return Err(Error::invalid(
                "load record",
                format!("{} bytes left after the record: the file holds another model or is corrupted", r.remaining()),
            ));
        }
        return conform(item, Some(schema), "");
    }
    let top = if format.is_json() { json::from_bytes(data)? } else { mpk::from_bytes(data)? };
    let (Some(Item::Struct(_)), Some(item)) = (top.field("metadata"), top.field("item")) else {
        return Err(Error::invalid(
            "load record",
            format!("not a Burn record: expected a map with keys metadata and item, found {}", describe(&top)),
        ));
    };
    conform(item.clone(), schema, "")
}

fn describe(top: &Item) -> String {
    match top {
        Item::Struct(fields) => format!("keys {:?}", fields.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()),
        other => other.kind_name().to_string(),
    }
}

fn with_file(path: &Path, e: Error) -> Error {
    match e {
        Error::InvalidArgument { op, reason } if !reason.starts_with(&path.display().to_string()) => {
            Error::InvalidArgument { op, reason: format!("{}: {reason}", path.display()) }
        }
        other => other,
    }
}

/// Write a record file atomically at exactly `path` (the caller adds the extension).
pub fn save_file(item: &Item, path: &Path, format: Format, precision: Precision) -> Result<()> {
    let bytes = to_bytes(item, format, precision).map_err(|e| with_file(path, e))?;
    file::write_atomic(path, &bytes).map_err(|e| Error::file("save record", path, &e))
}

/// Read and decode a whole record file; every error names the file.
pub fn load_file(path: &Path, format: Format, schema: Option<&Item>) -> Result<Item> {
    let data = file::read(path)?;
    from_bytes(&data, format, schema).map_err(|e| with_file(path, e))
}
