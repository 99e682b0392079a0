"""PerplexityMetric: Burn's cases, exp(mean NLL) in NumPy, pad tokens and token-level epoch aggregation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ferrum.train import ClassificationOutput
from ferrum.train.metric import NumericEntry, PerplexityInput, PerplexityMetric
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.metric_reference import META, floats, ints, log_softmax


def perplexity(outputs: list[list[float]], targets: list[int], pad: int | None = None) -> float:
    metric = PerplexityMetric(pad_token=pad)
    metric.update(PerplexityInput(floats(outputs), ints(targets)), META)
    return metric.value().current()


def test_burn_cases() -> None:
    assert perplexity([[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]], [0, 1, 2]) < 1.1
    assert perplexity([[0.0, 0.0, 0.0]] * 3, [0, 1, 2]) == pytest.approx(3.0)
    padded = [[10.0, 0.0, 0.0, 0.0], [0.0, 10.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]
    assert perplexity(padded, [0, 1, 3, 3], pad=3) < 1.1
    assert perplexity([[0.0, 10.0, 0.0], [10.0, 0.0, 0.0], [0.0, 0.0, 10.0]], [0, 1, 0]) > 10.0


def test_burn_multi_batch_aggregation() -> None:
    metric = PerplexityMetric()
    metric.update(PerplexityInput(floats([[0.0, 0.0, 0.0]] * 2), ints([0, 1])), META)
    metric.update(PerplexityInput(floats([[0.0, 0.0, 0.0]]), ints([2])), META)
    assert metric.running_value() == NumericEntry(pytest.approx(3.0), 3)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    vocab=st.integers(2, 7),
    pad=st.one_of(st.none(), st.integers(0, 6)),
)
def test_epoch_is_exp_of_the_mean_token_nll(seed: int, sizes: list[int], vocab: int, pad: int | None) -> None:
    rng = np.random.default_rng(seed)
    metric = PerplexityMetric(pad_token=pad)
    nll, tokens = 0.0, 0
    for size in sizes:
        logits = (3 * rng.normal(size=(size, vocab))).astype(np.float32)
        targets = rng.integers(0, vocab, size)
        kept = targets != pad if pad is not None else np.ones(size, dtype=bool)
        batch_nll = -log_softmax(logits)[np.arange(size), targets][kept].sum()
        entry = metric.update(PerplexityInput(floats(logits), ints(targets)), META)
        if kept.any():
            ppl = pytest.approx(math.exp(batch_nll / kept.sum()), rel=1e-5)
            expected = NumericEntry(ppl, int(kept.sum()))  # type: ignore[arg-type]
            assert metric.value() == expected
            assert NumericEntry.deserialize(entry.serialized) == expected
        else:
            assert entry.serialized == "nan,0"
        nll, tokens = nll + batch_nll, tokens + int(kept.sum())
    if tokens:
        assert metric.running_value() == NumericEntry(pytest.approx(math.exp(nll / tokens), rel=1e-5), tokens)  # type: ignore[arg-type]
    else:
        assert math.isnan(metric.running_value().current())


def test_classification_output_clear_and_attributes() -> None:
    metric = PerplexityMetric()
    metric.update(ClassificationOutput(floats([1.0]), floats([[0.0, 0.0]]), ints([1])), META)
    assert metric.value().current() == pytest.approx(2.0)
    assert metric.name() == "Perplexity" and metric.higher_is_better is False
    metric.clear()
    assert math.isnan(metric.running_value().current())


def test_hopeless_prediction_is_infinite() -> None:
    assert perplexity([[0.0, 1e6]], [0]) == math.inf
