"""Datasets: the Dataset interface, InMemDataset and its file loaders, and the lazy transforms."""

from __future__ import annotations

import enum
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from ferrum.data.dataset import (
    ComposedDataset,
    Dataset,
    InMemDataset,
    Mapper,
    MapperDataset,
    PartialDataset,
    SamplerDataset,
    ShuffledDataset,
    WindowsDataset,
)
from hypothesis import given
from hypothesis import strategies as st

from tests.support.holey_dataset import Holey


class Counting(Dataset[int]):
    """Item ``i`` is ``10 * i``; counts the reads, to check that transforms are lazy."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.reads: list[int] = []

    def get(self, index: int) -> int | None:
        if not 0 <= index < self.size:
            return None
        self.reads.append(index)
        return 10 * index

    def len(self) -> int:
        return self.size


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Point:
    x: float
    y: float


@dataclass(frozen=True)
class Record:
    name: str
    count: int
    score: float
    flag: bool
    pair: tuple[float, float]
    tags: list[int]
    origin: Point
    color: Color
    note: str | None = None
    extra: int = 7


@dataclass
class Flat:
    text: str
    label: int
    weight: float
    ok: bool
    maybe: int | None
    values: list[float] = field(default_factory=list)


@dataclass
class WithArray:
    data: npt.NDArray[np.float32]


# --- the Dataset interface ---------------------------------------------------


def test_dataset_interface_is_derived_from_get_and_len() -> None:
    ds = Counting(4)
    assert len(ds) == 4 and not ds.is_empty()
    assert list(ds) == [0, 10, 20, 30]
    assert list(ds.iter()) == [0, 10, 20, 30]
    assert ds[0] == 0 and ds[3] == 30 and ds[-1] == 30 and ds[-4] == 0
    assert repr(ds) == "Counting(len=4)"
    assert Counting(0).is_empty()


def test_getitem_out_of_range_and_bad_index_type() -> None:
    ds = Counting(3)
    with pytest.raises(IndexError, match=r"index 3 is out of range for Counting of length 3"):
        ds[3]
    with pytest.raises(IndexError, match="-4"):
        ds[-4]
    with pytest.raises(TypeError, match="indices must be integers, found str"):
        ds["1"]  # type: ignore[index]


def test_dataset_is_subscriptable_at_run_time() -> None:
    alias = Dataset[int]
    assert alias.__origin__ is Dataset  # type: ignore[attr-defined]
    assert InMemDataset[str](["a"]).get(0) == "a"


def test_iteration_reports_a_dataset_whose_get_returns_none_inside_its_length() -> None:
    with pytest.raises(IndexError, match=r"Holey.get\(1\) returned None although len\(\) is 3"):
        list(Holey(hole=1, length=3))


def test_in_mem_dataset_get_len() -> None:
    ds = InMemDataset(x * x for x in range(5))
    assert len(ds) == 5
    assert ds.get(0) == 0 and ds.get(4) == 16
    assert ds.get(5) is None and ds.get(-1) is None


# --- JSON rows -----------------------------------------------------------------


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_from_json_rows_converts_to_field_types(tmp_path: Path) -> None:
    rows = [
        {
            "name": "a",
            "count": 3,
            "score": 2,
            "flag": True,
            "pair": [1, 2.5],
            "tags": [1, 2],
            "origin": {"x": 0, "y": -1.5},
            "color": "red",
            "ignored": "x",
        },
        {
            "name": "b",
            "count": -1,
            "score": 0.5,
            "flag": False,
            "pair": [0, 0],
            "tags": [],
            "origin": {"x": 1, "y": 1},
            "color": "BLUE",
            "note": "hi",
            "extra": 9,
        },
    ]
    path = _write_lines(tmp_path / "rows.jsonl", [json.dumps(rows[0]), "", json.dumps(rows[1])])
    ds = InMemDataset.from_json_rows(path, Record)
    assert len(ds) == 2
    first, second = ds[0], ds[1]
    assert first == Record("a", 3, 2.0, True, (1.0, 2.5), [1, 2], Point(0.0, -1.5), Color.RED)
    assert isinstance(first.score, float) and isinstance(first.pair, tuple)
    assert second.note == "hi" and second.extra == 9 and second.color is Color.BLUE


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"name": "a", "count": ', r"line 2: invalid JSON"),
        ("[1, 2]", r"line 2: expected a JSON object, found list"),
        ('{"text": "a", "weight": 1.0, "ok": true, "maybe": null}', r"line 2: missing field 'label' of Flat"),
        (
            '{"text": "a", "label": "one", "weight": 1.0, "ok": true, "maybe": null}',
            r"line 2: field 'label': expected int, found 'one'",
        ),
        (
            '{"text": "a", "label": 1.5, "weight": 1.0, "ok": true, "maybe": null}',
            r"field 'label': expected int, found 1.5",
        ),
        (
            '{"text": "a", "label": 1, "weight": 1.0, "ok": 1, "maybe": null}',
            r"field 'ok': expected bool, found 1",
        ),
        (
            '{"text": "a", "label": 1, "weight": null, "ok": true, "maybe": null}',
            r"'weight': expected float, found null",
        ),
        (
            '{"text": "a", "label": 1, "weight": 1, "ok": true, "maybe": null, "values": [1, "x"]}',
            r"field 'values'\[1\]: expected float, found 'x'",
        ),
    ],
)
def test_from_json_rows_errors_name_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    good = '{"text": "ok", "label": 0, "weight": 0.5, "ok": false, "maybe": 3}'
    path = _write_lines(tmp_path / "bad.jsonl", [good, line])
    with pytest.raises(ValueError, match=message) as info:
        InMemDataset.from_json_rows(path, Flat)
    assert str(path) in str(info.value)


def test_from_json_rows_wrong_tuple_length_and_unknown_enum(tmp_path: Path) -> None:
    row = {
        "name": "a",
        "count": 1,
        "score": 1.0,
        "flag": True,
        "pair": [1.0, 2.0, 3.0],
        "tags": [],
        "origin": {"x": 0, "y": 0},
        "color": "red",
    }
    path = _write_lines(tmp_path / "t.jsonl", [json.dumps(row)])
    with pytest.raises(ValueError, match=r"field 'pair': expected 2 elements .* found 3"):
        InMemDataset.from_json_rows(path, Record)
    row["pair"], row["color"] = [1.0, 2.0], "green"
    path = _write_lines(tmp_path / "t.jsonl", [json.dumps(row)])
    with pytest.raises(ValueError, match=r"field 'color': expected one of \['RED', 'BLUE'\]"):
        InMemDataset.from_json_rows(path, Record)


def test_from_json_rows_missing_file_and_non_dataclass(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl"):
        InMemDataset.from_json_rows(tmp_path / "nope.jsonl", Flat)
    path = _write_lines(tmp_path / "x.jsonl", ["{}"])
    with pytest.raises(TypeError, match="item type must be a dataclass"):
        InMemDataset.from_json_rows(path, dict)


def test_files_that_are_not_utf8_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes("text,label,weight,ok,maybe\ncaf\xe9,1,1,true,\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.csv: not UTF-8 text \(invalid continuation byte\)"):
        InMemDataset.from_csv(path, Flat)


def test_csv_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes("text,label,weight,ok,maybe\nx,1,1,true,\n".encode("utf-8-sig"))
    assert InMemDataset.from_csv(path, Flat)[0] == Flat("x", 1, 1.0, True, None)


def test_from_json_rows_numpy_array_field(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "a.jsonl", ['{"data": [[1, 2], [3, 4]]}'])
    item = InMemDataset.from_json_rows(path, WithArray)[0]
    assert item.data.dtype == np.float32
    np.testing.assert_array_equal(item.data, np.array([[1, 2], [3, 4]], dtype=np.float32))


# --- CSV -------------------------------------------------------------------------


def test_from_csv_converts_cells(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text(
        "label,text,weight,ok,maybe,values,unused\n"
        '3,"hello, world",0.25,true,,"[1, 2.5]",x\n'
        "-2,b,1e3,False,7,[],y\n",
        encoding="utf-8",
    )
    ds = InMemDataset.from_csv(path, Flat)
    assert list(ds) == [
        Flat("hello, world", 3, 0.25, True, None, [1.0, 2.5]),
        Flat("b", -2, 1000.0, False, 7, []),
    ]


def test_from_csv_defaulted_column_may_be_absent_and_other_delimiters(tmp_path: Path) -> None:
    path = tmp_path / "data.tsv"
    path.write_text("text\tlabel\tweight\tok\tmaybe\nz\t1\t2\t0\t\n", encoding="utf-8")
    assert InMemDataset.from_csv(path, Flat, delimiter="\t")[0] == Flat("z", 1, 2.0, False, None, [])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", r"empty CSV file, expected a header row"),
        ("text,label\n", r"lacks the columns \['weight', 'ok', 'maybe'\] of Flat"),
        ("text,label,weight,ok,maybe\na,1,2\n", r"line 2: expected 5 cells as in the header, found 3"),
        (
            "text,label,weight,ok,maybe\na,1,2,true,\nb,x,2,true,\n",
            r"line 3: field 'label': expected int, found 'x'",
        ),
        ("text,label,weight,ok,maybe\na,1,2,maybe,\n", r"line 2: field 'ok': expected bool, found 'maybe'"),
        (
            'text,label,weight,ok,maybe,values\na,1,2,true,,"[1,"\n',
            r"field 'values': expected JSON for list\[float\]",
        ),
    ],
)
def test_from_csv_errors_name_file_line_and_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        InMemDataset.from_csv(path, Flat)
    assert str(path) in str(info.value)


# --- ShuffledDataset -------------------------------------------------------------


def test_shuffled_is_a_seeded_permutation_read_lazily() -> None:
    source = Counting(50)
    shuffled = ShuffledDataset(source, seed=3)
    assert source.reads == []
    items = list(shuffled)
    assert sorted(items) == [10 * i for i in range(50)]
    assert items != sorted(items)
    assert list(ShuffledDataset(Counting(50), seed=3)) == items
    assert list(ShuffledDataset(Counting(50), seed=4)) != items
    assert shuffled.get(50) is None and shuffled.get(-1) is None and len(shuffled) == 50


# --- SamplerDataset --------------------------------------------------------------


def test_sampler_with_replacement_draws_from_the_dataset_reproducibly() -> None:
    sampled = SamplerDataset(InMemDataset("abc"), 300, seed=1)
    items = list(sampled)
    assert len(sampled) == 300 and set(items) == {"a", "b", "c"}
    assert Counter(items).most_common()[-1][1] > 50  # roughly uniform: each letter ~100 times
    assert list(SamplerDataset.with_replacement(InMemDataset("abc"), 300, seed=1)) == items
    assert list(SamplerDataset(InMemDataset("abc"), 300, seed=2)) != items
    assert sampled.get(300) is None


def test_sampler_without_replacement_exhausts_before_repeating() -> None:
    source = InMemDataset(range(10))
    distinct = list(SamplerDataset.without_replacement(source, 7, seed=0))
    assert len(set(distinct)) == 7
    counts = Counter(SamplerDataset(source, 25, replacement=False, seed=5))
    assert sorted(counts.values()) == [2] * 5 + [3] * 5
    first_pass = list(SamplerDataset(source, 25, replacement=False, seed=5))[:10]
    assert sorted(first_pass) == list(range(10))


def test_sampler_is_lazy_and_validates_size() -> None:
    source = Counting(5)
    sampled = SamplerDataset(source, 3, seed=0)
    assert source.reads == []
    sampled.get(0)
    assert len(source.reads) == 1
    with pytest.raises(ValueError, match="size must be >= 0, found -1"):
        SamplerDataset(source, -1)
    with pytest.raises(ValueError, match="cannot draw 2 items from an empty dataset"):
        SamplerDataset(Counting(0), 2)
    assert len(SamplerDataset(Counting(0), 0, replacement=False)) == 0


# --- PartialDataset --------------------------------------------------------------


def test_partial_dataset_is_a_lazy_range() -> None:
    source = Counting(10)
    part = PartialDataset(source, 2, 5)
    assert source.reads == []
    assert list(part) == [20, 30, 40] and len(part) == 3
    assert part.get(3) is None and part.get(-1) is None
    assert (part.start, part.end) == (2, 5)
    assert len(PartialDataset(source, 4, 4)) == 0


@pytest.mark.parametrize(("start", "end"), [(-1, 3), (5, 4), (0, 11)])
def test_partial_dataset_rejects_bad_ranges(start: int, end: int) -> None:
    with pytest.raises(ValueError, match=rf"range \[{start}, {end}\) is invalid for a dataset of length 10"):
        PartialDataset(Counting(10), start, end)


def test_partial_split_matches_burn() -> None:
    parts = PartialDataset.split(InMemDataset(range(10)), 3)
    assert [list(p) for p in parts] == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]
    with pytest.raises(ValueError, match="num must be >= 1, found 0"):
        PartialDataset.split(InMemDataset(range(10)), 0)


@given(st.integers(0, 60), st.integers(1, 12))
def test_partial_split_covers_the_dataset_in_order(size: int, num: int) -> None:
    parts = PartialDataset.split(InMemDataset(range(size)), num)
    assert len(parts) == num
    assert [x for p in parts for x in p] == list(range(size))
    assert all(len(p) == size // num for p in parts[:-1])


def test_partial_split_at_and_fractions() -> None:
    source = InMemDataset(range(10))
    train, test = PartialDataset.split_at(source, 8)
    assert list(train) == list(range(8)) and list(test) == [8, 9]
    with pytest.raises(ValueError, match=r"index must be in \[0, 10\], found 11"):
        PartialDataset.split_at(source, 11)
    parts = PartialDataset.split_fractions(InMemDataset(range(7)), [0.5, 0.25, 0.25])
    # Part k ends at round(7 * (f_1 + ... + f_k)): round(3.5) = 4, round(5.25) = 5.
    assert [list(p) for p in parts] == [[0, 1, 2, 3], [4], [5, 6]]
    with pytest.raises(ValueError, match=r"must sum to 1, found 0\.9"):
        PartialDataset.split_fractions(source, [0.5, 0.4])
    with pytest.raises(ValueError, match=r"must each be in \[0, 1\]"):
        PartialDataset.split_fractions(source, [1.5, -0.5])


def test_contract_shuffle_then_split() -> None:
    dataset = InMemDataset(range(200))
    shuffled = ShuffledDataset(dataset, seed=42)
    train, test = PartialDataset(shuffled, 0, 160), PartialDataset(shuffled, 160, 200)
    assert len(train) == 160 and len(test) == 40
    assert sorted([*train, *test]) == list(range(200))


# --- MapperDataset, ComposedDataset, WindowsDataset ---------------------------------


def test_mapper_dataset_with_function_and_mapper() -> None:
    source = Counting(3)
    mapped = MapperDataset(source, lambda x: f"<{x}>")
    assert source.reads == []
    assert list(mapped) == ["<0>", "<10>", "<20>"] and mapped.get(3) is None

    class Negate(Mapper[int, int]):
        def map(self, item: int) -> int:
            return -item

    assert list(MapperDataset(source, Negate())) == [0, -10, -20]


def test_composed_dataset_concatenates() -> None:
    composed = ComposedDataset([InMemDataset("ab"), InMemDataset(""), InMemDataset("cde")])
    assert len(composed) == 5
    assert [composed.get(i) for i in range(5)] == list("abcde")
    assert composed.get(5) is None and composed.get(-1) is None
    assert len(ComposedDataset[int]([])) == 0


def test_windows_dataset() -> None:
    windows = WindowsDataset(InMemDataset([1, 2, 3, 4, 5]), 2)
    assert windows.size == 2 and len(windows) == 4
    assert list(windows) == [[1, 2], [2, 3], [3, 4], [4, 5]]
    assert windows.get(4) is None
    assert len(WindowsDataset(InMemDataset([1, 2]), 3)) == 0
    assert list(WindowsDataset(InMemDataset([1, 2]), 2)) == [[1, 2]]
    with pytest.raises(ValueError, match="size must be >= 1, found 0"):
        WindowsDataset(InMemDataset([1]), 0)
