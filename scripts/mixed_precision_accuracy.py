"""Accuracy of bf16 mixed-precision training against f32: ``python scripts/mixed_precision_accuracy.py``.

Trains each example twice with the same seed and data order, once in f32 and
once with ``with_precision(Precision.BF16_MIXED)``, and prints the test
accuracy of both runs (validation as the Learner ran it, and the returned f32
model measured again in f32), the final training loss and the wall time:

- the guide's CNN (``examples/guide``: hidden 512, Adam 1e-3, batch 64) on the
  shipped MNIST sample, 4,000 training and 1,000 test digits, ``--epochs``
  (default 10, the guide's);
- the text classifier (``examples/text_classification``: 3 epochs of 3,200
  sentences, batch 32), tested on its 500 test sentences.

``--json PATH`` writes the figures. Too slow for the test suite (minutes on
two cores); ``tests/train/test_mixed_precision.py`` checks the same on a tiny
model.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoader, DataLoaderBuilder
from ferrum.data.dataset.vision import MnistDataset
from ferrum.optim import AdamConfig
from ferrum.train import Learner, PlainRenderer, Precision, Split, SupervisedTraining
from ferrum.train.metric import AccuracyMetric, LossMetric

from examples.guide.model import ModelConfig
from examples.guide.training import mnist_dataloaders
from examples.text_classification.data import (
    MAX_LEN,
    CountingDataset,
    TextClassificationBatcher,
    Tokenizer,
)
from examples.text_classification.model import TextClassificationModelConfig

TrainB = Autodiff[NdArray]


def accuracy(model: Any, loader: DataLoader[Any]) -> float:
    """Top-1 accuracy in percent of ``model.inference_step`` over ``loader`` (f32, inner backend)."""
    right = total = 0
    for batch in loader:
        out = model.inference_step(batch)
        predicted = out.output.argmax(1).squeeze_dim(1).to_numpy()
        targets = out.targets.to_numpy()
        right += int((predicted == targets).sum())
        total += len(targets)
    return 100.0 * right / total


def run(
    directory: Path,
    loaders: tuple[DataLoader[Any], DataLoader[Any]],
    model: Any,
    lr: float,
    epochs: int,
    precision: Precision,
) -> dict[str, float]:
    train, valid = loaders
    start = time.perf_counter()
    result = (
        SupervisedTraining(directory, train, valid)
        .metrics(AccuracyMetric(), LossMetric())
        .num_epochs(epochs)
        .renderer(PlainRenderer(interval=3600.0, stream=io.StringIO()))
        .with_plots(False)
        .with_application_logger(False)
        .with_precision(precision)
        .launch(Learner(model, AdamConfig().init(), lr))
    )
    seconds = time.perf_counter() - start
    return {
        "valid accuracy (as trained)": result.summary.metric("Accuracy", Split.Valid).last,
        "test accuracy (f32 model)": accuracy(result.model, valid),
        "train loss (last epoch)": result.summary.metric("Loss", Split.Train).last,
        "seconds": seconds,
    }


def guide(directory: Path, epochs: int, precision: Precision, seed: int) -> dict[str, float]:
    TrainB.seed(seed)
    loaders = mnist_dataloaders(
        TrainB.device(), MnistDataset.sample("train"), MnistDataset.sample("test"), 64, seed, 0
    )
    model = ModelConfig(10, 512).init(TrainB.device())
    return run(directory, loaders, model, 1e-3, epochs, precision)


def text(directory: Path, epochs: int, precision: Precision, seed: int) -> dict[str, float]:
    TrainB.seed(seed)
    batcher = TextClassificationBatcher(Tokenizer(), MAX_LEN)
    train = DataLoaderBuilder(batcher).batch_size(32).shuffle(seed).build(CountingDataset.train(3200))
    test = DataLoaderBuilder(batcher).batch_size(32).build(CountingDataset.test(500))
    base = TextClassificationModelConfig(CountingDataset.num_classes(), Tokenizer().vocab_size(), MAX_LEN)
    model = base.init(TrainB.device())
    return run(directory, (train, test), model, 1e-3, epochs, precision)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--epochs", type=int, default=10, help="epochs of the guide's CNN")
    parser.add_argument("--text-epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--only", choices=["guide", "text"])
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    figures: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="mixed-precision-") as tmp:
        for name, fn, epochs in (("guide", guide, args.epochs), ("text", text, args.text_epochs)):
            if args.only and name != args.only:
                continue
            figures[name] = {}
            for precision in (Precision.FULL, Precision.BF16_MIXED):
                row = fn(Path(tmp) / f"{name}-{precision.value}", epochs, precision, args.seed)
                figures[name][precision.value] = row
                cells = ", ".join(f"{k} {v:.4g}" for k, v in row.items())
                print(f"{name} {precision.value}: {cells}", flush=True)
            full, mixed = figures[name]["32-true"], figures[name]["bf16-mixed"]
            delta = mixed["test accuracy (f32 model)"] - full["test accuracy (f32 model)"]
            print(f"{name}: bf16-mixed - f32 test accuracy = {delta:+.2f} points", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
