"""``ClosesOnExit``: what the closable objects share (data sets, writers, iterators, loggers).

Example:
    >>> from ferrum.data.closing import ClosesOnExit
    >>> class Resource(ClosesOnExit):
    ...     closed = False
    ...     def close(self) -> None:
    ...         self.closed = True
    >>> with Resource() as resource:
    ...     pass
    >>> resource.closed
    True
"""

from __future__ import annotations

import abc
from types import TracebackType

from typing_extensions import Self

__all__ = ["ClosesOnExit"]


class ClosesOnExit(abc.ABC):
    """A mixin for ``with obj: ...``: the block gets ``obj`` and calls ``obj.close()`` when it ends.

    ``close`` runs whether the block ends normally or by an exception, which it does not swallow.

    Example:
        >>> class Handle(ClosesOnExit):
        ...     def close(self) -> None:
        ...         print("closed")
        >>> with Handle():
        ...     print("working")
        working
        closed
    """

    @abc.abstractmethod
    def close(self) -> None:
        """Release what the object holds; closing twice does nothing."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
