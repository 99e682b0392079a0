"""Loading a store's tensors into a module and collecting a module's tensors for a store.

Paths are the module's dotted field paths (``conv.0.weight``); each tensor
also knows the class of the module holding it, which the adapters need.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ferrum._ferrum import DType, Tensor
from ferrum.module.param import Param, ParamId, RunningState
from ferrum.module.tree import Leaf, is_module, join, node_fields, rebuild
from ferrum.store.adapter import ModuleAdapter, PyTorchToBurnAdapter
from ferrum.store.filter import PathFilter
from ferrum.store.remap import KeyRemapper
from ferrum.store.result import ApplyError, ApplyResult, StoreError
from ferrum.store.snapshot import TensorSnapshot

__all__ = ["collect", "load_into", "save_from"]

_MAX_LISTED = 8


class StoreOptions(Protocol):
    """What applying reads of a store: ``ferrum.store.ModuleStore``'s options, its tensors and its writer
    (``ModuleStore.apply_to`` and ``collect_from`` call this file)."""

    @property
    def path(self) -> Path: ...
    @property
    def path_filter(self) -> PathFilter: ...
    @property
    def remapper(self) -> KeyRemapper: ...
    @property
    def from_adapter(self) -> ModuleAdapter: ...
    @property
    def to_adapter(self) -> ModuleAdapter: ...
    @property
    def partial(self) -> bool: ...
    def snapshots(self) -> dict[str, TensorSnapshot]: ...
    def _write(self, snapshots: list[TensorSnapshot]) -> None: ...


def module_leaves(node: object, path: str = "", container: str = "") -> Iterator[tuple[str, str, Leaf]]:
    """``(path, container class name, leaf)`` for every parameter and running state under ``node``."""
    if isinstance(node, (Param, RunningState)):
        yield path, container, node
    elif is_module(node):
        for name, value in node_fields(node):  # type: ignore[arg-type]
            yield from module_leaves(value, join(path, name), type(node).__name__)
    elif isinstance(node, (list, tuple)):
        for i, item in enumerate(node):
            yield from module_leaves(item, join(path, str(i)), container)


def _value(leaf: Leaf) -> Tensor[Any, Any, Any]:
    tensor: Tensor[Any, Any, Any] = leaf.val() if isinstance(leaf, Param) else leaf.value()
    return tensor


def collect(module: object, store: StoreOptions) -> list[TensorSnapshot]:
    """The module's tensors as snapshots, filtered, adapted and renamed as ``store`` says."""
    snapshots: list[TensorSnapshot] = []
    for path, container, leaf in module_leaves(module):
        if not store.path_filter.matches(path, container):
            continue
        tensor = _value(leaf)
        shape = tuple(tensor.dims())
        dtype = "F64" if tensor.dtype == DType.F64 else "F32"
        snap = TensorSnapshot(path, shape, dtype, tensor.to_numpy, container, leaf.id.value)
        snapshots.append(store.to_adapter.adapt(snap))
    snapshots = [
        snap.with_path(store.remapper.remap_path(snap.path)) for snap in store.to_adapter.pack(snapshots)
    ]
    seen: set[str] = set()
    for snap in snapshots:
        if snap.path in seen:
            raise StoreError(f"two tensors of the module would be saved as '{snap.path}'")
        seen.add(snap.path)
    return snapshots


def save_from(module: object, store: StoreOptions) -> None:
    """Write the module's tensors into ``store``."""
    store._write(collect(module, store))


