"""Writing a store's file atomically: into a temporary file beside it, then renamed over it.

A failed or interrupted save never leaves a half-written file under the
target's name. The temporary file is created with the usual permissions
(0666 less the umask), like the final file would be.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["write_atomically"]

_COUNTER = itertools.count()


def write_atomically(path: Path, write: Callable[[BinaryIO, str], None]) -> None:
    """Call ``write(file, temporary path)`` on a new file beside ``path``, then move it onto ``path``."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.{next(_COUNTER)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out, os.fspath(tmp))
        os.replace(tmp, path)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise
