# ruff: noqa: E501  (the table of cases reads best one case a line)
"""Bad inputs: every one raises the right ferrum exception (ShapeError,
KindError, BackendError, OutOfBoundsError, ArgumentError, which also are
ValueError/TypeError/IndexError), whose message names the op and the shapes,
dims or kinds involved. Nothing panics or aborts the interpreter."""

import math
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ferrum import (
    ArgumentError,
    BackendError,
    Bool,
    ConfigError,
    DType,
    FerrumError,
    Int,
    KindError,
    OutOfBoundsError,
    ShapeError,
    Tensor,
    TensorData,
    activation,
)
from ferrum.backend import Autodiff, NdArray
from ferrum.record import RecordError
from ferrum.store import StoreError
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import DEVICE


class LyingLength(list[float]):
    """A sequence whose ``__len__`` claims far more items than it has."""

    def __len__(self) -> int:
        return 2**62


SELF_NESTED: list[Any] = []
SELF_NESTED.append(SELF_NESTED)
DEEPLY_NESTED: list[Any] = [1.0]
for _ in range(100_000):
    DEEPLY_NESTED = [DEEPLY_NESTED]


class LyingArray:
    """An object whose ``__array_interface__`` reports a shape its buffer does not hold."""

    def __init__(self) -> None:
        self._a = np.zeros(4, np.float32)
        self.dtype = self._a.dtype
        self.shape = (2**62 + 1, 4)

    @property
    def __array_interface__(self) -> dict[str, Any]:
        return {**self._a.__array_interface__, "shape": self.shape}


# Any: these calls are type errors on purpose, which mypy would reject.
F: Any = Tensor.ones((2, 3), DEVICE)
F3: Any = Tensor.ones((2, 3, 4), DEVICE)
N: Any = Tensor.ones((2, 3), DEVICE, Int)  # N for iNt
B: Any = Tensor.ones((2, 3), DEVICE, Bool)
F64: Any = Tensor.ones((2, 3), DEVICE, dtype=DType.F64)
AD: Any = Tensor.ones((2, 3), Autodiff[NdArray].device())
T: Any = Tensor


def test_exception_hierarchy() -> None:
    assert issubclass(ShapeError, FerrumError) and issubclass(ShapeError, ValueError)
    assert issubclass(KindError, FerrumError) and issubclass(KindError, TypeError)
    assert issubclass(BackendError, FerrumError) and issubclass(BackendError, TypeError)
    assert issubclass(OutOfBoundsError, FerrumError) and issubclass(OutOfBoundsError, IndexError)
    assert issubclass(ArgumentError, FerrumError) and issubclass(ArgumentError, ValueError)
    assert issubclass(FerrumError, Exception)
    # The Python layer's errors are FerrumErrors too, so one except clause catches all of ferrum's.
    assert issubclass(ConfigError, FerrumError) and issubclass(ConfigError, ValueError)
    assert issubclass(RecordError, FerrumError) and issubclass(RecordError, ValueError)
    assert issubclass(StoreError, FerrumError) and issubclass(StoreError, ValueError)
    for cls in (FerrumError, ShapeError, KindError, BackendError, OutOfBoundsError, ArgumentError):
        assert cls.__module__ == "ferrum"
        assert cls.__doc__


