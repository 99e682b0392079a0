"""CpuTemperature: a CPU sensor's reading where the OS exposes one, NaN (never an error) elsewhere."""

from __future__ import annotations

import math
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from ferrum.train.metric import CpuTemperature, NumericEntry

from tests.support.metric_reference import META


def with_sensors(monkeypatch: pytest.MonkeyPatch, **psutil: Any) -> CpuTemperature:
    monkeypatch.setitem(sys.modules, "psutil", SimpleNamespace(**psutil))
    return CpuTemperature()


def reading(value: float) -> list[SimpleNamespace]:
    return [SimpleNamespace(label="Package id 0", current=value)]


def test_reads_the_cpu_sensor(monkeypatch: pytest.MonkeyPatch) -> None:
    sensors = {"nvme": reading(30.0), "coretemp": reading(55.5), "acpitz": reading(40.0)}
    metric = with_sensors(monkeypatch, sensors_temperatures=lambda: sensors)
    entry = metric.update(None, META)
    assert (entry.name, entry.formatted, entry.serialized) == (
        "CPU Temperature",
        "CPU Temperature: 55.50 °C",
        "55.5",
    )
    assert metric.value() == NumericEntry(55.5)


def test_a_group_named_for_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    metric = with_sensors(
        monkeypatch, sensors_temperatures=lambda: {"nvme": reading(30.0), "my_cpu": reading(61.0)}
    )
    assert metric.value() == NumericEntry(61.0)


@pytest.mark.parametrize(
    "psutil",
    [
        {},  # macOS, Windows: no sensors_temperatures
        {"sensors_temperatures": lambda: {}},  # a VM or container without sensors
        {"sensors_temperatures": lambda: {"nvme": reading(30.0)}},  # sensors, none of the CPU
    ],
)
def test_unavailable_is_nan(monkeypatch: pytest.MonkeyPatch, psutil: dict[str, Any]) -> None:
    metric = with_sensors(monkeypatch, **psutil)
    entry = metric.update(None, META)
    assert entry.formatted == "CPU Temperature: NaN °C"
    assert math.isnan(NumericEntry.deserialize(entry.serialized).value)


def test_on_this_machine() -> None:
    entry = CpuTemperature().update(None, META)
    value = NumericEntry.deserialize(entry.serialized).value
    assert math.isnan(value) or -30.0 < value < 130.0
