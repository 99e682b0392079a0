"""The real-model ONNX fixtures (tests/fixtures/onnx_real): weights kept as a recipe, not as bytes.

``scripts/make_onnx_real_fixtures.py`` exports torchvision and Hugging Face
architectures with both of torch's exporters. A real architecture's weights
are megabytes of random numbers that would not compress, so the committed
``.onnx`` file keeps every large float initializer's type and dims only, and
its metadata (``ferrum.fixture.weights``) the recipe that remakes it:
uniform draws with the original tensor's mean and standard deviation, from
a PCG64 bit stream whose raw output NumPy guarantees across versions (its
distributions' streams it does not). onnxruntime's outputs, stored beside
the model, were computed on the remade weights, so the fixture is exact.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

__all__ = ["FIXTURES", "RECIPE_KEY", "fill_weights", "strip_weights"]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "onnx_real"
RECIPE_KEY = "ferrum.fixture.weights"
# Tensors up to this many bytes keep their real values (shapes, indices, small constants).
KEEP_BYTES = 1024


def _draws(name: str, count: int, mean: float, std: float) -> np.ndarray[Any, np.dtype[np.float32]]:
    """``count`` uniform draws with ``mean`` and ``std``, seeded by the tensor's name."""
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    raw = np.random.PCG64(seed).random_raw(count)
    unit = (raw >> np.uint64(11)).astype(np.float64) * 2.0**-53  # [0, 1), 53 bits
    half_width = std * np.sqrt(3.0)  # a uniform on [-w, w] has standard deviation w / sqrt(3)
    values: np.ndarray[Any, np.dtype[np.float32]] = (mean + (2.0 * unit - 1.0) * half_width).astype(
        np.float32
    )
    return values


def _float_initializers(graph: onnx.GraphProto) -> list[onnx.TensorProto]:
    graphs, found = [graph], []
    while graphs:
        g = graphs.pop()
        found += [t for t in g.initializer if t.data_type == onnx.TensorProto.FLOAT]
        for node in g.node:
            for attr in node.attribute:
                graphs += ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)
    return found


def strip_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its large float initializers' bytes dropped and their recipes in its metadata.

    ``fill_weights`` remakes them: the caller computes reference outputs on a
    filled copy, so they are exactly the weights a test will remake.
    """
    recipe: dict[str, list[float]] = {}
    for t in _float_initializers(model.graph):
        array = numpy_helper.to_array(t)
        # Masks (0 and -inf, or float32's lowest) and other tensors of a few distinct values keep
        # them: a mean and a spread cannot say them, and they compress.
        if array.nbytes <= KEEP_BYTES or not np.isfinite(array).all() or np.unique(array).size <= 16:
            continue
        wide = array.astype(np.float64)
        mean, std = float(wide.mean()), float(wide.std())
        if t.name in recipe:
            raise ValueError(f"initializer name {t.name!r} appears twice")
        recipe[t.name] = [mean, std]
        t.raw_data = b""
        del t.float_data[:]
    entry = model.metadata_props.add()
    entry.key, entry.value = RECIPE_KEY, json.dumps(recipe, sort_keys=True)
    return model


def fill_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` (from ``strip_weights``) with every recipe's tensor remade, in place."""
    props = {p.key: p.value for p in model.metadata_props}
    recipe: dict[str, list[float]] = json.loads(props.get(RECIPE_KEY, "{}"))
    for t in _float_initializers(model.graph):
        if t.name in recipe:
            mean, std = recipe[t.name]
            count = int(np.prod(t.dims, dtype=np.int64))
            t.raw_data = _draws(t.name, count, mean, std).tobytes()
    return model
