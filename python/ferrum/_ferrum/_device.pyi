"""Devices: a backend (optionally under autodiff) to compute on."""

import builtins
from typing import Any, Generic, final

from ferrum._ferrum._types import B
from ferrum.backend import Backend

@final
class Device(Generic[B]):
    @staticmethod
    def _new(
        backend: type[Backend], autodiff: builtins.bool, inner: Device[Any] | None = None, checkpointing: builtins.bool = False
    ) -> Device[Any]: ...
    @property
    def backend(self) -> type[B]: ...
    @property
    def inner(self) -> Device[Any]: ...
    @property
    def is_autodiff(self) -> builtins.bool: ...
    def __eq__(self, other: object, /) -> builtins.bool: ...
    def __hash__(self) -> builtins.int: ...
