"""Normalization layers against NumPy: BatchNorm (training and running stats), LayerNorm,
GroupNorm, InstanceNorm, RmsNorm; gradients of LayerNorm against finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import ShapeError, Tensor
from ferrum.module import Module, Param
from ferrum.nn import (
    Activation,
    BatchNorm,
    BatchNormConfig,
    Gelu,
    GroupNormConfig,
    InstanceNormConfig,
    LayerNorm,
    LayerNormConfig,
    LinearConfig,
    Normalization,
    NormalizationConfig,
    Relu,
    RmsNormConfig,
    Softplus,
)
from ferrum.record import BinFileRecorder, NamedMpkFileRecorder

from tests.support.devices import AD, DEVICE
from tests.support.f64 import arr
from tests.support.gradcheck import central_differences

RNG = np.random.default_rng(1234)


def floats(*shape: int, scale: float = 1.0, shift: float = 0.0) -> Any:
    return (RNG.normal(size=shape) * scale + shift).astype(np.float32)


def channel_shape(rank: int, channels: int) -> tuple[int, ...]:
    return (1, channels) + (1,) * (rank - 2)


def with_affine(layer: Any, channels: int, device: Any) -> Any:
    """The layer with random gamma/beta, so the affine part is tested too."""
    gamma = Param(Tensor.from_floats(floats(channels, shift=1.0), device))
    beta = Param(Tensor.from_floats(floats(channels), device))
    return layer.replace(gamma=gamma, beta=beta)


# ------------------------------------------------------------------ BatchNorm


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 4)])
def test_batchnorm_training_uses_batch_stats_and_updates_running_stats(shape: tuple[int, ...]) -> None:
    channels = shape[1]
    bn: BatchNorm[Any] = with_affine(BatchNormConfig(channels).with_momentum(0.2).init(AD), channels, AD)
    x = floats(*shape, scale=2.0, shift=3.0).astype(np.float64)
    out = bn.forward(Tensor.from_floats(x.astype(np.float32), AD))
    axes = tuple(i for i in range(len(shape)) if i != 1)
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    gamma = arr(bn.gamma.val()).reshape(channel_shape(len(shape), channels))
    beta = arr(bn.beta.val()).reshape(channel_shape(len(shape), channels))
    expected = (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
    np.testing.assert_allclose(arr(out), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(arr(bn.running_mean.value()), 0.2 * mean.ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(bn.running_var.value()), 0.8 + 0.2 * var.ravel(), rtol=1e-5, atol=1e-6)


def test_batchnorm_running_stats_converge_and_are_used_after_valid() -> None:
    bn = BatchNormConfig(2).with_momentum(0.5).init(AD)
    x = floats(64, 2, 3, scale=3.0, shift=-2.0).astype(np.float64)
    for _ in range(30):
        bn.forward(Tensor.from_floats(x.astype(np.float32), AD))
    mean = x.mean(axis=(0, 2))
    var = x.var(axis=(0, 2))
    np.testing.assert_allclose(arr(bn.running_mean.value()), mean, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(arr(bn.running_var.value()), var, rtol=1e-4, atol=1e-5)
    valid = bn.valid()
    probe = floats(3, 2, 3).astype(np.float64)
    out = valid.forward(Tensor.from_floats(probe.astype(np.float32), DEVICE))
    expected = (probe - mean.reshape(1, 2, 1)) / np.sqrt(var.reshape(1, 2, 1) + 1e-5)
    np.testing.assert_allclose(arr(out), expected, rtol=1e-4, atol=1e-4)
    # Inference leaves the running statistics alone.
    before = arr(valid.running_mean.value())
    valid.forward(Tensor.from_floats(floats(5, 2, 3, shift=10.0), DEVICE))
    np.testing.assert_array_equal(arr(valid.running_mean.value()), before)


def test_batchnorm_running_stats_travel_with_records_and_copies() -> None:
    bn = BatchNormConfig(2).init(AD)
    bn.forward(Tensor.from_floats(floats(8, 2, shift=5.0), AD))
    snapshot = bn.valid()
    bn.forward(Tensor.from_floats(floats(8, 2, shift=5.0), AD))
    assert not np.allclose(arr(snapshot.running_mean.value()), arr(bn.running_mean.value()))
    record = bn.into_record()
    assert list(record) == ["gamma", "beta", "running_mean", "running_var", "momentum", "epsilon"]
    assert record["momentum"] is None and record["epsilon"] is None  # constants, as Burn records them
    restored = BatchNormConfig(2).init(DEVICE).load_record(record)
    np.testing.assert_array_equal(arr(restored.running_var.value()), arr(bn.running_var.value()))
    assert bn.num_params() == 4


def test_batchnorm_gradients_match_finite_differences() -> None:
    x = floats(5, 2).astype(np.float64)
    c = floats(5, 2).astype(np.float64)

    def loss(values: Any) -> float:
        normalized = (values - values.mean(0)) / np.sqrt(values.var(0) + 1e-5)
        return float((normalized * c).sum())

    bn = BatchNormConfig(2).init(AD)
    xt = Tensor.from_floats(x.astype(np.float32), AD).require_grad()
    grads = (bn.forward(xt) * Tensor.from_floats(c.astype(np.float32), AD)).sum().backward()
    grad = xt.grad(grads)
    assert grad is not None
    np.testing.assert_allclose(arr(grad), central_differences(loss, x), rtol=1e-2, atol=1e-3)


def test_batchnorm_config_and_shape_errors() -> None:
    with pytest.raises(ValueError, match=r"BatchNormConfig\.num_features"):
        BatchNormConfig(0)
    with pytest.raises(ValueError, match=r"BatchNormConfig\.momentum"):
        BatchNormConfig(3, momentum=1.5)
    with pytest.raises(ShapeError, match=r"BatchNorm\.forward: expected input of shape \[batch, 3, \.\.\.\]"):
        BatchNormConfig(3).init(DEVICE).forward(Tensor.zeros((2, 4), DEVICE))
    # Burn's count includes the running mean and variance.
    shown = "BatchNorm {num_features: 3, momentum: 0.1, epsilon: 0.00001, params: 12}"
    assert repr(BatchNormConfig(3).init(DEVICE)) == shown


# ------------------------------------------------------------------ LayerNorm / RmsNorm


@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7)])
@pytest.mark.parametrize("bias", [True, False])
def test_layernorm_matches_numpy(shape: tuple[int, ...], bias: bool) -> None:
    layer: LayerNorm[Any] = LayerNormConfig(7).with_bias(bias).init(DEVICE)
    layer = layer.replace(gamma=Param(Tensor.from_floats(floats(7, shift=1.0), DEVICE)))
    x = floats(*shape, scale=4.0, shift=1.0).astype(np.float64)
    out = layer.forward(Tensor.from_floats(x.astype(np.float32), DEVICE))
    normalized = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    expected = normalized * arr(layer.gamma.val())
    if bias:
        assert layer.beta is not None
        expected = expected + arr(layer.beta.val())
    else:
        assert layer.beta is None
    np.testing.assert_allclose(arr(out), expected, rtol=1e-4, atol=1e-4)


def test_layernorm_gradient_matches_finite_differences() -> None:
    x = floats(3, 4).astype(np.float64)
    c = floats(3, 4).astype(np.float64)

    def loss(values: Any) -> float:
        out = (values - values.mean(-1, keepdims=True)) / np.sqrt(values.var(-1, keepdims=True) + 1e-5)
        return float((out * c).sum())

    layer = LayerNormConfig(4).init(AD)
    xt = Tensor.from_floats(x.astype(np.float32), AD).require_grad()
    grads = (layer.forward(xt) * Tensor.from_floats(c.astype(np.float32), AD)).sum().backward()
    grad = xt.grad(grads)
    gamma_grad = layer.gamma.val().grad(grads)
    assert grad is not None and gamma_grad is not None
    np.testing.assert_allclose(arr(grad), central_differences(loss, x), rtol=1e-2, atol=1e-3)
    normalized = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(arr(gamma_grad), (normalized * c).sum(0), rtol=1e-3, atol=1e-4)


def test_rmsnorm_matches_numpy() -> None:
    layer = RmsNormConfig(5).with_epsilon(1e-6).init(DEVICE)
    layer = layer.replace(gamma=Param(Tensor.from_floats(floats(5, shift=1.0), DEVICE)))
    x = floats(2, 3, 5, scale=2.0).astype(np.float64)
    out = layer.forward(Tensor.from_floats(x.astype(np.float32), DEVICE))
    expected = x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) * arr(layer.gamma.val())
    np.testing.assert_allclose(arr(out), expected, rtol=1e-4, atol=1e-5)
    message = r"RmsNorm\.forward: expected input of shape \[\.\.\., 5\], found \[2, 4\]"
    with pytest.raises(ShapeError, match=message):
        layer.forward(Tensor.zeros((2, 4), DEVICE))


# ------------------------------------------------------------------ GroupNorm / InstanceNorm


def group_norm_reference(x: Any, groups: int, gamma: Any, beta: Any, eps: float = 1e-5) -> Any:
    n, c = x.shape[:2]
    grouped = x.reshape(n, groups, -1)
    normalized = (grouped - grouped.mean(-1, keepdims=True)) / np.sqrt(grouped.var(-1, keepdims=True) + eps)
    out = normalized.reshape(x.shape)
    shape = channel_shape(x.ndim, c)
    return out * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("shape", [(2, 6), (2, 6, 5), (3, 6, 2, 3)])
@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_groupnorm_matches_numpy(shape: tuple[int, ...], groups: int) -> None:
    layer = with_affine(GroupNormConfig(groups, 6).init(DEVICE), 6, DEVICE)
    x = floats(*shape, scale=3.0, shift=2.0).astype(np.float64)
    out = layer.forward(Tensor.from_floats(x.astype(np.float32), DEVICE))
    expected = group_norm_reference(x, groups, arr(layer.gamma.val()), arr(layer.beta.val()))
    np.testing.assert_allclose(arr(out), expected, rtol=1e-4, atol=1e-4)


def test_groupnorm_without_affine_and_errors() -> None:
    layer = GroupNormConfig(2, 4).with_affine(False).init(DEVICE)
    assert layer.num_params() == 0 and layer.gamma is None
    x = floats(2, 4, 3).astype(np.float64)
    out = layer.forward(Tensor.from_floats(x.astype(np.float32), DEVICE))
    expected = group_norm_reference(x, 2, np.ones(4), np.zeros(4))
    np.testing.assert_allclose(arr(out), expected, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups \(2\)"):
        GroupNormConfig(2, 5)
    with pytest.raises(ShapeError, match=r"GroupNorm\.forward"):
        layer.forward(Tensor.zeros((2, 3, 3), DEVICE))


def test_instancenorm_normalizes_each_channel_of_each_sample() -> None:
    layer = with_affine(InstanceNormConfig(3).init(DEVICE), 3, DEVICE)
    x = floats(2, 3, 4, 4, scale=5.0, shift=-1.0).astype(np.float64)
    out = layer.forward(Tensor.from_floats(x.astype(np.float32), DEVICE))
    expected = group_norm_reference(x, 3, arr(layer.gamma.val()), arr(layer.beta.val()))
    np.testing.assert_allclose(arr(out), expected, rtol=1e-4, atol=1e-4)
    assert InstanceNormConfig(3).with_affine(False).init(DEVICE).num_params() == 0


def test_norm_configs_round_trip_through_json(tmp_path: Any) -> None:
    for cfg in (
        BatchNormConfig(4, epsilon=1e-3),
        LayerNormConfig(8, bias=False),
        GroupNormConfig(2, 8, affine=False),
        InstanceNormConfig(3),
        RmsNormConfig(6, epsilon=1e-6),
    ):
        path = tmp_path / f"{type(cfg).__name__}.json"
        cfg.save(path)
        assert type(cfg).load(path) == cfg


class _Holder(Module[Any]):
    norm: Normalization[Any]


def test_normalization_wrapper_dispatches_and_records_burns_enum(tmp_path: Any) -> None:
    x = Tensor.from_numpy(np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32), DEVICE)
    config = NormalizationConfig.Group(GroupNormConfig(2, 4))
    assert config.num_features() == 4 and config.with_num_features(8).num_features() == 8
    norm = config.init(DEVICE)
    assert isinstance(norm, Normalization) and norm.kind == "Group"
    np.testing.assert_array_equal(norm.forward(x).to_numpy(), norm.layer.forward(x).to_numpy())
    layer = _Holder(NormalizationConfig.Layer(LayerNormConfig(3)).init(DEVICE))
    # Burn's enum record: {"Layer": the LayerNorm's record}.
    assert list(layer.into_record()["norm"]) == ["Layer"]
    for recorder in (NamedMpkFileRecorder(), BinFileRecorder()):
        layer.save_file(tmp_path / "norm", recorder)
        fresh = _Holder(NormalizationConfig.Layer(LayerNormConfig(3)).init(DEVICE))
        loaded = fresh.load_file(tmp_path / "norm", recorder, DEVICE)
        np.testing.assert_array_equal(loaded.norm.forward(x).to_numpy(), layer.norm.forward(x).to_numpy())
    with pytest.raises(ValueError, match=r"NormalizationConfig\.Rms needs a RmsNormConfig"):
        NormalizationConfig("Rms", LayerNormConfig(3))
    assert repr(NormalizationConfig.Rms(RmsNormConfig(8))).startswith("NormalizationConfig.Rms(")


# Burn's enum order (burn-nn's activation_wrapper.rs and normalization_wrapper.rs): the index bincode writes.
ENUM_VARIANTS = [
    pytest.param(lambda: Activation(Gelu()), "Gelu", 0, id="activation-gelu"),
    pytest.param(lambda: Activation(Relu()), "Relu", 2, id="activation-relu"),
    pytest.param(lambda: Activation(Softplus(1.0)), "Softplus", 9, id="activation-softplus"),
    pytest.param(lambda: Normalization(BatchNormConfig(3).init(DEVICE)), "Batch", 0, id="norm-batch"),
    pytest.param(lambda: Normalization(LayerNormConfig(3).init(DEVICE)), "Layer", 3, id="norm-layer"),
    pytest.param(lambda: Normalization(RmsNormConfig(3).init(DEVICE)), "Rms", 4, id="norm-rms"),
]


@pytest.mark.parametrize(("build", "kind", "index"), ENUM_VARIANTS)
def test_enum_modules_name_the_variant_and_burns_index(build: Any, kind: str, index: int) -> None:
    module = build()
    name, at, inner = module._record_variant()
    assert (module.kind, name, at) == (kind, kind, index)
    assert inner is module.layer


def test_enum_modules_refuse_a_layer_of_no_variant() -> None:
    linear = LinearConfig(2, 2).init(DEVICE)
    with pytest.raises(TypeError, match=r"^Activation holds one of Gelu, PRelu, .*Softplus, found Linear$"):
        Activation(linear)  # type: ignore[arg-type]
    norms = "BatchNorm, GroupNorm, InstanceNorm, LayerNorm, RmsNorm"
    with pytest.raises(TypeError, match=rf"^Normalization holds one of {norms}, found Relu$"):
        Normalization(Relu())  # type: ignore[arg-type]
