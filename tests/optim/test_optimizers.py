"""Optimizers against their published update rules, written out in NumPy here.

Each optimizer runs several steps over a small module with gradients drawn at
random, and every parameter must match the NumPy recurrence; Burn's own
published numbers for AdaGrad and RMSProp are checked end to end. Also:
weight decay, momentum and Nesterov, clipping, the old model left unchanged,
state records, GradientsParams and GradientsAccumulator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pytest
from ferrum import D1, D2, DType, ShapeError, Tensor, _ferrum
from ferrum.backend import Backend
from ferrum.module import Module, Param, ParamId
from ferrum.nn import Linear
from ferrum.optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    GradientClippingConfig,
    GradientsAccumulator,
    GradientsParams,
    MomentumConfig,
    Optimizer,
    RmsPropConfig,
    SgdConfig,
    WeightDecayConfig,
    clip_grad_norm,
)

from tests.support.burn_port import BURN_LINEAR_BIAS, BURN_LINEAR_WEIGHT, BURN_X1, BURN_X2
from tests.support.devices import AD, INNER, TrainB
from tests.support.f64 import arr

B = TypeVar("B", bound=Backend)
Array = np.ndarray[Any, np.dtype[np.float64]]
# One step's update of one parameter: (param, grad, state, step number, lr) -> (param, state).
Rule = Callable[[Array, Array, dict[str, Array], int, float], Array]


class Pair(Module[B]):
    w: Param[Tensor[B, D2]]
    v: Param[Tensor[B, D1]]


def make_pair(rng: np.random.Generator, dtype: DType = DType.F64) -> Pair[TrainB]:
    w = Tensor.from_numpy(rng.normal(size=(3, 4)), AD, dtype=dtype)
    v = Tensor.from_numpy(rng.normal(size=(5,)), AD, dtype=dtype)
    return Pair(w=Param(w), v=Param(v))


def random_grads(
    model: Pair[Any], rng: np.random.Generator, dtype: DType = DType.F64
) -> tuple[GradientsParams, dict[str, Array]]:
    grads = GradientsParams()
    raw: dict[str, Array] = {}
    for name, param in model.named_parameters():
        g = rng.normal(scale=2.0, size=param.shape())
        grads.register(param.id, Tensor.from_numpy(g, INNER, dtype=dtype))
        raw[name] = g
    return grads, raw


def check_against(
    optim: Optimizer[Any],
    rule: Rule,
    *,
    steps: int = 5,
    lr: float = 0.05,
    dtype: DType = DType.F64,
    tol: float = 1e-11,
) -> None:
    rng = np.random.default_rng(7)
    model = make_pair(rng, dtype)
    expected = {name: arr(p.val()) for name, p in model.named_parameters()}
    states: dict[str, dict[str, Array]] = {name: {} for name in expected}
    for t in range(1, steps + 1):
        grads, raw = random_grads(model, rng, dtype)
        model = optim.step(lr, model, grads)
        for name in expected:
            expected[name] = rule(expected[name], raw[name], states[name], t, lr)
        for name, param in model.named_parameters():
            np.testing.assert_allclose(
                arr(param.val()), expected[name], rtol=tol, atol=tol, err_msg=f"{name} step {t}"
            )


# --------------------------------------------------------------------------- reference rules


def sgd_rule(
    penalty: float | None = None,
    momentum: float | None = None,
    dampening: float = 0.0,
    nesterov: bool = False,
) -> Rule:
    def rule(p: Array, g: Array, s: dict[str, Array], t: int, lr: float) -> Array:
        if penalty is not None:
            g = g + penalty * p
        if momentum is not None:
            s["v"] = g.copy() if "v" not in s else momentum * s["v"] + (1 - dampening) * g
            g = momentum * s["v"] + g if nesterov else s["v"]
        return p - lr * g

    return rule


def adam_rule(
    b1: float, b2: float, eps: float, penalty: float = 0.0, decoupled: bool = False, cautious: bool = False
) -> Rule:
    def rule(p: Array, g: Array, s: dict[str, Array], t: int, lr: float) -> Array:
        if not decoupled:
            g = g + penalty * p
        s["m"] = b1 * s.get("m", 0 * g) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0 * g) + (1 - b2) * g * g
        m_hat = s["m"] / (1 - b1**t)
        v_hat = s["v"] / (1 - b2**t)
        shrunk = p * (1 - lr * penalty) if decoupled else p
        if cautious:
            # Burn 0.20: decay only where the weight's sign agrees with the first moment's.
            shrunk = np.where((p >= 0) == (s["m"] >= 0), p * (1 - lr * penalty), p)
        return shrunk - lr * m_hat / (np.sqrt(v_hat) + eps)

    return rule


def adagrad_rule(lr_decay: float, eps: float, penalty: float | None = None) -> Rule:
    def rule(p: Array, g: Array, s: dict[str, Array], t: int, lr: float) -> Array:
        if penalty is not None:
            g = g + penalty * p
        s["sum"] = s.get("sum", 0 * g) + g * g
        return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)

    return rule


def rmsprop_rule(alpha: float, momentum: float, eps: float, centered: bool, penalty: float | None) -> Rule:
    def rule(p: Array, g: Array, s: dict[str, Array], t: int, lr: float) -> Array:
        if penalty is not None:
            g = g + penalty * p
        s["sq"] = alpha * s.get("sq", 0 * g) + (1 - alpha) * g * g
        avg = s["sq"]
        if centered:
            s["ga"] = alpha * s.get("ga", 0 * g) + (1 - alpha) * g
            avg = avg - s["ga"] ** 2
        d = g / (np.sqrt(avg) + eps)
        if momentum > 0:
            s["buf"] = momentum * s.get("buf", 0 * g) + d
            d = s["buf"]
        return p - lr * d

    return rule


# --------------------------------------------------------------------------- update rules


def test_sgd_plain_and_with_weight_decay() -> None:
    check_against(SgdConfig().init(), sgd_rule())
    check_against(SgdConfig().with_weight_decay(WeightDecayConfig(0.3)).init(), sgd_rule(penalty=0.3))


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("dampening", [0.0, 0.1])
def test_sgd_momentum_and_nesterov(nesterov: bool, dampening: float) -> None:
    momentum = MomentumConfig(momentum=0.9, dampening=dampening, nesterov=nesterov)
    config = SgdConfig().with_momentum(momentum).with_weight_decay(WeightDecayConfig(0.01))
    check_against(config.init(), sgd_rule(0.01, 0.9, dampening, nesterov))


def test_momentum_config_defaults_are_burns() -> None:
    assert MomentumConfig() == MomentumConfig(momentum=0.9, dampening=0.1, nesterov=False)


@pytest.mark.parametrize("penalty", [None, 0.5])
def test_adam(penalty: float | None) -> None:
    config = AdamConfig().with_epsilon(1e-8)
    if penalty is not None:
        config = config.with_weight_decay(WeightDecayConfig(penalty))
    check_against(config.init(), adam_rule(0.9, 0.999, 1e-8, penalty or 0.0), steps=6)


def test_adam_defaults_and_custom_betas() -> None:
    config = AdamConfig()
    assert (config.beta_1, config.beta_2, config.epsilon, config.weight_decay) == (0.9, 0.999, 1e-5, None)
    check_against(AdamConfig().with_beta_1(0.5).with_beta_2(0.9).init(), adam_rule(0.5, 0.9, 1e-5))


def test_adamw_decouples_weight_decay() -> None:
    assert AdamWConfig().weight_decay == 1e-4
    check_against(
        AdamWConfig().with_weight_decay(0.5).with_epsilon(1e-8).init(),
        adam_rule(0.9, 0.999, 1e-8, 0.5, decoupled=True),
        lr=0.1,
    )


def test_adamw_cautious_weight_decay() -> None:
    assert AdamWConfig().cautious_weight_decay is False
    check_against(
        AdamWConfig().with_weight_decay(0.5).with_epsilon(1e-8).with_cautious_weight_decay(True).init(),
        adam_rule(0.9, 0.999, 1e-8, 0.5, decoupled=True, cautious=True),
        lr=0.1,
    )


def test_adam_on_f32_parameters() -> None:
    check_against(AdamConfig().init(), adam_rule(0.9, 0.999, 1e-5), dtype=DType.F32, tol=2e-5)


def test_adagrad_with_lr_decay_and_weight_decay() -> None:
    check_against(AdaGradConfig().with_lr_decay(0.5).init(), adagrad_rule(0.5, 1e-5))
    check_against(
        AdaGradConfig().with_weight_decay(WeightDecayConfig(0.1)).init(), adagrad_rule(0.0, 1e-5, 0.1)
    )


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("penalty", [None, 0.05])
def test_rmsprop_variants(centered: bool, momentum: float, penalty: float | None) -> None:
    config = (
        RmsPropConfig().with_alpha(0.9).with_momentum(momentum).with_centered(centered).with_epsilon(1e-8)
    )
    if penalty is not None:
        config = config.with_weight_decay(WeightDecayConfig(penalty))
    check_against(config.init(), rmsprop_rule(0.9, momentum, 1e-8, centered, penalty), lr=0.01)


# --------------------------------------------------------------------------- Burn's published numbers


def two_burn_steps(optim: Optimizer[Any], weight: list[list[float]], bias: list[float]) -> Linear[TrainB]:
    layer = Linear(weight=Param(Tensor.from_floats(weight, AD)), bias=Param(Tensor.from_floats(bias, AD)))
    for x in (BURN_X1, BURN_X2):
        out = layer.forward(Tensor.from_floats(x, AD))
        layer = optim.step(0.01, layer, GradientsParams.from_grads(out.backward(), layer))
    return layer


def test_adagrad_matches_burns_published_result() -> None:
    layer = two_burn_steps(
        AdaGradConfig().with_epsilon(1e-8).with_lr_decay(0.5).init(), BURN_LINEAR_WEIGHT, BURN_LINEAR_BIAS
    )
    expected_weight = [
        [-0.334989, 0.123011, 0.389911, 0.305611, 0.071511, 0.052711],
        [0.066144, -0.030056, -0.378256, 0.243444, 0.183944, -0.303756],
        [-0.033462, 0.020138, -0.310662, 0.233938, -0.292462, 0.298538],
        [-0.312636, -0.236036, -0.386136, -0.312736, -0.090736, 0.147964],
        [0.315896, -0.232304, 0.357596, -0.187004, 0.365496, -0.044504],
        [-0.030305, -0.026405, 0.111395, 0.177695, 0.014895, 0.368895],
    ]
    expected_bias = [-0.405214, 0.073686, -0.111714, 0.102886, 0.121886, -0.001714]
    np.testing.assert_allclose(arr(layer.weight.val()), expected_weight, atol=1e-5)
    assert layer.bias is not None
    np.testing.assert_allclose(arr(layer.bias.val()), expected_bias, atol=1e-5)


def test_rmsprop_matches_burns_published_result() -> None:
    config = (
        RmsPropConfig()
        .with_alpha(0.99)
        .with_epsilon(1e-8)
        .with_momentum(0.9)
        .with_centered(False)
        .with_weight_decay(WeightDecayConfig(0.05))
    )
    layer = two_burn_steps(config.init(), [[1.0] * 6 for _ in range(6)], [0.5] * 6)
    expected_rows = [0.743937, 0.783809, 0.742881, 0.740366, 0.748005, 0.743710]
    np.testing.assert_allclose(arr(layer.weight.val()), [[v] * 6 for v in expected_rows], atol=1e-5)
    assert layer.bias is not None
    np.testing.assert_allclose(arr(layer.bias.val()), [0.239199] * 6, atol=1e-5)


# --------------------------------------------------------------------------- clipping


def test_value_clipping_clamps_each_gradient_before_the_update() -> None:
    clip = GradientClippingConfig.Value(0.5)
    sgd = SgdConfig().with_gradient_clipping(clip).init()
    assert sgd.has_gradient_clipping()
    check_against(sgd, lambda p, g, s, t, lr: p - lr * np.clip(g, -0.5, 0.5))


def norm_clipped(g: Array, max_norm: float) -> Array:
    return g * min(1.0, max_norm / float(np.linalg.norm(g)))


def test_norm_clipping_scales_each_parameter_by_its_own_norm() -> None:
    def rule(p: Array, g: Array, s: dict[str, Array], t: int, lr: float) -> Array:
        return p - lr * norm_clipped(g, 1.0)

    adam = adam_rule(0.9, 0.999, 1e-5)
    check_against(
        AdamConfig().with_grad_clipping(GradientClippingConfig.Norm(1.0)).init(),
        lambda p, g, s, t, lr: adam(p, norm_clipped(g, 1.0), s, t, lr),
    )
    check_against(SgdConfig().with_gradient_clipping(GradientClippingConfig.Norm(1.0)).init(), rule)


def test_small_gradients_are_not_norm_clipped() -> None:
    clip = GradientClippingConfig.Norm(10.0).init()
    grad = Tensor.from_floats([0.3, 0.4], INNER)
    assert clip.clip_gradient(grad).to_data().to_list() == grad.to_data().to_list()


def test_global_norm_clipping_spans_all_gradients() -> None:
    rng = np.random.default_rng(3)
    model = make_pair(rng)
    grads, raw = random_grads(model, rng)
    total = np.sqrt(sum(float(np.sum(g * g)) for g in raw.values()))
    clipped = clip_grad_norm(grads, 1.0)
    for name, param in model.named_parameters():
        got = clipped.get(param.id)
        assert got is not None
        np.testing.assert_allclose(arr(got), raw[name] / total, rtol=1e-12)


def test_clipping_config_checks_and_repr() -> None:
    assert repr(GradientClippingConfig.Norm(2.0)) == "GradientClippingConfig.Norm(2.0)"
    with pytest.raises(ValueError, match="threshold"):
        GradientClippingConfig.Value(-1.0)
    with pytest.raises(ValueError, match="Value or Norm"):
        GradientClippingConfig("Max", 1.0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- functional semantics


def net(device: Any = AD) -> Linear[Any]:
    weight = Tensor.from_floats([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], device)
    return Linear(weight=Param(weight), bias=Param(Tensor.from_floats([0.05, -0.05], device)))


def loss_grads(model: Linear[TrainB]) -> GradientsParams:
    x = Tensor.from_floats([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], AD)
    loss = (model.forward(x) * model.forward(x)).sum()
    return GradientsParams.from_grads(loss.backward(), model)


def test_step_returns_a_new_model_and_leaves_the_old_one() -> None:
    model = net()
    before = {name: arr(p.val()) for name, p in model.named_parameters()}
    updated = AdamConfig().init().step(0.1, model, loss_grads(model))
    for name, param in model.named_parameters():
        np.testing.assert_array_equal(arr(param.val()), before[name])
    for (name, old), (_, new) in zip(model.named_parameters(), updated.named_parameters(), strict=True):
        assert new.id == old.id, name
        assert new.is_require_grad() and new.val().is_require_grad()
        assert new.val().device() == AD
        assert not np.array_equal(arr(new.val()), before[name])
    # The updated model trains on: its parameters are fresh leaves.
    assert len(loss_grads(updated)) == 2


def test_parameters_without_gradients_are_carried_over() -> None:
    model = net()
    frozen = Linear(weight=model.weight.set_require_grad(False), bias=model.bias)
    grads = loss_grads(frozen)
    assert frozen.bias is not None
    assert grads.get(frozen.weight.id) is None and grads.get(frozen.bias.id) is not None
    stepped = SgdConfig().init().step(0.5, frozen, grads)
    np.testing.assert_array_equal(arr(stepped.weight.val()), arr(frozen.weight.val()))
    assert not stepped.weight.is_require_grad()


def loss_of(model: Linear[TrainB]) -> Any:
    out = model.forward(Tensor.from_floats([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], AD))
    return (out * out).sum()


def test_a_layer_learns_with_every_optimizer() -> None:
    configs: list[Any] = [
        SgdConfig().with_momentum(MomentumConfig()),
        AdamConfig(),
        AdamWConfig(),
        AdaGradConfig(),
        RmsPropConfig(),
    ]
    for config in configs:
        model, optim = net(), config.init()
        first = loss_of(model).into_scalar()
        for _ in range(20):
            model = optim.step(0.01, model, GradientsParams.from_grads(loss_of(model).backward(), model))
        assert loss_of(model).into_scalar() < first, type(config).__name__


def test_mismatched_gradient_shapes_name_the_parameter() -> None:
    model = net()
    grads = GradientsParams()
    grads.register(model.weight.id, Tensor.zeros((2, 2), INNER))
    with pytest.raises(ShapeError, match=str(model.weight.id)):
        AdamConfig().init().step(0.1, model, grads)


def test_bad_step_arguments() -> None:
    optim = SgdConfig().init()
    with pytest.raises(ValueError, match="learning rate"):
        optim.step(float("nan"), net(), GradientsParams())
    with pytest.raises(TypeError, match="GradientsParams"):
        optim.step(0.1, net(), {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Module"):
        optim.step(0.1, "model", GradientsParams())  # type: ignore[type-var]


def test_config_values_are_checked() -> None:
    with pytest.raises(ValueError, match=r"AdamConfig\.beta_1"):
        AdamConfig(beta_1=1.5)
    with pytest.raises(ValueError, match=r"RmsPropConfig\.alpha"):
        RmsPropConfig(alpha=-0.1)
    with pytest.raises(ValueError, match=r"WeightDecayConfig\.penalty"):
        WeightDecayConfig(float("inf"))


# --------------------------------------------------------------------------- records


@pytest.mark.parametrize(
    "config",
    [
        SgdConfig().with_momentum(MomentumConfig(nesterov=True)),
        AdamConfig().with_weight_decay(WeightDecayConfig(0.1)),
        AdamWConfig(),
        AdaGradConfig().with_lr_decay(0.1),
        RmsPropConfig().with_centered(True),
        RmsPropConfig().with_momentum(0.0),
    ],
)
def test_state_record_round_trip_resumes_training(config: Any) -> None:
    model, optim = net(), config.init()
    for _ in range(2):
        model = optim.step(0.05, model, loss_grads(model))
    record = optim.to_record()
    assert set(record) == {str(p.id) for p in model.parameters()}
    restored = config.init().load_record(record)
    grads = loss_grads(model)
    a = optim.step(0.05, model, grads)
    b = restored.step(0.05, model, grads)
    for (_, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        np.testing.assert_array_equal(arr(pa.val()), arr(pb.val()))


def test_record_holds_burns_state_fields() -> None:
    model, optim = net(), AdamConfig().init()
    model = optim.step(0.05, model, loss_grads(model))
    model = optim.step(0.05, model, loss_grads(model))
    # Burn's AdaptorRecord: {"V1": {"Rank<N>": state}}, N the parameter's rank.
    versioned = optim.to_record()[str(model.weight.id)]
    assert list(versioned) == ["V1"] and list(versioned["V1"]) == ["Rank2"]
    state = versioned["V1"]["Rank2"]["momentum"]
    assert state["time"] == 2
    assert state["moment_1"].dims() == state["moment_2"].dims() == (3, 2)
    assert SgdConfig().init().to_record() == {}


def state_tensors(record: Any, id: ParamId) -> list[Array]:
    """Every tensor of one parameter's state in an optimizer record, in field order."""
    found: list[Array] = []

    def walk(node: object) -> None:
        if isinstance(node, Tensor):
            found.append(arr(node))
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(record[str(id)]["V1"]["Rank2"])
    return found


