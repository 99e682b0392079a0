//! Facts about the x86 core that change how a loop is best compiled, read
//! with `cpuid` once.
//!
//! AMD's Zen 4 (family 19h with AVX-512) runs each 512-bit operation as two
//! 256-bit halves. From cache that costs nothing, but a loop that streams
//! from DRAM reads slower in 512-bit loads: summing 64 MiB on one core ran
//! at 25.6 GB/s with zmm loads and at 29.9 with ymm ones (the same C loop,
//! four accumulators, same buffer), while at 4-16 MiB, in cache, zmm was
//! 3-5% ahead. [`streams_better_at_256_bits`] tells which CPUs those are.

/// The family number in `eax` of `cpuid` leaf 1: the base family, plus the
/// extended family when the base is 0xF (AMD's and Intel's rule).
pub fn family(eax: u32) -> u32 {
    let base = (eax >> 8) & 0xF;
    if base == 0xF {
        base + ((eax >> 20) & 0xFF)
    } else {
        base
    }
}

/// Bytes of the cache that `cpuid` describes with `ebx` and `ecx` (leaf
/// 0x8000_001D on AMD, leaf 4 on Intel: ways x partitions x line size x
/// sets, each stored as one less).
pub fn cache_bytes(ebx: u32, ecx: u32) -> usize {
    let ways = (ebx >> 22) as usize + 1;
    let partitions = ((ebx >> 12) & 0x3FF) as usize + 1;
    let line = (ebx & 0xFFF) as usize + 1;
    ways * partitions * line * (ecx as usize + 1)
}

/// The size of the last-level cache when this is an AMD family 19h core
/// (Zen 3 and Zen 4; only Zen 4 has AVX-512, so only there is a choice of
/// width left): a streaming loop over more bytes than that should use
/// 256-bit vectors. None on every other CPU, which keeps the widest.
pub fn streams_better_at_256_bits() -> Option<usize> {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let vendor = __cpuid(0);
    let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (u32::from_le_bytes(*b"Auth"), u32::from_le_bytes(*b"enti"), u32::from_le_bytes(*b"cAMD"));
    // Leaves above the highest one the CPU reports are not read.
    if !amd || family(__cpuid(1).eax) != 0x19 || __cpuid(0x8000_0000).eax < 0x8000_001D {
        return None;
    }
    // The cache levels, one per sub-leaf, until one of type 0 (no cache).
    (0..8)
        .map(|i| __cpuid_count(0x8000_001D, i))
        .take_while(|r| r.eax & 0x1F != 0)
        .max_by_key(|r| (r.eax >> 5) & 0x7)
        .map(|r| cache_bytes(r.ebx, r.ecx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_adds_the_extended_family_only_to_0xf() {
        // Leaf 1 of an EPYC 9004 (Zen 4, family 19h model 11h) and of an
        // Intel Xeon (family 6, whose extended family field is 0).
        assert_eq!(family(0x00A1_0F11), 0x19);
        assert_eq!(family(0x0008_06F8), 6);
        // Zen 5 (family 1Ah) is not Zen 4.
        assert_eq!(family(0x00B0_0F21), 0x1A);
    }

    #[test]
    fn cache_size_decodes_as_amd_documents() {
        // An EPYC 9004's L3 (16 ways, 64-byte lines, 32768 sets) and L2
        // (8 ways, 2048 sets), as its leaf 0x8000_001D reports them.
        assert_eq!(cache_bytes(0x03C0_003F, 0x7FFF), 32 << 20);
        assert_eq!(cache_bytes(0x01C0_003F, 0x7FF), 1 << 20);
    }
}
