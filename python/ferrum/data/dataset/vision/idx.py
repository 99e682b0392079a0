"""Reading IDX files, the array format of the MNIST distribution (optionally gzipped)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["read_idx"]

# IDX type codes; all data is big-endian.
_DTYPES: dict[int, np.dtype[Any]] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def read_idx(path: Path) -> np.ndarray[Any, np.dtype[Any]]:
    """The array stored in IDX file ``path`` (gunzipped first when the name ends in ``.gz``).

    Raises ``ValueError`` naming the file when the magic number, the type code
    or the data size is wrong.

    Example:
        >>> import pathlib, tempfile
        >>> from ferrum.data.dataset.vision.idx import read_idx
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny-idx1-ubyte"
        >>> _ = path.write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 8, 9]))
        >>> read_idx(path).tolist()
        [7, 8, 9]
    """
    data = _read_bytes(path)
    if len(data) < 4:
        raise ValueError(f"{path}: IDX file too short for its magic number ({len(data)} bytes)")
    if data[0] != 0 or data[1] != 0:
        raise ValueError(
            f"{path}: bad IDX magic number 0x{data[:4].hex()}: "
            "expected two zero bytes, a type code and a rank"
        )
    code, ndim = data[2], data[3]
    if code not in _DTYPES:
        known = ", ".join(f"0x{c:02x}" for c in _DTYPES)
        raise ValueError(f"{path}: unknown IDX type code 0x{code:02x} (expected one of {known})")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(
            f"{path}: IDX header declares {ndim} dimensions but the file has only {len(data)} bytes"
        )
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    dtype = _DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    found = len(data) - header
    if found != expected:
        raise ValueError(f"{path}: IDX shape {shape} needs {expected} data bytes, found {found}")
    return np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)


def _read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise FileNotFoundError(f"IDX file not found: {path}")
    if path.name.endswith(".gz"):
        try:
            with gzip.open(path, "rb") as handle:
                return handle.read()
        except (OSError, EOFError, zlib.error) as err:
            raise ValueError(f"{path}: not a valid gzip file ({err})") from None
    return path.read_bytes()
