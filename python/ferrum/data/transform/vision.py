"""Image transforms for training pipelines, on ferrum tensors, as torchvision's ``transforms.v2.functional``.

Images are ``[C, H, W]`` tensors and batches ``[N, C, H, W]`` (torchvision's
layout); every transform takes either and keeps the rank, the kind and the
dtype (``to_float`` excepted). ``image_to_tensor`` turns the ``[H, W, C]``
NumPy images of ``ImageFolderDataset`` items into ``[C, H, W]`` tensors.

* ``resize`` (``"nearest"``, ``"bilinear"`` with or without ``antialias``),
  ``center_crop``, ``crop``, ``random_crop``, ``horizontal_flip``,
  ``random_horizontal_flip``, ``normalize``, ``to_float``.
* The outputs are torchvision's (checked against it in the tests): bilinear
  samples at pixel centres (``align_corners=False``), antialiasing is
  torchvision's triangle filter widened by the downscale factor, and uint8
  images are resized in float32 and rounded back.
* Random transforms take ``rng``: a seed or a ``numpy.random.Generator``
  (``None``: a fresh unseeded one). The same seed gives the same crops and
  flips; on a batch each image gets its own draw, in order, so a batch gives
  what its images give one by one from the same generator.

Everything runs on ferrum ops (``narrow``, ``pad``, ``flip``, ``select``,
``matmul``, arithmetic). NumPy computes only the small index and weight
tables of ``resize`` (ferrum's ``functional.interpolate`` is Burn's: its
bilinear aligns corners and has no antialias, so it cannot give
torchvision's outputs) and draws the random offsets.

Example:
    >>> import numpy as np
    >>> from ferrum.backend import NdArray
    >>> from ferrum.data.transform import vision as T
    >>> pixels = np.zeros((32, 48, 3), dtype=np.uint8)  # an ImageFolderDataset item's image
    >>> image = T.image_to_tensor(pixels, NdArray.device())
    >>> x = T.resize(image, 24)  # the smaller edge to 24
    >>> x = T.random_crop(x, (20, 20), rng=0)
    >>> x = T.random_horizontal_flip(x, rng=0)
    >>> x = T.normalize(T.to_float(x), mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    >>> x.dims(), x.dtype
    ((3, 20, 20), DType.F32)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias, TypeVar, cast, get_args

import numpy as np
import numpy.typing as npt

from ferrum._ferrum import (
    ArgumentError,
    Device,
    DType,
    Float,
    Int,
    KindError,
    PadMode,
    ShapeError,
    Tensor,
)
from ferrum.data.dataset.vision.image_folder import ImageDatasetItem
from ferrum.tensor.rank import D3, D4
from ferrum.tensor.type_vars import B, K

__all__ = [
    "PaddingMode",
    "ResizeMode",
    "Rng",
    "center_crop",
    "crop",
    "horizontal_flip",
    "image_to_tensor",
    "normalize",
    "random_crop",
    "random_horizontal_flip",
    "resize",
    "to_float",
]

R = TypeVar("R", D3, D4)
"""An image ``[C, H, W]`` or a batch ``[N, C, H, W]``."""

ResizeMode = Literal["nearest", "bilinear"]
"""How ``resize`` samples: torchvision's ``InterpolationMode.NEAREST`` and ``BILINEAR``."""
PaddingMode = Literal["constant", "edge", "reflect"]
"""How ``random_crop`` pads: with ``fill``, repeating the edge pixel, or mirroring (edge not repeated)."""
Rng: TypeAlias = int | np.random.Generator | None
"""A seed, a NumPy generator, or ``None`` for a fresh unseeded generator."""

_FLOATS = (DType.F32, DType.F64, DType.F16, DType.BF16)


# ----------------------------------------------------------------------------------------------- helpers


def _dims(img: Tensor[Any, Any, Any], op: str) -> tuple[int, ...]:
    """The dims of an image or a batch, or ShapeError."""
    if not isinstance(img, Tensor):
        raise TypeError(
            f"{op}: expected a ferrum Tensor [C, H, W] or [N, C, H, W], found {type(img).__name__}"
        )
    dims = img.dims()
    if len(dims) not in (3, 4):
        raise ShapeError(
            f"{op}: expected an image [C, H, W] or a batch [N, C, H, W], found shape {list(dims)}"
        )
    return dims


