"""Vision ops, as Burn's ``burn-vision`` crate has them (names after OpenCV).

* ``connected_components`` and ``connected_components_with_stats``: labels
  and per-component area and bounding box of a Bool mask, with 4 or 8
  connectivity (``Connectivity``, ``ConnectedStatsOptions``,
  ``ConnectedStats``);
* morphology: ``erode`` and ``dilate`` of ``[height, width, channels]``
  images of any dtype by a structuring element (``create_structuring_element``
  with a ``KernelShape``), with ``MorphOptions`` (anchor, iterations,
  ``BorderType`` and border value);
* ``nms``: non-maximum suppression of boxes with ``NmsOptions``.

All run in the Rust engine, image by image in parallel for a batch, and
carry no gradient.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum import vision
    >>> device = NdArray.device()
    >>> mask = Tensor.from_bool([[True, True, False], [False, False, True]], device)
    >>> vision.connected_components(mask, vision.Connectivity.Four).to_data().to_list()
    [[1, 1, 0], [0, 0, 2]]
    >>> vision.connected_components(mask, vision.Connectivity.Eight).to_data().to_list()
    [[1, 1, 0], [0, 0, 1]]
"""

from ferrum.vision.boxes import NmsOptions, nms
from ferrum.vision.components import (
    ConnectedStats,
    ConnectedStatsOptions,
    Connectivity,
    connected_components,
    connected_components_with_stats,
)
from ferrum.vision.morphology import (
    BorderType,
    KernelShape,
    MorphOptions,
    Point,
    Size,
    create_structuring_element,
    dilate,
    erode,
)

__all__ = [
    "BorderType",
    "ConnectedStats",
    "ConnectedStatsOptions",
    "Connectivity",
    "KernelShape",
    "MorphOptions",
    "NmsOptions",
    "Point",
    "Size",
    "connected_components",
    "connected_components_with_stats",
    "create_structuring_element",
    "dilate",
    "erode",
    "nms",
]
