"""Mixed-precision training: Precision, MixedPrecision, GradScaler and the Learner's with_precision.

References are independent of ferrum: gradients by hand-written NumPy
backpropagation, the loss scale by PyTorch's documented update rule, saved
records read back and compared with the weights the run returned.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import D1, D2, DType, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, Relu
from ferrum.nn.loss import MseLoss
from ferrum.nn.norm import BatchNorm, BatchNormConfig
from ferrum.optim import AdamConfig, GradientsParams, SgdConfig
from ferrum.record import FullPrecisionSettings, HalfPrecisionSettings, NamedMpkFileRecorder
from ferrum.train import (
    ClassificationOutput,
    GradScaler,
    Learner,
    MixedPrecision,
    PlainRenderer,
    Precision,
    Split,
    SupervisedTraining,
    TrainOutput,
    scale_loss,
)
from ferrum.train.metric import AccuracyMetric, LossMetric

from tests.support.train_setup import TinyNet, TrainB, learner, loaders, training, weights

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend
F32 = np.float32
# bf16 keeps 8 significant bits: one rounding is a relative error of at most 2**-9.
BF16_EPS = 2.0**-8


def to_bf16(values: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Round f32 values to the nearest bf16 (ties to even), as NumPy f32."""
    bits = np.asarray(values, dtype=F32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(F32)


class Mlp(Module[B]):
    fc1: Linear[B]
    fc2: Linear[B]
    relu: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return self.fc2.forward(self.relu.forward(self.fc1.forward(x)))


def mlp(seed: int = 0) -> Mlp[TrainB]:
    """A 6-12-3 MLP with weights drawn by NumPy (so the reference knows them)."""
    rng = np.random.default_rng(seed)
    device = TrainB.device()

    def layer(d_in: int, d_out: int) -> Linear[TrainB]:
        base: Linear[TrainB] = LinearConfig(d_in, d_out).init(device)
        w = (rng.standard_normal((d_in, d_out)) / np.sqrt(d_in)).astype(F32)
        b = (rng.standard_normal(d_out) * 0.1).astype(F32)
        assert base.bias is not None
        return base.replace(
            weight=base.weight.with_value(Tensor.from_data(w, device)),
            bias=base.bias.with_value(Tensor.from_data(b, device)),
        )

    return Mlp(layer(6, 12), layer(12, 3), Relu())


def numpy_mlp_grads(
    params: dict[str, npt.NDArray[Any]], x: npt.NDArray[Any], y: npt.NDArray[Any]
) -> dict[str, npt.NDArray[np.float64]]:
    """Gradients of mean((relu(x W1 + b1) W2 + b2 - y)^2), by hand, in f64."""
    w1, b1 = params["fc1.weight"].astype(np.float64), params["fc1.bias"].astype(np.float64)
    w2, b2 = params["fc2.weight"].astype(np.float64), params["fc2.bias"].astype(np.float64)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    h_pre = x64 @ w1 + b1
    h = np.maximum(h_pre, 0.0)
    out = h @ w2 + b2
    d_out = 2.0 * (out - y64) / out.size
    d_h = (d_out @ w2.T) * (h_pre > 0)
    return {
        "fc1.weight": x64.T @ d_h,
        "fc1.bias": d_h.sum(0),
        "fc2.weight": h.T @ d_out,
        "fc2.bias": d_out.sum(0),
    }


def batch(seed: int = 1, n: int = 16) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 6)).astype(F32), rng.standard_normal((n, 3)).astype(F32)


def named_grads(model: Module[Any], grads: GradientsParams) -> dict[str, Tensor[Any, Any]]:
    out = {}
    for path, param in model.named_parameters():
        grad = grads.get(param.id)
        assert grad is not None, path
        out[path] = grad
    return out


# ---- Precision and the policy object


def test_precision_names_and_dtypes() -> None:
    assert [p.value for p in Precision] == ["32-true", "bf16-mixed", "16-mixed"]
    assert Precision("16-mixed") is Precision.F16_MIXED
    assert Precision.FULL.compute_dtype == DType.F32 and not Precision.FULL.is_mixed
    assert Precision.BF16_MIXED.compute_dtype == DType.BF16 and not Precision.BF16_MIXED.scales_loss
    assert Precision.F16_MIXED.compute_dtype == DType.F16 and Precision.F16_MIXED.scales_loss


