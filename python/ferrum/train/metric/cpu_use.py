"""CPU use (Burn's ``CpuUse``): the mean use of every CPU, in percent. Needs psutil."""

from __future__ import annotations

from ferrum.train.metric.sys_metrics import SystemMetric

__all__ = ["CpuUse"]


class CpuUse(SystemMetric):
    """The system's CPU use in percent, averaged over CPUs since the previous reading. Name ``"CPU Usage"``.

    Needs ``psutil`` (``pip install 'ferrum-dl[sys-metrics]'``).

    Example:
        >>> from ferrum.train.metric import MetricMetadata
        >>> entry = CpuUse().update(None, MetricMetadata.fake())
        >>> entry.formatted
        'CPU Usage: ... %'
    """

    unit = "%"

    def __init__(self) -> None:
        super().__init__("CPU Usage")

    def _read(self) -> float:
        # Non-blocking: the use since the previous call (the first call starts the count).
        return float(self._psutil.cpu_percent(interval=None))

    def _format(self, value: float) -> str:
        return f"{self._name}: {value:.2f} %"
