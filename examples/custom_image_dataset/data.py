"""data.rs and dataset.rs: the image folder, its train/validation split, and the batcher with its transforms.

Burn's example downloads CIFAR-10 as ``train/<class>/*.png`` and
``test/<class>/*.png``. This one writes its own folder of seeded synthetic
shapes (``write_shapes``), or reads the user's: either one
``root/<class>/<image>`` tree, split here into training and validation
images, or Burn's ``root/train/<class>/...`` and ``root/test/<class>/...``.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt
from ferrum import D1, D3, D4, Device, Float, Int, Tensor
from ferrum.backend import Backend
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset import Dataset, PartialDataset, ShuffledDataset
from ferrum.data.dataset.vision import SUPPORTED_FILES, Annotation, ImageDatasetItem, ImageFolderDataset
from ferrum.data.transform import vision as T
from PIL import Image, ImageDraw

B = TypeVar("B", bound=Backend)

SHAPES = ("circle", "cross", "square", "triangle")
"""The classes of the generated folder, one subfolder each."""


class DataError(Exception):
    """A data folder that cannot be used; the message is one line naming the folder."""


# ---------------------------------------------------------------------------------------- the folder


def _polygon(shape: str, cx: float, cy: float, radius: float, angle: float) -> list[tuple[float, float]]:
    """The corners of a square, triangle or cross of ``radius`` around ``(cx, cy)``, turned by ``angle``."""
    if shape == "square":
        points = [(math.cos(a), math.sin(a)) for a in (math.pi / 4 + k * math.pi / 2 for k in range(4))]
    elif shape == "triangle":
        points = [(math.cos(a), math.sin(a)) for a in (-math.pi / 2 + k * 2 * math.pi / 3 for k in range(3))]
    else:  # a plus sign whose arms are a third of its width
        t = 1.0 / 3.0
        points = [(t, -1), (t, -t), (1, -t), (1, t), (t, t), (t, 1), (-t, 1), (-t, t), (-1, t), (-1, -t)]
        points += [(-t, -t), (-t, -1)]
    cos, sin = math.cos(angle), math.sin(angle)
    return [(cx + radius * (x * cos - y * sin), cy + radius * (x * sin + y * cos)) for x, y in points]


def draw_shape(shape: str, size: int, rng: np.random.Generator) -> npt.NDArray[np.uint8]:
    """A ``[size, size, 3]`` RGB image: a shape of random colour, size, place and turn on a noisy ground."""
    background = rng.integers(0, 256, 3)
    # A colour at least 96 away from the background in some channel, so the shape is visible.
    while True:
        colour = rng.integers(0, 256, 3)
        if np.abs(colour - background).max() >= 96:
            break
    image = Image.new("RGB", (size, size), tuple(int(c) for c in background))
    draw = ImageDraw.Draw(image)
    radius = size * rng.uniform(0.3, 0.45)
    cx, cy = rng.uniform(radius, size - radius, 2)
    fill = tuple(int(c) for c in colour)
    if shape == "circle":
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=fill)
    else:
        draw.polygon(_polygon(shape, cx, cy, radius, rng.uniform(0, 2 * math.pi)), fill=fill)
    noisy = np.asarray(image, np.float64) + rng.normal(0.0, 8.0, (size, size, 3))
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)


def write_shapes(root: Path, per_class: int, size: int = 32, seed: int = 0) -> int:
    """Write ``per_class`` PNGs of each of ``SHAPES`` as ``root/<shape>/<index>.png``; the number written.

    The same seed writes the same images.
    """
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        (root / shape).mkdir(parents=True, exist_ok=True)
    for index in range(per_class):
        for shape in SHAPES:
            Image.fromarray(draw_shape(shape, size, rng)).save(root / shape / f"{index:04d}.png")
    return per_class * len(SHAPES)


# ---------------------------------------------------------------------------------------- the splits


@dataclass
class Splits:
    """The training and validation images of a folder, and its class names in class-id order."""

    train: Dataset[ImageDatasetItem]
    valid: Dataset[ImageDatasetItem]
    classes: list[str]


def _class_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def _read(root: Path) -> ImageFolderDataset:
    """``root/<class>/<image>`` as a dataset, or ``DataError`` saying in one line what is wrong."""
    if not root.is_dir():
        raise DataError(f"{root}: no such directory")
    if not _class_folders(root):
        raise DataError(
            f"{root} has no class folders: expected {root}/<class>/<image>"
            f" with images of type {', '.join(SUPPORTED_FILES)}"
        )
    loose = sorted(p.name for p in root.iterdir() if p.is_file() and p.suffix.lower()[1:] in SUPPORTED_FILES)
    if loose:
        raise DataError(f"{root} holds images outside class folders ({loose[0]}); move them into one")
    try:
        dataset = ImageFolderDataset.new_classification(root)
    except Exception as err:  # ImageLoaderError: an empty class folder, an unreadable file
        raise DataError(str(err)) from None
    if len(dataset.class_ids()) < 2:
        raise DataError(f"{root} has {len(dataset.class_ids())} class folder: a classifier needs at least 2")
    return dataset


def load_splits(root: Path, valid_fraction: float = 0.2, seed: int = 0) -> Splits:
    """The images under ``root``, split into training and validation sets.

    ``root/train/<class>/...`` and ``root/test/<class>/...`` (Burn's CIFAR-10
    layout) are taken as they are; any other ``root/<class>/<image>`` tree is
    shuffled with ``seed`` and its last ``valid_fraction`` held out.
    """
    if (root / "train").is_dir() and (root / "test").is_dir():
        train, test = _read(root / "train"), _read(root / "test")
        if train.class_ids() != test.class_ids():
            raise DataError(
                f"{root}: train/ and test/ hold different class folders"
                f" ({sorted(train.class_ids())} and {sorted(test.class_ids())})"
            )
        return Splits(train, test, sorted(train.class_ids(), key=train.class_ids().__getitem__))
    dataset = _read(root)
    n = dataset.len()
    n_valid = max(1, round(n * valid_fraction))
    if n - n_valid < 1:
        raise DataError(f"{root} holds {n} image: too few to split into training and validation images")
    shuffled = ShuffledDataset(dataset, seed)
    classes = sorted(dataset.class_ids(), key=dataset.class_ids().__getitem__)
    return Splits(PartialDataset(shuffled, 0, n - n_valid), PartialDataset(shuffled, n - n_valid, n), classes)


def channel_stats(dataset: Dataset[ImageDatasetItem], limit: int = 500) -> tuple[list[float], list[float]]:
    """Mean and standard deviation of each RGB channel over up to ``limit`` images, pixels scaled to [0, 1].

    Burn's example hard-codes CIFAR-10's; a folder of any images needs its own.
    """
    step = max(1, dataset.len() // limit)
    total, squares, count = np.zeros(3), np.zeros(3), 0
    for index in range(0, dataset.len(), step):
        item = dataset.get(index)
        if item is None:
            continue
        pixels = rgb(item).reshape(-1, 3).astype(np.float64) / 255.0
        total += pixels.sum(0)
        squares += (pixels**2).sum(0)
        count += pixels.shape[0]
    mean = total / count
    # A channel of one value has no spread: 1/255 stands in, so normalising divides by no zero.
    std = np.sqrt(np.maximum(squares / count - mean**2, (1.0 / 255.0) ** 2))
    return [round(float(m), 5) for m in mean], [round(float(s), 5) for s in std]


# ---------------------------------------------------------------------------------------- the batcher


def rgb(item: ImageDatasetItem) -> npt.NDArray[np.uint8]:
    """The item's image as ``[H, W, 3]`` uint8: grey repeated, alpha dropped, 16-bit scaled down."""
    image = item.image
    if image.dtype == np.uint16:
        image = (image.astype(np.uint32) * 255 // 65535).astype(np.uint8)
    elif image.dtype != np.uint8:  # 32-bit float ("F") images: taken as values in [0, 1]
        image = np.clip(np.rint(image * 255.0), 0, 255).astype(np.uint8)
    channels = image.shape[2]
    if channels <= 2:  # grey, or grey and alpha
        return np.repeat(image[:, :, :1], 3, axis=2)
    return np.ascontiguousarray(image[:, :, :3])


def label_of(item: ImageDatasetItem) -> int:
    """The item's class id; ``TypeError`` for an item annotated otherwise than with a class label."""
    if not isinstance(item.annotation, Annotation.Label):
        raise TypeError(f"{item.image_path}: expected a class label, found {item.annotation}")
    return item.annotation.label


@dataclass
class ClassificationBatch(Generic[B]):
    images: Tensor[B, D4]  # [batch, 3, size, size], normalised
    targets: Tensor[B, D1, Int]  # [batch]
    images_path: list[str]


class ClassificationBatcher(Batcher[ImageDatasetItem, ClassificationBatch[B]]):
    """Decoded images to a normalised ``[batch, 3, size, size]`` batch, with augmentation when ``train``.

    Each image is resized (its smaller edge to ``size``) and cropped to a
    square: at random, after a padding of ``size // 8``, for training; at the
    centre for validation. Training batches are also flipped left to right at
    random, image by image. The DataLoader's worker threads call ``batch`` at
    once, so the random draws come from a generator seeded by the batch's own
    file paths (no shared state), the same for the same batch.
    """

    def __init__(self, size: int, mean: list[float], std: list[float], train: bool, seed: int = 0) -> None:
        self.size = size
        self.mean = mean
        self.std = std
        self.train = train
        self.seed = seed

    def square(self, image: Tensor[B, D3, Any], rng: np.random.Generator) -> Tensor[B, D3, Float]:
        """One ``[3, H, W]`` image to ``[3, size, size]`` floats in [0, 1]."""
        x = T.resize(image, self.size)
        if self.train:
            x = T.random_crop(x, self.size, padding=self.size // 8, padding_mode="reflect", rng=rng)
        else:
            x = T.center_crop(x, self.size)
        return T.to_float(x)

    def batch(self, items: list[ImageDatasetItem], device: Device[B]) -> ClassificationBatch[B]:
        paths = [item.image_path for item in items]
        rng = np.random.default_rng([self.seed, zlib.crc32("\n".join(paths).encode())])
        images = [self.square(T.image_to_tensor(rgb(item), device), rng) for item in items]
        batch: Tensor[B, D4] = Tensor.stack(images, 0)
        if self.train:
            batch = T.random_horizontal_flip(batch, rng=rng)
        labels = [label_of(item) for item in items]
        targets: Tensor[B, D1, Int] = Tensor.from_numpy(np.array(labels, np.int64), device)
        return ClassificationBatch(T.normalize(batch, self.mean, self.std), targets, paths)
