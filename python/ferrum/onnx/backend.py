"""ferrum as an ONNX backend (``onnx.backend.base.Backend``), for ONNX's conformance runner.

Example:
    >>> import numpy as np
    >>> from onnx import TensorProto, helper
    >>> from ferrum.onnx.backend import FerrumBackend
    >>> node = helper.make_node("Relu", ["x"], ["y"])
    >>> graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    ...                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    >>> FerrumBackend.run_model(helper.make_model(graph), [np.array([-1.0, 2.0], np.float32)])[0].tolist()
    [0.0, 2.0]
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from ferrum._ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx.dtypes import compute_dtype, numpy_dtype
from ferrum.onnx.errors import OnnxError
from ferrum.onnx.model import OnnxModel, load
from ferrum.onnx.values import is_strings, map_tensors, to_strings

__all__ = ["FerrumBackend", "FerrumRep"]


class FerrumRep(BackendRep):
    """A prepared model: ``run(inputs)`` takes and returns NumPy arrays in the graph's declared types."""

    def __init__(self, model: OnnxModel) -> None:
        self.model = model

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Run the model on ``inputs`` and return its outputs as NumPy arrays.

        ``inputs`` is a sequence of arrays in the order of the graph's inputs
        (initializers excluded), a dict from input name to array, or a single array
        for a one-input graph; each is converted to the type ferrum computes it in
        (f32, f64, i64 or bool); an input of type ``tensor(string)`` is an array of
        ``str`` (dtype ``object`` or ``str``; ``bytes`` read as UTF-8) and stays one.
        An input of an ONNX sequence type is a list of
        arrays, one of an optional type its element or ``None``. The result is a
        tuple with one array per graph output (a list of arrays for a sequence,
        ``None`` for an empty optional), converted back to the output's declared
        element type (integers wrap as two's complement would; strings as an
        ``object`` array of ``str``). ``kwargs`` are
        accepted for the ``BackendRep`` contract and ignored. A missing input, or
        one whose shape or kind (Float, Int, Bool) does not match the graph's
        declaration, raises ``OnnxError``; a dict without an input's name raises
        ``KeyError``.
        """
        del kwargs
        program = self.model.program
        if isinstance(inputs, dict):
            arrays = [inputs[v.name] for v in program.inputs]
        elif isinstance(inputs, np.ndarray):
            arrays = [inputs]
        else:
            arrays = list(inputs)
        device = NdArray.device()
        declared = [(info.containers, info.elem_type) for info in program.inputs]
        # Extra inputs are converted as tensors, for forward to report the count.
        declared += [((), 0)] * (len(arrays) - len(declared))
        values = [
            _from_numpy(a, containers, elem_type, device)
            for a, (containers, elem_type) in zip(arrays, declared, strict=False)
        ]
        result = self.model.forward(*values)
        outs = result if isinstance(result, tuple) else (result,)
        return tuple(
            map_tensors(out, functools.partial(_to_numpy, elem_type=info.elem_type))
            for info, out in zip(program.outputs, outs, strict=True)
        )


def _from_numpy(value: Any, containers: tuple[str, ...], elem_type: int, device: Any) -> Any:
    """An input as ferrum values: a tensor (a string tensor for ``tensor(string)``), or for a sequence or
    optional input a list of tensors or None."""

    def tensor(array: Any) -> Any:
        if elem_type == onnx.TensorProto.STRING:
            try:
                return to_strings(array, "a string input")
            except ValueError as exc:
                raise OnnxError(str(exc)) from exc
        computed = compute_dtype(np.asarray(array))
        if is_strings(computed):
            declared = onnx.TensorProto.DataType.Name(elem_type) if elem_type else "a number type"
            raise OnnxError(f"a string (object) array for an input of ONNX type {declared}")
        return Tensor.from_numpy(computed, device)

    return map_tensors(value, tensor) if containers else tensor(value)


def _to_numpy(tensor: Any, elem_type: int) -> np.ndarray[Any, Any]:
    if is_strings(tensor):
        return tensor
    array = np.asarray(tensor.to_numpy())
    return _convert(array, numpy_dtype(elem_type)) if elem_type else array


def _convert(array: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    if array.dtype == dtype:
        return array
    if dtype.kind in "iuV" and array.dtype.kind in "iu":
        # ferrum computes integers in i64; the declared type wraps as the two's complement would.
        return array.astype(dtype, casting="unsafe")
    return array.astype(dtype)


class FerrumBackend(Backend):
    """ferrum's ONNX backend: CPU only, through ``ferrum.onnx.load``."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        """Whether ferrum can run ``model`` on ``device``: true on the CPU, whatever the model.

        Whether every op is supported is only known when the graph is read:
        ``prepare`` raises ``UnsupportedOpError`` naming the missing ops.
        ``kwargs`` are accepted for the ``Backend`` contract and ignored.
        """
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> FerrumRep:
        """Load ``model`` once for repeated runs: a ``FerrumRep`` whose ``run`` takes the inputs.

        ``model`` is an ``onnx.ModelProto``; it is validated and translated by
        ``ferrum.onnx.load`` onto the NdArray (CPU) device. A ``device`` other than
        the CPU raises ``OnnxError``, an op ferrum does not implement
        ``UnsupportedOpError`` (an ``OnnxError``), a malformed graph ``OnnxError``.
        ``kwargs`` are accepted for the ``Backend`` contract and ignored.
        """
        if not cls.supports_device(device):
            raise OnnxError(f"ferrum runs ONNX models on the CPU, found device {device!r}")
        return FerrumRep(load(model, NdArray.device()))

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        """Prepare ``model`` and run it once on ``inputs``: ``prepare(model, device).run(inputs)``.

        See ``FerrumRep.run`` for the forms ``inputs`` may take and the returned
        tuple of NumPy arrays, and ``prepare`` for the errors. ``kwargs`` are
        accepted for the ``Backend`` contract and ignored.
        """
        return cls.prepare(model, device).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[Any, Any]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Not supported: always raises ``OnnxError``.

        ``onnx.backend.base.Backend`` lets a backend run a lone ``NodeProto``;
        ferrum runs whole models only (the node test suite ships each node as a
        model). Wrap the node in a graph with ``onnx.helper.make_graph`` and
        ``make_model``, then call ``run_model``.
        """
        raise OnnxError("ferrum runs whole models: wrap the node in a graph (onnx.helper.make_graph)")

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Whether ferrum runs on ``device``: only on the CPU.

        ``device`` is an ONNX device string (``"CPU"``, ``"CUDA:0"``...); a string
        ``onnx.backend.base.Device`` cannot parse raises its error.
        """
        return bool(Device(device).type == DeviceType.CPU)


prepare = FerrumBackend.prepare
run_model = FerrumBackend.run_model
supports_device = FerrumBackend.supports_device
