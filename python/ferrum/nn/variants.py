"""Checks shared by Burn's enum configs (``ActivationConfig``, ``NormalizationConfig``): a known variant,
holding the settings that variant takes.

Example:
    >>> from ferrum.nn.variants import check_kind
    >>> check_kind("NormalizationConfig", "Weight", ("Batch", "Layer"))
    Traceback (most recent call last):
    ...
    ValueError: NormalizationConfig.kind: expected one of Batch, Layer, found 'Weight'
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["check_kind", "check_settings"]


def check_kind(owner: str, kind: str, names: Sequence[str]) -> None:
    """Raise ``ValueError`` unless ``kind`` is one of the variant ``names``."""
    if kind not in names:
        raise ValueError(f"{owner}.kind: expected one of {', '.join(names)}, found {kind!r}")


def check_settings(owner: str, kind: str, settings: object, wanted: type) -> None:
    """Raise ``ValueError`` unless variant ``kind``'s ``settings`` are a ``wanted``."""
    if not isinstance(settings, wanted):
        found = type(settings).__name__
        raise ValueError(f"{owner}.{kind} needs a {wanted.__name__}, found {found}")
