"""``python -m examples.mnist``: Burn's MNIST model trained on augmented digits, evaluated per augmentation.

Options: ``--data DIR`` (the four MNIST IDX files, plain or ``.gz``;
default: the sample ferrum ships), ``--artifact-dir DIR`` (default:
``mnist`` in the temporary directory), ``--epochs N`` (default 5),
``--samples-per-transform N`` (training digits drawn per transform of each
combination; default 10,000 with ``--data``, 250 on the sample),
``--smoke`` (a tiny model on a few hundred digits, a temporary artifact folder).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from ferrum.data.dataset import Dataset, PartialDataset
from ferrum.data.dataset.vision import MnistDataset, MnistItem
from ferrum.optim import AdamWConfig
from ferrum.train import Split

from ..common.cli import example_parser
from .model import ModelConfig
from .training import MnistTrainingConfig, run

FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)


def load(data: Path | None) -> tuple[Dataset[MnistItem], Dataset[MnistItem], Dataset[MnistItem]]:
    """Training, validation and test digits: Burn's 55,000/5,000 cut of the full training set, or
    3,600/400 of the sample's 4,000."""
    if data is None:
        train, test = MnistDataset.sample("train"), MnistDataset.sample("test")
        return PartialDataset(train, 0, 3600), PartialDataset(train, 3600, 4000), test
    missing = [name for name in FILES if not (data / name).is_file() and not (data / f"{name}.gz").is_file()]
    if missing:
        sys.exit(
            f"{data}: missing MNIST file(s) {', '.join(missing)}; put the four IDX files "
            f"{', '.join(FILES)} (plain or .gz) in that folder"
        )
    try:
        train = MnistDataset.train(data, download=False)
        test = MnistDataset.test(data, download=False)
    except ValueError as err:  # a file that is not IDX, or of the wrong shape
        sys.exit(str(err))
    cut = train.len() * 11 // 12
    return PartialDataset(train, 0, cut), PartialDataset(train, cut, train.len()), test


def main() -> None:
    parser = example_parser("mnist", __doc__, epochs=5, artifact_dir=True, smoke=True)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--samples-per-transform", type=int, default=None)
    args = parser.parse_args()

    train, valid, test = load(args.data)
    per_transform = args.samples_per_transform or (10_000 if args.data else 250)
    optimizer = AdamWConfig().with_cautious_weight_decay(True).with_weight_decay(5.0e-5)
    cfg = MnistTrainingConfig(
        optimizer, ModelConfig(), num_epochs=args.epochs, samples_per_transform=per_transform
    )
    with tempfile.TemporaryDirectory(prefix="mnist-") as tmp:
        artifact_dir = args.artifact_dir
        if args.smoke:
            train, valid = PartialDataset(train, 0, 512), PartialDataset(valid, 0, 16)
            test = PartialDataset(test, 0, 32)
            cfg = MnistTrainingConfig(
                optimizer,
                ModelConfig(channels=8, hidden_size=32, dropout=0.0),
                num_epochs=3,
                batch_size=32,
                num_workers=0,
                samples_per_transform=6,
            )
            artifact_dir = tmp
        start = time.perf_counter()
        done = run(artifact_dir, cfg, train, valid, test)
        seconds = time.perf_counter() - start
    losses = done.result.summary.metric("Loss", Split.Train)
    valid_accuracy = done.result.summary.metric("Accuracy", Split.Valid).last
    print(
        f"trained {done.result.summary.epochs} epochs in {seconds:.1f}s "
        f"({done.result.stop_reason or 'all epochs run'}): "
        f"train loss {losses.entries[0][1]:.4f} -> {losses.last:.4f}; valid accuracy {valid_accuracy:.2f} %"
    )
    print(f"test digits: {test.len()} per evaluation")
    for evaluation in done.evaluations:
        print(
            f"{evaluation.name:<14} accuracy {evaluation.metric('Accuracy'):6.2f} %  "
            f"loss {evaluation.metric('Loss'):.4f}"
        )
    if not args.smoke:
        print(f"artifacts (logs, checkpoints, test/<evaluation>/, config.json, model.mpk) in {artifact_dir}")


if __name__ == "__main__":
    main()
