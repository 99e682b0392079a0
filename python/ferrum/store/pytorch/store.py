"""``PytorchStore``: load a module from a PyTorch ``.pt``/``.pth``/``.bin`` file without torch.

The file's pickle is read by ferrum's own reader with an allow-list of
globals (nothing in the file runs), and tensor bytes come from a memory map.
As in Burn, ``PyTorchToBurnAdapter`` and contiguous index mapping are on by
default, and the store is read-only (write safetensors with
``BurnToPyTorchAdapter`` for PyTorch).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from typing_extensions import Self

from ferrum.store.adapter import ModuleAdapter, PyTorchToBurnAdapter
from ferrum.store.base import ModuleStore
from ferrum.store.pytorch.pickle import bounded_repr
from ferrum.store.pytorch.reader import flatten, read_torch_file
from ferrum.store.pytorch.torch_globals import TensorRef
from ferrum.store.result import StoreError
from ferrum.store.snapshot import TensorSnapshot

__all__ = ["PytorchStore"]


@dataclasses.dataclass(frozen=True)
class PytorchStore(ModuleStore):
    """A PyTorch file written by ``torch.save`` (zip or legacy format), read without torch.

    Example:
        >>> from ferrum.store import PytorchStore
        >>> store = PytorchStore.from_file("checkpoint.pt").with_top_level_key("model_state_dict")
        >>> store.top_level_key
        'model_state_dict'
    """

    from_adapter: ModuleAdapter = dataclasses.field(default_factory=PyTorchToBurnAdapter)
    contiguous_indices: bool | None = True
    top_level_key: str | None = None

    def with_top_level_key(self, key: str) -> Self:
        """Load the state dict under ``key`` of the saved dict (a checkpoint's ``model_state_dict``)."""
        if not isinstance(key, str) or not key:
            raise TypeError(f"with_top_level_key needs a non-empty str, found {key!r}")
        return dataclasses.replace(self, top_level_key=key)

    def _read(self) -> dict[str, TensorSnapshot]:
        root, snapshot = read_torch_file(self.path)
        if self.top_level_key is not None:
            root = self._under_key(root)
        tensors: dict[str, TensorRef] = {}
        flatten(root, "", tensors, what=str(self.path))
        return {name: snapshot(ref, name) for name, ref in tensors.items()}

    def _under_key(self, root: Any) -> Any:
        if not isinstance(root, dict):
            raise StoreError(
                f"{self.path} holds a {type(root).__name__}, not a dict with '{self.top_level_key}'"
            )
        if self.top_level_key not in root:
            keys = ", ".join(bounded_repr(k, 60) for k in list(root)[:12])
            raise StoreError(f"{self.path} has no top-level key '{self.top_level_key}' (its keys: {keys})")
        return root[self.top_level_key]

    def _write(self, snapshots: list[TensorSnapshot]) -> None:
        raise StoreError(
            f"PytorchStore is read-only (as in Burn); to write a file PyTorch loads, use"
            f" SafetensorsStore.from_file(...).with_to_adapter(BurnToPyTorchAdapter()) instead of {self.path}"
        )
