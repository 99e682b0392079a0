"""``Stateless``: the base of the layers that hold settings but no parameter (activations, pools, losses).

Burn records such a module as a constant (nil in the file, whatever
settings it holds), and prints its settings on one line, in the order the
fields are declared.

Example:
    >>> from ferrum.nn import LeakyRelu
    >>> from ferrum.nn.stateless import Stateless
    >>> isinstance(LeakyRelu(0.1), Stateless), LeakyRelu(0.1)
    (True, LeakyRelu {negative_slope: 0.1})
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ferrum.module import Module

__all__ = ["Stateless"]


class Stateless(Module[Any]):
    """A module without parameters: a constant record, its fields printed as its settings."""

    _constant_record = True

    def _display_settings(self) -> list[tuple[str, object]]:
        return [(field.name, self._shown(getattr(self, field.name))) for field in dataclasses.fields(self)]

    def _shown(self, value: object) -> object:
        """How a field's value is printed (a subclass may name a setting rather than show its repr)."""
        return value
