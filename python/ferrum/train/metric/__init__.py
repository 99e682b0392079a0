"""Metrics for the Learner (Burn's ``burn_train::metric``)."""

from ferrum.train.metric.base import Metric, MetricEntry, MetricMetadata, Numeric, NumericEntry, format_float
from ferrum.train.metric.state import FormatOptions, NumericMetricState

__all__ = [
    "FormatOptions",
    "Metric",
    "MetricEntry",
    "MetricMetadata",
    "Numeric",
    "NumericEntry",
    "NumericMetricState",
    "format_float",
]
