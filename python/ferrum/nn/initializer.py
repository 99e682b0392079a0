"""``Initializer``: how a layer fills its parameters, with Burn's variants and fan rules.

Variants are built as in Burn: ``Initializer.Constant(value)``,
``Initializer.Ones``, ``Initializer.Zeros``, ``Initializer.Uniform(min, max)``,
``Initializer.Normal(mean, std)``, ``Initializer.KaimingUniform(gain,
fan_out_only)``, ``Initializer.KaimingNormal(gain, fan_out_only)``,
``Initializer.XavierUniform(gain)``, ``Initializer.XavierNormal(gain)``,
``Initializer.Orthogonal(gain)``. An initializer is a config value, so layer
configs holding one save and load as JSON, in Burn's form (``"Ones"``,
``{"Normal": {"mean": 0.0, "std": 1.0}}``).

Kaiming and Xavier need the layer's fans: ``init_with(shape, fan_in,
fan_out, device)``. Kaiming uses ``std = gain / sqrt(fan)`` with ``fan`` the
fan-in (or fan-out with ``fan_out_only``); Xavier uses ``std = gain *
sqrt(2 / (fan_in + fan_out))``; the uniform forms draw from ``[-a, a]`` with
``a = sqrt(3) * std``.

Example:
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import Initializer
    >>> kaiming = Initializer.KaimingUniform(gain=1.0, fan_out_only=False)
    >>> w = kaiming.init_with((16, 4), 16, 4, NdArray.device())
    >>> bool(w.val().abs().max().into_scalar() <= 3 ** 0.5 / 4)
    True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, overload

import numpy as np

from ferrum._ferrum import Device, Distribution, Tensor
from ferrum.config import config
from ferrum.config.serde import SerdeEnum, Variant
from ferrum.module.param import Param
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D1, D2, D3, D4

__all__ = ["Initializer", "InitializerKind"]


InitializerKind = Literal[
    "Constant",
    "Ones",
    "Zeros",
    "Uniform",
    "Normal",
    "KaimingUniform",
    "KaimingNormal",
    "XavierUniform",
    "XavierNormal",
    "Orthogonal",
]

# The settings each variant takes; every other setting must be left None.
_SETTINGS: dict[str, tuple[str, ...]] = {
    "Constant": ("value",),
    "Ones": (),
    "Zeros": (),
    "Uniform": ("min", "max"),
    "Normal": ("mean", "std"),
    "KaimingUniform": ("gain", "fan_out_only"),
    "KaimingNormal": ("gain", "fan_out_only"),
    "XavierUniform": ("gain",),
    "XavierNormal": ("gain",),
    "Orthogonal": ("gain",),
}
_ALL_SETTINGS = ("value", "min", "max", "mean", "std", "gain", "fan_out_only")


@config
class Initializer:
    """One of Burn's initializers; build it with the variant constructors, not the fields.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Initializer
        >>> Initializer.Constant(0.5).init((2,), NdArray.device()).val().to_data().to_list()
        [0.5, 0.5]
        >>> Initializer.Normal(0.0, 1.0)
        Initializer.Normal(mean=0.0, std=1.0)
    """

    kind: InitializerKind
    value: float | None = None
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    std: float | None = None
    gain: float | None = None
    fan_out_only: bool | None = None

    Ones: ClassVar[Initializer]
    Zeros: ClassVar[Initializer]
    # Burn's enum Initializer: struct variants, Ones and Zeros unit ones.
    __serde_enum__: ClassVar[SerdeEnum] = SerdeEnum(
        "kind",
        {name: Variant.struct(*fields) if fields else Variant.unit() for name, fields in _SETTINGS.items()},
    )

    def __post_init__(self) -> None:
        if self.kind not in _SETTINGS:
            known = ", ".join(_SETTINGS)
            raise ValueError(f"Initializer.kind: expected one of {known}, found {self.kind!r}")
        wanted = _SETTINGS[self.kind]
        for name in _ALL_SETTINGS:
            value = getattr(self, name)
            if name in wanted and value is None:
                raise ValueError(f"Initializer.{self.kind} needs '{name}', found None")
            if name not in wanted and value is not None:
                raise ValueError(f"Initializer.{self.kind} takes no '{name}', found {value!r}")
            if name != "fan_out_only" and value is not None and not math.isfinite(value):
                raise ValueError(f"Initializer.{self.kind}: '{name}' must be finite, found {value!r}")
        if self.kind == "Uniform" and self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"Initializer.Uniform: min must be <= max, found min={self.min}, max={self.max}")
        if self.kind == "Normal" and self.std is not None and self.std < 0:
            raise ValueError(f"Initializer.Normal: std must be >= 0, found {self.std}")

    @staticmethod
    def Constant(value: float) -> Initializer:
        """Every element set to ``value``."""
        return Initializer("Constant", value=float(value))

    @staticmethod
    def Uniform(min: float, max: float) -> Initializer:
        """Uniform on ``[min, max)``."""
        return Initializer("Uniform", min=float(min), max=float(max))

    @staticmethod
    def Normal(mean: float, std: float) -> Initializer:
        """Normal with the given mean and standard deviation."""
        return Initializer("Normal", mean=float(mean), std=float(std))

    @staticmethod
    def KaimingUniform(gain: float, fan_out_only: bool) -> Initializer:
        """Uniform on ``[-a, a]``, ``a = sqrt(3) * gain / sqrt(fan)``."""
        return Initializer("KaimingUniform", gain=float(gain), fan_out_only=bool(fan_out_only))

    @staticmethod
    def KaimingNormal(gain: float, fan_out_only: bool) -> Initializer:
        """Normal with ``std = gain / sqrt(fan)``."""
        return Initializer("KaimingNormal", gain=float(gain), fan_out_only=bool(fan_out_only))

    @staticmethod
    def XavierUniform(gain: float) -> Initializer:
        """Uniform on ``[-a, a]``, ``a = sqrt(3) * gain * sqrt(2 / (fan_in + fan_out))``."""
        return Initializer("XavierUniform", gain=float(gain))

    @staticmethod
    def XavierNormal(gain: float) -> Initializer:
        """Normal with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
        return Initializer("XavierNormal", gain=float(gain))

    @staticmethod
    def Orthogonal(gain: float) -> Initializer:
        """A (semi-)orthogonal matrix times ``gain`` (rows = first dim, columns = the rest), as PyTorch."""
        return Initializer("Orthogonal", gain=float(gain))

    def __repr__(self) -> str:
        settings = ", ".join(f"{name}={getattr(self, name)!r}" for name in _SETTINGS[self.kind])
        return f"Initializer.{self.kind}" + (f"({settings})" if settings else "")

    @overload
    def init(self, shape: tuple[int], device: Device[B]) -> Param[Tensor[B, D1]]: ...
    @overload
    def init(self, shape: tuple[int, int], device: Device[B]) -> Param[Tensor[B, D2]]: ...
    @overload
    def init(self, shape: tuple[int, int, int], device: Device[B]) -> Param[Tensor[B, D3]]: ...
    @overload
    def init(self, shape: tuple[int, int, int, int], device: Device[B]) -> Param[Tensor[B, D4]]: ...
    @overload
    def init(self, shape: Sequence[int], device: Device[B]) -> Param[Tensor[B, Any]]: ...
    def init(self, shape: Sequence[int], device: Device[B]) -> Param[Tensor[B, Any]]:
        """A new parameter of ``shape``; Kaiming and Xavier need ``init_with`` and the fans."""
        return self.init_with(shape, None, None, device)

    @overload
    def init_with(
        self, shape: tuple[int], fan_in: int | None, fan_out: int | None, device: Device[B]
    ) -> Param[Tensor[B, D1]]: ...
    @overload
    def init_with(
        self, shape: tuple[int, int], fan_in: int | None, fan_out: int | None, device: Device[B]
    ) -> Param[Tensor[B, D2]]: ...
    @overload
    def init_with(
        self, shape: tuple[int, int, int], fan_in: int | None, fan_out: int | None, device: Device[B]
    ) -> Param[Tensor[B, D3]]: ...
    @overload
    def init_with(
        self, shape: tuple[int, int, int, int], fan_in: int | None, fan_out: int | None, device: Device[B]
    ) -> Param[Tensor[B, D4]]: ...
    @overload
    def init_with(
        self, shape: Sequence[int], fan_in: int | None, fan_out: int | None, device: Device[B]
    ) -> Param[Tensor[B, Any]]: ...
    def init_with(
        self, shape: Sequence[int], fan_in: int | None, fan_out: int | None, device: Device[B]
    ) -> Param[Tensor[B, Any]]:
        """A new parameter of ``shape``; Kaiming and Xavier variants use the layer's fans."""
        return Param(self.tensor(shape, fan_in, fan_out, device))

    def tensor(
        self, shape: Sequence[int], fan_in: int | None, fan_out: int | None, device: Device[B]
    ) -> Tensor[B, Any]:
        """The initial values as a plain tensor (what ``init_with`` wraps in a ``Param``)."""
        dims = _shape(shape)
        kind = self.kind
        if kind == "Constant":
            return Tensor.full(dims, _f(self.value), device)
        if kind == "Ones":
            return Tensor.ones(dims, device)
        if kind == "Zeros":
            return Tensor.zeros(dims, device)
        if kind == "Uniform":
            return Tensor.random(dims, Distribution.Uniform(_f(self.min), _f(self.max)), device)
        if kind == "Normal":
            return Tensor.random(dims, Distribution.Normal(_f(self.mean), _f(self.std)), device)
        if kind in ("KaimingUniform", "KaimingNormal"):
            fan = fan_out if self.fan_out_only else fan_in
            which = "fan_out" if self.fan_out_only else "fan_in"
            std = _f(self.gain) / math.sqrt(_fan(fan, which, kind))
            return _draw(kind == "KaimingUniform", std, dims, device)
        if kind in ("XavierUniform", "XavierNormal"):
            total = _fan(fan_in, "fan_in", kind) + _fan(fan_out, "fan_out", kind)
            std = _f(self.gain) * math.sqrt(2.0 / total)
            return _draw(kind == "XavierUniform", std, dims, device)
        return _orthogonal(dims, _f(self.gain), device)


