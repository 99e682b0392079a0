//! Matrix multiplication over the last two dims, batched over the leading
//! dims with broadcasting (size-1 batch dims stretch, like torch's `@`).

use std::mem::MaybeUninit;

use crate::autodiff::{record, sum_to_shape, FnBackward, Var};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::interrupt;
use crate::kernels::alloc::new_filled;
use crate::kernels::gemm::{Dims, GemmElement, Mat};
use crate::kernels::team;
use crate::layout::{DimVec, Layout};
use crate::shape::broadcast_shape;
use crate::tensor::Tensor;
use crate::DType;

/// Per-batch matrices smaller than this (m*n*k) run batches in parallel
/// instead of threading inside each GEMM.
const SMALL_GEMM: usize = 1 << 15;

/// Per-batch matrices up to this size (m*n*k) also run batches in parallel
/// when there are enough batches to share evenly: attention's 256 heads of
/// 128x128x32 ran at 205 GF/s split across heads against 145 threaded
/// inside each product, whose every head waited for both threads.
const MID_GEMM: usize = 1 << 24;

/// Whether `batches` products of `size` multiply-adds each run one per
/// thread at a time (else one after another, each on every thread).
fn across_batches(batches: usize, size: usize, threads: usize) -> bool {
    let even = batches.is_multiple_of(threads.max(1)) || batches >= 4 * threads;
    batches > 1 && (size < SMALL_GEMM || (size < MID_GEMM && batches >= threads && even))
}

impl Tensor {
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        let op = "matmul";
        self.expect_same_dtype(op, other)?;
        if self.rank() < 1 || self.rank() != other.rank() {
            return Err(Error::shapes(op, self.shape(), other.shape(), "matmul needs two tensors of equal rank"));
        }
        if self.rank() == 1 {
            // A dot product, kept as a rank-1 tensor of one element.
            let p = self.unsqueeze_dim(0)?.matmul(&other.unsqueeze_dim(1)?)?;
            return p.reshape(&[1]);
        }
        let r = self.rank();
        let (m, k) = (self.shape()[r - 2], self.shape()[r - 1]);
        let (k2, n) = (other.shape()[r - 2], other.shape()[r - 1]);
        if k != k2 {
            return Err(Error::shapes(op, self.shape(), other.shape(), format!("inner dims differ ({k} and {k2})")));
        }
        let batch = broadcast_shape(op, &self.shape()[..r - 2], &other.shape()[..r - 2])?;
        match self.dtype() {
            DType::F32 => batched::<f32>(self, other, &batch, m, k, n),
            DType::F64 => batched::<f64>(self, other, &batch, m, k, n),
            DType::I64 => batched::<i64>(self, other, &batch, m, k, n),
            // f32 accumulation, rounded once: on AVX512_BF16 for bf16, else through the f32 kernel.
            DType::BF16 => batched::<half::bf16>(self, other, &batch, m, k, n),
            DType::F16 => batched::<half::f16>(self, other, &batch, m, k, n),
            DType::Bool => Err(Error::KindMismatch { op, expected: crate::Kind::Float, found: crate::Kind::Bool }),
            storage => Err(Error::StorageDType { op, dtype: storage }),
        }
    }
}

