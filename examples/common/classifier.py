"""The Learner's training and validation steps of an image classifier, written once for the examples' models.

Burn's examples implement ``TrainStep`` and ``InferenceStep`` on each model,
the same few lines each time: the forward pass, the cross-entropy loss,
``backward`` for training. A model of ``mnist``, ``distributed``,
``custom_image_dataset``, ``custom_renderer`` and ``custom_learning_strategy``
extends ``Classifier`` and writes its fields and ``forward`` only.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from ferrum import D1, D2, Int, Tensor
from ferrum.backend import Autodiff, Backend
from ferrum.module import Module
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.train import ClassificationOutput, TrainOutput

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


class ImageBatch(Protocol[B]):
    """What the steps read of a batch: ``images`` ``[batch, ...]`` (any rank), ``targets`` ``[batch]``."""

    @property
    def images(self) -> Tensor[B, Any]: ...

    @property
    def targets(self) -> Tensor[B, D1, Int]: ...


class Classifier(Module[B]):
    """A module whose ``forward`` turns a batch's images into class scores ``[batch, num_classes]``,
    with the Learner's steps on batches of images and targets.

    Example:
        >>> from ferrum import D2
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Linear, LinearConfig
        >>> class Logistic(Classifier[B]):
        ...     linear: Linear[B]
        ...     def forward(self, images: Tensor[B, D2]) -> Tensor[B, D2]:
        ...         return self.linear.forward(images)
        >>> model = Logistic(linear=LinearConfig(4, 3).init(NdArray.device()))
        >>> model.forward(Tensor.zeros((2, 4), NdArray.device())).dims()
        (2, 3)
    """

    def forward(self, images: Tensor[B, Any]) -> Tensor[B, D2]:
        """Images ``[batch, ...]`` to class scores ``[batch, num_classes]``: each model writes its own."""
        raise NotImplementedError(f"{type(self).__name__} must define forward(images)")

    def forward_classification(self, batch: ImageBatch[B]) -> ClassificationOutput[B]:
        """The class scores of ``batch.images`` and their cross-entropy against ``batch.targets``."""
        output = self.forward(batch.images)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, batch.targets)
        return ClassificationOutput(loss, output, batch.targets)

    def train_step(
        self: Classifier[Autodiff[I]], batch: ImageBatch[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        """Burn's TrainStep: forward, loss and backward. mypy allows it on an autodiff backend only."""
        item = self.forward_classification(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: ImageBatch[B]) -> ClassificationOutput[B]:
        """Burn's InferenceStep: the validation (and evaluation) step, run on the inner backend."""
        return self.forward_classification(batch)
