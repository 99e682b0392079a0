"""CpuMemory on this machine, through psutil: RAM used (total - available) in GB."""

from __future__ import annotations

import psutil
import pytest
from ferrum.train.metric import CpuMemory, NumericEntry

from tests.support.metric_reference import META


def test_reads_the_ram_in_use() -> None:
    metric = CpuMemory()
    entry = metric.update(None, META)
    memory = psutil.virtual_memory()
    used = NumericEntry.deserialize(entry.serialized).value
    assert used == pytest.approx((memory.total - memory.available) / 1e9, abs=0.5)
    assert entry.formatted == f"RAM Used: {used:.2f} / {memory.total / 1e9:.2f} Gb"
    assert metric.name() == "CPU Memory" and metric.unit == "Gb"
