"""``Reinitializer``: Burn's deterministic re-initialisation of a module's tensors, for tests.

A builder picks one rule for float tensors and one for int tensors, then
``apply(module)`` returns a copy whose parameters and running states follow
it (ids, require-grad flags and shapes kept):

- ``constant(value)``: every element is ``value``;
- ``range(min, max)``: element ``i`` (row-major) is ``min + i * (max - min) / n``
  for a tensor of ``n`` elements, so the values run from ``min`` towards ``max``;
  for ints the step ``(max - min) / n`` is truncated to an integer first;
- ``random(seed, min, max)``: uniform on ``[min, max)`` from Rust's ``StdRng``
  seeded with ``seed`` (ChaCha12, ``rand`` 0.9), restarted for every tensor: the
  numbers are the ones Burn writes for the same seed, range and dtype; ints are
  the uniform f64 draws truncated toward zero.

The default rule is the constant 0 for both. Each setter returns a new
``Reinitializer``; ``constant``, ``range`` and ``random`` set both rules (the int
one with the bounds truncated toward zero, as Burn's ``as i64``).

Example:
    >>> from ferrum.backend import NdArray
    >>> from ferrum.module import Reinitializer
    >>> from ferrum.nn import LinearConfig
    >>> layer = LinearConfig(2, 2).init(NdArray.device())
    >>> layer = Reinitializer().range(0.0, 1.0).apply(layer)
    >>> layer.weight.val().to_data().to_list(), layer.bias.val().to_data().to_list()
    ([[0.0, 0.25], [0.5, 0.75]], [0.0, 0.5])
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ferrum._ferrum import ArgumentError, Bool, DType, Int, KindError, Tensor
from ferrum.module.param import ParamId

__all__ = ["Reinitializer"]

M = TypeVar("M")

_U64 = (1 << 64) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


@dataclasses.dataclass(frozen=True)
class _Constant:
    value: float


@dataclasses.dataclass(frozen=True)
class _Range:
    min: float
    max: float


@dataclasses.dataclass(frozen=True)
class _Random:
    seed: int
    min: float
    max: float


_Strategy = _Constant | _Range | _Random


@dataclasses.dataclass(frozen=True)
class Reinitializer:
    """Overrides the float (and int) tensors of a module with constants, ranges or seeded uniforms.

    Shapes are kept: a ``[rows, cols]`` weight gets ``rows * cols`` values laid out
    row-major. Bool tensors are left alone. As a ``ModuleMapper`` it also works with
    ``module.map(reinit)``; ``map_int`` applies the int rule to an Int tensor (ferrum's
    parameters are all Float, so ``apply`` only uses the float rule).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.module import Reinitializer
        >>> from ferrum.nn import LinearConfig
        >>> layer = LinearConfig(3, 4).init(NdArray.device())
        >>> a = Reinitializer().random_float(42, -1.0, 1.0).apply(layer)
        >>> b = Reinitializer().random_float(42, -1.0, 1.0).apply(layer)
        >>> a.weight.val().to_data().to_list() == b.weight.val().to_data().to_list()
        True
        >>> Reinitializer().constant(2.5).apply(layer).bias.val().to_data().to_list()
        [2.5, 2.5, 2.5, 2.5]
    """

    float_strategy: _Strategy = _Constant(0.0)
    int_strategy: _Strategy = _Constant(0)

    # --- the builder

    def constant(self, value: float) -> Reinitializer:
        """Every float element becomes ``value``, every int one ``int(value)`` (truncated)."""
        checked = _finite(value, "constant", "value")
        return self.constant_float(checked).constant_int(_truncate(checked))

    def constant_float(self, value: float) -> Reinitializer:
        """Every float element becomes ``value``."""
        return dataclasses.replace(self, float_strategy=_Constant(_finite(value, "constant_float", "value")))

    def constant_int(self, value: int) -> Reinitializer:
        """Every int element becomes ``value``."""
        return dataclasses.replace(self, int_strategy=_Constant(_int64(value, "constant_int", "value")))

    def random(self, seed: int, min: float, max: float) -> Reinitializer:
        """Seeded uniform values on ``[min, max)`` for floats, and on the truncated bounds for ints."""
        lo, hi = _finite(min, "random", "min"), _finite(max, "random", "max")
        return self.random_float(seed, lo, hi).random_int(seed, _truncate(lo), _truncate(hi))

    def random_float(self, seed: int, min: float, max: float) -> Reinitializer:
        """Float elements drawn uniformly from ``[min, max)`` by ``StdRng`` seeded with ``seed``."""
        lo, hi = _finite(min, "random_float", "min"), _finite(max, "random_float", "max")
        return dataclasses.replace(self, float_strategy=_Random(_seed(seed, "random_float"), lo, hi))

    def random_int(self, seed: int, min: int, max: int) -> Reinitializer:
        """Int elements: uniform f64 draws on ``[min, max)`` by ``StdRng(seed)``, truncated toward zero."""
        lo, hi = _int64(min, "random_int", "min"), _int64(max, "random_int", "max")
        return dataclasses.replace(self, int_strategy=_Random(_seed(seed, "random_int"), lo, hi))

    def range(self, min: float, max: float) -> Reinitializer:
        """Evenly spaced values from ``min`` (included) towards ``max`` (excluded), for floats and ints."""
        lo, hi = _finite(min, "range", "min"), _finite(max, "range", "max")
        return self.range_float(lo, hi).range_int(_truncate(lo), _truncate(hi))

    def range_float(self, min: float, max: float) -> Reinitializer:
        """Float element ``i`` of a tensor of ``n`` becomes ``min + i * (max - min) / n``."""
        lo, hi = _finite(min, "range_float", "min"), _finite(max, "range_float", "max")
        return dataclasses.replace(self, float_strategy=_Range(lo, hi))

    def range_int(self, min: int, max: int) -> Reinitializer:
        """Int element ``i`` of a tensor of ``n`` becomes ``min + i * trunc((max - min) / n)``."""
        lo, hi = _int64(min, "range_int", "min"), _int64(max, "range_int", "max")
        return dataclasses.replace(self, int_strategy=_Range(lo, hi))

    # --- applying it

    def apply(self, module: M) -> M:
        """A copy of ``module`` whose tensors follow the rules (``module.map(self)``)."""
        mapper = getattr(module, "map", None)
        if not callable(mapper):
            raise TypeError(f"Reinitializer.apply: expected a Module, found {type(module).__name__}")
        return mapper(self)  # type: ignore[no-any-return]

    def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        """The new value of a Float tensor (an Int one gets the int rule, a Bool one is kept)."""
        if tensor.kind is Int:
            return self.map_int(id, tensor)
        if tensor.kind is Bool:
            return tensor
        return _generate(self.float_strategy, tensor, floating=True)

    def map_int(self, id: ParamId, tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        """The new value of an Int tensor, by the int rule.

        Example:
            >>> from ferrum import Int, Tensor
            >>> from ferrum.backend import NdArray
            >>> from ferrum.module import ParamId, Reinitializer
            >>> ids = Tensor.zeros((2, 3), NdArray.device(), Int)
            >>> Reinitializer().range_int(-3, 9).map_int(ParamId.new(), ids).to_data().to_list()
            [[-3, -1, 1], [3, 5, 7]]
        """
        if tensor.kind is not Int:
            found = tensor.kind.__name__
            raise KindError(f"Reinitializer.map_int: expected an Int tensor, found kind {found}")
        return _generate(self.int_strategy, tensor, floating=False)

    def __repr__(self) -> str:
        return f"Reinitializer(float={_describe(self.float_strategy)}, int={_describe(self.int_strategy)})"


def _describe(strategy: _Strategy) -> str:
    if isinstance(strategy, _Constant):
        return f"constant({strategy.value!r})"
    if isinstance(strategy, _Range):
        return f"range({strategy.min!r}, {strategy.max!r})"
    return f"random(seed={strategy.seed}, {strategy.min!r}, {strategy.max!r})"


def _generate(strategy: _Strategy, like: Tensor[Any, Any, Any], *, floating: bool) -> Tensor[Any, Any, Any]:
    shape, device, dtype = like.dims(), like.device(), like.dtype
    n = like.num_elements()
    if isinstance(strategy, _Constant):
        return Tensor.full(shape, strategy.value, device, like.kind, dtype=dtype)
    if isinstance(strategy, _Range):
        # Burn: arange(0..n) * factor + min, with factor = (max - min) / n computed in f64 and
        # converted to the element type (an int factor is truncated), the product in that type.
        step = (strategy.max - strategy.min) / n if n else 0.0
        factor: float | int = step if floating else _truncate(step)
        index = Tensor.arange(0, n, device)
        values = (index.float() if floating else index).cast(dtype)
        return values.mul_scalar(factor).add_scalar(strategy.min).reshape(shape)
    method = "random_float" if floating else "random_int"
    draws = _uniform(strategy.seed, strategy.min, strategy.max, n, method)
    if floating:
        data = Tensor.from_numpy(draws.reshape(shape), device, dtype=DType.F64)
        return data.cast(dtype) if dtype != DType.F64 else data
    # Burn converts each f64 draw with `as`-like truncation toward zero.
    return Tensor.from_numpy(np.trunc(draws).astype(np.int64).reshape(shape), device).cast(dtype)


def _finite(value: object, method: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArgumentError(f"Reinitializer.{method}: {name} must be a finite number, found {value!r}")
    return float(value)


def _int64(value: object, method: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not _I64_MIN <= value <= _I64_MAX:
        raise ArgumentError(
            f"Reinitializer.{method}: {name} must be an int in the i64 range, found {value!r}"
        )
    return value


def _seed(value: object, method: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _U64:
        raise ArgumentError(f"Reinitializer.{method}: seed must be an int in [0, 2**64), found {value!r}")
    return value


def _truncate(value: float) -> int:
    """``value as i64`` in Rust's saturating form: toward zero, clamped to the i64 range."""
    return max(_I64_MIN, min(_I64_MAX, math.trunc(value)))


