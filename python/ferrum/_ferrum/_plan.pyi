"""Compiled plans (used by ferrum.onnx.plan): a graph run in the engine, instruction by instruction."""

import builtins
from typing import Any, final

from ferrum._ferrum._device import Device
from ferrum._ferrum._tensor import Tensor

_Attr = builtins.int | builtins.float | builtins.bool | builtins.str | list[builtins.int] | tuple[builtins.int, ...]
_Instruction = tuple[
    builtins.str,
    dict[builtins.str, _Attr],
    list[builtins.int | None],
    list[builtins.int],
    list[builtins.int],
    builtins.str,
]

@final
class Plan:
    def __new__(
        cls,
        slots: builtins.int,
        instructions: list[_Instruction],
        constants: list[tuple[builtins.int, Tensor[Any, Any, Any]]],
        inputs: list[tuple[builtins.int, list[builtins.int], builtins.str]],
        outputs: list[builtins.int],
        device: Device[Any],
    ) -> Plan: ...
    def run(self, inputs: list[Tensor[Any, Any, Any]]) -> list[Tensor[Any, Any, Any]]: ...
    def profile(
        self, inputs: list[Tensor[Any, Any, Any]]
    ) -> tuple[list[Tensor[Any, Any, Any]], list[tuple[builtins.str, builtins.str, builtins.float]]]: ...
    def __len__(self) -> builtins.int: ...
