"""data.rs: the batcher, the mapper that normalises and augments a digit, and the affine transforms.

Burn takes ``Transform2D`` from ``burn-vision``; ferrum's vision transforms
(``ferrum.data.transform.vision``) have crops, flips and resizing but no
affine warp, so the few lines it needs are written here: a 2x3 matrix per
transform, their product for a composition, and ``Tensor.grid_sample_2d``
over the grid the matrix maps (bilinear, border padding, corners aligned,
as Burn's).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt
from ferrum import D1, D3, D4, Device, Int, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset import Mapper
from ferrum.data.dataset.vision import MnistItem

B = TypeVar("B", bound=Backend)

# Mean and standard deviation of the MNIST training pixels scaled to [0, 1] (the PyTorch example's).
MEAN = 0.1307
STD = 0.3081

Matrix = tuple[tuple[float, float, float], tuple[float, float, float]]


@dataclass(frozen=True)
class Transform2D:
    """A 2-d affine map of the plane, ``T(x) = A @ [x, y, 1]`` with ``A`` 2x3, in coordinates in [-1, 1].

    ``transform(images)`` resamples each output pixel at ``T`` of its own
    position, so ``translation(0.5, 0.0)`` shows what lies a quarter of the
    width to the right (the content moves left).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> image = Tensor.from_floats([[[[1.0, 2.0], [3.0, 4.0]]]], NdArray.device())  # [1, 1, 2, 2]
        >>> Transform2D.translation(1.0, 1.0).transform(image).to_data().to_list()
        [[[[2.5, 3.0], [3.5, 4.0]]]]
    """

    matrix: Matrix

    @staticmethod
    def identity() -> Transform2D:
        return Transform2D(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)))

    @staticmethod
    def translation(tx: float, ty: float) -> Transform2D:
        return Transform2D(((1.0, 0.0, tx), (0.0, 1.0, ty)))

    @staticmethod
    def rotation(theta: float, cx: float, cy: float) -> Transform2D:
        """A rotation by ``theta`` radians about ``(cx, cy)``."""
        c, s = math.cos(theta), math.sin(theta)
        return Transform2D(((c, -s, cx - c * cx + s * cy), (s, c, cy - s * cx - c * cy)))

    @staticmethod
    def scale(sx: float, sy: float, cx: float, cy: float) -> Transform2D:
        """A scaling by ``sx`` and ``sy`` about ``(cx, cy)``."""
        return Transform2D(((sx, 0.0, cx - sx * cx), (0.0, sy, cy - sy * cy)))

    @staticmethod
    def shear(shx: float, shy: float, cx: float, cy: float) -> Transform2D:
        """A shear along x by ``shx`` and along y by ``shy``, about ``(cx, cy)``."""
        return Transform2D(((1.0, shx, -shx * cy), (shy, 1.0, -shy * cx)))

    @staticmethod
    def composed(transforms: Iterable[Transform2D]) -> Transform2D:
        """The product of the transforms, in order (the first is applied to the grid last)."""
        result = Transform2D.identity()
        for t in transforms:
            result = result @ t
        return result

    def __matmul__(self, other: Transform2D) -> Transform2D:
        # The product of the two maps as 3x3 matrices whose last row is (0, 0, 1).
        a, b = self.matrix, other.matrix

        def row(r: int) -> tuple[float, float, float]:
            return (
                a[r][0] * b[0][0] + a[r][1] * b[1][0],
                a[r][0] * b[0][1] + a[r][1] * b[1][1],
                a[r][0] * b[0][2] + a[r][1] * b[1][2] + a[r][2],
            )

        return Transform2D((row(0), row(1)))

    def transform(self, images: Tensor[B, D4]) -> Tensor[B, D4]:
        """Images ``[batch, channels, height, width]`` resampled through the map; same shape."""
        batch, _, height, width = images.dims()
        xs = np.linspace(-1.0, 1.0, width) if width > 1 else np.zeros(1)
        ys = np.linspace(-1.0, 1.0, height) if height > 1 else np.zeros(1)
        grid_x, grid_y = np.meshgrid(xs, ys)  # [height, width] each
        points = np.stack([grid_x, grid_y, np.ones_like(grid_x)], axis=-1)  # [height, width, 3]
        mapped = (points @ np.array(self.matrix).T).astype(np.float32)  # [height, width, 2]: (x, y)
        grid = np.ascontiguousarray(np.broadcast_to(mapped, (batch, height, width, 2)))
        grid_tensor: Tensor[B, D4] = Tensor.from_numpy(grid, images.device())
        return images.grid_sample_2d(grid_tensor, padding_mode="border", align_corners=True)


class Transform(enum.Enum):
    """The augmentations Burn's example draws from; the value is the short name of its evaluations."""

    Translate = "Tr"
    Shear = "Sr"
    Scale = "Sc"
    Rotation = "Rot"

    def __str__(self) -> str:
        return self.value

    def draw(self, rng: np.random.Generator) -> Transform2D:
        """This kind of transform with random parameters in Burn's ranges."""
        if self is Transform.Translate:
            return Transform2D.translation(rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2))
        if self is Transform.Shear:
            return Transform2D.shear(rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), 0.0, 0.0)
        if self is Transform.Scale:
            return Transform2D.scale(rng.uniform(0.6, 1.5), rng.uniform(0.6, 1.5), 0.0, 0.0)
        return Transform2D.rotation(rng.uniform(-math.pi / 4, math.pi / 4), 0.0, 0.0)


