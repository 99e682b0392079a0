//! What every update kernel shares: argument checks, taking buffers to
//! rewrite, and running a loop over matching chunks of several buffers.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::kernels::parallel::{go_parallel, simd, CHUNK, PAR_CHEAP};
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
pub(crate) fn take<T: Element>(t: Tensor) -> Vec<T> {
    t.into_vec::<T>()
}

/// A state buffer: the given tensor's elements, or zeros when the state
/// does not exist yet (the first step).
pub(crate) fn take_or_zeros<T: Element>(t: Option<Tensor>, n: usize) -> Vec<T> {
    match t {
        Some(t) => take(t),
        None => vec![T::ZERO; n],
    }
}

/// The elements of `t`, read-only, without a copy when contiguous.
pub(crate) fn read<T: Element>(t: &Tensor) -> Cow<'_, [T]> {
    match t.as_slice::<T>() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(t.to_vec()),
    }
}

/// A buffer as a tensor of `shape`.
pub(crate) fn wrap<T: Element>(buf: Vec<T>, shape: &[usize]) -> Result<Tensor> {
    Tensor::from_vec(buf, shape)
}

/// Run `f` over matching pieces of the `K` writable buffers and the
/// read-only gradient, split across threads when the tensors are large.
/// A buffer may be empty (a state the optimizer does not keep): its pieces
/// are then empty too.
pub(crate) fn chunked<T: Element, const K: usize>(
    bufs: [&mut [T]; K],
    grad: &[T],
    f: impl Fn([&mut [T]; K], &[T]) + Sync + Send,
) {
    if !go_parallel(grad.len(), PAR_CHEAP) {
        simd(
            #[inline(always)]
            || f(bufs, grad),
        );
        return;
    }
    let mut pieces = bufs.map(|b| b.chunks_mut(CHUNK));
    let work: Vec<([&mut [T]; K], &[T])> =
        grad.chunks(CHUNK).map(|g| (std::array::from_fn(|k| pieces[k].next().unwrap_or_default()), g)).collect();
    work.into_par_iter().for_each(|(b, g)| {
        simd(
            #[inline(always)]
            || f(b, g),
        )
    });
}

/// Matching pieces of the inputs and outputs of `chunked_into`.
type Piece<'a, T, const I: usize, const O: usize> = ([&'a [T]; I], [&'a mut [T]; O]);

/// Run `f` over matching pieces of `I` read-only inputs and `O` outputs of
/// the same length (the out-of-place form of `chunked`), split across
/// threads when the tensors are large.
pub(crate) fn chunked_into<T: Element, const I: usize, const O: usize>(
    inputs: [&[T]; I],
    outputs: [&mut [T]; O],
    f: impl Fn([&[T]; I], [&mut [T]; O]) + Sync + Send,
) {
    let n = outputs.first().map_or(0, |o| o.len());
    if !go_parallel(n, PAR_CHEAP) {
        simd(
            #[inline(always)]
            || f(inputs, outputs),
        );
        return;
    }
    let mut ins = inputs.map(|b| b.chunks(CHUNK));
    let mut outs = outputs.map(|b| b.chunks_mut(CHUNK));
    let work: Vec<Piece<'_, T, I, O>> = (0..n.div_ceil(CHUNK))
        .map(|_| {
            (
                std::array::from_fn(|k| ins[k].next().unwrap_or_default()),
                std::array::from_fn(|k| outs[k].next().unwrap_or_default()),
            )
        })
        .collect();
    work.into_par_iter().for_each(|(i, o)| {
        simd(
            #[inline(always)]
            || f(i, o),
        )
    });
}
