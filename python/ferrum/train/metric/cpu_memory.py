"""CPU memory (Burn's ``CpuMemory``): the RAM in use, in GB. Needs psutil."""

from __future__ import annotations

from ferrum.train.metric.sys_metrics import SystemMetric

__all__ = ["CpuMemory"]


class CpuMemory(SystemMetric):
    """The system's RAM in use (total minus available), in GB (10^9 bytes). Name ``"CPU Memory"``.

    Needs ``psutil`` (``pip install 'ferrum-dl[sys-metrics]'``).

    Example:
        >>> from ferrum.train.metric import MetricMetadata
        >>> CpuMemory().update(None, MetricMetadata.fake()).formatted
        'RAM Used: ... / ... Gb'
    """

    unit = "Gb"

    def __init__(self) -> None:
        self._total = 0.0
        super().__init__("CPU Memory")

    def _read(self) -> float:
        memory = self._psutil.virtual_memory()
        self._total = memory.total / 1e9
        return float(memory.total - memory.available) / 1e9

    def _format(self, value: float) -> str:
        return f"RAM Used: {value:.2f} / {self._total:.2f} Gb"
