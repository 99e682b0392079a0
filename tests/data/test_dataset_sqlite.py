"""SQLite datasets: SqliteDatasetWriter stores dataclass items, SqliteDataset reads them back lazily."""

from __future__ import annotations

import enum
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum.data.dataset import SqliteDataset, SqliteDatasetWriter, msgpack

from tests.support.burn_interop_sqlite import SPLITS as SQLITE_SPLITS
from tests.support.burn_interop_sqlite import Item as BurnItem
from tests.support.burn_interop_sqlite import item as burn_item


class Kind(enum.Enum):
    CAT = 1
    DOG = 2


@dataclass(frozen=True)
class Inner:
    a: int
    b: list[str]


@dataclass
class Item:
    text: str
    label: int
    weight: float
    ok: bool
    raw: bytes
    note: str | None
    pair: tuple[int, float]
    inner: Inner
    kind: Kind
    image: npt.NDArray[np.uint8]


@dataclass
class Small:
    x: int
    y: float


@dataclass
class SmallWithDefault:
    x: int
    missing: str = "default"


def _item(i: int) -> Item:
    return Item(
        text=f"item {i}",
        label=i,
        weight=i / 4,
        ok=i % 2 == 0,
        raw=bytes([i, 255 - i]),
        note=None if i % 3 else f"note {i}",
        pair=(i, -i / 2),
        inner=Inner(i * 10, ["x"] * (i % 3)),
        kind=Kind.CAT if i % 2 else Kind.DOG,
        image=np.full((2, 3), i, dtype=np.uint8),
    )


def _assert_same(read: Item, expected: Item) -> None:
    np.testing.assert_array_equal(read.image, expected.image)
    assert read.image.dtype == np.uint8
    read.image = expected.image = np.zeros(0, np.uint8)
    assert read == expected


def test_round_trip_of_every_field_kind(tmp_path: Path) -> None:
    path = tmp_path / "items.db"
    with SqliteDatasetWriter(path, Item) as writer:
        writer.write_all("train", [_item(i) for i in range(5)])
        assert writer.write("test", _item(7)) == 0
        assert writer.write("test", _item(8)) == 1
        assert writer.write("train", _item(5)) == 5
    assert SqliteDataset.splits(path) == ["test", "train"]
    with SqliteDataset.from_db_file(path, "train", Item) as train:
        assert len(train) == 6 and train.split == "train"
        for i in range(6):
            read = train.get(i)
            assert read is not None
            _assert_same(read, _item(i))
        assert train.get(6) is None and train.get(-1) is None
    with SqliteDataset.from_db_file(path, "test", Item) as test:
        assert [item.label for item in test] == [7, 8]


