//! Cumulative ops along one dim: running sum, product, minimum and maximum,
//! each the same shape as its input. Int sums and products wrap; a NaN
//! carries through the rest of a running minimum or maximum.

use crate::error::Result;
use crate::kernels::parallel::PAR_CHEAP;
use crate::kernels::reduce::Axis;
use crate::kernels::scan::scan_axis;
use crate::ops::reduce::{elements, tensor_from, Accumulate};
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

fn scan<T: Accumulate>(x: &Tensor, d: usize, s: Scan) -> Tensor {
    let data = elements::<T>(x);
    let ax = Axis::new(x.shape(), d);
    let mut out = vec![T::ZERO; data.len()];
    match s {
        Scan::Sum => scan_axis(&data, ax, &mut out, PAR_CHEAP, T::add_wrapping),
        Scan::Prod => scan_axis(&data, ax, &mut out, PAR_CHEAP, T::mul_wrapping),
        Scan::Min => scan_axis(&data, ax, &mut out, PAR_CHEAP, T::min_nan),
        Scan::Max => scan_axis(&data, ax, &mut out, PAR_CHEAP, T::max_nan),
    }
    tensor_from(out, x.shape())
}

impl Tensor {
    fn scan_dim(&self, dim: isize, s: Scan) -> Result<Tensor> {
        with_num!(s.name(), self.dtype(), T => {
            let d = self.dim(s.name(), dim)?;
            Ok(scan::<T>(self, d, s))
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
