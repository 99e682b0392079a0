"""``Module.quantize_weights`` (Burn's post-training quantization): an MLP
trained on the shipped MNIST sample keeps its predictions on int8 weights
(top-1 agreement with float32 on the 1000 test digits, the issue's 99%), its
Linear layers run on the int8 product, and what the quantized module holds
(ids, flags, values) is what Burn's ``Quantizer`` gives."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import Module, Param, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataset.vision import MnistDataset
from ferrum.nn import BatchNorm, BatchNormConfig, Conv2dConfig, Linear, LinearConfig, PaddingConfig2d, Relu
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.optim import AdamConfig, GradientsParams
from ferrum.quantization import Calibration, Quantizer, QuantLevel, QuantScheme, QuantValue

Q8S = Quantizer(Calibration.MinMax, QuantScheme().with_value(QuantValue.Q8S))


class Mlp(Module[Any]):
    first: Linear[Any]
    second: Linear[Any]
    relu: Relu

    def forward(self, x: Tensor[Any, Any]) -> Tensor[Any, Any]:
        return self.second.forward(self.relu.forward(self.first.forward(x)))


def images(dataset: MnistDataset) -> tuple[np.ndarray, np.ndarray]:
    items = [item for item in (dataset.get(i) for i in range(dataset.len())) if item is not None]
    x = np.stack([item.image for item in items]).reshape(len(items), -1).astype(np.float32) / 255.0
    return x, np.array([item.label for item in items], dtype=np.int64)


@pytest.fixture(scope="module")
def trained() -> Mlp:
    device = Autodiff[NdArray].device()
    Autodiff[NdArray].seed(7)
    model = Mlp(LinearConfig(784, 128).init(device), LinearConfig(128, 10).init(device), Relu())
    x, y = images(MnistDataset.sample("train"))
    optim = AdamConfig().init()
    loss_fn = CrossEntropyLossConfig().init(device)
    rng = np.random.default_rng(0)
    for _ in range(3):
        order = rng.permutation(len(x))
        for start in range(0, len(x), 64):
            idx = order[start : start + 64]
            out = model.forward(Tensor.from_data(x[idx], device))
            loss = loss_fn.forward(out, Tensor.from_data(y[idx], device))
            model = optim.step(1e-3, model, GradientsParams.from_grads(loss.backward(), model))
    return model.valid()


def test_int8_weights_keep_the_predictions(trained: Mlp) -> None:
    x, y = images(MnistDataset.sample("test"))
    xt = Tensor.from_data(x, NdArray.device())
    float_pred = trained.forward(xt).argmax(1).to_numpy().reshape(-1)
    quantized = trained.quantize_weights(Q8S)
    int8_pred = quantized.forward(xt).argmax(1).to_numpy().reshape(-1)
    agreement = float(np.mean(float_pred == int8_pred))
    accuracy = float(np.mean(float_pred == y))
    assert accuracy > 0.85, f"the float MLP should have learned the digits, accuracy {accuracy:.3f}"
    assert agreement >= 0.99, f"top-1 agreement of int8 with float32: {agreement:.4f}"


def test_linear_runs_on_the_int8_product(trained: Mlp) -> None:
    quantized = trained.quantize_weights(Q8S)
    layer = quantized.first
    q = layer.weight.quantized()
    assert q is not None and q.has_int8_product()
    x = np.random.default_rng(1).random((5, 784)).astype(np.float32)
    xt = Tensor.from_data(x, NdArray.device())
    got = layer.forward(xt).to_numpy()
    # The same product on the dequantized weight, in float: the int8 path differs by the
    # input's quantization alone (a step of 1/255 of each row's range).
    w, b = layer.weight.val().to_numpy(), layer.bias.val().to_numpy()  # type: ignore[union-attr]
    want = x.astype(np.float64) @ w + b
    step = x.max(axis=1) / 255.0
    bound = 0.5 * step[:, None] * np.abs(w).sum(axis=0) * 1.01 + 1e-5
    assert np.all(np.abs(got - want) <= bound)
    # Rank 1 and rank 3 inputs keep their leading dims.
    assert layer.forward(Tensor.from_data(x[0], NdArray.device())).dims() == (128,)
    assert layer.forward(Tensor.from_data(x.reshape(1, 5, 784), NdArray.device())).dims() == (1, 5, 128)


def test_what_the_quantized_module_holds(trained: Mlp) -> None:
    quantized = trained.quantize_weights(Q8S)
    for (path, before), (_, after) in zip(
        trained.named_parameters(), quantized.named_parameters(), strict=True
    ):
        q = after.quantized()
        assert q is not None, path
        assert after.id == before.id and not after.is_require_grad()
        # The value is the dequantized tensor, each element within half a step of the float one.
        scale = float(q.scales().to_numpy().reshape(-1)[0])
        np.testing.assert_allclose(after.val().to_numpy(), before.val().to_numpy(), atol=scale / 2 + 1e-7)
        np.testing.assert_allclose(after.val().to_numpy(), q.values().to_numpy() * scale, rtol=1e-6)
    # Only the quantized values are kept: a quarter of the float32 bytes, plus one scale per tensor.
    held = 0
    for param in quantized.parameters():
        q = param.quantized()
        assert q is not None and param.val() is not param.val(), "dequantized at each call, not stored"
        held += q.nbytes()
    assert held == sum(p.num_params() for p in trained.parameters()) + 4 * len(trained.parameters())
    assert quantized.num_params() == trained.num_params()
    # The float module is untouched.
    assert all(p.quantized() is None for p in trained.parameters())


def test_block_schemes_and_running_states() -> None:
    device = NdArray.device()
    layer = LinearConfig(8, 4).init(device)
    blocks = layer.quantize_weights(
        Quantizer(scheme=QuantScheme().with_value(QuantValue.Q8S).with_level(QuantLevel.block([4])))
    )
    assert blocks.weight.quantized() is not None and not blocks.weight.quantized().has_int8_product()  # type: ignore[union-attr]
    x = Tensor.from_data(np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32), device)
    np.testing.assert_allclose(
        blocks.forward(x).to_numpy(),
        x.to_numpy() @ blocks.weight.val().to_numpy() + blocks.bias.val().to_numpy(),  # type: ignore[union-attr]
        rtol=1e-5,
        atol=1e-6,
    )
    norm: BatchNorm[Any] = BatchNormConfig(4).init(device)
    quantized_norm = norm.quantize_weights(Q8S)
    # Running statistics stay float, as Burn's Quantizer maps parameters only.
    assert (
        quantized_norm.running_mean.value().to_numpy().tolist()
        == norm.running_mean.value().to_numpy().tolist()
    )
    assert isinstance(quantized_norm.gamma, Param) and quantized_norm.gamma.quantized() is not None


def test_a_bad_block_names_the_parameter() -> None:
    layer = LinearConfig(3, 3).init(NdArray.device())
    with pytest.raises(ValueError, match=r"parameter 'weight'.*blocks of"):
        layer.quantize_weights(
            Quantizer(scheme=QuantScheme().with_value(QuantValue.Q8S).with_level(QuantLevel.block([4])))
        )


def test_conv2d_layers_run_on_the_int8_product() -> None:
    device = NdArray.device()
    conv = Conv2dConfig((3, 8), (3, 3)).with_padding(PaddingConfig2d.Same).init(device)
    quantized = conv.quantize_weights(Q8S)
    q = quantized.weight.quantized()
    assert q is not None and q.has_int8_conv()
    x = np.random.default_rng(4).standard_normal((2, 3, 10, 10)).astype(np.float32)
    xt = Tensor.from_data(x, device)
    got = quantized.forward(xt).to_numpy()
    # The same layer on the dequantized weight, in float: only the input's quantization differs.
    float_layer = conv.replace(weight=conv.weight.with_value(q.dequantize()))
    want = float_layer.forward(xt).to_numpy()
    step = (max(float(x.max()), 0.0) - min(float(x.min()), 0.0)) / 255.0
    bound = 0.5 * step * np.abs(q.dequantize().to_numpy()).reshape(8, -1).sum(axis=1).max() * 1.01 + 1e-5
    assert got.shape == (2, 8, 10, 10) and np.abs(got - want).max() <= bound
