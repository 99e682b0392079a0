"""Connected-component labelling of Bool masks (Burn's ``ConnectedComponents``)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Generic, overload

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Bool, Int, Tensor
from ferrum.tensor.rank import D1, D2, D3
from ferrum.tensor.type_vars import B, D

__all__ = [
    "ConnectedStats",
    "ConnectedStatsOptions",
    "Connectivity",
    "connected_components",
    "connected_components_with_stats",
]



class Connectivity(enum.Enum):
    """Which neighbours join a pixel to a component (Burn's ``Connectivity``)."""

    #: Left, right, up and down.
    Four = "four"
    #: The four above and the four diagonals.
    Eight = "eight"


@dataclasses.dataclass(frozen=True)
class ConnectedStatsOptions:
    """Which statistics ``connected_components_with_stats`` should collect (Burn's ``ConnectedStatsOptions``).

    Burn's GPU backends skip disabled statistics to save atomics; its CPU
    backend, like ferrum's engine, always computes all of them and always
    returns compact labels, so these flags never change the result.

    Example:
        >>> from ferrum.vision import ConnectedStatsOptions
        >>> ConnectedStatsOptions.none().bounds_enabled, ConnectedStatsOptions().compact_labels
        (False, True)
    """

    bounds_enabled: bool = True
    max_label_enabled: bool = True
    compact_labels: bool = True

    @classmethod
    def none(cls) -> ConnectedStatsOptions:
        """No statistic asked for (Burn's ``ConnectedStatsOptions::none()``)."""
        return cls(bounds_enabled=False, max_label_enabled=False, compact_labels=False)

    @classmethod
    def all(cls) -> ConnectedStatsOptions:
        """Every statistic (Burn's ``ConnectedStatsOptions::all()``, the default)."""
        return cls()


@dataclasses.dataclass(frozen=True)
class ConnectedStats(Generic[B, D]):
    """Per-label statistics of ``connected_components_with_stats`` (Burn's ``ConnectedStats``).

    Each field is indexed by label; entry 0, the background, is all zeros.
    For an image ``[h, w]`` the fields are ``[max_label + 1]`` and
    ``max_label`` is ``[1]``; for a batch ``[n, h, w]`` they are ``[n, L]``,
    ``L`` the largest ``max_label + 1`` of the batch (zeros past an image's
    own labels), and ``max_label`` is ``[n]``. Bounds are inclusive pixel
    coordinates: ``right - left + 1`` is the box's width.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.vision import Connectivity, connected_components_with_stats
        >>> mask = Tensor.from_bool([[False, True, True], [False, True, False]], NdArray.device())
        >>> _, stats = connected_components_with_stats(mask, Connectivity.Four)
        >>> stats.area.to_data().to_list(), stats.right.to_data().to_list()
        ([0, 3], [0, 2])
    """

    #: Pixels in each component.
    area: Tensor[B, D, Int]
    #: Smallest row of each component.
    top: Tensor[B, D, Int]
    #: Smallest column of each component.
    left: Tensor[B, D, Int]
    #: Largest column of each component.
    right: Tensor[B, D, Int]
    #: Largest row of each component.
    bottom: Tensor[B, D, Int]
    #: The largest label, the number of components (one per image).
    max_label: Tensor[B, D1, Int]


def _connectivity(op: str, connectivity: Connectivity) -> str:
    if not isinstance(connectivity, Connectivity):
        raise TypeError(f"{op}: connectivity must be a Connectivity (Four or Eight), found {connectivity!r}")
    return connectivity.value


@overload
def connected_components(img: Tensor[B, D2, Bool], connectivity: Connectivity) -> Tensor[B, D2, Int]: ...
@overload
def connected_components(img: Tensor[B, D3, Bool], connectivity: Connectivity) -> Tensor[B, D3, Int]: ...
def connected_components(img: Tensor[B, Any, Bool], connectivity: Connectivity) -> Tensor[B, Any, Int]:
    """The component label of every pixel of a Bool image ``[h, w]`` (or a batch ``[n, h, w]``).

    Labels are Int, the image's shape: 0 for the background and
    ``1..=count`` for the components, numbered in the order their first
    pixels appear in a row-major scan (as ``scipy.ndimage.label`` numbers
    them). Each image of a batch is labelled on its own.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.vision import Connectivity, connected_components
        >>> mask = Tensor.from_bool([[True, False], [False, True]], NdArray.device())
        >>> connected_components(mask, Connectivity.Four).to_data().to_list()
        [[1, 0], [0, 2]]
        >>> connected_components(mask, Connectivity.Eight).to_data().to_list()
        [[1, 0], [0, 1]]
    """
    return _ferrum.vision_connected_components(img, _connectivity("connected_components", connectivity))


@overload
def connected_components_with_stats(
    img: Tensor[B, D2, Bool], connectivity: Connectivity, options: ConnectedStatsOptions | None = None
) -> tuple[Tensor[B, D2, Int], ConnectedStats[B, D1]]: ...
@overload
def connected_components_with_stats(
    img: Tensor[B, D3, Bool], connectivity: Connectivity, options: ConnectedStatsOptions | None = None
) -> tuple[Tensor[B, D3, Int], ConnectedStats[B, D2]]: ...
def connected_components_with_stats(
    img: Tensor[B, Any, Bool], connectivity: Connectivity, options: ConnectedStatsOptions | None = None
) -> tuple[Tensor[B, Any, Int], ConnectedStats[B, Any]]:
    """``connected_components`` and the area and bounding box of each component (see ``ConnectedStats``).

    ``options`` defaults to ``ConnectedStatsOptions.all()``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.vision import Connectivity, connected_components_with_stats
        >>> mask = Tensor.from_bool([[True, False, True], [True, False, False]], NdArray.device())
        >>> labels, stats = connected_components_with_stats(mask, Connectivity.Eight)
        >>> labels.to_data().to_list()
        [[1, 0, 2], [1, 0, 0]]
        >>> stats.area.to_data().to_list(), stats.bottom.to_data().to_list()
        ([0, 2, 1], [0, 1, 0])
        >>> stats.max_label.to_data().to_list()
        [2]
    """
    options = ConnectedStatsOptions() if options is None else options
    if not isinstance(options, ConnectedStatsOptions):
        raise TypeError(
            f"connected_components_with_stats: options must be a ConnectedStatsOptions, found {options!r}"
        )
    conn = _connectivity("connected_components_with_stats", connectivity)
    labels, area, top, left, right, bottom, max_label = _ferrum.vision_connected_components_with_stats(
        img, conn, options.bounds_enabled, options.max_label_enabled, options.compact_labels
    )
    return labels, ConnectedStats(area, top, left, right, bottom, max_label)