STATEFUL = [
    AdamConfig(),
    AdamWConfig(),
    SgdConfig().with_momentum(MomentumConfig()),
    AdaGradConfig(),
    RmsPropConfig(),
    RmsPropConfig().with_centered(True),
]


@pytest.mark.parametrize("config", STATEFUL, ids=lambda c: type(c).__name__)
def test_state_handed_out_keeps_its_values_while_training_goes_on(config: Any) -> None:
    # The steps rewrite the optimizer's state in place; a record taken from
    # the optimizer, or loaded into one, must not see that.
    model, optim = net(), config.init()
    for _ in range(2):
        model = optim.step(0.05, model, loss_grads(model))
    record = optim.to_record()
    saved = state_tensors(record, model.weight.id)
    assert saved
    restored = config.init().load_record(record)
    resumed = model
    for _ in range(3):
        model = optim.step(0.05, model, loss_grads(model))
        resumed = restored.step(0.05, resumed, loss_grads(resumed))
    for before, after in zip(saved, state_tensors(record, model.weight.id), strict=True):
        np.testing.assert_array_equal(after, before)
    # Both went on from the record alike, and their state moved on from it.
    now = state_tensors(optim.to_record(), model.weight.id)
    for a, b, before in zip(now, state_tensors(restored.to_record(), model.weight.id), saved, strict=True):
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, before)


