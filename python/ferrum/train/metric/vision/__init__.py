"""Metrics for vision tasks (Burn's ``metric::vision``)."""

from ferrum.train.metric.vision.dice import DiceAdaptor, DiceInput, DiceItem, DiceMetric, DiceMetricConfig

__all__ = ["DiceAdaptor", "DiceInput", "DiceItem", "DiceMetric", "DiceMetricConfig"]
