//! `grid_sample_2d`: bilinear sampling of an `[n, c, h, w]` input at the
//! normalised `(x, y)` locations of an `[n, h_out, w_out, 2]` grid, as
//! PyTorch's `grid_sample` and Burn's. Built from differentiable ops (Burn's
//! reference algorithm), so gradients reach both the input and the grid.

use crate::autodiff::Var;
use crate::dtype::{DType, Kind, Scalar};
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::ops::compare::CompareOp;
use crate::ops::unary::FloatUnary;
use crate::tensor::views::SliceSpec;
use crate::tensor::Tensor;

/// What a location outside the input reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridSamplePadding {
    /// Zero.
    Zeros,
    /// The nearest border value.
    Border,
    /// The input mirrored at its borders.
    Reflection,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridSampleOptions {
    pub padding: GridSamplePadding,
    /// `-1` and `1` are the centres of the corner pixels (true) or their
    /// outer edges (false, the default).
    pub align_corners: bool,
}

impl Default for GridSampleOptions {
    fn default() -> Self {
        GridSampleOptions { padding: GridSamplePadding::Zeros, align_corners: false }
    }
}

fn f(v: f64) -> Scalar {
    Scalar::Float(v)
}

impl Tensor {
    pub fn grid_sample_2d(&self, grid: &Tensor, options: GridSampleOptions) -> Result<Tensor> {
        Ok(Var::constant(self.clone()).grid_sample_2d(&Var::constant(grid.clone()), options)?.value)
    }
}

impl Var {
    pub fn grid_sample_2d(&self, grid: &Var, options: GridSampleOptions) -> Result<Var> {
        let op = "grid_sample_2d";
        let (x, g) = (&self.value, &grid.value);
        x.expect_kind(op, Kind::Float)?;
        x.expect_same_dtype(op, g)?;
        x.expect_rank(op, 4)?;
        g.expect_rank(op, 4)?;
        let (n, c, h, w) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
        let (ho, wo) = (g.shape()[1], g.shape()[2]);
        if g.shape()[0] != n || g.shape()[3] != 2 {
            return Err(Error::shapes(op, x.shape(), g.shape(), format!("the grid must be [{n}, h_out, w_out, 2] for an input of batch {n}")));
        }
        if h == 0 || w == 0 {
            return Err(Error::invalid(op, format!("the input has no pixels to sample (shape {:?})", x.shape())));
        }
        let coordinate = |i: isize, size: usize| -> Result<Var> {
            let part = grid.slice(&[SliceSpec::full(), SliceSpec::full(), SliceSpec::full(), SliceSpec::range(i, i + 1)])?;
            let part = part.reshape(&[n as isize, 1, ho as isize, wo as isize])?;
            let size = size as f64;
            // Normalised [-1, 1] to pixel coordinates.
            let pixel = if options.align_corners {
                part.binary_scalar(BinaryOp::Add, f(1.0))?.binary_scalar(BinaryOp::Mul, f((size - 1.0) / 2.0))?
            } else {
                part.binary_scalar(BinaryOp::Add, f(1.0))?.binary_scalar(BinaryOp::Mul, f(size / 2.0))?.binary_scalar(BinaryOp::Sub, f(0.5))?
            };
            match options.padding {
                GridSamplePadding::Zeros => Ok(pixel),
                GridSamplePadding::Border => pixel.clamp(f(0.0), f(size - 1.0)),
                GridSamplePadding::Reflection => reflect(&pixel, size, options.align_corners),
            }
        };
        let (gx, gy) = (coordinate(0, w)?, coordinate(1, h)?);
        let corners = Corners::new(&gx, &gy, w, h, options.padding == GridSamplePadding::Zeros)?;
        let flat = self.reshape(&[n as isize, c as isize, (h * w) as isize])?;
        let out = [n as isize, c as isize, ho as isize, wo as isize];
        let sample = |index: &Tensor| -> Result<Var> {
            let index = index.reshape(&[n as isize, 1, (ho * wo) as isize])?.expand(&[n as isize, c as isize, (ho * wo) as isize])?;
            flat.gather(2, &index)?.reshape(&out)
        };
        let one_minus = |v: &Var| Var::scalar_binary(f(1.0), BinaryOp::Sub, v);
        let (fx, fy) = (&corners.frac_x, &corners.frac_y);
        let weights = [
            one_minus(fx)?.binary(BinaryOp::Mul, &one_minus(fy)?)?,
            one_minus(fx)?.binary(BinaryOp::Mul, fy)?,
            fx.binary(BinaryOp::Mul, &one_minus(fy)?)?,
            fx.binary(BinaryOp::Mul, fy)?,
        ];
        let mut result: Option<Var> = None;
        for ((index, valid), weight) in corners.index.iter().zip(&corners.valid).zip(weights) {
            let t = sample(index)?.binary(BinaryOp::Mul, &weight)?;
            // A corner outside the input adds nothing, whatever its weight (NaN for a NaN
            // location): masked after the product, as PyTorch skips such corners.
            let t = match valid {
                Some(v) => t.mask_fill(&v.bool_not()?, f(0.0))?,
                None => t,
            };
            result = Some(match result {
                Some(r) => r.binary(BinaryOp::Add, &t)?,
                None => t,
            });
        }
        result.ok_or_else(|| Error::invalid(op, "no corners"))
    }
}