def test_a_failed_adam_step_leaves_the_state_as_it_was() -> None:
    param, grad = Tensor.from_floats([1.0, 2.0], INNER), Tensor.from_floats([0.5, 0.5], INNER)
    hyper = (1e-3, 0.9, 0.999, 1e-5, None, False)
    _, m1, m2 = _ferrum.adam_step(param, grad, None, None, 1, *hyper)
    np.testing.assert_allclose(arr(m1.tensor()), [0.05, 0.05])
    short = Tensor.from_floats([0.5], INNER)
    with pytest.raises(ShapeError, match="gradient"):
        _ferrum.adam_step(param, short, m1, m2, 2, *hyper)
    with pytest.raises(ValueError, match="same state"):
        _ferrum.adam_step(param, grad, m1, m1, 2, *hyper)
    np.testing.assert_allclose(arr(m1.tensor()), [0.05, 0.05])
    np.testing.assert_allclose(arr(m2.tensor()), [0.00025, 0.00025])
    # A tensor taken out stays as it was when the state moves on.
    taken = m1.tensor()
    _, n1, _ = _ferrum.adam_step(param, grad, m1, m2, 2, *hyper)
    assert n1 is m1
    np.testing.assert_allclose(arr(taken), [0.05, 0.05])
    np.testing.assert_allclose(arr(m1.tensor()), [0.095, 0.095])
    assert repr(m1) == "StateTensor(shape=[2], dtype=f32)"


