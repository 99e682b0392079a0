"""CIFAR-10 and CIFAR-100 read from the binary version of their files: Burn's ``CifarDataset``.

The binary version (``cifar-10-binary.tar.gz``, ``cifar-100-binary.tar.gz``
from https://www.cs.toronto.edu/~kriz/cifar.html) stores fixed-size records:
CIFAR-10 a label byte then 3,072 pixel bytes, CIFAR-100 a coarse and a fine
label byte then the pixels; the pixels are the 1,024 red values of the
32x32 image row by row, then the green, then the blue. The files are mapped,
not read into memory; nothing is downloaded and the pickled Python version is
never read.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias, Union

import numpy as np

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.vision.image_folder import Annotation, ImageDatasetItem

__all__ = ["CIFAR10_CLASSES", "CIFAR100_CLASSES", "CifarDataset", "CifarImageDataset", "CifarType"]

PathLike: TypeAlias = Union[str, "os.PathLike[str]"]

_SIDE = 32
_PIXELS = 3 * _SIDE * _SIDE

CIFAR10_CLASSES: tuple[str, ...] = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)  # fmt: skip
"""CIFAR-10's class names; a label is a position here (the binary files' ``batches.meta.txt``)."""

CIFAR100_CLASSES: tuple[str, ...] = (
    "apple", "aquarium_fish", "baby", "bear", "beaver", "bed", "bee", "beetle", "bicycle", "bottle",
    "bowl", "boy", "bridge", "bus", "butterfly", "camel", "can", "castle", "caterpillar", "cattle",
    "chair", "chimpanzee", "clock", "cloud", "cockroach", "couch", "crab", "crocodile", "cup", "dinosaur",
    "dolphin", "elephant", "flatfish", "forest", "fox", "girl", "hamster", "house", "kangaroo", "keyboard",
    "lamp", "lawn_mower", "leopard", "lion", "lizard", "lobster", "man", "maple_tree", "motorcycle",
    "mountain", "mouse", "mushroom", "oak_tree", "orange", "orchid", "otter", "palm_tree", "pear",
    "pickup_truck",
    "pine_tree", "plain", "plate", "poppy", "porcupine", "possum", "rabbit", "raccoon", "ray", "road",
    "rocket", "rose", "sea", "seal", "shark", "shrew", "skunk", "skyscraper", "snail", "snake", "spider",
    "squirrel", "streetcar", "sunflower", "sweet_pepper", "table", "tank", "telephone", "television",
    "tiger", "tractor", "train", "trout", "tulip", "turtle", "wardrobe", "whale", "willow_tree", "wolf",
    "woman", "worm",
)  # fmt: skip
"""CIFAR-100's fine class names; a label is a position here (the binary files' ``fine_label_names.txt``)."""


@dataclass(frozen=True)
class _Layout:
    name: str
    folder: str
    archive: str
    train: tuple[str, ...]
    test: tuple[str, ...]
    label_bytes: int
    classes: tuple[str, ...]

    @property
    def record_size(self) -> int:
        return self.label_bytes + _PIXELS


class CifarType(enum.Enum):
    """Which CIFAR: Burn's ``CifarType``."""

    Cifar10 = "cifar10"
    """10 classes; 50,000 training and 10,000 test images."""
    Cifar100 = "cifar100"
    """100 fine classes; 50,000 training and 10,000 test images."""

    @property
    def _layout(self) -> _Layout:
        if self is CifarType.Cifar10:
            return _Layout(
                "CIFAR-10",
                "cifar-10-batches-bin",
                "cifar-10-binary.tar.gz",
                tuple(f"data_batch_{i}.bin" for i in range(1, 6)),
                ("test_batch.bin",),
                1,
                CIFAR10_CLASSES,
            )
        return _Layout(
            "CIFAR-100", "cifar-100-binary", "cifar-100-binary.tar.gz", ("train.bin",), ("test.bin",), 2,
            CIFAR100_CLASSES,
        )  # fmt: skip

    @property
    def record_size(self) -> int:
        """Bytes per image in the binary files: 3,073 (CIFAR-10) or 3,074 (CIFAR-100)."""
        return self._layout.record_size

    @property
    def classes(self) -> tuple[str, ...]:
        """The class names, in label order."""
        return self._layout.classes


