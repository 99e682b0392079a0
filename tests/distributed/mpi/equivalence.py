"""Train 20 Adam steps on the same data, as one process (batch 64) or as MPI ranks (64 // ranks each).

    python -m tests.distributed.mpi.equivalence single|ddp|learner mlp|cnn OUT.npz

Writes the final parameters (by path) from rank 0. tests/distributed/test_mpi.py
compares the runs: data-parallel training must give one process's weights.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np
from ferrum import D1, D2, D3, Int, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import Batcher, DataLoaderBuilder
from ferrum.data.dataset import InMemDataset
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, Relu
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.optim import AdamConfig
from ferrum.train import ClassificationOutput, Learner, PlainRenderer, SupervisedTraining, TrainOutput

# The guide's model (run from the repository root, as tests/distributed/test_mpi.py does).
from examples.guide.data import MnistBatch
from examples.guide.model import ModelConfig

B = Autodiff[NdArray]
STEPS, BATCH = 20, 64


@dataclass(frozen=True)
class Item:
    image: Any
    label: int


class Images(Batcher[Item, MnistBatch[Any]]):
    def batch(self, items: list[Item], device: Any) -> MnistBatch[Any]:
        images: Tensor[Any, D3] = Tensor.from_numpy(np.stack([i.image for i in items]), device)
        targets: Tensor[Any, D1, Int] = Tensor.from_data([i.label for i in items], device)
        return MnistBatch(images, targets)


class Mlp(Module[Any]):
    fc1: Linear[Any]
    act: Relu
    fc2: Linear[Any]

    def forward(self, images: Tensor[Any, D3]) -> Tensor[Any, D2]:
        batch = images.dims()[0]
        return self.fc2.forward(self.act.forward(self.fc1.forward(images.reshape((batch, 28 * 28)))))

    def step(self, batch: MnistBatch[Any]) -> ClassificationOutput[Any]:
        out = self.forward(batch.images)
        loss = CrossEntropyLossConfig().init(out.device()).forward(out, batch.targets)
        return ClassificationOutput(loss, out, batch.targets)

    def train_step(self, batch: MnistBatch[Any]) -> TrainOutput[ClassificationOutput[Any]]:
        item = self.step(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: MnistBatch[Any]) -> ClassificationOutput[Any]:
        return self.step(batch)


def make_model(name: str) -> Any:
    device = B.device()
    if name == "cnn":
        return ModelConfig(10, 64, dropout=0.0).init(device)
    return Mlp(LinearConfig(28 * 28, 64).init(device), Relu(), LinearConfig(64, 10).init(device))


def dataset() -> InMemDataset[Item]:
    rng = np.random.default_rng(0)
    images = rng.random((STEPS * BATCH, 28, 28), dtype=np.float32)
    labels = rng.integers(0, 10, STEPS * BATCH)
    return InMemDataset([Item(image, int(label)) for image, label in zip(images, labels, strict=True)])


def main(mode: str, name: str, out: str) -> None:
    B.seed(0)
    model = make_model(name)
    optim = AdamConfig().init()
    builder = DataLoaderBuilder(Images()).shuffle(7).set_device(B.device())
    rank = 0
    if mode == "single":
        loader = builder.batch_size(BATCH).build(dataset())
        for batch in loader:
            grads = model.train_step(batch).grads
            model = optim.step(1e-3, model, grads)
    elif mode == "ddp":
        from ferrum.distributed import Communicator

        comm = Communicator()
        rank = comm.rank
        B.seed(0 if rank == 0 else 100 + rank)  # other ranks start elsewhere: the broadcast must undo that
        model = comm.broadcast_module(make_model(name))
        loader = builder.batch_size(BATCH // comm.size).shard(comm.rank, comm.size).build(dataset())
        for batch in loader:
            grads = model.train_step(batch).grads
            model = optim.step(1e-3, model, comm.sync_gradients(grads))
    else:
        from ferrum.distributed import Communicator, DataParallel

        comm = Communicator()
        rank = comm.rank
        loader = builder.batch_size(BATCH // comm.size).build(dataset())
        valid = DataLoaderBuilder(Images()).batch_size(BATCH).set_device(NdArray.device()).build(dataset())
        training = SupervisedTraining(tempfile.mkdtemp(), loader, valid)
        if name == "mlp":
            training = training.with_training_strategy(DataParallel(comm))
        # (the CNN relies on the default: launched by mpiexec with two ranks, the Learner goes data-parallel)
        training = training.with_plots(False).renderer(PlainRenderer(stream=sys.stderr))
        model = training.launch(Learner(model, optim, 1e-3)).model
    if rank == 0:
        np.savez(out, **{path: param.val().to_numpy() for path, param in model.named_parameters()})


if __name__ == "__main__":
    main(*sys.argv[1:4])