def test_file_is_plain_sqlite_with_one_table_per_split(tmp_path: Path) -> None:
    path = tmp_path / "small.db"
    with SqliteDatasetWriter(path, Small) as writer:
        writer.write_all("train", [Small(1, 0.5), Small(2, 1.5)])
        writer.write("valid", Small(3, 2.5))
    with sqlite3.connect(path) as db:
        tables = sorted(name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        assert tables == ["train", "valid"]
        assert db.execute('SELECT row_id, x, y FROM "train" ORDER BY row_id').fetchall() == [
            (1, 1, 0.5),
            (2, 2, 1.5),
        ]
        columns = {row[1]: row[2] for row in db.execute('PRAGMA table_info("train")')}
        assert columns == {"row_id": "INTEGER", "x": "INTEGER", "y": "REAL"}
    db.close()


def test_writes_land_atomically_on_completion(tmp_path: Path) -> None:
    path = tmp_path / "atomic.db"
    writer = SqliteDatasetWriter(path, Small)
    writer.write("train", Small(1, 1.0))
    # the work in progress sits in a private folder beside the target, gone once it lands
    (pending,) = tmp_path.glob(".atomic.db.*.tmp")
    assert not path.exists() and (pending / "atomic.db").exists() and pending.stat().st_mode & 0o077 == 0
    writer.set_completed()
    assert path.exists() and sorted(tmp_path.iterdir()) == [path]
    with pytest.raises(ValueError, match="already completed or closed"):
        writer.write("train", Small(2, 2.0))


def test_error_inside_with_block_discards_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    with pytest.raises(RuntimeError, match="stop"), SqliteDatasetWriter(path, Small) as writer:
        writer.write("train", Small(1, 1.0))
        raise RuntimeError("stop")
    assert not path.exists() and not (tmp_path / "broken.db.tmp").exists()


def test_abandoned_writer_removes_its_temporary_file(tmp_path: Path) -> None:
    writer = SqliteDatasetWriter(tmp_path / "gone.db", Small)
    writer.write("train", Small(1, 1.0))
    del writer
    assert list(tmp_path.iterdir()) == []


def test_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "o.db"
    with SqliteDatasetWriter(path, Small) as writer:
        writer.write("train", Small(1, 1.0))
    with pytest.raises(FileExistsError, match=r"already exists: .*o\.db \(pass overwrite=True\)"):
        SqliteDatasetWriter(path, Small)
    with SqliteDatasetWriter(path, Small, overwrite=True) as writer:
        writer.write("other", Small(2, 2.0))
    assert SqliteDataset.splits(path) == ["other"]


def test_writer_rejects_bad_items_and_names(tmp_path: Path) -> None:
    with SqliteDatasetWriter(tmp_path / "w.db", Small) as writer:
        with pytest.raises(TypeError, match="for Small cannot write a SmallWithDefault to split 'train'"):
            writer.write("train", SmallWithDefault(1))  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="invalid split name ''"):
            writer.write("", Small(1, 1.0))
        with pytest.raises(ValueError, match="invalid split name 'sqlite_x'"):
            writer.write("sqlite_x", Small(1, 1.0))
        with pytest.raises(ValueError, match=r"split 'train': field 'y': expected float, found <object"):
            writer.write("train", Small(1, object()))  # type: ignore[arg-type]
        writer.write('we"ird name', Small(1, 1.0))
    assert SqliteDataset.splits(tmp_path / "w.db") == ['we"ird name']

    @dataclass
    class Reserved:
        row_id: int

    with pytest.raises(ValueError, match="field named 'row_id'"):
        SqliteDatasetWriter(tmp_path / "r.db", Reserved)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        SqliteDatasetWriter(tmp_path / "no" / "dir.db", Small)


def test_values_that_json_cannot_hold_are_rejected_at_write_time(tmp_path: Path) -> None:
    @dataclass
    class Loose:
        meta: Any

    with SqliteDatasetWriter(tmp_path / "loose.db", Loose) as writer:
        writer.write("train", Loose({"k": [1, 2]}))
        with pytest.raises(ValueError, match=r"field 'meta': cannot store <object .*> as JSON for Any"):
            writer.write("train", Loose(object()))
    with SqliteDataset.from_db_file(tmp_path / "loose.db", "train", Loose) as ds:
        assert list(ds) == [Loose({"k": [1, 2]})]


def test_reader_errors_name_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with SqliteDatasetWriter(path, SmallWithDefault) as writer:
        writer.write("train", SmallWithDefault(1, "kept"))
    with pytest.raises(FileNotFoundError, match=r"absent\.db"):
        SqliteDataset.from_db_file(tmp_path / "absent.db", "train", Small)
    assert not (tmp_path / "absent.db").exists()
    with pytest.raises(ValueError, match=r"no split 'test'; the file holds the splits \['train'\]"):
        SqliteDataset.from_db_file(path, "test", Small)
    with pytest.raises(ValueError, match=r"table 'train' lacks the columns \['y'\] of Small"):
        SqliteDataset.from_db_file(path, "train", Small)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ValueError, match="not a readable SQLite database"):
        SqliteDataset.from_db_file(garbage, "train", Small)
    with pytest.raises(TypeError, match="must be a dataclass"):
        SqliteDataset.from_db_file(path, "train", int)


def test_reader_uses_field_defaults_and_ignores_extra_columns(tmp_path: Path) -> None:
    path = tmp_path / "ext.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE train (x INTEGER, extra TEXT)")
        db.executemany("INSERT INTO train VALUES (?, ?)", [(5, "a"), (6, "b")])
    db.close()
    with SqliteDataset.from_db_file(path, "train", SmallWithDefault) as ds:
        assert list(ds) == [SmallWithDefault(5), SmallWithDefault(6)]


