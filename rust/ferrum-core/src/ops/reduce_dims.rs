//! `max_dims`, `min_dims` and `max_abs_dims` (Burn): the reduction over
//! several dims at once, each kept with size 1, as successive one-dim
//! reductions (each differentiable).

use crate::autodiff::Var;
use crate::error::{Error, Result};

/// Which extreme [`Var::extreme_dims`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extreme {
    Max,
    Min,
    MaxAbs,
}

impl Var {
    /// The `which` extreme over `dims` (each kept with size 1); no dims is the tensor itself.
    pub fn extreme_dims(&self, dims: &[isize], which: Extreme) -> Result<Var> {
        let op = match which {
            Extreme::Max => "max_dims",
            Extreme::Min => "min_dims",
            Extreme::MaxAbs => "max_abs_dims",
        };
        let mut seen = Vec::with_capacity(dims.len());
        for &d in dims {
            let d = self.value.dim(op, d)?;
            if seen.contains(&d) {
                return Err(Error::invalid(op, format!("dim {d} is given twice in {dims:?}")));
            }
            seen.push(d);
        }
        let mut out = if which == Extreme::MaxAbs { self.abs()? } else { self.clone() };
        for &d in &seen {
            out = match which {
                Extreme::Min => out.min_dim(d as isize)?,
                _ => out.max_dim(d as isize)?,
            };
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor;

    #[test]
    fn over_several_dims() {
        let x = Var::constant(Tensor::from_vec(vec![1.0f64, -7.0, 3.0, 4.0, 5.0, -6.0], &[1, 2, 3]).unwrap());
        let m = x.extreme_dims(&[1, 2], Extreme::Max).unwrap();
        assert_eq!((m.value.shape(), m.value.to_vec::<f64>()), (&[1usize, 1, 1][..], vec![5.0]));
        assert_eq!(x.extreme_dims(&[-1], Extreme::Min).unwrap().value.to_vec::<f64>(), vec![-7.0, -6.0]);
        assert_eq!(x.extreme_dims(&[0, 1, 2], Extreme::MaxAbs).unwrap().value.to_vec::<f64>(), vec![7.0]);
        assert!(x.extreme_dims(&[1, -2], Extreme::Max).is_err());
    }
}
