"""The system metrics' shared behaviour: psutil as an optional dependency, readings refreshed every 200 ms."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from ferrum.train.metric import CpuMemory, CpuTemperature, CpuUse, NumericEntry
from ferrum.train.metric import sys_metrics as module

from tests.support.metric_reference import META


@pytest.mark.parametrize("metric", [CpuUse, CpuMemory, CpuTemperature])
def test_without_psutil_construction_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, metric: type[CpuUse] | type[CpuMemory] | type[CpuTemperature]
) -> None:
    monkeypatch.setitem(sys.modules, "psutil", None)  # makes `import psutil` fail
    with pytest.raises(
        ImportError, match=r"needs psutil: pip install 'ferrum-dl\[sys-metrics\]'"
    ):
        metric()


def test_readings_are_reused_for_200_ms(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([10.0, 20.0, 30.0])
    monkeypatch.setitem(sys.modules, "psutil", SimpleNamespace(cpu_percent=lambda interval: next(readings)))
    now = [100.0]
    monkeypatch.setattr(module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    metric = CpuUse()  # first reading: 10
    now[0] += 0.125
    assert metric.update(None, META).serialized == "10.0"
    now[0] += 0.125
    entry = metric.update(None, META)
    assert (entry.name, entry.formatted, entry.serialized) == ("CPU Usage", "CPU Usage: 20.00 %", "20.0")
    assert metric.value() == metric.running_value() == NumericEntry(20.0)
    metric.clear()  # a system reading is not an epoch's: nothing to forget
    assert metric.value() == NumericEntry(20.0)
    assert metric.higher_is_better is False
