"""The globals a PyTorch state dict may name, as stand-ins that build tensor descriptions.

Nothing from torch is imported or called: ``torch._utils._rebuild_tensor_v2``
becomes a function recording storage, offset, size and stride, a storage
type (``torch.FloatStorage``) a dtype name, ``collections.OrderedDict`` a
plain dict; a checkpoint's devices, sizes, dtypes and NumPy numbers become
text, tuples, markers and Python numbers. Anything else a file names is
refused by the pickle reader.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ferrum.store.pytorch.pickle import Allowed, PickleError, bounded_repr

__all__ = ["ALLOWED", "StorageRef", "TensorRef", "storage_dtype"]


@dataclasses.dataclass(frozen=True)
class StorageRef:
    """A storage of the file: ``key`` locates its bytes; ``numel`` elements of ``dtype``.

    A legacy file's storage views start ``base`` elements into their root storage.
    """

    key: str
    dtype: str
    numel: int
    base: int = 0


@dataclasses.dataclass(frozen=True)
class TensorRef:
    """A tensor as a view of a storage: element offset, size and strides (in elements)."""

    storage: StorageRef
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]

    def build_state(self, state: object) -> None:
        """BUILD on a tensor sets Python attributes (a Parameter's): no part of its values."""


_STORAGES = {
    "FloatStorage": "F32", "DoubleStorage": "F64", "HalfStorage": "F16", "BFloat16Storage": "BF16",
    "LongStorage": "I64", "IntStorage": "I32", "ShortStorage": "I16", "CharStorage": "I8",
    "ByteStorage": "U8", "BoolStorage": "Bool", "UntypedStorage": "U8",
}  # fmt: skip


def _ints(value: object, what: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise PickleError(
            f"tensor {what} must be a tuple of non-negative integers, found {bounded_repr(value, 80)}"
        )
    return tuple(value)


def rebuild_tensor(storage: object, offset: object, size: object, stride: object, *_: object) -> TensorRef:
    """``torch._utils._rebuild_tensor(_v2)``: a view of ``storage``."""
    if not isinstance(storage, StorageRef):
        raise PickleError(f"a tensor must view a storage, found {type(storage).__name__}")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise PickleError(
            f"tensor storage offset must be a non-negative integer, found {bounded_repr(offset, 40)}"
        )
    shape, strides = _ints(size, "size"), _ints(stride, "stride")
    if len(shape) != len(strides):
        raise PickleError(f"tensor size {list(shape)} and stride {list(strides)} differ in rank")
    return TensorRef(storage, offset, shape, strides)


def _rebuild_parameter(data: object, *_: object) -> object:
    if not isinstance(data, TensorRef):
        raise PickleError(f"a Parameter must wrap a tensor, found {type(data).__name__}")
    return data


def _rebuild_from_type(func: object, new_type: object, args: object, state: object) -> object:
    # torch._tensor._rebuild_from_type_v2: a Tensor subclass (Parameter) around a rebuilt tensor.
    if not isinstance(func, Allowed) or func.call is None or not isinstance(args, tuple):
        raise PickleError(
            f"_rebuild_from_type_v2 needs an allow-listed rebuilder, found {bounded_repr(func, 60)}"
        )
    return func.call(*args)


def _ordered_dict(*items: object) -> dict[Any, Any]:
    if items:
        raise PickleError("OrderedDict() with arguments is not a state dict")
    return {}


def _codecs_encode(text: object, encoding: object = "utf-8") -> bytes:
    # Protocol 2 pickles bytes as _codecs.encode(str, "latin1").
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise PickleError("_codecs.encode is allowed only for latin1 text")
    return text.encode("latin-1")


def _empty_bytes(*args: object) -> bytes:
    # Protocols below 3 pickle b"" as __builtin__.bytes().
    if args:
        raise PickleError("bytes(...) is allowed only without arguments")
    return b""


def _device(*args: object) -> str:
    # torch.device("cuda", 0) in a checkpoint: kept as its text, "cuda:0".
    if (
        not 1 <= len(args) <= 2
        or not isinstance(args[0], str)
        or (len(args) == 2 and not isinstance(args[1], int))
    ):
        raise PickleError(f"torch.device{bounded_repr(args, 60)} is not a device name")
    return ":".join(str(a) for a in args)


def _size(dims: object = ()) -> tuple[int, ...]:
    return _ints(dims, "torch.Size")


_NUMPY_SCALARS = frozenset({"f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"})


class NumpyDtype:
    """``numpy.dtype(name)`` of a pickled NumPy scalar: a plain number type, its byte order set by BUILD."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.order = "<"

    def build_state(self, state: object) -> None:
        """NumPy's dtype state: ``(version, byte order, ...)``."""
        if not isinstance(state, tuple) or len(state) < 2 or state[1] not in ("<", ">", "|", "="):
            raise PickleError(f"numpy.dtype state {bounded_repr(state, 60)} is malformed")
        self.order = "<" if state[1] in ("|", "=") else state[1]


def _numpy_dtype(name: object, *_: object) -> NumpyDtype:
    if not isinstance(name, str) or name not in _NUMPY_SCALARS:
        raise PickleError(f"numpy.dtype({bounded_repr(name, 20)}) is not a plain number type")
    return NumpyDtype(name)


def _numpy_scalar(dtype: object, data: object = b"") -> float | int | bool:
    # A NumPy number in a checkpoint (a best accuracy, a step count): kept as a Python number.
    if not isinstance(dtype, NumpyDtype) or not isinstance(data, bytes):
        raise PickleError("numpy scalar needs a plain number dtype and its bytes")
    code = np.dtype(dtype.order + dtype.name)
    if len(data) != code.itemsize:
        raise PickleError(
            f"numpy scalar of dtype {dtype.name} has {len(data)} bytes, expected {code.itemsize}"
        )
    value: float | int | bool = np.frombuffer(data, dtype=code)[0].item()
    return value


def _marker(name: str) -> Allowed:
    return Allowed(name)


ALLOWED: dict[tuple[str, str], Allowed] = {
    ("collections", "OrderedDict"): Allowed("collections.OrderedDict", _ordered_dict),
    ("torch._utils", "_rebuild_tensor"): Allowed("torch._utils._rebuild_tensor", rebuild_tensor),
    ("torch._utils", "_rebuild_tensor_v2"): Allowed("torch._utils._rebuild_tensor_v2", rebuild_tensor),
    ("torch._utils", "_rebuild_parameter"): Allowed("torch._utils._rebuild_parameter", _rebuild_parameter),
    ("torch._utils", "_rebuild_parameter_with_state"): Allowed(
        "torch._utils._rebuild_parameter_with_state", _rebuild_parameter
    ),
    ("torch._tensor", "_rebuild_from_type_v2"): Allowed(
        "torch._tensor._rebuild_from_type_v2", _rebuild_from_type
    ),
    ("torch.nn.parameter", "Parameter"): _marker("torch.nn.parameter.Parameter"),
    ("torch", "Tensor"): _marker("torch.Tensor"),
    ("_codecs", "encode"): Allowed("_codecs.encode", _codecs_encode),
    ("__builtin__", "bytes"): Allowed("__builtin__.bytes", _empty_bytes),
    ("builtins", "bytes"): Allowed("builtins.bytes", _empty_bytes),
}
for _name, _dtype in _STORAGES.items():
    ALLOWED[("torch", _name)] = Allowed(f"torch.{_name}")
# Values a checkpoint may hold beside its tensors: devices, sizes, dtypes and NumPy numbers.
ALLOWED[("torch", "device")] = Allowed("torch.device", _device)
ALLOWED[("torch", "Size")] = Allowed("torch.Size", _size)
for _name in (
    "float64",
    "float32",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
):
    ALLOWED[("torch", _name)] = _marker(f"torch.{_name}")
ALLOWED[("numpy", "dtype")] = Allowed("numpy.dtype", _numpy_dtype)
for _module in ("numpy.core.multiarray", "numpy._core.multiarray"):
    ALLOWED[(_module, "scalar")] = Allowed(f"{_module}.scalar", _numpy_scalar)


def storage_dtype(storage_type: object) -> str:
    """The dtype name of a storage class named in a persistent id."""
    if isinstance(storage_type, Allowed) and storage_type.name.startswith("torch."):
        dtype = _STORAGES.get(storage_type.name.removeprefix("torch."))
        if dtype is not None:
            return dtype
    raise PickleError(f"persistent id names {bounded_repr(storage_type, 60)}, not a torch storage type")
