"""Shared helpers of the metric tests (tests/train/metric/test_*.py).

Independent NumPy references, written from the definitions (scikit-learn's
where they match Burn's), never from ferrum; Burn's test inputs
(burn-train's ``dummy_classification_input``); small conversions.
Test modules import these names with ``from tests.support.metric_reference import ...``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt
from ferrum import Bool, Float, Tensor
from ferrum.backend import NdArray
from ferrum.train.metric import (
    CharErrorRate,
    ConfusionStatsInput,
    MetricEntry,
    MetricMetadata,
    NumericEntry,
    WordErrorRate,
)
from ferrum.train.metric.confusion_stats import ConfusionStatsMetric

DEVICE = NdArray.device()
R = TypeVar("R", CharErrorRate, WordErrorRate)
META = MetricMetadata.fake()

Array: TypeAlias = npt.NDArray[Any]

#: Burn's probability threshold in its classification tests.
THRESHOLD = 0.5

#: Burn's ``dummy_classification_input``: (scores [samples, classes], 0/1 targets of the same shape).
BURN_INPUTS: dict[str, tuple[list[list[float]], list[list[int]]]] = {
    "binary": ([[0.3], [0.2], [0.7], [0.1], [0.55]], [[0], [1], [0], [0], [1]]),
    "multiclass": (
        [[0.2, 0.8, 0.0], [0.3, 0.6, 0.1], [0.7, 0.25, 0.05], [0.1, 0.15, 0.8], [0.9, 0.03, 0.07]],
        [[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1], [1, 0, 0]],
    ),
    "multilabel": (
        [[0.1, 0.7, 0.6], [0.3, 0.9, 0.05], [0.8, 0.9, 0.4], [0.7, 0.5, 0.9], [1.0, 0.3, 0.2]],
        [[1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 0, 1], [1, 0, 0]],
    ),
}

#: Burn's accuracy and top-k accuracy tests: outputs [4, 3], then the same with a pad class 3 and pad rows.
BURN_OUTPUTS = [[0.0, 0.2, 0.8], [1.0, 2.0, 0.5], [0.4, 0.1, 0.2], [0.6, 0.7, 0.2]]
BURN_PADDED_OUTPUTS = [
    [0.0, 0.2, 0.8, 0.0],
    [1.0, 2.0, 0.5, 0.0],
    [0.4, 0.1, 0.2, 0.0],
    [0.6, 0.7, 0.2, 0.0],
    [0.0, 0.1, 0.2, 5.0],  # predicted padding does not count
    [0.0, 0.1, 0.2, 0.0],  # an error on padding does not count
    [0.6, 0.0, 0.2, 0.0],
]


def floats(values: Array | list[Any]) -> Tensor[NdArray, Any, Float]:
    """A Float tensor (f32) of ``values``."""
    return Tensor.from_floats(np.asarray(values, dtype=np.float32), DEVICE)


def ints(values: Array | list[Any]) -> Tensor[NdArray, Any, Any]:
    """An Int tensor (i64) of ``values``."""
    return Tensor.from_ints(np.asarray(values, dtype=np.int64), DEVICE)


def check_burn_error_rate_cases(
    metric: Callable[[], R], sequences: Callable[[Any, Any], Any]
) -> R:
    """Burn's tests of cer.rs and wer.rs (the same cases): a perfect batch, a half-wrong one, and
    the half-wrong one padded with token 9. Returns the padded metric."""
    plain = metric()
    plain.update(sequences(ints([[1, 2], [3, 4]]), ints([[1, 2], [3, 4]])), META)
    assert plain.value().current() == 0.0
    plain.update(sequences(ints([[1, 2], [3, 5]]), ints([[1, 3], [3, 4]])), META)
    assert plain.value().current() == 50.0
    padded = metric().with_pad_token(9)
    padded.update(sequences(ints([[1, 2, 9], [3, 5, 9]]), ints([[1, 3, 9], [3, 4, 9]])), META)
    assert padded.value() == NumericEntry(50.0, 4)
    return padded


def bools(values: Array | list[Any]) -> Tensor[NdArray, Any, Bool]:
    """A Bool tensor of ``values``."""
    return Tensor.from_bool(np.asarray(values, dtype=bool), DEVICE)


def burn_stats_input(kind: str) -> tuple[Tensor[NdArray, Any, Float], Tensor[NdArray, Any, Bool]]:
    """Burn's dummy input of ``kind`` as (predictions, boolean targets) tensors."""
    scores, targets = BURN_INPUTS[kind]
    return floats(scores), bools(targets)


