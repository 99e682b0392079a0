"""Non-maximum suppression of boxes (Burn's ``Nms`` and ``NmsOptions``)."""

from __future__ import annotations

import dataclasses

import ferrum._ferrum as _ferrum
from ferrum._ferrum import ArgumentError, Float, Int, Tensor
from ferrum.tensor.rank import D1, D2
from ferrum.tensor.type_vars import B

__all__ = ["NmsOptions", "nms"]



@dataclasses.dataclass(frozen=True)
class NmsOptions:
    """Options of ``nms`` (Burn's ``NmsOptions``, with its defaults).

    A box whose IoU with a kept, higher-scoring box is above
    ``iou_threshold`` is suppressed; boxes scoring below
    ``score_threshold`` are dropped first; at most ``max_output_boxes``
    are kept (0: no limit).

    Example:
        >>> from ferrum.vision import NmsOptions
        >>> NmsOptions().iou_threshold, NmsOptions(max_output_boxes=10).score_threshold
        (0.5, 0.0)
    """

    iou_threshold: float = 0.5
    score_threshold: float = 0.0
    max_output_boxes: int = 0


def nms(
    boxes: Tensor[B, D2, Float], scores: Tensor[B, D1, Float], options: NmsOptions | None = None
) -> Tensor[B, D1, Int]:
    """Non-maximum suppression: the indices ``[m]`` of the boxes kept, best score first.

    ``boxes`` is Float ``[n, 4]`` as ``(x1, y1, x2, y2)`` and ``scores``
    Float ``[n]``. Boxes are visited by descending score (equal scores in
    input order); each box kept suppresses every later one whose IoU with it
    is above ``options.iou_threshold``. Computed in f64 for f64 boxes, f32
    otherwise, as ``torchvision.ops.nms`` computes in the boxes' dtype.

    Example:
        >>> from ferrum import Float, Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.vision import NmsOptions, nms
        >>> device = NdArray.device()
        >>> boxes = Tensor.from_data([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]], device, Float)
        >>> scores = Tensor.from_data([0.9, 0.8, 0.7], device)
        >>> nms(boxes, scores).to_data().to_list()
        [0, 2]
        >>> nms(boxes, scores, NmsOptions(iou_threshold=0.9)).to_data().to_list()
        [0, 1, 2]
    """
    options = NmsOptions() if options is None else options
    if not isinstance(options, NmsOptions):
        raise TypeError(f"nms: options must be an NmsOptions, found {options!r}")
    limit = options.max_output_boxes
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ArgumentError(
            f"nms: max_output_boxes must be a non-negative int (0 for no limit), found {limit!r}"
        )
    iou, score = float(options.iou_threshold), float(options.score_threshold)
    return _ferrum.vision_nms(boxes, scores, iou, score, limit)
