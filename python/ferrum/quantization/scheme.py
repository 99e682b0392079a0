"""Quantization schemes, as Burn 0.20's ``burn::tensor::quantization``.

A ``QuantScheme`` says how float values become small integers: the integer
type (``QuantValue``), one scale per tensor or per block of consecutive
values (``QuantLevel``), how the values are stored (``QuantStore``), the
precision of the scales (``QuantParam``) and the mode (symmetric:
``value ≈ scale * q``). Burn's default scheme is ``Q8F`` values, ``F32``
scales, ``PackedU32(0)`` storage, one scale per tensor, symmetric.

Example:
    >>> from ferrum.quantization import QuantLevel, QuantScheme, QuantValue
    >>> scheme = QuantScheme().with_value(QuantValue.Q8S).with_level(QuantLevel.block([32]))
    >>> scheme.value, scheme.level
    (<QuantValue.Q8S: 'Q8S'>, QuantLevel.Block(BlockSize([32])))
    >>> QuantValue.Q8S.range()
    (-127.0, 127.0)
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Literal, TypeVar

from ferrum._ferrum import Float, Tensor
from ferrum.backend import Backend

__all__ = [
    "BlockSize",
    "QuantLevel",
    "QuantMode",
    "QuantParam",
    "QuantScheme",
    "QuantStore",
    "QuantValue",
    "QuantizationParameters",
]

B = TypeVar("B", bound=Backend)

#: Burn's ``BlockSize`` holds at most this many dims.
MAX_BLOCK_DIMS = 5

#: What ferrum's kernels compute; the float formats and the scale formats
#: after them are Burn's GPU formats.
_SUPPORTED_VALUES = ("Q8F", "Q8S", "Q4F", "Q4S", "Q2F", "Q2S")


class QuantValue(enum.Enum):
    """The type of the quantized values (Burn's ``QuantValue``)."""

    #: 8-bit integers, full range -128..127.
    Q8F = "Q8F"
    #: 8-bit float e5m2 (not computed by ferrum).
    E5M2 = "E5M2"
    #: 8-bit float e4m3 (not computed by ferrum).
    E4M3 = "E4M3"
    #: 4-bit integers, full range -8..7.
    Q4F = "Q4F"
    #: 4-bit float e2m1 (not computed by ferrum).
    E2M1 = "E2M1"
    #: 2-bit integers, full range -2..1.
    Q2F = "Q2F"
    #: 8-bit integers, symmetric range -127..127.
    Q8S = "Q8S"
    #: 4-bit integers, symmetric range -7..7.
    Q4S = "Q4S"
    #: 2-bit integers, symmetric range -1..1.
    Q2S = "Q2S"

    def size_bits(self) -> int:
        """Bits per value."""
        return {"Q8F": 8, "Q8S": 8, "E4M3": 8, "E5M2": 8, "Q4F": 4, "Q4S": 4, "E2M1": 4}.get(self.value, 2)

    def range(self) -> tuple[float, float]:
        """The range ``(a, b)`` of the quantized values."""
        return _RANGES[self.value]

    def is_symmetric(self) -> bool:
        """Whether the range is symmetric around zero."""
        return self in (QuantValue.Q8S, QuantValue.Q4S, QuantValue.Q2S)


_RANGES: dict[str, tuple[float, float]] = {
    "Q8F": (-128.0, 127.0),
    "Q4F": (-8.0, 7.0),
    "Q2F": (-2.0, 1.0),
    "Q8S": (-127.0, 127.0),
    "Q4S": (-7.0, 7.0),
    "Q2S": (-1.0, 1.0),
    "E4M3": (-448.0, 448.0),
    "E5M2": (-57344.0, 57344.0),
    "E2M1": (-6.0, 6.0),
}


class QuantParam(enum.Enum):
    """The precision the scales are kept in (Burn's ``QuantParam``)."""

    F32 = "F32"
    F16 = "F16"
    BF16 = "BF16"
    #: Unsigned e8m0 scales (not computed by ferrum).
    UE8M0 = "UE8M0"
    #: Unsigned e4m3 scales (not computed by ferrum).
    UE4M3 = "UE4M3"


class QuantMode(enum.Enum):
    """How values map to integers (Burn's ``QuantMode``): only symmetric, ``value ≈ scale * q``."""

    Symmetric = "Symmetric"


@dataclasses.dataclass(frozen=True)
class BlockSize:
    """The dims of a block (Burn's ``BlockSize``): 1 to 5 values, each 1..255.

    Blocks are aligned with the tensor's last dims; a block is a run of
    ``num_elements()`` consecutive values in row-major order, as Burn's CPU
    backend reads it.
    """

    values: tuple[int, ...]

    def __post_init__(self) -> None:
        values = tuple(self.values)
        if not 1 <= len(values) <= MAX_BLOCK_DIMS or any(
            not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 255 for v in values
        ):
            raise ValueError(
                f"BlockSize: expected 1 to {MAX_BLOCK_DIMS} ints in 1..255, found {list(self.values)}"
            )
        object.__setattr__(self, "values", values)

    def num_elements(self) -> int:
        """Values per block."""
        n = 1
        for v in self.values:
            n *= v
        return n

    def to_dim_vec(self, rank: int) -> list[int]:
        """The block's dims for a tensor of ``rank`` dims: leading 1s, or the last ``rank`` dims."""
        dims = list(self.values[-rank:]) if rank else []
        return [1] * (rank - len(dims)) + dims

    def __repr__(self) -> str:
        return f"BlockSize({list(self.values)})"


@dataclasses.dataclass(frozen=True)
class QuantLevel:
    """One scale per tensor (``QuantLevel.Tensor``) or per block (``QuantLevel.block([32])``)."""

    kind: Literal["Tensor", "Block"]
    block_size: BlockSize | None = None

    Tensor: ClassVar[QuantLevel]

    @staticmethod
    def Block(block_size: BlockSize) -> QuantLevel:
        """One scale per block of ``block_size``."""
        if not isinstance(block_size, BlockSize):
            raise TypeError(f"QuantLevel.Block takes a BlockSize, found {type(block_size).__name__}")
        return QuantLevel("Block", block_size)

    @staticmethod
    def block(values: Sequence[int]) -> QuantLevel:
        """``QuantLevel.Block(BlockSize(values))``."""
        return QuantLevel.Block(BlockSize(tuple(values)))

    def __repr__(self) -> str:
        return "QuantLevel.Tensor" if self.block_size is None else f"QuantLevel.Block({self.block_size!r})"


QuantLevel.Tensor = QuantLevel("Tensor")


@dataclasses.dataclass(frozen=True)
class QuantStore:
    """How the values are stored (Burn's ``QuantStore``): ``Native`` (one per
    element), ``PackedU32(dim)`` or ``PackedNative(dim)`` (packed along ``dim``,
    counted from the innermost). ferrum computes on the values unpacked
    whatever the store says; the store is kept with the scheme."""

    kind: Literal["Native", "PackedNative", "PackedU32"]
    dim: int | None = None

    Native: ClassVar[QuantStore]

    @staticmethod
    def PackedU32(dim: int) -> QuantStore:
        """Values packed into u32 words along ``dim``."""
        return QuantStore("PackedU32", _dim(dim))

    @staticmethod
    def PackedNative(dim: int) -> QuantStore:
        """Values packed in a native packed format along ``dim``."""
        return QuantStore("PackedNative", _dim(dim))

    def __repr__(self) -> str:
        return "QuantStore.Native" if self.dim is None else f"QuantStore.{self.kind}({self.dim})"


def _dim(dim: int) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool) or dim < 0:
        raise ValueError(f"QuantStore: the packing dim is an int >= 0, found {dim!r}")
    return dim


