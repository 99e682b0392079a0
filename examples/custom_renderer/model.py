"""The classifier the Learner trains, with its training and validation steps.

Burn's example trains the guide's CNN; this one is a two-layer perceptron
over the 784 pixels, which trains in a few seconds per epoch on a CPU.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D1, D2, D3, Device, Int, Tensor, config
from ferrum.backend import Autodiff, Backend
from ferrum.module import Module
from ferrum.nn import Dropout, DropoutConfig, Linear, LinearConfig, Relu
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.train import ClassificationOutput, TrainOutput

from .data import MnistBatch

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


class Model(Module[B]):
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

    def forward_classification(
        self, images: Tensor[B, D3], targets: Tensor[B, D1, Int]
    ) -> ClassificationOutput[B]:
        output = self.forward(images)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, targets)
        return ClassificationOutput(loss, output, targets)

    def train_step(
        self: Model[Autodiff[I]], batch: MnistBatch[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        item = self.forward_classification(batch.images, batch.targets)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: MnistBatch[B]) -> ClassificationOutput[B]:
        return self.forward_classification(batch.images, batch.targets)


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