@dataclass(frozen=True)
class MnistItemPrepared:
    """A digit normalised (and augmented): ``image`` float32 ``[28, 28]``, and its label."""

    image: npt.NDArray[np.float32]
    label: int


class MnistMapper(Mapper[MnistItem, MnistItemPrepared]):
    """Normalises a digit and, with ``transforms``, warps it by their composition with fresh random draws.

    Every read draws anew (as Burn's, which uses the thread's generator), so
    an item looks different each epoch; ``seed`` makes a run repeatable when
    the data loader has no workers.

    Example:
        >>> import numpy as np
        >>> from ferrum.data.dataset.vision import MnistItem
        >>> digit = MnistItem(np.zeros((28, 28), np.uint8), 7)
        >>> prepared = MnistMapper((Transform.Rotation,), seed=0).map(digit)
        >>> prepared.image.shape, prepared.label, round(float(prepared.image[0, 0]), 4)
        ((28, 28), 7, -0.4242)
    """

    def __init__(self, transforms: Sequence[Transform] = (), seed: int | None = None) -> None:
        self.transforms = tuple(transforms)
        # numpy's Generator serialises its draws under a lock, so worker threads may share it.
        self.rng = np.random.default_rng(seed)

    def map(self, item: MnistItem) -> MnistItemPrepared:
        image = (item.image.astype(np.float32) / 255.0 - MEAN) / STD
        if self.transforms:
            affine = Transform2D.composed(t.draw(self.rng) for t in self.transforms)
            pixels: Tensor[NdArray, D4] = Tensor.from_numpy(image.reshape(1, 1, 28, 28), NdArray.device())
            image = affine.transform(pixels).to_numpy().reshape(28, 28).astype(np.float32)
        return MnistItemPrepared(image, item.label)


@dataclass
class MnistBatch(Generic[B]):
    images: Tensor[B, D3]  # [batch, 28, 28], normalised
    targets: Tensor[B, D1, Int]  # [batch]


class MnistBatcher(Batcher[MnistItemPrepared, MnistBatch[Any]]):
    """Burn 0.20's form ``batch(items, device)``: the Learner makes training batches on the autodiff
    device and validation batches on its inner backend."""

    def batch(self, items: list[MnistItemPrepared], device: Device[B]) -> MnistBatch[B]:
        images: Tensor[B, D3] = Tensor.from_numpy(np.stack([item.image for item in items]), device)
        targets: Tensor[B, D1, Int] = Tensor.from_data([item.label for item in items], device)
        return MnistBatch(images, targets)
