"""Muon against Burn 0.20.1's own tests and a NumPy reimplementation written here.

Burn's ``muon.rs`` tests (learning-rate adjustment ratios, the 1-D panic,
state save/load, weight decay, orthogonality of the Newton-Schulz result,
tall and wide shapes, zero gradients) are repeated with their expected
values. Several steps of Muon (momentum, Nesterov, weight decay, both
learning-rate adjustments, tall and wide matrices) are checked against the
NumPy recurrence in float64 and float32. Also: records (in memory and
through bincode files), gradient clipping, config checks and serde, and a
small MLP whose loss Muon brings down.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from ferrum import D2, Distribution, DType, ShapeError, Tensor
from ferrum.backend import Backend
from ferrum.module import Module, Param
from ferrum.nn import Linear, LinearConfig, Relu
from ferrum.nn.loss import MseLoss
from ferrum.optim import (
    AdamWConfig,
    AdjustLrFn,
    GradientClippingConfig,
    GradientsParams,
    MomentumConfig,
    Muon,
    MuonConfig,
    WeightDecayConfig,
)
from ferrum.record import BinFileRecorder, FullPrecisionSettings, NamedMpkFileRecorder

from tests.support.devices import AD, INNER, TrainB

B = TypeVar("B", bound=Backend)
Array = np.ndarray[Any, np.dtype[Any]]
TOLERANCE = 1e-8  # Burn's tolerance for the adjustment ratios


class Weights(Module[B]):
    """Two weight matrices, one tall and one wide, as Muon is meant for."""

    tall: Param[Tensor[B, D2]]
    wide: Param[Tensor[B, D2]]


def arr(t: Tensor[Any, Any, Any]) -> Array:
    return np.asarray(t.to_numpy())


def f32(value: float) -> float:
    rounded: float = struct.unpack("f", struct.pack("f", value))[0]
    return rounded


# --------------------------------------------------------------------------- the NumPy reference


def np_newton_schulz(g: Array, coefficients: tuple[float, float, float], steps: int, eps: float) -> Array:
    """Burn's zeropower_via_newtonschulz, in the dtype of ``g``."""
    tall = g.shape[0] > g.shape[1]
    x = g.T if tall else g
    x = x / max(np.sqrt(np.sum(x * x)), x.dtype.type(eps))
    a, b, c = (x.dtype.type(v) for v in coefficients)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    out: Array = x.T if tall else x
    return out


def np_muon_step(
    w: Array, g: Array, velocity: Array | None, lr: float, config: MuonConfig
) -> tuple[Array, Array]:
    """One Muon step of a 2-D parameter, written from Burn's muon.rs, momentum.rs."""
    m = config.momentum
    v = g.copy() if velocity is None else g * (1.0 - m.dampening) + velocity * m.momentum
    u = v * m.momentum + g if m.nesterov else v
    coefficients = (
        f32(config.ns_coefficients[0]),
        f32(config.ns_coefficients[1]),
        f32(config.ns_coefficients[2]),
    )
    o = np_newton_schulz(u, coefficients, config.ns_steps, f32(config.epsilon))
    rows, cols = w.shape
    if config.adjust_lr_fn is AdjustLrFn.Original:
        ratio = math.sqrt(max(1.0, rows / cols))
    else:
        ratio = 0.2 * math.sqrt(max(rows, cols))
    if config.weight_decay is not None:
        w = w * (1.0 - lr * f32(config.weight_decay.penalty))
    return w - o * (lr * ratio), v