def test_reader_handles_tables_with_gaps_in_rowids(tmp_path: Path) -> None:
    path = tmp_path / "gaps.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE train (x INTEGER NOT NULL, y REAL NOT NULL)")
        db.executemany("INSERT INTO train VALUES (?, ?)", [(i, i / 2) for i in range(6)])
        db.execute("DELETE FROM train WHERE x IN (1, 4)")
    db.close()
    with SqliteDataset.from_db_file(path, "train", Small) as ds:
        assert len(ds) == 4
        assert [item.x for item in ds] == [0, 2, 3, 5]
        assert ds.get(3) == Small(5, 2.5) and ds.get(4) is None


def test_reader_reports_values_of_the_wrong_type(tmp_path: Path) -> None:
    path = tmp_path / "typed.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE train (x, y)")
        db.execute("INSERT INTO train VALUES ('seven', 1.0)")
    db.close()
    with (
        SqliteDataset.from_db_file(path, "train", Small) as ds,
        pytest.raises(
            ValueError, match=r"typed.db table 'train' row 0: field 'x': expected int, found 'seven'"
        ),
    ):
        ds.get(0)


def test_reads_are_lazy_and_see_only_committed_rows(tmp_path: Path) -> None:
    path = tmp_path / "lazy.db"
    with SqliteDatasetWriter(path, Small) as writer:
        writer.write_all("train", [Small(i, float(i)) for i in range(100)])
    ds = SqliteDataset.from_db_file(path, "train", Small)
    # The reader fetches row by row: a row changed on disk after opening is seen on the next read.
    with sqlite3.connect(path) as db:
        db.execute('UPDATE "train" SET y = -1 WHERE row_id = 51')
    db.close()
    assert ds.get(50) == Small(50, -1.0)
    ds.close()
    with pytest.raises(ValueError, match="is closed"):
        ds.get(0)


