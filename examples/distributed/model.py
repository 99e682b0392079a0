"""A two-layer perceptron on flattened digits, with the Learner's training and validation steps."""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, Device, Tensor, config
from ferrum.backend import Autodiff, Backend
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, Relu
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.train import ClassificationOutput, TrainOutput

from .data import MnistBatch

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


class Mlp(Module[B]):
    hidden: Linear[B]
    output: Linear[B]
    activation: Relu

    def forward(self, images: Tensor[B, D2]) -> Tensor[B, D2]:
        """Flattened images ``[batch, 784]`` to class scores ``[batch, 10]``."""
        return self.output.forward(self.activation.forward(self.hidden.forward(images)))

    def forward_classification(self, batch: MnistBatch[B]) -> ClassificationOutput[B]:
        output = self.forward(batch.images)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, batch.targets)
        return ClassificationOutput(loss, output, batch.targets)

    def train_step(
        self: Mlp[Autodiff[I]], batch: MnistBatch[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        item = self.forward_classification(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: MnistBatch[B]) -> ClassificationOutput[B]:
        return self.forward_classification(batch)


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