def _pair(value: int | Sequence[int], op: str, name: str) -> tuple[int, int]:
    """``value`` as ``(height, width)``: an int is a square."""
    if isinstance(value, int) and not isinstance(value, bool):
        pair = (value, value)
    elif isinstance(value, Sequence) and len(value) == 2 and all(isinstance(v, int) for v in value):
        pair = (int(value[0]), int(value[1]))
    else:
        raise ArgumentError(f"{op}: {name} must be an int or a pair (height, width) of ints, found {value!r}")
    if min(pair) <= 0:
        raise ArgumentError(f"{op}: {name} must be positive, found {value!r}")
    return pair


def _generator(rng: Rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, int) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a seed (int), a numpy.random.Generator or None, found {type(rng).__name__}")


def _index(values: npt.NDArray[np.int64], like: Tensor[B, Any, Any]) -> Tensor[B, Any, Int]:
    return cast(
        "Tensor[B, Any, Int]", Tensor.from_numpy(np.ascontiguousarray(values, dtype=np.int64), like.device())
    )


# ----------------------------------------------------------------------------------------------- conversion


def image_to_tensor(image: npt.NDArray[Any] | ImageDatasetItem, device: Device[B]) -> Tensor[B, D3, Any]:
    """An ``[H, W, C]`` NumPy image (or an ``ImageDatasetItem``'s) as a ``[C, H, W]`` tensor on ``device``.

    uint8 images give uint8 (``Int``) tensors, float32 images ``f32`` ones;
    the values are kept (``to_float`` scales uint8 to ``[0, 1]``). ferrum has
    no 16-bit integers: convert 16-bit PNGs first (``image.astype(np.float32) / 65535``).

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import image_to_tensor
        >>> x = image_to_tensor(np.zeros((4, 5, 3), dtype=np.uint8), NdArray.device())
        >>> x.dims(), x.dtype
        ((3, 4, 5), DType.U8)
    """
    array = image.image if isinstance(image, ImageDatasetItem) else image
    if not isinstance(array, np.ndarray):
        raise TypeError(f"image_to_tensor: expected a NumPy array [H, W, C], found {type(array).__name__}")
    if array.ndim != 3:
        raise ShapeError(f"image_to_tensor: expected an image [H, W, C], found shape {list(array.shape)}")
    if array.dtype not in (np.uint8, np.float32):
        raise KindError(
            f"image_to_tensor: expected a uint8 or float32 image, found {array.dtype}"
            " (convert 16-bit images first, e.g. image.astype(np.float32) / 65535)"
        )
    tensor = Tensor.from_numpy(np.ascontiguousarray(array), device)
    return cast("Tensor[B, D3, Any]", tensor.permute((2, 0, 1)))


def to_float(img: Tensor[B, R, Any], dtype: DType = DType.F32) -> Tensor[B, R, Float]:
    """A uint8 image or batch as floats in ``[0, 1]``: torchvision's ``to_dtype(x, float32, scale=True)``.

    A float tensor is only cast to ``dtype`` (its values are taken as already in
    ``[0, 1]``). Shapes are kept: ``[C, H, W]`` or ``[N, C, H, W]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import to_float
        >>> x = Tensor.from_data([[[0, 255]]], NdArray.device(), dtype=DType.U8)
        >>> to_float(x).to_data().to_list()
        [[[0.0, 1.0]]]
    """
    _dims(img, "to_float")
    if dtype not in _FLOATS:
        raise KindError(f"to_float: dtype must be a float dtype, found {dtype}")
    if img.dtype == DType.U8:
        # torchvision multiplies by the float32 of 1/255 (not a division): the same bits.
        scaled = cast("Tensor[B, R, Float]", img.float().cast(DType.F32).mul_scalar(1.0 / 255.0))
        return scaled if dtype == DType.F32 else cast("Tensor[B, R, Float]", scaled.cast(dtype))
    if img.dtype in _FLOATS:
        return cast("Tensor[B, R, Float]", img.cast(dtype))
    raise KindError(f"to_float: expected a uint8 or float image, found dtype {img.dtype}")


def normalize(img: Tensor[B, R, Float], mean: Sequence[float], std: Sequence[float]) -> Tensor[B, R, Float]:
    """``(x - mean[c]) / std[c]`` for each channel ``c`` of a float ``[C, H, W]`` or ``[N, C, H, W]``.

    torchvision's ``normalize``; ``mean`` and ``std`` hold one value per channel.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import normalize
        >>> x = Tensor.from_data([[[0.5]], [[1.0]]], NdArray.device())
        >>> normalize(x, mean=(0.5, 0.5), std=(0.5, 0.25)).to_data().to_list()
        [[[0.0]], [[2.0]]]
    """
    dims = _dims(img, "normalize")
    if img.dtype not in _FLOATS:
        raise KindError(f"normalize: expected a float image (see to_float), found dtype {img.dtype}")
    channels = dims[-3]
    means, stds = tuple(float(m) for m in mean), tuple(float(s) for s in std)
    if len(means) != channels or len(stds) != channels:
        raise ShapeError(
            f"normalize: mean and std need one value per channel ({channels}),"
            f" found {len(means)} and {len(stds)}"
        )
    if any(s == 0.0 for s in stds):
        raise ArgumentError(f"normalize: std must not hold zeros (a division by zero), found {list(stds)}")
    shape = (channels, 1, 1) if len(dims) == 3 else (1, channels, 1, 1)
    device = img.device()
    m = Tensor.from_numpy(np.array(means).reshape(shape), device, dtype=img.dtype)
    s = Tensor.from_numpy(np.array(stds).reshape(shape), device, dtype=img.dtype)
    return img.sub(m).div(s)