Initializer.Ones = Initializer("Ones")
Initializer.Zeros = Initializer("Zeros")


def _f(value: float | None) -> float:
    # __post_init__ has checked that the variant's settings are present.
    assert value is not None
    return value


def _shape(shape: Sequence[int]) -> tuple[int, ...]:
    dims = tuple(shape)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ValueError(f"initializer shape must be a non-empty sequence of ints >= 0, found {shape!r}")
    return dims


def _fan(fan: int | None, name: str, kind: str) -> int:
    if fan is None:
        raise ValueError(
            f"Initializer.{kind} needs {name}; use init_with(shape, fan_in, fan_out, device) instead of init"
        )
    if fan <= 0:
        raise ValueError(f"Initializer.{kind}: {name} must be positive, found {fan}")
    return fan


def _draw(uniform: bool, std: float, dims: tuple[int, ...], device: Device[B]) -> Tensor[B, Any]:
    if uniform:
        bound = math.sqrt(3.0) * std
        return Tensor.random(dims, Distribution.Uniform(-bound, bound), device)
    return Tensor.random(dims, Distribution.Normal(0.0, std), device)


def _orthogonal(dims: tuple[int, ...], gain: float, device: Device[B]) -> Tensor[B, Any]:
    if len(dims) < 2:
        raise ValueError(f"Initializer.Orthogonal needs a shape of rank >= 2, found {list(dims)}")
    rows = dims[0]
    cols = math.prod(dims[1:])
    # The draw comes from the seeded engine generator; NumPy only factorises it.
    draw = Tensor.random((rows, cols), Distribution.Normal(0.0, 1.0), device).to_numpy().astype(np.float64)
    if rows < cols:
        draw = draw.T
    q, r = np.linalg.qr(draw)
    # Fix the signs so the result is uniformly distributed over orthogonal matrices.
    q = q * np.where(np.diag(r) < 0, -1.0, 1.0)
    if rows < cols:
        q = q.T
    values = (q * gain).reshape(dims).astype(np.float32)
    return Tensor.from_floats(values, device)
