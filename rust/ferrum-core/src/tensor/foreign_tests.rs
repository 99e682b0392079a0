//! Tensors over foreign memory (`Tensor::from_foreign`): right values from
//! every kind of op, the memory never written by ferrum, and its owner
//! released exactly once, after the last tensor sharing it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::autodiff::Var;
use crate::ops::binary::BinaryOp;
use crate::ops::conv::ConvOptions;
use crate::ops::conv_fused::ConvTail;
use crate::ops::unary::FloatUnary;
use crate::{Element, Layout, Scalar, Tensor};

/// Memory "another library" allocated: a leaked vector, freed when the
/// last handle on it goes (the tensor's owner handle or the test's loan).
struct Leaked<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: the leaked vector is only reached through its handles: freed by
// the last one, read and written by the test only between ops.
unsafe impl<T: Send> Send for Leaked<T> {}
// SAFETY: as for Send.
unsafe impl<T: Sync> Sync for Leaked<T> {}

impl<T> Drop for Leaked<T> {
    fn drop(&mut self) {
        // SAFETY: the parts of the boxed slice leaked in `lend`, given back once.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
    }
}

/// The owner handle given to the tensor: counts its drops.
struct Lent<T> {
    _memory: Arc<Leaked<T>>,
    drops: Arc<AtomicUsize>,
}

impl<T> Drop for Lent<T> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// The producer's side of a loan: the memory (kept alive here too, so that
/// it can be inspected after the tensors are gone) and how often the owner
/// handle was dropped.
struct Loan<T> {
    memory: Arc<Leaked<T>>,
    drops: Arc<AtomicUsize>,
}

impl<T: Copy> Loan<T> {
    /// The lent values, read by the producer (between ops).
    fn values(&self) -> Vec<T> {
        // SAFETY: `memory` keeps the values alive; no op is running.
        unsafe { std::slice::from_raw_parts(self.memory.ptr, self.memory.len) }.to_vec()
    }

    /// A write by the producer (between ops).
    fn write(&self, at: usize, v: T) {
        assert!(at < self.memory.len);
        // SAFETY: in bounds, alive, and no op is reading the memory.
        unsafe { self.memory.ptr.add(at).write(v) };
    }

    fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }
}

/// A tensor over `values` lent as foreign memory, seen through `layout`.
fn lend<T: Element>(values: Vec<T>, layout: Layout) -> (Tensor, Loan<T>) {
    let len = values.len();
    let ptr = Box::leak(values.into_boxed_slice()).as_mut_ptr();
    let memory = Arc::new(Leaked { ptr, len });
    let drops = Arc::new(AtomicUsize::new(0));
    let owner = Lent { _memory: memory.clone(), drops: drops.clone() };
    // SAFETY: the leaked slice holds `len` values and lives while `owner` does.
    let t = unsafe { Tensor::from_foreign(ptr as *const T, len, Box::new(owner), layout) }.unwrap();
    (t, Loan { memory, drops })
}

fn lend_contiguous<T: Element>(values: Vec<T>, shape: &[usize]) -> (Tensor, Loan<T>) {
    lend(values, Layout::contiguous(shape))
}

fn floats(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>()
}

