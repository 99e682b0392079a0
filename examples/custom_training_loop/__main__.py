"""``python -m examples.custom_training_loop``: MNIST trained by a loop written by hand (no Learner).

Options: ``--epochs N`` (default 10), ``--log-every N`` (print every N-th
training iteration, default 10), ``--smoke`` (256 training and 128
validation digits, 3 epochs, a small network).
"""

from __future__ import annotations

import time

from ferrum.data.dataset import PartialDataset
from ferrum.data.dataset.vision import MnistDataset
from ferrum.optim import AdamConfig

from ..common.cli import example_parser
from ..guide.model import ModelConfig
from .training import MnistTrainingConfig, run


def main() -> None:
    parser = example_parser("custom_training_loop", __doc__, epochs=10, smoke=True)
    parser.add_argument("--log-every", type=int, default=10)
    args = parser.parse_args()

    train_data, valid_data = MnistDataset.sample("train"), MnistDataset.sample("test")
    model = ModelConfig(num_classes=10, hidden_size=1024)
    cfg = MnistTrainingConfig(model, AdamConfig(), num_epochs=args.epochs)
    log_every = args.log_every
    if args.smoke:
        train_data, valid_data = PartialDataset(train_data, 0, 256), PartialDataset(valid_data, 0, 128)
        cfg = MnistTrainingConfig(
            ModelConfig(num_classes=10, hidden_size=32), AdamConfig(), num_epochs=3, batch_size=32, lr=1.0e-3
        )
        log_every = 4
    start = time.perf_counter()
    history = run(cfg, train_data, valid_data, log_every)
    print(
        f"trained {len(history)} epochs on {train_data.len()} digits in {time.perf_counter() - start:.1f}s; "
        f"final valid accuracy {history[-1]['valid_accuracy']:.2f} %"
    )


if __name__ == "__main__":
    main()