fn batched<T: Element + GemmElement>(a: &Tensor, b: &Tensor, batch: &[usize], m: usize, k: usize, n: usize) -> Result<Tensor> {
    let r = a.rank();
    let nb: usize = batch.iter().product();
    let mut out_shape = batch.to_vec();
    out_shape.extend([m, n]);
    let total = m.checked_mul(n).and_then(|mn| mn.checked_mul(nb)).ok_or_else(|| Error::shapes("matmul", a.shape(), b.shape(), "output too large"))?;
    let (la, lb) = (a.layout(), b.layout());
    let (ba, bb) = (a.buffer::<T>(), b.buffer::<T>());
    // Offsets of each batch's matrix, walking batch dims with broadcast strides.
    let offsets = |l: &Layout| -> Vec<usize> {
        let mut bl = Layout { shape: DimVec::from_slice(&l.shape[..r - 2]), strides: DimVec::from_slice(&l.strides[..r - 2]), offset: l.offset };
        bl = bl.broadcast_to("matmul", batch).expect("batch shape was broadcast from these dims");
        if batch.is_empty() { vec![l.offset] } else { bl.offsets().collect() }
    };
    let (oa, ob) = (offsets(la), offsets(lb));
    let mat = |l: &Layout, off: usize| Mat { offset: off, rs: l.strides[r - 2], cs: l.strides[r - 1] };
    let chunk = (m * n).max(1);
    // One matrix on the right for every batch (a weight broadcast over a
    // batch of sequences), and the left's batches stacked row after row:
    // a single product of nb * m rows. Per batch, a [32, 12, 32] Linear
    // ran 32 products of 12 rows, each paying the fixed costs of a call.
    let stacked = nb > 1 && ob.iter().all(|&o| o == ob[0]) && {
        let step = m as isize * la.strides[r - 2];
        oa.windows(2).all(|w| w[1] as isize - w[0] as isize == step)
    };
    let fill = |out: &mut [T]| {
        if stacked {
            T::gemm(out, ba, mat(la, oa[0]), bb, mat(lb, ob[0]), Dims { m: nb * m, k, n }, true);
            return;
        }
        // Between matrices a stopped call leaves the rest unwritten, which
        // `new_filled` then discards.
        if across_batches(nb, m * n * k, rayon::current_num_threads()) {
            team::for_each_chunk_mut(out, chunk, |i, dst| {
                if !interrupt::poll() {
                    T::gemm(dst, ba, mat(la, oa[i]), bb, mat(lb, ob[i]), Dims { m, k, n }, false);
                }
            });
        } else {
            for (i, dst) in out.chunks_mut(chunk).enumerate().take(nb) {
                if interrupt::poll() {
                    break;
                }
                T::gemm(dst, ba, mat(la, oa[i]), bb, mat(lb, ob[i]), Dims { m, k, n }, true);
            }
        }
    };
    // SAFETY: the chunks cover all nb * m * n elements, and a GEMM without
    // `accumulate` writes every element of its m x n destination (zeros when
    // k = 0) and reads none, so no uninitialised value is ever read; T is a
    // plain number type without drop glue.
    let out = unsafe { new_filled("matmul", total, |out| fill(&mut *(out as *mut [MaybeUninit<T>] as *mut [T]))) }?;
    Tensor::from_vec(out, &out_shape)
}

impl Var {
    /// Batched matmul; gradients `g @ b^T` and `a^T @ g`, summed over batch
    /// dims an input was broadcast along.
    pub fn matmul(&self, other: &Var) -> Result<Var> {
        if self.value.rank() == 1 && other.value.rank() == 1 {
            let p = self.unsqueeze_dims(&[0])?.matmul(&other.unsqueeze_dims(&[1])?)?;
            return p.reshape(&[1]);
        }
        let y = self.value.matmul(&other.value)?;
        let (sa, sb) = (self.value.shape().to_vec(), other.value.shape().to_vec());
        Ok(record(y, &[self, other], move || {
            // Each gradient reads the other operand: keep an operand only
            // when the other one is tracked.
            let (a, b) = (other.requires_grad().then(|| self.saved()), self.requires_grad().then(|| other.saved()));
            FnBackward::new("matmul", move |g, needs| {
                let ga = match (&b, needs[0]) {
                    (Some(b), true) => Some(sum_to_shape(g.matmul(&b.get()?.transpose())?, &sa)?),
                    _ => None,
                };
                let gb = match (&a, needs[1]) {
                    (Some(a), true) => Some(rhs_grad(&a.get()?, &g, &sb)?),
                    _ => None,
                };
                Ok(vec![ga, gb])
            })
        }))
    }
}

