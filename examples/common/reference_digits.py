"""The test digits and reference outputs that ``import_model_weights`` and ``onnx_inference`` check ferrum by.

Both examples run a model trained elsewhere (by PyTorch) on the first digits
of ferrum's MNIST test sample and compare its outputs with those the other
runtime computed, saved in an ``expected.npz`` beside the model: the digits'
``indices`` and ``labels``, and the runtime's outputs under a key of its own.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from ferrum.data.dataset.vision import MnistDataset

MEAN, STD = 0.1307, 0.3081  # the normalisation the models were trained with
TOLERANCE = 1e-4  # the largest difference of an output from the reference runtime's

Array = np.ndarray[Any, np.dtype[np.float32]]


def sample_digits(indices: list[int]) -> Array:
    """The test sample's digits ``indices``, normalised as in training: float32 ``[n, 28, 28]``."""
    test = MnistDataset.sample("test")
    items = [test.get(i) for i in indices]
    pixels = np.stack([item.image for item in items if item is not None]).astype(np.float32)
    if len(pixels) != len(indices):
        raise SystemExit(f"the test sample has {test.len()} digits; asked for {indices}")
    return (pixels / 255.0 - MEAN) / STD


@dataclass(frozen=True)
class Reference:
    """The digits to check (``indices`` into the test sample, ``labels``) and the reference ``outputs``."""

    indices: list[int]
    labels: np.ndarray[Any, Any]
    outputs: Array


def add_reference_args(parser: argparse.ArgumentParser, expected: Path) -> None:
    """``--expected PATH`` (default ``expected``), ``--digits N`` (default 8), ``--smoke`` (2 digits)."""
    parser.add_argument("--expected", type=Path, default=expected)
    parser.add_argument("--digits", type=int, default=8)
    parser.add_argument("--smoke", action="store_true")


def load_reference(parser: argparse.ArgumentParser, args: argparse.Namespace, key: str) -> Reference:
    """The first digits of ``args.expected``, with the reference outputs stored under ``key``."""
    expected = np.load(args.expected)
    count = 2 if args.smoke else args.digits
    indices = [int(i) for i in expected["indices"][:count]]
    if len(indices) < count:
        parser.error(f"{args.expected} holds {len(indices)} digits, fewer than {count}")
    return Reference(indices, expected["labels"][:count], expected[key][:count])


def compare(ours: Array, reference: Reference, runtime: str, what: str) -> bool:
    """Prints each digit's label and both predictions, then the largest difference of ``what``
    (``"logit"``, ``"output"``) from ``runtime``'s; whether the predictions agree within ``TOLERANCE``."""
    theirs = reference.outputs
    diff = float(np.abs(ours - theirs).max())
    same = bool((ours.argmax(1) == theirs.argmax(1)).all())
    print(f"  digit  label  {runtime}  ferrum")
    rows = zip(reference.indices, reference.labels, theirs.argmax(1), ours.argmax(1), strict=True)
    for i, label, a, b in rows:
        print(f"  {i:5d}  {label:5d}  {a:{len(runtime)}d}  {b:6d}")
    print(f"  same predictions: {same}; max |{what} difference| {diff:.2e} (tolerance {TOLERANCE:.0e})")
    return same and diff <= TOLERANCE
