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

__all__ = ["FerrumBackend", "FerrumRep"]


class FerrumRep(BackendRep):
    """A prepared model: ``run(inputs)`` takes and returns NumPy arrays in the graph's declared types."""

    def __init__(self, model: OnnxModel) -> None:
        self.model = model

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        del kwargs
        program = self.model.program
        if isinstance(inputs, dict):
            arrays = [inputs[v.name] for v in program.inputs]
        elif isinstance(inputs, np.ndarray):
            arrays = [inputs]
        else:
            arrays = list(inputs)
        device = NdArray.device()
        tensors = [Tensor.from_numpy(compute_dtype(np.asarray(a)), device) for a in arrays]
        result = self.model.forward(*tensors)
        outs = result if isinstance(result, tuple) else (result,)
        converted = []
        for info, out in zip(program.outputs, outs, strict=True):
            array = np.asarray(out.to_numpy())
            if info.elem_type:
                array = _convert(array, numpy_dtype(info.elem_type))
            converted.append(array)
        return tuple(converted)


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
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> FerrumRep:
        if not cls.supports_device(device):
            raise OnnxError(f"ferrum runs ONNX models on the CPU, found device {device!r}")
        return FerrumRep(load(model, NdArray.device()))

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
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
        raise OnnxError("ferrum runs whole models: wrap the node in a graph (onnx.helper.make_graph)")

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return bool(Device(device).type == DeviceType.CPU)


prepare = FerrumBackend.prepare
run_model = FerrumBackend.run_model
supports_device = FerrumBackend.supports_device