# ----------------------------------------------------------------------------------------------- resize


def _output_size(size: int | Sequence[int], height: int, width: int) -> tuple[int, int]:
    """torchvision's size rule: an int is the smaller edge, the other keeping the aspect ratio."""
    if isinstance(size, int) and not isinstance(size, bool):
        if size <= 0:
            raise ArgumentError(f"resize: size must be positive, found {size}")
        short, long = (height, width) if height <= width else (width, height)
        new_long = int(size * long / short)
        return (size, new_long) if height <= width else (new_long, size)
    return _pair(size, "resize", "size")


def _nearest_indices(n_in: int, n_out: int) -> npt.NDArray[np.int64]:
    """PyTorch's ``nearest`` source indices, computed as it does in float32."""
    if n_out == n_in:
        return np.arange(n_out, dtype=np.int64)
    if n_out == 2 * n_in:
        return np.arange(n_out, dtype=np.int64) // 2
    scale = np.float32(n_in) / np.float32(n_out)
    src = np.floor(np.arange(n_out, dtype=np.float32) * scale).astype(np.int64)
    clamped: npt.NDArray[np.int64] = np.minimum(src, n_in - 1)
    return clamped


def _linear_weights(n_in: int, n_out: int, antialias: bool) -> npt.NDArray[np.float64]:
    """The ``[n_out, n_in]`` matrix of PyTorch's bilinear resampling on one axis (``align_corners=False``)."""
    scale = n_in / n_out
    weights = np.zeros((n_out, n_in))
    if antialias:
        # PyTorch's _upsample_bilinear2d_aa (PIL's): a triangle filter widened by the downscale factor.
        support = scale if scale >= 1.0 else 1.0
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        for i in range(n_out):
            center = scale * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            hi = min(int(center + support + 0.5), n_in)
            taps = np.maximum(0.0, 1.0 - np.abs((np.arange(lo, hi) - center + 0.5) * invscale))
            total = taps.sum()
            weights[i, lo:hi] = taps / total if total != 0.0 else taps
        return weights
    src = np.maximum(scale * (np.arange(n_out) + 0.5) - 0.5, 0.0)
    lo = src.astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = np.clip(src - lo, 0.0, 1.0)
    rows = np.arange(n_out)
    np.add.at(weights, (rows, lo), 1.0 - frac)
    np.add.at(weights, (rows, hi), frac)
    return weights


