"""Generate a typed ferrum module from an ONNX model (Burn's burn-import ``ModelGen``, in Python).

``generate(source, out_dir)`` translates the graph with the same translation
``ferrum.onnx.load`` runs (``translate.py``) and writes

- ``<name>.py``: a ``Module[B]`` class whose fields are the graph's layers
  (``Conv2d``, ``Linear``, ``BatchNorm``, ...), parameters and buffers, named
  after the ONNX nodes and initializers, with a ``forward`` of ferrum calls
  (the layers' ``forward`` and the op functions of ``ferrum.onnx.ops``), plus
  ``init(device)`` (the module with fresh weights) and ``load(path, device)``
  (the module with the weights file);
- ``<name>.mpk``: the weights, a ferrum record (Burn's named msgpack).

``mypy --strict`` accepts the generated file; edit it freely.
"""

from __future__ import annotations

import dataclasses
import keyword
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from ferrum.backend import NdArray
from ferrum.module import Module
from ferrum.nn import BatchNorm, Linear
from ferrum.nn.conv import Conv1d, Conv2d
from ferrum.onnx.dtypes import compute_kind, numpy_dtype
from ferrum.onnx.errors import OnnxError
from ferrum.onnx.graph import ValueInfo
from ferrum.onnx.model import build, load_program
from ferrum.onnx.program import Subgraph
from ferrum.onnx.translate import Program, Step, unique
from ferrum.onnx.values import CONTAINER_OPS
from ferrum.record import NamedMpkFileRecorder

__all__ = ["GeneratedFiles", "generate", "render"]

_MAX_LITERAL = 65536
"""Int/Bool constants are written into the source; larger ones than this are refused."""


@dataclasses.dataclass(frozen=True)
class GeneratedFiles:
    """The files ``generate`` wrote."""

    source: Path
    weights: Path
    class_name: str