# (call, exception, regex the message must match)
CASES: dict[str, tuple[Callable[[], object], type[Exception], str]] = {
    # broadcasting and shapes
    "add shapes": (lambda: F + T.ones((3, 2), DEVICE), ShapeError, r"add: incompatible shapes \[2, 3\] and \[3, 2\]: dim 0 has sizes 2 and 3"),
    "add ranks": (lambda: F + T.ones((3,), DEVICE), ShapeError, r"add: incompatible shapes \[2, 3\] and \[3\]: ranks differ \(2 and 1\)"),
    "equal shapes": (lambda: F.equal(T.ones((3, 3), DEVICE)), ShapeError, r"equal: incompatible shapes \[2, 3\] and \[3, 3\]"),
    "mask_where shape": (lambda: F.mask_where(T.ones((3, 3), DEVICE, Bool), F), ShapeError, r"mask_where: .*\[2, 3\] and \[3, 3\].*dim 0 has sizes 2 and 3"),
    "mask_fill rank": (lambda: F.mask_fill(T.ones((3,), DEVICE, Bool), 1.0), ShapeError, r"mask_fill: .*the mask has rank 1, the tensor rank 2"),
    "reshape": (lambda: F.reshape((4, 2)), ShapeError, r"reshape: cannot reshape a tensor of shape \[2, 3\] \(6 elements\) into \[4, 2\]"),
    "reshape two -1": (lambda: F.reshape((-1, -1)), ShapeError, r"reshape: .*\[-1, -1\]"),
    "reshape not ints": (lambda: F.reshape("ab"), ShapeError, r"reshape: expected a shape"),
    "expand": (lambda: F.expand((4, 3)), ShapeError, r"expand: incompatible shapes \[2, 3\] and \[4, 3\]"),
    "slice step": (lambda: F.slice([(0, 3, 0)]), ArgumentError, r"slice: range step must not be 0, found \(0, 3, 0\)"),
    "index rank": (lambda: F[0, 0, 0], ShapeError, r"index: 3 indices given for a tensor of rank 2 \(shape \[2, 3\]\)"),
    "slice_assign": (lambda: F.slice_assign([(0, 1)], T.ones((1, 2), DEVICE)), ShapeError, r"slice_assign: incompatible shapes \[1, 3\] and \[1, 2\]"),
    "select indices rank": (lambda: F.select(0, T.from_ints([[0]], DEVICE)), ShapeError, r"select: expected a tensor of rank 1, found rank 2"),
    "select_assign": (lambda: F.select_assign(0, T.from_ints([0], DEVICE), F), ShapeError, r"select_assign: .*must have shape \[1, 3\]"),
    "gather rank": (lambda: F.gather(1, T.from_ints([0], DEVICE)), ShapeError, r"gather: .*indices have rank 1, the tensor rank 2"),
    "gather too long": (lambda: F.gather(1, T.zeros((3, 1), DEVICE, Int)), ShapeError, r"gather: .*indices dim 0 has size 3, larger than the tensor's 2"),
    "scatter values": (lambda: F.scatter(1, T.zeros((2, 2), DEVICE, Int), T.ones((2, 1), DEVICE)), ShapeError, r"scatter: .*larger than the values' 1"),
    "cat shapes": (lambda: T.cat([F, T.ones((2, 4), DEVICE)], 0), ShapeError, r"cat: incompatible shapes \[2, 3\] and \[2, 4\]: tensor 1 differs from tensor 0 in dim 1"),
    "cat ranks": (lambda: T.cat([F, F3], 0), ShapeError, r"cat: .*tensor 1 has rank 3, tensor 0 has rank 2"),
    "stack shapes": (lambda: T.stack([F, T.ones((2, 4), DEVICE)], 0), ShapeError, r"stack: .*stack needs equal shapes"),
    "matmul inner": (lambda: F @ F, ShapeError, r"matmul: incompatible shapes \[2, 3\] and \[2, 3\]: inner dims differ \(3 and 2\)"),
    "matmul ranks": (lambda: F @ F3, ShapeError, r"matmul: .*equal rank"),
    "dot": (lambda: F.dot(F), ShapeError, r"dot: expected two rank-1 tensors"),
    "from_data ragged": (lambda: T.from_data([[1.0, 2.0], [3.0]], DEVICE), ShapeError, r"from_data: ragged nested data: expected 2 items at depth 1, found 1"),
    "from_data scalar": (lambda: T.from_data(3.0, DEVICE), ShapeError, r"from_data: .*found a scalar"),
    "zeros negative": (lambda: T.zeros((2, -1), DEVICE), ShapeError, r"zeros: shape \[2, -1\] has a negative dim"),
    "zeros not a shape": (lambda: T.zeros("ab", DEVICE), ShapeError, r"zeros: expected a shape tuple of ints"),
    "TensorData shape": (lambda: TensorData([1, 2, 3], (2, 2)), ShapeError, r"TensorData: 3 values do not fill shape \[2, 2\]"),
    # kinds and dtypes
    "add kinds": (lambda: F + N, KindError, r"add: dtypes differ: f32 and i64"),
    "add dtypes": (lambda: F + F64, KindError, r"add: dtypes differ: f32 and f64"),
    "add a string": (lambda: F + "x", KindError, r"add: expected a number, found str"),
    "bool arithmetic": (lambda: B + B, KindError, r"add: .*found Bool"),
    "int plus fraction": (lambda: N + 2.5, KindError, r"add: the Float scalar 2.5 cannot combine with an Int tensor"),
    "int full fraction": (lambda: T.full((2,), 2.5, DEVICE, Int), KindError, r"full: the Float scalar 2.5"),
    "int compare fraction": (lambda: N.greater_elem(2.5), KindError, r"greater: the Float scalar 2.5"),
    "exp of int": (lambda: N.exp(), KindError, r"exp: expected a Float tensor, found Int"),
    "neg of bool": (lambda: -B, KindError, r"neg: .*found Bool"),
    "powf of int": (lambda: N.powf(N), KindError, r"powf: expected a Float tensor, found Int"),
    "powi float exponents": (lambda: F.powi(F), KindError, r"powi: .*Int tensor, found Float"),
    "pow modulo": (lambda: pow(F, 2.0, 3), KindError, r"pow: a modulo argument is not supported"),
    "bitwise of float": (lambda: F.bitwise_and(F), KindError, r"bitwise_and: .*Int tensor, found Float"),
    "bitwise fraction": (lambda: N.bitwise_and_scalar(1.5), KindError, r"bitwise_and: expected an Int tensor or an int"),
    "invert float": (lambda: ~F, KindError, r"bitwise_not: .*found Float"),
    "bool and int": (lambda: B & N, KindError, r"bool_and: expected a Bool tensor, found Int"),
    "bool_or of int": (lambda: N.bool_or(N), KindError, r"bool_or: expected a Bool tensor, found Int"),
    "order bools": (lambda: B.greater(B), KindError, r"greater: .*found Bool"),
    "is_close of int": (lambda: N.is_close(N), KindError, r"is_close: .*Float tensor, found Int"),
    "select float indices": (lambda: F.select(0, T.from_floats([0.0], DEVICE)), KindError, r"select: expected a Int tensor, found Float"),
    "mask of ints": (lambda: F.mask_where(N, F), KindError, r"mask_where: expected a Bool tensor, found Int"),
    "cat dtypes": (lambda: T.cat([F, N], 0), KindError, r"cat: dtypes differ: f32 and i64"),
    "var of int": (lambda: N.var(0), KindError, r"var: expected a Float tensor, found Int"),
    "sort bools": (lambda: B.sort(0), KindError, r"sort: .*found Bool"),
    "softmax of int": (lambda: activation.softmax(N, 0), KindError, r"softmax: expected a Float tensor, found Int"),
    "relu of int": (lambda: activation.relu(N), KindError, r"relu: expected a Float tensor, found Int"),
    "one_hot of bool": (lambda: B.one_hot(3), KindError, r"one_hot: .*found Bool"),
    "int of int": (lambda: N.int(), KindError, r"int: the tensor is already Int"),
    "float of float": (lambda: F.float(), KindError, r"float: the tensor is already Float"),
    "bool of bool": (lambda: B.bool(), KindError, r"bool: the tensor is already Bool"),
    "from_data strings": (lambda: T.from_data(["a"], DEVICE), KindError, r"from_data: expected numbers, found 'a'"),
    "from_data None": (lambda: T.from_data([None], DEVICE), KindError, r"from_data: expected numbers, found None"),
    "from_data int fraction": (lambda: T.from_data([1.5], DEVICE, Int), KindError, r"from_data: fractional values cannot make an Int tensor"),
    "from_data bad kind": (lambda: T.from_data([1.0], DEVICE, "Float"), KindError, r"expected a kind \(Float, Int or Bool\) or a DType, found 'Float'"),
    "zeros bad kind": (lambda: T.zeros((2,), DEVICE, int), KindError, r"expected a kind \(Float, Int or Bool\)"),
    "from_floats int dtype": (lambda: T.from_floats([1.0], DEVICE, dtype=DType.I64), KindError, r"from_floats: expected a Float dtype, found i64"),
    "from_numpy list": (lambda: T.from_numpy([1.0], DEVICE), KindError, r"from_numpy: expected a numpy.ndarray, found list"),
    "from_numpy complex": (lambda: T.from_numpy(np.array([1j]), DEVICE), KindError, r"from_numpy: expected a float, int or bool array, found dtype complex128"),
    "from_numpy strings": (lambda: T.from_numpy(np.array(["a"]), DEVICE), KindError, r"from_numpy: .*found dtype <U1"),
    "from_numpy objects": (lambda: T.from_numpy(np.array([1, None], dtype=object), DEVICE), KindError, r"from_numpy: .*found dtype object"),
    # untrusted nesting, lengths and shapes
    "from_data self-nested": (lambda: T.from_data(SELF_NESTED, DEVICE), ShapeError, r"from_data: the nested data contains itself"),
    "from_data nested too deep": (lambda: T.from_data(DEEPLY_NESTED, DEVICE), ShapeError, r"from_data: data nested deeper than 64 levels"),
    "from_data lying length": (lambda: T.from_data(LyingLength([1.0]), DEVICE), ShapeError, r"from_data: the nested sequences report lengths \[4611686018427387904\]"),
    "from_numpy lying interface": (lambda: T.from_numpy(LyingArray(), DEVICE), ArgumentError, r"from_numpy: NumPy cannot read this array"),
    "reshape overflowing count": (lambda: F.reshape((2**62 + 1, 6)), ShapeError, r"reshape: cannot reshape a tensor of shape \[2, 3\] \(6 elements\) into \[4611686018427387905, 6\]"),
    "TensorData overflowing shape": (lambda: TensorData([1.0, 2.0, 3.0, 4.0], [2**62 + 1, 4]), ShapeError, r"TensorData: 4 values do not fill shape \[4611686018427387905, 4\]"),
    "expand overflowing count": (lambda: T.ones((1, 1), DEVICE).expand((2**62, 2**62)), ArgumentError, r"expand: .*more elements than can be addressed"),
    "broadcast overflowing count": (lambda: T.ones((1, 1), DEVICE, Bool).expand((2**31, 1)).bool_and(T.ones((1, 1), DEVICE, Bool).expand((1, 2**40))), ArgumentError, r"bool_and: shape \[2147483648, 1099511627776\] has too many elements"),
    "split sizes that wrap around": (lambda: F.split_with_sizes([2**63 - 1, 2**63 - 1, 4], 0), ArgumentError, r"split_with_sizes: sizes \[9223372036854775807, 9223372036854775807, 4\] sum to 18446744073709551618"),
    # conversions that would lose data
    "from_ints beyond i64": (lambda: T.from_ints([1e300], DEVICE), KindError, r"from_data: 1e300 does not fit in an Int tensor \(i64\)"),
    "from_data Int beyond i64": (lambda: T.from_data([9.3e18], DEVICE, Int), KindError, r"from_data: 9.3e18 does not fit in an Int tensor"),
    "from_data int beyond i64": (lambda: T.from_data([2**100], DEVICE), KindError, r"from_data: 1267650600228229401496703205376 does not fit in an Int tensor \(i64\); ask for a Float tensor"),
    "from_data numpy uint64 beyond i64": (lambda: T.from_data([np.uint64(2**64 - 1)], DEVICE), KindError, r"from_data: np.uint64\(18446744073709551615\) does not fit in an Int tensor"),
    "from_numpy uint64 beyond i64": (lambda: T.from_numpy(np.array([2**64 - 1], np.uint64), DEVICE), KindError, r"from_numpy: the value 18446744073709551615 of the uint64 array does not fit in an Int tensor"),
    "from_numpy nan to Int": (lambda: T.from_numpy(np.array([1.0, np.nan]), DEVICE, dtype=DType.I64), KindError, r"from_numpy: the value NaN has no Int \(i64\) value"),
    "from_data complex scalar": (lambda: T.from_data([np.complex128(1 + 2j)], DEVICE), KindError, r"from_data: expected numbers, found np.complex128\(1\+2j\) \(complex values cannot be stored"),
    "from_data complex": (lambda: T.from_floats([1j], DEVICE), KindError, r"from_data: expected numbers, found 1j \(complex"),
    "add int beyond i64": (lambda: N + 2**70, KindError, r"add: 1180591620717411303424 does not fit in an Int tensor \(i64\)"),
    "full int beyond i64": (lambda: T.full((2,), 2**70, DEVICE, Int), KindError, r"full: 1180591620717411303424 does not fit in an Int tensor"),
    "add complex scalar": (lambda: F + np.complex64(1j), KindError, r"add: expected a number, found complex64"),
    # backends
    "add backends": (lambda: F + AD, BackendError, r"add: tensors live on different backends \(NdArray and Autodiff\[NdArray\]\)"),
    "cat backends": (lambda: T.cat([F, AD], 0), BackendError, r"cat: tensors live on different backends"),
    "matmul backends": (lambda: F @ AD.transpose(), BackendError, r"matmul: tensors live on different backends"),
    "backward on plain": (lambda: F.sum().backward(), BackendError, r"backward: the tensor lives on the plain backend NdArray"),
    # dims and indices out of range
    "sum_dim": (lambda: F.sum_dim(2), OutOfBoundsError, r"sum_dim: dim 2 is out of range for a tensor of rank 2"),
    "sum_dim negative": (lambda: F.sum_dim(-3), OutOfBoundsError, r"sum_dim: dim -3 is out of range for a tensor of rank 2"),
    "argmax": (lambda: F.argmax(5), OutOfBoundsError, r"argmax: dim 5 is out of range"),
    "permute": (lambda: F.permute([0, 2]), OutOfBoundsError, r"permute: dim 2 is out of range"),
    "swap_dims": (lambda: F.swap_dims(0, 2), OutOfBoundsError, r"swap_dims: dim 2 is out of range"),
    "flip": (lambda: F.flip([3]), OutOfBoundsError, r"flip: dim 3 is out of range"),
    "narrow dim": (lambda: F.narrow(2, 0, 1), OutOfBoundsError, r"narrow: dim 2 is out of range"),
    "softmax dim": (lambda: activation.softmax(F, 2), OutOfBoundsError, r"softmax: dim 2 is out of range"),
    "cat dim": (lambda: T.cat([F, F], 2), OutOfBoundsError, r"cat: dim 2 is out of range for a tensor of rank 2"),
    "stack dim": (lambda: T.stack([F, F], 3), OutOfBoundsError, r"stack: dim 3 is out of range"),
    "roll dim": (lambda: F.roll([1], [2]), OutOfBoundsError, r"roll: dim 2 is out of range"),
    "index": (lambda: F[2], OutOfBoundsError, r"index: index 2 is out of bounds for dim 0 of size 2"),
    "negative index": (lambda: F[-3], OutOfBoundsError, r"index: index -3 is out of bounds for dim 0 of size 2"),
    "select index": (lambda: F.select(0, T.from_ints([2], DEVICE)), OutOfBoundsError, r"select: index 2 is out of bounds for dim 0 of size 2"),
    "select negative index": (lambda: F.select(0, T.from_ints([-1], DEVICE)), OutOfBoundsError, r"select: index -1 is out of bounds"),
    "gather index": (lambda: F.gather(1, T.from_ints([[3]], DEVICE)), OutOfBoundsError, r"gather: index 3 is out of bounds for dim 1 of size 3"),
    "take index": (lambda: F.take(1, T.from_ints([3], DEVICE)), OutOfBoundsError, r"take: index 3 is out of bounds for dim 1 of size 3"),
    "one_hot class": (lambda: T.from_ints([3], DEVICE).one_hot(3), OutOfBoundsError, r"one_hot: index 3 is out of bounds .* of size 3"),
    "one_hot negative class": (lambda: T.from_ints([-1], DEVICE).one_hot(3), OutOfBoundsError, r"one_hot: index -1 is out of bounds"),
    # argument values
    "clamp bounds": (lambda: F.clamp(2.0, 1.0), ArgumentError, r"clamp: min .*2.* is greater than max .*1"),
    "permute arity": (lambda: F.permute([0]), ArgumentError, r"permute: expected 2 axes for shape \[2, 3\], found \[0\]"),
    "permute repeats": (lambda: F.permute([0, 0]), ArgumentError, r"permute: axis 0 appears twice"),
    "movedim repeats": (lambda: F3.movedim([0, 1], [0, 0]), ArgumentError, r"movedim: destination dim 0 repeats"),
    "movedim arity": (lambda: F3.movedim([0, 1], [0]), ArgumentError, r"movedim: source has 2 dims, destination 1"),
    "flatten order": (lambda: F3.flatten(2, 0), ArgumentError, r"flatten: start dim 2 is after end dim 0"),
    "squeeze a big dim": (lambda: F.squeeze_dims([1]), ArgumentError, r"squeeze_dims: dim 1 has size 3, only dims of size 1 can be squeezed \(shape \[2, 3\]\)"),
    "unsqueeze to lower rank": (lambda: F3.unsqueeze(2), ArgumentError, r"unsqueeze: cannot unsqueeze rank 3 to lower rank 2"),
    "expand to fewer dims": (lambda: F.expand((3,)), ArgumentError, r"expand: cannot expand shape \[2, 3\] to fewer dims \[3\]"),
    "narrow range": (lambda: F.narrow(1, 2, 2), ArgumentError, r"narrow: range 2..4 exceeds dim 1 of size 3"),
    "chunk zero": (lambda: F.chunk(0, 0), ArgumentError, r"chunk: number of chunks must be positive"),
    "split zero": (lambda: F.split(0, 0), ArgumentError, r"split: split size must be positive"),
    "split sizes": (lambda: F.split_with_sizes([1, 1], 1), ArgumentError, r"split_with_sizes: sizes \[1, 1\] sum to 2, dim 1 has size 3"),
    "unfold window": (lambda: F.unfold(1, 4, 1), ArgumentError, r"unfold: window size 4 and step 1 do not fit dim 1 of size 3"),
    "unfold step": (lambda: F.unfold(1, 2, 0), ArgumentError, r"unfold: .*step 0"),
    "slice step zero": (lambda: F[::0], ArgumentError, r"slice step must not be 0"),
    "two ellipses": (lambda: F[..., ...], ArgumentError, r"index: at most one Ellipsis"),
    "index by string": (lambda: F["a"], ArgumentError, r"index: cannot index with 'a'"),
    "index by float": (lambda: F[1.5], ArgumentError, r"index: cannot index with 1.5"),
    "slice not ranges": (lambda: F.slice(3), ArgumentError, r"slice: expected a sequence of ranges, found 3"),
    "pad odd": (lambda: F.pad([1, 2, 3]), ArgumentError, r"pad: expected \(before, after\) pairs, found 3 numbers"),
    "pad too many": (lambda: F.pad([1, 1, 1, 1, 1, 1]), ArgumentError, r"pad: 3 \(before, after\) pairs given for a tensor of rank 2"),
    "repeat arity": (lambda: F.repeat([2]), ArgumentError, r"repeat: expected 2 repeat counts for shape \[2, 3\], found \[2\]"),
    "roll arity": (lambda: F.roll([1, 2], [0]), ArgumentError, r"roll: 2 shifts given for 1 dims"),
    "triu of a vector": (lambda: T.ones((3,), DEVICE).triu(), ArgumentError, r"triu: expected a shape of rank >= 2"),
    "triu_mask of a vector": (lambda: T.triu_mask((3,), 0, DEVICE), ArgumentError, r"triu_mask: expected a shape of rank >= 2"),
    "cat nothing": (lambda: T.cat([], 0), ArgumentError, r"cat: expected at least one tensor, found none"),
    "stack nothing": (lambda: T.stack([], 0), ArgumentError, r"stack: expected at least one tensor"),
    "cov correction": (lambda: F.cov(1, 5), ArgumentError, r"cov: correction factor 5 exceeds the 3 samples along dim 1"),
    "topk k": (lambda: F.topk(4, 1), ArgumentError, r"topk: k = 4 exceeds the size 3 of dim 1"),
    "max of nothing": (lambda: T.zeros((0,), DEVICE).max(), ArgumentError, r"max: cannot reduce an empty tensor \(shape \[0\]\)"),
    "argmax of nothing": (lambda: T.zeros((0, 2), DEVICE).argmax(0), ArgumentError, r"argmax: cannot reduce dim 0 of size 0"),
    "int mean of nothing": (lambda: T.zeros((0,), DEVICE, Int).mean(), ArgumentError, r"mean: an Int tensor with no elements has no mean"),
    "into_scalar": (lambda: F.into_scalar(), ArgumentError, r"into_scalar: expected a tensor with exactly one element, found shape \[2, 3\]"),
    "float()": (lambda: float(F), ArgumentError, r"into_scalar: .*shape \[2, 3\]"),
    "bool()": (lambda: bool(F), ArgumentError, r"truth value of a tensor with shape \[2, 3\] is ambiguous"),
    "arange step": (lambda: T.arange_step(0, 5, 0, DEVICE), ArgumentError, r"arange_step: step must not be 0"),
    "prelu weights": (lambda: activation.prelu(F, T.ones((2,), DEVICE)), ArgumentError, r"prelu: alpha has 2 weights, expected 1 or the size of dim 1"),
    "prelu rank": (lambda: activation.prelu(F, T.ones((1, 3), DEVICE)), ArgumentError, r"prelu: alpha must have rank 1"),
    "glu odd": (lambda: activation.glu(F, 1), ArgumentError, r"glu: dim 1 has size 3, which must be even"),
    "softplus beta": (lambda: activation.softplus(F, 0.0), ArgumentError, r"softplus: beta must be finite and non-zero"),
    "one_hot NaN": (lambda: T.from_floats([float("nan")], DEVICE).one_hot(3), ArgumentError, r"one_hot: class index NaN"),
    "expand negative": (lambda: F.expand((2, -3)), ArgumentError, r"expand: bad size -3"),
}  # fmt: skip