def resize(
    img: Tensor[B, R, K],
    size: int | Sequence[int],
    mode: ResizeMode = "bilinear",
    *,
    antialias: bool = True,
) -> Tensor[B, R, K]:
    """An image ``[C, H, W]`` or a batch ``[N, C, H, W]`` resized to ``size``: torchvision's ``resize``.

    ``size`` is ``(height, width)``, or an int: the smaller edge, the other
    scaled to keep the aspect ratio (``int(size * long / short)``).
    ``"bilinear"`` samples at pixel centres (``align_corners=False``); with
    ``antialias`` (the default, as torchvision's) a downscale averages over
    the pixels each output covers instead of aliasing. ``"nearest"`` takes
    PyTorch's ``floor(i * in / out)`` pixel and ignores ``antialias``.
    Float images stay in their dtype; integer ones (uint8) are resized in
    float32, rounded and clamped back to their dtype (nearest copies pixels of
    any kind). The same size returns ``img`` itself.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import resize
        >>> x = Tensor.from_data([[[0.0, 1.0, 2.0, 3.0]]], NdArray.device())
        >>> resize(x, (1, 2), antialias=False).to_data().to_list()
        [[[0.5, 2.5]]]
        >>> resize(x, (1, 2)).dims()  # antialiased: each output averages its pixels' neighbourhood
        (1, 1, 2)
        >>> resize(x, (1, 2), "nearest").to_data().to_list()
        [[[0.0, 2.0]]]
    """
    dims = _dims(img, "resize")
    if mode not in get_args(ResizeMode):
        raise ArgumentError(
            f"resize: mode must be one of {', '.join(map(repr, get_args(ResizeMode)))}, found {mode!r}"
        )
    height, width = dims[-2], dims[-1]
    out_h, out_w = _output_size(size, height, width)
    if (out_h, out_w) == (height, width):
        return img
    rank = len(dims)
    if mode == "nearest":
        rows = img.select(rank - 2, _index(_nearest_indices(height, out_h), img))
        return rows.select(rank - 1, _index(_nearest_indices(width, out_w), img))
    dtype = img.dtype
    if dtype == DType.Bool:
        raise KindError("resize: a Bool image resizes with mode='nearest' only")
    x = cast("Tensor[B, R, Float]", img if dtype in _FLOATS else img.cast(DType.F32))
    lead: tuple[int, ...] = (1,) * (rank - 2)
    device = x.device()
    w_rows = Tensor.from_numpy(
        _linear_weights(height, out_h, antialias).reshape((*lead, out_h, height)), device, dtype=x.dtype
    )
    w_cols = Tensor.from_numpy(
        np.ascontiguousarray(_linear_weights(width, out_w, antialias).T).reshape((*lead, width, out_w)),
        device,
        dtype=x.dtype,
    )
    # Two matrix products, [out_h, H] @ x @ [W, out_w], every image and channel at once.
    y = cast("Tensor[B, R, Float]", w_rows).matmul(x).matmul(cast("Tensor[B, R, Float]", w_cols))
    if dtype in _FLOATS:
        return cast("Tensor[B, R, K]", y)
    y = y.round()
    if dtype == DType.U8:
        y = y.clamp(0, 255)
    return cast("Tensor[B, R, K]", y.cast(dtype))


# ----------------------------------------------------------------------------------------------- crops


def crop(img: Tensor[B, R, K], top: int, left: int, height: int, width: int) -> Tensor[B, R, K]:
    """The ``height`` x ``width`` window of an image or batch whose top-left pixel is ``(top, left)``.

    torchvision's ``crop``, for a window inside the image (``ShapeError``
    otherwise; pad first, or use ``random_crop``'s padding).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import crop
        >>> x = Tensor.from_data([[[0, 1, 2], [3, 4, 5]]], NdArray.device())
        >>> crop(x, 0, 1, 2, 2).to_data().to_list()
        [[[1, 2], [4, 5]]]
    """
    dims = _dims(img, "crop")
    h, w = dims[-2], dims[-1]
    if height <= 0 or width <= 0:
        raise ArgumentError(f"crop: height and width must be positive, found {height} x {width}")
    if top < 0 or left < 0 or top + height > h or left + width > w:
        raise ShapeError(
            f"crop: the window {height} x {width} at (top={top}, left={left})"
            f" is not inside the image {h} x {w}"
        )
    rank = len(dims)
    return img.narrow(rank - 2, top, height).narrow(rank - 1, left, width)


def center_crop(img: Tensor[B, R, K], size: int | Sequence[int]) -> Tensor[B, R, K]:
    """The centre ``size`` (``(height, width)`` or an int for a square) of an image or batch.

    torchvision's ``center_crop``: the window starts at
    ``round((H - height) / 2)``, ``round((W - width) / 2)`` (Python's
    rounding, halves to even). A crop larger than the image is a
    ``ShapeError`` (torchvision pads it with zeros; pad first for that).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import center_crop
        >>> x = Tensor.from_data([[[0, 1, 2], [3, 4, 5], [6, 7, 8]]], NdArray.device())
        >>> center_crop(x, 1).to_data().to_list()
        [[[4]]]
    """
    dims = _dims(img, "center_crop")
    height, width = _pair(size, "center_crop", "size")
    h, w = dims[-2], dims[-1]
    if height > h or width > w:
        raise ShapeError(f"center_crop: the crop {height} x {width} is larger than the image {h} x {w}")
    return crop(img, round((h - height) / 2.0), round((w - width) / 2.0), height, width)