def test_mixed_precision_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"unknown precision 'bf16'.*'bf16-mixed'"):
        MixedPrecision("bf16")
    with pytest.raises(TypeError, match="takes a Precision, found int"):
        MixedPrecision(16)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Precision\.FULL takes none"):
        MixedPrecision(Precision.FULL, GradScaler())
    with pytest.raises(TypeError, match="scaler must be a GradScaler, found float"):
        MixedPrecision(Precision.F16_MIXED, 1024.0)  # type: ignore[arg-type]
    assert MixedPrecision(Precision.BF16_MIXED).scaler is None
    assert MixedPrecision(Precision.F16_MIXED).scaler is not None


def test_working_copy_casts_parameters_and_keeps_ids() -> None:
    model = mlp()
    working = MixedPrecision(Precision.BF16_MIXED).working_copy(model)
    for (path, master), (_, low) in zip(model.named_parameters(), working.named_parameters(), strict=True):
        assert low.id == master.id, path
        assert master.val().dtype == DType.F32 and low.val().dtype == DType.BF16
        assert low.val().device().is_autodiff and low.is_require_grad()
        np.testing.assert_array_equal(low.val().cast(DType.F32).to_numpy(), to_bf16(master.val().to_numpy()))
    assert MixedPrecision(Precision.FULL).working_copy(model) is model


def test_cast_batch_walks_containers_and_keeps_int_tensors() -> None:
    from dataclasses import dataclass
    from typing import NamedTuple

    device = NdArray.device()

    @dataclass(frozen=True)
    class Pair:
        x: Tensor[NdArray, D2]
        label: Tensor[NdArray, D1, Any]

    class Named(NamedTuple):
        a: Tensor[NdArray, D1]
        tag: str

    x = Tensor.from_data(np.full((2, 2), 1.0 / 3.0, F32), device)
    label = Tensor.from_data([1, 2], device)
    mixed = MixedPrecision(Precision.F16_MIXED)
    batch: dict[str, Any] = {"pair": Pair(x, label), "list": [x, Named(x.reshape((4,)), "t")], "n": 3}
    out = mixed.cast_batch(batch)
    assert isinstance(out["pair"], Pair) and out["pair"].x.dtype == DType.F16
    assert out["pair"].label.dtype == label.dtype
    named = out["list"][1]
    assert isinstance(named, Named) and named.a.dtype == DType.F16 and named.tag == "t"
    assert out["n"] == 3
    np.testing.assert_allclose(out["list"][0].cast(DType.F32).to_numpy(), float(np.float16(1.0 / 3.0)))
    back = mixed.to_full(out["pair"])
    assert back.x.dtype == DType.F32 and back.label.dtype == label.dtype


# ---- gradients and the optimizer step


def test_bf16_mixed_gradients_match_numpy_within_bf16_tolerance() -> None:
    model = mlp()
    x, y = batch()
    mixed = MixedPrecision(Precision.BF16_MIXED)
    working = mixed.working_copy(model)
    device = TrainB.device()
    xt, yt = mixed.cast_batch((Tensor.from_data(x, device), Tensor.from_data(y, device)))
    loss = MseLoss().forward(working.forward(xt), yt)
    assert loss.dtype == DType.BF16
    grads = named_grads(model, mixed.master_grads(mixed.scale(loss).backward(), working))

    # The reference: f64 backprop on the bf16-rounded weights and inputs the working copy holds.
    rounded = {path: to_bf16(p) for path, p in weights(model).items()}
    reference = numpy_mlp_grads(rounded, to_bf16(x), to_bf16(y))
    exact = numpy_mlp_grads(weights(model), x, y)
    for path, grad in grads.items():
        assert grad.dtype == DType.F32, path
        got = grad.to_numpy()
        scale = np.abs(reference[path]).max()
        # A few bf16 roundings along the chain (products, sums of up to 16 terms).
        np.testing.assert_allclose(got, reference[path], rtol=0, atol=8 * BF16_EPS * scale, err_msg=path)
        # And against the f32 model's exact gradients: bf16's own error on top.
        np.testing.assert_allclose(got, exact[path], rtol=0, atol=16 * BF16_EPS * scale, err_msg=path)


