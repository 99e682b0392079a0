//! The left operand of the integer products: u8 rows as they are, or f32
//! rows quantized while they are packed, as ONNX's `DynamicQuantizeLinear`
//! quantizes them (so that a dynamically quantized linear layer makes one
//! threaded pass over its input instead of a quantizing pass and a packing
//! pass).

/// The rows of an integer product's left operand (row-major, `k` a row).
#[derive(Clone, Copy, Debug)]
pub enum Rows<'a> {
    /// u8 values.
    U8(&'a [u8]),
    /// f32 values, each taken as `clamp(round_half_even(v / scale) + zero,
    /// 0, 255)` (ONNX's `DynamicQuantizeLinear` with the scale and zero
    /// point of the whole tensor).
    Quantized { x: &'a [f32], scale: f32, zero: u8 },
}

impl Rows<'_> {
    /// Values held (`m * k`).
    pub(super) fn len(&self) -> usize {
        match self {
            Rows::U8(a) => a.len(),
            Rows::Quantized { x, .. } => x.len(),
        }
    }

    /// Row `i` as u8 values: borrowed, or quantized into `buf` (`k` bytes).
    #[inline(always)]
    pub(super) fn row<'b>(&'b self, i: usize, k: usize, buf: &'b mut [u8]) -> &'b [u8] {
        match *self {
            Rows::U8(a) => &a[i * k..(i + 1) * k],
            Rows::Quantized { x, scale, zero } => {
                quantize_u8(&x[i * k..(i + 1) * k], &mut buf[..k], scale, f32::from(zero));
                &buf[..k]
            }
        }
    }
}

/// `out[i] = clamp(round_half_even(x[i] / scale) + zero, 0, 255)`, compiled
/// for AVX-512 where the CPU has it.
pub fn quantize_u8(x: &[f32], out: &mut [u8], scale: f32, zero: f32) {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: wide() said the CPU has AVX-512 F, DQ and BW.
        unsafe { quantize_u8_avx512(x, out, scale, zero) };
        return;
    }
    quantize_u8_body(x, out, scale, zero);
}

/// Whether the quantizing loop runs compiled for AVX-512 (F, DQ and BW).
fn wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| super::vnni_available() && is_x86_feature_detected!("avx512dq"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`quantize_u8_body`] 16 values a step: the same clamps, the rounding
/// by `vrndscaleps` (half to even, as the body's magic number rounds), and
/// the conversions written out (the compiler turns the body's saturating
/// `as i32` into one scalar conversion a lane). A NaN quotient (a zero or
/// NaN scale) goes to the lower clamp, as in the body (`vmaxps` returns its
/// second operand then), and ends as 0.
///
/// # Safety
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512bw")]
unsafe fn quantize_u8_avx512(x: &[f32], out: &mut [u8], scale: f32, zero: f32) {
    use std::arch::x86_64::*;
    let n = x.len().min(out.len());
    let (vs, vz) = (_mm512_set1_ps(scale), _mm512_set1_ps(zero));
    let (lo, hi, top) = (_mm512_set1_ps(-512.0), _mm512_set1_ps(512.0), _mm512_set1_ps(255.0));
    let mut i = 0;
    // SAFETY: the loads read x[i..i + 16] and the stores write out[i..i + 16], both inside n.
    unsafe {
        while i + 16 <= n {
            let q = _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(_mm512_loadu_ps(x.as_ptr().add(i)), vs), lo), hi);
            // Round to nearest even (0), exceptions suppressed (8).
            let r = _mm512_roundscale_ps::<0x08>(q);
            let y = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(r, vz), _mm512_setzero_ps()), top);
            _mm_storeu_si128(out.as_mut_ptr().add(i) as *mut __m128i, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(y)));
            i += 16;
        }
    }
    quantize_u8_body(&x[i..n], &mut out[i..n], scale, zero);
}

/// The quotient is clamped to ±512 first (the result saturates there
/// either way), so that adding and taking away 1.5 * 2^23 rounds it half to
/// even in the default rounding mode, which vectorizes where a rounding
/// call would not; the value (in 0..=255) is narrowed through i32, which
/// vectorizes where a direct conversion does not.
#[inline(always)]
fn quantize_u8_body(x: &[f32], out: &mut [u8], scale: f32, zero: f32) {
    const MAGIC: f32 = 12_582_912.0;
    for (o, &v) in out.iter_mut().zip(x) {
        let q = (v / scale).clamp(-512.0, 512.0);
        *o = (((q + MAGIC) - MAGIC) + zero).clamp(0.0, 255.0) as i32 as u8;
    }
}
