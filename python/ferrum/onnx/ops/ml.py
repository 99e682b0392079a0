"""The ``ai.onnx.ml`` domain ops: Binarizer, ArrayFeatureExtractor, LabelEncoder, TreeEnsemble.

ferrum's tensors hold no strings: LabelEncoder's string keys read, and its
string values give, string tensors (NumPy arrays of ``str``, see
``ferrum.onnx.values``). Binarizer and ArrayFeatureExtractor are engine ops (differentiable);
LabelEncoder (a table lookup) and TreeEnsemble (walking data-dependent
branches) have no engine equivalent and run in NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Device, DType, Float, Int, KindError, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.ops._util import AnyTensor, same_kind
from ferrum.onnx.ops.registry import op
from ferrum.onnx.values import StringTensor, is_strings, to_strings

__all__ = ["array_feature_extractor", "binarizer", "label_encoder", "tree_ensemble"]

_DOMAIN = "ai.onnx.ml"


@op("Binarizer", domain=_DOMAIN)
def binarizer(x: AnyTensor, threshold: float = 0.0) -> AnyTensor:
    """Binarizer: 1 where ``x > threshold``, else 0, in ``x``'s type.

    Example:
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([-1.0, 0.5, 2.0], np.float32), NdArray.device())
        >>> binarizer(x, threshold=0.5).to_numpy().tolist()
        [0.0, 0.0, 1.0]
    """
    if x.kind not in (Float, Int):
        raise KindError(f"Binarizer: x must be a float or int tensor, found {x.kind.__name__}")
    return same_kind(x.greater_elem(threshold), x)


@op("ArrayFeatureExtractor", domain=_DOMAIN)
def array_feature_extractor(x: AnyTensor, indices: AnyTensor) -> AnyTensor:
    """ArrayFeatureExtractor: ``x[..., indices]`` with the indices flattened: ``[..., k]``.

    A rank-1 ``x`` gives ``[1, k]`` (onnxruntime's and ONNX's reference
    shape). Indices must be in ``[0, x.dims()[-1])``.
    """
    if indices.kind is not Int:
        raise KindError(
            f"ArrayFeatureExtractor: indices must be an int tensor, found {indices.kind.__name__}"
        )
    flat = indices.reshape((-1,))
    width = x.dims()[-1]
    values = np.asarray(flat.to_numpy())
    if values.size and (values.min() < 0 or values.max() >= width):
        raise ValueError(
            f"ArrayFeatureExtractor: indices must be in [0, {width}), found {values.min()}..{values.max()}"
        )
    picked = x.take(x.rank() - 1, flat)
    return picked.reshape((1, values.size)) if x.rank() == 1 else picked


def _table(*found: Any) -> np.ndarray[Any, Any] | None:
    """The first of an attribute's spellings that is given, 1-D: strings as a string tensor."""
    for value in found:
        if value is None:
            continue
        array = np.asarray(value).reshape(-1)
        return to_strings(array, "LabelEncoder: a string attribute") if array.dtype.kind in "OSU" else array
    return None


def _lookup(
    data: np.ndarray[Any, Any], keys: np.ndarray[Any, Any], values: np.ndarray[Any, Any], default: Any
) -> np.ndarray[Any, Any]:
    """Each element of ``data`` looked up in ``keys`` (the last of repeated keys wins), by a dict."""
    table = dict(zip(keys.tolist(), values.tolist(), strict=True))
    nan_keys = [i for i, k in enumerate(keys.tolist()) if isinstance(k, float) and k != k]
    nan_value = values[nan_keys[-1]] if nan_keys else default
    found = [
        nan_value if isinstance(v, float) and v != v else table.get(v, default) for v in data.reshape(-1)
    ]
    if values.dtype == object:
        return to_strings(np.array(found, dtype=object).reshape(data.shape), "LabelEncoder")
    return np.array(found, dtype=values.dtype).reshape(data.shape)


