"""Adapters between PyTorch's and Burn's layouts of the same layers (Burn's ``ModuleAdapter``).

PyTorch stores a Linear weight as ``[out, in]``, Burn (and ferrum) as
``[in, out]``; PyTorch's norm layers call their affine parameters
``weight``/``bias``, Burn's ``gamma``/``beta``; PyTorch packs an LSTM's or a
GRU's gates, and an attention's query, key and value projections, into one
tensor where Burn has a Linear each. An adapter first rewrites the file's
tensors as a whole (``unpack``: splitting packed tensors), then one snapshot
at a time, knowing the class of the module that holds it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import numpy.typing as npt

from ferrum.store.packed import pack_pytorch, unpack_pytorch
from ferrum.store.snapshot import TensorSnapshot

__all__ = ["BurnToPyTorchAdapter", "IdentityAdapter", "ModuleAdapter", "PyTorchToBurnAdapter"]

_NORMS = frozenset({"BatchNorm", "LayerNorm", "GroupNorm"})
_TO_BURN = {"weight": "gamma", "bias": "beta"}
_TO_PYTORCH = {"gamma": "weight", "beta": "bias"}


class ModuleAdapter(Protocol):
    """Rewrites snapshots between two layouts.

    ``unpack`` rewrites a file's tensors before they are matched to a module
    (PyTorch's packed gates split into one tensor each), ``pack`` a module's
    tensors before they are written (joined again); ``adapt`` gets a
    snapshot whose ``container`` names the module class holding it;
    ``alternative_name`` gives the name to look for in a file when a
    parameter's own name is not there (``gamma`` → ``weight``).
    """

    def unpack(self, snapshots: dict[str, TensorSnapshot]) -> dict[str, TensorSnapshot]:
        """The file's tensors by path, as the module layout has them."""
        ...

    def pack(self, snapshots: list[TensorSnapshot]) -> list[TensorSnapshot]:
        """The module's (adapted) tensors, joined as the file layout packs them."""
        ...

    def adapt(self, snapshot: TensorSnapshot) -> TensorSnapshot:
        """The snapshot in the other layout."""
        ...

    def alternative_name(self, name: str, container: str) -> str | None:
        """Another name the parameter ``name`` of a ``container`` module may have in a file."""
        ...


class IdentityAdapter:
    """Leaves every snapshot as it is (the default for ferrum's own files).

    Example:
        >>> from ferrum.store import IdentityAdapter
        >>> IdentityAdapter().alternative_name("gamma", "BatchNorm") is None
        True
    """

    def unpack(self, snapshots: dict[str, TensorSnapshot]) -> dict[str, TensorSnapshot]:
        """``snapshots`` unchanged."""
        return snapshots

    def pack(self, snapshots: list[TensorSnapshot]) -> list[TensorSnapshot]:
        """``snapshots`` unchanged."""
        return snapshots

    def adapt(self, snapshot: TensorSnapshot) -> TensorSnapshot:
        """``snapshot`` unchanged."""
        return snapshot

    def alternative_name(self, name: str, container: str) -> str | None:
        """Never another name."""
        return None


class PyTorchToBurnAdapter:
    """Reads PyTorch's layout: Linear weights transposed, norms' ``weight``/``bias`` as ``gamma``/``beta``,
    packed LSTM/GRU gates and attention projections split (see ``ferrum.store.packed.unpack_pytorch``).

    Example:
        >>> import numpy as np
        >>> from ferrum.store import PyTorchToBurnAdapter, TensorSnapshot
        >>> snap = TensorSnapshot.from_numpy("fc.weight", np.zeros((10, 128), np.float32), "Linear")
        >>> PyTorchToBurnAdapter().adapt(snap).shape
        (128, 10)
        >>> PyTorchToBurnAdapter().alternative_name("gamma", "BatchNorm")
        'weight'
    """

    def unpack(self, snapshots: dict[str, TensorSnapshot]) -> dict[str, TensorSnapshot]:
        """Split ``nn.LSTM``/``nn.GRU`` gates and ``nn.MultiheadAttention`` projections into Linears."""
        return unpack_pytorch(snapshots)

    def pack(self, snapshots: list[TensorSnapshot]) -> list[TensorSnapshot]:
        """``snapshots`` unchanged (it reads PyTorch's layout; ``BurnToPyTorchAdapter`` writes it)."""
        return snapshots

    def adapt(self, snapshot: TensorSnapshot) -> TensorSnapshot:
        """Transpose a Linear weight; rename a norm's ``weight``/``bias``."""
        return _adapt(snapshot, _TO_BURN)

    def alternative_name(self, name: str, container: str) -> str | None:
        """A norm's ``gamma``/``beta`` may be PyTorch's ``weight``/``bias``."""
        return _TO_PYTORCH.get(name) if container in _NORMS else None


class BurnToPyTorchAdapter:
    """Writes PyTorch's layout, so ``torch.nn.Module.load_state_dict`` takes the file; LSTM/GRU gates and
    attention projections are packed as ``torch.nn`` does (see ``ferrum.store.packed.pack_pytorch``).

    Example:
        >>> import numpy as np
        >>> from ferrum.store import BurnToPyTorchAdapter, TensorSnapshot
        >>> snap = TensorSnapshot.from_numpy("norm.gamma", np.ones(8, np.float32), "BatchNorm")
        >>> BurnToPyTorchAdapter().adapt(snap).path
        'norm.weight'
    """

    def unpack(self, snapshots: dict[str, TensorSnapshot]) -> dict[str, TensorSnapshot]:
        """``snapshots`` unchanged (ferrum's files hold one tensor per Linear)."""
        return snapshots

    def pack(self, snapshots: list[TensorSnapshot]) -> list[TensorSnapshot]:
        """Join ``Lstm``/``Gru`` gates and ``MultiHeadAttention`` projections as ``torch.nn`` packs them."""
        return pack_pytorch(snapshots)

    def adapt(self, snapshot: TensorSnapshot) -> TensorSnapshot:
        """Transpose a Linear weight; rename a norm's ``gamma``/``beta``."""
        return _adapt(snapshot, _TO_PYTORCH)

    def alternative_name(self, name: str, container: str) -> str | None:
        """A norm's ``weight``/``bias`` may be Burn's ``gamma``/``beta``."""
        return _TO_BURN.get(name) if container in _NORMS else None


def _adapt(snapshot: TensorSnapshot, renames: dict[str, str]) -> TensorSnapshot:
    container = snapshot.container
    if container == "Linear" and snapshot.name == "weight" and len(snapshot.shape) == 2:
        return _transposed(snapshot)
    if container in _NORMS and snapshot.name in renames:
        prefix = snapshot.path[: -len(snapshot.name)]
        return snapshot.with_path(prefix + renames[snapshot.name])
    return snapshot


def _transposed(snapshot: TensorSnapshot) -> TensorSnapshot:
    read = snapshot.read

    def read_transposed() -> npt.NDArray[Any]:
        return read().T  # a view: the copy into a tensor (or a file) lays it out

    rows, cols = snapshot.shape
    return dataclasses.replace(snapshot, shape=(cols, rows), read=read_transposed)
