"""The classifier that ``custom_renderer`` and ``custom_learning_strategy`` train, and its config.

Burn's two examples train the guide's CNN; this is a two-layer perceptron
over the 784 pixels, which trains in a few seconds per epoch on a CPU, so
that each example's run shows its renderer or strategy at work quickly. It
reads the guide's batches (``examples.guide.data.MnistBatch``); its Learner
steps come from ``classifier.py``.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, Device, Tensor, config
from ferrum.backend import Backend
from ferrum.nn import Dropout, DropoutConfig, Linear, LinearConfig, Relu

from .classifier import Classifier

B = TypeVar("B", bound=Backend)


class Model(Classifier[B]):
    linear1: Linear[B]
    linear2: Linear[B]
    dropout: Dropout
    activation: Relu

    def forward(self, images: Tensor[B, D3]) -> Tensor[B, D2]:
        """Images [batch, height, width] to class scores [batch, num_classes]."""
        batch_size, height, width = images.dims()
        x = images.reshape((batch_size, height * width))
        x = self.dropout.forward(self.activation.forward(self.linear1.forward(x)))
        return self.linear2.forward(x)


@config
class ModelConfig:
    num_classes: int
    hidden_size: int
    dropout: float = 0.2

    def init(self, device: Device[B]) -> Model[B]:
        return Model(
            linear1=LinearConfig(28 * 28, self.hidden_size).init(device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init(device),
            dropout=DropoutConfig(self.dropout).init(),
            activation=Relu(),
        )
