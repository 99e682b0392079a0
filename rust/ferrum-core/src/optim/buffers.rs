//! What every update kernel shares: argument checks, taking buffers to
//! rewrite, and running a loop over matching chunks of several buffers.

use std::mem::MaybeUninit;

use crate::dtype::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::kernels::parallel::{go_parallel, simd, CHUNK, PAR_CHEAP};
use crate::kernels::team::for_each_chunk_mut;
use crate::shape::{try_filled, try_with_capacity};
use crate::tensor::Tensor;

/// Fail unless `other` (the gradient or a state tensor named `what`) has
/// the parameter's dtype and shape.
pub(crate) fn expect_like(op: &'static str, what: &str, param: &Tensor, other: &Tensor) -> Result<()> {
    if other.dtype() != param.dtype() {
        return Err(Error::invalid(
            op,
            format!("{what} has dtype {}, the parameter has dtype {}", other.dtype(), param.dtype()),
        ));
    }
    if other.shape() != param.shape() {
        return Err(Error::shapes(op, param.shape(), other.shape(), format!("{what} must have the parameter's shape")));
    }
    Ok(())
}

/// Fail unless the hyper-parameter `name` is a finite number.
pub(crate) fn expect_finite(op: &'static str, name: &str, value: f64) -> Result<()> {
    if !value.is_finite() {
        return Err(Error::invalid(op, format!("{name} must be a finite number, found {value}")));
    }
    Ok(())
}

/// The elements of `t` as a buffer the kernel may overwrite: its own buffer
/// when `t` is its only owner (no copy), a fresh row-major copy otherwise.
pub(crate) fn take<T: Element>(op: &'static str, t: Tensor) -> Result<Vec<T>> {
    t.into_vec::<T>(op)
}

/// A state buffer: the given tensor's elements, or zeros when the state
/// does not exist yet (the first step).
pub(crate) fn take_or_zeros<T: Element>(op: &'static str, t: Option<Tensor>, n: usize) -> Result<Vec<T>> {
    match t {
        Some(t) => take(op, t),
        None => try_filled(op, n, T::ZERO),
    }
}

/// A buffer as a tensor of `shape`.
pub(crate) fn wrap<T: Element>(buf: Vec<T>, shape: &[usize]) -> Result<Tensor> {
    Tensor::from_vec(buf, shape)
}

/// Run `f` over matching pieces of the `K` writable buffers and the
/// read-only gradient, split across threads when the tensors are large.
/// A buffer may be empty (a state the optimizer does not keep): its pieces
/// are then empty too. Callers mark `f` `#[inline(always)]`: only then is
/// its loop compiled for the CPU's vectors inside `simd` (out of line, the
/// Adam update ran as 4-wide SSE code). The step's constants go into `f` by
/// value (each optimizer's `Coefs`), so the loop keeps them in registers:
/// read through a reference they were reloaded per element, and the loop
/// ran one element at a time.
pub(crate) fn chunked<T: Element, const K: usize>(
    bufs: [&mut [T]; K],
    grad: &[T],
    f: impl Fn([&mut [T]; K], &[T]) + Sync + Send,
) {
    in_pieces::<T, T, 1, K, 0>(grad.len(), [grad], bufs, [], |[g], b, []| f(b, g));
}

/// `O` output buffers of `n` elements each, every element written once by
/// `f` over matching pieces of the `I` read-only inputs (the out-of-place
/// form of `chunked`), split across threads when the tensors are large.
/// The outputs start uninitialised: zeroing them first would be one more
/// pass over memory per buffer and step.
///
/// # Safety
/// `f` must write every element of the output pieces it is given.
pub(crate) unsafe fn chunked_into<T: Element, const I: usize, const O: usize>(
    op: &'static str,
    n: usize,
    inputs: [&[T]; I],
    f: impl Fn([&[T]; I], [&mut [MaybeUninit<T>]; O]) + Sync + Send,
) -> Result<[Vec<T>; O]> {
    // SAFETY: forwarded from the caller.
    unsafe { chunked_into_with(op, n, inputs, [], #[inline(always)] move |i, [], o| f(i, o)) }
}

/// `chunked_into` with `S` state buffers that `f` also rewrites in place,
/// piece by piece beside the inputs' and outputs' matching pieces.
///
/// # Safety
/// `f` must write every element of the output pieces it is given.
pub(crate) unsafe fn chunked_into_with<T: Element, const I: usize, const S: usize, const O: usize>(
    op: &'static str,
    n: usize,
    inputs: [&[T]; I],
    state: [&mut [T]; S],
    f: impl Fn([&[T]; I], [&mut [T]; S], [&mut [MaybeUninit<T>]; O]) + Sync + Send,
) -> Result<[Vec<T>; O]> {
    let mut bufs: [Vec<T>; O] = std::array::from_fn(|_| Vec::new());
    for b in &mut bufs {
        *b = try_with_capacity(op, n)?;
    }
    in_pieces(n, inputs, state, bufs.each_mut().map(|b| &mut b.spare_capacity_mut()[..n]), f);
    for b in &mut bufs {
        // SAFETY: the caller's `f` wrote all `n` elements of every buffer.
        unsafe { b.set_len(n) };
    }
    Ok(bufs)
}

/// Matching pieces of the inputs, states and outputs of `in_pieces`.
type Piece<'a, T, U, const I: usize, const S: usize, const O: usize> = ([&'a [T]; I], [&'a mut [T]; S], [&'a mut [U]; O]);

