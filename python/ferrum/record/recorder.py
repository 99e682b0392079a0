"""What every recorder shares: its precision settings and the tree it hands the engine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ferrum.record.burn_format import _bincode_layout, _ids_to_burn
from ferrum.record.settings import FullPrecisionSettings, PrecisionSettings


class _Recorder:
    format: ClassVar[str] = "named_mpk"

    def __init__(self, settings: type[PrecisionSettings] = FullPrecisionSettings) -> None:
        if not (isinstance(settings, type) and issubclass(settings, PrecisionSettings)):
            raise TypeError(
                "settings must be FullPrecisionSettings, HalfPrecisionSettings or DoublePrecisionSettings,"
                f" found {settings!r}"
            )
        self.settings = settings

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings.__name__})"

    def _wire(self, record: Mapping[str, Any] | None) -> Any:
        """The tree the engine encodes: Burn's id text, and bincode's marks for maps and enums."""
        tree = _ids_to_burn(record)
        return _bincode_layout(tree) if self.format.startswith("bin") else tree
