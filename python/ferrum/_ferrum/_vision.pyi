"""Vision ops (used by ferrum.vision): connected components, morphology, nms; no gradient."""

import builtins
from collections.abc import Sequence
from typing import Any

from ferrum._ferrum._device import Device
from ferrum._ferrum._kind import Bool, Float, Int
from ferrum._ferrum._tensor import Tensor
from ferrum._ferrum._types import _B, _D, _K
from ferrum.tensor.rank import D1, D2

def vision_connected_components(img: Tensor[_B, _D, Bool], connectivity: builtins.str) -> Tensor[_B, _D, Int]: ...
def vision_connected_components_with_stats(
    img: Tensor[_B, _D, Bool],
    connectivity: builtins.str,
    bounds_enabled: builtins.bool = True,
    max_label_enabled: builtins.bool = True,
    compact_labels: builtins.bool = True,
) -> tuple[Tensor[_B, _D, Int], Tensor[_B, Any, Int], Tensor[_B, Any, Int], Tensor[_B, Any, Int], Tensor[_B, Any, Int], Tensor[_B, Any, Int], Tensor[_B, D1, Int]]: ...
def vision_morph(
    x: Tensor[_B, _D, _K],
    kernel: Tensor[_B, D2, Bool],
    op: builtins.str,
    anchor: tuple[builtins.int, builtins.int] | None = None,
    iterations: builtins.int = 1,
    border_type: builtins.str = "constant",
    border_value: Sequence[builtins.float] | None = None,
) -> Tensor[_B, _D, _K]: ...
def vision_structuring_element(shape: builtins.str, width: builtins.int, height: builtins.int, anchor: tuple[builtins.int, builtins.int] | None, device: Device[_B]) -> Tensor[_B, D2, Bool]: ...
def vision_nms(boxes: Tensor[_B, D2, Float], scores: Tensor[_B, D1, Float], iou_threshold: builtins.float = 0.5, score_threshold: builtins.float = 0.0, max_output_boxes: builtins.int = 0) -> Tensor[_B, D1, Int]: ...
