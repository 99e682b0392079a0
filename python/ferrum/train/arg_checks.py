"""The type check every training and evaluation builder makes of what it is handed.

Example:
    >>> from ferrum.train.arg_checks import require
    >>> require(3, str, "a name is a str")
    Traceback (most recent call last):
    ...
    TypeError: a name is a str, found int
"""

from __future__ import annotations

__all__ = ["require"]


def require(value: object, kind: type | tuple[type, ...], wanted: str) -> None:
    """Raise ``TypeError`` (``"<wanted>, found <type>"``) unless ``value`` is an instance of ``kind``.

    ``kind`` may be a runtime-checkable protocol, so ``wanted`` says what it must provide.
    """
    if not isinstance(value, kind):
        raise TypeError(f"{wanted}, found {type(value).__name__}")
