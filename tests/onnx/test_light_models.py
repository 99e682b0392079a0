"""The real model graphs the onnx wheel ships (onnx/backend/test/data/light: AlexNet, DenseNet-121,
Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512) through ferrum.onnx.

Each runs on the input ONNX's runner makes for it (Runner.generate_dummy_data, not random) and must
reproduce the stored ``<model>_output_0.pb`` under the runner's comparison and tolerances
(data/real/test_<model>/data.json), through the run-time path and through the generated code.
Nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ferrum.onnx.conformance import LightModel, check_light_model, light_models

CASES = light_models()
# Generating code writes the weights record: 250 to 575 MB and several seconds for these three, so
# their generated code is checked by scripts/onnx_op_table.py (docs/onnx-ops.md), not on every run.
LARGE = {"bvlc_alexnet", "vgg19", "zfnet512"}


def test_the_wheel_ships_the_nine_light_models() -> None:
    names = {case.name for case in CASES}
    assert names >= {
        "bvlc_alexnet",
        "densenet121",
        "inception_v1",
        "inception_v2",
        "resnet50",
        "shufflenet",
        "squeezenet",
        "vgg19",
        "zfnet512",
    }
    assert all(case.path.is_file() for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_runtime_reproduces_the_stored_output(case: LightModel) -> None:
    check_light_model(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in LARGE], ids=lambda c: c.name)
def test_generated_code_reproduces_the_stored_output(case: LightModel, tmp_path: Path) -> None:
    check_light_model(case, tmp_path)
