"""FakeDataset: items made by a function or faked from annotations, seeded."""

from __future__ import annotations

import enum
import string
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
import pytest
from ferrum.data.dataset import FakeDataset
from ferrum.data.dataset.fake import fake_value


class Color(enum.Enum):
    RED = 1
    GREEN = 2


@dataclass
class Inner:
    name: str
    weight: float


@dataclass
class Record:
    count: int
    flag: bool
    note: str | None
    tags: list[str]
    pair: tuple[int, float]
    kind: Literal["a", "b"]
    color: Color
    inner: Inner
    mapping: dict[str, int]
    blob: bytes
    skipped: int = field(default=0, init=False)


@dataclass
class Node:
    value: int
    next: Node | None


@dataclass
class Tree:
    value: int
    children: list[Tree]


@dataclass
class Loop:
    value: int
    again: Loop


@dataclass
class WithArray:
    pixels: npt.NDArray[np.float32]


def test_a_function_is_called_with_one_seeded_generator() -> None:
    dataset = FakeDataset(4, lambda rng: float(rng.standard_normal()), seed=11)
    reference = np.random.default_rng(11)
    assert list(dataset) == [float(reference.standard_normal()) for _ in range(4)]
    assert len(dataset) == 4 and dataset.get(4) is None and dataset.get(-1) is None


def test_items_are_made_once() -> None:
    calls: list[int] = []

    def make(rng: np.random.Generator) -> int:
        calls.append(1)
        return int(rng.integers(100))

    dataset = FakeDataset(3, make, seed=0)
    assert list(dataset) == list(dataset)
    assert len(calls) == 3


def test_same_seed_same_items_other_seed_other_items() -> None:
    assert list(FakeDataset.new(10, Record, seed=1)) == list(FakeDataset.new(10, Record, seed=1))
    assert list(FakeDataset.new(10, str, seed=1)) != list(FakeDataset.new(10, str, seed=2))


def test_strings_are_like_burns_fake_strings() -> None:
    items = list(FakeDataset.new(200, str, seed=0))
    allowed = set(string.ascii_letters + string.digits)
    assert all(5 <= len(s) <= 20 and set(s) <= allowed for s in items)
    assert len(set(items)) == 200
    assert {len(s) for s in items} == set(range(5, 21))


def test_dataclass_fields_are_faked_from_their_annotations() -> None:
    records = list(FakeDataset.new(300, Record, seed=4))
    for r in records:
        assert isinstance(r.count, int) and -(2**31) <= r.count < 2**31
        assert isinstance(r.flag, bool)
        assert r.note is None or isinstance(r.note, str)
        assert isinstance(r.tags, list) and len(r.tags) <= 8 and all(isinstance(t, str) for t in r.tags)
        assert isinstance(r.pair[0], int) and isinstance(r.pair[1], float) and len(r.pair) == 2
        assert r.kind in ("a", "b") and isinstance(r.color, Color)
        assert isinstance(r.inner, Inner) and isinstance(r.inner.weight, float)
        assert all(isinstance(k, str) and isinstance(v, int) for k, v in r.mapping.items())
        assert isinstance(r.blob, bytes) and len(r.blob) <= 16
        assert r.skipped == 0
    # Every alternative shows up, in about the expected share.
    assert 0.4 < np.mean([r.flag for r in records]) < 0.6
    assert 0.4 < np.mean([r.note is None for r in records]) < 0.6
    assert {r.kind for r in records} == {"a", "b"} and set(Color) == {r.color for r in records}
    weights = np.array([r.inner.weight for r in records])
    assert abs(weights.mean()) < 0.2 and 0.8 < weights.std() < 1.2


def test_recursive_types_through_optionals_and_lists_end() -> None:
    nodes = list(FakeDataset.new(50, Node, seed=2))
    depth = 0
    for node in nodes:
        length, current = 0, node
        while current is not None:
            length, current = length + 1, current.next
        depth = max(depth, length)
    assert 1 < depth <= 9
    assert all(isinstance(t, Tree) for t in FakeDataset.new(5, Tree, seed=2))


def test_types_that_cannot_be_faked_are_refused_up_front() -> None:
    with pytest.raises(TypeError, match="dataclass Loop contains itself through required fields"):
        FakeDataset.new(3, Loop)
    with pytest.raises(TypeError, match=r"cannot fake WithArray\.pixels: unsupported type"):
        FakeDataset.new(3, WithArray)
    with pytest.raises(TypeError, match=r"unsupported type"):
        fake_value(list[complex], np.random.default_rng(0))


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(TypeError, match=r"use FakeDataset.new\(size, Record\)"):
        FakeDataset(3, Record)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be callable"):
        FakeDataset(3, 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="size must be an int >= 0, found -1"):
        FakeDataset.new(-1, int)
    with pytest.raises(TypeError, match="rng must be a seed"):
        FakeDataset.new(2, int, seed="x")  # type: ignore[arg-type]
    assert len(FakeDataset.new(0, int)) == 0
