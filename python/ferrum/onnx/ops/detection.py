"""Object-detection post-processing: NonMaxSuppression (since opset 10).

Greedy suppression is a data-dependent loop (which box survives depends on
which boxes survived before it) whose output size is known only at run
time, and the engine has no such op: it runs in NumPy on the boxes' values,
one vectorised IoU row per kept box. The result is indices, so nothing is
lost to autodiff.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Float, KindError, Tensor
from ferrum.onnx.ops._util import AnyTensor, IntArg, ints
from ferrum.onnx.ops.registry import op

__all__ = ["non_max_suppression"]


def _scalar(value: Any, name: str) -> np.ndarray[Any, Any] | None:
    """An optional scalar input (literal or tensor); None when absent or empty."""
    if value is None:
        return None
    array = np.asarray(value.to_numpy() if isinstance(value, Tensor) else value).reshape(-1)
    if array.size > 1:
        raise ValueError(f"NonMaxSuppression: {name} must be a single value, found {array.size} values")
    return array if array.size else None


def _corners(boxes: np.ndarray[Any, Any], center_point_box: int) -> tuple[np.ndarray[Any, Any], ...]:
    """``(y_min, x_min, y_max, x_max)`` columns of ``[n, 4]`` boxes in either ONNX format."""
    if center_point_box:
        # [x_center, y_center, width, height]
        half_w, half_h = boxes[:, 2] / 2, boxes[:, 3] / 2
        return boxes[:, 1] - half_h, boxes[:, 0] - half_w, boxes[:, 1] + half_h, boxes[:, 0] + half_w
    # [y1, x1, y2, x2] with either corner first
    y_min, y_max = np.minimum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 0], boxes[:, 2])
    x_min, x_max = np.minimum(boxes[:, 1], boxes[:, 3]), np.maximum(boxes[:, 1], boxes[:, 3])
    return y_min, x_min, y_max, x_max


def _iou(corners: tuple[np.ndarray[Any, Any], ...], i: int) -> np.ndarray[Any, Any]:
    """The IoU of box ``i`` with every box (0 where the boxes do not overlap or one has no area)."""
    y_min, x_min, y_max, x_max = corners
    height = np.minimum(y_max[i], y_max) - np.maximum(y_min[i], y_min)
    width = np.minimum(x_max[i], x_max) - np.maximum(x_min[i], x_min)
    inter = np.where((height > 0) & (width > 0), height * width, 0)
    area = (y_max - y_min) * (x_max - x_min)
    union = area[i] + area - inter
    valid = (inter > 0) & (area[i] > 0) & (area > 0) & (union > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(valid, inter / np.where(union > 0, union, 1), 0)


def _select(
    corners: tuple[np.ndarray[Any, Any], ...],
    scores: np.ndarray[Any, Any],
    limit: int,
    iou_threshold: np.ndarray[Any, Any] | float,
    score_threshold: np.ndarray[Any, Any] | None,
) -> list[int]:
    """The boxes greedy NMS keeps for one class, best score first (ties: lower index first)."""
    candidates = np.arange(len(scores))
    if score_threshold is not None:
        candidates = candidates[scores[candidates] > score_threshold]
    # A stable sort on -score keeps equal scores in index order.
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    alive = np.ones(len(scores), dtype=bool)
    kept: list[int] = []
    for index in order:
        if len(kept) >= limit:
            break
        if not alive[index]:
            continue
        kept.append(int(index))
        alive &= ~(_iou(corners, int(index)) > iou_threshold)
    return kept


@op(
    "NonMaxSuppression",
    static=(None, None, "max_output_boxes_per_class", "iou_threshold", "score_threshold"),
    since=10,
)
def non_max_suppression(
    boxes: AnyTensor,
    scores: AnyTensor,
    max_output_boxes_per_class: IntArg = None,
    iou_threshold: Any = None,
    score_threshold: Any = None,
    center_point_box: int = 0,
) -> AnyTensor:
    """NonMaxSuppression: the ``[selected, 3]`` Int ``(batch, class, box)`` triples greedy NMS keeps.

    ``boxes`` is ``[batch, boxes, 4]``: ``[y1, x1, y2, x2]`` (either
    diagonal's corners) or, with ``center_point_box=1``, ``[x_center,
    y_center, width, height]``; ``scores`` is ``[batch, classes, boxes]``.
    For each batch and class, boxes scoring above ``score_threshold`` (all
    when absent) are taken best first, each dropping the later ones whose IoU
    with it exceeds ``iou_threshold`` (default 0), up to
    ``max_output_boxes_per_class`` (default 0: nothing is selected). Runs in
    NumPy (see the module).

    Example:
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> b = Tensor.from_numpy(np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]]], np.float32), d)
        >>> s = Tensor.from_numpy(np.array([[[0.9, 0.8, 0.7]]], np.float32), d)
        >>> non_max_suppression(b, s, 3, 0.5).to_numpy().tolist()
        [[0, 0, 0], [0, 0, 2]]
    """
    if boxes.kind is not Float or scores.kind is not Float:
        raise KindError(f"NonMaxSuppression: boxes and scores must be float, found {boxes.kind.__name__}")
    b_dims, s_dims = tuple(boxes.dims()), tuple(scores.dims())
    if len(b_dims) != 3 or b_dims[2] != 4 or len(s_dims) != 3 or (s_dims[0], s_dims[2]) != b_dims[:2]:
        raise ValueError(
            "NonMaxSuppression: expected boxes [batch, boxes, 4] and scores [batch, classes, boxes], "
            f"found {list(b_dims)} and {list(s_dims)}"
        )
    if center_point_box not in (0, 1):
        raise ValueError(f"NonMaxSuppression: center_point_box must be 0 or 1, found {center_point_box}")
    found = ints(max_output_boxes_per_class) or [0]
    if len(found) != 1:
        raise ValueError(f"NonMaxSuppression: max_output_boxes_per_class must be one integer, found {found}")
    limit = max(found[0], 0)
    iou = _scalar(iou_threshold, "iou_threshold")
    threshold = _scalar(score_threshold, "score_threshold")
    box_values = np.asarray(boxes.to_numpy())
    score_values = np.asarray(scores.to_numpy())
    selected: list[tuple[int, int, int]] = []
    for batch in range(b_dims[0]):
        corners = _corners(box_values[batch], center_point_box)
        for cls in range(s_dims[1]):
            kept = _select(
                corners, score_values[batch, cls], limit, iou if iou is not None else 0.0, threshold
            )
            selected.extend((batch, cls, box) for box in kept)
    out = np.array(selected, dtype=np.int64).reshape(-1, 3)
    return Tensor.from_numpy(out, boxes.device())