# --- rand 0.9's StdRng (ChaCha12) and Uniform<f64>, in NumPy


def _uniform(seed: int, low: float, high: float, n: int, method: str) -> npt.NDArray[np.float64]:
    """The first ``n`` values of ``Uniform::new(low, high)`` sampled from ``StdRng::seed_from_u64(seed)``."""
    if not low < high:
        raise ArgumentError(f"Reinitializer.{method}: needs min < max, found min={low!r}, max={high!r}")
    if not math.isfinite(high - low):
        raise ArgumentError(
            f"Reinitializer.{method}: max - min must be finite, found min={low!r}, max={high!r}"
        )
    return _uniform_from_words(_stdrng_u64(seed, n), low, high)


def _uniform_from_words(words: npt.NDArray[np.uint64], low: float, high: float) -> npt.NDArray[np.float64]:
    """rand's ``UniformFloat<f64>``: one value on ``[low, high)`` per 64-bit word (``low < high``)."""
    scale = high - low
    # rand shrinks the scale until the largest sample stays within the range.
    max_rand = 1.0 - float(np.finfo(np.float64).eps)
    while scale * max_rand + low > high:
        scale = math.nextafter(scale, 0.0)
    # The top 52 bits as the mantissa of a number in [1, 2), less 1.
    unit = ((words >> np.uint64(12)) | np.uint64(0x3FF0000000000000)).view(np.float64) - 1.0
    return np.asarray(unit * scale + low, dtype=np.float64)


