"""``OnnxModel``: an imported graph as a ferrum ``Module`` (Params, records, ``valid()``, autodiff).

``load`` builds one subclass per graph whose dataclass fields are the graph's
layers (Conv2d, Linear, BatchNorm, ...), trainable initializers (``Param``)
and other float constants (``RunningState``, saved but not trained), named
after the ONNX names. Record keys are therefore the same as those of the
module ``python -m ferrum.onnx`` generates for the graph.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar, cast

import onnx

from ferrum._ferrum import Bool, Device, Float, Int, Tensor
from ferrum.backend import NdArray
from ferrum.module import Module, Param, RunningState
from ferrum.onnx.dtypes import compute_kind, numpy_dtype
from ferrum.onnx.errors import OnnxError
from ferrum.onnx.execute import run_steps
from ferrum.onnx.fuse import Schedule, run_scheduled, schedule
from ferrum.onnx.graph import parse_graph, read_model
from ferrum.onnx.plan import CACHE_SIZE, compile_plan, plan_cache, signature
from ferrum.onnx.translate import Program, translate
from ferrum.onnx.values import Value, check_value, constant_value, is_strings, tensors_in

__all__ = ["OnnxModel", "load", "load_program"]


class OnnxModel(Module[Any]):
    """An ONNX graph run with ferrum ops; made by ``ferrum.onnx.load``.

    ``forward(*inputs)`` takes one value per graph input, in the graph's
    order, and returns one value (one graph output) or a tuple of them. A
    value is a tensor; for an input or output of an ONNX sequence type, a
    list of tensors; for an optional type, its element, or ``None`` when it
    is empty; for a ``tensor(string)`` one, a NumPy array of ``str`` (dtype
    ``object``; see ``ferrum.onnx.values``).

    Example:
        >>> import numpy as np
        >>> from onnx import TensorProto, helper, numpy_helper
        >>> from ferrum import Tensor, onnx as fonnx
        >>> from ferrum.backend import NdArray
        >>> w = numpy_helper.from_array(np.ones((3, 2), np.float32), "w")
        >>> graph = helper.make_graph(
        ...     [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")], "g",
        ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [w])
        >>> model = fonnx.load(helper.make_model(graph), NdArray.device())
        >>> model.forward(Tensor.ones((1, 3), NdArray.device())).to_data().to_list()
        [[3.0, 3.0]]
    """

    program: ClassVar[Program]
    schedule: ClassVar[Schedule]
    use_plan: ClassVar[bool] = True
    """Whether ``forward`` on a device without autodiff runs compiled plans (``ferrum.onnx.plan``);
    ``load(..., plan=False)`` turns them off, to debug a graph step by step."""

    def forward(self, *inputs: Value) -> Any:
        """Run the graph on ``inputs`` (one per graph input); a value, or a tuple for several outputs.

        On a device without autodiff the graph runs as a plan compiled for the inputs' shapes and
        dtypes (see ``ferrum.onnx.plan``); on ``Autodiff``, step by step, recording gradients.
        """
        program = self.program
        key = signature(inputs) if self.use_plan and not program.strings else None
        if key is not None and len(inputs) == len(program.inputs):
            plans = plan_cache(self)
            compiled = plans.get(key)
            if compiled is not None:
                tensors = cast("tuple[Tensor[Any, Any, Any], ...]", inputs)  # signature() checked them
                found = compiled.run(self, tensors, tensors[0].device())
                return found[0] if len(found) == 1 else found
            if key not in plans:
                env, device = self._env(inputs)
                compiled, outs = compile_plan(self, env, device)
                while len(plans) >= CACHE_SIZE:
                    del plans[next(iter(plans))]
                plans[key] = compiled
                return outs[0] if len(outs) == 1 else outs
        env, device = self._env(inputs)
        if device.is_autodiff:
            run_steps(program, env, device, self)
        else:
            # Inference: BatchNorm on its running statistics, so it fuses into the convolution before it.
            run_scheduled(program, self.schedule, env, device, self)
        # A string output is a NumPy array, which the caller may change: a copy, so no constant changes.
        outs = tuple(_copied(env[o.name]) for o in program.outputs)
        return outs[0] if len(outs) == 1 else outs

    def _env(self, inputs: tuple[Value, ...]) -> tuple[dict[str, Value], Device[Any]]:
        """The checked inputs, the parameters and the constants by value name, and the run's device."""
        program = self.program
        if len(inputs) != len(program.inputs):
            names = ", ".join(v.name for v in program.inputs)
            raise OnnxError(
                f"{program.source}: forward expected {len(program.inputs)} inputs ({names}), "
                f"found {len(inputs)}"
            )
        device = self._device(inputs)
        env: dict[str, Value] = {}
        for info, x in zip(program.inputs, inputs, strict=True):
            strings = info.elem_type == onnx.TensorProto.STRING
            value = check_value(x, info.containers, f"{program.source}: input {info.name!r}", strings=strings)
            if is_strings(value):
                _check_shape(program.source, info.name, info.shape, tuple(value.shape))
            for t in tensors_in(value):
                _check_shape(program.source, info.name, info.shape, tuple(t.dims()))
                _check_kind(program.source, info.name, info.elem_type, t)
            env[info.name] = value
        for name, field in program.fields.items():
            holder = getattr(self, field)
            env[name] = holder.val() if isinstance(holder, Param) else holder.value()
        for name, array in (*program.constants.items(), *program.output_constants.items()):
            env[name] = constant_value(array, device)
        return env, device

    def _device(self, inputs: tuple[Value, ...]) -> Device[Any]:
        for x in inputs:  # the first ferrum tensor's (a sequence's tensors'; string tensors have none)
            held = tensors_in(x)
            if held and isinstance(held[0], Tensor):  # not checked yet: any object may come
                return held[0].device()
        devices = self.devices()
        return devices[0] if devices else NdArray.device()


def _copied(value: Value) -> Value:
    return value.copy() if is_strings(value) else value


def _check_shape(source: str, name: str, declared: tuple[Any, ...] | None, found: tuple[int, ...]) -> None:
    if declared is None:
        return
    fixed = [d if isinstance(d, int) and d > 0 else None for d in declared]
    if len(fixed) != len(found) or any(d is not None and d != f for d, f in zip(fixed, found, strict=False)):
        shown = [d if d is not None else "?" for d in fixed]
        raise OnnxError(f"{source}: input {name!r} expected shape {shown}, found {list(found)}")


def _check_kind(source: str, name: str, elem_type: int, x: Tensor[Any, Any, Any]) -> None:
    if not elem_type:
        return
    kind = compute_kind(numpy_dtype(elem_type))
    expected = {"f": Float, "i": Int, "b": Bool}.get(kind)
    if expected is not None and x.kind is not expected:
        raise OnnxError(
            f"{source}: input {name!r} expected a {expected.__name__} tensor "
            f"(ONNX {onnx.TensorProto.DataType.Name(elem_type)}), found {x.kind.__name__}"
        )


def load_program(
    source: str | os.PathLike[str] | bytes | onnx.ModelProto,
    device: Device[Any],
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> Program:
    """Read, validate and translate an ONNX model (``load`` without building the module)."""
    model, where = read_model(source, base_dir)
    return translate(parse_graph(model, where), device)


def build(program: Program, device: Device[Any], *, plan: bool = True) -> OnnxModel:
    """The ``OnnxModel`` subclass of ``program``, its parameters on ``device`` (``plan``: see ``load``)."""
    values: dict[str, Any] = {}
    for field, layer in program.layers.items():
        values[field] = layer
    for field, array in program.params.items():
        values[field] = Param(Tensor.from_numpy(array, device))
    for field, array in program.buffers.items():
        values[field] = RunningState(Tensor.from_numpy(array, device))
    annotations = dict.fromkeys(values, "Any")
    name = "OnnxModel_" + "".join(c if c.isalnum() else "_" for c in (program.name or "graph"))
    cls = type(
        name,
        (OnnxModel,),
        {
            "__annotations__": annotations,
            "program": program,
            "schedule": schedule(program),
            "use_plan": plan,
            "__module__": __name__,
        },
    )
    return cls(**values)  # type: ignore[no-any-return]


def load(
    source: str | os.PathLike[str] | bytes | onnx.ModelProto,
    device: Device[Any],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    plan: bool = True,
) -> OnnxModel:
    """Import an ONNX model as a ferrum module on ``device``.

    ``source`` is a path, the file's bytes or an ``onnx.ModelProto``. The file
    is validated (readable, opset 7 to the newest ``onnx`` knows, every op
    supported, acyclic) before any tensor is built; errors are ``OnnxError``
    naming the file, node, op and opset.

    Tensors saved as external data (``onnx.save(..., save_as_external_data=True)``)
    are read from the model file's own folder, or from ``base_dir`` when given;
    a model given as bytes or a ``ModelProto`` with external data needs
    ``base_dir``. A location must be a plain relative path to a regular file
    inside that folder (no ``..``, absolute path, symbolic or hard link): the
    current directory is never searched. ``OnnxFileError`` names the tensor
    and the location refused.

    On a device without autodiff, ``forward`` runs the graph as a plan the
    engine executes, compiled at the first call with each input signature
    (``ferrum.onnx.plan``); ``plan=False`` runs it step by step from Python,
    as on ``Autodiff`` (to debug a graph, or compare the two).

    Example:
        >>> model = ferrum.onnx.load("resnet.onnx", device)  # doctest: +SKIP
        >>> model = ferrum.onnx.load(data, device, base_dir="weights/")  # doctest: +SKIP
    """
    return build(load_program(source, device, base_dir=base_dir), device, plan=plan)
