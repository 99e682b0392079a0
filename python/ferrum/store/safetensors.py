"""``SafetensorsStore``: ``.safetensors`` files through the ``safetensors`` package's NumPy API.

Needs the ``safetensors`` extra (``pip install ferrum-dl[safetensors]``). Tensors
are read one at a time from the file's memory map as they are applied;
string metadata goes in and out of the header. The adapters are the
identity unless set (``PyTorchToBurnAdapter`` for files written by PyTorch,
which also turns on contiguous index mapping unless it was set).
"""

from __future__ import annotations

import dataclasses
import json
import mmap
import os
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ferrum.extras import require
from ferrum.store.atomic import write_atomically
from ferrum.store.base import MetadataStore
from ferrum.store.result import StoreError
from ferrum.store.snapshot import DTYPE_SIZES, NUMPY_DTYPES, TensorSnapshot, bf16_to_f32

__all__ = ["SafetensorsStore"]


def _safetensors() -> Any:
    # The NumPy API lives in safetensors.numpy.
    return require("safetensors.numpy", "SafetensorsStore", "safetensors")


@dataclasses.dataclass(frozen=True)
class SafetensorsStore(MetadataStore):
    """A ``.safetensors`` file, read or written.

    Example:
        >>> import tempfile, os
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> from ferrum.store import SafetensorsStore
        >>> layer = LinearConfig(3, 2).init(NdArray.device())
        >>> path = os.path.join(tempfile.mkdtemp(), "layer.safetensors")
        >>> layer.save_into(SafetensorsStore.from_file(path).metadata("epoch", "3"))
        >>> SafetensorsStore.from_file(path).keys()
        ['bias', 'weight']
        >>> SafetensorsStore.from_file(path).file_metadata()["epoch"]
        '3'
    """

    file_format: ClassVar[str] = "safetensors"

    def file_metadata(self) -> dict[str, str]:
        """The metadata in the file's header."""
        with self._open() as handle:
            return dict(handle.metadata() or {})

    def _open(self) -> Any:
        _safetensors()
        from safetensors import safe_open

        if not self.path.is_file():
            raise StoreError(f"safetensors file {self.path} does not exist")
        try:
            return safe_open(os.fspath(self.path), framework="np")
        except Exception as err:  # the package raises its own SafetensorError for a damaged header
            raise StoreError(f"{self.path} is not a readable safetensors file: {err}") from None

    def _read(self) -> dict[str, TensorSnapshot]:
        # One handle (one memory map) serves every tensor of this read; it closes when the snapshots go.
        handle = self._open()
        found: dict[str, TensorSnapshot] = {}
        for key in handle.keys():
            view = handle.get_slice(key)
            dtype = view.get_dtype()
            if dtype not in DTYPE_SIZES:
                raise StoreError(f"{self.path}: tensor '{key}' has dtype {dtype}, which ferrum cannot load")
            shape = tuple(int(d) for d in view.get_shape())
            read = self._bf16_reader(key, shape) if dtype == "BF16" else self._reader(handle, key)
            found[key] = TensorSnapshot(key, shape, dtype, read)
        return found

    def _bf16_reader(self, key: str, shape: tuple[int, ...]) -> Any:
        # NumPy has no bfloat16, so the package's NumPy API cannot return one: the bits are read from
        # a memory map at the offsets of the header (which safe_open has already validated).
        def read() -> npt.NDArray[Any]:
            try:
                with open(self.path, "rb") as handle:
                    size = int.from_bytes(handle.read(8), "little")
                    header = json.loads(handle.read(size))
                    start, end = header[key]["data_offsets"]
                    buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                raw = np.frombuffer(buffer, dtype="<u2", count=(end - start) // 2, offset=8 + size + start)
                return bf16_to_f32(raw.reshape(shape))
            except (OSError, ValueError, KeyError, TypeError) as err:  # the file changed since it was opened
                raise StoreError(f"{self.path}: tensor '{key}' cannot be read: {err}") from None

        return read

    def _reader(self, handle: Any, key: str) -> Any:
        def read() -> npt.NDArray[Any]:
            try:
                return handle.get_tensor(key)  # type: ignore[no-any-return]
            except Exception as err:  # the package's SafetensorError, or an OSError from the map
                raise StoreError(f"{self.path}: tensor '{key}' cannot be read: {err}") from None

        return read

    def _write(self, snapshots: list[TensorSnapshot]) -> None:
        self._check_writable()
        st_numpy = _safetensors()
        tensors: dict[str, npt.NDArray[Any]] = {}
        for snap in snapshots:
            values = snap.to_numpy()
            tensors[snap.path] = np.ascontiguousarray(values, dtype=NUMPY_DTYPES[snap.dtype])
        metadata = dict(self.metadata_items()) or None
        # The package writes by name: it replaces the (empty) temporary file.
        write_atomically(self.path, lambda _, tmp: st_numpy.save_file(tensors, tmp, metadata=metadata))
