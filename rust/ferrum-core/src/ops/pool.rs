//! Pooling, 1-D and 2-D: max (with argmax indices), average and adaptive
//! average, forward and backward. Inputs are `[batch, channels, spatial...]`
//! Float tensors; output sizes, `ceil_mode` and the averaging divisor follow
//! PyTorch (which Burn matches): a ceil-mode window must start inside the
//! input or its leading padding, and `count_include_pad` counts the padding
//! but not the overhang past it.

use crate::autodiff::{record, FnBackward, Var};
use crate::dtype::Kind;
use crate::error::{Error, Result};
use crate::kernels::pool::{
    adaptive_avg_backward, adaptive_avg_forward, avg_pool_backward, avg_pool_forward, max_pool_backward, max_pool_forward, max_pool_values, PoolGeom,
};
use crate::ops::conv::values;
use crate::shape::checked_numel;
use crate::tensor::Tensor;
use crate::{with_float, with_float_lanes};

/// Options of an `N`-d pooling window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolOptions<const N: usize> {
    pub kernel: [usize; N],
    pub stride: [usize; N],
    /// Padding (before, after) of each spatial dim: ignored by max pooling,
    /// counted as zeros by average pooling with `count_include_pad`.
    pub padding: [(usize, usize); N],
    pub dilation: [usize; N],
    /// Round the output size up, so a partial window at the end counts.
    pub ceil_mode: bool,
}

impl<const N: usize> PoolOptions<N> {
    /// A window of `kernel` moving by its own size, without padding.
    pub fn new(kernel: [usize; N]) -> Self {
        PoolOptions { kernel, stride: kernel, padding: [(0, 0); N], dilation: [1; N], ceil_mode: false }
    }
}

/// An `N`-d value as its 2-D form: 1-D runs as height 1 with `fill`.
fn lift<const N: usize, V: Copy>(a: [V; N], fill: V) -> [V; 2] {
    if N == 1 {
        [fill, a[0]]
    } else {
        [a[0], a[1]]
    }
}

fn check_input(op: &'static str, x: &Tensor, n: usize) -> Result<()> {
    x.expect_kind(op, Kind::Float)?;
    x.expect_rank(op, n + 2)
}

/// The geometry of a pooling window over `x`, and the output shape.
fn pool_geom<const N: usize>(op: &'static str, x: &Tensor, o: &PoolOptions<N>) -> Result<(PoolGeom, Vec<usize>)> {
    check_input(op, x, N)?;
    for (name, v) in [("kernel size", &o.kernel), ("stride", &o.stride), ("dilation", &o.dilation)] {
        if v.contains(&0) {
            return Err(Error::invalid(op, format!("{name} must be at least 1 in every dim, found {v:?}")));
        }
    }
    let xs = x.shape();
    let mut out = xs[..2].to_vec();
    for d in 0..N {
        let (n, k, s, (before, after)) = (xs[2 + d], o.kernel[d], o.stride[d], o.padding[d]);
        let span = o.dilation[d] * (k - 1) + 1;
        if before > span / 2 || after > span / 2 {
            return Err(Error::invalid(op, format!("padding ({before}, {after}) of dim {d} must be at most half the kernel span ({span})")));
        }
        if n + before + after < span {
            return Err(Error::invalid(op, format!("spatial dim {d} of size {n} padded by ({before}, {after}) is smaller than the kernel span ({span}); input shape {xs:?}")));
        }
        let room = n + before + after - span;
        let mut size = if o.ceil_mode { room.div_ceil(s) } else { room / s } + 1;
        if o.ceil_mode && (size - 1) * s >= n + before {
            size -= 1;
        }
        out.push(size);
    }
    let sp = |s: &[usize]| lift::<N, usize>(s.try_into().expect("N spatial dims"), 1);
    let ([h, w], [oh, ow], [kh, kw]) = (sp(&xs[2..]), sp(&out[2..]), lift(o.kernel, 1));
    let g = PoolGeom {
        planes: xs[0] * xs[1],
        h,
        w,
        oh,
        ow,
        kh,
        kw,
        stride: lift(o.stride, 1),
        pad: lift(o.padding.map(|p| p.0), 0),
        pad_end: lift(o.padding.map(|p| p.1), 0),
        dilation: lift(o.dilation, 1),
    };
    Ok((g, out))
}

fn avg_geom<const N: usize>(op: &'static str, x: &Tensor, o: &PoolOptions<N>) -> Result<(PoolGeom, Vec<usize>)> {
    if o.dilation.iter().any(|&d| d != 1) {
        return Err(Error::invalid(op, format!("average pooling has no dilation; found {:?}", o.dilation)));
    }
    pool_geom(op, x, o)
}

/// (height, width) of a plane.
type Plane = (usize, usize);

