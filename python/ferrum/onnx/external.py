"""External tensor data: the one place an ONNX model's ``location`` entries become file reads.

A tensor stored outside the ``.onnx`` file names its data file in its own
``external_data`` entries: that name is the file's word, so it is untrusted.
Every tensor the model holds (initializers, sparse initializers, ``Constant``
values and other attribute tensors, sparse tensors, the bodies of If, Loop
and Scan, model-local functions, training graphs) is resolved here, before
anything else reads the model, against one folder:

- the model file's own folder when the model is read from a path;
- ``base_dir`` when the caller names one (required for bytes or a ``ModelProto``:
  such a model has no folder of its own, and the current directory is never one).

A location must be a plain relative path inside that folder: absolute paths,
drive letters, ``..``, symbolic links on the way, hard-linked files, and
anything that is not a regular file (directories, FIFOs, devices) are
refused, as are offsets and lengths that do not fit the file or the tensor's
own size. After this, every tensor holds its bytes inline, so no later step
(``numpy_helper.to_array``, shape inference) can be led to read a file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from ferrum.onnx.errors import OnnxFileError

__all__ = ["model_tensors", "resolve_external_data", "tensor_array"]

_EXTERNAL = onnx.TensorProto.EXTERNAL

# Types packed below a byte per element (2 or 4 bits): their raw size is rounded up to whole bytes.
_PACKED_BITS = {
    getattr(onnx.TensorProto, name): bits
    for name, bits in (("INT4", 4), ("UINT4", 4), ("FLOAT4E2M1", 4), ("INT2", 2), ("UINT2", 2))
    if hasattr(onnx.TensorProto, name)
}


def model_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every ``TensorProto`` a model holds, subgraphs and functions included."""
    graphs: list[onnx.GraphProto] = [model.graph]
    for info in model.training_info:
        graphs += [info.initialization, info.algorithm]
    node_lists = [list(f.node) for f in model.functions]
    # A stack, not recursion: nesting depth is the file's choice.
    while graphs or node_lists:
        if graphs:
            g = graphs.pop()
            yield from g.initializer
            for sparse in g.sparse_initializer:
                yield sparse.values
                yield sparse.indices
            node_lists.append(list(g.node))
            continue
        for node in node_lists.pop():
            for attr in node.attribute:
                if attr.HasField("t"):
                    yield attr.t
                yield from attr.tensors
                for sparse in (
                    *([attr.sparse_tensor] if attr.HasField("sparse_tensor") else []),
                    *attr.sparse_tensors,
                ):
                    yield sparse.values
                    yield sparse.indices
                if attr.HasField("g"):
                    graphs.append(attr.g)
                graphs.extend(attr.graphs)


def resolve_external_data(
    model: onnx.ModelProto, base_dir: str | os.PathLike[str] | None, where: str, *, owned: bool
) -> onnx.ModelProto:
    """``model`` with every external tensor's bytes read in from ``base_dir``.

    Returns ``model`` itself when no tensor is external; otherwise the model
    with the data inline (a copy unless ``owned``: the caller's ``ModelProto``
    is never changed). Raises ``OnnxFileError`` naming the tensor, its
    location and the reason when a location is refused or cannot be read.
    """
    external = [t for t in model_tensors(model) if t.data_location == _EXTERNAL]
    if not external:
        return model
    if base_dir is None:
        first = external[0]
        raise OnnxFileError(
            f"{where}: tensor {first.name!r} keeps its data in an external file "
            f"({_entries(first).get('location', '')!r}); a model given as bytes or a ModelProto has no "
            "folder to read it from: pass base_dir= naming the folder that holds its data"
        )
    try:
        folder = os.path.realpath(os.fspath(base_dir))
    except (OSError, ValueError) as exc:
        raise OnnxFileError(f"{where}: base_dir {base_dir!r} cannot be used: {exc}") from exc
    if not os.path.isdir(folder):
        raise OnnxFileError(f"{where}: base_dir {os.fspath(base_dir)!r} is not a folder")
    if not owned:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        model = copy
        # the copy's own tensors, in the same walk order
        external = [t for t in model_tensors(model) if t.data_location == _EXTERNAL]
    for tensor in external:
        _read_into(tensor, folder, where)
    return model


def tensor_array(tensor: onnx.TensorProto, where: str) -> np.ndarray[Any, Any]:
    """A model tensor as a NumPy array; its data must be inline by now.

    Every model goes through ``resolve_external_data`` first; refusing here
    too keeps ``numpy_helper.to_array`` from ever resolving a location against
    the current directory, should a new path into the model skip that step.
    """
    if tensor.data_location == _EXTERNAL:
        raise OnnxFileError(
            f"{where}: tensor {tensor.name!r} still refers to external data "
            f"({_entries(tensor).get('location', '')!r}); it is read only through the model's folder "
            "or base_dir"
        )
    return numpy_helper.to_array(tensor)


def _entries(tensor: onnx.TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in tensor.external_data}