def test_f32_gradients_of_the_same_model_match_numpy_tightly() -> None:
    # The same check in FULL: the reference is right, and the tolerance above is bf16's, not a bug's.
    model = mlp()
    x, y = batch()
    device = TrainB.device()
    mixed = MixedPrecision(Precision.FULL)
    loss = MseLoss().forward(model.forward(Tensor.from_data(x, device)), Tensor.from_data(y, device))
    grads = named_grads(model, mixed.master_grads(loss.backward(), model))
    exact = numpy_mlp_grads(weights(model), x, y)
    for path, grad in grads.items():
        np.testing.assert_allclose(grad.to_numpy(), exact[path], rtol=1e-4, atol=1e-6, err_msg=path)


def test_step_updates_the_f32_master_below_bf16_resolution() -> None:
    # An update of 1e-4 on a weight near 1 is lost in bf16 (its spacing there is 2**-7):
    # the master weights keep it.
    model = mlp()
    x, y = batch()
    device = TrainB.device()
    mixed = MixedPrecision(Precision.BF16_MIXED)
    working = mixed.working_copy(model)
    xt, yt = mixed.cast_batch((Tensor.from_data(x, device), Tensor.from_data(y, device)))
    grads = mixed.master_grads(MseLoss().forward(working.forward(xt), yt).backward(), working)
    lr = 1e-3
    before = weights(model)
    updated = mixed.step(SgdConfig().init(), lr, model, grads)
    after = weights(updated)
    for path, param in updated.named_parameters():
        assert param.val().dtype == DType.F32
        grad = grads.get(param.id)
        assert grad is not None
        expected = before[path] - F32(lr) * grad.to_numpy()
        np.testing.assert_allclose(after[path], expected, rtol=0, atol=1e-7, err_msg=path)
    changed = after["fc1.weight"] != before["fc1.weight"]
    # Most of these updates are smaller than half a bf16 step: a bf16 model would not have moved.
    lost_in_bf16 = to_bf16(after["fc1.weight"]) == to_bf16(before["fc1.weight"])
    assert (changed & lost_in_bf16).sum() > changed.sum() // 2


def test_adam_state_stays_f32_under_bf16_mixed() -> None:
    model = mlp()
    x, y = batch()
    device = TrainB.device()
    mixed = MixedPrecision(Precision.BF16_MIXED)
    optimizer = AdamConfig().init()
    for _ in range(2):
        working = mixed.working_copy(model)
        xt, yt = mixed.cast_batch((Tensor.from_data(x, device), Tensor.from_data(y, device)))
        grads = mixed.master_grads(MseLoss().forward(working.forward(xt), yt).backward(), working)
        model = mixed.step(optimizer, 1e-3, model, grads)
    record = optimizer.to_record()
    moments = [
        tensor
        for state in record.values()
        for rank in state["V1"].values()
        for tensor in rank["momentum"].values()
        if isinstance(tensor, Tensor)
    ]
    assert len(moments) == 2 * 4
    assert all(t.dtype == DType.F32 for t in moments)


def test_batchnorm_running_statistics_come_back_to_the_master_in_f32() -> None:
    class Normed(Module[B]):
        norm: BatchNorm[B]

    device = TrainB.device()
    model = Normed(BatchNormConfig(3).init(device))
    mixed = MixedPrecision(Precision.BF16_MIXED)
    x = np.random.default_rng(4).normal(2.0, 1.0, (32, 3, 5)).astype(F32)
    working = mixed.working_copy(model)
    working.norm.forward(mixed.cast_batch(Tensor.from_data(x, device))).sum().backward()
    mixed.sync_states(model, working)
    mean = model.norm.running_mean.value()
    assert mean.dtype == DType.F32
    # Burn's momentum 0.1: 0.9 * 0 + 0.1 * batch mean, the batch mean of bf16 inputs.
    expected = 0.1 * to_bf16(x).astype(np.float64).mean(axis=(0, 2))
    np.testing.assert_allclose(mean.to_numpy(), expected, rtol=2 * BF16_EPS)


# ---- loss scaling


def test_grad_scaler_follows_pytorch_update_rule() -> None:
    scaler = GradScaler()
    assert (scaler.scale, scaler.growth_factor, scaler.backoff_factor, scaler.growth_interval) == (
        65536.0,
        2.0,
        0.5,
        2000,
    )
    small = GradScaler(init_scale=1024.0, growth_interval=3)
    history = []
    for found_inf in [False, False, False, False, True, False, False, False]:
        small.update(found_inf)
        history.append((small.scale, small.growth_tracker))
    # Grows on the 3rd finite step in a row; an overflow halves it and restarts the count.
    assert history == [
        (1024.0, 1),
        (1024.0, 2),
        (2048.0, 0),
        (2048.0, 1),
        (1024.0, 0),
        (1024.0, 1),
        (1024.0, 2),
        (2048.0, 0),
    ]
    assert small.skipped_steps == 1


