//! `unfold4d` (Burn's module op, torch's `F.unfold`): the sliding blocks of
//! `[batch, channels, height, width]` as columns, `[batch, channels * kh *
//! kw, blocks]`, in channel-major order. It is a convolution's im2col
//! matrix, so it runs on that kernel; backward is col2im, which adds each
//! column back onto the pixels it was read from.

use crate::autodiff::{record, FnBackward, Var};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::im2col::{col2im, im2col, ConvGeom};
use crate::kernels::team::for_each_chunk_mut;
use crate::ops::conv::values;
use crate::shape::checked_numel;
use crate::tensor::Tensor;
use crate::{with_float, Kind};

/// Burn's `UnfoldOptions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnfoldOptions {
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
}

impl Default for UnfoldOptions {
    fn default() -> Self {
        UnfoldOptions { stride: [1, 1], padding: [0, 0], dilation: [1, 1] }
    }
}

fn geometry(op: &'static str, x: &Tensor, kernel: [usize; 2], o: &UnfoldOptions) -> Result<ConvGeom> {
    x.expect_kind(op, Kind::Float)?;
    x.expect_rank(op, 4)?;
    for (name, v) in [("kernel size", kernel), ("stride", o.stride), ("dilation", o.dilation)] {
        if v.contains(&0) {
            return Err(Error::invalid(op, format!("{name} must be at least 1 in every dim, found {v:?}")));
        }
    }
    let s = x.shape();
    let mut out = [0; 2];
    for d in 0..2 {
        let (n, k, p) = (s[2 + d], kernel[d], o.padding[d]);
        let span = o.dilation[d] * (k - 1) + 1;
        if n + 2 * p < span {
            return Err(Error::shapes(
                op,
                s,
                &kernel,
                format!("spatial dim {d} of size {n} padded by {p} on each side is smaller than the kernel ({k}, dilation {}: span {span})", o.dilation[d]),
            ));
        }
        out[d] = (n + 2 * p - span) / o.stride[d] + 1;
    }
    let g = ConvGeom {
        batch: s[0],
        c_in: s[1],
        h: s[2],
        w: s[3],
        c_out: 1,
        oh: out[0],
        ow: out[1],
        kh: kernel[0],
        kw: kernel[1],
        stride: o.stride,
        pad: o.padding,
        dilation: o.dilation,
        groups: 1,
    };
    checked_numel(op, &[g.batch, g.k(), g.p()], x.dtype().size_in_bytes())?;
    Ok(g)
}

fn forward<T: Element>(x: &[T], g: &ConvGeom) -> Vec<T> {
    let per = g.k() * g.p();
    let mut out = vec![T::ZERO; g.batch * per];
    for_each_chunk_mut(&mut out, per.max(1), |b, col| im2col(&x[b * g.c_in * g.hw()..][..g.c_in * g.hw()], g, 0..g.oh, col));
    out
}

fn backward<T: Element + std::ops::AddAssign>(gy: &[T], g: &ConvGeom) -> Vec<T> {
    let per = g.c_in * g.hw();
    let mut gx = vec![T::ZERO; g.batch * per];
    for_each_chunk_mut(&mut gx, per.max(1), |b, img| col2im(&gy[b * g.k() * g.p()..][..g.k() * g.p()], g, 0..g.oh, img));
    gx
}

impl Tensor {
    /// The `kernel`-sized blocks of `[batch, channels, h, w]` as `[batch, channels * kh * kw, blocks]`.
    pub fn unfold4d(&self, kernel: [usize; 2], options: &UnfoldOptions) -> Result<Tensor> {
        let op = "unfold4d";
        let g = geometry(op, self, kernel, options)?;
        let shape = [g.batch, g.k(), g.p()];
        with_float!(op, self.dtype(), T => Tensor::from_vec(forward::<T>(&values::<T>(op, self)?, &g), &shape))
    }
}

impl Var {
    /// [`Tensor::unfold4d`], differentiable: overlapping blocks add their gradients.
    pub fn unfold4d(&self, kernel: [usize; 2], options: &UnfoldOptions) -> Result<Var> {
        let op = "unfold4d";
        let g = geometry(op, &self.value, kernel, options)?;
        let y = self.value.unfold4d(kernel, options)?;
        let in_shape = self.value.shape().to_vec();
        Ok(record(y, &[self], move || {
            FnBackward::new(op, move |gy, _| with_float!(op, gy.dtype(), T => Ok(vec![Some(Tensor::from_vec(backward::<T>(&values::<T>(op, &gy)?, &g), &in_shape)?)])))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_in_channel_major_order() {
        // [1, 2, 3, 3] with a 2x2 kernel: 4 blocks, 8 rows.
        let x = Tensor::from_vec((0..18).map(f64::from).collect::<Vec<_>>(), &[1, 2, 3, 3]).unwrap();
        let y = x.unfold4d([2, 2], &UnfoldOptions::default()).unwrap();
        assert_eq!(y.shape(), &[1, 8, 4]);
        let v = y.to_vec::<f64>();
        assert_eq!(&v[..4], &[0.0, 1.0, 3.0, 4.0]); // channel 0, tap (0, 0)
        assert_eq!(&v[4 * 4..5 * 4], &[9.0, 10.0, 12.0, 13.0]); // channel 1, tap (0, 0)
    }

    #[test]
    fn backward_counts_each_pixels_blocks() {
        let leaf = Var::leaf(Tensor::from_vec(vec![1.0f64; 9], &[1, 1, 3, 3]).unwrap());
        let o = UnfoldOptions { stride: [1, 1], padding: [1, 1], dilation: [1, 1] };
        let loss = leaf.unfold4d([3, 3], &o).unwrap().sum().unwrap();
        let g = crate::autodiff::backward(&loss).unwrap().get(leaf.id().unwrap()).unwrap().to_vec::<f64>();
        // With padding 1 a 3x3 image has 9 blocks: the centre lies in all of them, a corner in 4.
        assert_eq!(g, vec![4.0, 6.0, 4.0, 6.0, 9.0, 6.0, 4.0, 6.0, 4.0]);
    }

    #[test]
    fn too_small_input_is_an_error() {
        let x = Tensor::zeros(&[1, 1, 2, 2], crate::DType::F32);
        let e = x.unfold4d([3, 3], &UnfoldOptions::default()).unwrap_err().to_string();
        assert!(e.contains("smaller than the kernel"), "{e}");
    }
}
