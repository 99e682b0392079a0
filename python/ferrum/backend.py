"""Backends: where tensors live and how they compute.

``NdArray`` is the CPU engine. ``Autodiff[NdArray]`` decorates it with
gradient tracking, as in Burn: the same model code runs on either. A backend
makes devices and seeds the random generator; a device knows its backend, so
constructors taking a device pick the backend from it.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> NdArray.seed(42)
    >>> device = NdArray.device()
    >>> Tensor.ones((2, 2), device).sum().into_scalar()
    4.0
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic

from typing_extensions import Self, TypeVar

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device

__all__ = ["Autodiff", "Backend", "BalancedCheckpointing", "CheckpointStrategy", "NdArray", "NoCheckpointing"]


class Backend:
    """Base class of backends. Subclasses are used as types, never instantiated.

    Generic code takes a backend as a type variable, ``B = TypeVar("B", bound=Backend)``,
    so one module class serves ``NdArray`` and ``Autodiff[NdArray]``.

    Example:
        >>> issubclass(NdArray, Backend), issubclass(Autodiff[NdArray], Backend)
        (True, True)
    """

    _autodiff: ClassVar[bool] = False
    _recompute: ClassVar[bool] = False
    _devices: ClassVar[dict[type[Backend], Device[Backend]]] = {}

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} is a backend type; use {type(self).__name__}.device()")

    @classmethod
    def device(cls) -> Device[Self]:
        """The default (CPU) device of this backend."""
        dev = Backend._devices.get(cls)
        if dev is None:
            dev = Device._new(cls, cls._autodiff, cls._inner_device(), cls._recompute)
            Backend._devices[cls] = dev
        return dev  # type: ignore[return-value]

    @classmethod
    def _inner_device(cls) -> Device[Any] | None:
        return None

    @classmethod
    def seed(cls, seed: int) -> None:
        """Seed the generator behind random tensors, initialisers and shuffles."""
        _ferrum.seed(seed)

    @classmethod
    def random_state(cls) -> bytes:
        """The generator's exact position, to save with a checkpoint.

        ``set_random_state`` with these bytes makes the following random
        tensors, initialisers and dropout masks the ones that would have
        come next: a resumed training run repeats the uninterrupted one.

        Example:
            >>> from ferrum import Distribution, Tensor
            >>> from ferrum.backend import NdArray
            >>> state = NdArray.random_state()
            >>> a = Tensor.random((3,), Distribution.Default, NdArray.device())
            >>> NdArray.set_random_state(state)
            >>> b = Tensor.random((3,), Distribution.Default, NdArray.device())
            >>> a.equal(b).all().into_scalar()
            True
        """
        return _ferrum.random_state()

    @classmethod
    def set_random_state(cls, state: bytes) -> None:
        """Put the generator back where ``random_state()`` found it (``ArgumentError`` for other bytes)."""
        _ferrum.set_random_state(state)

    @classmethod
    def name(cls) -> str:
        """The backend's name (Burn's ``Backend::name``): its class name.

        Example:
            >>> NdArray.name(), Autodiff[NdArray].name()
            ('NdArray', 'Autodiff[NdArray]')
        """
        return cls.__name__


class NdArray(Backend):
    """The CPU engine: multi-threaded SIMD kernels written in Rust.

    Example:
        >>> from ferrum import Tensor
        >>> device = NdArray.device()
        >>> Tensor.zeros((2,), device).device().backend is NdArray
        True
    """


Inner = TypeVar("Inner", bound=Backend)


class CheckpointStrategy:
    """How much an autodiff graph keeps for backward (Burn's ``CheckpointStrategy``).

    The second argument of ``Autodiff``: :class:`NoCheckpointing` (the default)
    or :class:`BalancedCheckpointing`. Used as a type, never instantiated.
    """

    _recompute: ClassVar[bool] = False

    def __init__(self) -> None:
        name = type(self).__name__
        raise TypeError(f"{name} is a checkpoint strategy type; use it as Autodiff[NdArray, {name}]")


class NoCheckpointing(CheckpointStrategy):
    """Every operation keeps what its backward reads: the fastest backward, the most memory.

    ``Autodiff[NdArray]`` is ``Autodiff[NdArray, NoCheckpointing]``.
    """


class BalancedCheckpointing(CheckpointStrategy):
    """Gradient checkpointing: memory-bound operations keep no activations.

    On ``Autodiff[NdArray, BalancedCheckpointing]``, the outputs of element-wise
    arithmetic, activations and views (reshape, slice, transpose, ...) are not
    kept for backward: backward recomputes them from the nearest kept values
    (the outputs of compute-bound operations such as matmul, convolution,
    softmax and reductions, and the leaves). A training step holds less memory
    and spends a little more time; gradients are the same, bit for bit.

    Example:
        >>> from ferrum import Tensor, activation
        >>> device = Autodiff[NdArray, BalancedCheckpointing].device()
        >>> w = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device).require_grad()
        >>> x = Tensor.from_data([[0.5, -1.0]], device)
        >>> grads = activation.gelu(x @ w).sin().sum().backward()
        >>> w.grad(grads).shape()
        (2, 2)
    """

    _recompute = True


Strategy = TypeVar("Strategy", bound=CheckpointStrategy, default=Any)


class Autodiff(Backend, Generic[Inner, Strategy]):
    """Gradient tracking on top of backend ``Inner``: ``Autodiff[NdArray]``.

    Tensors on it record the operations applied to tensors marked with
    ``require_grad()``; ``loss.backward()`` returns their gradients, which
    live on the inner backend. A second argument picks how much the graph
    keeps for backward, as in Burn: ``Autodiff[NdArray, BalancedCheckpointing]``
    recomputes memory-bound activations in backward instead of keeping them
    (``NoCheckpointing``, the default, keeps them all).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import Autodiff, NdArray
        >>> device = Autodiff[NdArray].device()
        >>> x = Tensor.from_floats([1.0, 2.0], device).require_grad()
        >>> grads = (x * x).sum().backward()
        >>> x.grad(grads).to_data().to_list()
        [2.0, 4.0]
    """

    _autodiff = True
    _inner: ClassVar[type[Backend]]
    _specialised: ClassVar[dict[tuple[type[Backend], type[CheckpointStrategy]], type[Autodiff[Any]]]] = {}

    def __class_getitem__(cls, params: Any) -> Any:
        # A real subclass per inner backend and strategy, so that
        # `Autodiff[NdArray].device()` knows what it decorates at run time.
        pair = isinstance(params, tuple) and len(params) == 2
        inner, strategy = params if pair else (params, NoCheckpointing)
        if isinstance(inner, TypeVar) or isinstance(strategy, TypeVar):
            # `Autodiff[I]` in a generic annotation that Python evaluates (e.g. `self: Model[Autodiff[I]]`).
            return super().__class_getitem__(params)  # type: ignore[misc]
        if not (isinstance(inner, type) and issubclass(inner, Backend)) or issubclass(inner, Autodiff):
            raise TypeError(f"Autodiff decorates a plain backend such as NdArray, found {inner!r}")
        if strategy not in (NoCheckpointing, BalancedCheckpointing):
            raise TypeError(
                f"Autodiff's second argument is NoCheckpointing or BalancedCheckpointing, found {strategy!r}"
            )
        key = (inner, strategy)
        found = Autodiff._specialised.get(key)
        if found is None:
            args = inner.__name__ if strategy is NoCheckpointing else f"{inner.__name__}, {strategy.__name__}"
            name = f"Autodiff[{args}]"
            attrs = {"_inner": inner, "_recompute": strategy._recompute, "__qualname__": name}
            attrs["__module__"] = cls.__module__
            found = type(name, (cls,), attrs)
            Autodiff._specialised[key] = found
        return found

    @classmethod
    def _inner_device(cls) -> Device[Any] | None:
        inner: type[Backend] | None = cls.__dict__.get("_inner") or getattr(cls, "_inner", None)
        if inner is None:
            raise TypeError("use Autodiff[NdArray], not the bare Autodiff decorator")
        return inner.device()

    @classmethod
    def inner(cls) -> type[Backend]:
        """The backend this one decorates."""
        return cls._inner