/// The four neighbours of every location: flat indices into `[h * w]`
/// (clamped into the input), whether each lies inside (for zero padding),
/// and the fractional offsets that weight them (differentiable in the grid).
struct Corners {
    /// (x0, y0), (x0, y1), (x1, y0), (x1, y1).
    index: [Tensor; 4],
    valid: [Option<Tensor>; 4],
    frac_x: Var,
    frac_y: Var,
}

impl Corners {
    fn new(gx: &Var, gy: &Var, w: usize, h: usize, zeros: bool) -> Result<Corners> {
        // Floors are constants: the fraction carries the grid's gradient.
        let floor = |v: &Var| -> Result<Tensor> {
            let fl = v.value.float_unary(FloatUnary::Floor)?;
            // A NaN location reads nothing (as one far outside would).
            fl.mask_fill(&fl.compare(CompareOp::NotEqual, &fl)?, f(-2.0))
        };
        let (x0f, y0f) = (floor(gx)?, floor(gy)?);
        let frac_x = gx.binary(BinaryOp::Sub, &Var::constant(x0f.clone()))?;
        let frac_y = gy.binary(BinaryOp::Sub, &Var::constant(y0f.clone()))?;
        // Clamped to just outside the input first, so the Int conversion and
        // the index arithmetic below cannot overflow however far away a
        // location is.
        let int = |t: &Tensor, size: usize| t.clamp(f(-2.0), f(size as f64 + 1.0))?.cast(DType::I64);
        let (x0, y0) = (int(&x0f, w)?, int(&y0f, h)?);
        let (x1, y1) = (x0.binary_scalar(BinaryOp::Add, Scalar::Int(1))?, y0.binary_scalar(BinaryOp::Add, Scalar::Int(1))?);
        let inside = |v: &Tensor, size: usize| -> Result<Tensor> {
            v.compare_scalar(CompareOp::GreaterEqual, Scalar::Int(0))?.bool_and(&v.compare_scalar(CompareOp::Lower, Scalar::Int(size as i64))?)
        };
        let clamped = |v: &Tensor, size: usize| v.clamp(Scalar::Int(0), Scalar::Int(size as i64 - 1));
        let flat = |x: &Tensor, y: &Tensor| -> Result<Tensor> {
            clamped(y, h)?.binary_scalar(BinaryOp::Mul, Scalar::Int(w as i64))?.binary(BinaryOp::Add, &clamped(x, w)?)
        };
        let valid = if zeros {
            let (vx0, vx1, vy0, vy1) = (inside(&x0, w)?, inside(&x1, w)?, inside(&y0, h)?, inside(&y1, h)?);
            [Some(vx0.bool_and(&vy0)?), Some(vx0.bool_and(&vy1)?), Some(vx1.bool_and(&vy0)?), Some(vx1.bool_and(&vy1)?)]
        } else {
            [None, None, None, None]
        };
        Ok(Corners { index: [flat(&x0, &y0)?, flat(&x0, &y1)?, flat(&x1, &y0)?, flat(&x1, &y1)?], valid, frac_x, frac_y })
    }
}

