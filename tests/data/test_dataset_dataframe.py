"""DataframeDataset: Burn's dataframe.rs tests, ported to pandas (and polars when installed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from ferrum.data.dataset import DataframeDataset

pd = pytest.importorskip("pandas")


@dataclass
class TestData:
    __test__ = False  # not a pytest class

    int32: int
    bool: bool
    float64: float
    string: str
    int16: int
    uint32: int
    uint64: int
    float32: float
    int64: int
    int8: int
    binary: list[int]


@dataclass
class PartialTestData:
    int32: int
    bool: bool
    string: str


def create_test_dataframe() -> Any:
    return pd.DataFrame(
        {
            "int32": np.array([1, 2, 3], np.int32),
            "bool": [True, False, True],
            "float64": np.array([1.1, 2.2, 3.3], np.float64),
            "string": ["Boo", "Boo2", "Boo3"],
            "int16": np.array([1, 2, 3], np.int16),
            "uint32": np.array([1, 2, 3], np.uint32),
            "uint64": np.array([1, 2, 3], np.uint64),
            "float32": np.array([1.1, 2.2, 3.3], np.float32),
            "int64": np.array([1, 2, 3], np.int64),
            "int8": np.array([1, 2, 3], np.int8),
            "binary": [bytes([1, 2, 3]), bytes([4, 5, 6]), bytes([7, 8, 9])],
        }
    )


def expected(i: int) -> TestData:
    n = i + 1
    # float32 columns hold the nearest float32, as Burn's f32 fields do.
    f32 = float(np.float32([1.1, 2.2, 3.3][i]))
    return TestData(n, n != 2, [1.1, 2.2, 3.3][i], ["Boo", "Boo2", "Boo3"][i], n, n, n, f32, n, n,
                    [[1, 2, 3], [4, 5, 6], [7, 8, 9]][i])  # fmt: skip


def test_dataframe_dataset_length() -> None:
    dataset = DataframeDataset(create_test_dataframe(), TestData)
    assert dataset.len() == 3
    assert not dataset.is_empty()


def test_dataframe_dataset_get() -> None:
    dataset = DataframeDataset(create_test_dataframe(), TestData)
    for index in range(3):
        item = dataset.get(index)
        assert item == expected(index)
        assert item is not None and type(item.int32) is int and type(item.float64) is float


def test_dataframe_dataset_out_of_bounds() -> None:
    dataset = DataframeDataset(create_test_dataframe(), TestData)
    assert dataset.get(3) is None
    assert dataset.get(-1) is None


def test_non_existing_struct_fields() -> None:
    @dataclass
    class Missing:
        int32: int
        bool: bool
        non_existent: str

    with pytest.raises(ValueError, match=r"no column \['non_existent'\] for the fields of Missing"):
        DataframeDataset(create_test_dataframe(), Missing)


def test_partial_table() -> None:
    dataset = DataframeDataset(create_test_dataframe(), PartialTestData)
    assert len(dataset) == 3
    assert dataset.get(1) == PartialTestData(2, False, "Boo2")
    assert dataset.get(2) == PartialTestData(3, True, "Boo3")


def test_rows_are_positional_whatever_the_index() -> None:
    frame = create_test_dataframe().iloc[::-1].set_index(pd.Index([30, 10, 20]))
    dataset = DataframeDataset(frame, PartialTestData)
    assert [item.string for item in dataset] == ["Boo3", "Boo2", "Boo"]


def test_missing_values_fill_optional_fields() -> None:
    @dataclass
    class Row:
        count: int | None
        score: float | None
        name: str | None
        plain: float

    frame = pd.DataFrame(
        {
            "count": [1, None, 3],  # becomes float64 with NaN
            "score": [0.5, np.nan, None],
            "name": ["a", None, pd.NA],
            "plain": [np.nan, 1.0, 2.0],
        }
    )
    items = list(DataframeDataset(frame, Row))
    assert [(i.count, i.score, i.name) for i in items] == [(1, 0.5, "a"), (None, None, None), (3, None, None)]
    assert type(items[0].count) is int
    assert np.isnan(items[0].plain)
    nullable = pd.DataFrame({"count": pd.array([4, None], dtype="Int64"), "score": [1.0, 2.0],
                             "name": ["x", "y"], "plain": [0.0, 0.0]})  # fmt: skip
    assert [i.count for i in DataframeDataset(nullable, Row)] == [4, None]


def test_field_defaults_may_lack_a_column() -> None:
    @dataclass
    class Row:
        string: str
        weight: float = 1.0

    assert DataframeDataset(create_test_dataframe(), Row).get(0) == Row("Boo", 1.0)


def test_a_value_of_the_wrong_type_names_row_and_column() -> None:
    @dataclass
    class Row:
        string: int

    dataset = DataframeDataset(create_test_dataframe(), Row)
    with pytest.raises(ValueError, match=r"row 1, column 'string': expected int, found 'Boo2'"):
        dataset.get(1)
    frame = pd.DataFrame({"int32": [1, None]})

    @dataclass
    class Required:
        int32: int

    with pytest.raises(ValueError, match=r"row 1, column 'int32': expected int, found nan"):
        DataframeDataset(frame, Required).get(1)


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(TypeError, match=r"expects a pandas or polars DataFrame, found builtins\.dict"):
        DataframeDataset({"int32": [1]}, PartialTestData)
    with pytest.raises(TypeError, match="item type must be a dataclass"):
        DataframeDataset(create_test_dataframe(), int)
    frame = create_test_dataframe()
    doubled = pd.concat([frame[["int32", "bool", "string"]], frame[["string"]]], axis=1)
    with pytest.raises(ValueError, match=r"several columns named \['string'\]"):
        DataframeDataset(doubled, PartialTestData)


def test_empty_frame() -> None:
    dataset = DataframeDataset(create_test_dataframe().iloc[:0], PartialTestData)
    assert dataset.is_empty() and dataset.get(0) is None and list(dataset) == []


def test_polars_frame() -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(
        {
            "int32": pl.Series([1, 2, 3], dtype=pl.Int32),
            "bool": [True, False, True],
            "float64": [1.1, 2.2, 3.3],
            "string": ["Boo", "Boo2", "Boo3"],
            "int16": pl.Series([1, 2, 3], dtype=pl.Int16),
            "uint32": pl.Series([1, 2, 3], dtype=pl.UInt32),
            "uint64": pl.Series([1, 2, 3], dtype=pl.UInt64),
            "float32": pl.Series([1.1, 2.2, 3.3], dtype=pl.Float32),
            "int64": [1, 2, 3],
            "int8": pl.Series([1, 2, 3], dtype=pl.Int8),
            "binary": [bytes([1, 2, 3]), bytes([4, 5, 6]), bytes([7, 8, 9])],
        }
    )
    dataset = DataframeDataset(frame, TestData)
    assert len(dataset) == 3 and dataset.get(3) is None
    assert [dataset.get(i) for i in range(3)] == [expected(i) for i in range(3)]