/// The gradient of the right operand of shape `sb`: `a^T @ g` summed over
/// the batch dims it was broadcast along. A right operand shared by every
/// batch (a weight) gets one product over all the batches' rows, `[k, nb *
/// m] @ [nb * m, n]`, instead of nb products summed afterwards (and, in a
/// half float, rounded once instead of twice).
fn rhs_grad(a: &Tensor, g: &Tensor, sb: &[usize]) -> Result<Tensor> {
    let (ra, rg) = (a.rank(), g.rank());
    let shared = sb[..sb.len() - 2].iter().all(|&d| d == 1) && rg > 2 && a.shape()[..ra - 2] == g.shape()[..rg - 2];
    if !shared {
        return sum_to_shape(a.transpose().matmul(g)?, sb);
    }
    let (m, k, n) = (a.shape()[ra - 2], a.shape()[ra - 1], g.shape()[rg - 1]);
    let rows: usize = g.shape()[..rg - 2].iter().product::<usize>() * m;
    let product = a.reshape(&[rows as isize, k as isize])?.transpose().matmul(&g.reshape(&[rows as isize, n as isize])?)?;
    product.reshape(&sb.iter().map(|&d| d as isize).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            }
        }
        c
    }

    #[test]
    fn matches_naive_including_transposed_views() {
        let (m, k, n) = (7, 5, 3);
        let a: Vec<f64> = (0..m * k).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..k * n).map(|i| (i as f64 * 0.11).cos()).collect();
        let ta = Tensor::from_vec(a.clone(), &[m, k]).unwrap();
        let tb = Tensor::from_vec(b.clone(), &[k, n]).unwrap();
        let want = naive(&a, &b, m, k, n);
        let got = ta.matmul(&tb).unwrap().to_vec::<f64>();
        assert!(got.iter().zip(&want).all(|(x, y)| (x - y).abs() < 1e-12));
        // (b^T a^T)^T == a b, through strided views.
        let got_t = tb.transpose().matmul(&ta.transpose()).unwrap().transpose().to_vec::<f64>();
        assert!(got_t.iter().zip(&want).all(|(x, y)| (x - y).abs() < 1e-12));
    }

    #[test]
    fn a_shared_right_operand_is_one_product_of_stacked_rows() {
        // [3, 4, 5] @ [1, 5, 2]: one matrix on the right, the left's batches stacked; and a
        // left operand whose batches are not stacked (batch dim last in memory) the same.
        let (nb, m, k, n) = (3, 4, 5, 2);
        let a: Vec<f64> = (0..nb * m * k).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..k * n).map(|i| (i as f64 * 0.11).cos()).collect();
        let ta = Tensor::from_vec(a.clone(), &[nb, m, k]).unwrap();
        let tb = Tensor::from_vec(b.clone(), &[1, k, n]).unwrap();
        let want: Vec<f64> = (0..nb).flat_map(|i| naive(&a[i * m * k..(i + 1) * m * k], &b, m, k, n)).collect();
        let got = ta.matmul(&tb).unwrap();
        assert_eq!(got.shape(), &[nb, m, n]);
        assert!(got.to_vec::<f64>().iter().zip(&want).all(|(x, y)| (x - y).abs() < 1e-12));
        let scattered = Tensor::from_vec(ta.permute(&[1, 2, 0]).unwrap().to_vec::<f64>(), &[m, k, nb]).unwrap().permute(&[2, 0, 1]).unwrap();
        assert!(scattered.matmul(&tb).unwrap().to_vec::<f64>().iter().zip(&want).all(|(x, y)| (x - y).abs() < 1e-12));
        // The weight's gradient of sum(A @ W) is one product over every batch's rows: column sums of A.
        let va = Var::leaf(ta.clone());
        let vb = Var::leaf(tb.clone());
        let grads = crate::autodiff::backward(&va.matmul(&vb).unwrap().sum().unwrap()).unwrap();
        let gb = grads.get(vb.id().unwrap()).unwrap();
        assert_eq!(gb.shape(), &[1, k, n]);
        let col: Vec<f64> = (0..k).map(|p| (0..nb * m).map(|r| a[r * k + p]).sum()).collect();
        let want_gb: Vec<f64> = col.iter().flat_map(|&c| [c; 2]).collect();
        assert!(gb.to_vec::<f64>().iter().zip(&want_gb).all(|(x, y)| (x - y).abs() < 1e-12), "{:?}", gb.to_vec::<f64>());
    }

    #[test]
    fn bf16_gradients_match_f64_with_either_operand_transposed() {
        // sum(c * (a @ b)): grad a = c @ b^T (B read transposed), grad b = a^T @ c
        // (A read transposed), in bf16 on whichever kernel this CPU picks; each
        // within a bf16 rounding (plus f32 summation) of the f64 product of the
        // same bf16 values. Shapes cut the 32-row blocks and 32-k steps.
        let v = |seed: usize, len: usize| -> Vec<f64> { (0..len).map(|i| half::bf16::from_f64(((i + seed) as f64 * 0.618_034).fract() * 2.0 - 1.0).to_f64()).collect() };
        for &(m, k, n) in &[(1, 1, 1), (5, 33, 17), (33, 47, 35), (64, 100, 40), (70, 16, 129)] {
            let (a, b, c) = (v(1, m * k), v(7, k * n), v(13, m * n));
            let t = |x: &[f64], r: usize, c: usize| Tensor::from_vec(x.to_vec(), &[r, c]).unwrap().cast(DType::BF16).unwrap();
            let (va, vb) = (Var::leaf(t(&a, m, k)), Var::leaf(t(&b, k, n)));
            let y = va.matmul(&vb).unwrap();
            let loss = y.binary(crate::ops::binary::BinaryOp::Mul, &Var::constant(t(&c, m, n))).unwrap().sum().unwrap();
            let grads = crate::autodiff::backward(&loss).unwrap();
            let got = |v: &Var| grads.get(v.id().unwrap()).unwrap().cast(DType::F64).unwrap().to_vec::<f64>();
            let check = |name: &str, got: Vec<f64>, rows: usize, cols: usize, inner: usize, term: &dyn Fn(usize, usize, usize) -> f64| {
                for i in 0..rows {
                    for j in 0..cols {
                        let (exact, size) = (0..inner).fold((0.0, 0.0), |(e, s), p| (e + term(i, j, p), s + term(i, j, p).abs()));
                        let bound = exact.abs() * 2f64.powi(-8) + size * 1e-6 * (inner as f64 + 2.0);
                        let g = got[i * cols + j];
                        assert!((g - exact).abs() <= bound, "{m}x{k}x{n} {name}[{i}][{j}] = {g}, expected {exact}");
                    }
                }
            };
            check("grad a", got(&va), m, k, n, &|i, j, p| c[i * n + p] * b[j * n + p]);
            check("grad b", got(&vb), k, n, m, &|i, j, p| a[p * k + i] * c[p * n + j]);
        }
    }

    #[test]
    fn batch_dims_broadcast() {
        let a = Tensor::ones(&[4, 2, 3], DType::F32);
        let b = Tensor::ones(&[1, 3, 5], DType::F32);
        let c = a.matmul(&b).unwrap();
        assert_eq!(c.shape(), &[4, 2, 5]);
        assert!(c.to_vec::<f32>().iter().all(|&v| v == 3.0));
    }

    #[test]
    fn inner_dim_mismatch_is_reported() {
        let e = Tensor::ones(&[2, 3], DType::F32).matmul(&Tensor::ones(&[4, 2], DType::F32)).unwrap_err().to_string();
        assert!(e.contains("inner dims differ (3 and 4)"), "{e}");
    }

    #[test]
    fn batches_split_across_threads_when_they_share_evenly() {
        // Small products always go across batches.
        assert!(across_batches(2, 1000, 16));
        // Attention heads on 2 cores, and on a simulated 16-core pool.
        assert!(across_batches(256, 128 * 128 * 32, 2));
        assert!(across_batches(256, 128 * 128 * 32, 16));
        // 3 batches on 2 threads would leave one thread a batch more.
        assert!(!across_batches(3, 1 << 20, 2));
        assert!(across_batches(4, 1 << 20, 2));
        // Fewer batches than threads, or big products: threads inside each.
        assert!(!across_batches(8, 1 << 20, 16));
        assert!(!across_batches(64, 1 << 26, 2));
        assert!(!across_batches(1, 1000, 2));
    }

    #[test]
    fn int_matmul() {
        let a = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2]).unwrap();
        assert_eq!(a.matmul(&a).unwrap().to_vec::<i64>(), vec![7, 10, 15, 22]);
    }
}
