//! What every update kernel shares: argument checks, taking buffers to
//! rewrite, and running a loop over matching chunks of several buffers.

use std::mem::MaybeUninit;

use crate::dtype::DType;

use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::kernels::copy::contiguous_values;
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

/// The update of an f16 or bf16 parameter (`None` for the other dtypes):
/// the parameter and the gradient are widened to f32, `update` runs there
/// with the state in f32, and only the new parameter is rounded back to
/// the parameter's dtype. The state stays f32 between steps: a moment kept
/// in bf16 would lose what each step adds below its 8 significant bits
/// (Adam's `1 - beta_2 = 0.001` of a gradient's square). A state of the
/// parameter's own dtype (from a record) is widened first; on an error every
/// state is left as it was.
pub(crate) fn half_update<const S: usize>(
    op: &'static str,
    param: &Tensor,
    grad: &Tensor,
    states: [&mut Option<Tensor>; S],
    update: impl FnOnce(Tensor, &Tensor, [&mut Option<Tensor>; S]) -> Result<Tensor>,
) -> Option<Result<Tensor>> {
    let dtype = param.dtype();
    let wide = param.half_widened()?;
    Some((|| {
        expect_like(op, "the gradient", param, grad)?;
        let grad = grad.cast(DType::F32)?;
        // A state of the parameter's dtype is replaced by its f32 copy for the
        // update and put back on an error; an f32 state moves in and out.
        let mut narrow: [Option<Tensor>; S] = std::array::from_fn(|_| None);
        let mut states = states;
        for (state, kept) in states.iter_mut().zip(&mut narrow) {
            if let Some(t) = state.as_ref().filter(|t| t.dtype() == dtype) {
                let widened = t.cast(DType::F32)?;
                *kept = state.replace(widened);
            }
        }
        let result = update(wide?, &grad, states.each_mut().map(|s| &mut **s));
        if result.is_err() {
            for (state, kept) in states.into_iter().zip(narrow) {
                if kept.is_some() {
                    *state = kept;
                }
            }
        }
        result?.cast(dtype)
    })())
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

/// A buffer as a tensor of `shape`.
pub(crate) fn wrap<T: Element>(buf: Vec<T>, shape: &[usize]) -> Result<Tensor> {
    Tensor::from_vec(buf, shape)
}

/// One optimizer step: `f` reads matching pieces of the old parameter and
/// the gradient, rewrites the `S` states in place and writes the new
/// parameter, split across threads when the tensors are large. The old
/// parameter stays alive (the old module holds it), so the step reads it and
/// writes a new buffer, one pass, instead of copying it and updating the copy.
///
/// A state given as `None` is one this configuration does not keep: its
/// pieces are empty. A kept state is rewritten in its own buffer when no
/// other tensor shares it (state the optimizer holds alone); a shared one
/// is first replaced by a copy, so whoever holds it keeps its values
/// (copy-on-write), and an absent one (`None` inside: the first step) by
/// zeros. Nothing in `states` changes until every buffer the step needs is
/// allocated, and the loop itself cannot fail: a failed step leaves the
/// state as it was.
///
/// The new parameter starts uninitialised: zeroing it first would be one
/// more pass over memory per step. Callers mark `f`
/// `#[inline(always)]`: only then is its loop compiled for the CPU's
/// vectors inside `simd` (out of line, the Adam update ran as 4-wide SSE
/// code). The step's constants go into `f` by value (each optimizer's
/// `Coefs`), so the loop keeps them in registers: read through a reference
/// they were reloaded per element, and the loop ran one element at a time.
///
/// # Safety
/// `f` must write every element of the output piece it is given.
pub(crate) unsafe fn step_into<T: Element, const S: usize>(
    op: &'static str,
    param: &Tensor,
    grad: &Tensor,
    mut states: [Option<&mut Option<Tensor>>; S],
    f: impl Fn([&[T]; 2], [&mut [T]; S], [&mut [MaybeUninit<T>]; 1]) + Sync + Send,
) -> Result<Tensor> {
    let shape = param.shape();
    let (p0, g) = (contiguous_values::<T>(op, param)?, contiguous_values::<T>(op, grad)?);
    let n = p0.len();
    let mut p: Vec<T> = try_with_capacity(op, n)?;
    // Every replacement is made before any is put in place.
    let mut replacements: [Option<Tensor>; S] = std::array::from_fn(|_| None);
    for (slot, state) in replacements.iter_mut().zip(&mut states) {
        let Some(state) = state else { continue };
        *slot = match state.as_mut() {
            Some(t) => {
                if t.try_mut_slice::<T>().is_some() {
                    None
                } else {
                    Some(Tensor::from_vec(t.try_to_vec::<T>(op)?, shape)?)
                }
            }
            None => Some(Tensor::from_vec(try_filled(op, n, T::ZERO)?, shape)?),
        };
    }
    for (slot, state) in replacements.into_iter().zip(&mut states) {
        if let (Some(t), Some(state)) = (slot, state) {
            **state = Some(t);
        }
    }
    let mut lost = false;
    let slices = states.map(|state| match state.map(|s| s.as_mut().and_then(Tensor::try_mut_slice::<T>)) {
        Some(Some(slice)) => slice,
        Some(None) => {
            lost = true;
            &mut []
        }
        None => &mut [],
    });
    if lost {
        return Err(Error::Internal { reason: format!("{op}: a state buffer was shared after it was made the step's own") });
    }
    in_pieces(n, [&p0[..], &g[..]], slices, [&mut p.spare_capacity_mut()[..n]], f);
    // SAFETY: the caller's `f` wrote all `n` elements.
    unsafe { p.set_len(n) };
    wrap(p, shape)
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

/// What every in-place optimizer update must do with its state, checked
/// step by step.
#[cfg(test)]
pub(crate) mod in_place {
    use crate::error::Result;
    use crate::tensor::Tensor;

    fn values(states: &[Option<Tensor>]) -> Vec<Option<Vec<f64>>> {
        states.iter().map(|s| s.as_ref().map(|t| t.to_vec::<f64>())).collect()
    }

    fn buffers(states: &[Option<Tensor>]) -> Vec<Option<*const f64>> {
        states.iter().map(|s| s.as_ref().map(|t| t.as_slice::<f64>().unwrap().as_ptr())).collect()
    }

    /// Run `update` (step `time` of an optimizer with `S` states, counting
    /// from 1; the states are `None` before the first) from `p0` over
    /// `grads`. At every step the same state is updated twice: once while
    /// someone else holds a copy of it (those copies must keep their
    /// values), and once held by the update alone (existing states must be
    /// rewritten in their own buffers); both must give the same parameter
    /// and state. A step with a gradient of the wrong shape must fail and
    /// leave the state as it was. Returns the last parameter and state, for
    /// the caller to check against its formulas.
    pub(crate) fn check<const S: usize>(
        update: impl Fn(u64, Tensor, &Tensor, [&mut Option<Tensor>; S]) -> Result<Tensor>,
        p0: &[f64],
        grads: &[&[f64]],
    ) -> (Tensor, [Option<Tensor>; S]) {
        let t = |v: &[f64]| Tensor::from_vec(v.to_vec(), &[v.len()]).unwrap();
        let (mut p, mut state): (Tensor, [Option<Tensor>; S]) = (t(p0), std::array::from_fn(|_| None));
        for (step, g) in (1..).zip(grads) {
            let g = t(g);
            let mut shared = state.clone();
            let held = values(&shared);
            let shared_p = update(step, p.clone(), &g, shared.each_mut()).unwrap();
            assert_eq!(values(&state), held, "step {step}: a state someone holds changed");

            let before = (buffers(&state), values(&state));
            let wrong = t(&vec![1.0; p0.len() + 1]);
            assert!(update(step, p.clone(), &wrong, state.each_mut()).is_err(), "step {step}: a gradient of the wrong shape");
            assert_eq!((buffers(&state), values(&state)), before, "step {step}: a failed update changed the state");

            let new_p = update(step, p, &g, state.each_mut()).unwrap();
            for (k, (was, now)) in before.0.iter().zip(buffers(&state)).enumerate() {
                if let Some(was) = was {
                    assert_eq!(Some(*was), now, "step {step}: state {k} moved to a new buffer");
                }
            }
            assert_eq!(new_p.to_vec::<f64>(), shared_p.to_vec::<f64>(), "step {step}");
            assert_eq!(values(&state), values(&shared), "step {step}");
            p = new_p;
        }
        (p, state)
    }
}