def run_against_numpy(config: MuonConfig, dtype: DType, steps: int = 4, lr: float = 0.02) -> float:
    """Largest |ferrum - numpy| over ``steps`` steps of a tall and a wide parameter."""
    rng = np.random.default_rng(7)
    np_dtype = np.float64 if dtype == DType.F64 else np.float32
    start = {"tall": rng.normal(size=(6, 3)), "wide": rng.normal(size=(3, 5))}
    model = Weights(
        tall=Param(Tensor.from_numpy(start["tall"], AD, dtype=dtype)),
        wide=Param(Tensor.from_numpy(start["wide"], AD, dtype=dtype)),
    )
    ref = {name: value.astype(np_dtype) for name, value in start.items()}
    velocity: dict[str, Array | None] = {"tall": None, "wide": None}
    optim = config.init()
    worst = 0.0
    for _ in range(steps):
        grads = GradientsParams()
        raw: dict[str, Array] = {}
        for name, param in model.named_parameters():
            g = rng.normal(scale=2.0, size=param.shape()).astype(np_dtype)
            grads.register(param.id, Tensor.from_numpy(g, INNER, dtype=dtype))
            raw[name] = g
        model = optim.step(lr, model, grads)
        for name, param in model.named_parameters():
            ref[name], velocity[name] = np_muon_step(ref[name], raw[name], velocity[name], lr, config)
            got = arr(param.val())
            assert got.dtype == np_dtype
            worst = max(worst, float(np.max(np.abs(got - ref[name]))))
    return worst


