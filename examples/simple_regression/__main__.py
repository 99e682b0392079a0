"""``python -m examples.simple_regression``: train a regression network on a CSV file, then predict.

Options: ``--csv PATH`` (default: the synthetic patients of
examples/custom_csv_dataset), ``--target COLUMN`` (default ``response``),
``--delimiter D`` (default: a tab for .tsv files, a comma otherwise),
``--artifact-dir DIR``, ``--epochs N`` (default 100), ``--smoke`` (64 rows,
3 epochs, a tiny network, a temporary artifact folder).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataset import InMemDataset
from ferrum.optim import AdamConfig
from ferrum.train import Split

from ..common.cli import example_parser
from .data import DEFAULT_CSV, DEFAULT_TARGET, Normalizer, read_csv
from .inference import infer
from .model import RegressionModelConfig
from .training import ExpConfig, split, train


def main() -> None:
    parser = example_parser("simple_regression", __doc__, epochs=100, artifact_dir=True, smoke=True)
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--target", default=DEFAULT_TARGET)
    parser.add_argument("--delimiter", default=None)
    args = parser.parse_args()

    if not args.csv.is_file():
        sys.exit(
            f"{args.csv}: no such file; give --csv a CSV file with a header row and numbers only, "
            f"one column named by --target (default {DEFAULT_TARGET!r})"
        )
    try:
        table = read_csv(args.csv, args.target, args.delimiter)
    except ValueError as err:  # a header without the target, a cell that is not a number, ...
        sys.exit(str(err))
    dataset = table.dataset
    epochs, hidden, batch_size, learning_rate = args.epochs, 64, 32, 1.0e-3
    with tempfile.TemporaryDirectory(prefix="simple_regression-") as tmp:
        artifact_dir = args.artifact_dir
        if args.smoke:
            dataset = InMemDataset(list(dataset)[:64])
            epochs, hidden, batch_size, learning_rate, artifact_dir = 3, 8, 16, 1.0e-2, tmp
        cfg = ExpConfig(
            RegressionModelConfig(len(table.feature_names), hidden),
            AdamConfig(),
            Normalizer([], [], 0.0, 1.0),
            args.target,
            table.feature_names,
            num_epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
        )
        train_items, valid_items = split(dataset, cfg.valid_fraction, cfg.seed)
        cfg = cfg.with_normalizer(Normalizer.fit(train_items))

        start = time.perf_counter()
        result = train(artifact_dir, cfg, train_items, valid_items, Autodiff[NdArray].device())
        seconds = time.perf_counter() - start
        for name, part in (("train", Split.Train), ("valid", Split.Valid)):
            losses = result.summary.metric("Loss", part)
            first, last, epochs = losses.entries[0][1], losses.last, len(losses.entries)
            print(f"{name} loss (standardised target): epoch 1 {first:.4f}, epoch {epochs} {last:.4f}")
        print(f"trained in {seconds:.1f}s")
        infer(artifact_dir, NdArray.device(), valid_items)
        if not args.smoke:
            print(f"artifacts (logs, checkpoints, config.json, model.mpk) in {artifact_dir}")


if __name__ == "__main__":
    main()
