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

from typing import Any, ClassVar, Generic, TypeVar

from typing_extensions import Self

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device

__all__ = ["Autodiff", "Backend", "NdArray"]


class Backend:
    """Base class of backends. Subclasses are used as types, never instantiated.

    Generic code takes a backend as a type variable, ``B = TypeVar("B", bound=Backend)``,
    so one module class serves ``NdArray`` and ``Autodiff[NdArray]``.

    Example:
        >>> issubclass(NdArray, Backend), issubclass(Autodiff[NdArray], Backend)
        (True, True)
    """

    _autodiff: ClassVar[bool] = False
    _devices: ClassVar[dict[type[Backend], Device[Backend]]] = {}

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} is a backend type; use {type(self).__name__}.device()")

    @classmethod
    def device(cls) -> Device[Self]:
        """The default (CPU) device of this backend."""
        dev = Backend._devices.get(cls)
        if dev is None:
            dev = Device._new(cls, cls._autodiff, cls._inner_device())
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


class Autodiff(Backend, Generic[Inner]):
    """Gradient tracking on top of backend ``Inner``: ``Autodiff[NdArray]``.

    Tensors on it record the operations applied to tensors marked with
    ``require_grad()``; ``loss.backward()`` returns their gradients, which
    live on the inner backend.

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
    _specialised: ClassVar[dict[type[Backend], type[Autodiff[Any]]]] = {}

    def __class_getitem__(cls, inner: type[Backend]) -> Any:
        # A real subclass per inner backend, so `Autodiff[NdArray].device()`
        # knows what it decorates at run time.
        if isinstance(inner, TypeVar):
            # `Autodiff[I]` in a generic annotation that Python evaluates (e.g. `self: Model[Autodiff[I]]`).
            return super().__class_getitem__(inner)
        if not (isinstance(inner, type) and issubclass(inner, Backend)) or issubclass(inner, Autodiff):
            raise TypeError(f"Autodiff decorates a plain backend such as NdArray, found {inner!r}")
        found = Autodiff._specialised.get(inner)
        if found is None:
            name = f"Autodiff[{inner.__name__}]"
            found = type(name, (cls,), {"_inner": inner, "__qualname__": name, "__module__": cls.__module__})
            Autodiff._specialised[inner] = found
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
