"""``python -m examples.wgan``: Burn's WGAN trained on ferrum's MNIST sample, then a grid of its digits.

Options: ``--artifact-dir DIR`` (default: ``wgan`` in the temporary
directory; with ``--smoke``, a temporary folder), ``--epochs N`` (default
150), ``--batch-size N`` (default 64), ``--smoke`` (a tiny pair, 256 digits,
2 epochs). The grids are PNG files (Pillow: ``pip install 'ferrum-dl[vision]'``).
"""

from __future__ import annotations

import os
import tempfile
import time

from ferrum.backend import NdArray
from ferrum.data.dataset import PartialDataset
from ferrum.data.dataset.vision import MnistDataset
from ferrum.optim import RmsPropConfig

from ..common.cli import example_parser
from .infer import generate
from .model import ModelConfig
from .training import TrainingConfig, train


def main() -> None:
    parser = example_parser("wgan", __doc__, epochs=150, smoke=True)
    parser.add_argument("--artifact-dir", default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    # Burn's settings: RMSProp without momentum, an epsilon of 8e-8, no weight decay.
    optimizer = RmsPropConfig(alpha=0.99, momentum=0.0, epsilon=8.0e-8, weight_decay=None, centered=False)
    dataset = MnistDataset.sample("train")
    cfg = TrainingConfig(ModelConfig(), optimizer, num_epochs=args.epochs, batch_size=args.batch_size)
    log_every = 50
    with tempfile.TemporaryDirectory(prefix="wgan-") as tmp:
        artifact_dir = args.artifact_dir or os.path.join(tempfile.gettempdir(), "wgan")
        if args.smoke:
            dataset = PartialDataset(dataset, 0, 256)
            cfg = TrainingConfig(ModelConfig(width=16), optimizer, num_epochs=2, batch_size=32, num_workers=0)
            artifact_dir, log_every = args.artifact_dir or tmp, 1
        start = time.perf_counter()
        history = train(artifact_dir, cfg, dataset, log_every)
        seconds = time.perf_counter() - start
        steps = len(history.generator_losses)
        print(
            f"trained {cfg.num_epochs} epochs ({steps} generator steps) on {dataset.len()} digits "
            f"in {seconds:.1f}s"
        )
        # The negated critic loss estimates the Wasserstein distance between real and generated digits.
        first, last = -history.critic_losses[0], -history.critic_losses[-1]
        print(f"critic's weights within +-{cfg.clip_value}: max |w| {history.critic_max_abs:.6f}")
        print(f"critic's estimate of the distance: first step {first:.6f}, last step {last:.6f}")
        for path in history.images:
            print(f"wrote {path}")
        drawn = generate(artifact_dir, NdArray.device(), seed=cfg.seed)
        if drawn is not None:
            print(f"wrote {drawn} (the saved generator, loaded back)")
        if not args.smoke:
            made = "config.json, generator.mpk, discriminator.mpk, image-<epoch>.png"
            print(f"artifacts ({made}) in {artifact_dir}")


if __name__ == "__main__":
    main()