def _padding(padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    """torchvision's padding as ``(left, top, right, bottom)``."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        pads: tuple[int, ...] = (padding,) * 4
    elif (
        isinstance(padding, Sequence) and len(padding) in (2, 4) and all(isinstance(p, int) for p in padding)
    ):
        pads = tuple(padding) * 2 if len(padding) == 2 else tuple(padding)
    else:
        raise ArgumentError(
            "random_crop: padding must be an int, (left/right, top/bottom) or (left, top, right, bottom),"
            f" found {padding!r}"
        )
    if min(pads) < 0:
        raise ArgumentError(f"random_crop: padding must not be negative, found {padding!r}")
    return pads[0], pads[1], pads[2], pads[3]


def random_crop(
    img: Tensor[B, R, K],
    size: int | Sequence[int],
    *,
    padding: int | Sequence[int] | None = None,
    pad_if_needed: bool = False,
    fill: float = 0,
    padding_mode: PaddingMode = "constant",
    rng: Rng = None,
) -> Tensor[B, R, K]:
    """A ``size`` window at a random place of an image ``[C, H, W]``, or of each image of a batch.

    torchvision's ``RandomCrop``: ``padding`` (an int, ``(left/right,
    top/bottom)`` or ``(left, top, right, bottom)``) is added first, filled
    by ``padding_mode``; with ``pad_if_needed`` an image smaller than the
    crop is padded by the difference on both sides. A crop still larger than
    the (padded) image is a ``ShapeError``. Offsets come from ``rng``
    (``top`` then ``left``, uniform, image after image).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import random_crop
        >>> x = Tensor.zeros((4, 3, 32, 32), NdArray.device())
        >>> random_crop(x, 32, padding=4, rng=7).dims()
        (4, 3, 32, 32)
    """
    dims = _dims(img, "random_crop")
    height, width = _pair(size, "random_crop", "size")
    if padding_mode not in get_args(PaddingMode):
        raise ArgumentError(
            f"random_crop: padding_mode must be one of {', '.join(map(repr, get_args(PaddingMode)))},"
            f" found {padding_mode!r}"
        )
    generator = _generator(rng)
    left, top, right, bottom = _padding(0 if padding is None else padding)
    h, w = dims[-2] + top + bottom, dims[-1] + left + right
    if pad_if_needed and h < height:
        top, bottom, h = top + height - h, bottom + height - h, h + 2 * (height - h)
    if pad_if_needed and w < width:
        left, right, w = left + width - w, right + width - w, w + 2 * (width - w)
    if height > h or width > w:
        raise ShapeError(
            f"random_crop: the crop {height} x {width} is larger than the (padded) image {h} x {w}"
        )
    x = img
    if left or top or right or bottom:
        value: float | PadMode = fill
        if padding_mode == "edge":
            value = PadMode.Edge
        elif padding_mode == "reflect":
            value = PadMode.Reflect
        x = img.pad([left, right, top, bottom], value)
    if len(dims) == 3:
        return crop(
            x,
            int(generator.integers(0, h - height + 1)),
            int(generator.integers(0, w - width + 1)),
            height,
            width,
        )
    crops = []
    for i in range(dims[0]):
        t, lft = int(generator.integers(0, h - height + 1)), int(generator.integers(0, w - width + 1))
        crops.append(crop(x.narrow(0, i, 1), t, lft, height, width))
    return Tensor.cat(crops, 0)


# ----------------------------------------------------------------------------------------------- flips


def horizontal_flip(img: Tensor[B, R, K]) -> Tensor[B, R, K]:
    """An image ``[C, H, W]`` or batch ``[N, C, H, W]`` mirrored left to right (torchvision's).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import horizontal_flip
        >>> horizontal_flip(Tensor.from_data([[[1, 2, 3]]], NdArray.device())).to_data().to_list()
        [[[3, 2, 1]]]
    """
    rank = len(_dims(img, "horizontal_flip"))
    return img.flip((rank - 1,))


def random_horizontal_flip(img: Tensor[B, R, K], p: float = 0.5, *, rng: Rng = None) -> Tensor[B, R, K]:
    """An image mirrored with probability ``p``; in a batch, each image on its own draw.

    torchvision's ``RandomHorizontalFlip``: an image is flipped when
    ``rng.random() < p``, one draw per image, in order.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.transform.vision import random_horizontal_flip
        >>> x = Tensor.from_data([[[1, 2]]], NdArray.device())
        >>> random_horizontal_flip(x, p=1.0, rng=0).to_data().to_list()
        [[[2, 1]]]
    """
    dims = _dims(img, "random_horizontal_flip")
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ArgumentError(f"random_horizontal_flip: p must be a probability in [0, 1], found {p}")
    generator = _generator(rng)
    if len(dims) == 3:
        return horizontal_flip(img) if generator.random() < p else img
    n = dims[0]
    flips = generator.random(n) < p
    if not flips.any():
        return img
    if flips.all():
        return horizontal_flip(img)
    # One flip of the whole batch, then each image picked from the original or the flipped half.
    both = Tensor.cat([img, horizontal_flip(img)], 0)
    return both.select(0, _index(np.arange(n) + n * flips.astype(np.int64), img))