@op("LabelEncoder", domain=_DOMAIN)
def label_encoder(
    x: AnyTensor | StringTensor,
    keys_int64s: tuple[int, ...] | None = None,
    keys_floats: tuple[float, ...] | None = None,
    keys_strings: tuple[str, ...] | None = None,
    keys_tensor: np.ndarray[Any, Any] | None = None,
    values_int64s: tuple[int, ...] | None = None,
    values_floats: tuple[float, ...] | None = None,
    values_strings: tuple[str, ...] | None = None,
    values_tensor: np.ndarray[Any, Any] | None = None,
    default_int64: int = -1,
    default_float: float = -0.0,
    default_string: str = "_Unused",
    default_tensor: np.ndarray[Any, Any] | None = None,
    device: Device[Any] | None = None,
) -> AnyTensor | StringTensor:
    """LabelEncoder: each element of ``x`` replaced by the value of its key, or the default if none.

    Keys and values are numbers (``*_int64s``, ``*_floats`` or a numeric ``*_tensor``) or strings
    (``*_strings`` or a string ``*_tensor``): string keys read a string tensor ``x``, string values give
    one (see ``ferrum.onnx.values``); a number result is on ``x``'s device, or ``device`` for a string
    ``x``. A NaN key matches NaN; of repeated keys the last wins. The default is ``default_tensor`` when
    given, else ``default_string``, ``default_int64`` or ``default_float`` by the values' type. A table
    lookup in NumPy (a dict for strings).
    """
    keys = _table(keys_strings, keys_int64s, keys_floats, keys_tensor)
    values = _table(values_strings, values_int64s, values_floats, values_tensor)
    if keys is None or values is None or len(keys) != len(values):
        raise ValueError(
            "LabelEncoder: expected as many keys as values, found "
            f"{None if keys is None else len(keys)} and {None if values is None else len(values)}"
        )
    if keys_floats is not None:
        keys = keys.astype(np.float32)  # as x's floats, so that 0.1 matches 0.1
    if values_int64s is not None:
        values = values.astype(np.int64)
    elif values_floats is not None:
        values = values.astype(np.float32)
    if default_tensor is not None:
        default = np.asarray(default_tensor).reshape(-1)[0]
        default = str(default) if is_strings(values) else default
    elif is_strings(values):
        default = default_string
    else:
        default = default_int64 if values.dtype.kind in "iu" else default_float
    if is_strings(keys) and not is_strings(x):
        raise ValueError(
            "LabelEncoder: string keys are not supported on a number tensor x (they need a string tensor x)"
        )
    if is_strings(x) and not is_strings(keys):
        raise ValueError("LabelEncoder: a string tensor x needs string keys, found number keys")
    if is_strings(x):
        data: np.ndarray[Any, Any] = x
        on = device if device is not None else NdArray.device()
    else:
        assert isinstance(x, Tensor)
        data, on = np.asarray(x.to_numpy()), x.device()
    if is_strings(keys) or is_strings(values):
        out = _lookup(data, keys, values, default)
    else:
        out = _number_lookup(data, keys, values, default)
    if is_strings(out):
        return out
    wide = out.dtype == np.float64  # from_numpy makes f32 unless told
    return Tensor.from_numpy(np.ascontiguousarray(out), on, dtype=DType.F64 if wide else None)


def _number_lookup(
    data: np.ndarray[Any, Any], keys: np.ndarray[Any, Any], values: np.ndarray[Any, Any], default: Any
) -> np.ndarray[Any, Any]:
    """LabelEncoder's lookup of numbers: a binary search in the sorted keys."""
    out = np.full(data.shape, default, dtype=values.dtype)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    if len(keys):
        # the rightmost of equal keys: the stable sort keeps them in order, so the last one given
        at = np.clip(np.searchsorted(ordered, data, side="right") - 1, 0, len(keys) - 1)
        hit = ordered[at] == data
        out[hit] = values[order][at][hit]
        nan_keys = np.isnan(keys) if keys.dtype.kind == "f" else np.zeros(len(keys), bool)
        if nan_keys.any() and data.dtype.kind == "f":
            out[np.isnan(data)] = values[np.flatnonzero(nan_keys)[-1]]
    return out


_MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER")


def _branch(
    mode: int, value: np.ndarray[Any, Any], split: float, members: set[float]
) -> np.ndarray[Any, Any]:
    """Whether each sample's feature ``value`` takes the true branch of a node with ``mode``."""
    if mode == 0:
        return value <= split
    if mode == 1:
        return value < split
    if mode == 2:
        return value >= split
    if mode == 3:
        return value > split
    if mode == 4:
        return np.asarray(value == split)
    if mode == 5:
        return np.asarray(value != split)
    return np.isin(value, list(members))