def test_grad_scaler_never_grows_past_f32_range() -> None:
    scaler = GradScaler(init_scale=2.0**127, growth_interval=1)
    scaler.update(False)
    assert scaler.scale == 2.0**127 and scaler.growth_tracker == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"init_scale": 0.0}, "init_scale must be > 0"),
        ({"init_scale": float("inf")}, "init_scale must be a finite number"),
        ({"growth_factor": 1.0}, "growth_factor must be > 1"),
        ({"backoff_factor": 1.0}, r"backoff_factor must be \(0, 1\)"),
        ({"backoff_factor": 0.0}, r"backoff_factor must be \(0, 1\)"),
        ({"growth_interval": 0}, "growth_interval must be an int >= 1, found 0"),
        ({"growth_interval": 2.5}, "growth_interval must be an int >= 1, found 2.5"),
    ],
)
def test_grad_scaler_rejects_bad_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GradScaler(**kwargs)


def test_grad_scaler_record_round_trip_and_errors() -> None:
    scaler = GradScaler(init_scale=512.0, growth_interval=5)
    for found_inf in (False, True, False, False):
        scaler.update(found_inf)
    restored = GradScaler().load_record(scaler.to_record())
    assert (restored.scale, restored.growth_tracker, restored.growth_interval) == (256.0, 2, 5)
    with pytest.raises(ValueError, match="missing growth_tracker"):
        GradScaler().load_record({"scale": 2.0})
    with pytest.raises(ValueError, match=r"growth_tracker must be an int in \[0, 2000\), found 2000"):
        GradScaler().load_record({"scale": 2.0, "growth_tracker": 2000})
    with pytest.raises(ValueError, match="a GradScaler record is a dict, found list"):
        GradScaler().load_record([])  # type: ignore[arg-type]


def f16_step(
    model: Mlp[TrainB], mixed: MixedPrecision, x: npt.NDArray[Any], lr: float
) -> tuple[Mlp[TrainB], GradientsParams]:
    device = TrainB.device()
    working = mixed.working_copy(model)
    out = working.forward(mixed.cast_batch(Tensor.from_data(x, device)))
    loss = out.sum() * (1.0 / out.num_elements())
    grads = mixed.master_grads(mixed.scale(loss).backward(), working)
    return mixed.step(SgdConfig().init(), lr, model, grads), grads


def test_f16_overflow_skips_the_step_and_backs_off() -> None:
    # d loss / d fc2.bias = 1/3 per output, d fc2.weight = mean relu(h): with inputs of 40 the
    # hidden activations reach ~100, so at scale 4096 the scaled gradients pass f16's 65504.
    model = mlp()
    x = np.full((4, 6), 40.0, F32)
    mixed = MixedPrecision(Precision.F16_MIXED, GradScaler(init_scale=4096.0, growth_interval=2))
    before = weights(model)
    h = np.maximum(x.astype(np.float64) @ before["fc1.weight"] + before["fc1.bias"], 0.0)
    assert (h.mean(0) / 3.0 * 4096.0).max() > 65504.0  # the crafted overflow
    model, grads = f16_step(model, mixed, x, 0.01)
    assert any(not np.isfinite(g.to_numpy()).all() for _, g in grads)
    assert mixed.scaler is not None
    assert (mixed.scaler.scale, mixed.scaler.skipped_steps) == (2048.0, 1)
    for path, value in weights(model).items():
        np.testing.assert_array_equal(value, before[path], err_msg=f"{path} moved on a skipped step")

    # Backed off until the scaled gradients fit: each overflow halves the scale again.
    steps = 0
    while mixed.scaler.skipped_steps == steps + 1 and steps < 10:
        steps += 1
        model, grads = f16_step(model, mixed, x, 0.01)
    expected_scale = 4096.0 / 2 ** (mixed.scaler.skipped_steps)
    assert mixed.scaler.scale == expected_scale
    assert (h.mean(0) / 3.0 * expected_scale * 2).max() > 65504.0 > (h.mean(0) / 3.0 * expected_scale).max()
    # The step that went through used the unscaled f32 gradients: fc2.bias's is exactly 1/3.
    assert model.fc2.bias is not None
    bias = grads.get(model.fc2.bias.id)
    assert bias is not None
    np.testing.assert_allclose(bias.to_numpy(), np.full(3, 1.0 / 3.0), rtol=1e-3)
    np.testing.assert_allclose(weights(model)["fc2.bias"], before["fc2.bias"] - 0.01 / 3.0, rtol=0, atol=1e-5)


