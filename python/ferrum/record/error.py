"""The errors of writing and reading records."""

from __future__ import annotations

from ferrum._ferrum import FerrumError

__all__ = ["RecordError", "RecordFileError"]


class RecordError(FerrumError, ValueError):
    """A record that cannot be written or read: damaged, foreign or of another architecture.

    A ``FerrumError`` like every error ferrum raises, and a ``ValueError``.
    """


class RecordFileError(OSError, RecordError):
    """A record file the file system would not write or read (a full or read-only disk, a
    missing folder): an ``OSError`` with ``errno`` and ``filename`` set, and a ``RecordError``.

    Example:
        >>> import errno
        >>> from ferrum.record import NamedMpkFileRecorder, RecordFileError
        >>> try:
        ...     NamedMpkFileRecorder().record({"w": 1.0}, "/no/such/folder/model")
        ... except OSError as err:
        ...     print(type(err).__name__, err.errno == errno.ENOENT, err.filename)
        RecordFileError True /no/such/folder/model.mpk
    """