def _member_sets(
    modes: np.ndarray[Any, Any], membership: np.ndarray[Any, Any] | None
) -> dict[int, set[float]]:
    """Each BRANCH_MEMBER node's set: ``membership`` split at NaNs, in the order the nodes are listed."""
    member_nodes = [i for i, m in enumerate(modes) if m == 6]
    if not member_nodes:
        return {}
    groups: list[set[float]] = [set()]
    for v in np.asarray(membership if membership is not None else []).reshape(-1):
        if np.isnan(v):
            groups.append(set())
        else:
            groups[-1].add(float(v))
    if membership is None or len(groups) - 1 != len(member_nodes):
        raise ValueError(
            f"TreeEnsemble: {len(member_nodes)} BRANCH_MEMBER nodes need as many NaN-ended sets "
            f"in membership_values, found {len(groups) - 1}"
        )
    return dict(zip(member_nodes, groups, strict=False))


def _leaves(
    x: np.ndarray[Any, Any], root: int, nodes: dict[str, np.ndarray[Any, Any]], members: dict[int, set[float]]
) -> np.ndarray[Any, Any]:
    """The leaf each sample of ``x [n, features]`` reaches from node ``root``."""
    n = len(x)
    t_ids, f_ids = nodes["truenodeids"], nodes["falsenodeids"]
    t_leaf, f_leaf = nodes["trueleafs"], nodes["falseleafs"]
    if t_leaf[root] and f_leaf[root] and t_ids[root] == f_ids[root]:
        return np.full(n, t_ids[root])  # a tree that is a single leaf
    at = np.full(n, root)
    done = np.zeros(n, bool)
    for _ in range(len(t_ids) + 1):
        if done.all():
            return at
        for node in np.unique(at[~done]):
            rows = np.flatnonzero(~done & (at == node))
            value = x[rows, nodes["featureids"][node]]
            go = _branch(
                int(nodes["modes"][node]), value, float(nodes["splits"][node]), members.get(int(node), set())
            )
            go = go | (np.isnan(value) & bool(nodes["missing"][node]))
            at[rows] = np.where(go, t_ids[node], f_ids[node])
            done[rows] = np.where(go, t_leaf[node], f_leaf[node]).astype(bool)
    raise ValueError("TreeEnsemble: a tree's nodes form a cycle (no leaf is reached)")


