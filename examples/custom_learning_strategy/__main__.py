"""``python -m examples.custom_learning_strategy``: the Learner trained with a strategy of the user's.

The strategy (strategy.py) clips every step's gradients to a global norm
and reports what it saw. Options: ``--artifact-dir DIR`` (default:
``custom_learning_strategy`` in the temporary directory), ``--epochs N``
(default 15; the run stops early when the validation loss stalls),
``--smoke`` (256 training and 128 validation digits, 3 epochs, a small
network, a temporary artifact folder).
"""

from __future__ import annotations

import os
import tempfile
import time

from ferrum.data.dataset import PartialDataset
from ferrum.data.dataset.vision import MnistDataset
from ferrum.optim import AdamConfig
from ferrum.train import Split

from ..common.cli import example_parser
from ..common.mnist_mlp import ModelConfig
from .strategy import ClipAndReport
from .training import MnistTrainingConfig, run


def main() -> None:
    parser = example_parser("custom_learning_strategy", __doc__, epochs=15, smoke=True)
    parser.add_argument(
        "--artifact-dir", default=os.path.join(tempfile.gettempdir(), "custom_learning_strategy")
    )
    args = parser.parse_args()

    # As Burn's example, the training digits are split: the first 3000 train, the last 1000 validate.
    mnist = MnistDataset.sample("train")
    train_data, valid_data = PartialDataset(mnist, 0, 3000), PartialDataset(mnist, 3000, 4000)
    cfg = MnistTrainingConfig(
        ModelConfig(num_classes=10, hidden_size=1024), AdamConfig(), num_epochs=args.epochs
    )
    strategy = ClipAndReport(cfg.max_grad_norm, log_every=20)
    with tempfile.TemporaryDirectory(prefix="custom_learning_strategy-") as tmp:
        artifact_dir = args.artifact_dir
        if args.smoke:
            train_data, valid_data = PartialDataset(mnist, 0, 256), PartialDataset(mnist, 3000, 3128)
            cfg = MnistTrainingConfig(
                ModelConfig(num_classes=10, hidden_size=32), AdamConfig(), num_epochs=3, batch_size=32
            )
            strategy = ClipAndReport(cfg.max_grad_norm, log_every=4)
            artifact_dir = tmp
        start = time.perf_counter()
        result = run(artifact_dir, cfg, train_data, valid_data, strategy)
        seconds = time.perf_counter() - start
    losses = result.summary.metric("Loss", Split.Train)
    accuracy = result.summary.metric("Accuracy", Split.Valid).last
    print(
        f"{result.summary.epochs} epochs in {seconds:.1f}s ({result.stop_reason or 'all epochs run'}); "
        f"train loss {losses.entries[0][1]:.4f} -> {losses.last:.4f}; valid accuracy {accuracy:.2f} %; "
        f"{strategy.clipped_total} of {strategy.iteration} steps clipped"
    )
    if not args.smoke:
        print(f"artifacts (logs, checkpoints, config.json, model.mpk) in {artifact_dir}")


if __name__ == "__main__":
    main()