def _refuse(where: str, tensor: onnx.TensorProto, location: str, why: str) -> OnnxFileError:
    return OnnxFileError(f"{where}: tensor {tensor.name!r}: external data {location!r} refused: {why}")


def _checked_relative(location: str) -> str | None:
    """Why ``location`` is not a plain relative path inside the folder, or ``None`` when it is."""
    if not location:
        return "the location is empty"
    if "\0" in location:
        return "the location contains a NUL byte"
    if PurePosixPath(location).is_absolute() or PureWindowsPath(location).is_absolute():
        return "absolute paths are not allowed; a location is relative to the model's folder"
    win = PureWindowsPath(location)
    if win.drive or win.root:
        return "drive letters and rooted paths are not allowed; a location is relative to the model's folder"
    if ".." in PurePosixPath(location).parts or ".." in win.parts:
        return "'..' is not allowed: a location must stay inside the model's folder"
    return None


def _nonnegative(
    value: str | None, what: str, where: str, tensor: onnx.TensorProto, location: str
) -> int | None:
    if value is None:
        return None
    try:
        n = int(value)
    except ValueError:
        raise _refuse(where, tensor, location, f"{what} {value!r} is not an integer") from None
    if n < 0:
        raise _refuse(where, tensor, location, f"{what} {n} is negative")
    return n


def _expected_bytes(tensor: onnx.TensorProto, where: str, location: str) -> int:
    """The raw size the tensor's type and dims call for (Python ints: no overflow, no allocation)."""
    if tensor.data_type in (onnx.TensorProto.UNDEFINED, onnx.TensorProto.STRING):
        kind = onnx.TensorProto.DataType.Name(tensor.data_type)
        raise _refuse(where, tensor, location, f"a {kind} tensor cannot be stored as external raw data")
    numel = 1
    for d in tensor.dims:
        if d < 0:
            raise _refuse(where, tensor, location, f"dims {list(tensor.dims)} have a negative size")
        numel *= d
    bits = _PACKED_BITS.get(tensor.data_type)
    if bits is not None:
        return (numel * bits + 7) // 8
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except (KeyError, TypeError, ValueError) as exc:
        raise _refuse(where, tensor, location, f"unknown data type {tensor.data_type}") from exc
    return numel * itemsize


def _read_into(tensor: onnx.TensorProto, folder: str, where: str) -> None:
    entries = _entries(tensor)
    location = entries.get("location", "")
    why = _checked_relative(location)
    if why is not None:
        raise _refuse(where, tensor, location, why)
    path = os.path.normpath(os.path.join(folder, location))
    if os.path.commonpath([folder, path]) != folder:
        raise _refuse(where, tensor, location, "it resolves outside the model's folder")
    # realpath differs from the plain joined path exactly when a symbolic link lies on the way.
    if os.path.realpath(path) != path:
        raise _refuse(where, tensor, location, "symbolic links are not followed")
    offset = _nonnegative(entries.get("offset"), "offset", where, tensor, location) or 0
    length = _nonnegative(entries.get("length"), "length", where, tensor, location)
    expected = _expected_bytes(tensor, where, location)
    if length is not None and length != expected:
        raise _refuse(
            where,
            tensor,
            location,
            f"length {length} does not match the tensor's {expected} bytes "
            f"({onnx.TensorProto.DataType.Name(tensor.data_type)} {list(tensor.dims)})",
        )
    flags = (
        os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _refuse(where, tensor, location, exc.strerror or str(exc)) from exc
    try:
        # Checked on the open descriptor, so the file cannot be swapped between check and read.
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(where, tensor, location, "not a regular file")
        if info.st_nlink > 1:
            raise _refuse(
                where,
                tensor,
                location,
                "the file has hard links elsewhere, which could lead outside the folder",
            )
        if offset + expected > info.st_size:
            raise _refuse(
                where,
                tensor,
                location,
                f"the tensor's {expected} bytes at offset {offset} run past the file's end "
                f"({info.st_size} bytes)",
            )
        data = _pread_all(fd, expected, offset)
    except OSError as exc:
        raise _refuse(where, tensor, location, exc.strerror or str(exc)) from exc
    finally:
        os.close(fd)
    if len(data) != expected:
        raise _refuse(where, tensor, location, f"read {len(data)} of {expected} bytes (the file shrank)")
    tensor.raw_data = data
    tensor.data_location = onnx.TensorProto.DEFAULT
    del tensor.external_data[:]


def _pread_all(fd: int, size: int, offset: int) -> bytes:
    parts: list[bytes] = []
    done = 0
    while done < size:
        if hasattr(os, "pread"):
            chunk = os.pread(fd, min(size - done, 1 << 26), offset + done)
        else:  # Windows: no pread
            os.lseek(fd, offset + done, os.SEEK_SET)
            chunk = os.read(fd, min(size - done, 1 << 26))
        if not chunk:
            break
        parts.append(chunk)
        done += len(chunk)
    return b"".join(parts)
