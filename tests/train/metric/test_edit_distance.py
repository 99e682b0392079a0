"""The vectorised edit distance and sequence lengths behind CER and WER, against the textbook algorithm."""

from __future__ import annotations

import numpy as np
from ferrum.train.metric.edit_distance import edit_distances, sequence_lengths
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.metric_reference import levenshtein, strip_padding


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 5),
    ref_width=st.integers(0, 7),
    pred_width=st.integers(0, 7),
    pad=st.one_of(st.none(), st.just(0)),
)
def test_matches_levenshtein(seed: int, batch: int, ref_width: int, pred_width: int, pad: int | None) -> None:
    rng = np.random.default_rng(seed)
    refs = rng.integers(0, 4, (batch, ref_width))
    preds = rng.integers(0, 4, (batch, pred_width))
    ref_lengths, pred_lengths = sequence_lengths(refs, pad), sequence_lengths(preds, pad)
    expected = [
        levenshtein(strip_padding(r.tolist(), pad), strip_padding(p.tolist(), pad))
        for r, p in zip(refs, preds, strict=True)
    ]
    assert edit_distances(refs, ref_lengths, preds, pred_lengths).tolist() == expected


def test_burn_edit_distance_examples() -> None:
    def distance(a: list[int], b: list[int]) -> int:
        refs, preds = np.array([a]), np.array([b])
        return int(edit_distances(refs, np.array([len(a)]), preds, np.array([len(b)]))[0])

    assert distance([1, 2, 3], [1, 2, 3]) == 0
    assert distance([1, 2, 3], [1, 3]) == 1  # deletion
    assert distance([1, 3], [1, 2, 3]) == 1  # insertion
    assert distance([1, 2, 3], [1, 4, 3]) == 1  # substitution
    assert distance([], [5, 6]) == 2 and distance([5, 6], []) == 2
    assert distance([7, 8, 9, 7], [8, 9, 7, 7]) == 2


def test_sequence_lengths() -> None:
    tokens = np.array([[1, 2, 9, 4], [9, 1, 1, 1], [1, 1, 1, 1]])
    assert sequence_lengths(tokens, 9).tolist() == [2, 0, 4]
    assert sequence_lengths(tokens, None).tolist() == [4, 4, 4]
