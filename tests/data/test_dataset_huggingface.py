"""HuggingfaceDatasetLoader: local parquet, CSV, JSON, image folders and save_to_disk folders as typed items.

Every test writes its data with pyarrow, the csv/json modules or Pillow into tmp_path, loads it
through the datasets package (no hub access) and checks the items against what was written.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

datasets = pytest.importorskip("datasets")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from ferrum.data.dataloader import Batcher, DataLoaderBuilder  # noqa: E402
from ferrum.data.dataset import (  # noqa: E402
    HuggingfaceDataset,
    HuggingfaceDatasetError,
    HuggingfaceDatasetLoader,
)

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Inner:
    a: int
    b: str


@dataclass
class Row:
    label: int
    score: float
    name: str
    blob: bytes
    xy: F32
    values: npt.NDArray[np.int64]
    nest: Inner
    nest_a: int
    maybe: float | None
    tags: list[str]


LABELS = [3, 1, 4, 1, 5]
SCORES = [0.5, -1.25, 2.0, 3.5, 1e-3]
NAMES = ["alpha", "beta", "gamma", "delta", "epsilon"]
BLOBS = [b"\x00\x01", b"", b"\xff" * 3, b"abc", b"\x10"]
XY = [[float(i), float(i) + 0.5] for i in range(5)]
VALUES = [[1], [2, 3], [], [4, 5, 6], [7]]
NEST = [{"a": i * 10, "b": f"n{i}"} for i in range(5)]
MAYBE = [1.5, None, 2.5, None, 0.0]
TAGS = [["x"], [], ["y", "z"], ["w"], []]


def _table() -> Any:
    return pa.table(
        {
            "label": pa.array(LABELS, pa.int64()),
            "score": pa.array(SCORES, pa.float64()),
            "name": NAMES,
            "blob": pa.array(BLOBS, pa.binary()),
            "xy": pa.array(XY, pa.list_(pa.float32(), 2)),
            "values": pa.array(VALUES, pa.list_(pa.int64())),
            "nest": NEST,
            "maybe": pa.array(MAYBE, pa.float64()),
            "tags": TAGS,
            "unused": ["u"] * 5,
        }
    )


def _loader(name: str | Path, tmp_path: Path) -> HuggingfaceDatasetLoader:
    return HuggingfaceDatasetLoader.new(name).with_huggingface_cache_dir(tmp_path / "hf-cache")


def _check_rows(rows: HuggingfaceDataset[Row]) -> None:
    assert len(rows) == 5
    for i, row in enumerate(rows):
        assert row.label == LABELS[i] and type(row.label) is int
        assert row.score == SCORES[i] and type(row.score) is float
        assert row.name == NAMES[i]
        assert row.blob == BLOBS[i]
        np.testing.assert_array_equal(row.xy, np.array(XY[i], np.float32))
        assert row.xy.dtype == np.float32
        np.testing.assert_array_equal(row.values, np.array(VALUES[i], np.int64))
        assert row.nest == Inner(i * 10, f"n{i}")
        assert row.nest_a == i * 10
        assert row.maybe == MAYBE[i]
        assert row.tags == TAGS[i]
    assert rows.get(5) is None and rows.get(-1) is None


def test_parquet_rows_become_typed_items(tmp_path: Path) -> None:
    pq.write_table(_table(), tmp_path / "train.parquet")
    rows = _loader("parquet", tmp_path).with_data_files(str(tmp_path / "train.parquet")).dataset("train", Row)
    _check_rows(rows)
    assert {"nest_a", "nest_b", "unused"} <= set(rows.column_names)


def test_numeric_columns_are_views_of_the_arrow_buffers(tmp_path: Path) -> None:
    pq.write_table(_table(), tmp_path / "train.parquet")
    rows = _loader("parquet", tmp_path).with_data_files(str(tmp_path / "train.parquet")).dataset("train", Row)
    arrow = rows._table  # the table datasets memory-mapped from its cache file
    label_chunk = arrow.column("label").chunk(0)
    labels = rows.column("label")
    np.testing.assert_array_equal(labels, LABELS)
    assert labels.ctypes.data == label_chunk.buffers()[1].address + label_chunk.offset * 8
    assert not labels.flags.writeable
    xy = rows.column("xy")
    assert xy.shape == (5, 2) and xy.dtype == np.float32
    np.testing.assert_array_equal(xy, np.array(XY, np.float32))
    xy_values = arrow.column("xy").chunk(0).flatten()
    assert xy.ctypes.data == xy_values.buffers()[1].address + xy_values.offset * 4
    # An item's array field is a row of that same buffer, not a copy.
    item = rows.get(3)
    assert item is not None and item.xy.ctypes.data == xy.ctypes.data + 3 * 2 * 4
    # A column with nulls is copied, NaN where the value is missing.
    maybe = rows.column("maybe")
    np.testing.assert_array_equal(maybe, [1.5, np.nan, 2.5, np.nan, 0.0])
    assert rows.column("name").tolist() == NAMES


def test_items_read_through_the_dataloader_in_worker_threads(tmp_path: Path) -> None:
    pq.write_table(_table(), tmp_path / "train.parquet")
    rows = _loader("parquet", tmp_path).with_data_files(str(tmp_path / "train.parquet")).dataset("train", Row)

    class Labels(Batcher[Row, list[int]]):
        def batch(self, items: list[Row]) -> list[int]:
            return [item.label for item in items]

    loader = DataLoaderBuilder(Labels()).batch_size(2).num_workers(2).build(rows)
    assert [label for b in loader for label in b] == LABELS


@dataclass
class CsvRow:
    id: int
    text: str
    weight: float
    flag: bool


def test_csv_files_per_split(tmp_path: Path) -> None:
    written: dict[str, list[tuple[int, str, float, bool]]] = {
        "train": [(1, "one", 0.25, True), (2, "two, with a comma", 1.5, False), (3, "three", -2.0, True)],
        "test": [(9, "nine", 9.75, False)],
    }
    for split, records in written.items():
        with (tmp_path / f"{split}.csv").open("w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(["id", "text", "weight", "flag"])
            writer.writerows(records)
    loader = _loader("csv", tmp_path).with_data_files(
        {split: str(tmp_path / f"{split}.csv") for split in written}
    )
    assert sorted(loader.splits()) == ["test", "train"]
    for split, records in written.items():
        got = list(loader.dataset(split, CsvRow))
        assert got == [CsvRow(*record) for record in records]


@dataclass
class JsonRow:
    question: str
    answers: list[str]
    scores: npt.NDArray[np.float64]
    meta: dict[str, int]


def test_json_lines(tmp_path: Path) -> None:
    records = [
        {"question": "why?", "answers": ["because"], "scores": [0.5, 0.25], "meta": {"n": 1}},
        {"question": "how?", "answers": ["so", "thus"], "scores": [1.0], "meta": {"n": 2}},
    ]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    got = list(_loader("json", tmp_path).with_data_files(str(path)).dataset("train", JsonRow))
    assert [g.question for g in got] == ["why?", "how?"]
    assert [g.answers for g in got] == [["because"], ["so", "thus"]]
    assert [g.scores.tolist() for g in got] == [[0.5, 0.25], [1.0]]
    assert [g.meta for g in got] == [{"n": 1}, {"n": 2}]


@dataclass
class ImageItem:
    image_bytes: bytes
    image_path: str
    label: int


@dataclass
class NamedImage:
    image_bytes: bytes
    label: str


def _image_folder(root: Path) -> dict[str, tuple[int, str, np.ndarray[Any, Any]]]:
    from PIL import Image

    written = {}
    for label, name in enumerate(["cat", "dog"]):
        (root / name).mkdir(parents=True)
        for i in range(2):
            pixels = np.full((3, 4, 3), 40 * i + 100 * label, np.uint8)
            pixels[0, 0] = (i, label, 7)
            path = root / name / f"{i}.png"
            Image.fromarray(pixels).save(path)
            written[path.name + name] = (label, name, pixels)
    return written


def test_image_folder_gives_the_encoded_files_and_labels(tmp_path: Path) -> None:
    from PIL import Image

    written = _image_folder(tmp_path / "images")
    loader = _loader("imagefolder", tmp_path).with_huggingface_data_dir(str(tmp_path / "images"))
    items = list(loader.dataset("train", ImageItem))
    assert len(items) == 4
    for item in items:
        path = Path(item.image_path)
        label, _, pixels = written[path.name + path.parent.name]
        assert item.label == label
        assert item.image_bytes == path.read_bytes()  # the file, not decoded
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(item.image_bytes))), pixels)
    named = list(loader.dataset("train", NamedImage))
    assert sorted(n.label for n in named) == ["cat", "cat", "dog", "dog"]


def test_save_to_disk_folders(tmp_path: Path) -> None:
    splits = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict({"id": [1, 2, 3], "text": ["a", "b", "c"]}),
            "validation": datasets.Dataset.from_dict({"id": [7], "text": ["z"]}),
        }
    )
    splits.save_to_disk(str(tmp_path / "saved"))
    loader = HuggingfaceDatasetLoader.new(tmp_path / "saved")
    assert sorted(loader.splits()) == ["train", "validation"]

    @dataclass
    class Text:
        id: int
        text: str

    assert list(loader.dataset("validation", Text)) == [Text(7, "z")]
    assert list(loader.dataset("train", Text)) == [Text(1, "a"), Text(2, "b"), Text(3, "c")]
    # A single saved Dataset answers to its split's name.
    single = datasets.Dataset.from_dict({"id": [5], "text": ["e"]}, split="test")
    single.save_to_disk(str(tmp_path / "single"))
    assert list(HuggingfaceDatasetLoader.new(tmp_path / "single").dataset("test", Text)) == [Text(5, "e")]


def test_base_dir_keeps_an_imported_copy(tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("id,text\n1,a\n2,b\n")

    @dataclass
    class Text:
        id: int
        text: str

    loader = _loader("csv", tmp_path).with_data_files(str(source)).with_base_dir(tmp_path / "base")
    assert loader.dataset_dir() == tmp_path / "base" / "csv"
    assert list(loader.dataset("train", Text)) == [Text(1, "a"), Text(2, "b")]
    assert (tmp_path / "base" / "csv" / "dataset_dict.json").is_file()
    # The copy is read from now on, whatever became of the source (as Burn reuses its SQLite file).
    source.unlink()
    again = HuggingfaceDatasetLoader.new("csv").with_data_files(str(source)).with_base_dir(tmp_path / "base")
    assert list(again.dataset("train", Text)) == [Text(1, "a"), Text(2, "b")]
    subset = HuggingfaceDatasetLoader.new("org/name").with_subset("en").with_base_dir(tmp_path / "base")
    assert subset.dataset_dir() == tmp_path / "base" / "org_name-en"


def test_a_shuffled_dataset_is_read_in_its_order() -> None:
    data = datasets.Dataset.from_dict({"id": list(range(10))}).shuffle(seed=3)

    @dataclass
    class Id:
        id: int

    assert [item.id for item in HuggingfaceDataset(data, Id)] == data["id"]


# ---- errors


def test_a_field_without_a_column_names_it_and_the_columns(tmp_path: Path) -> None:
    @dataclass
    class Wrong:
        label: int
        missing: str

    data = datasets.Dataset.from_dict({"label": [1], "text": ["t"]})
    expected = r"field 'missing' of Wrong has no column.*columns found: label, text"
    with pytest.raises(ValueError, match=expected):
        HuggingfaceDataset(data, Wrong)

    @dataclass
    class Optional:
        label: int
        missing: str = "default"

    assert HuggingfaceDataset(data, Optional).get(0) == Optional(1, "default")


def test_a_field_of_the_wrong_type_is_refused_before_reading() -> None:
    @dataclass
    class Wrong:
        text: int

    data = datasets.Dataset.from_dict({"text": ["not a number"]})
    with pytest.raises(ValueError, match=r"field 'text' of Wrong is int, which needs integers.*holds string"):
        HuggingfaceDataset(data, Wrong)


def test_a_null_in_a_required_field_names_the_row() -> None:
    @dataclass
    class Score:
        score: float

    data = datasets.Dataset.from_dict({"score": [1.0, None]})
    dataset = HuggingfaceDataset(data, Score)
    assert dataset.get(0) == Score(1.0)
    with pytest.raises(ValueError, match=r"field 'score' of Score \(row 1\): expected float, found null"):
        dataset.get(1)


def test_an_unknown_split_names_the_splits(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text("id\n1\n")
    loader = _loader("csv", tmp_path).with_data_files(str(tmp_path / "rows.csv"))
    with pytest.raises(ValueError, match=r"no split 'test'; its splits: train"):
        loader.dataset("test", Row)


def test_unreadable_sources_raise_a_loader_error(tmp_path: Path) -> None:
    loader = _loader("parquet", tmp_path).with_data_files(str(tmp_path / "absent.parquet"))
    with pytest.raises(HuggingfaceDatasetError, match=r"datasets could not load 'parquet'.*absent.parquet"):
        loader.splits()


def test_bad_builder_arguments() -> None:
    with pytest.raises(ValueError, match="needs a dataset name"):
        HuggingfaceDatasetLoader.new("")
    with pytest.raises(ValueError, match="with_subset needs a non-empty string"):
        HuggingfaceDatasetLoader.new("x").with_subset("")
    with pytest.raises(ValueError, match="with_data_files needs a path or a list of paths"):
        HuggingfaceDatasetLoader.new("x").with_data_files([])
    with pytest.raises(TypeError, match=r"reads a datasets\.Dataset"):
        HuggingfaceDataset({"a": [1]}, Row)
    with pytest.raises(TypeError, match="item type must be a dataclass"):
        HuggingfaceDataset(datasets.Dataset.from_dict({"a": [1]}), dict)


def test_missing_datasets_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(ImportError, match=r"pip install 'ferrum-dl\[huggingface\]'"):
        HuggingfaceDatasetLoader.new("csv").splits()
