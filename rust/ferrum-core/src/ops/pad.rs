//! Reshaping by copying: constant padding, tiling (`repeat`) and cyclic
//! shifts (`roll`). All of them move whole rows with `copy_from_slice`.

use crate::autodiff::{record, FnBackward, Var};
use std::borrow::Cow;

use rayon::prelude::*;

use crate::dtype::Scalar;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernels::copy::{contiguous_values, copy_strided};
use crate::kernels::parallel::{go_parallel, PAR_CHEAP};
use crate::layout::Layout;
use crate::shape::{checked_numel, try_filled, try_zeroed};
use crate::tensor::Tensor;
use crate::with_dtype;

impl Tensor {
    /// Pad with `value`; `pads[0]` is (before, after) for the last dim,
    /// `pads[1]` for the one before it, and so on (torch's F.pad order).
    pub fn pad(&self, pads: &[(usize, usize)], value: Scalar) -> Result<Tensor> {
        let op = "pad";
        let r = self.rank();
        if pads.len() > r {
            return Err(Error::invalid(op, format!("{} (before, after) pairs given for a tensor of rank {r} (shape {:?})", pads.len(), self.shape())));
        }
        let mut shape = self.shape().to_vec();
        for (i, &(before, after)) in pads.iter().enumerate() {
            let d = r - 1 - i;
            shape[d] = shape[d]
                .checked_add(before)
                .and_then(|n| n.checked_add(after))
                .ok_or_else(|| Error::invalid(op, format!("padding ({before}, {after}) overflows dim {d} of size {}", self.shape()[d])))?;
        }
        let n = checked_numel(op, &shape, self.dtype().size_in_bytes())?;
        let full = Layout::contiguous(&shape);
        let mut inner = full.clone();
        for (i, &(before, _)) in pads.iter().enumerate() {
            let d = r - 1 - i;
            inner = inner.narrow_step(d, before, self.shape()[d], 1);
        }
        with_dtype!(self.dtype(), T => {
            let mut out = try_filled(op, n, T::from_scalar(value))?;
            copy_strided(self.buffer::<T>(), self.layout(), &mut out, &inner);
            Tensor::from_parts(T::wrap_vec(out), full)
        })
    }

    /// Tile the tensor `times[d]` times along each dim d (torch's repeat with
    /// one count per dim).
    pub fn repeat(&self, times: &[usize]) -> Result<Tensor> {
        if times.len() != self.rank() {
            return Err(Error::invalid(
                "repeat",
                format!("expected {} repeat counts for shape {:?}, found {:?}", self.rank(), self.shape(), times),
            ));
        }
        repeat_unchecked(self, times)
    }

    /// Tile the tensor `times` times along `dim`.
    pub fn repeat_dim(&self, dim: isize, times: usize) -> Result<Tensor> {
        let d = self.dim("repeat_dim", dim)?;
        let mut all = vec![1; self.rank()];
        all[d] = times;
        repeat_unchecked(self, &all)
    }

    /// Shift elements cyclically by `shifts[i]` along `dims[i]` (torch.roll);
    /// a repeated dim adds its shifts up, and no dims at all is a no-op.
    pub fn roll(&self, shifts: &[i64], dims: &[isize]) -> Result<Tensor> {
        let op = "roll";
        if shifts.len() != dims.len() {
            return Err(Error::invalid(op, format!("{} shifts given for {} dims ({shifts:?} and {dims:?}); they must pair up", shifts.len(), dims.len())));
        }
        let mut total = vec![0usize; self.rank()];
        for (&s, &dim) in shifts.iter().zip(dims) {
            let d = self.dim(op, dim)?;
            let n = self.shape()[d];
            if n > 0 {
                total[d] = (total[d] + s.rem_euclid(n as i64) as usize) % n;
            }
        }
        let rolled: Vec<(usize, usize)> = total.iter().enumerate().filter(|&(_, &s)| s > 0).map(|(d, &s)| (d, s)).collect();
        if rolled.is_empty() || self.numel() == 0 {
            return Ok(self.clone());
        }
        let full = Layout::contiguous(self.shape());
        with_dtype!(self.dtype(), T => {
            // A broadcast view can be far larger than its buffer.
            let mut out = try_zeroed(op, full.numel(), T::ZERO)?;
            // Each rolled dim splits into two blocks that swap places, so the
            // output is 2^k block copies for k rolled dims.
            for corner in 0..1usize << rolled.len() {
                let (mut src, mut dst) = (self.layout().clone(), full.clone());
                for (bit, &(d, s)) in rolled.iter().enumerate() {
                    let n = self.shape()[d];
                    if corner >> bit & 1 == 0 {
                        src = src.narrow_step(d, 0, n - s, 1);
                        dst = dst.narrow_step(d, s, n - s, 1);
                    } else {
                        src = src.narrow_step(d, n - s, s, 1);
                        dst = dst.narrow_step(d, 0, s, 1);
                    }
                }
                copy_strided(self.buffer::<T>(), &src, &mut out, &dst);
            }
            Tensor::from_parts(T::wrap_vec(out), full)
        })
    }
}

