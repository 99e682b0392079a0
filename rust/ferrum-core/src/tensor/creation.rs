//! Creating tensors: filled, ranges, identity, random.


use super::Tensor;
use crate::autodiff::{record, FnBackward, Var};
use crate::dtype::{DType, Scalar};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::random::Distribution;
use crate::with_dtype;

impl Tensor {
    /// A tensor of `shape` with every element `value` (converted to `dtype`).
    /// For the shape of a tensor that exists, whose count is known to fit;
    /// [`Tensor::try_full`] takes shapes from outside.
    pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Tensor {
        let n: usize = shape.iter().product();
        with_dtype!(dtype, T => Tensor::from_vec(vec![T::from_scalar(value); n], shape).expect("full: the shape of an existing tensor"))
    }

    /// `full` for user-given shapes: a shape too large to allocate is an
    /// error naming `op`, not an abort.
    pub fn try_full(op: &'static str, shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
        let n = crate::shape::checked_numel(op, shape, dtype.size_in_bytes())?;
        with_dtype!(dtype, T => Tensor::from_vec(crate::shape::try_filled(op, n, T::from_scalar(value))?, shape))
    }

    pub fn zeros(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::full(shape, Scalar::Int(0), dtype)
    }

    pub fn ones(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::full(shape, Scalar::Int(1), dtype)
    }

    /// Integers `start, start + step, ...` below `end` (above, for a negative step).
    pub fn arange_step(start: i64, end: i64, step: i64, dtype: DType) -> Result<Tensor> {
        if step == 0 {
            return Err(Error::invalid("arange_step", "step must not be 0"));
        }
        let n = if (step > 0 && end > start) || (step < 0 && end < start) {
            (end as i128 - start as i128).unsigned_abs().div_ceil(step.unsigned_abs() as u128) as usize
        } else {
            0
        };
        crate::shape::checked_numel("arange", &[n], dtype.size_in_bytes())?;
        with_dtype!(dtype, T => {
            let mut v: Vec<T> = crate::shape::try_with_capacity("arange", n)?;
            v.extend((0..n).map(|i| T::from_scalar(Scalar::Int(start + i as i64 * step))));
            Tensor::from_vec(v, &[n])
        })
    }

