"""``GradScaler``: dynamic loss scaling for f16 mixed-precision training (PyTorch's ``torch.amp.GradScaler``).

f16 keeps 5 exponent bits: gradients below about 6e-8 flush to zero. The loss
is multiplied by ``scale`` before ``backward()`` so that small gradients stay
representable, and the gradients are divided by it again, in f32, before the
optimizer uses them. When a step's gradients hold an inf or a NaN (the scale
was too large), the step is skipped and the scale is multiplied by
``backoff_factor``; after ``growth_interval`` finite steps in a row it is
multiplied by ``growth_factor``. The defaults are PyTorch's.

Example:
    >>> from ferrum.train import GradScaler
    >>> scaler = GradScaler(init_scale=8.0, growth_interval=2)
    >>> scaler.update(found_inf=True)   # overflow: halve, start counting again
    >>> scaler.scale
    4.0
    >>> scaler.update(found_inf=False); scaler.update(found_inf=False)
    >>> scaler.scale                    # two finite steps: double
    8.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["GradScaler"]

# The scale is held as an f32, as PyTorch holds it: a growth that would overflow f32 is not applied.
_F32_MAX = float(np.finfo(np.float32).max)


class GradScaler:
    """The loss scale of f16 training and its update rule (PyTorch's ``GradScaler``).

    Args:
        init_scale: the first scale (PyTorch: ``2**16``).
        growth_factor: what the scale is multiplied by after ``growth_interval`` finite steps (> 1).
        backoff_factor: what the scale is multiplied by after a step with inf/NaN gradients (in (0, 1)).
        growth_interval: how many finite steps in a row make the scale grow (>= 1).

    ``Precision.F16_MIXED`` creates one with these defaults; ``MixedPrecision(precision, scaler)``
    takes one with other settings. ``to_record``/``load_record`` save and restore its state.

    Example:
        >>> scaler = GradScaler()
        >>> scaler.scale, scaler.growth_tracker
        (65536.0, 0)
        >>> scaler.update(found_inf=True)
        >>> scaler.scale, scaler.skipped_steps
        (32768.0, 1)
    """

    __slots__ = (
        "_scale",
        "backoff_factor",
        "growth_factor",
        "growth_interval",
        "growth_tracker",
        "skipped_steps",
    )

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
    ) -> None:
        self._scale = _checked_number("init_scale", init_scale, low=0.0, high=_F32_MAX)
        self.growth_factor = _checked_number("growth_factor", growth_factor, low=1.0, high=math.inf)
        self.backoff_factor = _checked_number("backoff_factor", backoff_factor, low=0.0, high=1.0)
        if isinstance(growth_interval, bool) or not isinstance(growth_interval, int) or growth_interval < 1:
            raise ValueError(f"GradScaler growth_interval must be an int >= 1, found {growth_interval!r}")
        self.growth_interval = growth_interval
        # Finite steps since the last growth or backoff (PyTorch's ``_growth_tracker``).
        self.growth_tracker = 0
        # Steps skipped for inf/NaN gradients since this scaler was made (not in PyTorch; for logs).
        self.skipped_steps = 0

    @property
    def scale(self) -> float:
        """The current loss scale."""
        return self._scale

    def update(self, found_inf: bool) -> None:
        """The scale after a step: backed off on ``found_inf``, grown after ``growth_interval`` good steps."""
        if found_inf:
            self._scale *= self.backoff_factor
            self.growth_tracker = 0
            self.skipped_steps += 1
            return
        self.growth_tracker += 1
        if self.growth_tracker == self.growth_interval:
            grown = self._scale * self.growth_factor
            if grown <= _F32_MAX:
                self._scale = grown
            self.growth_tracker = 0

    def to_record(self) -> dict[str, Any]:
        """The scaler's state (PyTorch's ``state_dict`` keys: ``scale``, ``growth_tracker``, the factors)."""
        return {
            "scale": self._scale,
            "growth_factor": self.growth_factor,
            "backoff_factor": self.backoff_factor,
            "growth_interval": self.growth_interval,
            "growth_tracker": self.growth_tracker,
        }

    def load_record(self, record: Mapping[str, Any]) -> GradScaler:
        """A scaler holding the state of ``record`` (``to_record``'s); ``ValueError`` names a bad field."""
        if not isinstance(record, Mapping):
            raise ValueError(f"a GradScaler record is a dict, found {type(record).__name__}")
        missing = sorted({"scale", "growth_tracker"} - set(record))
        if missing:
            raise ValueError(f"GradScaler record: missing {', '.join(missing)}")
        new = GradScaler(
            float(record["scale"]),
            float(record.get("growth_factor", self.growth_factor)),
            float(record.get("backoff_factor", self.backoff_factor)),
            int(record.get("growth_interval", self.growth_interval)),
        )
        tracker = record["growth_tracker"]
        interval = new.growth_interval
        if isinstance(tracker, bool) or not isinstance(tracker, int) or not 0 <= tracker < interval:
            raise ValueError(
                f"GradScaler record: growth_tracker must be an int in [0, {interval}), found {tracker!r}"
            )
        new.growth_tracker = tracker
        return new

    def __repr__(self) -> str:
        return (
            f"GradScaler(scale={self._scale:g}, growth_factor={self.growth_factor:g}, "
            f"backoff_factor={self.backoff_factor:g}, growth_interval={self.growth_interval})"
        )


def _checked_number(name: str, value: object, *, low: float, high: float) -> float:
    # Open at ``low``, closed at ``high`` except for the factors' bounds, which are open at both ends.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"GradScaler {name} must be a finite number, found {value!r}")
    number = float(value)
    open_high = name == "backoff_factor"
    if number <= low or number > high or (open_high and number >= high):
        bounds = f"({low:g}, {high:g})" if open_high else f"> {low:g}"
        raise ValueError(f"GradScaler {name} must be {bounds}, found {value!r}")
    return number