#[test]
fn elementwise_ops_read_foreign_memory_and_leave_it_unchanged() {
    let (x, loan) = lend_contiguous(vec![1.0f32, -2.0, 3.0, 0.5], &[2, 2]);
    assert!(x.storage().is_foreign());
    let y = Tensor::from_vec(vec![10.0f32, 20.0, 30.0, 40.0], &[2, 2]).unwrap();
    assert_eq!(floats(&x.binary(BinaryOp::Add, &y).unwrap()), vec![11.0, 18.0, 33.0, 40.5]);
    assert_eq!(floats(&x.abs().unwrap()), vec![1.0, 2.0, 3.0, 0.5]);
    // The unique owner's paths, which reuse a buffer in place when they can.
    let e = x.clone().float_unary_owned(FloatUnary::Exp).unwrap();
    let want: Vec<f32> = [1.0f32, -2.0, 3.0, 0.5].iter().map(|v| v.exp()).collect();
    for (g, w) in floats(&e).iter().zip(&want) {
        assert!((g - w).abs() <= 1e-6 * w.abs(), "{g} vs {w}");
    }
    let s = x.clone().binary_scalar_owned(BinaryOp::Mul, Scalar::Float(2.0)).unwrap();
    assert_eq!(floats(&s), vec![2.0, -4.0, 6.0, 1.0]);
    let b = x.clone().binary_owned(BinaryOp::Sub, y.clone()).unwrap();
    assert_eq!(floats(&b), vec![-9.0, -22.0, -27.0, -39.5]);
    // As the right operand, the left one shared by another tensor.
    let (z, loan_z) = lend_contiguous(vec![1.0f32, 1.0, 1.0, 1.0], &[2, 2]);
    let keep = y.clone();
    assert_eq!(floats(&y.binary_owned(BinaryOp::Div, z).unwrap()), vec![10.0, 20.0, 30.0, 40.0]);
    drop(keep);
    assert_eq!(loan_z.values(), vec![1.0, 1.0, 1.0, 1.0]);
    assert_eq!(loan_z.drops(), 1);
    // Still the only owner: every path above had to allocate.
    let mut x = x;
    assert!(x.try_mut_slice::<f32>().is_none());
    assert_eq!(loan.values(), vec![1.0, -2.0, 3.0, 0.5]);
}

#[test]
fn into_vec_of_foreign_memory_copies_it() {
    let (x, loan) = lend_contiguous(vec![4i64, 5, 6], &[3]);
    let mut v = x.into_vec::<i64>("test").unwrap();
    assert_eq!(loan.drops(), 1, "the last tensor went with into_vec");
    v[0] = 99;
    assert_eq!(v, vec![99, 5, 6]);
    assert_eq!(loan.values(), vec![4, 5, 6]);
}

