"""CpuUse on this machine, through psutil."""

from __future__ import annotations

import time

from ferrum.train.metric import CpuUse, NumericEntry

from tests.support.metric_reference import META


def test_reads_a_percentage() -> None:
    metric = CpuUse()
    time.sleep(0.21)
    entry = metric.update(None, META)
    value = NumericEntry.deserialize(entry.serialized)
    assert value.count is None and 0.0 <= value.value <= 100.0
    assert entry.formatted == f"CPU Usage: {value.value:.2f} %"
    assert metric.name() == "CPU Usage" and metric.unit == "%"
