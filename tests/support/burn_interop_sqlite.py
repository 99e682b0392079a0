"""The items interop/burn/src/sqlite.rs writes to ``dataset.db``, as ferrum dataclasses: keep the two in sync.

Burn's ``Item`` struct has the same fields in the same order (serde's compact
MessagePack form is positional). Every float is exact in f32.
"""

from __future__ import annotations

import dataclasses
import enum


class Label(enum.Enum):
    Cat = 0
    Dog = 1


@dataclasses.dataclass
class Point:
    x: float
    y: float


@dataclasses.dataclass
class Item:
    text: str
    bytes: bytes
    count: int
    small: int
    flag: bool
    ratio: float
    weight: float
    maybe: int | None
    values: list[float]
    pair: tuple[int, str]
    label: Label
    point: Point


SPLITS = {"train": 5, "test": 2}


def item(i: int) -> Item:
    """Item ``i`` of a split (``item`` in sqlite.rs)."""
    return Item(
        text=f"item {i}",
        bytes=bytes([i, 255 - i, 7]),
        count=i * 1000 - 3,
        small=(i * 50) % 256,
        flag=i % 2 == 0,
        ratio=i / 3.0,
        weight=i * 0.25,
        maybe=None if i % 3 == 0 else -i,
        values=[i + 0.5] * (i % 3),
        pair=(i, f"p{i}"),
        label=Label.Cat if i % 2 == 0 else Label.Dog,
        point=Point(float(i), -0.5),
    )
