//! What a fused kernel does to each output value once it is complete, while
//! the value is still in cache: the layers that follow a convolution in an
//! inference network (bias, BatchNorm's scale and shift, a residual add, a
//! relu), which would otherwise each read and write the whole output again.

/// What happens to each output value once its sum is complete, while its
/// tile is still in L1: `v * scale[c] + shift[c] + residual`, then `max(v,
/// 0)` when `relu` (a bias is a shift without a scale; an inference
/// BatchNorm a scale and a shift; a residual block's skip connection the
/// residual, shaped as the output).
#[derive(Clone, Copy, Default)]
pub struct Epilogue<'a> {
    pub scale: Option<&'a [f32]>,
    pub shift: Option<&'a [f32]>,
    pub residual: Option<&'a [f32]>,
    pub relu: bool,
}

impl Epilogue<'_> {
    /// Whether it leaves the sums as they are.
    pub fn is_identity(&self) -> bool {
        self.scale.is_none() && self.shift.is_none() && self.residual.is_none() && !self.relu
    }

    /// Apply it to `v`, a value of output channel `c`; `r` is the residual's.
    #[inline(always)]
    pub fn apply(&self, v: f32, c: usize, r: f32) -> f32 {
        let v = self.scale.map_or(v, |s| v * s[c]);
        let v = self.shift.map_or(v, |s| v + s[c]) + r;
        // As the element-wise relu: NaN stays NaN.
        if self.relu && v <= 0.0 {
            0.0
        } else {
            v
        }
    }
}