#[test]
fn matmul_and_reductions_over_foreign_memory() {
    // [[1, 2, 3], [4, 5, 6]] @ [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]]
    let (a, la) = lend_contiguous(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let (b, lb) = lend_contiguous(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
    assert_eq!(floats(&a.matmul(&b).unwrap()), vec![4.0, 5.0, 10.0, 11.0]);
    // f64 through its own kernel; the transposed view of a foreign buffer.
    let (c, _lc) = lend_contiguous(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
    assert_eq!(c.matmul(&c.transpose()).unwrap().to_vec::<f64>(), vec![5.0, 11.0, 11.0, 25.0]);
    assert_eq!(floats(&a.sum().unwrap()), vec![21.0]);
    assert_eq!(floats(&a.sum_dim(0).unwrap()), vec![5.0, 7.0, 9.0]);
    assert_eq!(floats(&a.mean_dim(1).unwrap()), vec![2.0, 5.0]);
    assert_eq!(floats(&a.max_dim(1).unwrap()), vec![3.0, 6.0]);
    assert_eq!(a.argmax(0).unwrap().to_vec::<i64>(), vec![1, 1, 1]);
    let (i, _li) = lend_contiguous(vec![3i32, -1, 7], &[3]);
    assert_eq!(i.cast(crate::DType::I64).unwrap().sum().unwrap().to_vec::<i64>(), vec![9]);
    assert_eq!(i.flip(&[0]).unwrap().to_vec::<i32>(), vec![7, -1, 3]);
    assert_eq!(la.values(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(lb.values(), vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
}

#[test]
fn views_of_foreign_memory_and_strided_loans() {
    let (x, loan) = lend_contiguous((0..12).map(|v| v as f32).collect(), &[3, 4]);
    assert_eq!(floats(&x.transpose().narrow(0, 1, 2).unwrap()), vec![1.0, 5.0, 9.0, 2.0, 6.0, 10.0]);
    assert_eq!(floats(&x.flip(&[1]).unwrap().narrow(0, 2, 1).unwrap()), vec![11.0, 10.0, 9.0, 8.0]);
    let r = x.reshape(&[2, 6]).unwrap();
    assert!(r.storage().is_foreign(), "a reshape of contiguous memory is a view");
    assert_eq!(floats(&r.sum_dim(1).unwrap()), vec![15.0, 51.0]);
    // A layout given with the loan: every other column, rows backwards
    // (NumPy's a[::-1, ::2] of a 3x4 array, whose data starts at row 2).
    let (y, _ly) = lend((0..12).map(|v| v as f32).collect(), Layout::strided(&[3, 2], &[-4, 2], 8).unwrap());
    assert_eq!(floats(&y), vec![8.0, 10.0, 4.0, 6.0, 0.0, 2.0]);
    assert_eq!(floats(&y.binary_scalar(BinaryOp::Add, Scalar::Float(1.0)).unwrap()), vec![9.0, 11.0, 5.0, 7.0, 1.0, 3.0]);
    // A broadcast (stride 0) loan.
    let (z, _lz) = lend(vec![1.0f32, 2.0], Layout::strided(&[3, 2], &[0, 1], 0).unwrap());
    assert_eq!(floats(&z.sum_dim(0).unwrap()), vec![3.0, 6.0]);
    assert_eq!(loan.values(), (0..12).map(|v| v as f32).collect::<Vec<_>>());
}

#[test]
fn layouts_outside_the_loan_are_refused_and_release_it() {
    let memory = Arc::new(Leaked { ptr: Box::leak(vec![0.0f32; 4].into_boxed_slice()).as_mut_ptr(), len: 4 });
    let drops = Arc::new(AtomicUsize::new(0));
    let owner = Lent { _memory: memory.clone(), drops: drops.clone() };
    // SAFETY: the leaked slice holds 4 values while `owner` lives.
    let e = unsafe { Tensor::from_foreign(memory.ptr as *const f32, 4, Box::new(owner), Layout::strided(&[2, 3], &[3, 1], 0).unwrap()) };
    assert!(e.unwrap_err().to_string().contains("outside a buffer of 4 elements"));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(Layout::strided(&[2, 3], &[1], 0).unwrap_err().to_string().contains("one stride per dim"));
}

#[test]
fn the_owner_goes_once_with_the_last_view_or_clone() {
    let (x, loan) = lend_contiguous(vec![1u8, 2, 3, 4, 5, 6], &[2, 3]);
    let view = x.transpose();
    let clone = x.clone();
    let derived = x.cast(crate::DType::I64).unwrap();
    drop(x);
    assert_eq!(loan.drops(), 0);
    drop(view);
    assert_eq!(loan.drops(), 0);
    assert_eq!(clone.to_vec::<u8>(), vec![1, 2, 3, 4, 5, 6]);
    drop(clone);
    assert_eq!(loan.drops(), 1);
    // The cast owns a copy of its own.
    assert_eq!(derived.to_vec::<i64>(), vec![1, 2, 3, 4, 5, 6]);
    assert!(!derived.storage().is_foreign());
    drop(derived);
    assert_eq!(loan.drops(), 1);
}

#[test]
fn producer_writes_are_seen_by_later_ops_and_never_by_cached_packings() {
    // A producer may write its memory between ops (as with torch.from_dlpack):
    // the packed-weights cache of the fused convolution must not keep a
    // packing of foreign weights, which would hide the new values.
    let (c_in, c_out, hw) = (4, 32, 6);
    let x = Tensor::from_vec((0..c_in * hw * hw).map(|v| (v % 7) as f32 - 3.0).collect(), &[1, c_in, hw, hw]).unwrap();
    let w0: Vec<f32> = (0..c_out * c_in * 9).map(|v| ((v * 5) % 11) as f32 * 0.1 - 0.5).collect();
    let (w, loan) = lend_contiguous(w0.clone(), &[c_out, c_in, 3, 3]);
    let options = ConvOptions::new([1, 1], [1, 1], [1, 1], 1);
    let tail = ConvTail { scale: None, shift: None, residual: None, relu: true, act: Default::default() };
    let run = |w: &Tensor| floats(&Var::constant(x.clone()).conv2d_fused(&Var::constant(w.clone()), &options, &tail).unwrap().value);
    let owned = |values: Vec<f32>| Tensor::from_vec(values, &[c_out, c_in, 3, 3]).unwrap();
    assert_eq!(run(&w), run(&owned(w0.clone())));
    for (at, v) in w0.iter().enumerate() {
        loan.write(at, -v);
    }
    let flipped: Vec<f32> = w0.iter().map(|v| -v).collect();
    let after = run(&w);
    assert_eq!(after, run(&owned(flipped)));
    assert_ne!(after, run(&owned(w0)), "the new weights change the result");
}
