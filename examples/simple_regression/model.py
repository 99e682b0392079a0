"""model.rs: a one-hidden-layer network predicting one value, with its training and validation steps."""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, Device, Tensor, config
from ferrum.backend import Autodiff, Backend
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, Relu
from ferrum.nn.loss import MseLoss, Reduction
from ferrum.train import RegressionOutput, TrainOutput

from .data import RegressionBatch

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


class RegressionModel(Module[B]):
    input_layer: Linear[B]
    output_layer: Linear[B]
    activation: Relu

    def forward(self, inputs: Tensor[B, D2]) -> Tensor[B, D2]:
        """Scaled features [batch, features] to a standardised prediction [batch, 1]."""
        return self.output_layer.forward(self.activation.forward(self.input_layer.forward(inputs)))

    def forward_step(self, batch: RegressionBatch[B]) -> RegressionOutput[B]:
        targets = batch.targets.unsqueeze_dim(1)  # [batch, 1], as the output
        output = self.forward(batch.inputs)
        loss = MseLoss().forward(output, targets, Reduction.Mean)
        return RegressionOutput(loss, output, targets)

    def train_step(
        self: RegressionModel[Autodiff[I]], batch: RegressionBatch[Autodiff[I]]
    ) -> TrainOutput[RegressionOutput[Autodiff[I]]]:
        item = self.forward_step(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: RegressionBatch[B]) -> RegressionOutput[B]:
        return self.forward_step(batch)


@config
class RegressionModelConfig:
    num_features: int
    hidden_size: int = 64

    def init(self, device: Device[B]) -> RegressionModel[B]:
        return RegressionModel(
            input_layer=LinearConfig(self.num_features, self.hidden_size).init(device),
            output_layer=LinearConfig(self.hidden_size, 1).init(device),
            activation=Relu(),
        )