QuantStore.Native = QuantStore("Native")


@dataclasses.dataclass(frozen=True)
class QuantScheme:
    """A quantization scheme (Burn's ``QuantScheme``), built with ``with_*``.

    Example:
        >>> from ferrum.quantization import QuantParam, QuantScheme, QuantValue
        >>> QuantScheme().with_value(QuantValue.Q4S).with_param(QuantParam.F16).param
        <QuantParam.F16: 'F16'>
    """

    value: QuantValue = QuantValue.Q8F
    param: QuantParam = QuantParam.F32
    store: QuantStore = dataclasses.field(default_factory=lambda: QuantStore.PackedU32(0))
    level: QuantLevel = QuantLevel.Tensor
    mode: QuantMode = QuantMode.Symmetric

    def __post_init__(self) -> None:
        for name, kind in (
            ("value", QuantValue),
            ("param", QuantParam),
            ("store", QuantStore),
            ("level", QuantLevel),
            ("mode", QuantMode),
        ):
            got = getattr(self, name)
            if not isinstance(got, kind):
                raise TypeError(f"QuantScheme.{name}: expected a {kind.__name__}, found {type(got).__name__}")

    def with_value(self, value: QuantValue) -> QuantScheme:
        """The scheme with the values' type changed."""
        return dataclasses.replace(self, value=value)

    def with_param(self, param: QuantParam) -> QuantScheme:
        """The scheme with the scales' precision changed."""
        return dataclasses.replace(self, param=param)

    def with_store(self, store: QuantStore) -> QuantScheme:
        """The scheme with the storage changed."""
        return dataclasses.replace(self, store=store)

    def with_level(self, level: QuantLevel) -> QuantScheme:
        """The scheme with the granularity changed."""
        return dataclasses.replace(self, level=level)

    def with_mode(self, mode: QuantMode) -> QuantScheme:
        """The scheme with the mode changed."""
        return dataclasses.replace(self, mode=mode)

    def size_bits_value(self) -> int:
        """Bits per quantized value."""
        return self.value.size_bits()

    def params_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of the scales for a tensor of ``shape`` (Burn's ``params_shape``)."""
        if self.level.block_size is None:
            return (1,)
        block = self.level.block_size
        params = tuple(-(-s // b) for s, b in zip(shape, block.to_dim_vec(len(shape)), strict=True))
        numel = math.prod(shape)
        if math.prod(params) * block.num_elements() != numel:
            # Blocks that do not tile the dims (runs across rows): one flat list, as the engine holds them.
            return (numel // block.num_elements(),)
        return params

    def _engine_args(self) -> tuple[str, list[int] | None, str]:
        """What the engine reads: the value type, the block dims (None: per tensor), the scales' precision."""
        if self.value.value not in _SUPPORTED_VALUES:
            raise ValueError(
                f"QuantScheme: {self.value.name} values are not computed by ferrum;"
                f" use one of {', '.join(_SUPPORTED_VALUES)}"
            )
        block = None if self.level.block_size is None else list(self.level.block_size.values)
        return self.value.value, block, self.param.value


def _record_scheme(value: str, block: list[int] | None, param: str) -> QuantScheme:
    """The scheme of a quantized tensor loaded from a record, with the store
    ferrum writes its values in (8-bit ``Native``, as Burn's NdArray backend;
    4- and 2-bit ``PackedU32(0)``)."""
    qvalue = QuantValue(value)
    store = QuantStore.Native if qvalue.size_bits() == 8 else QuantStore.PackedU32(0)
    level = QuantLevel.Tensor if block is None else QuantLevel.block(block)
    return QuantScheme(value=qvalue, param=QuantParam(param), store=store, level=level)


@dataclasses.dataclass(frozen=True)
class QuantizationParameters(Generic[B]):
    """Precomputed scales for ``Tensor.quantize``: one per tensor or per block
    (Burn's ``QuantizationParameters``), any shape holding that many."""

    scales: Tensor[B, Any, Float]