def _stdrng_u64(seed: int, n: int) -> npt.NDArray[np.uint64]:
    """``n`` calls of ``next_u64`` on ``StdRng::seed_from_u64(seed)``."""
    key = _seed_key(seed)
    words = np.empty(2 * n, dtype=np.uint32)
    for start, block in _chacha_blocks(key, 2 * n, rounds=12):
        words[start : start + block.size] = block
    pairs = words.astype(np.uint64)
    return np.asarray(pairs[0::2] | (pairs[1::2] << np.uint64(32)), dtype=np.uint64)


def _seed_key(seed: int) -> bytes:
    """rand_core's ``seed_from_u64``: PCG32 output words, little-endian, as the 32-byte key."""
    state, out = seed & _U64, bytearray()
    for _ in range(8):
        state = (state * 6364136223846793005 + 11634580027462260723) & _U64
        xorshifted = (((state >> 18) ^ state) >> 27) & 0xFFFFFFFF
        rot = state >> 59
        out += (((xorshifted >> rot) | (xorshifted << (32 - rot))) & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(out)


_CHUNK_BLOCKS = 1 << 14
_SIGMA = np.array([0x61707865, 0x3320646E, 0x79622D32, 0x6B206574], dtype=np.uint32)


def _chacha_blocks(key: bytes, n_words: int, rounds: int) -> Iterator[tuple[int, npt.NDArray[np.uint32]]]:
    """The ChaCha keystream (64-bit block counter from 0, stream 0) as u32 words, in chunks."""
    key_words = np.frombuffer(key, dtype="<u4").astype(np.uint32)
    n_blocks = -(-n_words // 16)
    for first in range(0, n_blocks, _CHUNK_BLOCKS):
        count = min(_CHUNK_BLOCKS, n_blocks - first)
        counter = np.arange(first, first + count, dtype=np.uint64)
        init = np.empty((16, count), dtype=np.uint32)
        init[0:4] = _SIGMA[:, None]
        init[4:12] = key_words[:, None]
        init[12] = (counter & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        init[13] = (counter >> np.uint64(32)).astype(np.uint32)
        init[14:16] = 0
        x = [row.copy() for row in init]
        for _ in range(rounds // 2):
            for a, b, c, d in _DOUBLE_ROUND:
                _quarter_round(x, a, b, c, d)
        out = (np.stack(x) + init).T.reshape(-1)  # block-major: words of block 0, then block 1, ...
        start = first * 16
        yield start, out[: max(0, min(out.size, n_words - start))]


_DOUBLE_ROUND = (
    (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
    (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14),
)  # fmt: skip


def _rotl(v: npt.NDArray[np.uint32], r: int) -> npt.NDArray[np.uint32]:
    return (v << np.uint32(r)) | (v >> np.uint32(32 - r))


def _quarter_round(x: list[npt.NDArray[np.uint32]], a: int, b: int, c: int, d: int) -> None:
    x[a] = x[a] + x[b]
    x[d] = _rotl(x[d] ^ x[a], 16)
    x[c] = x[c] + x[d]
    x[b] = _rotl(x[b] ^ x[c], 12)
    x[a] = x[a] + x[b]
    x[d] = _rotl(x[d] ^ x[a], 8)
    x[c] = x[c] + x[d]
    x[b] = _rotl(x[b] ^ x[c], 7)