def known_bugs_xfail(names: list[str], bugs: dict[str, str]) -> list[Any]:
    """``names`` as parametrize values, each one in ``bugs`` a strict xfail whose reason is the bug."""
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=bugs[n])) if n in bugs else n for n in names
    ]


KNOWN_MESSAGE_BUGS: dict[str, str] = {}


@pytest.mark.parametrize("name", known_bugs_xfail(sorted(CASES), KNOWN_MESSAGE_BUGS))
def test_bad_input_raises(name: str) -> None:
    call, exc, pattern = CASES[name]
    with pytest.raises(exc) as info:
        call()
    assert isinstance(info.value, FerrumError)
    assert re.search(pattern, str(info.value)), str(info.value)


@pytest.mark.parametrize("name", ["cat not a tensor", "cast to a string"])
def test_wrong_argument_types_are_type_errors(name: str) -> None:
    calls: dict[str, Callable[[], object]] = {
        "cat not a tensor": lambda: T.cat([F, 1], 0),
        "cast to a string": lambda: F.cast("f32"),
    }
    with pytest.raises(TypeError):
        calls[name]()


# --------------------------------------------------------------------------- properties over bad inputs


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.sampled_from(
        ["sum_dim", "mean_dim", "argmax", "cumsum", "sort", "softmax", "flip", "narrow", "iter_dim"]
    ),
    st.data(),
)
def test_dims_out_of_range(shape: list[int], op: str, data: st.DataObject) -> None:
    rank = len(shape)
    dim = data.draw(st.one_of(st.integers(rank, rank + 5), st.integers(-rank - 5, -rank - 1)))
    t: Any = Tensor.ones(shape, DEVICE)
    calls: dict[str, Callable[[], object]] = {
        "sum_dim": lambda: t.sum_dim(dim),
        "mean_dim": lambda: t.mean_dim(dim),
        "argmax": lambda: t.argmax(dim),
        "cumsum": lambda: t.cumsum(dim),
        "sort": lambda: t.sort(dim),
        "softmax": lambda: activation.softmax(t, dim),
        "flip": lambda: t.flip([dim]),
        "narrow": lambda: t.narrow(dim, 0, 1),
        "iter_dim": lambda: t.iter_dim(dim),
        "squeeze_dim": lambda: t.squeeze_dim(dim),
    }
    with pytest.raises(
        OutOfBoundsError, match=rf"{op}: dim {dim} is out of range for a tensor of rank {rank}"
    ):
        calls[op]()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_incompatible_broadcasts(shape: list[int], data: st.DataObject) -> None:
    d = data.draw(st.integers(0, len(shape) - 1))
    other = list(shape)
    other[d] = data.draw(st.integers(2, 5).filter(lambda n: n != shape[d] and shape[d] != 1))
    a: Any = Tensor.zeros(shape, DEVICE)
    b: Any = Tensor.zeros(other, DEVICE)
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: a + b, "add"),
        (lambda: a.mul(b), "mul"),
        (lambda: a.lower(b), "lower"),
    ]
    for call, op in calls:
        with pytest.raises(ShapeError) as info:
            call()
        msg = str(info.value)
        assert msg.startswith(f"{op}: incompatible shapes {shape} and {other}"), msg
        assert f"dim {d} has sizes {shape[d]} and {other[d]}" in msg


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=3), st.lists(st.integers(1, 4), min_size=1, max_size=3)
)
def test_reshape_to_a_wrong_count(shape: list[int], target: list[int]) -> None:
    if int(np.prod(shape)) == int(np.prod(target)):
        target = [*target, 2]
    t: Any = Tensor.zeros(shape, DEVICE)
    with pytest.raises(
        ShapeError, match=rf"reshape: cannot reshape a tensor of shape {re.escape(str(shape))}"
    ):
        t.reshape(target)


