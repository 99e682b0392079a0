"""How metrics read their input from an item (Burn's Adaptor): the input itself, an adaptor method, fields.

Also what mypy accepts and rejects when a user's output class is handed to a metric.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ferrum import D1, D2, Float, Int, Tensor
from ferrum.train.metric import (
    AccuracyInput,
    AccuracyMetric,
    AurocMetric,
    CharErrorRate,
    DiceMetric,
    FBetaScoreMetric,
    HammingScore,
    LossMetric,
    PerplexityMetric,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyMetric,
    WordErrorRate,
)
from ferrum.train.metric.adaptor import adapt
from mypy import api

from tests.support.metric_reference import META, floats, ints

REPO_PYTHON = Path(__file__).resolve().parents[3] / "python"

ITEM_METRICS = [
    LossMetric(),
    AccuracyMetric(),
    TopKAccuracyMetric(2),
    PrecisionMetric.binary(),
    RecallMetric.multiclass(1),
    FBetaScoreMetric.multilabel(1.0),
    AurocMetric(),
    HammingScore(),
    PerplexityMetric(),
    CharErrorRate(),
    WordErrorRate(),
    DiceMetric(),
]


@dataclass
class Renamed:
    logits: Tensor[Any, D2, Float]
    labels: Tensor[Any, D1, Int]
    calls: int = 0

    def accuracy_input(self) -> AccuracyInput[Any]:
        self.calls += 1
        return AccuracyInput(self.logits, self.labels)


@dataclass
class Both(Renamed):
    output: Tensor[Any, D2, Float] | None = None
    targets: Tensor[Any, D1, Int] | None = None


@pytest.mark.parametrize("metric", ITEM_METRICS, ids=lambda m: m.name())
def test_an_unfit_item_is_a_type_error_naming_metric_class_and_needs(metric: Any) -> None:
    class StepResult:
        pass

    with pytest.raises(TypeError) as error:
        metric.update(StepResult(), META)
    message = str(error.value)
    assert message.startswith(f"metric {metric.name()!r} cannot read its input from a StepResult: it needs")
    assert "() method returning one, or an item with" in message and "field" in message


def test_the_input_itself_is_used_as_is() -> None:
    acc_input = AccuracyInput(floats([[0.2, 0.8]]), ints([1]))
    assert adapt(acc_input, AccuracyInput, "Accuracy") is acc_input


def test_the_adaptor_method_wins_over_fields() -> None:
    # Fields that would give 0 %, a method that gives 100 %.
    item = Both(floats([[0.2, 0.8]]), ints([1]), output=floats([[0.9, 0.1]]), targets=ints([1]))
    metric = AccuracyMetric()
    metric.update(item, META)
    assert item.calls == 1 and metric.value().current() == 100.0


def test_an_adaptor_method_returning_something_else() -> None:
    class Wrong:
        def accuracy_input(self) -> object:
            return (1, 2)

    with pytest.raises(
        TypeError, match=r"'Accuracy': Wrong.accuracy_input\(\) returned a tuple, expected an AccuracyInput"
    ):
        AccuracyMetric().update(Wrong(), META)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("output", "targets", "found"),
    [
        ("logits", None, "has no field `output`"),
        (floats([0.1, 0.9]), ints([1]), r"its `output` is of shape \(2,\), not of rank 2"),
        (floats([[0.1, 0.9]]), floats([1.0]), r"its `targets` is a Float tensor \(1,\), not Int"),
        (floats([[0.1, 0.9]]), [1], "its `targets` is a list, not a Tensor"),
    ],
)
def test_fields_that_do_not_fit_say_what_was_found(output: Any, targets: Any, found: str) -> None:
    item: Any = type("Out", (), {})()
    if output != "logits":
        item.output, item.targets = output, targets
    with pytest.raises(TypeError, match=found):
        AccuracyMetric().update(item, META)


SNIPPET = """
from dataclasses import dataclass
from typing import Any

from ferrum import D1, D2, Float, Int, Tensor
from ferrum.train import ClassificationOutput, MultiLabelClassificationOutput
from ferrum.train.metric import (
    AccuracyInput, AccuracyMetric, HammingScore, LossMetric, Metric, MetricMetadata, PrecisionMetric,
)


@dataclass
class Fields:
    loss: Tensor[Any, D1, Float]
    output: Tensor[Any, D2, Float]
    targets: Tensor[Any, D1, Int]


@dataclass
class Renamed:
    logits: Tensor[Any, D2, Float]
    labels: Tensor[Any, D1, Int]

    def accuracy_input(self) -> AccuracyInput[Any]:
        return AccuracyInput(self.logits, self.labels)


def check(fields: Fields, renamed: Renamed, meta: MetricMetadata) -> None:
    AccuracyMetric().update(fields, meta)
    AccuracyMetric().update(renamed, meta)
    LossMetric().update(fields, meta)
    PrecisionMetric.binary().update(fields, meta)
    LossMetric().update(renamed, meta)  # E: "update" of "LossMetric" has incompatible type "Renamed"
    HammingScore().update(fields, meta)  # E: "update" of "HammingScore" has incompatible type "Fields"


accuracy: Metric[ClassificationOutput[Any]] = AccuracyMetric()
precision: Metric[MultiLabelClassificationOutput[Any]] = PrecisionMetric.multilabel()
hamming: Metric[ClassificationOutput[Any]] = HammingScore()  # E: Incompatible types in assignment
"""


def test_mypy_checks_output_classes_against_metric_inputs(tmp_path: Path) -> None:
    source = textwrap.dedent(SNIPPET)
    (tmp_path / "outputs.py").write_text(source)
    (tmp_path / "mypy.ini").write_text(
        f"[mypy]\nstrict = True\nmypy_path = {REPO_PYTHON}\nplugins = ferrum.mypy\n"
    )
    stdout, stderr, _ = api.run(
        [
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "--no-error-summary",
            "--hide-error-context",
            "--no-pretty",
            str(tmp_path / "outputs.py"),
        ]
    )
    assert not stderr, stderr
    found: dict[int, list[str]] = {}
    for raw in stdout.splitlines():
        match = re.match(r".*outputs\.py:(\d+): error: (.*)$", raw)
        if match:
            found.setdefault(int(match[1]), []).append(match[2])
    expected = {n: text.split("# E: ")[1] for n, text in enumerate(source.splitlines(), 1) if "# E: " in text}
    assert set(found) == set(expected), stdout
    for line, text in expected.items():
        assert any(text in message for message in found[line]), (line, found[line])
