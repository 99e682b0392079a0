//! Plain gzip streams around the other encodings (flate2).

use std::io::{Read, Write};

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::error::{Error, Result};

pub fn compress(data: &[u8]) -> Result<Vec<u8>> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(data).and_then(|_| enc.finish()).map_err(|e| Error::invalid("save record", format!("gzip failed: {e}")))
}

pub fn decompress(data: &[u8]) -> Result<Vec<u8>> {
    if data.len() < 2 || data[0] != 0x1f || data[1] != 0x8b {
        return Err(Error::invalid("load record", "not a gzip stream (expected magic bytes 1f 8b)"));
    }
    let mut out = Vec::new();
    GzDecoder::new(data)
        .read_to_end(&mut out)
        .map_err(|e| Error::invalid("load record", format!("corrupted gzip stream ({e})")))?;
    Ok(out)
}