CONFIGS = [
    MuonConfig(),
    MuonConfig().with_momentum(MomentumConfig(momentum=0.9, dampening=0.1, nesterov=False)),
    MuonConfig().with_weight_decay(WeightDecayConfig(0.1)),
    MuonConfig().with_adjust_lr_fn(AdjustLrFn.MatchRmsAdamW).with_weight_decay(WeightDecayConfig(0.05)),
    MuonConfig().with_ns_steps(7).with_ns_coefficients((2.0, -1.5, 0.5)),
    MuonConfig().with_ns_steps(0),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_steps_match_the_numpy_recurrence_in_f64(config: MuonConfig) -> None:
    assert run_against_numpy(config, DType.F64) < 1e-12


@pytest.mark.parametrize("config", CONFIGS[:4])
def test_steps_match_the_numpy_recurrence_in_f32(config: MuonConfig) -> None:
    assert run_against_numpy(config, DType.F32) < 2e-5


def test_orthogonalize_matches_numpy_and_gives_near_orthonormal_rows() -> None:
    rng = np.random.default_rng(3)
    optim = MuonConfig().init()
    for shape in [(4, 4), (8, 4), (4, 8), (1, 5), (5, 1)]:
        g = rng.normal(size=shape)
        got = arr(optim.orthogonalize(Tensor.from_numpy(g, INNER, dtype=DType.F64)))
        ref = np_newton_schulz(g, (f32(3.4445), f32(-4.775), f32(2.0315)), 5, f32(1e-7))
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
        # Keller Jordan's coefficients put the singular values in about [0.7, 1.2].
        singular = np.linalg.svd(got, compute_uv=False)
        assert np.all((singular > 0.6) & (singular < 1.25)), singular


# --------------------------------------------------------------------------- Burn's tests


def test_adjust_lr_fn_original() -> None:
    method = AdjustLrFn.Original
    assert abs(method.adjustment_ratio([512, 512]) - 1.0) < TOLERANCE
    assert abs(method.adjustment_ratio([1024, 512]) - math.sqrt(2.0)) < TOLERANCE
    assert abs(method.adjustment_ratio([512, 1024]) - 1.0) < TOLERANCE
    assert method.adjustment_ratio([7]) == 1.0  # below rank 2: unchanged


def test_adjust_lr_fn_match_rms_adamw() -> None:
    method = AdjustLrFn.MatchRmsAdamW
    assert abs(method.adjustment_ratio([1024, 512]) - 0.2 * math.sqrt(1024.0)) < TOLERANCE
    assert abs(method.adjustment_ratio([512, 512]) - 0.2 * math.sqrt(512.0)) < TOLERANCE
    assert MuonConfig().adjust_lr_fn is AdjustLrFn.Original  # Burn's default


def test_1d_tensor_is_refused_with_its_shape() -> None:
    # Burn: "Newton-Schulz iteration requires 2D tensors, got 1D" (a panic).
    class Vector(Module[B]):
        v: Param[Tensor[B, Any]]

    model = Vector(v=Param(Tensor.zeros((512,), AD)))
    grads = GradientsParams()
    grads.register(model.v.id, Tensor.ones((512,), INNER))
    optim = MuonConfig().init()
    with pytest.raises(ShapeError, match=r"parameter 'v' has shape \[512\] \(1-D\).*2-D"):
        optim.step(0.01, model, grads)
    assert optim.to_record() == {}
    with pytest.raises(ShapeError, match=r"\[512\]"):
        optim.orthogonalize(Tensor.ones((512,), INNER))


def test_a_model_with_a_bias_is_refused_before_any_update() -> None:
    layer = LinearConfig(4, 3).init(AD)
    loss = layer.forward(Tensor.ones((2, 4), AD)).sum()
    grads = GradientsParams.from_grads(loss.backward(), layer)
    optim = MuonConfig().init()
    with pytest.raises(ShapeError, match=r"'bias' has shape \[3\]") as info:
        optim.step(0.01, layer, grads)
    assert isinstance(info.value, ValueError)
    assert optim.to_record() == {}  # the weight's momentum did not move either
    # Without a gradient for the bias (frozen), the weight alone is stepped.
    weight_only = GradientsParams()
    weight_grad = grads.get(layer.weight.id)
    assert weight_grad is not None
    weight_only.register(layer.weight.id, weight_grad)
    stepped = optim.step(0.01, layer, weight_only)
    assert not np.array_equal(arr(stepped.weight.val()), arr(layer.weight.val()))
    np.testing.assert_array_equal(arr(stepped.bias.val()), arr(layer.bias.val()))  # type: ignore[union-attr]


def test_muon_optimizer_save_load_state() -> None:
    linear = LinearConfig(6, 6, bias=False).init(AD)
    x = Tensor.random((2, 6), Distribution.Default, AD)
    optim = MuonConfig().init()
    grads = GradientsParams.from_grads(linear.forward(x).sum().backward(), linear)
    optim.step(0.01, linear, grads)
    before = optim.to_record()
    after = MuonConfig().init().load_record(optim.to_record()).to_record()
    assert len(before) == len(after) == 1
    key = str(linear.weight.id)
    np.testing.assert_array_equal(
        arr(before[key]["V1"]["Rank2"]["momentum"]["velocity"]),
        arr(after[key]["V1"]["Rank2"]["momentum"]["velocity"]),
    )


def burn_linear_no_bias(weight: list[list[float]]) -> Linear[TrainB]:
    layer = LinearConfig(4, 4, bias=False).init(AD)
    return layer.load_record({"weight": {"id": str(layer.weight.id), "param": Tensor.from_data(weight, AD)}})


def test_muon_with_weight_decay() -> None:
    linear = burn_linear_no_bias([[1.0] * 4] * 4)
    x = Tensor.from_data([[0.5] * 4] * 2, AD).require_grad()
    optim = MuonConfig().with_weight_decay(WeightDecayConfig(0.01)).init()
    grads = GradientsParams.from_grads(linear.forward(x).sum().backward(), linear)
    linear = optim.step(0.01, linear, grads)
    assert np.all(arr(linear.weight.val()) < 1.0)


def test_newton_schulz_orthogonalization() -> None:
    o = MuonConfig().init().orthogonalize(Tensor.from_data([[1.0, 0.5], [0.5, 1.0]], INNER))
    product = arr(o.matmul(o.transpose()))
    assert abs(product[0, 0] - 1.0) < 0.1
    assert abs(product[1, 1] - 1.0) < 0.1


def test_tall_matrix_transpose() -> None:
    optim = MuonConfig().init()
    tall_rows = [
        [1.0, 0.5, 0.3, 0.2],
        [0.5, 1.0, 0.4, 0.1],
        [0.3, 0.4, 1.0, 0.5],
        [0.2, 0.1, 0.5, 1.0],
        [0.1, 0.2, 0.3, 0.4],
        [0.4, 0.3, 0.2, 0.1],
        [0.2, 0.4, 0.1, 0.3],
        [0.3, 0.1, 0.4, 0.2],
    ]
    tall = Tensor.from_data(tall_rows, INNER)
    out = optim.orthogonalize(tall)
    assert out.dims() == (8, 4)
    assert not np.array_equal(arr(out), arr(tall))
    # The tall result is the transposed result of the wide (transposed) input.
    wide = tall.transpose()
    out_wide = optim.orthogonalize(wide)
    assert out_wide.dims() == (4, 8)
    np.testing.assert_allclose(arr(out_wide), arr(out).T, rtol=0, atol=1e-6)


def test_zero_gradient() -> None:
    rows = [[1.0, 0.5, 0.3, 0.2], [0.5, 1.0, 0.4, 0.1], [0.3, 0.4, 1.0, 0.5], [0.2, 0.1, 0.5, 1.0]]
    for penalty in (None, 0.01):
        config = MuonConfig(weight_decay=None if penalty is None else WeightDecayConfig(penalty))
        linear = burn_linear_no_bias(rows)
        grads = GradientsParams()
        grads.register(linear.weight.id, Tensor.zeros((4, 4), INNER))
        optim = config.init()
        updated = arr(optim.step(0.01, linear, grads).weight.val())
        assert str(linear.weight.id) in optim.to_record()
        original = np.array(rows, dtype=np.float32)
        assert not np.any(np.isnan(updated))
        if penalty is None:
            assert np.all(np.abs(updated - original) < 1e-6)
        else:
            assert np.all(np.abs(updated) < np.abs(original))
            np.testing.assert_allclose(updated, original * (1 - 0.01 * f32(penalty)), rtol=1e-6)


# --------------------------------------------------------------------------- records


def muon_weights(seed: int) -> Weights[TrainB]:
    rng = np.random.default_rng(seed)
    return Weights(
        tall=Param(Tensor.from_numpy(rng.normal(size=(5, 2)).astype(np.float32), AD)),
        wide=Param(Tensor.from_numpy(rng.normal(size=(2, 4)).astype(np.float32), AD)),
    )


def quadratic_grads(model: Weights[TrainB]) -> GradientsParams:
    loss = model.tall.val().square().sum().add(model.wide.val().mul_scalar(3.0).sin().sum())
    return GradientsParams.from_grads(loss.backward(), model)


def test_record_round_trip_resumes_training_identically(tmp_path: Path) -> None:
    model, optim = muon_weights(1), MuonConfig().with_weight_decay(WeightDecayConfig(0.01)).init()
    for _ in range(3):
        model = optim.step(0.05, model, quadratic_grads(model))
    record = optim.to_record()
    # Burn's AdaptorRecord of MuonState: {"V1": {"Rank2": {"momentum": {"velocity": [rows, cols]}}}}.
    for param in model.parameters():
        versioned = record[str(param.id)]
        assert list(versioned) == ["V1"] and list(versioned["V1"]) == ["Rank2"]
        state = versioned["V1"]["Rank2"]
        assert list(state) == ["momentum"] and list(state["momentum"]) == ["velocity"]
        assert state["momentum"]["velocity"].dims() == param.shape()
    recorder = BinFileRecorder(FullPrecisionSettings)
    recorder.record(record, tmp_path / "muon")
    from_bin = recorder.load(tmp_path / "muon", INNER, optim.record_schema(INNER))
    mpk = NamedMpkFileRecorder(FullPrecisionSettings)
    mpk.record(record, tmp_path / "muon")
    from_mpk = mpk.load(tmp_path / "muon", INNER)
    grads = quadratic_grads(model)
    expected = optim.step(0.05, model, grads)
    for loaded in (record, from_bin, from_mpk):
        restored = MuonConfig().with_weight_decay(WeightDecayConfig(0.01)).init().load_record(loaded)
        got = restored.step(0.05, model, grads)
        for (_, a), (_, b) in zip(expected.named_parameters(), got.named_parameters(), strict=True):
            np.testing.assert_array_equal(arr(a.val()), arr(b.val()))


def test_the_first_step_has_no_state_and_a_fresh_optimizer_differs_from_a_resumed_one() -> None:
    model, optim = muon_weights(2), MuonConfig().init()
    model = optim.step(0.05, model, quadratic_grads(model))
    grads = quadratic_grads(model)
    resumed = optim.step(0.05, model, grads)
    fresh = MuonConfig().init().step(0.05, model, grads)
    assert not np.allclose(arr(resumed.tall.val()), arr(fresh.tall.val()))


def test_a_bad_record_names_the_entry() -> None:
    optim = MuonConfig().init()
    with pytest.raises(ValueError, match=r"'7\.momentum' has no 'velocity'"):
        optim.load_record({"7": {"V1": {"Rank2": {"momentum": {}}}}})
    with pytest.raises(ValueError, match=r"'7' has no 'momentum'"):
        optim.load_record({"7": {"V1": {"Rank2": {"velocity": Tensor.zeros((2, 2), INNER)}}}})


# --------------------------------------------------------------------------- clipping


def test_value_clipping_clips_each_gradient_before_momentum() -> None:
    config = MuonConfig()
    optim = config.init().with_grad_clipping(GradientClippingConfig.Value(0.5).init())
    assert optim.has_gradient_clipping() and not config.init().has_gradient_clipping()
    w = np.array([[0.3, -0.2, 0.1], [0.5, 0.4, -0.6]])
    g = np.array([[2.0, -0.1, 0.3], [-3.0, 0.2, 0.7]])

    class One(Module[B]):
        w: Param[Tensor[B, D2]]

    model = One(w=Param(Tensor.from_numpy(w, AD, dtype=DType.F64)))
    grads = GradientsParams()
    grads.register(model.w.id, Tensor.from_numpy(g, INNER, dtype=DType.F64))
    got = arr(optim.step(0.1, model, grads).w.val())
    clipped, _ = np_muon_step(w, np.clip(g, -0.5, 0.5), None, 0.1, config)
    unclipped, _ = np_muon_step(w, g, None, 0.1, config)
    np.testing.assert_allclose(got, clipped, rtol=0, atol=1e-12)
    assert not np.allclose(got, unclipped)


def test_norm_clipping_bounds_the_momentum_it_feeds() -> None:
    # The orthogonalisation divides by the norm, so the clipped size shows in the velocity.
    model = muon_weights(4)
    optim = MuonConfig().init().with_grad_clipping(GradientClippingConfig.Norm(0.25))
    optim.step(0.05, model, quadratic_grads(model))
    for state in optim.to_record().values():
        velocity = arr(state["V1"]["Rank2"]["momentum"]["velocity"])
        assert np.linalg.norm(velocity) == pytest.approx(0.25, rel=1e-5)
    with pytest.raises(TypeError, match="GradientClipping"):
        optim.with_grad_clipping(0.5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- config


def test_config_defaults_are_burns() -> None:
    c = MuonConfig()
    assert c.weight_decay is None
    assert c.momentum == MomentumConfig(momentum=0.95, dampening=0.0, nesterov=True)
    assert c.ns_coefficients == (3.4445, -4.775, 2.0315)
    assert c.epsilon == 1e-7 and c.ns_steps == 5 and c.adjust_lr_fn is AdjustLrFn.Original
    assert isinstance(c.init(), Muon)


def test_config_serde_is_burns_json() -> None:
    c = MuonConfig(weight_decay=WeightDecayConfig(0.1), adjust_lr_fn=AdjustLrFn.MatchRmsAdamW)
    data = c.to_dict()
    assert data["adjust_lr_fn"] == "MatchRmsAdamW"
    assert data["ns_coefficients"] == [3.4445, -4.775, 2.0315]
    assert data["momentum"] == {"momentum": 0.95, "dampening": 0.0, "nesterov": True}
    assert MuonConfig.from_dict(data) == c


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"epsilon": 0.0}, r"MuonConfig\.epsilon must be in \(0\.0, inf.*found 0\.0"),
        ({"epsilon": float("nan")}, r"MuonConfig\.epsilon must be a finite number, found nan"),
        ({"ns_steps": -1}, r"MuonConfig\.ns_steps must be an int >= 0, found -1"),
        ({"ns_steps": 2.5}, r"MuonConfig\.ns_steps must be an int >= 0, found 2\.5"),
        ({"ns_steps": True}, r"MuonConfig\.ns_steps must be an int >= 0, found True"),
        ({"ns_coefficients": (1.0, 2.0)}, r"MuonConfig\.ns_coefficients must be a tuple \(a, b, c\)"),
        ({"ns_coefficients": (1.0, float("inf"), 2.0)}, r"MuonConfig\.ns_coefficients\[1\] must be a finite"),
        ({"adjust_lr_fn": "Original"}, r"MuonConfig\.adjust_lr_fn must be AdjustLrFn\..*found 'Original'"),
        ({"momentum": 0.9}, r"MuonConfig\.momentum must be a MomentumConfig, found float"),
        ({"weight_decay": 0.1}, r"MuonConfig\.weight_decay must be a WeightDecayConfig or None, found float"),
    ],
)
def test_bad_config_values_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MuonConfig(**change)