class CifarImageDataset(Dataset[ImageDatasetItem]):
    """The images of CIFAR binary files, as ``ImageDatasetItem`` (what Burn's ``CifarDataset`` gives).

    ``image`` is ``uint8`` of shape ``[32, 32, 3]`` (RGB); ``annotation`` is
    ``Annotation.Label(label)``, for CIFAR-100 the fine label; ``image_path``
    is ``"<file>[<record>]"``. Build it with ``CifarDataset(...).train()`` or
    ``.test()``, or ``from_files``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> import numpy as np
        >>> from ferrum.data.dataset.vision import CifarImageDataset, CifarType
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "test_batch.bin"
        >>> record = np.concatenate([[7], np.arange(3072) % 256]).astype(np.uint8)
        >>> _ = path.write_bytes(record.tobytes())
        >>> item = CifarImageDataset.from_files([path], CifarType.Cifar10).get(0)
        >>> item.image.shape, item.annotation, item.image[0, 1].tolist()  # pixel (0, 1): R, G, B
        ((32, 32, 3), Annotation.Label(label=7), [1, 1, 1])
        >>> folder.cleanup()
    """

    def __init__(self, cifar_type: CifarType, files: Sequence[tuple[Path, np.memmap[Any, Any]]]) -> None:
        """Internal: use ``CifarDataset`` or ``from_files``."""
        self._type = cifar_type
        self._files = list(files)
        self._ends = np.cumsum([len(records) for _, records in self._files]).tolist()

    @staticmethod
    def from_files(paths: Sequence[PathLike], cifar_type: CifarType) -> CifarImageDataset:
        """The images of the binary files ``paths``, in order; errors name the offending file.

        Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for
        a file that is empty, whose size is not a whole number of records, or
        that holds a label outside the classes.
        """
        layout = cifar_type._layout
        files = []
        for entry in paths:
            path = Path(entry)
            if not path.is_file():
                raise FileNotFoundError(f"{layout.name} file {path} not found")
            size = path.stat().st_size
            if size == 0 or size % layout.record_size:
                raise ValueError(
                    f"{path}: {size} bytes is not a whole number of {layout.name} records of "
                    f"{layout.record_size} bytes (a truncated or foreign file?)"
                )
            shape = (size // layout.record_size, layout.record_size)
            records = np.memmap(path, dtype=np.uint8, mode="r", shape=shape)
            for column, kind, count in _label_columns(layout):
                labels = np.asarray(records[:, column])
                bad = np.flatnonzero(labels >= count)
                if bad.size:
                    raise ValueError(
                        f"{path}: record {int(bad[0])} has {kind}label {int(labels[bad[0]])}, "
                        f"expected 0 to {count - 1} for {layout.name}"
                    )
            files.append((path, records))
        return CifarImageDataset(cifar_type, files)

    def get(self, index: int) -> ImageDatasetItem | None:
        if not 0 <= index < self.len():
            return None
        position = int(np.searchsorted(self._ends, index, side="right"))
        record = index - (self._ends[position - 1] if position else 0)
        path, records = self._files[position]
        row = records[record]
        label_bytes = self._type._layout.label_bytes
        # Stored channel-major (all red, then green, then blue): to [H, W, C].
        image = np.ascontiguousarray(row[label_bytes:].reshape(3, _SIDE, _SIDE).transpose(1, 2, 0))
        label = Annotation.Label(int(row[label_bytes - 1]))
        return ImageDatasetItem(image, _SIDE, _SIDE, label, f"{path}[{record}]")

    def len(self) -> int:
        return int(self._ends[-1]) if self._ends else 0

    def class_ids(self) -> dict[str, int]:
        """The class names and their labels (the positions in ``cifar_type.classes``)."""
        return {name: label for label, name in enumerate(self._type.classes)}


def _label_columns(layout: _Layout) -> list[tuple[int, str, int]]:
    if layout.label_bytes == 1:
        return [(0, "", len(layout.classes))]
    return [(0, "coarse ", 20), (1, "fine ", len(layout.classes))]


class CifarDataset:
    """CIFAR-10 or CIFAR-100 from a local copy of its binary files: Burn's ``CifarDataset``.

    ``root`` is the folder the binary archive extracts to
    (``cifar-10-batches-bin`` with ``data_batch_1.bin`` to
    ``data_batch_5.bin`` and ``test_batch.bin``; ``cifar-100-binary`` with
    ``train.bin`` and ``test.bin``) or the folder holding it. Nothing is
    downloaded: a missing file raises ``FileNotFoundError`` naming it, the
    folder it was looked for in and the archive to extract there.

    Example:
        >>> from ferrum.data.dataset.vision import CifarDataset, CifarType
        >>> cifar = CifarDataset(CifarType.Cifar10, "/data/cifar-10-batches-bin")  # doctest: +SKIP
        >>> len(cifar.train()), len(cifar.test())  # doctest: +SKIP
        (50000, 10000)
    """

    def __init__(self, cifar_type: CifarType, root: PathLike) -> None:
        if not isinstance(cifar_type, CifarType):
            raise TypeError(f"cifar_type must be a CifarType, found {cifar_type!r}")
        self._type = cifar_type
        layout = cifar_type._layout
        base = Path(root)
        self._dir = base / layout.folder if (base / layout.folder).is_dir() else base

    @property
    def cifar_type(self) -> CifarType:
        """Which CIFAR this is."""
        return self._type

    def train(self) -> CifarImageDataset:
        """The 50,000 training images."""
        return self._split(self._type._layout.train)

    def test(self) -> CifarImageDataset:
        """The 10,000 test images."""
        return self._split(self._type._layout.test)

    def _split(self, names: tuple[str, ...]) -> CifarImageDataset:
        layout = self._type._layout
        missing = [name for name in names if not (self._dir / name).is_file()]
        if missing:
            raise FileNotFoundError(
                f"{layout.name} files {missing} are missing from {self._dir}: download {layout.archive} "
                f"(the binary version) from https://www.cs.toronto.edu/~kriz/cifar.html and extract it "
                f"so that {self._dir / missing[0]} exists"
            )
        return CifarImageDataset.from_files([self._dir / name for name in names], self._type)
