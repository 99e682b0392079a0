"""``python -m examples.guide``: train the guide's CNN on ferrum's MNIST sample, then classify test digits.

Options: ``--artifact-dir DIR`` (default: ``guide`` in the temporary
directory), ``--epochs N`` (default 10), ``--digits N`` (test digits to
classify, default 10).

``mpiexec -n 2 python -m examples.guide`` trains it data-parallel on two
ranks (``pip install 'ferrum-dl[mpi]'``), to the same accuracy.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataset.vision import MnistDataset
from ferrum.distributed import launched_rank
from ferrum.optim import AdamConfig

from .inference import infer
from .model import ModelConfig
from .training import TrainingConfig, train


def main() -> None:
    # __doc__ is None under python -OO.
    summary = __doc__.splitlines()[0] if __doc__ else None
    parser = argparse.ArgumentParser(prog="python -m examples.guide", description=summary)
    parser.add_argument("--artifact-dir", default=os.path.join(tempfile.gettempdir(), "guide"))
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--digits", type=int, default=10)
    args = parser.parse_args()

    start = time.perf_counter()
    cfg = TrainingConfig(ModelConfig(num_classes=10, hidden_size=512), AdamConfig()).with_num_epochs(
        args.epochs
    )
    train(args.artifact_dir, cfg, Autodiff[NdArray].device())
    trained = time.perf_counter()
    if launched_rank() != 0:
        return  # under mpiexec, rank 0 shows the results

    test = MnistDataset.sample("test")
    items = [item for item in (test.get(i) for i in range(args.digits)) if item is not None]
    predicted = infer(args.artifact_dir, NdArray.device(), items)
    right = sum(p == item.label for p, item in zip(predicted, items, strict=True))
    print(f"{right}/{len(items)} test digits right; trained in {trained - start:.1f}s")
    print(f"artifacts (logs, checkpoints, plots/, model.mpk) in {args.artifact_dir}")


if __name__ == "__main__":
    main()
