"""lib.rs: the training loop written by hand, without the Learner.

Each step is spelled out: forward, loss, ``backward``, the gradients of the
model's parameters (``GradientsParams.from_grads``), and the optimizer's
step, which returns the updated model. Accuracy is computed from the
outputs; after each epoch ``model.valid()`` gives the model on the inner
backend (no autodiff graph) for the validation loop. The model, the
batcher and the loaders are the guide's (``examples.guide``): Burn's
example imports its guide's too.
"""

from __future__ import annotations

import statistics
from typing import Any, TypeVar

from ferrum import D1, D2, Int, Tensor, config
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.data.dataset import Dataset
from ferrum.data.dataset.vision import MnistItem
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.optim import AdamConfig, GradientsParams

from ..guide.data import MnistBatch
from ..guide.model import Model, ModelConfig
from ..guide.training import mnist_dataloaders

B = TypeVar("B", bound=Backend)
TrainB = Autodiff[NdArray]


@config
class MnistTrainingConfig:
    model: ModelConfig
    optimizer: AdamConfig
    num_epochs: int = 10
    batch_size: int = 64
    num_workers: int = 4
    seed: int = 42
    lr: float = 1.0e-4


def accuracy(output: Tensor[B, D2], targets: Tensor[B, D1, Int]) -> float:
    """The percentage of rows whose highest score is at the target class: the metric, by hand."""
    predictions = output.argmax(1).squeeze_dim(1)
    num_predictions = targets.dims()[0]
    num_corrects = predictions.equal(targets).int().sum().into_scalar()
    return num_corrects / num_predictions * 100.0


def loss_of(output: Tensor[B, D2], targets: Tensor[B, D1, Int]) -> Tensor[B, D1]:
    return CrossEntropyLossConfig().init(output.device()).forward(output, targets)


def run(
    cfg: MnistTrainingConfig,
    train_data: Dataset[MnistItem],
    valid_data: Dataset[MnistItem],
    log_every: int = 1,
) -> list[dict[str, float]]:
    """Train and validate for ``cfg.num_epochs``; each epoch's mean losses and accuracies.

    Prints every ``log_every``-th training iteration and a line per epoch.
    """
    device = TrainB.device()
    TrainB.seed(cfg.seed)

    model: Model[TrainB] = cfg.model.init(device)
    optim = cfg.optimizer.init()

    # Validation needs no gradients: its batches are made on the inner backend.
    dataloader_train, dataloader_valid = mnist_dataloaders(
        device, train_data, valid_data, cfg.batch_size, cfg.seed, cfg.num_workers
    )

    history = []
    for epoch in range(1, cfg.num_epochs + 1):
        train_losses, train_accuracies = [], []
        batch: MnistBatch[Any]
        for iteration, batch in enumerate(dataloader_train, start=1):
            output = model.forward(batch.images)
            loss = loss_of(output, batch.targets)
            acc = accuracy(output, batch.targets)
            train_losses.append(loss.into_scalar())
            train_accuracies.append(acc)
            if iteration % log_every == 0:
                print(
                    f"[Train - Epoch {epoch} - Iteration {iteration}] "
                    f"Loss {train_losses[-1]:.3f} | Accuracy {acc:.1f} %"
                )
            grads = loss.backward()  # the gradients of this backward pass
            params = GradientsParams.from_grads(grads, model)  # by parameter of the model
            model = optim.step(cfg.lr, model, params)  # the updated model

        model_valid: Model[NdArray] = model.valid()  # the same weights, without autodiff
        valid_losses, valid_accuracies, sizes = [], [], []
        for batch in dataloader_valid:
            output_valid = model_valid.forward(batch.images)
            valid_losses.append(loss_of(output_valid, batch.targets).into_scalar())
            valid_accuracies.append(accuracy(output_valid, batch.targets))
            sizes.append(batch.targets.dims()[0])
        total = sum(sizes)
        summary = {
            "train_loss": statistics.fmean(train_losses),
            "train_accuracy": statistics.fmean(train_accuracies),
            # Weighted by batch size: the last batch may be smaller.
            "valid_loss": sum(v * n for v, n in zip(valid_losses, sizes, strict=True)) / total,
            "valid_accuracy": sum(a * n for a, n in zip(valid_accuracies, sizes, strict=True)) / total,
        }
        history.append(summary)
        print(
            f"[Epoch {epoch}/{cfg.num_epochs}] train loss {summary['train_loss']:.4f} "
            f"accuracy {summary['train_accuracy']:.2f} % | valid loss {summary['valid_loss']:.4f} "
            f"accuracy {summary['valid_accuracy']:.2f} %"
        )
    return history