/// `repeat` once the counts match the rank: the output size is checked and
/// every buffer allocated fallibly, so a huge count is an error, not an abort.
fn repeat_unchecked(t: &Tensor, times: &[usize]) -> Result<Tensor> {
    let op = "repeat";
    let shape = t
        .shape()
        .iter()
        .zip(times)
        .map(|(&n, &k)| n.checked_mul(k))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| Error::invalid(op, format!("repeating shape {:?} by {times:?} overflows the dim sizes", t.shape())))?;
    if times.iter().all(|&k| k == 1) {
        return Ok(t.clone());
    }
    checked_numel(op, &shape, t.dtype().size_in_bytes())?;
    if shape.contains(&0) {
        return Ok(Tensor::zeros(&shape, t.dtype()));
    }
    with_dtype!(t.dtype(), T => {
        let mut data: Cow<[T]> = contiguous_values::<T>(op, t)?;
        let mut cur = t.shape().to_vec();
        // One pass per repeated dim, innermost first: each pass sees the
        // tensor as [rows, block] with block = the dims from d on, and lays
        // each block out k times in a row.
        for d in (0..cur.len()).rev() {
            let k = times[d];
            if k == 1 {
                continue;
            }
            let block: usize = cur[d..].iter().product();
            data = Cow::Owned(tile_blocks(op, &data, block, k)?);
            cur[d] *= k;
        }
        Tensor::from_vec(data.into_owned(), &shape)
    })
}

/// Each `block` of `src` written `k` times in a row.
fn tile_blocks<T: Element>(op: &'static str, src: &[T], block: usize, k: usize) -> Result<Vec<T>> {
    let mut out = try_filled(op, src.len() * k, T::ZERO)?;
    let tile = |(o, b): (&mut [T], &[T])| {
        if block == 1 {
            o.fill(b[0]);
        } else {
            o.chunks_exact_mut(block).for_each(|piece| piece.copy_from_slice(b));
        }
    };
    if go_parallel(out.len(), PAR_CHEAP) {
        out.par_chunks_exact_mut(block * k).zip(src.par_chunks_exact(block)).for_each(tile);
    } else {
        out.chunks_exact_mut(block * k).zip(src.chunks_exact(block)).for_each(tile);
    }
    Ok(out)
}

impl Var {
    /// The gradient of the padded region is dropped.
    pub fn pad(&self, pads: &[(usize, usize)], value: Scalar) -> Result<Var> {
        let y = self.value.pad(pads, value)?;
        let rank = self.value.rank();
        let mut specs = vec![crate::tensor::views::SliceSpec::full(); rank];
        for (i, &(before, _)) in pads.iter().enumerate() {
            let d = rank - 1 - i;
            let n = self.value.shape()[d] as isize;
            specs[d] = crate::tensor::views::SliceSpec::range(before as isize, before as isize + n);
        }
        Ok(record(y, &[self], move || FnBackward::new("pad", move |g, _| Ok(vec![Some(g.slice(&specs)?.try_contiguous("pad")?)]))))
    }

