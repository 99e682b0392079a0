//! Padding by reflection (`[a b c]` -> `c b [a b c] b a`, the edge itself
//! not repeated) or by repeating the edge (`a a [a b c] c c`), as Burn's
//! `PadMode::Reflect` and `PadMode::Edge` (torch's "reflect" and
//! "replicate"). Each padded dim is a gather of source indices (`select`),
//! so the gradient adds the padded copies back onto their sources.

use crate::autodiff::Var;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// How [`Var::pad_mode`] fills the border.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    Reflect,
    Edge,
}

/// Source index of each position of a dim of size `n` padded by `(before, after)`.
fn sources(op: &'static str, n: usize, d: usize, (before, after): (usize, usize), mode: PadMode) -> Result<Vec<i64>> {
    match mode {
        PadMode::Reflect if before >= n || after >= n => {
            return Err(Error::invalid(op, format!("reflect padding ({before}, {after}) must be smaller than dim {d} of size {n}")));
        }
        PadMode::Edge if n == 0 && before + after > 0 => {
            return Err(Error::invalid(op, format!("edge padding of dim {d}, which is empty, has no edge to repeat")));
        }
        _ => {}
    }
    let last = n as i64 - 1;
    Ok((0..(n + before + after) as i64)
        .map(|i| {
            let j = i - before as i64;
            match mode {
                PadMode::Reflect => if j < 0 { -j } else if j > last { 2 * last - j } else { j },
                PadMode::Edge => j.clamp(0, last),
            }
        })
        .collect())
}

impl Var {
    /// Pad by `mode`; `pads[0]` is (before, after) for the last dim, `pads[1]`
    /// for the one before it, and so on (the order of `pad`).
    pub fn pad_mode(&self, pads: &[(usize, usize)], mode: PadMode) -> Result<Var> {
        let op = "pad";
        let r = self.value.rank();
        if pads.len() > r {
            return Err(Error::invalid(op, format!("{} (before, after) pairs given for a tensor of rank {r} (shape {:?})", pads.len(), self.value.shape())));
        }
        let mut out = self.clone();
        for (i, &pair) in pads.iter().enumerate() {
            if pair == (0, 0) {
                continue;
            }
            let d = r - 1 - i;
            let idx = sources(op, self.value.shape()[d], d, pair, mode)?;
            let n = idx.len();
            out = out.select(d as isize, &Tensor::from_vec(idx, &[n])?)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflect_and_edge_like_torch() {
        let x = Var::constant(Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[1, 3]).unwrap());
        let r = x.pad_mode(&[(2, 1)], PadMode::Reflect).unwrap().value.to_vec::<f64>();
        assert_eq!(r, vec![3.0, 2.0, 1.0, 2.0, 3.0, 2.0]);
        let e = x.pad_mode(&[(2, 1), (1, 0)], PadMode::Edge).unwrap();
        assert_eq!(e.value.shape(), &[2, 6]);
        assert_eq!(e.value.to_vec::<f64>(), vec![1.0, 1.0, 1.0, 2.0, 3.0, 3.0, 1.0, 1.0, 1.0, 2.0, 3.0, 3.0]);
        assert!(x.pad_mode(&[(3, 0)], PadMode::Reflect).unwrap_err().to_string().contains("smaller than dim 1"));
    }

    #[test]
    fn gradient_adds_the_copies_back() {
        let leaf = Var::leaf(Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap());
        let y = leaf.pad_mode(&[(2, 2)], PadMode::Reflect).unwrap();
        let g = crate::autodiff::backward(&y.sum().unwrap()).unwrap().get(leaf.id().unwrap()).unwrap().to_vec::<f64>();
        // [3 2 | 1 2 3 | 2 1]: index 0 twice, 1 three times, 2 twice.
        assert_eq!(g, vec![2.0, 3.0, 2.0]);
    }
}
