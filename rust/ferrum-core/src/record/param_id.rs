//! Burn's parameter ids: a u64 written as its 8 little-endian bytes in
//! lowercase base32hex without padding (13 characters). Files from older Burn
//! versions hold UUID strings, which map onto a u64 too.

use crate::error::{Error, Result};

const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";

/// The 13-character text of an id.
pub fn encode(id: u64) -> String {
    let bytes = id.to_le_bytes();
    let mut out = String::with_capacity(13);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in bytes {
        acc = (acc << 8) | b as u32;
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// The u64 of an id's text: base32hex (either case) or a legacy UUID, whose
/// first 8 bytes are read little endian.
pub fn decode(text: &str) -> Result<u64> {
    if let Some(v) = decode_base32hex(text) {
        return Ok(v);
    }
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    if text.len() == 36 && hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        let mut bytes = [0u8; 8];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| Error::invalid("param id", e.to_string()))?;
        }
        return Ok(u64::from_le_bytes(bytes));
    }
    Err(Error::invalid(
        "param id",
        format!("{text:?} is neither 13 base32hex characters nor a UUID"),
    ))
}

/// Burn reads any unpadded base32hex text of up to 8 bytes (older versions
/// wrote 6-byte ids, 10 characters) into the low bytes of the u64.
fn decode_base32hex(text: &str) -> Option<u64> {
    let n = text.len() * 5 / 8;
    // Only lengths an encoder writes: ceil(8 n / 5) characters for n bytes.
    if n == 0 || n > 8 || text.len() != (n * 8).div_ceil(5) {
        return None;
    }
    let (mut acc, mut bits, mut out, mut filled) = (0u64, 0u32, [0u8; 8], 0usize);
    for c in text.bytes() {
        let v = match c.to_ascii_lowercase() {
            d @ b'0'..=b'9' => d - b'0',
            l @ b'a'..=b'v' => l - b'a' + 10,
            _ => return None,
        };
        acc = (acc << 5) | v as u64;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out[filled] = (acc >> bits) as u8;
            filled += 1;
        }
    }
    // The bits past the last byte are padding and must be zero.
    if acc & ((1 << bits) - 1) != 0 {
        return None;
    }
    Some(u64::from_le_bytes(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_is_13_lowercase_chars() {
        for id in [0u64, 1, 42, u64::MAX, 0x0123_4567_89ab_cdef] {
            let s = encode(id);
            assert_eq!(s.len(), 13);
            assert!(s.chars().all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()));
            assert_eq!(decode(&s).unwrap(), id);
            assert_eq!(decode(&s.to_uppercase()).unwrap(), id);
        }
    }

    #[test]
    fn known_values() {
        // 1 as LE bytes 01 00.. : first 5 bits 00000, next 5 bits 00100 -> "04".
        assert_eq!(encode(1), "0400000000000");
        assert_eq!(encode(0), "0000000000000");
    }

    #[test]
    fn legacy_uuid_and_garbage() {
        let v = decode("01000000-0000-0000-0000-000000000000").unwrap();
        assert_eq!(v, 1);
        assert!(decode("not an id").is_err());
        assert!(decode("zzzzzzzzzzzzz").is_err());
        for bad in ["", "0", "04000000000000", "0400000000001", "0400000000!!!"] {
            assert!(decode(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn legacy_six_byte_ids_load_as_burn_reads_them() {
        // Burn's earlier 6-byte ids: 10 characters, the bytes low in the u64.
        let six = [45u8; 6];
        let mut eight = [0u8; 8];
        eight[..6].copy_from_slice(&six);
        let text = &encode(u64::from_le_bytes(eight))[..10];
        assert_eq!(decode(text).unwrap(), u64::from_le_bytes(eight));
    }
}
