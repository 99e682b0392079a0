"""A two-layer perceptron on flattened digits; its Learner steps come from ``examples.common.classifier``."""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, Device, Tensor, config
from ferrum.backend import Backend
from ferrum.nn import Linear, LinearConfig, Relu

from ..common.classifier import Classifier

B = TypeVar("B", bound=Backend)


class Mlp(Classifier[B]):
    hidden: Linear[B]
    output: Linear[B]
    activation: Relu

    def forward(self, images: Tensor[B, D2]) -> Tensor[B, D2]:
        """Flattened images ``[batch, 784]`` to class scores ``[batch, 10]``."""
        return self.output.forward(self.activation.forward(self.hidden.forward(images)))


@config
class MlpConfig:
    hidden_size: int = 128
    num_classes: int = 10

    def init(self, device: Device[B]) -> Mlp[B]:
        return Mlp(
            hidden=LinearConfig(28 * 28, self.hidden_size).init(device),
            output=LinearConfig(self.hidden_size, self.num_classes).init(device),
            activation=Relu(),
        )
