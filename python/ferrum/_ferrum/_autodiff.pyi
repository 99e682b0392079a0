"""Gradients of a backward pass and custom differentiable ops."""

import builtins
from collections.abc import Callable, Sequence
from typing import Any, final

from ferrum._ferrum._kind import Float
from ferrum._ferrum._tensor import Tensor
from ferrum._ferrum._types import _B

@final
class Gradients:
    def __len__(self) -> builtins.int: ...

def custom_op(
    name: builtins.str,
    inputs: Sequence[Tensor[_B, Any, Any]],
    output: Tensor[_B, Any, Any],
    backward: Callable[[Tensor[Any, Any, Any]], Sequence[Tensor[Any, Any, Any] | None]],
) -> Tensor[_B, Any, Float]: ...