def test_the_other_updates_rewrite_their_states_and_keep_them_on_failure() -> None:
    param, grad = Tensor.from_floats([1.0, 2.0], INNER), Tensor.from_floats([0.5, -0.5], INNER)
    short = Tensor.from_floats([0.5], INNER)
    # SGD with momentum 0.9, dampening 0.1: v = g on the first step, then 0.9 v + 0.9 g.
    sgd = (0.1, None, 0.9, 0.1, False)
    _, velocity = _ferrum.sgd_step(param, grad, None, *sgd)
    assert velocity is not None
    with pytest.raises(ShapeError, match="gradient"):
        _ferrum.sgd_step(param, short, velocity, *sgd)
    np.testing.assert_allclose(arr(velocity.tensor()), [0.5, -0.5])
    _, again = _ferrum.sgd_step(param, grad, velocity, *sgd)
    assert again is velocity
    np.testing.assert_allclose(arr(velocity.tensor()), [0.9, -0.9], rtol=1e-6)
    assert _ferrum.sgd_step(param, grad, None, 0.1, None, None, 0.0, False)[1] is None
    # AdaGrad: the sum of squares.
    _, total = _ferrum.adagrad_step(param, grad, None, 1, 0.1, 0.0, 1e-10, None)
    _, again_total = _ferrum.adagrad_step(param, grad, total, 2, 0.1, 0.0, 1e-10, None)
    assert again_total is total
    np.testing.assert_allclose(arr(total.tensor()), [0.5, 0.5])
    # Centered RMSProp with momentum: three states, none of them twice.
    hyper = (0.01, 0.9, 0.5, 1e-8, True, None)
    _, square, mean, buf = _ferrum.rmsprop_step(param, grad, None, None, None, *hyper)
    assert mean is not None and buf is not None
    with pytest.raises(ValueError, match="same state"):
        _ferrum.rmsprop_step(param, grad, square, square, buf, *hyper)
    with pytest.raises(ShapeError, match="gradient"):
        _ferrum.rmsprop_step(param, short, square, mean, buf, *hyper)
    np.testing.assert_allclose(arr(square.tensor()), [0.025, 0.025], rtol=1e-6)
    np.testing.assert_allclose(arr(mean.tensor()), [0.05, -0.05], rtol=1e-6)
    taken = square.tensor()
    states = _ferrum.rmsprop_step(param, grad, square, mean, buf, *hyper)[1:]
    assert states[0] is square and states[1] is mean and states[2] is buf
    np.testing.assert_allclose(arr(taken), [0.025, 0.025], rtol=1e-6)
    np.testing.assert_allclose(arr(square.tensor()), [0.0475, 0.0475], rtol=1e-6)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_record_has_burns_centered_state(centered: bool) -> None:
    # Burn's CenteredState is {grad_avg: Option<Tensor>, avg: Tensor}, avg being
    # square_avg - grad_avg^2 when centered and square_avg otherwise.
    model, optim = net(), RmsPropConfig().with_centered(centered).init()
    for _ in range(2):
        model = optim.step(0.05, model, loss_grads(model))
    state = optim.to_record()[str(model.weight.id)]["V1"]["Rank2"]
    square_avg = arr(state["square_avg"]["square_avg"])
    grad_avg = state["centered"]["grad_avg"]
    assert (grad_avg is not None) == centered
    expected = square_avg - arr(grad_avg) ** 2 if grad_avg is not None else square_avg
    np.testing.assert_allclose(arr(state["centered"]["avg"]), expected, rtol=1e-6)  # f32 state


