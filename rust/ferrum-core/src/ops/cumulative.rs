//! Cumulative ops along one dim: running sum, product, minimum and maximum,
//! each the same shape as its input. Int sums and products wrap; a NaN
//! carries through the rest of a running minimum or maximum.

use crate::autodiff::{record, FnBackward, Var};
use crate::error::Result;
use crate::kernels::copy::contiguous_values;
use crate::kernels::parallel::PAR_CHEAP;
use crate::kernels::reduce::Axis;
use crate::kernels::scan::scan_axis;
use crate::ops::reduce::{tensor_from, Accumulate};
use crate::tensor::Tensor;
use crate::with_num;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    Sum,
    Prod,
    Min,
    Max,
}

impl Scan {
    fn name(self) -> &'static str {
        match self {
            Scan::Sum => "cumsum",
            Scan::Prod => "cumprod",
            Scan::Min => "cummin",
            Scan::Max => "cummax",
        }
    }
}

fn scan<T: Accumulate>(x: &Tensor, d: usize, s: Scan) -> Result<Tensor> {
    let data = contiguous_values::<T>(s.name(), x)?;
    let ax = Axis::new(x.shape(), d);
    let mut out = vec![T::ZERO; data.len()];
    match s {
        Scan::Sum => scan_axis(&data, ax, &mut out, PAR_CHEAP, T::add_wrapping),
        Scan::Prod => scan_axis(&data, ax, &mut out, PAR_CHEAP, T::mul_wrapping),
        Scan::Min => scan_axis(&data, ax, &mut out, PAR_CHEAP, T::min_nan),
        Scan::Max => scan_axis(&data, ax, &mut out, PAR_CHEAP, T::max_nan),
    }
    Ok(tensor_from(out, x.shape()))
}

impl Tensor {
    fn scan_dim(&self, dim: isize, s: Scan) -> Result<Tensor> {
        with_num!(s.name(), self.dtype(), T => {
            let d = self.dim(s.name(), dim)?;
            scan::<T>(self, d, s)
        })
    }

    pub fn cumsum(&self, dim: isize) -> Result<Tensor> {
        self.scan_dim(dim, Scan::Sum)
    }

    pub fn cumprod(&self, dim: isize) -> Result<Tensor> {
        self.scan_dim(dim, Scan::Prod)
    }

    pub fn cummin(&self, dim: isize) -> Result<Tensor> {
        self.scan_dim(dim, Scan::Min)
    }

    pub fn cummax(&self, dim: isize) -> Result<Tensor> {
        self.scan_dim(dim, Scan::Max)
    }
}

impl Var {
    /// Each input contributes to every later output: a reversed cumsum.
    pub fn cumsum(&self, dim: isize) -> Result<Var> {
        let y = self.value.cumsum(dim)?;
        Ok(record(y, &[self], move || FnBackward::new("cumsum", move |g, _| Ok(vec![Some(reverse_cumsum(&g, dim)?)]))))
    }

    /// d y_j / d x_i = prod_{k <= j, k != i} x_k for j >= i.
    pub fn cumprod(&self, dim: isize) -> Result<Var> {
        let y = self.value.cumprod(dim)?;
        let x = self.value.clone();
        Ok(record(y, &[self], move || FnBackward::new("cumprod", move |g, _| Ok(vec![Some(cumprod_grad(&x, &g, dim)?)]))))
    }

    /// The gradient of each running extreme goes to the element it came from.
    fn running(&self, name: &'static str, y: Tensor, take_new: fn(f64, f64) -> bool, dim: isize) -> Result<Var> {
        let x = self.value.clone();
        Ok(record(y, &[self], move || {
            FnBackward::new(name, move |g, _| {
                let idx = running_source(&x, dim, take_new)?;
                Ok(vec![Some(Tensor::zeros(x.shape(), x.dtype()).scatter(dim, &idx, &g)?)])
            })
        }))
    }

    pub fn cummax(&self, dim: isize) -> Result<Var> {
        self.running("cummax", self.value.cummax(dim)?, |new, best| new >= best, dim)
    }

    pub fn cummin(&self, dim: isize) -> Result<Var> {
        self.running("cummin", self.value.cummin(dim)?, |new, best| new <= best, dim)
    }
}

/// Per row along `dim`: sum_{j >= i} g_j prod_{k <= j, k != i} x_k. Rows
/// without zeros use the O(n) form `reverse_cumsum(g * y) / x`; a row with a
/// zero takes the exact O(n^2) products, since dividing by it would be 0/0.
fn cumprod_grad(x: &Tensor, g: &Tensor, dim: isize) -> Result<Tensor> {
    let d = x.dim("cumprod", dim)? as isize;
    let last = x.rank() as isize - 1;
    let xs = x.cast(crate::DType::F64)?.movedim(&[d], &[last])?.try_contiguous("cumprod")?;
    let gs = g.cast(crate::DType::F64)?.movedim(&[d], &[last])?.try_contiguous("cumprod")?;
    let n = *xs.shape().last().unwrap_or(&1);
    let (xv, gv) = (xs.try_to_vec::<f64>("cumprod")?, gs.try_to_vec::<f64>("cumprod")?);
    let mut out = vec![0.0f64; xv.len()];
    for ((xr, gr), or) in xv.chunks(n.max(1)).zip(gv.chunks(n.max(1))).zip(out.chunks_mut(n.max(1))) {
        if xr.iter().all(|&v| v != 0.0) {
            let mut y = 1.0;
            let gy: Vec<f64> = xr.iter().zip(gr).map(|(&xv, &gv)| {
                y *= xv;
                gv * y
            }).collect();
            let mut acc = 0.0;
            for i in (0..xr.len()).rev() {
                acc += gy[i];
                or[i] = acc / xr[i];
            }
        } else {
            let mut prefix = 1.0;
            for i in 0..xr.len() {
                let mut p = prefix;
                let mut acc = gr[i] * p;
                for j in i + 1..xr.len() {
                    p *= xr[j];
                    acc += gr[j] * p;
                }
                or[i] = acc;
                prefix *= xr[i];
            }
        }
    }
    Tensor::from_vec(out, xs.shape())?.movedim(&[last], &[d])?.cast(x.dtype())?.reshape(&x.shape().iter().map(|&s| s as isize).collect::<Vec<_>>())
}

