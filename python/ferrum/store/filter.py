"""``PathFilter``: which tensors a store loads or saves (Burn's ``PathFilter``).

A path passes when it matches any rule: a regular expression (Python ``re``,
searched anywhere in the path), an exact path, or a predicate on
``(path, container)``. A filter without rules passes everything.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

__all__ = ["PathFilter"]

Predicate = Callable[[str, str], bool]


@dataclasses.dataclass(frozen=True)
class PathFilter:
    """Rules selecting tensor paths; builder methods return new filters.

    Example:
        >>> from ferrum.store import PathFilter
        >>> f = PathFilter().with_regex(r"^encoder\\.").with_full_path("head.weight")
        >>> f.matches("encoder.layer.0.weight"), f.matches("head.weight"), f.matches("head.bias")
        (True, True, False)
    """

    regexes: tuple[re.Pattern[str], ...] = ()
    full_paths: frozenset[str] = frozenset()
    predicates: tuple[Predicate, ...] = ()
    all: bool = False

    def with_regex(self, pattern: str) -> PathFilter:
        """Also pass paths where ``pattern`` matches; ``re.error`` names a bad pattern."""
        return dataclasses.replace(self, regexes=(*self.regexes, _compile(pattern)))

    def with_full_path(self, path: str) -> PathFilter:
        """Also pass exactly ``path``."""
        return dataclasses.replace(self, full_paths=self.full_paths | {path})

    def with_predicate(self, predicate: Predicate) -> PathFilter:
        """Also pass paths for which ``predicate(path, container)`` is true."""
        return dataclasses.replace(self, predicates=(*self.predicates, predicate))

    def match_all(self) -> PathFilter:
        """Pass every path."""
        return dataclasses.replace(self, all=True)

    def is_empty(self) -> bool:
        """No rule: every path passes."""
        return not (self.regexes or self.full_paths or self.predicates or self.all)

    def matches(self, path: str, container: str = "") -> bool:
        """Whether ``path`` (held by a ``container`` module) passes."""
        if self.is_empty() or self.all or path in self.full_paths:
            return True
        return any(r.search(path) for r in self.regexes) or any(p(path, container) for p in self.predicates)


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise ValueError(f"invalid path filter pattern {pattern!r}: {err}") from None
