"""``TensorSnapshot``: one named tensor of a store, read only when asked for.

A store lists its tensors (path, shape, dtype) without reading their bytes;
``to_numpy()`` reads them, from a memory map where the format allows it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["TensorSnapshot"]


@dataclasses.dataclass(frozen=True)
class TensorSnapshot:
    """A tensor of a store: its dotted ``path``, ``shape``, ``dtype`` name and a reader of its values.

    ``dtype`` is Burn's name (``"F32"``, ``"F16"``, ``"BF16"``, ``"I64"``, ``"Bool"``...).
    ``container`` is the class name of the module that holds it (``"Linear"``)
    when the snapshot comes from a module, else None.

    Example:
        >>> import numpy as np
        >>> from ferrum.store import TensorSnapshot
        >>> snap = TensorSnapshot.from_numpy("fc.weight", np.zeros((2, 3), np.float32))
        >>> snap.path, snap.shape, snap.dtype
        ('fc.weight', (2, 3), 'F32')
    """

    path: str
    shape: tuple[int, ...]
    dtype: str
    read: Callable[[], npt.NDArray[Any]] = dataclasses.field(repr=False, compare=False)
    container: str | None = None
    param_id: int | None = None

    @staticmethod
    def from_numpy(
        path: str, array: npt.NDArray[Any], container: str | None = None, param_id: int | None = None
    ) -> TensorSnapshot:
        """A snapshot holding ``array`` (no copy)."""
        return TensorSnapshot(
            path, tuple(array.shape), dtype_name(array.dtype), lambda: array, container, param_id
        )

    def to_numpy(self) -> npt.NDArray[Any]:
        """The values, shaped ``shape``; bf16 comes back as float32 (NumPy has no bf16)."""
        return self.read()

    def with_path(self, path: str) -> TensorSnapshot:
        """The same tensor under another path."""
        return dataclasses.replace(self, path=path)

    @property
    def name(self) -> str:
        """The last segment of the path (``weight`` for ``fc.weight``)."""
        return self.path.rsplit(".", 1)[-1]

    def num_bytes(self) -> int:
        """The size of the values in bytes, from shape and dtype (without reading them)."""
        count = 1
        for dim in self.shape:
            count *= dim
        return count * DTYPE_SIZES[self.dtype]


DTYPE_SIZES = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2,
    "I64": 8, "I32": 4, "I16": 2, "I8": 1,
    "U64": 8, "U32": 4, "U16": 2, "U8": 1, "Bool": 1,
}  # fmt: skip

_NUMPY_NAMES = {
    "float64": "F64", "float32": "F32", "float16": "F16",
    "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
    "uint64": "U64", "uint32": "U32", "uint16": "U16", "uint8": "U8", "bool": "Bool",
}  # fmt: skip

NUMPY_DTYPES: dict[str, np.dtype[Any]] = {name: np.dtype(np_name) for np_name, name in _NUMPY_NAMES.items()}


def dtype_name(dtype: np.dtype[Any]) -> str:
    """Burn's name of a NumPy dtype; ValueError for a dtype no store holds."""
    try:
        return _NUMPY_NAMES[np.dtype(dtype).name]
    except KeyError:
        raise ValueError(f"tensors of dtype {np.dtype(dtype).name} cannot be stored") from None


def bf16_to_f32(raw: npt.NDArray[np.uint16]) -> npt.NDArray[np.float32]:
    """bfloat16 bit patterns (as uint16) widened to float32: bf16 is the high half of an f32."""
    return (raw.astype(np.uint32) << 16).view(np.float32)