fn reverse_cumsum(g: &Tensor, dim: isize) -> Result<Tensor> {
    g.flip(&[dim])?.cumsum(dim)?.flip(&[dim])
}

/// For each position along `dim`, the index of the element the running
/// extreme was taken from (the latest one on ties, as torch).
fn running_source(x: &Tensor, dim: isize, take_new: fn(f64, f64) -> bool) -> Result<Tensor> {
    let d = x.dim("cummax", dim)?;
    let shape = x.shape();
    let (outer, n, inner) = (shape[..d].iter().product::<usize>(), shape[d], shape[d + 1..].iter().product::<usize>());
    let v = x.cast(crate::DType::F64)?.try_to_vec::<f64>("cummax")?;
    let mut out = vec![0i64; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let mut best = 0usize;
            for k in 0..n {
                let (new, cur) = (v[at(k)], v[at(best)]);
                if k == 0 || take_new(new, cur) || new.is_nan() {
                    best = k;
                }
                out[at(k)] = best as i64;
            }
        }
    }
    Tensor::from_vec(out, shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn i64s(v: &[i64], shape: &[usize]) -> Tensor {
        Tensor::from_vec(v.to_vec(), shape).unwrap()
    }

    #[test]
    fn running_values_along_each_dim() {
        let x = i64s(&[1, 2, 3, 4, 5, 6], &[2, 3]);
        assert_eq!(x.cumsum(1).unwrap().to_vec::<i64>(), vec![1, 3, 6, 4, 9, 15]);
        assert_eq!(x.cumsum(-2).unwrap().to_vec::<i64>(), vec![1, 2, 3, 5, 7, 9]);
        assert_eq!(x.cumprod(1).unwrap().to_vec::<i64>(), vec![1, 2, 6, 4, 20, 120]);
        assert_eq!(x.cumprod(0).unwrap().to_vec::<i64>(), vec![1, 2, 3, 4, 10, 18]);
        let y = i64s(&[3, 1, 2, 0, 5, -1], &[6]);
        assert_eq!(y.cummin(0).unwrap().to_vec::<i64>(), vec![3, 1, 1, 0, 0, -1]);
        assert_eq!(y.cummax(0).unwrap().to_vec::<i64>(), vec![3, 3, 3, 3, 5, 5]);
        assert_eq!(x.cumsum(1).unwrap().shape(), &[2, 3]);
    }

    #[test]
    fn matches_naive_on_a_transposed_view() {
        let v: Vec<f64> = (0..24).map(|i| (i as f64 * 1.7).sin()).collect();
        let t = Tensor::from_vec(v.clone(), &[2, 3, 4]).unwrap().swap_dims(0, 2).unwrap();
        // t[i, j, k] = v[k, j, i]; shape [4, 3, 2]. Cumulative max along dim 1.
        let got = t.cummax(1).unwrap().to_vec::<f64>();
        let mut want = vec![];
        for i in 0..4 {
            for j in 0..3 {
                for k in 0..2 {
                    want.push((0..=j).map(|jj| v[k * 12 + jj * 4 + i]).fold(f64::MIN, f64::max));
                }
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn ints_wrap_and_nan_carries() {
        let x = i64s(&[i64::MAX, 1], &[2]);
        assert_eq!(x.cumsum(0).unwrap().to_vec::<i64>(), vec![i64::MAX, i64::MIN]);
        let f = Tensor::from_vec(vec![1.0f32, f32::NAN, 5.0, 0.0], &[4]).unwrap();
        let m = f.cummax(0).unwrap().to_vec::<f32>();
        assert!(m[0] == 1.0 && m[1..].iter().all(|v| v.is_nan()));
        let m = f.cummin(0).unwrap().to_vec::<f32>();
        assert!(m[0] == 1.0 && m[1..].iter().all(|v| v.is_nan()));
        assert_eq!(f.cumsum(0).unwrap().to_vec::<f32>()[0], 1.0);
    }

    #[test]
    fn empty_and_errors() {
        let e = Tensor::zeros(&[2, 0], DType::F32);
        assert_eq!(e.cumsum(1).unwrap().shape(), &[2, 0]);
        let b = Tensor::from_vec(vec![true], &[1]).unwrap();
        assert_eq!(b.cumsum(0).unwrap_err().to_string(), "cumsum: expected a Float tensor, found Bool");
        assert_eq!(e.cummax(2).unwrap_err().to_string(), "cummax: dim 2 is out of range for a tensor of rank 2");
    }
}
