"""Mixed-precision training: forward and backward in bf16 or f16, master weights in f32.

The model trained stays in f32 (the master weights). Each step runs on a
working copy whose float parameters and running states are cast to bf16 or
f16, with the batch's float tensors cast alike; its gradients are cast to f32
(and unscaled, for f16) and the optimizer updates the f32 master weights, so
its state is f32 too. What the step reports (loss, outputs) is cast back to
f32 for the metrics. This is what PyTorch's ``autocast`` with f32 parameters
and Lightning's ``precision="bf16-mixed"`` give; Burn 0.20 has no
mixed-precision training (its records' ``HalfPrecisionSettings`` change only
what a file stores).

With the Learner: ``SupervisedTraining(...).with_precision(Precision.BF16_MIXED)``.
In a loop of one's own, ``MixedPrecision``:

Example:
    >>> from ferrum import Tensor, DType
    >>> from ferrum.backend import Autodiff, NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.optim import SgdConfig
    >>> from ferrum.train import MixedPrecision, Precision
    >>> device = Autodiff[NdArray].device()
    >>> model = LinearConfig(4, 2).init(device)
    >>> optimizer = SgdConfig().init()
    >>> mixed = MixedPrecision(Precision.BF16_MIXED)
    >>> x = Tensor.ones((8, 4), device)
    >>> working = mixed.working_copy(model)           # bf16 parameters, the same ids
    >>> loss = working.forward(mixed.cast_batch(x)).mean()
    >>> grads = mixed.master_grads(mixed.scale(loss).backward(), working)   # f32
    >>> model = mixed.step(optimizer, 0.1, model, grads)
    >>> working.weight.val().dtype, model.weight.val().dtype
    (DType.BF16, DType.F32)
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from ferrum._ferrum import DType, Float, Gradients, Tensor
from ferrum.module import Module, ParamId
from ferrum.module import tree as _tree
from ferrum.module.param import RunningState
from ferrum.optim import GradientsParams, Optimizer
from ferrum.train.loss_scale import GradScaler

__all__ = ["MixedPrecision", "Precision", "scale_loss"]

M = TypeVar("M", bound=Module[Any])
T = TypeVar("T")
FloatTensor = Tensor[Any, Any, Float]


class Precision(enum.Enum):
    """How a model trains: in f32, or bf16/f16 mixed precision with f32 master weights.

    The values are Lightning's ``precision`` strings; ``FULL`` is named after Burn's
    ``FullPrecisionSettings``.

    - ``FULL`` (``"32-true"``): everything in f32, the default.
    - ``BF16_MIXED`` (``"bf16-mixed"``): forward and backward in bf16 (f32's range, 8 bits of
      mantissa); no loss scaling is needed.
    - ``F16_MIXED`` (``"16-mixed"``): forward and backward in f16 (10 bits of mantissa, range up
      to 65504) with dynamic loss scaling (``GradScaler``).

    Example:
        >>> Precision("bf16-mixed") is Precision.BF16_MIXED, Precision.FULL.compute_dtype
        (True, DType.F32)
        >>> Precision.F16_MIXED.compute_dtype, Precision.F16_MIXED.scales_loss
        (DType.F16, True)
    """

    FULL = "32-true"
    BF16_MIXED = "bf16-mixed"
    F16_MIXED = "16-mixed"

    @property
    def compute_dtype(self) -> DType:
        """The dtype forward and backward run in."""
        return {"32-true": DType.F32, "bf16-mixed": DType.BF16, "16-mixed": DType.F16}[self.value]

    @property
    def is_mixed(self) -> bool:
        """Whether a working copy in a lower precision computes the steps."""
        return self is not Precision.FULL

    @property
    def scales_loss(self) -> bool:
        """Whether this precision needs dynamic loss scaling by default (f16)."""
        return self is Precision.F16_MIXED


_LOW = (DType.BF16, DType.F16)
# The scale of the training step running under ``MixedPrecision.activate`` (None: no scaling).
_ACTIVE: ContextVar[_Scope | None] = ContextVar("ferrum_train_loss_scale", default=None)


class _Scope:
    """One activation: its scale, and whether ``scale_loss`` was called under it."""

    __slots__ = ("scale", "scaled")

    def __init__(self, scale: float | None) -> None:
        self.scale = scale
        self.scaled = False


def scale_loss(loss: Tensor[Any, Any, Float]) -> Tensor[Any, Any, Float]:
    """The loss to call ``backward()`` on: times the active f16 policy's loss scale, else ``loss`` itself.

    A model trained by the Learner in ``Precision.F16_MIXED`` writes
    ``scale_loss(loss).backward()`` in its ``train_step`` (the Learner refuses a
    step that skipped it); in f32 and bf16 it returns ``loss`` unchanged, so the
    same model code trains in every precision.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> loss = Tensor.from_floats([2.0], NdArray.device())
        >>> scale_loss(loss) is loss                       # no mixed-precision step running
        True
        >>> with MixedPrecision(Precision.F16_MIXED).activate():
        ...     scale_loss(loss).into_scalar()
        131072.0
    """
    scope = _ACTIVE.get()
    if scope is None or scope.scale is None:
        return loss
    scope.scaled = True
    return _scaled(loss, scope.scale)


def _scaled(loss: FloatTensor, scale: float) -> FloatTensor:
    if not isinstance(loss, Tensor) or loss.kind is not Float:
        raise TypeError(f"scale_loss takes the Float loss tensor, found {loss!r}")
    return loss * scale


class MixedPrecision:
    """A precision policy and its loss scaler, for the Learner or a training loop of one's own.

    Args:
        precision: ``Precision.BF16_MIXED``, ``F16_MIXED`` or ``FULL`` (or its string, ``"bf16-mixed"``).
        scaler: the loss scaler; ``F16_MIXED`` gets a ``GradScaler()`` (PyTorch's defaults) when
            none is given, ``BF16_MIXED`` none (bf16 has f32's range). Not allowed with ``FULL``.

    A step: ``working = mixed.working_copy(model)`` (float tensors in the low precision, same
    parameter ids), forward on ``mixed.cast_batch(batch)``, ``mixed.scale(loss).backward()``,
    ``grads = mixed.master_grads(gradients, working)`` (f32, unscaled), then
    ``model = mixed.step(optimizer, lr, model, grads)``, which skips a step whose gradients are
    not finite when a scaler is in use. A model with running states (BatchNorm) gets them back
    with ``mixed.sync_states(model, working)``.

    Example:
        >>> mixed = MixedPrecision("16-mixed")
        >>> mixed.precision, mixed.compute_dtype, mixed.scaler.scale
        (<Precision.F16_MIXED: '16-mixed'>, DType.F16, 65536.0)
    """

    __slots__ = ("precision", "scaler")

    def __init__(
        self, precision: Precision | str = Precision.BF16_MIXED, scaler: GradScaler | None = None
    ) -> None:
        if isinstance(precision, str) and not isinstance(precision, Precision):
            try:
                precision = Precision(precision)
            except ValueError:
                known = ", ".join(repr(p.value) for p in Precision)
                raise ValueError(f"unknown precision {precision!r}: expected one of {known}") from None
        if not isinstance(precision, Precision):
            raise TypeError(f"MixedPrecision takes a Precision, found {type(precision).__name__}")
        if scaler is not None and not isinstance(scaler, GradScaler):
            raise TypeError(f"MixedPrecision scaler must be a GradScaler, found {type(scaler).__name__}")
        if scaler is not None and not precision.is_mixed:
            raise ValueError("a GradScaler scales the loss of bf16/f16 training: Precision.FULL takes none")
        self.precision = precision
        self.scaler = scaler if scaler is not None or not precision.scales_loss else GradScaler()

    @property
    def compute_dtype(self) -> DType:
        """The dtype of the working copy."""
        return self.precision.compute_dtype

    # ---- forward

    def working_copy(self, model: M) -> M:
        """``model`` with its float parameters and running states in ``compute_dtype``.

        The parameter ids and require-grad flags are kept, so the gradients of the
        copy are keyed as the master's. Parameters are fresh leaves: ``backward()`` on
        a loss of the copy reaches the copy's parameters, never the master's. With
        ``FULL``, ``model`` itself.
        """
        if not isinstance(model, Module):
            raise TypeError(f"working_copy takes a Module, found {type(model).__name__}")
        if not self.precision.is_mixed:
            return model
        return model.map(_CastTo(self.compute_dtype))

    def cast_batch(self, batch: T) -> T:
        """``batch`` with every f32/f64 tensor in ``compute_dtype``; Int and Bool tensors are kept.

        Walks tensors, tuples (named ones too), lists, dicts and dataclass instances;
        any other object is passed through as it is.
        """
        if not self.precision.is_mixed:
            return batch
        return _map_tensors(batch, _to_low(self.compute_dtype))  # type: ignore[no-any-return]

    def to_full(self, item: T) -> T:
        """``item`` (a step's output) with its bf16/f16 tensors in f32, for the metrics."""
        if not self.precision.is_mixed:
            return item
        return _map_tensors(item, _to_f32)  # type: ignore[no-any-return]

    # ---- backward

    def scale(self, loss: Tensor[Any, Any, Float]) -> Tensor[Any, Any, Float]:
        """``loss`` times the scaler's scale (``loss`` itself without a scaler): call ``backward()`` on it."""
        return loss if self.scaler is None else _scaled(loss, self.scaler.scale)

    @contextmanager
    def activate(self) -> Iterator[None]:
        """While inside, ``scale_loss(loss)`` applies this policy's scale (the Learner's ``train_step``)."""
        with self._scope():
            yield

    @contextmanager
    def _scope(self) -> Iterator[_Scope]:
        scope = _Scope(None if self.scaler is None else self.scaler.scale)
        token = _ACTIVE.set(scope)
        try:
            yield scope
        finally:
            _ACTIVE.reset(token)

    def master_grads(self, grads: Gradients | GradientsParams, working: Module[Any]) -> GradientsParams:
        """The gradients of ``working``'s parameters in f32, divided by the loss scale.

        ``grads`` is what ``backward()`` returned for a loss of ``working`` (or the
        ``GradientsParams`` already collected from it); the result is keyed by the
        parameter ids the master model shares.
        """
        if isinstance(grads, Gradients):
            if not isinstance(working, Module):
                found = type(working).__name__
                raise TypeError(f"master_grads takes the working copy (a Module), found {found}")
            grads = GradientsParams.from_grads(grads, working)
        elif not isinstance(grads, GradientsParams):
            found = type(grads).__name__
            raise TypeError(f"master_grads takes backward()'s Gradients or GradientsParams, found {found}")
        inverse = None if self.scaler is None else 1.0 / self.scaler.scale
        out = GradientsParams()
        for id, grad in grads:
            full = grad.cast(DType.F32) if grad.dtype in _LOW else grad
            out.register(id, full if inverse is None else full * inverse)
        return out

    # ---- update

    def check_grads(self, grads: GradientsParams) -> bool:
        """Whether the step may go on: with a scaler, whether every gradient is finite, and the scale updated.

        Without a scaler nothing is checked (True): a non-finite loss already stops
        the Learner. One reduction per gradient and a single read of the result: the
        sum of a tensor holding an inf or a NaN is not finite (a sum of finite values
        beyond f32's range counts as an overflow too).
        """
        if self.scaler is None:
            return True
        total: FloatTensor | None = None
        for _, grad in grads:
            part = grad.sum()
            total = part if total is None else total + part
        found_inf = total is not None and not math.isfinite(total.into_scalar())
        self.scaler.update(found_inf)
        return not found_inf

    def step(self, optimizer: Optimizer[Any], lr: float, model: M, grads: GradientsParams) -> M:
        """``optimizer.step(lr, model, grads)`` on the f32 master ``model``; ``model`` itself on overflow."""
        if not self.check_grads(grads):
            return model
        return optimizer.step(lr, model, grads)

    def sync_states(self, model: Module[Any], working: Module[Any]) -> None:
        """Copy the working copy's running states (BatchNorm's statistics) back into ``model``, in f32."""
        if not self.precision.is_mixed:
            return
        states = [(path, leaf) for path, leaf in _tree.leaves(working) if isinstance(leaf, RunningState)]
        if not states:
            return
        master: dict[ParamId, RunningState[Any]] = {
            leaf.id: leaf for _, leaf in _tree.leaves(model) if isinstance(leaf, RunningState)
        }
        for path, leaf in states:
            target = master.get(leaf.id)
            if target is None:
                raise ValueError(f"sync_states: the working copy's running state {path!r} is not the model's")
            value = leaf.value()
            wanted = target.value().dtype
            target.update(value if value.dtype == wanted else value.cast(wanted))

    def __repr__(self) -> str:
        return f"MixedPrecision({self.precision.name}, scaler={self.scaler!r})"


class _CastTo:
    """A ``ModuleMapper``: f32/f64 tensors to a lower float dtype."""

    def __init__(self, dtype: DType) -> None:
        self.dtype = dtype

    def map_float(self, id: ParamId, tensor: FloatTensor) -> FloatTensor:
        return tensor if tensor.dtype == self.dtype else tensor.cast(self.dtype)


def _to_low(dtype: DType) -> Any:
    def cast(tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        if tensor.kind is not Float or tensor.dtype == dtype:
            return tensor
        return tensor.cast(dtype)

    return cast


def _to_f32(tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
    return tensor.cast(DType.F32) if tensor.kind is Float and tensor.dtype in _LOW else tensor


def _map_tensors(node: Any, cast: Any) -> Any:
    """``node`` rebuilt with ``cast`` applied to each tensor in it (tuples, lists, dicts, dataclasses)."""
    if isinstance(node, Tensor):
        return cast(node)
    if isinstance(node, tuple):
        items = [_map_tensors(item, cast) for item in node]
        return type(node)(*items) if hasattr(node, "_fields") else tuple(items)
    if isinstance(node, list):
        return [_map_tensors(item, cast) for item in node]
    if isinstance(node, dict):
        return {key: _map_tensors(value, cast) for key, value in node.items()}
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {
            field.name: _map_tensors(getattr(node, field.name), cast)
            for field in dataclasses.fields(node)
            if field.init
        }
        return dataclasses.replace(node, **changes)
    return node


class _InferenceIn:
    """A model on the inner backend whose ``inference_step`` runs in the policy's precision (validation)."""

    def __init__(self, model: Module[Any], mixed: MixedPrecision) -> None:
        self._working = mixed.working_copy(model)
        self._mixed = mixed

    def inference_step(self, batch: Any) -> Any:
        output = self._working.inference_step(self._mixed.cast_batch(batch))  # type: ignore[attr-defined]
        return self._mixed.to_full(output)


def validation_model(model: Module[Any], mixed: MixedPrecision | None) -> Any:
    """What the Learner validates: ``model`` (inner backend) itself, or its working copy in ``mixed``."""
    if mixed is None or not mixed.precision.is_mixed:
        return model
    return _InferenceIn(model, mixed)
