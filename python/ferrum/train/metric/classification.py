"""How classification metrics decide and average: Burn's ``ClassificationMetricConfig``.

A decision rule turns scores into predicted classes: ``Threshold(t)``
(a class is predicted where its score is above ``t``: binary and
multi-label) or ``TopK(k)`` (the ``k`` highest scores of a row: multiclass).
A class reduction says how per-class counts become one number:
``ClassReduction.Micro`` pools the counts of every class first,
``ClassReduction.Macro`` computes the metric per class and averages the
classes where it is defined.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

from ferrum.train.metric.naming import rust_debug

__all__ = ["ClassReduction", "ClassificationMetricConfig", "DecisionRule", "Threshold", "TopK"]


class ClassReduction(Enum):
    """How per-class statistics become one value (Burn's ``ClassReduction``; default ``Macro``).

    Example:
        >>> from ferrum.train.metric import RecallMetric
        >>> RecallMetric.multiclass(1, ClassReduction.Micro).name()
        'Recall @ TopK(1) [Micro]'
    """

    Micro = "Micro"
    """Pool the counts of every class, then compute the metric once."""
    Macro = "Macro"
    """Compute the metric per class, then average the classes where it is defined."""


@dataclass(frozen=True)
class Threshold:
    """Decision rule: a class is predicted where its score is above ``value``.

    Example:
        >>> str(Threshold(0.5)), str(Threshold(1))
        ('Threshold(0.5)', 'Threshold(1.0)')
    """

    value: float = 0.5

    def __str__(self) -> str:
        return f"Threshold({rust_debug(self.value)})"


@dataclass(frozen=True)
class TopK:
    """Decision rule: the ``k`` highest-scoring classes of a sample are predicted (``k >= 1``).

    Example:
        >>> str(TopK(1))
        'TopK(1)'
    """

    k: int

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"TopK: k must be an int >= 1, found {self.k!r}")

    def __str__(self) -> str:
        return f"TopK({self.k})"


DecisionRule: TypeAlias = Threshold | TopK
"""A prediction decision rule: ``Threshold(value)`` or ``TopK(k)``."""


@dataclass(frozen=True)
class ClassificationMetricConfig:
    """A decision rule and a class reduction; the default is ``Threshold(0.5)`` and ``Macro``, as Burn's.

    Example:
        >>> ClassificationMetricConfig(TopK(2), ClassReduction.Micro).describe()
        'TopK(2) [Micro]'
    """

    decision_rule: DecisionRule = Threshold(0.5)
    class_reduction: ClassReduction = ClassReduction.Macro

    def describe(self) -> str:
        """The config as Burn writes it in a metric's name: ``"<rule> [<reduction>]"``."""
        return f"{self.decision_rule} [{self.class_reduction.value}]"