def test_f16_scale_grows_after_growth_interval_finite_steps() -> None:
    model = mlp()
    x, _ = batch()
    mixed = MixedPrecision(Precision.F16_MIXED, GradScaler(init_scale=256.0, growth_interval=2))
    scales = []
    for _ in range(5):
        model, _ = f16_step(model, mixed, x, 1e-3)
        assert mixed.scaler is not None
        scales.append(mixed.scaler.scale)
    assert scales == [256.0, 512.0, 512.0, 1024.0, 1024.0]


def test_scale_loss_outside_and_inside_a_policy() -> None:
    loss = Tensor.from_floats([0.5], NdArray.device())
    assert scale_loss(loss) is loss
    with MixedPrecision(Precision.BF16_MIXED).activate():
        assert scale_loss(loss) is loss
    with MixedPrecision(Precision.F16_MIXED, GradScaler(init_scale=8.0)).activate():
        assert scale_loss(loss).into_scalar() == 4.0
    assert scale_loss(loss) is loss
    with pytest.raises(TypeError, match="Float loss tensor"):
        with MixedPrecision(Precision.F16_MIXED).activate():
            scale_loss(Tensor.from_data([1], NdArray.device()))  # type: ignore[arg-type]


# ---- the Learner


def test_learner_bf16_mixed_trains_and_returns_f32_weights(tmp_path: Path) -> None:
    def run(precision: Precision, directory: Path) -> tuple[float, float, dict[str, Any]]:
        result = training(directory, epochs=3).with_precision(precision).launch(learner())
        accuracy = result.summary.metric("Accuracy", Split.Valid).last
        loss = result.summary.metric("Loss", Split.Train).last
        assert all(p.val().dtype == DType.F32 for p in result.model.parameters())
        return accuracy, loss, weights(result.model)

    acc32, loss32, w32 = run(Precision.FULL, tmp_path / "f32")
    acc16, loss16, w16 = run(Precision.BF16_MIXED, tmp_path / "bf16")
    # 18 steps of Adam: the training loss falls from ~1.13 in the first epoch to ~0.73 in the third.
    assert loss16 < 0.8 and acc16 > 80.0
    assert abs(loss16 - loss32) < 0.02
    assert abs(acc16 - acc32) <= 7.0  # 32 validation items: one item is 3.1 points
    # The runs differ (bf16 rounding) but stay close after 18 steps of Adam.
    assert any(not np.array_equal(w32[k], w16[k]) for k in w32)
    for k in w32:
        np.testing.assert_allclose(w16[k], w32[k], atol=0.05, err_msg=k)


def test_learner_checkpoints_hold_the_f32_master_weights(tmp_path: Path) -> None:
    full = NamedMpkFileRecorder(FullPrecisionSettings)
    result = (
        training(tmp_path, epochs=2)
        .with_file_checkpointer(full)
        .with_precision(Precision.BF16_MIXED)
        .launch(learner())
    )
    trained = weights(result.model)
    loaded = tiny_fresh().load_file(tmp_path / "checkpoint" / "model-2", full, NdArray.device())
    for path, value in weights(loaded).items():
        np.testing.assert_array_equal(value, trained[path], err_msg=path)
    # The master weights are f32 values, not bf16 ones: most fall between bf16 numbers.
    w = trained["fc1.weight"]
    assert (to_bf16(w) != w).mean() > 0.9

    # Half-precision records (Burn's HalfPrecisionSettings) store them rounded to f16.
    half = NamedMpkFileRecorder(HalfPrecisionSettings)
    result.model.save_file(tmp_path / "half", half)
    halved = weights(tiny_fresh().load_file(tmp_path / "half", half, NdArray.device()))
    np.testing.assert_array_equal(halved["fc1.weight"], w.astype(np.float16).astype(F32))


def tiny_fresh() -> TinyNet[NdArray]:
    from tests.support.train_setup import tiny_net

    return tiny_net(NdArray.device())