# --------------------------------------------------------------------------- no panics, no aborts

# Values that do not fit the engine's sizes must still be ferrum errors naming the op,
# not OverflowError from argument conversion or a Rust panic (PanicException).
HUGE: dict[str, Callable[[], object]] = {
    "pad negative": lambda: F.pad([-1, 1]),
    "pad huge": lambda: F.pad([2**62, 2**62]),
    "eye negative": lambda: T.eye(-1, DEVICE),
    "eye huge": lambda: T.eye(2**33, DEVICE),
    "repeat negative": lambda: F.repeat([-1, 1]),
    "narrow negative": lambda: F.narrow(1, -1, 1),
    "narrow overflowing range": lambda: F.narrow(1, 2**63, 2**63),
    "chunk negative": lambda: F.chunk(-1, 0),
    "one_hot huge": lambda: T.from_ints([0], DEVICE).one_hot(2**62),
    "arange huge": lambda: T.arange(0, 2**62, DEVICE),
}


# Known engine bugs (see the session notes): strict, so each fails loudly once fixed.
KNOWN_SIZE_BUGS: dict[str, str] = {}


@pytest.mark.parametrize("name", known_bugs_xfail(sorted(HUGE), KNOWN_SIZE_BUGS))
def test_out_of_range_sizes_are_ferrum_errors(name: str) -> None:
    op = name.split()[0]
    with pytest.raises(FerrumError, match=op):
        HUGE[name]()


