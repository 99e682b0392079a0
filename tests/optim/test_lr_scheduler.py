"""Learning-rate schedules against their closed-form formulas, records, composition and config checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest
from ferrum.lr_scheduler import (
    ComposedLrScheduler,
    ComposedLrSchedulerConfig,
    ConstantLr,
    CosineAnnealingLrSchedulerConfig,
    ExponentialLrSchedulerConfig,
    LinearLrSchedulerConfig,
    LrScheduler,
    NoamLrSchedulerConfig,
    SchedulerReduction,
    StepLrSchedulerConfig,
    as_lr_scheduler,
)


def run(scheduler: LrScheduler, steps: int) -> list[float]:
    return [scheduler.step() for _ in range(steps)]


def assert_close(got: list[float], expected: list[float]) -> None:
    assert len(got) == len(expected)
    for i, (a, b) in enumerate(zip(got, expected, strict=True)):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), f"step {i}: {a} != {b}"


def test_a_float_is_a_constant_schedule() -> None:
    scheduler = as_lr_scheduler(0.25)
    assert isinstance(scheduler, ConstantLr)
    assert run(scheduler, 3) == [0.25, 0.25, 0.25]
    assert as_lr_scheduler(scheduler) is scheduler
    with pytest.raises(TypeError, match="float or an LrScheduler"):
        as_lr_scheduler("0.1")  # type: ignore[arg-type]


def test_noam_follows_the_transformer_formula() -> None:
    factor, warmup, size = 2.0, 10, 64
    scheduler = NoamLrSchedulerConfig(factor).with_warmup_steps(warmup).with_model_size(size).init()
    expected = [factor * size**-0.5 * min(t**-0.5, t * warmup**-1.5) for t in range(1, 31)]
    got = run(scheduler, 30)
    assert_close(got, expected)
    # Rises through the warm-up, then decays.
    assert got[:warmup] == sorted(got[:warmup])
    assert got[warmup:] == sorted(got[warmup:], reverse=True)


def test_noam_defaults_and_invalid_sizes() -> None:
    config = NoamLrSchedulerConfig(1.0)
    assert (config.warmup_steps, config.model_size) == (4000, 512)
    with pytest.raises(ValueError, match="warmup_steps"):
        NoamLrSchedulerConfig(1.0).with_warmup_steps(0).init()
    with pytest.raises(ValueError, match="model_size"):
        NoamLrSchedulerConfig(1.0).with_model_size(0).init()


def test_exponential_multiplies_by_gamma() -> None:
    got = run(ExponentialLrSchedulerConfig(0.8, 0.1).init(), 5)
    assert_close(got, [0.8 * 0.1**i for i in range(5)])


@pytest.mark.parametrize(
    ("initial_lr", "gamma", "field"),
    [(0.0, 0.5, "initial_lr"), (1.5, 0.5, "initial_lr"), (0.5, 0.0, "gamma"), (0.5, 1.5, "gamma")],
)
def test_exponential_rejects_out_of_range_values(initial_lr: float, gamma: float, field: str) -> None:
    with pytest.raises(ValueError, match=rf"ExponentialLrSchedulerConfig\.{field}"):
        ExponentialLrSchedulerConfig(initial_lr, gamma).init()


def test_cosine_annealing_restarts_after_num_iters() -> None:
    initial, minimum, n = 0.5, 0.1, 4
    got = run(CosineAnnealingLrSchedulerConfig(initial, n).with_min_lr(minimum).init(), 2 * (n + 1))
    one_cycle = [minimum + 0.5 * (initial - minimum) * (1 + math.cos(math.pi * i / n)) for i in range(n + 1)]
    assert_close(got, one_cycle * 2)
    assert math.isclose(got[n], minimum) and got[n + 1] == initial


def test_cosine_annealing_checks_its_config() -> None:
    assert CosineAnnealingLrSchedulerConfig(0.1, 5).min_lr == 0.0
    with pytest.raises(ValueError, match="initial_lr"):
        CosineAnnealingLrSchedulerConfig(0.0, 10).init()
    with pytest.raises(ValueError, match="min_lr"):
        CosineAnnealingLrSchedulerConfig(0.5, 10).with_min_lr(0.6).init()
    with pytest.raises(ValueError, match="num_iters"):
        CosineAnnealingLrSchedulerConfig(0.5, 0).init()


@pytest.mark.parametrize(("initial", "final", "n"), [(0.9, 0.5, 4), (0.01, 0.04, 3), (0.3, 0.3, 2)])
def test_linear_reaches_the_final_rate_and_stays(initial: float, final: float, n: int) -> None:
    got = run(LinearLrSchedulerConfig(initial, final, n).init(), n + 3)
    expected = [initial + (final - initial) * min(i, n) / n for i in range(n + 3)]
    assert_close(got, expected)


def test_linear_checks_its_config() -> None:
    with pytest.raises(ValueError, match="initial_lr"):
        LinearLrSchedulerConfig(1.5, 0.5, 10).init()
    with pytest.raises(ValueError, match="final_lr"):
        LinearLrSchedulerConfig(0.5, -0.5, 10).init()
    with pytest.raises(ValueError, match="num_iters"):
        LinearLrSchedulerConfig(0.5, 0.1, 0).init()


def test_step_decays_every_step_size_iterations() -> None:
    got = run(StepLrSchedulerConfig(0.5, 3).init(), 9)
    assert StepLrSchedulerConfig(0.5, 3).gamma == 0.1
    assert_close(got, [0.5 * 0.1 ** (i // 3) for i in range(9)])
    assert_close(run(StepLrSchedulerConfig(0.1, 2).with_gamma(2.0).init(), 6), [0.1, 0.1, 0.2, 0.2, 0.4, 0.4])
    with pytest.raises(ValueError, match="step_size"):
        StepLrSchedulerConfig(0.1, 0).init()


@pytest.mark.parametrize(
    "config",
    [
        NoamLrSchedulerConfig(1.0).with_warmup_steps(5),
        ExponentialLrSchedulerConfig(0.083, 0.3),
        CosineAnnealingLrSchedulerConfig(1.0, 9),
        LinearLrSchedulerConfig(1.0, 0.01, 6),
        StepLrSchedulerConfig(0.007, 10).with_gamma(0.03),
    ],
)
def test_a_record_resumes_the_schedule(
    config: NoamLrSchedulerConfig
    | ExponentialLrSchedulerConfig
    | CosineAnnealingLrSchedulerConfig
    | LinearLrSchedulerConfig
    | StepLrSchedulerConfig,
) -> None:
    truth, saved = config.init(), config.init()
    run(truth, 7)
    run(saved, 7)
    record = saved.to_record()
    assert all(isinstance(value, (int, float)) for value in record.values())
    resumed = config.init().load_record(record)
    assert_close(run(resumed, 12), run(truth, 12))


def test_a_bad_record_names_the_missing_entry() -> None:
    with pytest.raises(ValueError, match="iter_idx"):
        StepLrSchedulerConfig(0.1, 2).init().load_record({})
    with pytest.raises(ValueError, match="remaining_iters"):
        LinearLrSchedulerConfig(0.1, 0.2, 2).init().load_record({"remaining_iters": "3"})


@pytest.mark.parametrize(
    ("reduction", "combine"),
    [
        (SchedulerReduction.Prod, lambda a, b: a * b),
        (SchedulerReduction.Sum, lambda a, b: a + b),
        (SchedulerReduction.Avg, lambda a, b: (a + b) / 2),
    ],
)
def test_composed_combines_its_children(
    reduction: SchedulerReduction, combine: Callable[[float, float], float]
) -> None:
    linear = LinearLrSchedulerConfig(0.9, 0.5, 4)
    cosine = CosineAnnealingLrSchedulerConfig(0.5, 3)
    config = ComposedLrSchedulerConfig().linear(linear).cosine(cosine).with_reduction(reduction)
    got = run(config.init(), 8)
    expected = [combine(a, b) for a, b in zip(run(linear.init(), 8), run(cosine.init(), 8), strict=True)]
    assert_close(got, expected)


def test_composed_defaults_to_the_product_and_round_trips() -> None:
    config = ComposedLrSchedulerConfig().exponential(ExponentialLrSchedulerConfig(0.5, 0.5)).noam(
        NoamLrSchedulerConfig(1.0).with_warmup_steps(3)
    )
    assert config.reduction is SchedulerReduction.Prod
    first, second = config.init(), config.init()
    run(first, 4)
    run(second, 4)
    resumed = config.init().load_record(second.to_record())
    assert_close(run(resumed, 5), run(first, 5))
    with pytest.raises(ValueError, match="2 records"):
        config.init().load_record({"schedulers": [{"previous_lr": 0.5}]})


def test_composed_config_saves_and_loads(tmp_path: Path) -> None:
    config = (
        ComposedLrSchedulerConfig()
        .linear(LinearLrSchedulerConfig(0.9, 0.1, 3))
        .cosine(CosineAnnealingLrSchedulerConfig(0.2, 5).with_min_lr(0.01))
        .exponential(ExponentialLrSchedulerConfig(0.5, 0.9))
        .noam(NoamLrSchedulerConfig(2.0))
        .with_reduction(SchedulerReduction.Sum)
    )
    path = tmp_path / "scheduler.json"
    config.save(path)
    loaded = ComposedLrSchedulerConfig.load(path)
    assert loaded == config
    assert_close(run(loaded.init(), 6), run(config.init(), 6))


def test_composed_rejects_non_schedules() -> None:
    with pytest.raises(ValueError, match=r"schedulers\[0\]"):
        ComposedLrSchedulerConfig((StepLrSchedulerConfig(0.1, 2),))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"schedulers\[1\]"):
        ComposedLrScheduler([ConstantLr(0.1), 0.2])  # type: ignore[list-item]


def test_non_numbers_are_rejected_with_the_field_name() -> None:
    with pytest.raises(ValueError, match=r"NoamLrSchedulerConfig\.factor"):
        NoamLrSchedulerConfig(float("nan")).init()
    with pytest.raises(ValueError, match=r"ConstantLr\.lr"):
        ConstantLr(float("inf"))
