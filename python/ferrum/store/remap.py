"""Renaming a file's tensor paths before they meet a module (Burn's ``KeyRemapper``).

``KeyRemapper`` applies ``(pattern, replacement)`` pairs in order with
``re.sub`` (Python syntax: ``\\1`` or ``\\g<name>`` for groups).
``map_indices_contiguous`` renumbers list indices that skip parameter-free
layers: PyTorch's ``nn.Sequential`` names ``conv.0`` and ``conv.2`` when a
ReLU sits between them, and a ferrum list of two convs has ``conv.0`` and ``conv.1``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

__all__ = ["KeyRemapper", "map_indices_contiguous"]


@dataclasses.dataclass(frozen=True)
class KeyRemapper:
    """Ordered ``re.sub`` rules over tensor paths.

    Example:
        >>> from ferrum.store import KeyRemapper
        >>> remap = KeyRemapper().add_pattern(r"^model\\.", "").add_pattern(r"\\.bn(\\d)\\.", r".norm\\1.")
        >>> remap.remap_path("model.block.bn1.weight")
        'block.norm1.weight'
    """

    patterns: tuple[tuple[re.Pattern[str], str], ...] = ()

    def add_pattern(self, pattern: str, replacement: str) -> KeyRemapper:
        """A remapper with one more rule; ValueError names a bad pattern."""
        try:
            compiled = re.compile(pattern)
        except re.error as err:
            raise ValueError(f"invalid key remapping pattern {pattern!r}: {err}") from None
        return dataclasses.replace(self, patterns=(*self.patterns, (compiled, replacement)))

    def is_empty(self) -> bool:
        """No rule."""
        return not self.patterns

    def remap_path(self, path: str) -> str:
        """``path`` after every rule, in order."""
        for pattern, replacement in self.patterns:
            try:
                path = pattern.sub(replacement, path)
            except (re.error, IndexError) as err:
                raise ValueError(f"key remapping {pattern.pattern!r} -> {replacement!r}: {err}") from None
        return path

    def remap(self, paths: Iterable[str]) -> dict[str, str]:
        """``{new path: original path}``; ValueError when two paths become one."""
        mapped: dict[str, str] = {}
        for path in paths:
            new = self.remap_path(path)
            if new in mapped:
                raise ValueError(f"key remapping maps both {mapped[new]!r} and {path!r} to {new!r}")
            mapped[new] = path
        return mapped


def map_indices_contiguous(paths: Iterable[str]) -> dict[str, str]:
    """``{new path: original path}`` with the indices at each list position renumbered 0, 1, 2...

    The indices seen after one prefix (``conv.`` in ``conv.0.weight``,
    ``conv.2.weight``) keep their order and lose their gaps.

    Example:
        >>> from ferrum.store import map_indices_contiguous
        >>> sorted(map_indices_contiguous(["conv.0.weight", "conv.2.weight", "fc.weight"]))
        ['conv.0.weight', 'conv.1.weight', 'fc.weight']
    """
    paths = list(paths)
    seen: dict[str, set[int]] = {}
    for path in paths:
        parts = path.split(".")
        for i, part in enumerate(parts):
            if part.isdigit():
                seen.setdefault(".".join(parts[:i]), set()).add(int(part))
    renumber = {prefix: {old: new for new, old in enumerate(sorted(found))} for prefix, found in seen.items()}
    mapped: dict[str, str] = {}
    for path in paths:
        parts = path.split(".")
        new_parts = [
            str(renumber[".".join(parts[:i])][int(part)]) if part.isdigit() else part
            for i, part in enumerate(parts)
        ]
        mapped[".".join(new_parts)] = path
    return mapped
