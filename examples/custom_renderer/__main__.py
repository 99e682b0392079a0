"""``python -m examples.custom_renderer``: the Learner showing its progress with a renderer of the user's.

Options: ``--epochs N`` (default 5), ``--every N`` (a bar line every N
steps, default 20), ``--smoke`` (256 training and 128 validation digits,
2 epochs, a small network).
"""

from __future__ import annotations

import tempfile
import time

from ferrum.data.dataset import PartialDataset
from ferrum.data.dataset.vision import MnistDataset
from ferrum.optim import AdamConfig
from ferrum.train import Split

from ..common.cli import example_parser
from ..common.mnist_mlp import ModelConfig
from .renderer import CustomRenderer
from .training import MnistTrainingConfig, run


def main() -> None:
    parser = example_parser("custom_renderer", __doc__, epochs=5, smoke=True)
    parser.add_argument("--every", type=int, default=20)
    args = parser.parse_args()

    train_data, valid_data = MnistDataset.sample("train"), MnistDataset.sample("test")
    cfg = MnistTrainingConfig(
        ModelConfig(num_classes=10, hidden_size=1024), AdamConfig(), num_epochs=args.epochs
    )
    renderer = CustomRenderer(every=args.every)
    if args.smoke:
        train_data, valid_data = PartialDataset(train_data, 0, 256), PartialDataset(valid_data, 0, 128)
        cfg = MnistTrainingConfig(
            ModelConfig(num_classes=10, hidden_size=32), AdamConfig(), num_epochs=2, batch_size=32
        )
        renderer = CustomRenderer(every=2)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="custom_renderer-") as directory:
        result = run(directory, cfg, train_data, valid_data, renderer)
    accuracy = result.summary.metric("Accuracy", Split.Valid).last
    print(
        f"trained {result.summary.epochs} epochs in {time.perf_counter() - start:.1f}s; the renderer wrote "
        f"{renderer.lines} lines; valid accuracy {accuracy:.2f} %"
    )


if __name__ == "__main__":
    main()
