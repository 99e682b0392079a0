"""``python -m examples.modern_lstm``: train Burn's layer-normalised, bidirectional, stacked LSTM on
noisy Fibonacci-like sequences, then predict new ones.

Options: ``--artifact-dir DIR`` (default: ``modern_lstm`` in the temporary
directory; with ``--smoke``, a temporary folder), ``--epochs N`` (default
30), ``--smoke`` (128 sequences, 3 epochs, a small network).
"""

from __future__ import annotations

import os
import tempfile
import time

from ferrum.backend import NdArray
from ferrum.optim import AdamConfig, GradientClippingConfig

from ..common.cli import example_parser
from .inference import infer
from .model import LstmNetworkConfig
from .training import TrainingConfig, train


def main() -> None:
    parser = example_parser("modern_lstm", __doc__, epochs=30, smoke=True)
    parser.add_argument("--artifact-dir", default=None)
    args = parser.parse_args()

    # Gradient clipping through the optimizer's config, as Burn's.
    optimizer = AdamConfig().with_grad_clipping(GradientClippingConfig.Norm(1.0))
    cfg = TrainingConfig(LstmNetworkConfig(), optimizer, num_epochs=args.epochs)
    log_every = 5
    with tempfile.TemporaryDirectory(prefix="modern_lstm-") as tmp:
        artifact_dir = args.artifact_dir or os.path.join(tempfile.gettempdir(), "modern_lstm")
        if args.smoke:
            cfg = TrainingConfig(
                LstmNetworkConfig(hidden_size=8),
                optimizer,
                num_epochs=3,
                num_sequences=128,
                num_workers=0,
                lr=1.0e-2,
            )
            artifact_dir, log_every = args.artifact_dir or tmp, 1
        start = time.perf_counter()
        history = train(artifact_dir, cfg, log_every)
        seconds = time.perf_counter() - start
        print(
            f"trained {len(history)} epochs in {seconds:.1f}s: train loss {history[0].train:.4f} -> "
            f"{history[-1].train:.4f}, valid loss {history[0].valid:.4f} -> {history[-1].valid:.4f}"
        )
        infer(artifact_dir, NdArray.device())
        if not args.smoke:
            print(f"artifacts (config.json, model.mpk) in {artifact_dir}")


if __name__ == "__main__":
    main()
