//! The register tile in plain Rust, on the same packing as the VNNI tile:
//! the CPUs without AVX512-VNNI, and the reference the tests hold it to.

use super::{MR, NR};

/// `acc[r][j] (+)= Σ_k a[r, k] * b[k, j]` over `kq` quads (u8 rows times s8
/// columns); `acc` is read first unless `first`.
pub(super) fn dot(kq: usize, a: &[u32], b: &[u32], acc: &mut [[i32; NR]; MR], first: bool) {
    if first {
        *acc = [[0; NR]; MR];
    }
    for q in 0..kq {
        let (aw, bw) = (&a[q * MR..(q + 1) * MR], &b[q * NR..(q + 1) * NR]);
        for byte in 0..4 {
            let shift = 8 * byte;
            let mut col = [0i32; NR];
            for (c, &w) in col.iter_mut().zip(bw) {
                *c = (w >> shift) as u8 as i8 as i32;
            }
            for (row, &w) in acc.iter_mut().zip(aw) {
                let x = ((w >> shift) & 0xFF) as i32;
                for (s, &c) in row.iter_mut().zip(&col) {
                    *s += x * c;
                }
            }
        }
    }
}