def test_concurrent_reads_from_threads(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    with SqliteDatasetWriter(path, Small) as writer:
        writer.write_all("train", [Small(i, i * 0.5) for i in range(200)])
    failures: list[str] = []
    with SqliteDataset.from_db_file(path, "train", Small) as ds:

        def read(offset: int) -> None:
            for i in range(offset, 200, 4):
                if ds.get(i) != Small(i, i * 0.5):
                    failures.append(f"row {i}")

        threads = [threading.Thread(target=read, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []


def test_concurrent_writes_from_threads(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with SqliteDatasetWriter(path, Small) as writer:

        def write(k: int) -> None:
            for i in range(50):
                writer.write("train", Small(k * 100 + i, 0.0))

        threads = [threading.Thread(target=write, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    with SqliteDataset.from_db_file(path, "train", Small) as ds:
        assert sorted(item.x for item in ds) == sorted(k * 100 + i for k in range(3) for i in range(50))


# Burn's row-serialized form: tests/fixtures/burn/dataset.db was written by Burn's SqliteDatasetWriter
# (interop/burn/src/sqlite.rs); tests/support/burn_interop_sqlite.py holds the same items.
BURN_DB = Path(__file__).resolve().parents[1] / "fixtures" / "burn" / "dataset.db"
BURN_TABLE = "CREATE TABLE train (row_id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, item BLOB NOT NULL)"


@pytest.mark.parametrize("split", sorted(SQLITE_SPLITS))
def test_reads_a_dataset_written_by_burn(split: str) -> None:
    assert sorted(SqliteDataset.splits(BURN_DB)) == sorted(SQLITE_SPLITS)
    with SqliteDataset.from_db_file(BURN_DB, split, BurnItem) as ds:
        assert ds.len() == SQLITE_SPLITS[split]
        assert [ds.get(i) for i in range(ds.len())] == [burn_item(i) for i in range(ds.len())]
        assert ds.get(ds.len()) is None


def test_row_serialized_writer_writes_burns_table_and_blobs(tmp_path: Path) -> None:
    path = tmp_path / "burn.db"
    with SqliteDatasetWriter(path, BurnItem, row_serialized=True) as writer:
        for split, n in SQLITE_SPLITS.items():
            writer.write_all(split, [burn_item(i) for i in range(n)])
    ours, burns = sqlite3.connect(path), sqlite3.connect(BURN_DB)
    try:
        for split in SQLITE_SPLITS:
            info = "SELECT name, type, pk FROM pragma_table_info(?)"
            assert ours.execute(info, (split,)).fetchall() == burns.execute(info, (split,)).fetchall()
            rows = f"SELECT row_id, item FROM {split} ORDER BY row_id"
            # Burn writes f32 fields as float32 and ferrum every float as float64: compare decoded values.
            ours_rows = [(r, msgpack.decode(b)) for r, b in ours.execute(rows)]
            burns_rows = [(r, msgpack.decode(b)) for r, b in burns.execute(rows)]
            assert ours_rows == burns_rows
    finally:
        ours.close()
        burns.close()
    with SqliteDataset.from_db_file(path, "train", BurnItem) as ds:
        assert [ds.get(i) for i in range(ds.len())] == [burn_item(i) for i in range(5)]


def test_row_serialized_round_trip_of_ferrum_fields(tmp_path: Path) -> None:
    path = tmp_path / "items.db"
    with SqliteDatasetWriter(path, Item, row_serialized=True) as writer:
        writer.write_all("train", [_item(i) for i in range(4)])
    with SqliteDataset.from_db_file(path, "train", Item) as ds:
        for i in range(4):
            got = ds.get(i)
            assert got is not None
            _assert_same(got, _item(i))


def test_row_serialized_structs_may_be_maps_or_leave_out_defaulted_fields(tmp_path: Path) -> None:
    path = tmp_path / "named.db"
    connection = sqlite3.connect(path)
    connection.execute(BURN_TABLE)
    blobs = [msgpack.encode({"x": 1, "missing": "given"}), msgpack.encode([2]), msgpack.encode([3, "z"])]
    connection.executemany("INSERT INTO train (item) VALUES (?)", [(b,) for b in blobs])
    connection.commit()
    connection.close()
    with SqliteDataset.from_db_file(path, "train", SmallWithDefault) as ds:
        assert [ds.get(i) for i in range(3)] == [
            SmallWithDefault(1, "given"),
            SmallWithDefault(2),
            SmallWithDefault(3, "z"),
        ]


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"\x93\x01", "truncated"),
        (b"\x92\x01\xcb\x00", "truncated"),
        (b"\xdd\xff\xff\xff\xff", "container of 4294967295 entries"),
        (b"\x92\x01\x02\x03", "left over"),
        (b"\xd4\x01\x02", "unsupported marker 0xd4"),
        (b"\x92\xa3x\xff\xfe\x01", "not valid UTF-8"),
        (b"\x91" * 200 + b"\x01", "nested deeper"),
        (b"\x93\x01\x02\x03", "expected 2 fields for Small"),
        (b"\x92\xa1a\x02", "expected int"),
        (b"\x81\xa1y\x01", r"missing fields \['x'\]"),
    ],
)
def test_row_serialized_reader_names_bad_blobs(tmp_path: Path, blob: bytes, message: str) -> None:
    path = tmp_path / "bad.db"
    connection = sqlite3.connect(path)
    connection.execute(BURN_TABLE)
    connection.execute("INSERT INTO train (item) VALUES (?)", (blob,))
    connection.commit()
    connection.close()
    with SqliteDataset.from_db_file(path, "train", Small) as ds:
        with pytest.raises(ValueError, match=message) as info:
            ds.get(0)
    assert "row 0" in str(info.value)


def test_msgpack_integers_and_lengths_take_every_form() -> None:
    values: list[Any] = [0, 127, 128, 255, 256, 65535, 65536, 2**32, 2**64 - 1, -1, -32, -33, -128, -129]
    values += [-(2**15) - 1, -(2**31) - 1, -(2**63), "x" * 31, "x" * 32, "x" * 300, "x" * 70000]
    values += [b"", b"y" * 300, list(range(15)), list(range(16)), {str(i): i for i in range(16)}, 1.5, None]
    for value in values:
        assert msgpack.decode(msgpack.encode(value)) == value
    # Burn's f32 fields arrive as float32 (0xca).
    assert msgpack.decode(b"\xca\x3e\x80\x00\x00") == 0.25
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        msgpack.encode(2**64)
    with pytest.raises(TypeError, match="cannot encode a set"):
        msgpack.encode({1})


def test_row_serialized_writer_refuses_an_item_field(tmp_path: Path) -> None:
    @dataclass
    class HasItem:
        item: bytes

    with pytest.raises(ValueError, match="field named 'item'"):
        SqliteDatasetWriter(tmp_path / "x.db", HasItem, row_serialized=True)