def _class_name(name: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", name) or ["Model"]
    out = "".join(w[:1].upper() + w[1:] for w in words)
    return f"Model{out}" if out[0].isdigit() else out


def _module_name(name: str) -> str:
    out = re.sub(r"\W+", "_", name).strip("_").lower() or "model"
    return f"model_{out}" if out[0].isdigit() or keyword.iskeyword(out) else out


def _literal(value: Any) -> str:
    """Python source for an op's keyword argument."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, float):
        return f'float("{value}")' if math.isinf(value) or math.isnan(value) else repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, np.ndarray):
        return _array(value)
    raise OnnxError(f"code generation: cannot write {type(value).__name__} value {value!r} as a literal")


def _array(value: np.ndarray[Any, Any]) -> str:
    if value.size > _MAX_LITERAL:
        raise OnnxError(
            f"code generation: a constant of {value.size} elements is too large to write into the source "
            f"(at most {_MAX_LITERAL})"
        )
    if value.dtype.kind == "f":
        items = [_literal(float(v)) for v in value.reshape(-1)]
    elif value.dtype.kind == "b":
        items = [repr(bool(v)) for v in value.reshape(-1)]
    else:
        items = [repr(int(v)) for v in value.reshape(-1)]
    return f"np.array([{', '.join(items)}], dtype=np.{value.dtype.name}).reshape({tuple(value.shape)!r})"


def _rank(n: int | None) -> str:
    return f"D{n}" if n is not None and 1 <= n <= 6 else "Any"


def _tensor_type(info: ValueInfo) -> str:
    rank = _rank(len(info.shape) if info.shape is not None else None)
    if not info.elem_type or compute_kind(numpy_dtype(info.elem_type)) == "f":
        return f"Tensor[B, {rank}]"
    kind = "Bool" if info.elem_type == onnx.TensorProto.BOOL else "Int"
    return f"Tensor[B, {rank}, {kind}]"


def _layer_type(layer: Module[Any]) -> str:
    return f"{type(layer).__name__}[B]"


def _with(defaults: dict[str, tuple[Any, Any]]) -> str:
    """``.with_<field>(value)`` builder calls for the settings that differ from the config's default."""
    return "".join(
        f".with_{name}({value!r})" for name, (value, default) in defaults.items() if value != default
    )


def _layer_init(layer: Module[Any]) -> str:
    """A config expression for a layer of ``layer``'s shape and settings (weights come from the record)."""
    if isinstance(layer, Conv2d):
        c_out, c_in_group = layer.weight.shape()[:2]
        settings = {
            "stride": (layer.stride, (1, 1)),
            "dilation": (layer.dilation, (1, 1)),
            "groups": (layer.groups, 1),
            "bias": (layer.bias is not None, True),
        }
        pad = (
            f".with_padding(PaddingConfig2d.Explicit{layer.padding.padding!r})"
            if any(layer.padding.padding)
            else ""
        )
        channels = (c_in_group * layer.groups, c_out)
        return f"Conv2dConfig({channels!r}, {layer.kernel_size!r}){_with(settings)}{pad}.init(device)"
    if isinstance(layer, Conv1d):
        c_out, c_in_group = layer.weight.shape()[:2]
        settings = {
            "stride": (layer.stride, 1),
            "dilation": (layer.dilation, 1),
            "groups": (layer.groups, 1),
            "bias": (layer.bias is not None, True),
        }
        pad = (
            f".with_padding(PaddingConfig1d.Explicit({layer.padding.padding}))"
            if layer.padding.padding
            else ""
        )
        head = f"Conv1dConfig({c_in_group * layer.groups}, {c_out}, {layer.kernel_size})"
        return f"{head}{_with(settings)}{pad}.init(device)"
    if isinstance(layer, Linear):
        d_in, d_out = layer.weight.shape()
        return f"LinearConfig({d_in}, {d_out}){_with({'bias': (layer.bias is not None, True)})}.init(device)"
    if isinstance(layer, BatchNorm):
        n = layer.gamma.shape()[0]
        settings = {"epsilon": (layer.epsilon, 1e-5), "momentum": (layer.momentum, 0.1)}
        return f"BatchNormConfig({n}){_with(settings)}.init(device)"
    raise OnnxError(f"code generation: no config for layer {type(layer).__name__}")


_LAYER_IMPORTS = {
    "Conv2d": ("ferrum.nn.conv", ["Conv2d", "Conv2dConfig"], ("ferrum.nn.padding", "PaddingConfig2d")),
    "Conv1d": ("ferrum.nn.conv", ["Conv1d", "Conv1dConfig"], ("ferrum.nn.padding", "PaddingConfig1d")),
    "Linear": ("ferrum.nn", ["Linear", "LinearConfig"], None),
    "BatchNorm": ("ferrum.nn", ["BatchNorm", "BatchNormConfig"], None),
}


class _Names:
    """Python names for ONNX values: inputs keep their (sanitized) names, the rest are numbered."""

    def __init__(self, program: Program) -> None:
        self.map: dict[str, str] = {}
        taken = set(program.layers) | set(program.params) | set(program.buffers) | {"self", "device", "np"}
        for info in program.inputs:
            self.map[info.name] = unique(_module_name(info.name), taken)
        self.count = 0
        self.taken = taken

    def of(self, value: str) -> str:
        if value not in self.map:
            self.count += 1
            self.map[value] = unique(f"x{self.count}", self.taken)
        return self.map[value]


def _returns_tuple(step: Step) -> bool:
    if step.layer is not None:
        return False  # a layer's forward returns one tensor
    annotation = str(step.fn.__annotations__.get("return", ""))
    return annotation.startswith("tuple")


def _refuse_containers(program: Program) -> None:
    """``OnnxError`` for a graph with sequence or optional values, which the generator does not write."""
    for info in (*program.inputs, *program.outputs):
        if info.containers:
            raise OnnxError(
                f"code generation: graph {'input' if info in program.inputs else 'output'} {info.name!r} is "
                f"an ONNX {'/'.join(info.containers)} value, which the generator does not write yet; "
                "ferrum.onnx.load runs it"
            )
    for step in program.steps:
        if step.op_type in CONTAINER_OPS:
            raise OnnxError(
                f"code generation: sequence/optional op {step.op_type} (node {step.node!r}) is not written "
                "by the generator yet; ferrum.onnx.load runs it"
            )


def _refuse_strings(program: Program) -> None:
    """``OnnxError`` naming a ``tensor(string)`` value: generated modules compute on ferrum tensors only."""
    if program.strings:
        shown = ", ".join(repr(n) for n in program.strings[:5])
        one = len(program.strings) == 1
        what = f"value {shown} is an ONNX string tensor" if one else f"values {shown} are ONNX string tensors"
        raise OnnxError(
            f"code generation: {what}, which the generator does not write; ferrum.onnx.load runs it"
        )


def _forward(program: Program, names: _Names, constants: dict[str, str]) -> Iterator[str]:
    _refuse_containers(program)
    _refuse_strings(program)
    inputs = ", ".join(f"{names.of(i.name)}: {_tensor_type(i)}" for i in program.inputs)
    outs = [_tensor_type(o) for o in program.outputs]
    ret = outs[0] if len(outs) == 1 else f"tuple[{', '.join(outs)}]"
    yield f"    def forward(self, {inputs}) -> {ret}:"
    yield f'        """Run the graph ({len(program.steps)} steps)."""'
    device_source = f"{names.of(program.inputs[0].name)}.device()" if program.inputs else "self.devices()[0]"
    if program.constants or program.output_constants or any(s.device for s in program.steps):
        yield f"        device = {device_source}"
    for value, field in program.fields.items():
        getter = "val" if field in program.params else "value"
        names.map[value] = f"self.{field}.{getter}()"
    for value, const in constants.items():
        names.map[value] = f"Tensor.from_numpy({const}, device)"
    for step in program.steps:
        if any(isinstance(v, Subgraph) for v in step.kwargs.values()):
            raise OnnxError(
                f"code generation: control-flow op {step.op_type} (node {step.node!r}) is not written by the "
                "generator yet; ferrum.onnx.load runs it"
            )
        label = f"  # {step.op_type} {step.node!r}" if step.node else f"  # {step.op_type}"
        args = [names.of(n) if n is not None else "None" for n in step.inputs]
        if step.layer is not None:
            call = f"self.{step.layer}.forward({', '.join(args)})"
        else:
            family = step.fn.__module__.rsplit(".", 1)[-1]
            kwargs = [f"{k}={_literal(v)}" for k, v in step.kwargs.items()]
            kwargs += [f"{k}={names.of(v)}" for k, v in step.tensor_kwargs.items()]
            if step.device:
                kwargs.append("device=device")
            call = f"ops.{family}.{step.fn.__name__}({', '.join(args + kwargs)})"
        if _returns_tuple(step):
            result = unique("r", names.taken)
            yield f"        {result} = {call}{label}"
            for i, out in enumerate(step.outputs):
                if out:
                    yield f"        {names.of(out)} = {result}[{i}]"
        else:
            yield f"        {names.of(step.outputs[0])} = {call}{label}"
    results = [names.of(o.name) for o in program.outputs]
    yield f"        return {results[0] if len(results) == 1 else '(' + ', '.join(results) + ')'}"


def render(program: Program, class_name: str, weights_name: str) -> str:
    """The generated module's source for a translated graph."""
    names = _Names(program)
    constants = {value: f"_C{i}" for i, value in enumerate([*program.constants, *program.output_constants])}
    arrays = {**program.constants, **program.output_constants}
    forward = list(_forward(program, names, constants))
    layer_kinds = sorted({type(layer).__name__ for layer in program.layers.values()})
    imports: dict[str, set[str]] = {"ferrum": {"Device", "Tensor"}, "ferrum.backend": {"Backend"}}
    imports["ferrum.module"] = {"Module"} | ({"Param"} if program.params else set())
    if program.buffers:
        imports["ferrum.module"].add("RunningState")
    imports["ferrum.record"] = {"NamedMpkFileRecorder"}
    for kind in layer_kinds:
        module, items, extra = _LAYER_IMPORTS[kind]
        imports.setdefault(module, set()).update(items)
        if extra:
            imports.setdefault(extra[0], set()).add(extra[1])
    ranks = {f"D{n}" for n in range(1, 7)}
    body = "\n".join(forward)
    used_ranks = sorted(r for r in ranks if re.search(rf"\b{r}\b", body))
    fields = []
    for field, array in program.params.items():
        fields.append((field, f"Param[Tensor[B, {_rank(array.ndim)}]]", array))
    for field, array in program.buffers.items():
        fields.append((field, f"RunningState[Tensor[B, {_rank(array.ndim)}]]", array))
    used_ranks = sorted(set(used_ranks) | {t.split(", ")[1].rstrip("]") for _, t, _ in fields} & ranks)
    imports["ferrum"].update(used_ranks)
    if re.search(r"\bInt\b", body):
        imports["ferrum"].add("Int")
    if re.search(r"\bBool\b", body):
        imports["ferrum"].add("Bool")
    uses_any = "Any" in body or any("Any" in t for _, t, _ in fields)
    lines = [
        f'"""{class_name}: generated by ferrum.onnx from {_in_docstring(Path(program.source).name)}, '
        f"opset {program.opset}.",
        "",
        f"Load it with ``load(path, device)`` ({weights_name} holds the weights) or build fresh weights with",
        "``init(device)``. Generated code: edit it as you like.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from pathlib import Path",
        f"from typing import {'Any, ' if uses_any else ''}TypeVar",
        "",
        *(["import numpy as np", ""] if constants or "np." in body else []),
    ]
    for module in sorted(imports):
        lines.append(f"from {module} import {', '.join(sorted(imports[module]))}")
    if any(s.layer is None for s in program.steps):
        lines.append("from ferrum.onnx import ops")
    lines += ["", 'B = TypeVar("B", bound=Backend)']
    if constants:
        lines.append("")
    for value, const in constants.items():
        lines.append(f"{const} = {_array(arrays[value])}  # {value!r}")
    lines += [
        "",
        "",
        f"class {class_name}(Module[B]):",
        f'    """The ONNX graph {_in_docstring(program.name)} as a ferrum module."""',
        "",
    ]
    for field, layer in program.layers.items():
        lines.append(f"    {field}: {_layer_type(layer)}")
    for field, annotation, _ in fields:
        lines.append(f"    {field}: {annotation}")
    lines += ["", *forward, "", ""]
    lines += [
        f"def init(device: Device[B]) -> {class_name}[B]:",
        '    """The module with freshly initialized weights (the shapes of the ONNX graph\'s)."""',
        f"    return {class_name}(",
    ]
    for field, layer in program.layers.items():
        lines.append(f"        {field}={_layer_init(layer)},")
    for field, annotation, array in fields:
        holder = annotation.split("[", 1)[0]
        lines.append(f"        {field}={holder}(Tensor.zeros({tuple(array.shape)!r}, device)),")
    lines += [
        "    )",
        "",
        "",
        f"def load(path: str | Path, device: Device[B]) -> {class_name}[B]:",
        f'    """The module with the weights of ``path`` (``{weights_name}`` as generated)."""',
        "    return init(device).load_file(path, NamedMpkFileRecorder(), device)",
        "",
    ]
    return "\n".join(lines)


def _in_docstring(text: str) -> str:
    """``text`` (the file's word: a graph or file name) quoted so it cannot end the docstring it sits in.

    ``repr`` escapes backslashes and control characters but leaves double
    quotes as they are inside single quotes; escaped too, a triple quote in
    a graph name cannot close the docstring and turn the rest into code.
    """
    return repr(text).replace('"', '\\"')


def generate(
    source: str | os.PathLike[str], out_dir: str | os.PathLike[str], name: str | None = None
) -> GeneratedFiles:
    """Write ``<name>.py`` and its weights ``<name>.mpk`` for the ONNX model ``source`` into ``out_dir``."""
    device = NdArray.device()
    program = load_program(source, device)
    stem = name or Path(os.fspath(source)).stem
    module_name = _module_name(stem)
    class_name = _class_name(stem)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    weights = out / f"{module_name}.mpk"
    text = render(program, class_name, weights.name)
    model = build(program, device)
    model.save_file(out / module_name, NamedMpkFileRecorder())
    target = out / f"{module_name}.py"
    tmp = target.with_suffix(".py.tmp")
    tmp.write_text(text)
    tmp.replace(target)
    return GeneratedFiles(target, weights, class_name)
