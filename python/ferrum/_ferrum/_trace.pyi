"""The recorder behind ferrum.jit.trace (one per thread): tensor ops append plan instructions while it runs."""

import builtins
from typing import Any

from ferrum._ferrum._device import Device
from ferrum._ferrum._tensor import Tensor

_Attr = builtins.int | builtins.float | builtins.str | list[builtins.int]
_TracedInstruction = tuple[
    builtins.str,
    dict[builtins.str, _Attr],
    list[builtins.int | None],
    list[builtins.int],
    builtins.str,
    list[list[builtins.int]],
]

def _trace_begin(inputs: list[Tensor[Any, Any, Any]], device: Device[Any]) -> None: ...
def _trace_end(
    outputs: list[Tensor[Any, Any, Any]],
) -> tuple[
    builtins.int,
    list[_TracedInstruction],
    list[tuple[builtins.int, Tensor[Any, Any, Any]]],
    list[builtins.int],
]: ...
def _trace_abort() -> None: ...
def _trace_call(name: builtins.str | None = None) -> None: ...
def _trace_active() -> builtins.bool: ...
