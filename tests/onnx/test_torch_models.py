"""Models exported by ``torch.onnx.export`` run, fine-tune and generate code through ferrum.onnx.

The fixtures (tests/fixtures/onnx_torch) are written by scripts/make_onnx_torch_fixtures.py with
torch; these tests need neither torch nor the script. Each ``<name>.npz`` holds the fixed input and
torch's output for it: ferrum must reproduce that output within 1e-4 relative plus 1e-5 absolute
(measured differences are below 1e-6).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.nn import BatchNorm, Linear
from ferrum.nn.conv import Conv2d
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.onnx import load
from ferrum.onnx.codegen import generate
from ferrum.optim import AdamConfig, GradientsParams
from numpy.lib.stride_tricks import sliding_window_view

from tests.support.onnx_models import import_generated, mypy_strict

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "onnx_torch"
MODELS = ["mlp", "cnn", "lstm", "transformer"]
DEVICE = NdArray.device()
RTOL, ATOL = 1e-4, 1e-5


def _case(name: str) -> tuple[Path, np.ndarray, np.ndarray]:
    data = np.load(FIXTURES / f"{name}.npz")
    return FIXTURES / f"{name}.onnx", data["input"], data["output"]


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    out: np.ndarray = model.forward(Tensor.from_numpy(x, DEVICE)).to_numpy()
    return out


@pytest.mark.parametrize("name", MODELS)
def test_reproduces_torch_output(name: str) -> None:
    path, x, expected = _case(name)
    model = load(path, DEVICE)
    np.testing.assert_allclose(_run(model, x), expected, rtol=RTOL, atol=ATOL)
    # the batch dimension was exported as symbolic: one sample runs alone and gives its row
    np.testing.assert_allclose(_run(model, x[1:2]), expected[1:2], rtol=RTOL, atol=ATOL)


def test_the_exported_graphs_use_the_ops_they_are_meant_to_test() -> None:
    """The exporter keeps BatchNormalization, LSTM and the encoder's LayerNormalization/Softmax as nodes."""
    ops = {name: {n.op_type for n in onnx.load(_case(name)[0]).graph.node} for name in MODELS}
    assert {"Gemm", "Relu"} <= ops["mlp"]
    assert {"Conv", "BatchNormalization", "MaxPool", "Gemm"} <= ops["cnn"]
    assert "LSTM" in ops["lstm"]
    assert {"LayerNormalization", "Softmax", "MatMul"} <= ops["transformer"]


def test_cnn_layers_are_ferrum_layers() -> None:
    model = load(_case("cnn")[0], DEVICE)
    assert {type(getattr(model, field)) for field in model.program.layers} == {Conv2d, BatchNorm, Linear}
    # conv 4*1*3*3+4, batch norm gamma and beta 4+4, linear 10*100+10
    assert model.num_params() == 40 + 8 + 1010


def _conv_output(x: np.ndarray, graph: onnx.GraphProto) -> np.ndarray:
    """The CNN's Conv (3x3, no padding, stride 1) in NumPy, from the file's initializers."""
    conv = next(n for n in graph.node if n.op_type == "Conv")
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    w, b = weights[conv.input[1]], weights[conv.input[2]]
    windows = sliding_window_view(x, (3, 3), axis=(2, 3))  # [batch, 1, 10, 10, 3, 3]
    out: np.ndarray = np.einsum("bcijkl,ockl->boij", windows, w) + b[None, :, None, None]
    return out


def _batch_norm_field(model: Any) -> str:
    field: str = next(f for f in model.program.layers if isinstance(getattr(model, f), BatchNorm))
    return field


def test_cnn_fine_tunes_under_autodiff_with_batch_norm_in_training_mode() -> None:
    """Under Autodiff the imported BatchNorm normalizes with the batch's statistics and updates its
    running ones (as torch's ``train()`` and Burn's BatchNorm on an autodiff backend do); ``valid()``
    goes back to the running statistics for inference."""
    path, x_eval, _ = _case("cnn")
    train_device = Autodiff[NdArray].device()
    model = load(path, train_device)
    bn = getattr(model, _batch_norm_field(model))
    mean0, var0 = bn.running_mean.value().to_numpy(), bn.running_var.value().to_numpy()
    rng = np.random.default_rng(7)
    x = rng.normal(size=(16, 1, 12, 12)).astype(np.float32)
    y = rng.integers(0, 10, size=16)
    xt, yt = Tensor.from_numpy(x, train_device), Tensor.from_numpy(y, train_device)
    loss_fn = CrossEntropyLossConfig().init(train_device)
    optim = AdamConfig().init()
    losses = []
    for step in range(10):
        loss = loss_fn.forward(model.forward(xt), yt)
        losses.append(loss.into_scalar())
        if step == 0:
            # ONNX momentum 0.9 weighs the running value: new = 0.9 * old + 0.1 * batch statistic, with
            # the batch's biased variance as ONNX's training-mode BatchNormalization and Burn take it
            # (torch's train() would fold in the unbiased one)
            conv = _conv_output(x, onnx.load(path).graph)
            np.testing.assert_allclose(
                bn.running_mean.value().to_numpy(), 0.9 * mean0 + 0.1 * conv.mean(axis=(0, 2, 3)), rtol=1e-4
            )
            np.testing.assert_allclose(
                bn.running_var.value().to_numpy(), 0.9 * var0 + 0.1 * conv.var(axis=(0, 2, 3)), rtol=1e-4
            )
        model = optim.step(0.02, model, GradientsParams.from_grads(loss.backward(), model))
    assert losses[-1] < 0.5 * losses[0], losses
    # valid() keeps the fine-tuned weights and running statistics, off the autodiff backend
    inference = model.valid()
    for (name, a), (_, b) in zip(model.named_parameters(), inference.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.val().to_numpy(), b.val().to_numpy(), err_msg=name)
    field = _batch_norm_field(model)
    trained_mean = getattr(model, field).running_mean.value().to_numpy()
    np.testing.assert_array_equal(getattr(inference, field).running_mean.value().to_numpy(), trained_mean)
    assert not np.allclose(trained_mean, mean0)
    out = inference.forward(Tensor.from_numpy(x_eval, DEVICE))
    assert out.dims() == (4, 10) and not out.device().is_autodiff


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``python -m ferrum.onnx``'s module for each model (every one of the four is supported)."""
    out = tmp_path_factory.mktemp("generated_torch")
    return {name: generate(_case(name)[0], out).source for name in MODELS}


@pytest.mark.parametrize("name", MODELS)
def test_generated_code_reproduces_torch_output(name: str, generated: dict[str, Path]) -> None:
    _, x, expected = _case(name)
    module = import_generated(generated[name], "generated_torch")
    model = module.load(generated[name].with_suffix(".mpk"), DEVICE)
    np.testing.assert_allclose(_run(model, x), expected, rtol=RTOL, atol=ATOL)


def test_generated_code_passes_mypy_strict(generated: dict[str, Path], tmp_path: Path) -> None:
    status, report = mypy_strict(generated.values(), tmp_path)
    assert status == 0, report