/// Run `f` over matching `CHUNK`-element pieces of the `I` read-only, `S`
/// rewritten and `O` written slices of (up to) `n` elements, split across
/// threads when `n` is large; a shorter slice gives shorter or empty pieces.
fn in_pieces<T: Element, U: Send, const I: usize, const S: usize, const O: usize>(
    n: usize,
    inputs: [&[T]; I],
    state: [&mut [T]; S],
    outputs: [&mut [U]; O],
    f: impl Fn([&[T]; I], [&mut [T]; S], [&mut [U]; O]) + Sync + Send,
) {
    if !go_parallel(n, PAR_CHEAP) {
        simd(
            #[inline(always)]
            || f(inputs, state, outputs),
        );
        return;
    }
    let mut ins = inputs.map(|b| b.chunks(CHUNK));
    let mut states = state.map(|b| b.chunks_mut(CHUNK));
    let mut outs = outputs.map(|b| b.chunks_mut(CHUNK));
    let mut work: Vec<Piece<'_, T, U, I, S, O>> = (0..n.div_ceil(CHUNK))
        .map(|_| {
            (
                std::array::from_fn(|k| ins[k].next().unwrap_or_default()),
                std::array::from_fn(|k| states[k].next().unwrap_or_default()),
                std::array::from_fn(|k| outs[k].next().unwrap_or_default()),
            )
        })
        .collect();
    for_each_chunk_mut(&mut work, 1, |_, piece| {
        let (i, s, o) = &mut piece[0];
        simd(
            #[inline(always)]
            || f(*i, s.each_mut().map(|s| &mut **s), o.each_mut().map(|s| &mut **s)),
        )
    });
}

/// Multiplication by a constant factor that gives zero where the product
/// would be subnormal.
///
/// An optimizer's state decays geometrically wherever the gradient stays
/// zero (the weights of an input pixel that is always blank, a dead unit),
/// and after some hundreds of steps it reaches the subnormal range, where
/// every multiply takes a microcode assist on x86 cores: an MLP trained
/// with Adam on one batch went from 1.1 ms to 4.6 ms a step after 700
/// steps, 71% of it in the update. A zero instead of a subnormal moves a
/// value by less than the smallest normal number (1.2e-38 in f32).
#[derive(Clone, Copy)]
pub(crate) struct Scale<T> {
    factor: T,
    /// Magnitudes below which `x * factor` is subnormal.
    floor: T,
    /// Magnitudes below which `x * x * factor` (or `x * x`) is.
    floor_square: T,
}

impl<T: FloatElement> Scale<T> {
    pub(crate) fn new(factor: T) -> Self {
        let floor = T::min_positive_value() / factor.abs();
        // x * x is itself subnormal below sqrt(min), whatever the factor.
        Scale { factor, floor, floor_square: floor.max(T::min_positive_value()).sqrt() }
    }

    /// The factor one: `of_square` then gives `x * x`, or zero where that
    /// is subnormal.
    pub(crate) fn one() -> Self {
        Self::new(T::one())
    }

    /// `x * factor`, or zero where that is subnormal.
    ///
    /// `x` is zeroed before the multiply, not the product after it: a loop
    /// compiled to vectors computes both sides of the choice in every lane,
    /// and a multiply that yields a subnormal pays the assist even when its
    /// lane is thrown away (a centered RMSProp step whose squared mean
    /// gradients were subnormal ran twice slower with the choice after).
    #[inline(always)]
    pub(crate) fn of(self, x: T) -> T {
        let x = if x.abs() < self.floor { T::zero() } else { x };
        x * self.factor
    }

    /// `x * x * factor`, or zero where that or `x * x` is subnormal.
    #[inline(always)]
    pub(crate) fn of_square(self, x: T) -> T {
        let x = if x.abs() < self.floor_square { T::zero() } else { x };
        x * x * self.factor
    }
}
