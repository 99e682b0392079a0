"""What the folder datasets (images, text) share: the files below a root, the ids of the class names.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from ferrum.data.dataset.folder_walk import files_below
    >>> root = Path(tempfile.mkdtemp())
    >>> for name in ("b/2.txt", "a/1.txt", "a/skip.md"):
    ...     (root / name).parent.mkdir(exist_ok=True)
    ...     _ = (root / name).write_text("x")
    >>> [p.relative_to(root).as_posix() for p in files_below(root, lambda p: p.suffix == ".txt")]
    ['a/1.txt', 'b/2.txt']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["files_below", "index_classes"]


def files_below(root: Path, keep: Callable[[Path], bool]) -> list[Path]:
    """Every file below ``root`` (links followed) whose name ``keep`` accepts, sorted by path parts."""
    return sorted(
        (
            Path(folder) / name
            for folder, _, names in os.walk(root, followlinks=True)
            for name in names
            if keep(Path(name))
        ),
        key=lambda p: p.parts,
    )


def index_classes(classes: Sequence[str], duplicate_error: type[Exception]) -> dict[str, int]:
    """Each class name's position in ``classes``; a name listed twice raises ``duplicate_error``.

    Example:
        >>> index_classes(["cat", "dog"], ValueError)
        {'cat': 0, 'dog': 1}
        >>> index_classes(["cat", "cat"], ValueError)
        Traceback (most recent call last):
        ...
        ValueError: class 'cat' is listed twice (positions 0 and 1)
    """
    if isinstance(classes, str):
        raise TypeError("classes must be a sequence of class names, not a string")
    ids: dict[str, int] = {}
    for index, name in enumerate(classes):
        if name in ids:
            raise duplicate_error(f"class {name!r} is listed twice (positions {ids[name]} and {index})")
        ids[name] = index
    return ids