/// The input and output plane sizes of an adaptive pooling of `x` to
/// `output`, and the output shape.
fn adaptive_sizes<const N: usize>(op: &'static str, x: &Tensor, output: [usize; N]) -> Result<(Plane, Plane, Vec<usize>)> {
    check_input(op, x, N)?;
    let xs = x.shape();
    if output.contains(&0) || xs[2..].contains(&0) {
        return Err(Error::invalid(op, format!("input spatial sizes {:?} and output size {output:?} must all be at least 1", &xs[2..])));
    }
    let mut shape = xs[..2].to_vec();
    shape.extend(output);
    let [h, w] = lift::<N, usize>(xs[2..].try_into().expect("N spatial dims"), 1);
    let [oh, ow] = lift(output, 1);
    // The output size is the caller's: refuse one whose element count
    // overflows before the kernels size buffers from it.
    checked_numel(op, &shape, x.dtype().size_in_bytes())?;
    Ok(((h, w), (oh, ow), shape))
}

fn max_forward(op: &'static str, x: &Tensor, g: &PoolGeom, shape: &[usize]) -> Result<(Tensor, Tensor)> {
    with_float!(op, x.dtype(), T => {
        let (y, idx) = max_pool_forward::<T>(op, &values::<T>(op, x)?, g)?;
        Ok((Tensor::from_vec(y, shape)?, Tensor::from_vec(idx, shape)?))
    })
}

fn max_values(op: &'static str, x: &Tensor, g: &PoolGeom, shape: &[usize]) -> Result<Tensor> {
    with_float!(op, x.dtype(), T => Tensor::from_vec(max_pool_values::<T>(op, &values::<T>(op, x)?, g)?, shape))
}

fn max_backward(op: &'static str, gy: &Tensor, idx: &Tensor, g: &PoolGeom, shape: &[usize]) -> Result<Tensor> {
    with_float!(op, gy.dtype(), T => Tensor::from_vec(max_pool_backward::<T>(op, &values::<T>(op, gy)?, &values::<i64>(op, idx)?, g)?, shape))
}

fn avg_forward(op: &'static str, x: &Tensor, g: &PoolGeom, count_include_pad: bool, shape: &[usize]) -> Result<Tensor> {
    with_float!(op, x.dtype(), T => Tensor::from_vec(avg_pool_forward::<T>(op, &values::<T>(op, x)?, g, count_include_pad)?, shape))
}

fn avg_backward(op: &'static str, gy: &Tensor, g: &PoolGeom, count_include_pad: bool, shape: &[usize]) -> Result<Tensor> {
    with_float!(op, gy.dtype(), T => Tensor::from_vec(avg_pool_backward::<T>(op, &values::<T>(op, gy)?, g, count_include_pad)?, shape))
}

fn adaptive_forward(op: &'static str, x: &Tensor, hw: Plane, out: Plane, shape: &[usize]) -> Result<Tensor> {
    let planes = shape[0] * shape[1];
    with_float_lanes!(op, x.dtype(), T => Tensor::from_vec(adaptive_avg_forward::<T>(op, &values::<T>(op, x)?, planes, hw, out)?, shape))
}

fn adaptive_backward(op: &'static str, gy: &Tensor, hw: Plane, out: Plane, shape: &[usize]) -> Result<Tensor> {
    let planes = shape[0] * shape[1];
    with_float_lanes!(op, gy.dtype(), T => Tensor::from_vec(adaptive_avg_backward::<T>(op, &values::<T>(op, gy)?, planes, hw, out)?, shape))
}

impl Tensor {
    /// Max over each window of `[batch, channels, length]`.
    pub fn max_pool1d(&self, options: &PoolOptions<1>) -> Result<Tensor> {
        let (g, shape) = pool_geom("max_pool1d", self, options)?;
        max_values("max_pool1d", self, &g, &shape)
    }

    /// Max over each window of `[batch, channels, height, width]`.
    pub fn max_pool2d(&self, options: &PoolOptions<2>) -> Result<Tensor> {
        let (g, shape) = pool_geom("max_pool2d", self, options)?;
        max_values("max_pool2d", self, &g, &shape)
    }

    /// `max_pool1d` and the Int index (within the length) of each maximum.
    pub fn max_pool1d_with_indices(&self, options: &PoolOptions<1>) -> Result<(Tensor, Tensor)> {
        let (g, shape) = pool_geom("max_pool1d", self, options)?;
        max_forward("max_pool1d", self, &g, &shape)
    }

    /// `max_pool2d` and the Int index (`h * width + w`) of each maximum.
    pub fn max_pool2d_with_indices(&self, options: &PoolOptions<2>) -> Result<(Tensor, Tensor)> {
        let (g, shape) = pool_geom("max_pool2d", self, options)?;
        max_forward("max_pool2d", self, &g, &shape)
    }

