"""Precision settings: the element types a recorder stores tensors as (Burn's ``record/settings.rs``)."""

from __future__ import annotations

from typing import ClassVar

__all__ = ["DoublePrecisionSettings", "FullPrecisionSettings", "HalfPrecisionSettings", "PrecisionSettings"]


class PrecisionSettings:
    """The element types tensors are stored as (Burn's ``PrecisionSettings``)."""

    name: ClassVar[str] = "full"


class FullPrecisionSettings(PrecisionSettings):
    """Floats as f32, ints as i32 (Burn's default)."""

    name: ClassVar[str] = "full"


class HalfPrecisionSettings(PrecisionSettings):
    """Floats as f16, ints as i16: half the size, about 3 significant digits.

    Example:
        >>> from ferrum.record import NamedMpkFileRecorder
        >>> NamedMpkFileRecorder(HalfPrecisionSettings).settings.name  # what CompactRecorder() uses
        'half'
    """

    name: ClassVar[str] = "half"


class DoublePrecisionSettings(PrecisionSettings):
    """Floats as f64, ints as i64."""

    name: ClassVar[str] = "double"