def test_a_bad_record_names_the_entry() -> None:
    pid = str(ParamId.new())
    with pytest.raises(ValueError, match="moment_2"):
        AdamConfig().init().load_record(
            {pid: {"momentum": {"time": 1, "moment_1": Tensor.zeros((2,), INNER)}}}
        )
    with pytest.raises(ValueError, match="Rank<N>"):
        AdamConfig().init().load_record({pid: {"V1": {"Rank": {}}}})
    with pytest.raises(ValueError, match="time"):
        AdamConfig().init().load_record(
            {
                pid: {
                    "momentum": {
                        "time": 0,
                        "moment_1": Tensor.zeros((2,), INNER),
                        "moment_2": Tensor.zeros((2,), INNER),
                    }
                }
            }
        )
    with pytest.raises(ValueError, match="parameter id"):
        SgdConfig().init().load_record([])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- gradients containers


def test_gradients_params_container() -> None:
    grads = GradientsParams()
    pid = ParamId.new()
    assert grads.is_empty() and grads.len() == 0 and grads.get(pid) is None
    grads.register(pid, Tensor.ones((2,), INNER))
    assert len(grads) == 1 and pid in grads and grads.ids() == [pid]
    removed = grads.remove(pid)
    assert removed is not None and removed.to_data().to_list() == [1.0, 1.0]
    assert grads.remove(pid) is None and len(grads) == 0
    with pytest.raises(TypeError, match="Float"):
        grads.register(pid, Tensor.from_data([1, 2], INNER))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ParamId"):
        grads.get("not-an-id")  # type: ignore[arg-type]


