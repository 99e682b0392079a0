//! Plain gzip streams around the other encodings (flate2). Inflating is
//! streamed and stops at a limit, so a small hostile file cannot expand into
//! gigabytes; the file must hold exactly one gzip member, as Burn writes.

use std::io::{Read, Write};

use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use super::limits::InflateCap;
use crate::error::{Error, Result};

pub fn compress(data: &[u8]) -> Result<Vec<u8>> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(data).and_then(|_| enc.finish()).map_err(|e| Error::invalid("save record", format!("gzip failed: {e}")))
}

fn fail(reason: String) -> Error {
    Error::invalid("load record", reason)
}

fn grow(out: &mut Vec<u8>, capacity: usize) -> Result<()> {
    out.try_reserve_exact(capacity.saturating_sub(out.len()))
        .map_err(|_| fail(format!("cannot allocate {capacity} bytes to inflate the gzip stream")))
}

/// The one gzip member `data` holds, inflated to at most `cap` bytes.
pub fn decompress(data: &[u8], cap: InflateCap) -> Result<Vec<u8>> {
    if data.len() < 2 || data[0] != 0x1f || data[1] != 0x8b {
        return Err(fail("not a gzip stream (expected magic bytes 1f 8b)".into()));
    }
    let limit = cap.bytes();
    // The trailer's size (mod 2^32) sizes the buffer of an honest file in one
    // allocation; a lying one reserves at most the cap, and the pages it never
    // writes cost nothing.
    let declared = data.len().checked_sub(4).map_or(0, |at| {
        u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]) as usize
    });
    let mut out = Vec::new();
    grow(&mut out, declared.min(limit))?;
    let mut decoder = GzDecoder::new(data);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match decoder.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(fail(format!("corrupted gzip stream ({e})"))),
        };
        if n > limit - out.len() {
            return Err(fail(format!("the gzip stream inflates to {}", cap.explain())));
        }
        if out.capacity() - out.len() < n {
            // Doubling, but never past the limit: the buffer stays within it.
            let capacity = out.capacity().saturating_mul(2).max(out.len() + n).min(limit);
            grow(&mut out, capacity)?;
        }
        out.extend_from_slice(&chunk[..n]);
    }
    let rest = decoder.into_inner();
    if !rest.is_empty() {
        let at = data.len() - rest.len();
        let what = if rest.starts_with(&[0x1f, 0x8b]) { "a second gzip member" } else { "data that is not gzip" };
        return Err(fail(format!(
            "{} bytes after the gzip stream, which ends at byte {at}: {what} (a record file holds exactly one)",
            rest.len()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_limits() {
        let data = vec![7u8; 100_000];
        let gz = compress(&data).unwrap();
        assert_eq!(decompress(&gz, InflateCap::Model(100_000)).unwrap(), data);
        let err = decompress(&gz, InflateCap::Model(99_999)).unwrap_err().to_string();
        assert!(err.contains("inflates to more than the 99999 bytes a record of this model can take"), "{err}");
        let err = decompress(&gz, InflateCap::Default(1000)).unwrap_err().to_string();
        assert!(err.contains("without a model"), "{err}");
    }

    #[test]
    fn one_member_only() {
        let mut gz = compress(b"record").unwrap();
        let end = gz.len();
        gz.extend(compress(b"another").unwrap());
        let err = decompress(&gz, InflateCap::Model(100)).unwrap_err().to_string();
        assert!(err.contains(&format!("ends at byte {end}: a second gzip member")), "{err}");
        gz.truncate(end);
        gz.extend_from_slice(b"junk");
        let err = decompress(&gz, InflateCap::Model(100)).unwrap_err().to_string();
        assert!(err.contains("4 bytes after the gzip stream") && err.contains("not gzip"), "{err}");
    }

    #[test]
    fn a_lying_trailer_reserves_at_most_the_cap() {
        let mut gz = compress(b"small").unwrap();
        let n = gz.len();
        gz[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = decompress(&gz, InflateCap::Model(1 << 20)).unwrap_err().to_string();
        assert!(err.contains("corrupted gzip stream"), "{err}");
    }
}