def load_into(module: Any, store: StoreOptions) -> tuple[Any, ApplyResult]:
    """A copy of ``module`` holding the store's tensors, and what was applied.

    Raises ``StoreError`` (with ``.result``) on a shape mismatch or an
    unreadable tensor, and on missing tensors unless the store allows partial loads.
    """
    found = store.snapshots()
    result = ApplyResult()
    used: set[str] = set()
    loaded: dict[str, tuple[Tensor[Any, Any, Any], ParamId | None]] = {}
    for path, container, leaf in module_leaves(module):
        key = _find(path, container, found, store)
        if key is not None:
            used.add(key)
        if not store.path_filter.matches(path, container):
            result.skipped.append(path)
            continue
        if key is None:
            result.missing.append((path, container or "<root>"))
            continue
        snap = store.from_adapter.adapt(
            TensorSnapshot(
                path, found[key].shape, found[key].dtype, found[key].read, container, found[key].param_id
            )
        )
        current = _value(leaf)
        error = _load_one(snap, current, loaded, store.from_adapter)
        if error is None:
            result.applied.append(path)
        else:
            result.errors.append(error)
    result.unused.extend(key for key in found if key not in used)
    _raise_on_failure(result, store, found)

    def on_param(path: str, param: Param[Any]) -> Param[Any]:
        if path not in loaded:
            return param
        tensor, pid = loaded[path]
        return Param(tensor, pid or param.id, param.is_require_grad())

    def on_state(path: str, state: RunningState[Any]) -> RunningState[Any]:
        if path not in loaded:
            return RunningState(state.value(), state.id)
        tensor, pid = loaded[path]
        return RunningState(tensor, pid or state.id)

    return rebuild(module, on_param, on_state), result


def _find(path: str, container: str, found: dict[str, TensorSnapshot], store: StoreOptions) -> str | None:
    if path in found:
        return path
    prefix, _, name = path.rpartition(".")
    other = store.from_adapter.alternative_name(name, container)
    if other is not None:
        key = join(prefix, other)
        if key in found:
            return key
    return None


def _load_one(
    snap: TensorSnapshot,
    current: Tensor[Any, Any, Any],
    loaded: dict[str, tuple[Tensor[Any, Any, Any], ParamId | None]],
    adapter: ModuleAdapter,
) -> ApplyError | None:
    expected = tuple(current.dims())
    if snap.shape != expected:
        message = f"expected shape {list(expected)}, found {list(snap.shape)}"
        return ApplyError("shape", snap.path, message + _transpose_hint(snap, expected, adapter))
    try:
        values = snap.to_numpy()
    except (StoreError, ValueError, OSError) as err:
        return ApplyError("load", snap.path, str(err))
    if tuple(values.shape) != expected:
        return ApplyError("load", snap.path, f"read shape {list(values.shape)}, expected {list(expected)}")
    if values.dtype.kind != "f":  # ints and bools: NumPy's cast (from_numpy refuses lossy casts)
        values = values.astype(np.float64 if current.dtype == DType.F64 else np.float32)
    pid = ParamId(snap.param_id) if snap.param_id is not None else None
    # One copy, whatever the strides (a transposed or memory-mapped view), into the module's dtype.
    loaded[snap.path] = (Tensor.from_numpy(values, current.device(), dtype=current.dtype), pid)
    return None


def _transpose_hint(snap: TensorSnapshot, expected: tuple[int, ...], adapter: ModuleAdapter) -> str:
    """What to do when the file holds the transpose of a matrix: most often a PyTorch ``Linear`` weight."""
    if len(expected) != 2 or snap.shape != expected[::-1]:
        return ""
    if snap.container != "Linear" or snap.name != "weight":
        return " (the file holds its transpose)"
    if isinstance(adapter, PyTorchToBurnAdapter):
        # The adapter transposed a weight that was in Burn's layout already.
        return (
            " (after PyTorchToBurnAdapter transposed it: the file holds Burn's layout [d_input, d_output];"
            " load it without the adapter)"
        )
    return (
        " (its transpose: PyTorch stores a Linear weight as [d_output, d_input]; load PyTorch's layout"
        " with .with_from_adapter(PyTorchToBurnAdapter()))"
    )


def _listed(paths: list[str]) -> str:
    shown = ", ".join(paths[:_MAX_LISTED])
    return shown + (f" and {len(paths) - _MAX_LISTED} more" if len(paths) > _MAX_LISTED else "")


def _raise_on_failure(result: ApplyResult, store: StoreOptions, found: dict[str, TensorSnapshot]) -> None:
    where = f"{type(store).__name__} {store.path}"
    if result.errors:
        errors = "; ".join(str(err) for err in result.errors[:_MAX_LISTED])
        raise StoreError(f"{where}: {len(result.errors)} tensor(s) could not be loaded: {errors}", result)
    if result.missing and not store.partial:
        missing = _listed([path for path, _ in result.missing])
        keys = _listed(list(found)) or "no tensors"
        raise StoreError(
            f"{where}: the module's tensors {missing} are not in the file (it has {keys});"
            " use allow_partial(True) to keep their current values, or a top-level key or key remapping",
            result,
        )
