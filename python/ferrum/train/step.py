"""What a model gives the Learner: Burn's ``TrainStep``/``InferenceStep`` as two methods, and ``TrainOutput``.

A model trained by the Learner defines

- ``train_step(self, batch) -> TrainOutput[Output]``: forward, loss and
  backward on the autodiff backend (annotate ``self: "Model[Autodiff[I]]"``
  so that mypy only allows it there, as it only allows ``backward()``);
- ``inference_step(self, batch) -> Output``: the validation step, run on
  the inner backend (``model.valid()``).

``Output`` is a ``ClassificationOutput``, ``RegressionOutput``, ... or any
class of the user's that gives what its metrics read. A model may also
define ``optimize(self, optimizer, lr, grads)`` to change how the optimizer
updates it (Burn's ``TrainStep::optimize``); the default is
``optimizer.step(lr, model, grads)``.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import Autodiff, NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.train import TrainOutput
    >>> device = Autodiff[NdArray].device()
    >>> layer = LinearConfig(3, 1).init(device)
    >>> loss = layer.forward(Tensor.ones((2, 3), device)).sum()
    >>> out = TrainOutput(layer, loss.backward(), loss)
    >>> len(out.grads)
    2
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from ferrum._ferrum import Gradients
from ferrum.module import Module
from ferrum.optim import GradientsParams

__all__ = ["InferenceStep", "TrainOutput", "TrainStep"]

T_co = TypeVar("T_co", covariant=True)
BatchT_contra = TypeVar("BatchT_contra", contravariant=True)


class TrainOutput(Generic[T_co]):
    """The result of a training step: the gradients keyed by parameter, and the item metrics read.

    ``TrainOutput(model, loss.backward(), item)`` turns the ``Gradients`` of
    ``backward()`` into the ``GradientsParams`` of ``model`` (Burn's
    ``TrainOutput::new``); ready ``GradientsParams`` are taken as they are.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import Autodiff, NdArray
        >>> from ferrum.nn import LinearConfig
        >>> device = Autodiff[NdArray].device()
        >>> model = LinearConfig(2, 1).init(device)
        >>> loss = model.forward(Tensor.ones((4, 2), device)).mean()
        >>> output = TrainOutput(model, loss.backward(), loss)
        >>> len(output.grads)  # the weight's gradient and the bias's
        2
    """

    __slots__ = ("grads", "item")

    def __init__(self, module: Module[Any], grads: Gradients | GradientsParams, item: T_co) -> None:
        if isinstance(grads, GradientsParams):
            self.grads = grads
        elif isinstance(grads, Gradients):
            self.grads = GradientsParams.from_grads(grads, module)
        else:
            raise TypeError(
                f"TrainOutput needs the Gradients of loss.backward() (or GradientsParams), "
                f"found {type(grads).__name__}"
            )
        self.item = item

    def __repr__(self) -> str:
        return f"TrainOutput({self.grads!r}, {type(self.item).__name__})"


class TrainStep(Protocol[BatchT_contra, T_co]):
    """A model the Learner can train: Burn's ``TrainStep``."""

    def train_step(self, batch: BatchT_contra) -> TrainOutput[T_co]:
        """Forward, loss and backward on one batch."""
        ...


class InferenceStep(Protocol[BatchT_contra, T_co]):
    """A model the Learner can validate: Burn's ``InferenceStep``."""

    def inference_step(self, batch: BatchT_contra) -> T_co:
        """The output of one validation batch."""
        ...
