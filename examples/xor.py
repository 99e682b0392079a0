"""XOR, end to end: a data set, a batcher and loader, a model, Adam,
validation after each epoch with an early stop at 100%, then the trained
model saved with CompactRecorder and loaded back for inference.

Run with `python examples/xor.py`.
"""

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ferrum import D1, D2, Device, Int, Tensor, config
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.data.dataloader import Batcher, DataLoaderBuilder
from ferrum.data.dataset import InMemDataset
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, Relu
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.optim import AdamConfig, GradientsParams
from ferrum.record import CompactRecorder

B = TypeVar("B", bound=Backend)
TrainB = Autodiff[NdArray]
InferB = NdArray

PATTERNS = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
EXPECTED = [0, 1, 1, 0]


class XorModel(Module[B]):
    fc1: Linear[B]
    fc2: Linear[B]
    fc3: Linear[B]
    relu: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        x = self.relu.forward(self.fc1.forward(x))
        x = self.relu.forward(self.fc2.forward(x))
        return self.fc3.forward(x)


@config
class XorModelConfig:
    input: int = 2
    hidden: int = 16
    output: int = 2

    def init(self, device: Device[B]) -> XorModel[B]:
        return XorModel(
            fc1=LinearConfig(self.input, self.hidden).init(device),
            fc2=LinearConfig(self.hidden, self.hidden).init(device),
            fc3=LinearConfig(self.hidden, self.output).init(device),
            relu=Relu(),
        )


@dataclass(frozen=True)
class XorSample:
    x: tuple[float, float]
    y: int


class XorBatcher(Batcher[XorSample, tuple[Tensor[B, D2], Tensor[B, D1, Int]]]):
    def __init__(self, device: Device[B]) -> None:
        self.device = device

    def batch(self, items: list[XorSample]) -> tuple[Tensor[B, D2], Tensor[B, D1, Int]]:
        xs: Tensor[B, D2] = Tensor.from_data([list(s.x) for s in items], self.device)
        ys: Tensor[B, D1, Int] = Tensor.from_data([s.y for s in items], self.device)
        return xs, ys


def predict(model: XorModel[InferB]) -> list[int]:
    inputs: Tensor[InferB, D2] = Tensor.from_data(PATTERNS, InferB.device())
    flat: Tensor[InferB, D1, Int] = model.forward(inputs).argmax(1).flatten(0, 1)
    return [int(v) for v in flat.to_data().to_list()]


def train(num_epochs: int = 50, lr: float = 1e-3, batch_size: int = 32) -> XorModel[InferB]:
    TrainB.seed(42)
    device = TrainB.device()
    samples = [XorSample((p[0], p[1]), y) for p, y in zip(PATTERNS, EXPECTED, strict=True)]
    builder = DataLoaderBuilder(XorBatcher(device)).batch_size(batch_size).shuffle(42)
    dataloader = builder.build(InMemDataset(samples * 200))
    model = XorModelConfig().init(device)
    optim = AdamConfig().init()
    loss_fn = CrossEntropyLossConfig().init(device)

    for epoch in range(1, num_epochs + 1):
        epoch_loss, n_batches = 0.0, 0
        for inputs, targets in dataloader:
            loss = loss_fn.forward(model.forward(inputs), targets)
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(lr, model, grads)
            epoch_loss += loss.into_scalar()
            n_batches += 1
        accuracy = sum(p == e for p, e in zip(predict(model.valid()), EXPECTED, strict=True)) / len(EXPECTED)
        print(f"Epoch {epoch:>3} | Loss: {epoch_loss / n_batches:.4f} | Accuracy: {accuracy:.0%}")
        if accuracy == 1.0:
            print(f"Early stop at epoch {epoch}")
            break
    return model.valid()


def main() -> None:
    trained = train()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "xor-model")
        trained.save_file(path, CompactRecorder())  # half precision, NamedMpk: Burn loads it too
        loaded = XorModelConfig().init(InferB.device()).load_file(path, CompactRecorder(), InferB.device())
    predictions = predict(loaded)
    for pattern, p in zip(PATTERNS, predictions, strict=True):
        print(f"{pattern[0]:.0f} XOR {pattern[1]:.0f} -> {p}")
    assert predictions == EXPECTED, f"the reloaded model predicts {predictions}, expected {EXPECTED}"


if __name__ == "__main__":
    main()