def burn_value(metric: ConfusionStatsMetric, kind: str) -> float:
    """``metric``'s value (percent) on Burn's dummy input of ``kind``."""
    metric.update(ConfusionStatsInput(*burn_stats_input(kind)), META)
    return metric.value().current()


def aggregate(entries: list[MetricEntry]) -> float:
    """The epoch value of logged entries, count-weighted as Burn's ``NumericMetricsAggregate`` computes it."""
    total, count = 0.0, 0
    for entry in entries:
        numeric = NumericEntry.deserialize(entry.serialized)
        weight = 1 if numeric.count is None else numeric.count
        if weight:
            total += numeric.value * weight
            count += weight
    return total / count


# ---- classification (scikit-learn's definitions, zero_division=nan: an undefined class is left out)


def top_k_mask(scores: Array, k: int) -> Array:
    """Boolean [n, C]: each row's ``k`` highest scores (first index first among ties)."""
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    mask = np.zeros(scores.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=1)
    return mask


def _ratio(num: Array, den: Array) -> Array:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def precision_recall_fbeta(
    predicted: Array, true: Array, beta: float, average: str
) -> tuple[float, float, float]:
    """scikit-learn's ``precision_recall_fscore_support`` of boolean masks [n, C], in percent.

    ``average`` is "micro" or "macro"; ``zero_division=nan``: an undefined class
    is left out of a macro mean (NaN if none is defined).
    """
    tp = (predicted & true).sum(axis=0).astype(float)
    fp = (predicted & ~true).sum(axis=0).astype(float)
    fn = (~predicted & true).sum(axis=0).astype(float)
    if average == "micro":
        tp, fp, fn = tp.sum(keepdims=True), fp.sum(keepdims=True), fn.sum(keepdims=True)
    beta2 = beta * beta
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    fbeta = _ratio((1 + beta2) * tp, (1 + beta2) * tp + beta2 * fn + fp)

    def mean(values: Array) -> float:
        defined = values[~np.isnan(values)]
        return 100.0 * float(defined.mean()) if defined.size else float("nan")

    return mean(precision), mean(recall), mean(fbeta)


def roc_auc(scores: Array, labels: Array) -> float:
    """ROC AUC in percent as the Mann-Whitney statistic: P(positive > negative) + P(tie) / 2."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return 100.0 * (int(greater) + 0.5 * int(ties)) / int(pos.size * neg.size)


def log_softmax(logits: Array) -> Array:
    """Row-wise log-softmax in float64."""
    x = logits.astype(np.float64)
    shifted = x - x.max(axis=1, keepdims=True)
    result: Array = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return result


def levenshtein(reference: list[int], prediction: list[int]) -> int:
    """The textbook edit distance (full dynamic-programming table)."""
    table = [[0] * (len(prediction) + 1) for _ in range(len(reference) + 1)]
    for i in range(len(reference) + 1):
        table[i][0] = i
    for j in range(len(prediction) + 1):
        table[0][j] = j
    for i in range(1, len(reference) + 1):
        for j in range(1, len(prediction) + 1):
            substitution = table[i - 1][j - 1] + (reference[i - 1] != prediction[j - 1])
            table[i][j] = min(substitution, table[i - 1][j] + 1, table[i][j - 1] + 1)
    return table[-1][-1]


def strip_padding(row: list[int], pad: int | None) -> list[int]:
    """The tokens of ``row`` before its first ``pad``."""
    return row if pad is None or pad not in row else row[: row.index(pad)]


class NotNumeric:
    """A metric with ``name``, ``update`` and ``clear`` but no ``value``: registering it where a
    numeric metric is wanted must fail."""

    def name(self) -> str:
        return "Stats"

    def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
        return MetricEntry("Stats", "", "")

    def clear(self) -> None:
        pass
