"""PyTorch's packed recurrent and attention parameters, split into Burn's one-Linear-per-gate layout.

``torch.nn.LSTM`` and ``torch.nn.GRU`` stack their gates in one tensor per
layer and direction (``weight_ih_l0`` is ``[gates * hidden, input]``, gates
``i, f, g, o`` for an LSTM and ``r, z, n`` for a GRU) and keep two biases
(``bias_ih_l0`` and ``bias_hh_l0``); Burn holds a ``GateController`` per gate,
whose ``input_transform`` and ``hidden_transform`` Linears take the two
weights and the two biases. ``torch.nn.MultiheadAttention`` stacks the
query, key and value projections in ``in_proj_weight`` (``[3 * d, d]``) and
``in_proj_bias``, and calls its output projection ``out_proj``; Burn has the
Linears ``query``, ``key``, ``value`` and ``output``.

The split tensors keep PyTorch's ``[out, in]`` orientation: the adapter then
transposes them as any Linear weight. Reading stays lazy: each part is a view
of the packed tensor, read when loaded. ``pack_pytorch`` joins them again
when saving for PyTorch.

Example:
    >>> import numpy as np
    >>> from ferrum.store import TensorSnapshot
    >>> from ferrum.store.packed import unpack_pytorch
    >>> hidden, d_input = 3, 2
    >>> ih = TensorSnapshot.from_numpy("rnn.weight_ih_l0", np.zeros((4 * hidden, d_input)))
    >>> hh = TensorSnapshot.from_numpy("rnn.weight_hh_l0", np.zeros((4 * hidden, hidden)))
    >>> unpacked = unpack_pytorch({ih.path: ih, hh.path: hh})
    >>> sorted(unpacked)[:2], unpacked["rnn.cell_gate.input_transform.weight"].shape
    (['rnn.cell_gate.hidden_transform.weight', 'rnn.cell_gate.input_transform.weight'], (3, 2))
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ferrum.store.result import StoreError
from ferrum.store.snapshot import TensorSnapshot

__all__ = ["pack_pytorch", "unpack_pytorch"]

# torch's gate order in the packed tensors, as the fields of Burn's Lstm and Gru.
_LSTM_GATES = ("input_gate", "forget_gate", "cell_gate", "output_gate")
_GRU_GATES = ("reset_gate", "update_gate", "new_gate")
_TRANSFORMS = {"ih": "input_transform", "hh": "hidden_transform"}
_RNN_KEY = re.compile(
    r"^(?:(?P<prefix>.*)\.)?(?P<kind>weight|bias)_(?P<mat>ih|hh|hr)_l(?P<layer>\d+)(?P<rev>_reverse)?$"
)
_MHA_KEY = re.compile(r"^(?:(?P<prefix>.*)\.)?(?P<name>in_proj_weight|in_proj_bias|[qkv]_proj_weight)$")
_PROJECTIONS = ("query", "key", "value")
# A recurrent module's packed tensors: (layer, reverse) -> "weight_ih", "bias_hh"... -> snapshot.
_Layers = dict[tuple[int, bool], dict[str, TensorSnapshot]]
# Packs the tensors at the given paths into one at the target path.
_Join = Callable[[list[str], str], None]


def unpack_pytorch(snapshots: dict[str, TensorSnapshot]) -> dict[str, TensorSnapshot]:
    """``snapshots`` with PyTorch's packed LSTM, GRU and MultiheadAttention parameters split.

    For a recurrent layer at ``P`` (``P.weight_ih_l0`` ...): an LSTM's gates
    become ``P.input_gate``, ``P.forget_gate``, ``P.cell_gate``, ``P.output_gate``,
    a GRU's ``P.reset_gate``, ``P.update_gate``, ``P.new_gate``, each with
    ``input_transform`` (from ``*_ih``) and ``hidden_transform`` (from ``*_hh``).
    Several layers go to ``P.0``, ``P.1``...; a bidirectional LSTM's directions
    to ``P.forward_lstm`` and ``P.reverse_lstm`` (ferrum's ``BiLstm``). Layers
    Burn has no equivalent for (``nn.RNN``, an LSTM with ``proj_size``, a
    bidirectional GRU) are left as they are. For attention at ``P``:
    ``P.in_proj_weight``/``P.in_proj_bias`` (or ``P.q_proj_weight``...) become
    ``P.query``, ``P.key``, ``P.value`` and ``P.out_proj`` becomes ``P.output``.

    Raises ``StoreError`` when a packed tensor's shape does not split (naming
    the key, what was expected and what was found).
    """
    parts: dict[str, list[TensorSnapshot]] = {}  # a packed path -> the tensors replacing it
    _unpack_rnns(snapshots, parts)
    _unpack_attention(snapshots, parts)
    out: dict[str, TensorSnapshot] = {}
    for path, snap in snapshots.items():  # the file's order, each part where its packed tensor was
        for part in parts.get(path, [snap]):
            if part.path in out or (part.path != path and part.path in snapshots):
                raise StoreError(f"splitting '{path}' makes '{part.path}', which the file already holds")
            out[part.path] = part
    return out


def _part(snapshot: TensorSnapshot, path: str, index: int, size: int) -> TensorSnapshot:
    read = snapshot.read

    def read_part() -> npt.NDArray[Any]:
        return read()[index * size : (index + 1) * size]  # a view of the packed tensor

    # One packed tensor's id would be the id of several parameters: the parts keep the module's ids.
    shape = (size, *snapshot.shape[1:])
    return dataclasses.replace(snapshot, path=path, shape=shape, read=read_part, param_id=None)


def _split(
    snapshot: TensorSnapshot, targets: list[str], rows: int, columns: int | None
) -> list[TensorSnapshot]:
    """Split ``snapshot`` along its first axis into ``len(targets)`` parts of ``rows`` rows."""
    expected = (rows * len(targets),) if columns is None else (rows * len(targets), columns)
    if snapshot.shape != expected:
        raise StoreError(
            f"the packed tensor '{snapshot.path}' must be {list(expected)} to split into"
            f" {len(targets)} parts of {rows}, found {list(snapshot.shape)}"
        )
    return [_part(snapshot, target, index, rows) for index, target in enumerate(targets)]


def _unpack_rnns(snapshots: dict[str, TensorSnapshot], parts: dict[str, list[TensorSnapshot]]) -> None:
    groups: dict[str, _Layers] = defaultdict(lambda: defaultdict(dict))
    for path, snap in snapshots.items():
        match = _RNN_KEY.match(path)
        if match is not None:
            key = (int(match["layer"]), match["rev"] is not None)
            groups[match["prefix"] or ""][key][f"{match['kind']}_{match['mat']}"] = snap
    for prefix, layers in groups.items():
        stacked = any(layer > 0 for layer, _ in layers)
        bidirectional = any(reverse for _, reverse in layers)
        for (layer, reverse), tensors in layers.items():
            gates = _gate_names(tensors, bidirectional)
            if gates is None:
                continue
            base = prefix
            if stacked:
                base = f"{base}.{layer}" if base else str(layer)
            if bidirectional:
                direction = "reverse_lstm" if reverse else "forward_lstm"
                base = f"{base}.{direction}" if base else direction
            hidden = tensors["weight_hh"].shape[1]
            width = tensors["weight_ih"].shape[1] if len(tensors["weight_ih"].shape) == 2 else 0
            for name, snap in tensors.items():
                kind, mat = name.split("_")
                targets = [f"{base}.{gate}.{_TRANSFORMS[mat]}.{kind}".lstrip(".") for gate in gates]
                columns = None if kind == "bias" else (width if mat == "ih" else hidden)
                parts[snap.path] = _split(snap, targets, hidden, columns)


def _gate_names(tensors: dict[str, TensorSnapshot], bidirectional: bool) -> tuple[str, ...] | None:
    """The gates of a packed recurrent layer, from ``weight_hh`` (``[gates * hidden, hidden]``).

    None leaves the layer as it is."""
    if "weight_hr" in tensors or "weight_hh" not in tensors or "weight_ih" not in tensors:
        return None  # proj_size (no Burn equivalent) or an incomplete layer: left for the user to map
    hh = tensors["weight_hh"]
    if len(hh.shape) != 2 or hh.shape[1] == 0 or hh.shape[0] % hh.shape[1] != 0:
        raise StoreError(
            f"the packed tensor '{hh.path}' must be [gates * hidden, hidden] (4 gates for an LSTM,"
            f" 3 for a GRU), found {list(hh.shape)}"
        )
    count = hh.shape[0] // hh.shape[1]
    if count == 1 or (count == 3 and bidirectional):
        return None  # nn.RNN, and a bidirectional GRU: no Burn module to receive them
    if count == 4:
        return _LSTM_GATES
    if count == 3:
        return _GRU_GATES
    raise StoreError(
        f"the packed tensor '{hh.path}' must stack 4 gates (LSTM) or 3 (GRU) of {hh.shape[1]} units,"
        f" found {list(hh.shape)} ({count} gates)"
    )


def _unpack_attention(snapshots: dict[str, TensorSnapshot], parts: dict[str, list[TensorSnapshot]]) -> None:
    prefixes: set[str] = set()
    for path, snap in snapshots.items():
        match = _MHA_KEY.match(path)
        if match is None:
            continue
        prefix, name = match["prefix"] or "", match["name"]
        at = f"{prefix}." if prefix else ""
        prefixes.add(at)
        if name.startswith("in_proj"):
            rows = snap.shape[0] // 3 if snap.shape else 0
            kind = name.removeprefix("in_proj_")
            columns = snap.shape[1] if kind == "weight" and len(snap.shape) == 2 else None
            if kind == "weight" and columns is None:
                found = list(snap.shape)
                raise StoreError(f"the packed tensor '{path}' must be [3 * d_model, d_model], found {found}")
            parts[path] = _split(snap, [f"{at}{p}.{kind}" for p in _PROJECTIONS], rows, columns)
        else:  # q_proj_weight ... (MultiheadAttention with kdim/vdim): already one per projection
            projection = _PROJECTIONS["qkv".index(name[0])]
            parts[path] = [snap.with_path(f"{at}{projection}.weight")]
    for at in prefixes:
        for kind in ("weight", "bias"):
            old = f"{at}out_proj.{kind}"
            if old in snapshots:
                parts[old] = [snapshots[old].with_path(f"{at}output.{kind}")]


def pack_pytorch(snapshots: list[TensorSnapshot]) -> list[TensorSnapshot]:
    """The inverse of ``unpack_pytorch`` for a module's tensors already in PyTorch's orientation.

    An ``Lstm``'s (a ``Gru``'s) gates at ``P`` become ``P.weight_ih_l0``,
    ``P.weight_hh_l0``, ``P.bias_ih_l0``, ``P.bias_hh_l0``; a ``BiLstm``'s
    ``P.forward_lstm``/``P.reverse_lstm`` become ``P.*_l0``/``P.*_l0_reverse``;
    a ``MultiHeadAttention``'s ``query``, ``key``, ``value`` become
    ``in_proj_weight``/``in_proj_bias`` and ``output`` becomes ``out_proj``,
    as ``torch.nn.LSTM``, ``GRU`` and ``MultiheadAttention`` name them.
    """
    by_path = {snap.path: snap for snap in snapshots}
    joined: dict[str, TensorSnapshot] = {}  # the first part's path -> the packed tensor
    consumed: set[str] = set()

    def join(paths: list[str], target: str) -> None:
        parts = [by_path[path] for path in paths]
        joined[paths[0]] = _joined(parts, target)
        consumed.update(paths)

    for snap in snapshots:
        path = f".{snap.path}"
        if path.endswith(".input_transform.weight"):
            _pack_gates(by_path, snap.path.removesuffix("input_transform.weight"), join)
        if path.endswith(".query.weight"):
            _pack_attention(by_path, snap.path.removesuffix("query.weight"), join)
    out: list[TensorSnapshot] = []
    for snap in snapshots:
        if snap.path in joined:
            out.append(joined[snap.path])
        elif snap.path not in consumed:
            out.append(snap)
    return out


def _joined(parts: list[TensorSnapshot], target: str) -> TensorSnapshot:
    reads = [part.read for part in parts]

    def read_joined() -> npt.NDArray[Any]:
        return np.concatenate([read() for read in reads], axis=0)

    shape = (sum(part.shape[0] for part in parts), *parts[0].shape[1:])
    return TensorSnapshot(target, shape, parts[0].dtype, read_joined)


def _pack_gates(by_path: dict[str, TensorSnapshot], gate_at: str, join: _Join) -> None:
    """``gate_at`` is ``P.input_gate.`` (or another gate's path): pack the layer at ``P`` if it is whole."""
    at = gate_at.removesuffix(".").rpartition(".")[0]
    at = f"{at}." if at else ""
    for gates in (_LSTM_GATES, _GRU_GATES):
        if f"{at}{gates[0]}." != gate_at or not all(
            f"{at}{g}.input_transform.weight" in by_path for g in gates
        ):
            continue
        base, suffix = at.removesuffix("."), "_l0"
        direction = base.rpartition(".")[2]
        if direction in ("forward_lstm", "reverse_lstm"):
            base = base.removesuffix(direction).removesuffix(".")
            suffix = "_l0_reverse" if direction == "reverse_lstm" else "_l0"
        prefix = f"{base}." if base else ""
        for mat, transform in (("ih", "input_transform"), ("hh", "hidden_transform")):
            for kind in ("weight", "bias"):
                paths = [f"{at}{gate}.{transform}.{kind}" for gate in gates]
                if all(path in by_path for path in paths):
                    join(paths, f"{prefix}{kind}_{mat}{suffix}")


def _pack_attention(by_path: dict[str, TensorSnapshot], at: str, join: _Join) -> None:
    """The projections at ``at`` (``P.`` or ``""``) as ``nn.MultiheadAttention`` has them."""
    if not all(f"{at}{p}.weight" in by_path for p in (*_PROJECTIONS, "output")):
        return
    weights = [f"{at}{p}.weight" for p in _PROJECTIONS]
    if len({by_path[path].shape for path in weights}) == 1:
        join(weights, f"{at}in_proj_weight")
    else:  # kdim/vdim differ from d_model: torch keeps three weights (and one packed bias)
        for path, p in zip(weights, "qkv", strict=True):
            join([path], f"{at}{p}_proj_weight")
    biases = [f"{at}{p}.bias" for p in _PROJECTIONS]
    if all(path in by_path for path in biases):
        join(biases, f"{at}in_proj_bias")
    for kind in ("weight", "bias"):
        if f"{at}output.{kind}" in by_path:
            join([f"{at}output.{kind}"], f"{at}out_proj.{kind}")
