"""Custom differentiable operations, written with ferrum tensor ops.

Burn lets a backend extension define an op by its forward and backward; in
ferrum, subclass :class:`Function` and implement both as static methods. The
forward runs on detached tensors and the graph records one node whose
backward is yours, so a fused op costs one graph node instead of several.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.autodiff import Context, Function
    >>> from ferrum.backend import Autodiff, NdArray
    >>> class Square(Function):
    ...     @staticmethod
    ...     def forward(ctx: Context, *inputs: Tensor) -> Tensor:
    ...         (x,) = inputs
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx: Context, grad: Tensor) -> tuple[Tensor | None, ...]:
    ...         (x,) = ctx.saved_tensors
    ...         return (grad * x * 2.0,)
    >>> x = Tensor.from_floats([3.0], Autodiff[NdArray].device()).require_grad()
    >>> x.grad(Square.apply(x).sum().backward()).to_data().to_list()
    [6.0]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, TypeVar

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Float, Tensor
from ferrum.backend import Backend

__all__ = ["Context", "Function"]

B = TypeVar("B", bound=Backend)


class Context:
    """Carries what the forward saves for the backward."""

    def __init__(self) -> None:
        self._saved: tuple[Tensor[Any, Any, Any], ...] = ()
        self.values: dict[str, object] = {}

    def save_for_backward(self, *tensors: Tensor[Any, Any, Any]) -> None:
        """Keep tensors for the backward, which receives them on the inner
        backend (where gradients live)."""
        self._saved = tuple(t.inner() if t.device().is_autodiff else t for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Tensor[Any, Any, Any], ...]:
        """What ``save_for_backward`` kept, in its order, on the inner backend."""
        return self._saved


class Function(ABC):
    """Base class of custom ops: implement ``forward`` and ``backward``.

    ``forward(ctx, *inputs)`` gets detached inputs and returns one Float
    tensor; ``backward(ctx, grad)`` gets the output's gradient (on the inner
    backend) and returns one gradient, or None, per input, each with its
    input's shape.
    """

    @staticmethod
    @abstractmethod
    def forward(ctx: Context, *inputs: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        """The op's value, from detached inputs."""

    @staticmethod
    @abstractmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        """One gradient (or None) per input, from the output's gradient."""

    @classmethod
    def apply(cls, *inputs: Tensor[B, Any, Float]) -> Tensor[B, Any, Float]:
        """Run the op: its forward now, its backward during ``backward()``."""
        if not inputs:
            raise ValueError(f"{cls.__name__}.apply: expected at least one input tensor")
        ctx = Context()
        out = cls.forward(ctx, *(t.detach() for t in inputs))
        if not isinstance(out, Tensor):
            raise TypeError(f"{cls.__name__}.forward must return a Tensor, found {type(out).__name__}")

        def backward(grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
            return cls.backward(ctx, grad)

        return _ferrum.custom_op(cls.__name__, list(inputs), out, backward)