# A stride-0 view of 2**40 elements (4 TiB as f32) over one stored value.
HUGE_VIEW = "Tensor.ones((1, 1), d).expand((2**20, 2**20))"

SUBPROCESS_CASES = {
    "zeros too large to allocate": "Tensor.zeros((2**40,), d)",
    "zeros with an overflowing element count": "Tensor.zeros((2**32, 2**32), d).to_numpy().sum()",
    "repeat too large to allocate": "Tensor.ones((1,), d).repeat([2**40])",
    "exp of a huge broadcast view": f"{HUGE_VIEW}.exp()",
    "scalar add to a huge broadcast view": f"{HUGE_VIEW} + 1.0",
    "abs of a huge broadcast view": f"{HUGE_VIEW}.abs()",
    "is_nan of a huge broadcast view": f"{HUGE_VIEW}.is_nan()",
    "prod of a huge broadcast view": f"{HUGE_VIEW}.prod()",
    "argmax of a huge broadcast view": f"{HUGE_VIEW}.argmax(1)",
    "comparison of a huge broadcast view": f"{HUGE_VIEW}.greater_elem(0.0)",
    "int of a huge broadcast view": f"{HUGE_VIEW}.int()",
    "to_data of a huge broadcast view": f"{HUGE_VIEW}.to_data()",
    "matmul of huge broadcast views": f"{HUGE_VIEW}.matmul({HUGE_VIEW})",
    "cat of huge broadcast views": f"Tensor.cat([{HUGE_VIEW}, {HUGE_VIEW}], 0)",
    "roll of a huge broadcast view": f"{HUGE_VIEW}.roll([1], [0])",
    "tracked autodiff max of a huge broadcast view": "Tensor.ones((1, 1), Autodiff[NdArray].device()).require_grad().expand((2**20, 2**20)).max()",
    "zeros_like of a huge broadcast view": f"{HUGE_VIEW}.zeros_like()",
    "full_like of a huge broadcast view": f"{HUGE_VIEW}.full_like(2.0)",
    # (2**62 + 1) * 4 wraps around to 4: before layouts were checked, this view
    # read heap memory past the buffer, and the next one segfaulted.
    "to_numpy past a wrapped shape": "Tensor.from_floats([1.0, 2.0, 3.0, 4.0], d).reshape([2**62 + 1, 4])[1:2].to_numpy()",
    "to_numpy far past a wrapped shape": "Tensor.from_floats([1.0, 2.0, 3.0, 4.0], d).reshape([2**62 + 1, 4])[10**9:10**9 + 1].to_numpy()",
    "from_data with a lying length": "Tensor.from_data(type('L', (list,), {'__len__': lambda self: 2**62})([1.0]), d)",
}


