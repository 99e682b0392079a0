"""ClassificationMetricConfig, its decision rules and reductions, and the names they give metrics."""

from __future__ import annotations

import pytest
from ferrum.train.metric import (
    ClassificationMetricConfig,
    ClassReduction,
    FBetaScoreMetric,
    PrecisionMetric,
    RecallMetric,
    Threshold,
    TopK,
)


def test_default_is_burns() -> None:
    assert ClassificationMetricConfig() == ClassificationMetricConfig(Threshold(0.5), ClassReduction.Macro)
    assert PrecisionMetric().name() == "Precision @ Threshold(0.5) [Macro]"


def test_names_spell_numbers_as_rust() -> None:
    assert str(Threshold(1)) == "Threshold(1.0)"
    assert str(Threshold(1e-7)) == "Threshold(1e-7)"
    assert RecallMetric.multiclass(3, ClassReduction.Micro).name() == "Recall @ TopK(3) [Micro]"
    assert FBetaScoreMetric.multiclass(1.0, 1).name() == "FBetaScore (1) @ TopK(1) [Macro]"
    assert FBetaScoreMetric.binary(0.5).name() == "FBetaScore (0.5) @ Threshold(0.5) [Macro]"


@pytest.mark.parametrize("metric", [PrecisionMetric, RecallMetric])
def test_burn_parameterized_unique_names(metric: type[PrecisionMetric] | type[RecallMetric]) -> None:
    assert (
        metric.multiclass(1, ClassReduction.Macro).name() == metric.multiclass(1, ClassReduction.Macro).name()
    )
    assert (
        metric.multiclass(1, ClassReduction.Macro).name() != metric.multiclass(2, ClassReduction.Macro).name()
    )
    assert metric.binary(0.5).name() != metric.binary(0.75).name()
    # Every constructor's parameters are in the name (Burn's PrecisionMetric::multilabel drops them).
    assert metric.multilabel(0.3, ClassReduction.Micro).name().endswith(" @ Threshold(0.3) [Micro]")


def test_fbeta_unique_names() -> None:
    assert FBetaScoreMetric.multiclass(0.5, 1).name() != FBetaScoreMetric.multiclass(0.5, 2).name()
    assert FBetaScoreMetric.binary(0.5, 0.5).name() != FBetaScoreMetric.binary(0.75, 0.5).name()


def test_bad_parameters() -> None:
    for k in (0, -2, 2.0, True):
        with pytest.raises(ValueError, match="k must be an int >= 1"):
            TopK(k)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        PrecisionMetric.multiclass(0)
    for beta in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="beta must be a finite number >= 0"):
            FBetaScoreMetric(beta)