def test_from_grads_reads_each_parameter_gradient() -> None:
    model = net()
    x = Tensor.from_floats([[1.0, 2.0, 3.0]], AD)
    grads = GradientsParams.from_grads(model.forward(x).sum().backward(), model)
    weight = grads.get(model.weight.id)
    assert weight is not None and not weight.device().is_autodiff
    np.testing.assert_allclose(arr(weight), [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])


def test_from_params_keeps_only_the_listed_trained_parameters() -> None:
    model = net()
    assert model.bias is not None
    frozen = dataclasses.replace(model, bias=model.bias.set_require_grad(False))
    grads = frozen.forward(Tensor.from_floats([[1.0, 2.0, 3.0]], AD)).sum().backward()
    assert GradientsParams.from_grads(grads, frozen).ids() == [frozen.weight.id]
    assert GradientsParams.from_params(grads, frozen, [model.bias.id]).is_empty()
    only_weight = GradientsParams.from_params(grads, frozen, [frozen.weight.id]).get(frozen.weight.id)
    assert only_weight is not None
    np.testing.assert_allclose(arr(only_weight), [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])


def test_from_grads_needs_an_autodiff_module() -> None:
    plain = net(INNER)
    grads = net().forward(Tensor.ones((1, 3), AD)).sum().backward()
    with pytest.raises(TypeError, match="autodiff"):
        GradientsParams.from_grads(grads, plain)


def test_accumulated_gradients_sum_over_batches() -> None:
    model = net()
    x = Tensor.from_floats([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [2.0, 0.0, -1.0]], AD)
    full = GradientsParams.from_grads(model.forward(x).sum().backward(), model)
    accumulator = GradientsAccumulator[Linear[TrainB]]()
    for lo, hi in ((0, 1), (1, 3)):
        part = model.forward(x.slice([(lo, hi), (0, 3)])).sum()
        accumulator.accumulate(model, GradientsParams.from_grads(part.backward(), model))
    summed = accumulator.grads()
    assert len(summed) == 2 and len(accumulator.grads()) == 0
    for param in model.parameters():
        a, b = summed.get(param.id), full.get(param.id)
        assert a is not None and b is not None
        np.testing.assert_allclose(arr(a), arr(b), rtol=1e-6)
