"""SelectionDataset: Burn's selection.rs tests, ported, and the view's edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from ferrum.data.dataset import FakeDataset, InMemDataset, SelectionDataset
from ferrum.data.dataset.selection import iota, shuffled_indices


def fake_strings(size: int) -> FakeDataset[str]:
    return FakeDataset.new(size, str, seed=3)


def test_iota() -> None:
    assert iota(10) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert iota(0) == []
    with pytest.raises(ValueError, match="size must be >= 0"):
        iota(-1)


def test_shuffled_indices_matches_an_independent_shuffle() -> None:
    expected = np.arange(10)
    np.random.default_rng(10).shuffle(expected)
    assert shuffled_indices(10, np.random.default_rng(10)) == expected.tolist()
    assert shuffled_indices(10, 10) == expected.tolist()
    assert sorted(shuffled_indices(10)) == iota(10)


def test_from_indices_checked_rejects_an_index_past_the_end() -> None:
    with pytest.raises(IndexError, match="Index out of bounds for wrapped dataset size: 300 >= 27"):
        SelectionDataset.from_indices_checked(fake_strings(27), [15, 1, 12, 300])
    with pytest.raises(IndexError, match="-1 >= 27"):
        SelectionDataset.from_indices_checked(fake_strings(27), [-1])


def test_checked_selection_dataset() -> None:
    source = fake_strings(27)
    indices = [15, 1, 12, 12]
    expected = [source.get(i) for i in indices]
    selection = SelectionDataset.from_indices_checked(source, indices)
    assert selection.indices == indices
    assert list(selection) == expected
    assert selection.wrapped is source


def test_shuffled_dataset() -> None:
    dataset = fake_strings(27)
    source_items = list(dataset)
    selection = SelectionDataset.new_shuffled(dataset, 42)
    indices = shuffled_indices(27, np.random.default_rng(42))
    assert selection.indices == indices
    assert len(selection) == len(source_items)
    assert list(selection) == [source_items[i] for i in indices]


def test_slice() -> None:
    dataset = fake_strings(27)
    source_items = list(dataset)
    selection = SelectionDataset.new_select_all(dataset)
    sliced = selection.slice(5, 15)
    assert len(sliced) == 10
    for i in range(5, 15):
        assert sliced.get(i - 5) == source_items[i]
    assert sliced.get(10) is None


def test_split() -> None:
    dataset = fake_strings(28)
    source_items = list(dataset)
    parts = [list(part) for part in SelectionDataset.new_select_all(dataset).split(3)]
    assert parts == [source_items[0:9], source_items[9:18], source_items[18:28]]


def test_slices_keep_their_order_when_the_parent_is_shuffled() -> None:
    selection = SelectionDataset.new_select_all(InMemDataset(range(20)))
    first = selection.slice(0, 5)
    selection.shuffle(7)
    expected = np.arange(20)
    np.random.default_rng(7).shuffle(expected)
    assert selection.indices == expected.tolist()
    assert list(first) == [0, 1, 2, 3, 4]
    first.shuffle(1)
    assert sorted(first) == [0, 1, 2, 3, 4]
    assert selection.indices == expected.tolist()


def test_a_generator_is_advanced_and_a_seed_repeats() -> None:
    data = InMemDataset(range(50))
    rng = np.random.default_rng(5)
    first = SelectionDataset.new_shuffled(data, rng).indices
    second = SelectionDataset.new_shuffled(data, rng).indices
    assert first != second  # the generator moved on
    reference = np.random.default_rng(5)
    assert first == reference.permutation(50).tolist()
    assert second == reference.permutation(50).tolist()
    assert SelectionDataset.new_shuffled(data, 9).indices == SelectionDataset.new_shuffled(data, 9).indices


def test_unchecked_indices_read_as_missing() -> None:
    selection = SelectionDataset.from_indices_unchecked(InMemDataset("abc"), [2, 5, 0])
    assert selection.get(0) == "c"
    assert selection.get(1) is None
    assert selection.get(2) == "a"
    with pytest.raises(IndexError, match=r"get\(1\) returned None"):
        list(selection)


def test_repeated_indices_and_python_protocol() -> None:
    selection = SelectionDataset.from_indices_checked(InMemDataset("abc"), [1, 1, 1])
    assert list(selection) == ["b", "b", "b"]
    assert selection[-1] == "b"
    assert selection.get(-1) is None and selection.get(3) is None


def test_bad_arguments_raise_clear_errors() -> None:
    selection = SelectionDataset.new_select_all(InMemDataset(range(4)))
    with pytest.raises(ValueError, match=r"range \[3, 2\) is invalid for a selection of length 4"):
        selection.slice(3, 2)
    with pytest.raises(ValueError, match=r"range \[0, 5\)"):
        selection.slice(0, 5)
    with pytest.raises(ValueError, match="num must be >= 1, found 0"):
        selection.split(0)
    with pytest.raises(TypeError, match="rng must be a seed"):
        selection.shuffle("seed")  # type: ignore[arg-type]


def test_split_into_more_parts_than_items_gives_empty_parts_and_the_rest() -> None:
    parts = SelectionDataset.new_select_all(InMemDataset(range(2))).split(3)
    assert [list(p) for p in parts] == [[], [], [0, 1]]
