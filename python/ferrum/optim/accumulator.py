"""``GradientsAccumulator``: sum the gradients of several batches before one step.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import Autodiff, NdArray
    >>> from ferrum.nn import Linear, LinearConfig
    >>> from ferrum.optim import GradientsAccumulator, GradientsParams
    >>> device = Autodiff[NdArray].device()
    >>> layer = LinearConfig(2, 1).init(device)
    >>> accumulator = GradientsAccumulator[Linear[Autodiff[NdArray]]]()
    >>> for _ in range(3):
    ...     loss = layer.forward(Tensor.ones((1, 2), device)).sum()
    ...     accumulator.accumulate(layer, GradientsParams.from_grads(loss.backward(), layer))
    >>> accumulator.grads().get(layer.bias.id).to_data().to_list()
    [3.0]
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from ferrum._ferrum import Float, Tensor
from ferrum.module import Module, ParamId
from ferrum.optim.grads import GradientsParams

__all__ = ["GradientsAccumulator"]

M = TypeVar("M", bound=Module[Any])


class GradientsAccumulator(Generic[M]):
    """Sums ``GradientsParams`` per parameter until ``grads()`` takes the total out.

    Example:
        >>> from ferrum.optim import GradientsAccumulator
        >>> len(GradientsAccumulator().grads())
        0
    """

    __slots__ = ("_grads",)

    def __init__(self) -> None:
        self._grads = GradientsParams()

    def accumulate(self, module: M, grads: GradientsParams) -> None:
        """Add ``grads`` to the running sums of ``module``'s parameters.

        Gradients of ids that are not parameters of ``module`` are ignored,
        as in Burn.
        """
        if not isinstance(module, Module):
            raise TypeError(f"accumulate needs a Module, found {type(module).__name__}")
        if not isinstance(grads, GradientsParams):
            raise TypeError(f"accumulate needs GradientsParams, found {type(grads).__name__}")
        for param in module.parameters():
            new = grads.get(param.id)
            if new is None:
                continue
            old = self._grads.get(param.id)
            self._grads.register(param.id, new if old is None else _add(param.id, old, new))

    def grads(self) -> GradientsParams:
        """The accumulated gradients; the accumulator starts over empty."""
        out, self._grads = self._grads, GradientsParams()
        return out


def _add(id: ParamId, old: Tensor[Any, Any, Float], new: Tensor[Any, Any, Float]) -> Tensor[Any, Any, Float]:
    if old.dims() != new.dims():
        raise ValueError(
            f"GradientsAccumulator: the gradients of parameter {id} change shape from"
            f" {list(old.dims())} to {list(new.dims())}"
        )
    return old + new