    /// Mean over each window of `[batch, channels, length]`.
    pub fn avg_pool1d(&self, options: &PoolOptions<1>, count_include_pad: bool) -> Result<Tensor> {
        let (g, shape) = avg_geom("avg_pool1d", self, options)?;
        avg_forward("avg_pool1d", self, &g, count_include_pad, &shape)
    }

    /// Mean over each window of `[batch, channels, height, width]`.
    pub fn avg_pool2d(&self, options: &PoolOptions<2>, count_include_pad: bool) -> Result<Tensor> {
        let (g, shape) = avg_geom("avg_pool2d", self, options)?;
        avg_forward("avg_pool2d", self, &g, count_include_pad, &shape)
    }

    /// Mean over `output` near-equal windows covering the length.
    pub fn adaptive_avg_pool1d(&self, output: usize) -> Result<Tensor> {
        let (hw, out, shape) = adaptive_sizes("adaptive_avg_pool1d", self, [output])?;
        adaptive_forward("adaptive_avg_pool1d", self, hw, out, &shape)
    }

    /// Mean over an `output` grid of near-equal windows covering the plane.
    pub fn adaptive_avg_pool2d(&self, output: [usize; 2]) -> Result<Tensor> {
        let (hw, out, shape) = adaptive_sizes("adaptive_avg_pool2d", self, output)?;
        adaptive_forward("adaptive_avg_pool2d", self, hw, out, &shape)
    }
}

/// Gradients: max pooling sends each output gradient to the argmax it
/// recorded, average pooling spreads it over the window.
impl Var {
    fn max_pool<const N: usize>(&self, op: &'static str, options: &PoolOptions<N>) -> Result<(Var, Tensor)> {
        let (g, shape) = pool_geom(op, &self.value, options)?;
        let (y, idx) = max_forward(op, &self.value, &g, &shape)?;
        let (saved, x_shape) = (idx.clone(), self.value.shape().to_vec());
        let y = record(y, &[self], move || FnBackward::new(op, move |gy, _| Ok(vec![Some(max_backward(op, &gy, &saved, &g, &x_shape)?)])));
        Ok((y, idx))
    }

    pub fn max_pool1d(&self, options: &PoolOptions<1>) -> Result<Var> {
        if !self.requires_grad() {
            return Ok(Var::constant(self.value.max_pool1d(options)?));
        }
        Ok(self.max_pool("max_pool1d", options)?.0)
    }

    pub fn max_pool2d(&self, options: &PoolOptions<2>) -> Result<Var> {
        if !self.requires_grad() {
            return Ok(Var::constant(self.value.max_pool2d(options)?));
        }
        Ok(self.max_pool("max_pool2d", options)?.0)
    }

    pub fn max_pool1d_with_indices(&self, options: &PoolOptions<1>) -> Result<(Var, Tensor)> {
        self.max_pool("max_pool1d", options)
    }

    pub fn max_pool2d_with_indices(&self, options: &PoolOptions<2>) -> Result<(Var, Tensor)> {
        self.max_pool("max_pool2d", options)
    }

    fn avg_pool<const N: usize>(&self, op: &'static str, options: &PoolOptions<N>, count_include_pad: bool) -> Result<Var> {
        let (g, shape) = avg_geom(op, &self.value, options)?;
        let y = avg_forward(op, &self.value, &g, count_include_pad, &shape)?;
        let x_shape = self.value.shape().to_vec();
        Ok(record(y, &[self], move || FnBackward::new(op, move |gy, _| Ok(vec![Some(avg_backward(op, &gy, &g, count_include_pad, &x_shape)?)]))))
    }

    pub fn avg_pool1d(&self, options: &PoolOptions<1>, count_include_pad: bool) -> Result<Var> {
        self.avg_pool("avg_pool1d", options, count_include_pad)
    }

    pub fn avg_pool2d(&self, options: &PoolOptions<2>, count_include_pad: bool) -> Result<Var> {
        self.avg_pool("avg_pool2d", options, count_include_pad)
    }

    fn adaptive_avg_pool<const N: usize>(&self, op: &'static str, output: [usize; N]) -> Result<Var> {
        let (hw, out, shape) = adaptive_sizes(op, &self.value, output)?;
        let y = adaptive_forward(op, &self.value, hw, out, &shape)?;
        let x_shape = self.value.shape().to_vec();
        Ok(record(y, &[self], move || FnBackward::new(op, move |gy, _| Ok(vec![Some(adaptive_backward(op, &gy, hw, out, &x_shape)?)]))))
    }

    pub fn adaptive_avg_pool1d(&self, output: usize) -> Result<Var> {
        self.adaptive_avg_pool("adaptive_avg_pool1d", [output])
    }

    pub fn adaptive_avg_pool2d(&self, output: [usize; 2]) -> Result<Var> {
        self.adaptive_avg_pool("adaptive_avg_pool2d", output)
    }
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "pool_half_tests.rs"]
mod half_tests;
