//! One tile product of each kind against a scalar sum; skipped where the CPU
//! or the OS has no AMX.

use super::*;

fn bf16(x: f32) -> u16 {
    (x.to_bits() >> 16) as u16
}

#[test]
fn bf16_tile_product_matches_scalar_sums() {
    if !bf16_available() {
        return;
    }
    let (m, k, n) = (16, 32, 16);
    // Values exact in bf16, so the only rounding is the f32 sum's.
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 7 % 13) as f32 - 6.0) / 4.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0).collect();
    let a16: Vec<u16> = a.iter().map(|&x| bf16(x)).collect();
    // B as AMX reads it: row p holds, for each column j, the pair (b[2p][j], b[2p+1][j]).
    let mut b16 = vec![0u16; k * n];
    for p in 0..k / 2 {
        for j in 0..n {
            b16[p * 2 * n + 2 * j] = bf16(b[2 * p * n + j]);
            b16[p * 2 * n + 2 * j + 1] = bf16(b[(2 * p + 1) * n + j]);
        }
    }
    let mut c = vec![1.0f32; m * n];
    let config = TileConfig::default().with(0, 16, 64).with(4, 16, 64).with(6, 16, 64);
    // SAFETY: bf16_available() said AMX-BF16 is usable; the buffers hold 16 rows of 64 bytes.
    unsafe {
        let _tiles = config.load();
        tile_load!(tmm0, c.as_ptr(), 64usize);
        tile_load!(tmm4, a16.as_ptr(), 64usize);
        tile_load!(tmm6, b16.as_ptr(), 64usize);
        tile_dpbf16ps!(tmm0, tmm4, tmm6);
        tile_store!(tmm0, c.as_mut_ptr(), 64usize);
    }
    for i in 0..m {
        for j in 0..n {
            let want: f32 = 1.0 + (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum::<f32>();
            assert_eq!(c[i * n + j], want, "({i}, {j})");
        }
    }
}

#[test]
fn int8_tile_product_is_exact() {
    if !int8_available() {
        return;
    }
    let (m, k, n) = (16, 64, 16);
    let a: Vec<u8> = (0..m * k).map(|i| (i * 37 % 256) as u8).collect();
    let b: Vec<i8> = (0..k * n).map(|i| ((i * 53 % 255) as i32 - 127) as i8).collect();
    // B as AMX reads it: row q holds, for each column j, the quad b[4q..4q+4][j].
    let mut b4 = vec![0i8; k * n];
    for q in 0..k / 4 {
        for j in 0..n {
            for t in 0..4 {
                b4[q * 4 * n + 4 * j + t] = b[(4 * q + t) * n + j];
            }
        }
    }
    let mut c = vec![0i32; m * n];
    let config = TileConfig::default().with(1, 16, 64).with(2, 16, 64).with(3, 16, 64);
    // SAFETY: int8_available() said AMX-INT8 is usable; the buffers hold 16 rows of 64 bytes.
    unsafe {
        let _tiles = config.load();
        tile_zero!(tmm1);
        tile_load!(tmm2, a.as_ptr(), 64usize);
        tile_load!(tmm3, b4.as_ptr(), 64usize);
        tile_dpbusd!(tmm1, tmm2, tmm3);
        tile_store!(tmm1, c.as_mut_ptr(), 64usize);
    }
    for i in 0..m {
        for j in 0..n {
            let want: i32 = (0..k).map(|p| i32::from(a[i * k + p]) * i32::from(b[p * n + j])).sum();
            assert_eq!(c[i * n + j], want, "({i}, {j})");
        }
    }
}

#[test]
fn signed_by_unsigned_tile_product_is_exact() {
    if !int8_available() {
        return;
    }
    let (m, k, n) = (16, 64, 16);
    let a: Vec<i8> = (0..m * k).map(|i| ((i * 41 % 256) as i32 - 128) as i8).collect();
    let b: Vec<u8> = (0..k * n).map(|i| (i * 29 % 256) as u8).collect();
    // B as AMX reads it: row q holds, for each column j, the quad b[4q..4q+4][j].
    let mut b4 = vec![0u8; k * n];
    for q in 0..k / 4 {
        for j in 0..n {
            for t in 0..4 {
                b4[q * 4 * n + 4 * j + t] = b[(4 * q + t) * n + j];
            }
        }
    }
    let mut c = vec![7i32; m * n];
    let config = TileConfig::default().with(0, 16, 64).with(5, 16, 64).with(7, 16, 64);
    // SAFETY: int8_available() said AMX-INT8 is usable; the buffers hold 16 rows of 64 bytes.
    unsafe {
        let _tiles = config.load();
        tile_load!(tmm0, c.as_ptr(), 64usize);
        tile_load!(tmm5, a.as_ptr(), 64usize);
        tile_load!(tmm7, b4.as_ptr(), 64usize);
        tile_dpbsud!(tmm0, tmm5, tmm7);
        tile_store!(tmm0, c.as_mut_ptr(), 64usize);
    }
    for i in 0..m {
        for j in 0..n {
            let want: i32 = 7 + (0..k).map(|p| i32::from(a[i * k + p]) * i32::from(b[p * n + j])).sum::<i32>();
            assert_eq!(c[i * n + j], want, "({i}, {j})");
        }
    }
}

#[test]
fn config_layout_is_palette_one() {
    let c = TileConfig::default().with(3, 12, 48);
    assert_eq!(c.bytes[0], 1);
    assert_eq!(c.bytes[16 + 6], 48);
    assert_eq!(c.bytes[48 + 3], 12);
}
