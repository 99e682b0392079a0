"""Text features: TfIdfVectorizer (n-gram counts of integer or string token sequences).

The tokens are read out of the tensor (or the string tensor, see
``ferrum.onnx.values``) and counted in Python; the result is a Float tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Device, Int, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op
from ferrum.onnx.values import StringTensor, is_strings

__all__ = ["tfidf_vectorizer"]

_MODES = ("TF", "IDF", "TFIDF")


def _pool_table(
    pool: list[Any], ngram_counts: tuple[int, ...], min_gram: int, max_gram: int
) -> dict[tuple[Any, ...], int]:
    """The n-grams of ``pool`` of ``min_gram`` to ``max_gram`` tokens, each to its index in the pool's
    n-grams (counted over every length; a repeated n-gram keeps its last index, as ONNX's reference)."""
    table: dict[tuple[Any, ...], int] = {}
    index = 0
    for size, start in enumerate(ngram_counts, start=1):
        end = ngram_counts[size] if size < len(ngram_counts) else len(pool)
        if not 0 <= start <= end <= len(pool):
            raise ValueError(
                f"TfIdfVectorizer: ngram_counts {list(ngram_counts)} do not cut a pool of {len(pool)}"
            )
        if (end - start) % size:
            raise ValueError(
                f"TfIdfVectorizer: the {size}-grams of the pool ({end - start} items) are no whole n-grams"
            )
        for at in range(start, end, size):
            if min_gram <= size <= max_gram:
                table[tuple(pool[at : at + size])] = index
            index += 1
    return table


def _count_row(
    row: list[Any],
    table: dict[tuple[Any, ...], int],
    columns: np.ndarray[Any, Any],
    out: np.ndarray[Any, Any],
    grams: tuple[int, int],
    max_skip: int,
) -> None:
    """Add to ``out`` the counts of ``row``'s n-grams, with each skip up to ``max_skip`` (1-grams once)."""
    min_gram, max_gram = grams
    for skip in range(max_skip + 1):
        step = skip + 1
        lowest = max(min_gram, 2) if skip else min_gram
        if lowest > max_gram:
            break
        for start in range(len(row)):
            for size in range(lowest, max_gram + 1):
                stop = start + step * (size - 1)
                if stop >= len(row):
                    break
                found = table.get(tuple(row[start : stop + 1 : step]))
                if found is not None:
                    out[columns[found]] += 1


@op("TfIdfVectorizer", since=9)
def tfidf_vectorizer(
    x: AnyTensor | StringTensor,
    max_gram_length: int = 1,
    max_skip_count: int = 0,
    min_gram_length: int = 1,
    mode: str = "TF",
    ngram_counts: tuple[int, ...] = (),
    ngram_indexes: tuple[int, ...] = (),
    pool_int64s: tuple[int, ...] | None = None,
    pool_strings: tuple[str, ...] | None = None,
    weights: tuple[float, ...] | None = None,
    device: Device[Any] | None = None,
) -> AnyTensor:
    """TfIdfVectorizer: the counts of the pool's n-grams in ``x``, ``[K]`` for a ``[C]`` input and ``[N, K]``
    for ``[N, C]`` (one row per row), with ``K = max(ngram_indexes) + 1``.

    The pool (``pool_int64s`` for an Int ``x``, ``pool_strings`` for a string tensor) holds its 1-grams
    from ``ngram_counts[0]``, its 2-grams from ``ngram_counts[1]``...; its ``i``-th n-gram is counted
    in column ``ngram_indexes[i]``. n-grams of ``min_gram_length`` to ``max_gram_length`` tokens are
    counted, taking every ``s + 1``-th token for each skip ``s`` up to ``max_skip_count`` (1-grams once).
    ``mode`` ``TF`` gives the counts, ``IDF`` ``weights[j]`` (1 without weights) where the count of
    column ``j`` is positive, ``TFIDF`` the counts times ``weights[j]`` (weights by output column, as
    ONNX's reference and onnxruntime read them).

    Example:
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([1, 2, 1, 2, 3]), NdArray.device())
        >>> y = tfidf_vectorizer(x, max_gram_length=2, ngram_counts=(0, 2), ngram_indexes=(0, 1, 2),
        ...                      pool_int64s=(1, 3, 1, 2))
        >>> y.to_numpy().tolist()
        [2.0, 1.0, 2.0]
    """
    if mode not in _MODES:
        raise ValueError(f"TfIdfVectorizer: mode must be one of {_MODES}, found {mode!r}")
    if (pool_int64s is None) == (pool_strings is None):
        raise ValueError("TfIdfVectorizer: exactly one of pool_int64s and pool_strings must be given")
    if not ngram_indexes or min(ngram_indexes) < 0:
        raise ValueError(f"TfIdfVectorizer: ngram_indexes must be non-negative, found {list(ngram_indexes)}")
    if not 1 <= min_gram_length <= max_gram_length or max_skip_count < 0:
        raise ValueError(
            "TfIdfVectorizer: expected 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0, "
            f"found {min_gram_length}, {max_gram_length} and {max_skip_count}"
        )
    if pool_strings is not None:
        if not is_strings(x):
            raise ValueError("TfIdfVectorizer: pool_strings needs a string tensor x")
        data: np.ndarray[Any, Any] = x
        on = device if device is not None else NdArray.device()
    else:
        if not isinstance(x, Tensor) or x.kind is not Int:
            raise ValueError("TfIdfVectorizer: pool_int64s needs an int tensor x")
        data = np.asarray(x.to_numpy())
        on = x.device()
    pool: list[Any] = list(pool_strings if pool_strings is not None else pool_int64s or ())
    table = _pool_table(pool, ngram_counts, min_gram_length, max_gram_length)
    columns = np.asarray(ngram_indexes, dtype=np.int64)
    if max(table.values(), default=-1) >= len(columns):
        raise ValueError(
            f"TfIdfVectorizer: ngram_indexes has {len(columns)} entries, fewer than the pool's n-grams"
        )
    width = int(columns.max()) + 1
    if data.ndim > 2 or (data.ndim == 2 and data.shape[0] < 1):
        raise ValueError(
            f"TfIdfVectorizer: x must be of shape [C] or [N, C] with N > 0, found {list(data.shape)}"
        )
    rows = data.reshape(1, -1) if data.ndim < 2 else data
    counts = np.zeros((len(rows), width), dtype=np.float64)
    for row, out in zip(rows, counts, strict=True):
        _count_row(row.tolist(), table, columns, out, (min_gram_length, max_gram_length), max_skip_count)
    if mode != "TF":
        scale = np.ones(width) if weights is None else np.asarray(weights, dtype=np.float64)
        if len(scale) < width:
            raise ValueError(f"TfIdfVectorizer: weights has {len(scale)} entries for {width} output columns")
        scale = scale[:width]
        counts = scale * (counts > 0) if mode == "IDF" else scale * counts
    shape = (width,) if data.ndim < 2 else (len(rows), width)
    return Tensor.from_numpy(counts.astype(np.float32).reshape(shape), on)
