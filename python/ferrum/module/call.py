"""Calling a module: ``model(x)`` is ``model.forward(x)``, as in PyTorch and Equinox, typed as ``forward`` is.

``Module.__call__`` is a descriptor whose ``__get__`` returns the bound
``forward``: mypy and pyright then give ``model(x)`` the signature, overloads
and return type of the subclass's own ``forward`` with no plugin, and the call
adds no Python frame at run time.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import LinearConfig
    >>> layer = LinearConfig(4, 2).init(NdArray.device())
    >>> x = Tensor.ones((3, 4), NdArray.device())
    >>> layer(x).dims(), layer(x).equal(layer.forward(x)).all().item()
    ((3, 2), True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, overload

__all__ = ["CallForward"]

F = TypeVar("F", bound=Callable[..., Any])
F_co = TypeVar("F_co", covariant=True)


class _HasForward(Protocol[F_co]):
    @property
    def forward(self) -> F_co: ...


class CallForward:
    """The descriptor behind ``Module.__call__``: the bound ``forward`` of the instance it is read from.

    A module without ``forward`` gets a callable that raises ``TypeError``
    (and mypy or pyright reject the call).

    Example:
        >>> from ferrum.nn import Relu
        >>> relu = Relu()
        >>> relu.__call__ == relu.forward
        True
    """

    @overload
    def __get__(self, obj: None, objtype: type[Any] | None = None) -> CallForward: ...
    @overload
    def __get__(self, obj: _HasForward[F], objtype: type[Any] | None = None) -> F: ...
    def __get__(self, obj: Any, objtype: type[Any] | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.forward
        except AttributeError:
            pass

        def missing(*args: object, **kwargs: object) -> Any:
            raise TypeError(f"{type(obj).__name__} is not callable: it has no forward method")

        return missing