KNOWN_ABORTS: dict[str, str] = {}


@pytest.mark.parametrize("name", known_bugs_xfail(sorted(SUBPROCESS_CASES), KNOWN_ABORTS))
def test_huge_tensors_raise_instead_of_aborting(name: str) -> None:
    # In a subprocess: an allocation failure in Rust aborts the whole interpreter.
    code = textwrap.dedent(
        f"""
        from ferrum import FerrumError, Tensor
        from ferrum.backend import Autodiff, NdArray
        d = NdArray.device()
        try:
            {SUBPROCESS_CASES[name]}
        except (FerrumError, MemoryError) as e:
            print("raised", type(e).__name__)
        else:
            print("no error")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    assert proc.stdout.startswith("raised"), proc.stdout + proc.stderr[-2000:]


def test_reductions_of_a_huge_broadcast_view_do_not_materialise_it() -> None:
    # 3 * 2**40 elements would not fit in memory; a subprocess in case it is tried.
    code = textwrap.dedent(
        """
        from ferrum import Tensor
        from ferrum.backend import Autodiff, NdArray
        x = Tensor.from_data([[1.0, 2.0, 4.0]], NdArray.device()).expand((2**40, 3))
        print(x.sum().into_scalar(), x.mean().into_scalar())
        print(x.sum_dim(0).to_data().to_list())
        y = Tensor.from_data([[1.0, 2.0, 4.0]], Autodiff[NdArray].device()).expand((2**40, 3))
        print(x.max().into_scalar(), x.min().into_scalar(), y.max().into_scalar(), y.min().into_scalar())
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    total, mean = (float(v) for v in proc.stdout.splitlines()[0].split())
    assert total == 7.0 * 2**40
    assert math.isclose(mean, 7.0 / 3.0, rel_tol=1e-6)
    assert proc.stdout.splitlines()[1] == str([[v * 2**40 for v in (1.0, 2.0, 4.0)]])
    assert proc.stdout.splitlines()[2].split() == ["4.0", "1.0", "4.0", "1.0"]
