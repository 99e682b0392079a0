"""The file listing the folder datasets (images, text) share: every file below a root that a test keeps.

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
from collections.abc import Callable
from pathlib import Path

__all__ = ["files_below"]


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
