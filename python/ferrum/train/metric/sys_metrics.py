"""What the system metrics (CPU use, memory, temperature) share: psutil, an optional dependency.

They need ``psutil``, installed with ferrum's ``sys-metrics`` extra
(``pip install 'ferrum-dl[sys-metrics]'``), as Burn's system metrics need
its ``sys-metrics`` feature. Without it, constructing one raises an
``ImportError`` saying so.
"""

from __future__ import annotations

import abc
import time
from types import ModuleType

from ferrum.extras import require
from ferrum.train.metric.base import MetricEntry, NumericEntry

__all__ = ["SystemMetric", "require_psutil"]

REFRESH_SECONDS = 0.2
"""How long a system reading is reused before the system is read again (Burn's 200 ms)."""


def require_psutil(metric: str) -> ModuleType:
    """The ``psutil`` module, or ``ferrum.extras.MissingExtraError`` saying that ``metric`` needs it.

    Example:
        >>> require_psutil("CPU Usage").__name__
        'psutil'
    """
    return require("psutil", f"the {metric} metric", "sys-metrics", " (or pip install psutil)")


class SystemMetric(abc.ABC):
    """Base of the system metrics: a reading refreshed at most every 200 ms, logged as a plain value.

    A subclass gives ``_read()`` (the new reading) and ``_format(value)``.

    Example:
        >>> from ferrum.train.metric import MetricMetadata
        >>> class Cores(SystemMetric):
        ...     def _read(self) -> float:
        ...         return float(self._psutil.cpu_count())
        ...     def _format(self, value: float) -> str:
        ...         return f"{self._name}: {value:.0f}"
        >>> Cores("CPU Cores").update(None, MetricMetadata.fake()).formatted
        'CPU Cores: ...'
    """

    higher_is_better: bool = False
    unit: str | None = None

    def __init__(self, name: str) -> None:
        self._name = name
        self._psutil = require_psutil(name)
        self._value = self._read()
        self._read_at = time.monotonic()

    @abc.abstractmethod
    def _read(self) -> float:
        """The current reading."""

    @abc.abstractmethod
    def _format(self, value: float) -> str:
        """A reading as the progress display shows it."""

    def name(self) -> str:
        """The metric's name (its log file is ``<name>.log``)."""
        return self._name

    def update(self, item: object, metadata: object) -> MetricEntry:
        """Read the system again if the last reading is 200 ms old; show and log the reading."""
        if time.monotonic() - self._read_at >= REFRESH_SECONDS:
            self._value = self._read()
            self._read_at = time.monotonic()
        return MetricEntry(self._name, self._format(self._value), NumericEntry(self._value).serialize())

    def clear(self) -> None:  # noqa: B027 - deliberately a no-op, not a hook to override
        """Nothing to forget: a reading is of the system, not of the epoch."""

    def value(self) -> NumericEntry:
        """The last reading."""
        return NumericEntry(self._value)

    def running_value(self) -> NumericEntry:
        """The last reading (a system reading has no epoch aggregate)."""
        return NumericEntry(self._value)

    def __getstate__(self) -> dict[str, object]:
        # A module cannot be pickled or deep-copied; the copy imports psutil again
        # (the Learner copies a metric for the validation split).
        state = dict(self.__dict__)
        del state["_psutil"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._psutil = require_psutil(self._name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
