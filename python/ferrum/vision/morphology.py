"""Morphology: erode and dilate by a structuring element (Burn's ``Morphology``, ``MorphOptions``
and ``create_structuring_element``, with OpenCV's semantics)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import Any, NamedTuple, overload

import ferrum._ferrum as _ferrum
from ferrum._ferrum import ArgumentError, Bool, Device, Tensor
from ferrum.tensor.rank import D1, D2, D3, D4
from ferrum.tensor.type_vars import B, K

__all__ = [
    "BorderType",
    "KernelShape",
    "MorphOptions",
    "Point",
    "Size",
    "create_structuring_element",
    "dilate",
    "erode",
]



class Size(NamedTuple):
    """Width and height of a structuring element (Burn's ``Size``)."""

    width: int
    height: int


class Point(NamedTuple):
    """A position in a structuring element from its top left (Burn's ``Point``): ``x`` column, ``y`` row."""

    x: int
    y: int


class KernelShape(enum.Enum):
    """Shapes ``create_structuring_element`` draws (Burn's ``KernelShape``, OpenCV's ``MORPH_*``)."""

    Rect = "rect"
    Cross = "cross"
    Ellipse = "ellipse"


class BorderType(enum.Enum):
    """What a pixel outside the image reads (Burn's ``BorderType``, OpenCV's ``BORDER_*``)."""

    #: ``border_value`` per channel; by default the value that changes nothing
    #: (the dtype's largest for erode, its smallest for dilate).
    Constant = "constant"
    #: The nearest edge pixel: ``aaa|abcd|ddd``.
    Replicate = "replicate"
    #: Mirrored, edge included: ``cba|abcd|dcb``.
    Reflect = "reflect"
    #: Mirrored about the edge pixel: ``dcb|abcd|cba``.
    Reflect101 = "reflect101"
    #: Periodic; erode and dilate refuse it, as Burn documents and OpenCV does.
    Wrap = "wrap"


@dataclasses.dataclass(frozen=True)
class MorphOptions:
    """Options of ``erode`` and ``dilate`` (Burn's ``MorphOptions``, with its defaults).

    ``anchor`` is the element's origin (its centre ``(width // 2, height //
    2)`` when None); ``iterations`` how many times the op runs, each pass on
    the previous output; ``border_value`` one value per channel (a sequence
    or a 1-d tensor) for ``BorderType.Constant``.

    Example:
        >>> from ferrum.vision import BorderType, MorphOptions, Point
        >>> MorphOptions(anchor=Point(0, 0), border_type=BorderType.Replicate).iterations
        1
    """

    anchor: Point | tuple[int, int] | None = None
    iterations: int = 1
    border_type: BorderType = BorderType.Constant
    border_value: Sequence[float] | Tensor[Any, D1, Any] | None = None


def _pair(op: str, what: str, value: tuple[int, int]) -> tuple[int, int]:
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        raise ArgumentError(f"{op}: {what} must be two non-negative ints, found {value!r}")
    return (value[0], value[1])


def create_structuring_element(
    shape: KernelShape,
    ksize: Size | tuple[int, int],
    anchor: Point | tuple[int, int] | None,
    device: Device[B],
) -> Tensor[B, D2, Bool]:
    """A Bool ``[height, width]`` structuring element, as OpenCV's ``getStructuringElement`` draws it.

    ``Rect`` is all true; ``Cross`` the anchor's row and column (the
    anchor defaults to the centre); ``Ellipse`` the ellipse inscribed in
    the box. ``ksize`` is ``Size(width, height)``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.vision import KernelShape, Size, create_structuring_element
        >>> k = create_structuring_element(KernelShape.Ellipse, Size(5, 3), None, NdArray.device())
        >>> k.int().to_data().to_list()
        [[0, 0, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 1, 0, 0]]
    """
    op = "create_structuring_element"
    if not isinstance(shape, KernelShape):
        raise TypeError(f"{op}: shape must be a KernelShape (Rect, Cross or Ellipse), found {shape!r}")
    width, height = _pair(op, "ksize", ksize)
    point = None if anchor is None else _pair(op, "anchor", anchor)
    return _ferrum.vision_structuring_element(shape.value, width, height, point, device)


def _morph(
    op: str, tensor: Tensor[B, Any, K], kernel: Tensor[B, D2, Bool], opts: MorphOptions | None
) -> Tensor[B, Any, K]:
    opts = MorphOptions() if opts is None else opts
    if not isinstance(opts, MorphOptions):
        raise TypeError(f"{op}: opts must be a MorphOptions, found {opts!r}")
    if not isinstance(opts.border_type, BorderType):
        raise TypeError(f"{op}: border_type must be a BorderType, found {opts.border_type!r}")
    iterations = opts.iterations
    if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 1:
        raise ArgumentError(f"{op}: iterations must be an int of at least 1, found {iterations!r}")
    anchor = None if opts.anchor is None else _pair(op, "anchor", opts.anchor)
    value = opts.border_value
    values: list[float] | None
    if value is None:
        values = None
    elif isinstance(value, Tensor):
        if len(value.dims()) != 1:
            raise ArgumentError(
                f"{op}: border_value must be 1-d, one value per channel, found shape {value.dims()}"
            )
        values = [float(v) for v in value.to_data().to_list()]
    else:
        values = [float(v) for v in value]
    return _ferrum.vision_morph(tensor, kernel, op, anchor, iterations, opts.border_type.value, values)


@overload
def erode(
    tensor: Tensor[B, D3, K], kernel: Tensor[B, D2, Bool], opts: MorphOptions | None = None
) -> Tensor[B, D3, K]: ...
@overload
def erode(
    tensor: Tensor[B, D4, K], kernel: Tensor[B, D2, Bool], opts: MorphOptions | None = None
) -> Tensor[B, D4, K]: ...
def erode(
    tensor: Tensor[B, Any, K], kernel: Tensor[B, D2, Bool], opts: MorphOptions | None = None
) -> Tensor[B, Any, K]:
    """Erode ``[height, width, channels]`` (or a batch ``[n, height, width, channels]``) by ``kernel``.

    Each output pixel is the minimum over the set elements of the Bool
    ``[kh, kw]`` ``kernel`` placed with its anchor on the pixel (OpenCV's
    ``erode``); every channel on its own. Float, Int (u8, i32, i64) and Bool
    images keep their dtype. ``opts`` defaults to ``MorphOptions()``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.vision import KernelShape, Size, create_structuring_element, erode
        >>> device = NdArray.device()
        >>> x = Tensor.from_data([[[3], [1], [4], [1], [5]]], device)
        >>> k = create_structuring_element(KernelShape.Rect, Size(3, 1), None, device)
        >>> erode(x, k).to_data().to_list()
        [[[1], [1], [1], [1], [1]]]
    """
    return _morph("erode", tensor, kernel, opts)


@overload
def dilate(
    tensor: Tensor[B, D3, K], kernel: Tensor[B, D2, Bool], opts: MorphOptions | None = None
) -> Tensor[B, D3, K]: ...
@overload
def dilate(
    tensor: Tensor[B, D4, K], kernel: Tensor[B, D2, Bool], opts: MorphOptions | None = None
) -> Tensor[B, D4, K]: ...
def dilate(
    tensor: Tensor[B, Any, K], kernel: Tensor[B, D2, Bool], opts: MorphOptions | None = None
) -> Tensor[B, Any, K]:
    """Dilate: the maximum over the element, as ``erode`` takes the minimum (OpenCV's ``dilate``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.vision import BorderType, MorphOptions, Point, dilate
        >>> device = NdArray.device()
        >>> x = Tensor.from_data([[[3], [1], [4], [1], [5]]], device)
        >>> k = Tensor.from_bool([[True, True]], device)
        >>> dilate(x, k).to_data().to_list()
        [[[3], [3], [4], [4], [5]]]
        >>> dilate(x, k, MorphOptions(anchor=Point(0, 0), border_value=[9])).to_data().to_list()
        [[[3], [4], [4], [5], [9]]]
    """
    return _morph("dilate", tensor, kernel, opts)