    /// Burn's `cartesian_grid`: Int `[..shape, rank]` holding at each
    /// position its own index (`grid[i, j] == [i, j]` for a 2-d shape).
    pub fn cartesian_grid(shape: &[usize]) -> Result<Tensor> {
        let op = "cartesian_grid";
        if shape.is_empty() {
            return Err(Error::invalid(op, "expected a shape of at least one dim, found []"));
        }
        let rank = shape.len();
        let mut out_shape = shape.to_vec();
        out_shape.push(rank);
        let n = crate::shape::checked_numel(op, &out_shape, 8)?;
        let mut v: Vec<i64> = crate::shape::try_with_capacity(op, n)?;
        let mut index = vec![0usize; rank];
        for _ in 0..crate::shape::numel(shape) {
            v.extend(index.iter().map(|&i| i as i64));
            // Row-major increment of the multi-index.
            for d in (0..rank).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Tensor::from_vec(v, &out_shape)
    }

    /// The `size x size` identity matrix.
    pub fn eye(size: usize, dtype: DType) -> Result<Tensor> {
        let n = crate::shape::checked_numel("eye", &[size, size], dtype.size_in_bytes())?;
        with_dtype!(dtype, T => {
            let mut v = crate::shape::try_filled("eye", n, T::ZERO)?;
            for i in 0..size {
                v[i * size + i] = T::ONE;
            }
            Tensor::from_vec(v, &[size, size])
        })
    }

    /// Samples of `dist`, converted to `dtype` (Int truncates, Bool is != 0).
    pub fn random(shape: &[usize], dist: Distribution, dtype: DType) -> Result<Tensor> {
        let n = crate::shape::checked_numel("random", shape, 8)?;
        match dtype {
            DType::F32 => Tensor::from_vec(dist.sample_f32(n)?, shape),
            DType::F64 => Tensor::from_vec(dist.sample_f64(n)?, shape),
            DType::I64 => Tensor::from_vec(dist.sample_f64(n)?.into_iter().map(|v| v as i64).collect(), shape),
            DType::Bool => Tensor::from_vec(dist.sample_f64(n)?.into_iter().map(|v| v != 0.0).collect(), shape),
            storage => Tensor::random(shape, dist, storage.compute())?.cast(storage),
        }
    }

    /// The same values converted to `dtype` (a no-op view when equal).
    /// The values as `dtype`. Floats round to the nearest value of a
    /// narrower float (overflowing to infinity, as IEEE and NumPy do); a
    /// float becomes an integer truncated toward zero; a value the target
    /// cannot hold (NaN or infinity to an integer, 300 to u8, -1 to u8, an
    /// i64 beyond i32) is an error naming it rather than a silent wrap.
    pub fn cast(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        if let Some(range) = dtype.int_range() {
            with_dtype!(self.dtype(), S => check_fits::<S>(self, dtype, range)?);
        }
        use crate::kernels::elementwise::map;
        use crate::kernels::parallel::PAR_CHEAP;
        use half::{bf16, f16};
        // Between f32 and the half floats (every mixed-precision step and
        // half kernel that widens crosses here) in branch-free lanes rather
        // than through f64: the same values, several times faster.
        match (self.dtype(), dtype) {
            (DType::BF16, DType::F32) => return map("cast", self, PAR_CHEAP, |x: bf16| f32::from_bits(u32::from(x.to_bits()) << 16)),
            (DType::F32, DType::BF16) => return map("cast", self, PAR_CHEAP, |x: f32| bf16::from_bits(crate::kernels::gemm_half::round_to_bf16(x))),
            (DType::F16, DType::F32) => return map("cast", self, PAR_CHEAP, |x: f16| x.to_f32()),
            (DType::F32, DType::F16) => return map("cast", self, PAR_CHEAP, f16::from_f32),
            _ => {}
        }
        with_dtype!(self.dtype(), S => with_dtype!(dtype, D => {
            map::<S, D>("cast", self, PAR_CHEAP, cast_elem::<S, D>)
        }))
    }
}

/// Fail, naming the first offending value, unless every element of `t`
/// converts to the integer `dtype` (of `range`) without changing beyond
/// float truncation.
fn check_fits<S: Element>(t: &Tensor, dtype: DType, (lo, hi): (i64, i64)) -> Result<()> {
    let (src, widening) = (t.dtype(), t.dtype().int_range().is_some_and(|(a, b)| a >= lo && b <= hi));
    if src == DType::Bool || widening || t.numel() == 0 {
        return Ok(());
    }
    let values = t.try_to_vec::<S>("cast")?;
    let bad = values.iter().find(|v| match v.to_scalar() {
        Scalar::Int(i) => i < lo || i > hi,
        // [lo, hi + 1) holds every float that truncates into range; both
        // ends are exact in f64 (powers of two, or below 2^53).
        Scalar::Float(f) => !(f.trunc() >= lo as f64 && f.trunc() < hi as f64 + 1.0),
        Scalar::Bool(_) => false,
    });
    match bad {
        None => Ok(()),
        Some(v) => {
            let shown = match v.to_scalar() {
                Scalar::Float(f) => format!("{f:?}"),
                other => format!("{}", other.to_i64()),
            };
            Err(Error::invalid(
                "cast",
                format!("the {src} value {shown} does not fit in {dtype} (which holds {lo}..={hi}); clamp it first, or cast to a wider dtype"),
            ))
        }
    }
}

impl Var {
    /// A cast between Float dtypes carries the gradient back to the input's
    /// dtype; a cast to Int or Bool leaves the graph.
    pub fn cast(&self, dtype: DType) -> Result<Var> {
        let (from, y) = (self.value.dtype(), self.value.cast(dtype)?);
        if dtype.kind() != crate::Kind::Float || from.kind() != crate::Kind::Float {
            return Ok(Var::constant(y));
        }
        Ok(record(y, &[self], move || FnBackward::new("cast", move |g, _| Ok(vec![Some(g.cast(from)?)]))))
    }
}

#[inline(always)]
fn cast_elem<S: Element, D: Element>(x: S) -> D {
    match (S::DTYPE.kind(), D::DTYPE.kind()) {
        // Integers between integers exactly (i64 through f64 would round).
        (crate::Kind::Int, crate::Kind::Int) | (crate::Kind::Bool, _) | (_, crate::Kind::Bool) => D::from_scalar(x.to_scalar()),
        _ => D::from_f64(x.to_f64()),
    }
}
