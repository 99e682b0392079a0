"""CPU temperature (Burn's ``CpuTemperature``), in °C, where the OS exposes it. Needs psutil."""

from __future__ import annotations

import math

from ferrum.train.metric.sys_metrics import SystemMetric

__all__ = ["CpuTemperature"]

# Sensor groups that measure the CPU package, most specific first (Intel, AMD, ARM boards, ACPI).
_CPU_SENSORS = ("coretemp", "k10temp", "zenpower", "cpu_thermal", "cpu-thermal", "soc_thermal", "acpitz")


class CpuTemperature(SystemMetric):
    """The CPU temperature in °C, NaN where the system does not expose one. Name ``"CPU Temperature"``.

    Read through ``psutil.sensors_temperatures()`` (Linux and FreeBSD);
    elsewhere, or without a CPU sensor, the value is NaN and shows as
    ``"CPU Temperature: NaN °C"``, never an error. Needs ``psutil``
    (``pip install 'ferrum-dl[sys-metrics]'``).

    Example:
        >>> from ferrum.train.metric import MetricMetadata
        >>> CpuTemperature().update(None, MetricMetadata.fake()).formatted
        'CPU Temperature: ... °C'
    """

    unit = "°C"

    def __init__(self) -> None:
        super().__init__("CPU Temperature")

    def _read(self) -> float:
        read_sensors = getattr(self._psutil, "sensors_temperatures", None)
        if read_sensors is None:
            return math.nan
        try:
            groups = read_sensors()
        except (OSError, RuntimeError):
            return math.nan
        names = [*_CPU_SENSORS, *(name for name in sorted(groups) if "cpu" in name.lower())]
        for name in names:
            readings = groups.get(name)
            if readings:
                return float(readings[0].current)
        return math.nan

    def _format(self, value: float) -> str:
        shown = "NaN" if math.isnan(value) else f"{value:.2f}"
        return f"{self._name}: {shown} °C"
