"""Opening artifact files without following a symbolic link planted under their name.

An artifact directory may be writable by others (shared, downloaded): a
link planted as ``experiment.log`` or ``train/epoch-1/Loss.log`` must not
make the Learner truncate or append to the file the link points at. These
functions refuse a link in the last component of the path with an
``OSError`` that names the file; links in the folders above it are followed.

Example:
    >>> import os, tempfile
    >>> from ferrum.train.safe_open import open_no_follow
    >>> folder = tempfile.mkdtemp()
    >>> with open_no_follow(os.path.join(folder, "experiment.log"), "a") as log:
    ...     _ = log.write("started\\n")
"""

from __future__ import annotations

import os
from typing import BinaryIO, Literal, TextIO

__all__ = ["create_no_follow", "open_no_follow"]

# O_NOFOLLOW makes the kernel refuse the link itself, with no window between a check and the open.
# Windows has neither it nor user-planted links without privileges; O_BINARY keeps its C runtime
# from translating line ends a second time (Python's own open() always sets it).
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FLAGS = os.O_WRONLY | os.O_CREAT | _NO_FOLLOW | getattr(os, "O_BINARY", 0)
_TEXT_MODES = {"w": os.O_TRUNC, "a": os.O_APPEND}


def open_no_follow(path: str | os.PathLike[str], mode: Literal["w", "a"], encoding: str = "utf-8") -> TextIO:
    """``open(path, mode, encoding=encoding)`` for writing, refusing a symbolic link at ``path``."""
    fd = _open(path, _TEXT_MODES[mode])
    try:
        return os.fdopen(fd, mode, encoding=encoding)
    except BaseException:
        os.close(fd)
        raise


def create_no_follow(path: str | os.PathLike[str]) -> BinaryIO:
    """A new file at ``path`` opened for binary writing; an error if anything, even a link, is there."""
    fd = _open(path, os.O_EXCL)
    try:
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def _open(path: str | os.PathLike[str], flags: int) -> int:
    refusal = f"refusing to write through a symbolic link: {os.fspath(path)}"
    if not _NO_FOLLOW and os.path.islink(path):
        raise OSError(refusal)
    try:
        return os.open(path, _FLAGS | flags, 0o666)
    except OSError as err:
        # The kernel's ELOOP ("too many levels of symbolic links") does not say which file or why.
        if os.path.islink(path):
            raise type(err)(err.errno, refusal) from err
        raise