class ScaledNet(TinyNet[B]):
    """TinyNet whose training step scales its loss, as F16_MIXED needs."""

    def train_step(
        self: ScaledNet[Autodiff[I]], batch: Any
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        item = self.classify(batch)
        return TrainOutput(self, scale_loss(item.loss).backward(), item)


def test_learner_f16_mixed_needs_scale_loss_and_trains_with_it(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"call ferrum.train.scale_loss\(loss\).backward\(\)"):
        training(tmp_path / "plain", epochs=1).with_precision(Precision.F16_MIXED).launch(learner())

    base = learner()
    model = ScaledNet(base.model.fc1, base.model.dropout, base.model.fc2, base.model.relu)
    mixed = MixedPrecision(Precision.F16_MIXED, GradScaler(init_scale=2.0**16, growth_interval=4))
    result = training(tmp_path / "scaled", epochs=3).with_precision(mixed).launch(
        Learner(model, AdamConfig().init(), 1e-2)
    )
    assert mixed.scaler is not None
    # The loss is f16 here, so its gradient seed 2**16 is already past f16's range: the first
    # step overflows and is skipped, and the scale backs off until steps go through.
    assert mixed.scaler.skipped_steps >= 1
    assert result.summary.metric("Accuracy", Split.Valid).last > 80.0
    assert all(p.val().dtype == DType.F32 for p in result.model.parameters())


def test_with_precision_rejects_other_values(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"with_precision needs a Precision .* found str"):
        training(tmp_path).with_precision("bf16-mixed")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="set_precision takes a Precision or a MixedPrecision, found int"):
        learner().set_precision(3)  # type: ignore[arg-type]


def test_learner_losses_reach_the_metrics_in_f32(tmp_path: Path) -> None:
    seen: list[DType] = []

    class Spy(LossMetric):
        def update(self, item: Any, metadata: Any) -> Any:
            seen.append(item.loss.dtype)
            return super().update(item, metadata)

    train, valid = loaders()
    (
        SupervisedTraining(tmp_path, train, valid)
        .metrics(Spy(), AccuracyMetric())
        .renderer(PlainRenderer(interval=3600.0, stream=io.StringIO()))
        .with_plots(False)
        .with_precision(Precision.BF16_MIXED)
        .launch(learner())
    )
    assert seen and set(seen) == {DType.F32}


def test_f16_checkpoints_hold_the_loss_scale_and_resume_restores_it(tmp_path: Path) -> None:
    def scaled_learner(mixed: MixedPrecision) -> Learner[ScaledNet[TrainB]]:
        base = learner()
        model = ScaledNet(base.model.fc1, base.model.dropout, base.model.fc2, base.model.relu)
        return Learner(model, AdamConfig().init(), 1e-2, precision=mixed)

    first = MixedPrecision(Precision.F16_MIXED, GradScaler(init_scale=2.0**16, growth_interval=4))
    training(tmp_path, epochs=2).launch(scaled_learner(first))
    assert first.scaler is not None and first.scaler.scale != 2.0**16  # it moved during the run
    saved = json.loads((tmp_path / "checkpoint" / "training-2.json").read_text())["grad_scaler"]
    assert saved == first.scaler.to_record()

    # Resuming after the last epoch trains nothing: the learner holds what the checkpoint restored.
    second = MixedPrecision(Precision.F16_MIXED, GradScaler(init_scale=2.0**16, growth_interval=4))
    training(tmp_path, epochs=2).checkpoint(2).launch(scaled_learner(second))
    assert second.scaler is not None
    assert (second.scaler.scale, second.scaler.growth_tracker) == (saved["scale"], saved["growth_tracker"])

    # A bf16 or f32 run writes no scaler state.
    training(tmp_path / "bf16", epochs=1).with_precision(Precision.BF16_MIXED).launch(learner())
    state = json.loads((tmp_path / "bf16" / "checkpoint" / "training-1.json").read_text())
    assert "grad_scaler" not in state


def test_a_corrupt_grad_scaler_state_is_refused_naming_the_file() -> None:
    from ferrum.train.checkpoint.state import TrainingState

    state = TrainingState.capture(
        epoch=1, complete=True, iteration=2, loader_epochs={}, grad_scaler=GradScaler().to_record()
    )
    assert TrainingState.from_json(state.to_json(), "training-1.json") == state
    data = json.loads(state.to_json())
    data["grad_scaler"] = {"scale": -1.0, "growth_tracker": 0}
    message = r"training-1\.json: 'grad_scaler': GradScaler init_scale must be > 0"
    with pytest.raises(ValueError, match=message):
        TrainingState.from_json(json.dumps(data), "training-1.json")
