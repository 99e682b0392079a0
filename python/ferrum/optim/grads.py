"""``GradientsParams``: gradients keyed by parameter id, what an optimizer step consumes.

``loss.backward()`` returns gradients keyed by graph node; ``from_grads``
looks each parameter of a module up in them and keeps the ones that have a
gradient, keyed by the parameter's ``ParamId``. The gradients live on the
inner (plain) backend.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import Autodiff, NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.optim import GradientsParams
    >>> device = Autodiff[NdArray].device()
    >>> layer = LinearConfig(3, 2).init(device)
    >>> loss = layer.forward(Tensor.ones((4, 3), device)).sum()
    >>> grads = GradientsParams.from_grads(loss.backward(), layer)
    >>> len(grads), grads.get(layer.weight.id).dims()
    (2, (3, 2))
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ferrum._ferrum import Float, Gradients, Tensor
from ferrum.backend import Autodiff
from ferrum.module import Module, ParamId

__all__ = ["GradientsParams"]

FloatTensor = Tensor[Any, Any, Float]


class GradientsParams:
    """A map from ``ParamId`` to gradient tensor (Burn's ``GradientsParams``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.module import ParamId
        >>> from ferrum.optim import GradientsParams
        >>> grads = GradientsParams()
        >>> pid = ParamId.new()
        >>> grads.register(pid, Tensor.ones((2,), NdArray.device()))
        >>> len(grads), grads.remove(pid) is not None, len(grads)
        (1, True, 0)
    """

    __slots__ = ("_grads",)

    def __init__(self) -> None:
        self._grads: dict[ParamId, FloatTensor] = {}

    @staticmethod
    def from_grads(grads: Gradients, module: Module[Autodiff[Any]]) -> GradientsParams:
        """The gradient of every parameter of ``module`` that ``grads`` holds.

        Parameters that are not trained (``require_grad`` off) or that the
        loss does not depend on have no gradient and are left out. ``module``
        is typed on an autodiff backend (Burn's ``AutodiffModule``): the
        inner-backend copy ``model.valid()`` has no gradients to collect.
        """
        if not isinstance(grads, Gradients):
            raise TypeError(f"from_grads needs the Gradients of backward(), found {type(grads).__name__}")
        return GradientsParams._collect(grads, module, None)

    @staticmethod
    def from_params(
        grads: Gradients, module: Module[Autodiff[Any]], params: list[ParamId]
    ) -> GradientsParams:
        """As ``from_grads``, for the listed parameters of ``module`` only."""
        return GradientsParams._collect(grads, module, set(params))

    @staticmethod
    def _collect(grads: Gradients, module: Module[Any], wanted: set[ParamId] | None) -> GradientsParams:
        # ``wanted`` None takes every parameter: from_grads walks the module once, not twice.
        if not isinstance(module, Module):
            raise TypeError(f"from_grads needs a Module, found {type(module).__name__}")
        out = GradientsParams()
        for path, param in module.named_parameters():
            if (wanted is not None and param.id not in wanted) or not param.is_require_grad():
                continue
            tensor: Any = param.val()
            if not tensor.device().is_autodiff:
                raise TypeError(
                    f"from_grads: parameter '{path}' lives on a plain backend; gradients need a module"
                    " on an autodiff backend such as Autodiff[NdArray]"
                )
            grad = tensor.grad(grads)
            if grad is not None:
                out._grads[param.id] = grad
        return out

    def get(self, id: ParamId) -> FloatTensor | None:
        """The gradient of parameter ``id``, or None."""
        return self._grads.get(_checked_id(id))

    def remove(self, id: ParamId) -> FloatTensor | None:
        """Take the gradient of parameter ``id`` out, returning it (None if absent)."""
        return self._grads.pop(_checked_id(id), None)

    def register(self, id: ParamId, tensor: FloatTensor) -> None:
        """Set the gradient of parameter ``id`` (replacing any previous one)."""
        if not isinstance(tensor, Tensor) or tensor.kind is not Float:
            raise TypeError(f"GradientsParams.register: a gradient is a Float Tensor, found {tensor!r}")
        self._grads[_checked_id(id)] = tensor

    def len(self) -> int:
        """The number of gradients held."""
        return len(self._grads)

    def is_empty(self) -> bool:
        """Whether no gradient is held."""
        return not self._grads

    def ids(self) -> list[ParamId]:
        """The ids that have a gradient, in insertion order."""
        return list(self._grads)

    def __len__(self) -> int:
        return len(self._grads)

    def __contains__(self, id: object) -> bool:
        return id in self._grads

    def __iter__(self) -> Iterator[tuple[ParamId, FloatTensor]]:
        return iter(list(self._grads.items()))

    def __repr__(self) -> str:
        return f"GradientsParams({len(self._grads)} gradients)"


def _checked_id(id: object) -> ParamId:
    if not isinstance(id, ParamId):
        raise TypeError(f"gradients are keyed by ParamId, found {type(id).__name__} {id!r}")
    return id