@op("TreeEnsemble", domain=_DOMAIN)
def tree_ensemble(
    x: AnyTensor,
    aggregate_function: int = 1,
    leaf_targetids: tuple[int, ...] = (),
    leaf_weights: np.ndarray[Any, Any] | None = None,
    membership_values: np.ndarray[Any, Any] | None = None,
    n_targets: int | None = None,
    nodes_falseleafs: tuple[int, ...] = (),
    nodes_falsenodeids: tuple[int, ...] = (),
    nodes_featureids: tuple[int, ...] = (),
    nodes_hitrates: np.ndarray[Any, Any] | None = None,
    nodes_missing_value_tracks_true: tuple[int, ...] | None = None,
    nodes_modes: np.ndarray[Any, Any] | None = None,
    nodes_splits: np.ndarray[Any, Any] | None = None,
    nodes_trueleafs: tuple[int, ...] = (),
    nodes_truenodeids: tuple[int, ...] = (),
    post_transform: int = 0,
    tree_roots: tuple[int, ...] = (),
) -> AnyTensor:
    """TreeEnsemble: ``[n, n_targets]`` predictions of a forest of decision trees for ``x [n, features]``.

    Each tree starts at one of ``tree_roots`` and follows, at each node, the
    true or false branch (``nodes_modes``: 0 ``<=``, 1 ``<``, 2 ``>=``, 3 ``>``,
    4 ``==``, 5 ``!=``, 6 membership in its set of ``membership_values``;
    NaN features take the true branch where ``nodes_missing_value_tracks_true``)
    to a leaf, which adds its weight to its target. ``aggregate_function``
    combines the trees: 0 average, 1 sum (default), 2 min, 3 max;
    ``post_transform`` 0 none, 1 softmax, 2 logistic, 3 softmax-zero.
    Walks the trees in NumPy, all samples at a node at once.
    """
    del nodes_hitrates
    if x.kind is not Float or x.rank() != 2:
        raise ValueError(
            f"TreeEnsemble: x must be a float [n, features] tensor, found {x.kind.__name__} {list(x.dims())}"
        )
    if n_targets is None or leaf_weights is None or nodes_modes is None or nodes_splits is None:
        raise ValueError("TreeEnsemble: n_targets, leaf_weights, nodes_modes and nodes_splits are required")
    if aggregate_function not in (0, 1, 2, 3) or post_transform not in (0, 1, 2, 3):
        raise ValueError(
            "TreeEnsemble: aggregate_function must be 0..3 and post_transform 0..3 "
            f"(probit is not supported), "
            f"found {aggregate_function} and {post_transform}"
        )
    modes = np.asarray(nodes_modes).reshape(-1).astype(np.int64)
    count = len(modes)
    nodes = {
        "modes": modes,
        "splits": np.asarray(nodes_splits, np.float64).reshape(-1),
        "featureids": np.asarray(nodes_featureids, np.int64),
        "truenodeids": np.asarray(nodes_truenodeids, np.int64),
        "falsenodeids": np.asarray(nodes_falsenodeids, np.int64),
        "trueleafs": np.asarray(nodes_trueleafs, np.int64),
        "falseleafs": np.asarray(nodes_falseleafs, np.int64),
        "missing": np.asarray(nodes_missing_value_tracks_true or [0] * count, np.int64),
    }
    if any(len(v) != count for v in nodes.values()) or (modes < 0).any() or (modes > 6).any():
        raise ValueError(f"TreeEnsemble: every nodes_* attribute needs {count} entries and modes in 0..6")
    weights = np.asarray(leaf_weights, np.float64).reshape(-1)
    targets = np.asarray(leaf_targetids, np.int64)
    if len(targets) != len(weights) or (targets < 0).any() or (targets >= n_targets).any():
        raise ValueError(f"TreeEnsemble: leaf_targetids must pair leaf_weights and lie in [0, {n_targets})")
    data = np.asarray(x.to_numpy())
    if nodes["featureids"].size and nodes["featureids"].max() >= data.shape[1]:
        raise ValueError(f"TreeEnsemble: a node reads feature {nodes['featureids'].max()} of {data.shape[1]}")
    members = _member_sets(modes, membership_values)
    out = _aggregate(data, tree_roots, nodes, members, weights, targets, n_targets, aggregate_function)
    result = Tensor.from_numpy(out, x.device(), dtype=x.dtype)
    return _post_transform(result, post_transform)


def _aggregate(
    data: np.ndarray[Any, Any],
    roots: tuple[int, ...],
    nodes: dict[str, np.ndarray[Any, Any]],
    members: dict[int, set[float]],
    weights: np.ndarray[Any, Any],
    targets: np.ndarray[Any, Any],
    n_targets: int,
    function: int,
) -> np.ndarray[Any, Any]:
    n = len(data)
    if function in (0, 1):
        out = np.zeros((n, n_targets))
    else:
        # Targets no tree reaches keep these extremes, as in ONNX's reference.
        info = np.finfo(data.dtype)
        out = np.full((n, n_targets), float(info.max if function == 2 else info.min))
    rows = np.arange(n)
    for root in roots:
        leaf = _leaves(data, root, nodes, members)
        w, t = weights[leaf], targets[leaf]
        if function == 0:
            np.add.at(out, (rows, t), w / len(roots))
        elif function == 1:
            np.add.at(out, (rows, t), w)
        elif function == 2:
            np.minimum.at(out, (rows, t), w)
        else:
            np.maximum.at(out, (rows, t), w)
    return out


def _post_transform(scores: AnyTensor, transform: int) -> AnyTensor:
    if transform == 1:
        return (scores - scores.max_dim(1)).exp() / (scores - scores.max_dim(1)).exp().sum_dim(1)
    if transform == 2:
        return scores.sigmoid()
    if transform == 3:
        # softmax over the non-zero scores; zeros stay zero
        nonzero = scores.not_equal_elem(0.0)
        shifted = (scores - scores.max_dim(1)).exp().mask_fill(nonzero.bool_not(), 0.0)
        return shifted / shifted.sum_dim(1).clamp_min(1e-30)
    return scores
