"""The smallest Learner workload the training tests run: ``y = 3x + 1`` fitted by one ``Linear(1, 1)``.

``Line`` is the model with Burn's train and inference steps; ``Pairs`` batches
floats ``x`` into ``(x [batch, 1], 3x + 1 [batch, 1])`` on its device.
"""

from __future__ import annotations

from typing import Any

from ferrum import D2, Tensor
from ferrum.data.dataloader import Batcher
from ferrum.module import Module
from ferrum.nn import Linear
from ferrum.nn.loss import MseLoss
from ferrum.train import RegressionOutput, TrainOutput


class Line(Module[Any]):
    fc: Linear[Any]

    def step(self, batch: tuple[Tensor[Any, D2], Tensor[Any, D2]]) -> RegressionOutput[Any]:
        out = self.fc.forward(batch[0])
        return RegressionOutput(MseLoss().forward(out, batch[1]), out, batch[1])

    def train_step(self, batch: Any) -> TrainOutput[RegressionOutput[Any]]:
        item = self.step(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: Any) -> RegressionOutput[Any]:
        return self.step(batch)


class Pairs(Batcher[float, Any]):
    def __init__(self, device: Any) -> None:
        self.device = device

    def batch(self, xs: list[float]) -> Any:
        x = Tensor.from_data([[x] for x in xs], self.device)
        return x, x * 3.0 + 1.0