    /// Each tile's gradient is summed back onto the original.
    pub fn repeat(&self, times: &[usize]) -> Result<Var> {
        let y = self.value.repeat(times)?;
        let shape = self.value.shape().to_vec();
        let t = times.to_vec();
        Ok(record(y, &[self], move || {
            FnBackward::new("repeat", move |g, _| {
                // [t0*s0, t1*s1, ...] -> [t0, s0, t1, s1, ...], sum the t dims.
                let split: Vec<isize> = t.iter().zip(&shape).flat_map(|(&k, &s)| [k as isize, s as isize]).collect();
                let tile_dims: Vec<isize> = (0..t.len()).map(|i| 2 * i as isize).collect();
                let summed = g.reshape(&split)?.sum_dims(&tile_dims)?;
                Ok(vec![Some(summed.reshape(&shape.iter().map(|&s| s as isize).collect::<Vec<_>>())?)])
            })
        }))
    }

    pub fn repeat_dim(&self, dim: isize, times: usize) -> Result<Var> {
        let d = self.value.dim("repeat_dim", dim)?;
        let mut t = vec![1; self.value.rank()];
        t[d] = times;
        self.repeat(&t)
    }

    pub fn roll(&self, shifts: &[i64], dims: &[isize]) -> Result<Var> {
        let y = self.value.roll(shifts, dims)?;
        let (back, d): (Vec<i64>, Vec<isize>) = (shifts.iter().map(|s| -s).collect(), dims.to_vec());
        Ok(record(y, &[self], move || FnBackward::new("roll", move |g, _| Ok(vec![Some(g.roll(&back, &d)?)]))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn range(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec((0..n as i64).collect::<Vec<_>>(), shape).unwrap()
    }

    #[test]
    fn pads_the_last_dims_in_torch_order() {
        let x = range(&[2, 2]);
        let p = x.pad(&[(1, 0)], Scalar::Int(-1)).unwrap();
        assert_eq!((p.shape(), p.to_vec::<i64>()), (&[2usize, 3][..], vec![-1, 0, 1, -1, 2, 3]));
        let p = x.pad(&[(0, 1), (1, 1)], Scalar::Int(9)).unwrap();
        assert_eq!(p.shape(), &[4, 3]);
        assert_eq!(p.to_vec::<i64>(), vec![9, 9, 9, 0, 1, 9, 2, 3, 9, 9, 9, 9]);
        assert_eq!(x.pad(&[], Scalar::Int(0)).unwrap().to_vec::<i64>(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn pads_a_view_and_floats() {
        let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap().transpose();
        let p = x.pad(&[(0, 0), (1, 0)], Scalar::Float(0.5)).unwrap();
        assert_eq!(p.shape(), &[4, 2]);
        assert_eq!(p.to_vec::<f32>(), vec![0.5, 0.5, 1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        let e = Tensor::zeros(&[0, 2], DType::Bool).pad(&[(1, 1), (0, 1)], Scalar::Bool(true)).unwrap();
        assert_eq!((e.shape(), e.to_vec::<bool>()), (&[1usize, 4][..], vec![true; 4]));
    }

    #[test]
    fn pad_errors() {
        let e = range(&[3]).pad(&[(1, 1), (1, 1)], Scalar::Int(0)).unwrap_err().to_string();
        assert_eq!(e, "pad: 2 (before, after) pairs given for a tensor of rank 1 (shape [3])");
        let e = range(&[3]).pad(&[(usize::MAX, 1)], Scalar::Int(0)).unwrap_err().to_string();
        assert!(e.starts_with("pad: padding ("), "{e}");
    }

    #[test]
    fn repeat_tiles_like_torch() {
        let x = range(&[2, 2]);
        let r = x.repeat(&[2, 3]).unwrap();
        assert_eq!(r.shape(), &[4, 6]);
        let row0 = vec![0, 1, 0, 1, 0, 1];
        let row1 = vec![2, 3, 2, 3, 2, 3];
        assert_eq!(r.to_vec::<i64>(), [row0.clone(), row1.clone(), row0, row1].concat());
        assert_eq!(x.repeat(&[1, 1]).unwrap().to_vec::<i64>(), vec![0, 1, 2, 3]);
        assert_eq!(x.repeat(&[0, 2]).unwrap().shape(), &[0, 4]);
    }

    #[test]
    fn repeat_matches_a_naive_reference_on_a_view() {
        let x = range(&[3, 1, 2]).permute(&[2, 1, 0]).unwrap();
        let times = [2usize, 5, 3];
        let r = x.repeat(&times).unwrap();
        let s = x.shape().to_vec();
        assert_eq!(r.shape(), &[s[0] * 2, s[1] * 5, s[2] * 3]);
        for i in 0..r.shape()[0] {
            for j in 0..r.shape()[1] {
                for k in 0..r.shape()[2] {
                    assert_eq!(r.get(&[i, j, k]).unwrap(), x.get(&[i % s[0], j % s[1], k % s[2]]).unwrap());
                }
            }
        }
    }

    #[test]
    fn repeat_dim_and_errors() {
        let x = Tensor::from_vec(vec![true, false], &[1, 2]).unwrap();
        let r = x.repeat_dim(-2, 3).unwrap();
        assert_eq!((r.shape(), r.to_vec::<bool>()), (&[3usize, 2][..], vec![true, false, true, false, true, false]));
        assert_eq!(x.repeat_dim(1, 2).unwrap().to_vec::<bool>(), vec![true, false, true, false]);
        let e = x.repeat(&[2]).unwrap_err().to_string();
        assert_eq!(e, "repeat: expected 2 repeat counts for shape [1, 2], found [2]");
        assert!(matches!(x.repeat_dim(2, 2), Err(Error::DimOutOfRange { op: "repeat_dim", dim: 2, rank: 2 })));
    }

    #[test]
    fn roll_follows_torch() {
        // The torch.roll docs example: x = [[1, 2], [3, 4], [5, 6], [7, 8]].
        let x = Tensor::from_vec((1..=8i64).collect::<Vec<_>>(), &[4, 2]).unwrap();
        assert_eq!(x.roll(&[1], &[0]).unwrap().to_vec::<i64>(), vec![7, 8, 1, 2, 3, 4, 5, 6]);
        assert_eq!(x.roll(&[-1], &[0]).unwrap().to_vec::<i64>(), vec![3, 4, 5, 6, 7, 8, 1, 2]);
        assert_eq!(x.roll(&[2, 1], &[0, 1]).unwrap().to_vec::<i64>(), vec![6, 5, 8, 7, 2, 1, 4, 3]);
        assert_eq!(x.roll(&[1, 1], &[0, -2]).unwrap().to_vec::<i64>(), x.roll(&[2], &[0]).unwrap().to_vec::<i64>());
        assert_eq!(x.roll(&[], &[]).unwrap().to_vec::<i64>(), x.to_vec::<i64>());
        assert_eq!(x.roll(&[-9], &[1]).unwrap().to_vec::<i64>(), vec![2, 1, 4, 3, 6, 5, 8, 7]);
    }

    #[test]
    fn roll_a_view_against_a_naive_reference() {
        let x = range(&[3, 4]).transpose();
        let r = x.roll(&[1, -2], &[0, 1]).unwrap();
        for i in 0..4 {
            for j in 0..3 {
                assert_eq!(r.get(&[(i + 1) % 4, (j + 1) % 3]).unwrap(), x.get(&[i, j]).unwrap());
            }
        }
    }

    #[test]
    fn roll_errors() {
        let x = range(&[3]);
        let e = x.roll(&[1, 2], &[0]).unwrap_err().to_string();
        assert_eq!(e, "roll: 2 shifts given for 1 dims ([1, 2] and [0]); they must pair up");
        assert!(matches!(x.roll(&[1], &[1]), Err(Error::DimOutOfRange { op: "roll", dim: 1, rank: 1 })));
        assert_eq!(Tensor::zeros(&[0, 2], DType::F32).roll(&[1], &[0]).unwrap().shape(), &[0, 2]);
    }

    #[test]
    fn huge_outputs_are_errors() {
        let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        let err = x.pad(&[(1 << 62, 1 << 62)], Scalar::Float(0.0)).unwrap_err().to_string();
        assert!(err.contains("pad") && err.contains("too many elements"), "{err}");
        let err = x.repeat(&[1 << 40]).unwrap_err().to_string();
        assert!(err.contains("repeat") && err.contains("cannot allocate"), "{err}");
        let err = x.repeat(&[usize::MAX]).unwrap_err().to_string();
        assert!(err.contains("repeat") && err.contains("overflows"), "{err}");
        let err = x.repeat_dim(0, 1 << 61).unwrap_err().to_string();
        assert!(err.contains("repeat"), "{err}");
    }
}
