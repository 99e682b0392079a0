"""``python -m examples.custom_image_dataset``: train a CNN on a folder of images, then classify some of them.

Options: ``--data DIR`` (your own ``DIR/<class>/<image>`` folder, or
``DIR/train/<class>/...`` and ``DIR/test/<class>/...``; without it, a folder
of synthetic shapes is written first), ``--write DIR`` (where to write that
folder and keep it; default: a temporary one), ``--per-class N`` (shapes
per class, default 400), ``--epochs N`` (default 20), ``--image-size N``
(default 32), ``--width N`` (channels of the first block, default 16),
``--artifact-dir DIR`` (default: ``custom_image_dataset`` in the temporary
directory), ``--show N`` (validation images to classify at the end,
default 8), ``--smoke`` (96 shapes, 2 epochs, a small network, a temporary
artifact folder).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from ferrum.backend import Autodiff, NdArray
from ferrum.optim import AdamConfig
from ferrum.train import Split

from ..common.cli import example_parser
from .data import SHAPES, DataError, channel_stats, label_of, load_splits, write_shapes
from .inference import infer
from .model import CnnConfig
from .training import TrainingConfig, train


def main() -> None:
    parser = example_parser("custom_image_dataset", __doc__, epochs=20, smoke=True)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--write", type=Path, default=None)
    parser.add_argument("--per-class", type=int, default=400)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument(
        "--artifact-dir", default=os.path.join(tempfile.gettempdir(), "custom_image_dataset")
    )
    parser.add_argument("--show", type=int, default=8)
    args = parser.parse_args()
    if args.image_size < 8 or args.image_size % 8:
        parser.error(f"--image-size must be a positive multiple of 8, found {args.image_size}")
    for option, value, least in [("--per-class", args.per_class, 2), ("--epochs", args.epochs, 1),
                                 ("--width", args.width, 1), ("--show", args.show, 0)]:  # fmt: skip
        if value < least:
            parser.error(f"{option} must be at least {least}, found {value}")

    with tempfile.TemporaryDirectory(prefix="custom_image_dataset-") as tmp:
        per_class, epochs, artifact_dir = args.per_class, args.epochs, args.artifact_dir
        model = CnnConfig(len(SHAPES), args.image_size, width=args.width)
        if args.smoke:
            per_class, epochs, artifact_dir = 24, 2, os.path.join(tmp, "artifacts")
            model = CnnConfig(len(SHAPES), args.image_size, width=4, hidden_size=32)
        root = args.data
        if root is None:
            root = args.write if args.write is not None else Path(tmp) / "shapes"
            start = time.perf_counter()
            written = write_shapes(root, per_class, args.image_size)
            print(
                f"wrote {written} {args.image_size}x{args.image_size} PNGs of {len(SHAPES)} shapes"
                f" ({', '.join(SHAPES)}) in {time.perf_counter() - start:.1f}s to {root}"
            )
        try:
            splits = load_splits(root)
        except DataError as err:
            sys.exit(f"error: {err}")
        model = model.with_num_classes(len(splits.classes))
        print(
            f"classes: {', '.join(splits.classes)}; {splits.train.len()} training and"
            f" {splits.valid.len()} validation images"
        )
        mean, std = channel_stats(splits.train)
        print(f"channel mean {mean} std {std} (training images)")

        cfg = TrainingConfig(model, AdamConfig(), splits.classes, mean, std, num_epochs=epochs)
        start = time.perf_counter()
        result = train(artifact_dir, cfg, splits, Autodiff[NdArray].device())
        seconds = time.perf_counter() - start
        loss = result.summary.metric("Loss", Split.Train)
        accuracy = result.summary.metric("Accuracy", Split.Valid)
        print(f"train loss: epoch 1 {loss.entries[0][1]:.3f}, epoch {len(loss.entries)} {loss.last:.3f}")
        print(
            f"validation accuracy: {accuracy.last:.1f} % on {splits.valid.len()} images;"
            f" trained in {seconds:.1f}s"
        )

        count = min(args.show, splits.valid.len())
        shown = [item for item in (splits.valid.get(i) for i in range(count)) if item is not None]
        if shown:
            predicted = infer(artifact_dir, NdArray.device(), shown)
            right = sum(p == label_of(item) for p, item in zip(predicted, shown, strict=True))
            print(f"{right}/{len(shown)} validation images right")
        if not args.smoke:
            print(f"artifacts (logs, checkpoints, config.json, model.mpk) in {artifact_dir}")


if __name__ == "__main__":
    main()