/// Mirror pixel coordinates into the input (a triangle wave with period
/// twice its span): `[0, size - 1]` with aligned corners, `[-0.5, size -
/// 0.5]` without.
fn reflect(coords: &Var, size: f64, align_corners: bool) -> Result<Var> {
    let (lo, hi) = if align_corners { (0.0, size - 1.0) } else { (-0.5, size - 0.5) };
    let span = hi - lo;
    if span <= 0.0 {
        // One pixel with aligned corners: every location is that pixel.
        return coords.binary_scalar(BinaryOp::Mul, f(0.0))?.binary_scalar(BinaryOp::Add, f(lo));
    }
    let period = 2.0 * span;
    let x = coords.binary_scalar(BinaryOp::Sub, f(lo))?.abs()?;
    let turns = x.value.binary_scalar(BinaryOp::Div, f(period))?.float_unary(FloatUnary::Floor)?;
    let x = x.binary(BinaryOp::Sub, &Var::constant(turns.binary_scalar(BinaryOp::Mul, f(period))?))?;
    let back = x.binary_scalar(BinaryOp::Sub, f(span))?.abs()?;
    Var::scalar_binary(f(span + lo), BinaryOp::Sub, &back)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::f64s as t;

    fn input() -> Tensor {
        t(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[1, 1, 3, 3])
    }

    fn grid() -> Tensor {
        t(&[0.0, 0.0, -1.0, 0.25, 1.0, 1.0, 0.2, -0.8], &[1, 2, 2, 2])
    }

    fn close(got: &[f64], want: &[f64]) {
        assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-6), "{got:?} vs {want:?}");
    }

    // Burn's grid_sample tests (values from PyTorch).
    #[test]
    fn default_options() {
        let y = input().grid_sample_2d(&grid(), GridSampleOptions::default()).unwrap();
        assert_eq!(y.shape(), &[1, 1, 2, 2]);
        close(&y.to_vec::<f64>(), &[4.0, 2.0625, 2.0, 1.04]);
    }

    #[test]
    fn aligned_corners_and_border() {
        let o = GridSampleOptions { padding: GridSamplePadding::Border, align_corners: true };
        close(&input().grid_sample_2d(&grid(), o).unwrap().to_vec::<f64>(), &[4.0, 3.75, 8.0, 1.8]);
    }

    #[test]
    fn padding_modes_far_outside() {
        let g = t(&[0.0, -2.0], &[1, 1, 1, 2]);
        let zeros = input().grid_sample_2d(&g, GridSampleOptions::default()).unwrap();
        close(&zeros.to_vec::<f64>(), &[0.0]);
        let border = input().grid_sample_2d(&g, GridSampleOptions { padding: GridSamplePadding::Border, align_corners: false }).unwrap();
        close(&border.to_vec::<f64>(), &[1.0]);
        let reflection = GridSampleOptions { padding: GridSamplePadding::Reflection, align_corners: false };
        close(&input().grid_sample_2d(&grid(), reflection).unwrap().to_vec::<f64>(), &[4.0, 4.125, 8.0, 1.3]);
        // Huge and NaN locations read zeros instead of overflowing an index.
        let g = t(&[1e30, 0.0, f64::NAN, 0.0], &[1, 1, 2, 2]);
        close(&input().grid_sample_2d(&g, GridSampleOptions::default()).unwrap().to_vec::<f64>(), &[0.0, 0.0]);
    }

    #[test]
    fn bad_shapes_are_errors() {
        let e = input().grid_sample_2d(&t(&[0.0; 3], &[1, 1, 1, 3]), GridSampleOptions::default()).unwrap_err().to_string();
        assert!(e.contains("grid must be [1, h_out, w_out, 2]"), "{e}");
        assert!(input().grid_sample_2d(&t(&[0.0; 2], &[1, 2]), GridSampleOptions::default()).is_err());
        let empty = Tensor::zeros(&[1, 1, 0, 3], DType::F64);
        assert!(empty.grid_sample_2d(&grid(), GridSampleOptions::default()).is_err());
    }
}