def test_bad_step_arguments() -> None:
    model = muon_weights(5)
    with pytest.raises(ValueError, match="learning rate must be a finite number, found nan"):
        MuonConfig().init().step(float("nan"), model, quadratic_grads(model))


# --------------------------------------------------------------------------- training


class Mlp(Module[B]):
    hidden: Linear[B]
    output: Linear[B]
    relu: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return self.output.forward(self.relu.forward(self.hidden.forward(x)))


def test_muon_trains_a_two_layer_mlp() -> None:
    TrainB.seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4)).astype(np.float32)
    y = np.stack([np.sin(x[:, 0]) + x[:, 1] * x[:, 2], np.cos(x[:, 3])], axis=1).astype(np.float32)
    inputs, targets = Tensor.from_numpy(x, AD), Tensor.from_numpy(y, AD)
    model = Mlp(LinearConfig(4, 32, bias=False).init(AD), LinearConfig(32, 2, bias=False).init(AD), Relu())
    optim = MuonConfig().init()
    loss_fn = MseLoss()
    losses = []
    for _ in range(60):
        loss = loss_fn.forward(model.forward(inputs), targets)
        losses.append(loss.into_scalar())
        model = optim.step(0.02, model, GradientsParams.from_grads(loss.backward(), model))
    assert losses[-1] < 0.5 * losses[0], losses
    assert all(math.isfinite(value) for value in losses)


def test_muon_next_to_adamw_for_the_biases() -> None:
    # Burn's advice: Muon for the weight matrices, AdamW for the rest.
    layer = LinearConfig(3, 2).init(AD)
    loss = layer.forward(Tensor.ones((4, 3), AD)).square().sum()
    grads = GradientsParams.from_grads(loss.backward(), layer)
    weight, bias = GradientsParams(), GradientsParams()
    weight_grad, bias_grad = grads.get(layer.weight.id), grads.get(layer.bias.id)  # type: ignore[union-attr]
    assert weight_grad is not None and bias_grad is not None
    weight.register(layer.weight.id, weight_grad)
    bias.register(layer.bias.id, bias_grad)  # type: ignore[union-attr]
    stepped = AdamWConfig().init().step(0.01, MuonConfig().init().step(0.01, layer, weight), bias)
    assert not np.array_equal(arr(stepped.weight.val()), arr(layer.weight.val()))
    assert not np.array_equal(arr(stepped.bias.val()), arr(layer.bias.val()))  # type: ignore[union-attr]
