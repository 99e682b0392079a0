"""Writing a store's file atomically: into a temporary file beside it, then renamed over it.

A failed or interrupted save never leaves a half-written file under the
target's name. The temporary file is created with the usual permissions
(0666 less the umask), like the final file would be, inside a folder of its
own that only this user can enter (made by ``tempfile.mkdtemp`` beside the
target, so the rename stays on one file system): a writer that reopens the
temporary file by name (the safetensors package does) cannot be redirected by
a link someone else plants there, in a folder others may write to.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["write_atomically"]


def write_atomically(path: Path, write: Callable[[BinaryIO, str], None]) -> None:
    """Call ``write(file, temporary path)`` on a new file beside ``path``, then move it onto ``path``."""
    folder = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    tmp = folder / path.name
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as out:
            write(out, os.fspath(tmp))
            out.flush()
            # fsync is per file, not per descriptor: it also covers what a writer wrote by name.
            os.fsync(out.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        folder.rmdir()
