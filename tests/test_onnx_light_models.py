"""The real model graphs the onnx wheel ships (onnx/backend/test/data/light: AlexNet, DenseNet-121,
Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512) through ferrum.onnx.

Each runs on the input ONNX's runner makes for it (Runner.generate_dummy_data, not random) and must
reproduce the stored ``<model>_output_0.pb`` under the runner's comparison and tolerances
(data/real/test_<model>/data.json). Nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from ferrum.onnx.backend import FerrumBackend
from onnx.backend.test.runner import Runner

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
CASES = sorted((DATA / "real").glob("test_*/data.json"))


def _case_id(path: Path) -> str:
    return path.parent.name.removeprefix("test_")


def test_the_wheel_ships_the_light_models() -> None:
    assert len(CASES) >= 9
    for case in CASES:
        url = json.loads(case.read_text())["url"]
        assert url.startswith("onnx/backend/test/data/light/"), url
        assert (DATA.parents[3] / url).is_file()


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_light_model_reproduces_its_stored_output(case: Path) -> None:
    meta = json.loads(case.read_text())
    path = DATA.parents[3] / meta["url"]
    model = onnx.load(path)
    rep = FerrumBackend.prepare(model)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [
        Runner.generate_dummy_data(x, seed=0, name=meta["model_name"], random=False)
        for x in model.graph.input
        if x.name not in initializers
    ]
    outputs = rep.run(inputs)
    expected = [
        onnx.numpy_helper.to_array(onnx.load_tensor(str(path).replace(".onnx", f"_output_{i}.pb")))
        for i in range(len(model.graph.output))
    ]
    Runner.assert_similar_outputs(expected, list(outputs), rtol=meta["rtol"], atol=meta["atol"])
    assert all(np.isfinite(o).all() for o in outputs)
