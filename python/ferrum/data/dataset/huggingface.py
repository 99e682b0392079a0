"""``HuggingfaceDatasetLoader``: datasets of the Hugging Face ``datasets`` package as typed ferrum datasets.

Burn's loader of the same name runs ``datasets`` in a Python subprocess and
imports every split into an SQLite file; here ``datasets`` runs in-process
and the items are read straight from its Arrow tables (memory-mapped from
its cache), so nothing is converted up front. Install the extra with
``pip install 'ferrum-dl[huggingface]'``.

Columns map to the item dataclass's fields by name, with Burn's naming: a
struct column ``image`` (an ``Image`` or ``Audio`` feature) is also reachable
as ``image_bytes`` and ``image_path``; media are never decoded (an
``image_bytes`` field gets the encoded file: PNG, JPEG, ...).

What is copied: a numeric column without nulls read as a NumPy array
(``HuggingfaceDataset.column``, or an ``np.ndarray`` field of an item holding
a list of numbers) is a read-only view of the Arrow buffer. Booleans
(bit-packed in Arrow), columns with nulls, a dtype other than the column's,
and a whole column spread over several Arrow chunks are copied; strings,
bytes, structs and Python lists are built per item.

Example:
    >>> import dataclasses, json, pathlib, tempfile
    >>> from ferrum.data.dataset import HuggingfaceDatasetLoader
    >>> @dataclasses.dataclass
    ... class Review:
    ...     text: str
    ...     stars: int
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "reviews.jsonl"
    >>> rows = [{"text": "good", "stars": 5}, {"text": "bad", "stars": 1}]
    >>> _ = path.write_text("\\n".join(json.dumps(row) for row in rows))
    >>> train = HuggingfaceDatasetLoader.new("json").with_data_files(str(path)).dataset("train", Review)
    >>> len(train), train.get(1)
    (2, Review(text='bad', stars=1))
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import os
import re
import shutil
import tempfile
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

import numpy as np
import numpy.typing as npt
from typing_extensions import Self

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.dataclass_rows import FieldSpec, convert_value, item_fields, type_name

__all__ = ["HuggingfaceDataset", "HuggingfaceDatasetError", "HuggingfaceDatasetLoader"]

T = TypeVar("T")

INSTALL_HINT = "pip install 'ferrum-dl[huggingface]'"
DataFiles = str | Sequence[str] | Mapping[str, str | Sequence[str]]
_NONE_TYPE = type(None)
# What datasets.save_to_disk leaves in its folder: a DatasetDict or a single Dataset.
_SAVED_DICT = "dataset_dict.json"
_SAVED_SPLIT = "state.json"


class HuggingfaceDatasetError(Exception):
    """``datasets`` could not load or import a dataset (Burn's ``ImporterError``)."""


def _modules() -> tuple[Any, Any]:
    """The ``datasets`` and ``pyarrow`` modules, or an ``ImportError`` saying how to install them."""
    try:
        import datasets
        import pyarrow
    except ImportError as err:
        raise ImportError(
            f"HuggingfaceDatasetLoader needs the datasets package ({err.name} is missing): {INSTALL_HINT}"
        ) from err
    return datasets, pyarrow


class HuggingfaceDatasetLoader:
    """Loads a dataset with ``datasets`` and gives its splits as typed datasets (Burn's builder).

    ``name`` is what ``datasets.load_dataset`` takes: a builder of local
    files (``"parquet"``, ``"csv"``, ``"json"``, ``"imagefolder"``, ... with
    ``with_data_files`` or ``with_huggingface_data_dir``), a folder of data
    files, or a dataset of the Hub (which needs network access). A folder
    written by ``datasets.Dataset.save_to_disk`` (or ``DatasetDict``'s) is read
    with ``load_from_disk``. Every split is loaded on the first ``dataset``
    call and kept for the next.

    Example:
        >>> import dataclasses, pathlib, tempfile
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: float
        ...     label: int
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.csv"
        >>> _ = path.write_text("x,label\\n0.5,1\\n1.5,0\\n")
        >>> loader = HuggingfaceDatasetLoader.new("csv").with_data_files({"test": str(path)})
        >>> loader.splits(), loader.dataset("test", Row).get(0)
        (['test'], Row(x=0.5, label=1))
    """

    def __init__(self, name: str | os.PathLike[str]) -> None:
        self.name = os.fspath(name)
        if not self.name:
            raise ValueError("HuggingfaceDatasetLoader needs a dataset name, a builder or a folder, found ''")
        self.subset: str | None = None
        self.data_files: DataFiles | None = None
        self.base_dir: Path | None = None
        self.huggingface_token: str | None = None
        self.huggingface_cache_dir: Path | None = None
        self.huggingface_data_dir: str | None = None
        self._loaded: dict[str, Any] | None = None

    @staticmethod
    def new(name: str | os.PathLike[str]) -> HuggingfaceDatasetLoader:
        """A loader of dataset ``name`` (Burn's ``HuggingfaceDatasetLoader::new``)."""
        return HuggingfaceDatasetLoader(name)

    def with_subset(self, subset: str) -> Self:
        """The dataset's configuration (``load_dataset(name, subset)``), for datasets that have several."""
        self.subset = _text("with_subset", subset)
        return self._changed()

    def with_data_files(self, data_files: DataFiles) -> Self:
        """The local files to read (``load_dataset(..., data_files=...)``).

        A path or a list of paths (one ``"train"`` split), or a mapping of split names to paths.
        """
        if isinstance(data_files, (str, os.PathLike)):
            self.data_files = os.fspath(data_files)
        elif isinstance(data_files, Mapping):
            self.data_files = {
                _text("with_data_files split", k): _paths(v) for k, v in data_files.items()
            }
        else:
            self.data_files = _paths(data_files)
        return self._changed()

    def with_base_dir(self, base_dir: str | os.PathLike[str]) -> Self:
        """Keep an imported copy of the dataset under ``base_dir`` (Burn's ``with_base_dir``).

        The first load writes every split to ``<base_dir>/<name>[-<subset>]``
        (``save_to_disk``); later loads read that copy and do not run
        ``datasets``' builders again, as Burn reuses its SQLite file. Delete
        the folder to import again. Without it, ``datasets``' own cache is read.
        """
        self.base_dir = Path(base_dir)
        return self._changed()

    def with_huggingface_token(self, token: str) -> Self:
        """The Hub token for datasets behind authentication."""
        self.huggingface_token = _text("with_huggingface_token", token)
        return self._changed()

    def with_huggingface_cache_dir(self, cache_dir: str | os.PathLike[str]) -> Self:
        """Where ``datasets`` caches downloads and Arrow files (default ``~/.cache/huggingface/datasets``)."""
        self.huggingface_cache_dir = Path(cache_dir)
        return self._changed()

    def with_huggingface_data_dir(self, data_dir: str) -> Self:
        """The ``data_dir`` of ``load_dataset``: a folder of data files (e.g. an ``imagefolder``'s root)."""
        self.huggingface_data_dir = os.fspath(data_dir)
        return self._changed()

    def dataset_dir(self) -> Path | None:
        """The folder of the imported copy under ``base_dir`` (Burn's ``db_file``); ``None`` without one."""
        if self.base_dir is None:
            return None
        name = _sanitize(self.name)
        return self.base_dir / (f"{name}-{_sanitize(self.subset)}" if self.subset else name)

    def splits(self) -> list[str]:
        """The names of the loaded dataset's splits."""
        return list(self._load())

    def dataset(self, split: str, item_type: type[T]) -> HuggingfaceDataset[T]:
        """Split ``split`` with each row as an ``item_type`` (a dataclass whose fields name columns).

        Raises ``ValueError`` for a split that is not there (naming the splits
        found) and for fields without a column or of a type the column cannot
        give (naming the field and the columns found).
        """
        loaded = self._load()
        if split not in loaded:
            raise ValueError(
                f"dataset {self.name!r} has no split {split!r}; its splits: {', '.join(sorted(loaded))}"
            )
        return HuggingfaceDataset(loaded[split], item_type, name=f"{self.name}[{split}]")

    def _changed(self) -> Self:
        self._loaded = None
        return self

    def _load(self) -> dict[str, Any]:
        if self._loaded is None:
            datasets, _ = _modules()
            target = self.dataset_dir()
            if target is not None and not _is_saved(target):
                _save(self._load_source(datasets), target, datasets)
            self._loaded = self._load_source(datasets) if target is None else _from_disk(datasets, target)
        return self._loaded

    def _load_source(self, datasets: Any) -> dict[str, Any]:
        if _is_saved(Path(self.name)):
            return _from_disk(datasets, Path(self.name))
        try:
            loaded = datasets.load_dataset(
                self.name,
                self.subset,
                data_files=self.data_files,
                data_dir=self.huggingface_data_dir,
                cache_dir=None if self.huggingface_cache_dir is None else str(self.huggingface_cache_dir),
                token=self.huggingface_token,
            )
        except Exception as err:
            raise HuggingfaceDatasetError(
                f"datasets could not load {self._description()}: {type(err).__name__}: {err}"
            ) from err
        return dict(loaded)

    def _description(self) -> str:
        parts = [repr(self.name)]
        if self.subset is not None:
            parts.append(f"subset {self.subset!r}")
        if self.data_files is not None:
            parts.append(f"data_files {self.data_files!r}")
        if self.huggingface_data_dir is not None:
            parts.append(f"data_dir {self.huggingface_data_dir!r}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"HuggingfaceDatasetLoader({self._description()})"


class HuggingfaceDataset(Dataset[T]):
    """The rows of one split of a ``datasets.Dataset``, as items of a dataclass.

    Reads from the Arrow table that backs ``data`` (memory-mapped when
    ``datasets`` loaded it from files), one row per ``get``; safe to read
    from the data loader's worker threads. A dataset that went through
    ``select``, ``shuffle`` or ``filter`` is flattened (copied) once first.
    Columns that are not fields are ignored.

    Example:
        >>> import dataclasses
        >>> import datasets
        >>> import numpy as np
        >>> from ferrum.data.dataset import HuggingfaceDataset
        >>> @dataclasses.dataclass
        ... class Point:
        ...     xy: np.ndarray[tuple[int], np.dtype[np.float32]]
        ...     label: int
        >>> rows = {"xy": [[1.0, 2.0], [3.0, 4.0]], "label": [0, 1]}
        >>> features = datasets.Features(
        ...     {
        ...         "xy": datasets.Sequence(datasets.Value("float32"), length=2),
        ...         "label": datasets.Value("int64"),
        ...     }
        ... )
        >>> points = HuggingfaceDataset(datasets.Dataset.from_dict(rows, features=features), Point)
        >>> points.get(1).xy, points.column("xy").shape
        (array([3., 4.], dtype=float32), (2, 2))
    """

    def __init__(self, data: Any, item_type: type[T], *, name: str | None = None) -> None:
        datasets, pyarrow = _modules()
        if not isinstance(data, datasets.Dataset):
            raise TypeError(
                f"HuggingfaceDataset reads a datasets.Dataset (one split), found {type(data).__name__}"
            )
        if getattr(data, "_indices", None) is not None:
            # select/shuffle/filter keep an index mapping over the table: resolve it once.
            data = data.flatten_indices()
        self.name = name or (str(data.split) if data.split is not None else "dataset")
        self.item_type = item_type
        self.features: Mapping[str, Any] = data.features
        self._table = data.data.table
        self._fields = item_fields(item_type)
        self._columns = _columns(self._table, data.features, pyarrow)
        self._readers = [self._reader(spec, pyarrow, datasets) for spec in self._fields]

    @property
    def column_names(self) -> list[str]:
        """Every name a field can read: the columns and, for struct columns, ``<column>_<child>``."""
        return list(self._columns)

    def get(self, index: int) -> T | None:
        """The item of row ``index`` (``None`` outside ``[0, len)``)."""
        if not 0 <= index < self._table.num_rows:
            return None
        kwargs = {name: read(index) for name, read in self._readers if read is not None}
        return self.item_type(**kwargs)

    def len(self) -> int:
        """The number of rows."""
        return int(self._table.num_rows)

    def column(self, name: str) -> npt.NDArray[Any]:
        """Column ``name`` as a NumPy array: shape ``[rows]``, or ``[rows, d1, ...]`` for fixed-size lists.

        A read-only view of the Arrow buffer when the column is numeric, has
        no nulls and sits in one chunk; a copy otherwise (strings and bytes
        come as an object array).

        Example:
            >>> import dataclasses
            >>> import datasets
            >>> from ferrum import Tensor
            >>> from ferrum.backend import NdArray
            >>> @dataclasses.dataclass
            ... class Value:
            ...     v: float
            >>> ds = HuggingfaceDataset(datasets.Dataset.from_dict({"v": [1.5, 2.5]}), Value)
            >>> ds.column("v").flags.writeable  # a view of the Arrow buffer
            False
            >>> Tensor.from_numpy(ds.column("v"), NdArray.device()).to_data().to_list()  # the tensor copies
            [1.5, 2.5]
        """
        if name not in self._columns:
            raise KeyError(f"{self.name} has no column {name!r}; its columns: {', '.join(self._columns)}")
        column = self._columns[name].column
        shape, _ = _fixed_shape(column.type)
        if column.num_chunks == 1:
            array = _numpy_view(column.chunk(0))
            if array is not None:
                return array
        combined = column.combine_chunks() if column.num_chunks else None
        if combined is None:
            return np.empty((0, *shape))
        flat = _numpy_view(combined)
        if flat is not None:
            return flat
        return np.asarray(combined.to_numpy(zero_copy_only=False))

    def _reader(
        self, spec: FieldSpec, pyarrow: Any, datasets: Any
    ) -> tuple[str, Callable[[int], Any] | None]:
        found = self._columns.get(spec.name)
        where = f"{self.name}: field {spec.name!r} of {self.item_type.__name__}"
        if found is None:
            if spec.required:
                raise ValueError(
                    f"{where} has no column of that name; the columns found: {', '.join(self._columns)}"
                )
            return spec.name, None
        hint = spec.hint
        _check_type(hint, found, where, pyarrow, datasets)
        return spec.name, _ColumnReader(found, hint, where, pyarrow, datasets)


def _check_type(hint: Any, found: _Column, where: str, pyarrow: Any, datasets: Any) -> None:
    """A scalar field whose column holds another kind of value is refused before any row is read."""
    inner = _non_optional(hint)
    types_ = pyarrow.types
    arrow = found.column.type
    if isinstance(found.feature, datasets.ClassLabel) and inner is str:
        return  # the label's name
    accepts: dict[Any, tuple[str, Callable[[Any], bool]]] = {
        int: ("integers", types_.is_integer),
        float: ("numbers", lambda t: types_.is_integer(t) or types_.is_floating(t)),
        bool: ("booleans", types_.is_boolean),
        str: ("strings", lambda t: types_.is_string(t) or types_.is_large_string(t)),
        bytes: ("bytes", lambda t: types_.is_binary(t) or types_.is_large_binary(t)),
    }
    if inner in accepts:
        what, test = accepts[inner]
        if not test(arrow):
            raise ValueError(
                f"{where} is {type_name(hint)}, which needs {what}, but column {found.name!r} holds {arrow}"
            )


def _non_optional(hint: Any) -> Any:
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        args = [a for a in get_args(hint) if a is not _NONE_TYPE]
        if len(args) == 1:
            return args[0]
    return hint


@dataclasses.dataclass(frozen=True)
class _Column:
    name: str
    column: Any  # pyarrow.ChunkedArray
    feature: Any  # the datasets feature (None for a struct's child without one)
    media_path: Any = None  # for <media>_bytes: the sibling path column, read when bytes are null


def _columns(table: Any, features: Mapping[str, Any], pyarrow: Any) -> dict[str, _Column]:
    """Every column by name, with struct children as ``<parent>_<child>`` (Burn's flattening)."""
    found: dict[str, _Column] = {}

    def add(name: str, column: Any, feature: Any) -> None:
        found.setdefault(name, _Column(name, column, feature))
        if not pyarrow.types.is_struct(column.type):
            return
        children = column.flatten()
        names = [column.type.field(i).name for i in range(column.type.num_fields)]
        sub = feature if isinstance(feature, Mapping) else {}
        for child_name, child in zip(names, children, strict=True):
            add(f"{name}_{child_name}".replace(".", "_"), child, sub.get(child_name))
        if set(names) == {"bytes", "path"}:
            # datasets' Image and Audio store local files as a path with no bytes.
            key = f"{name}_bytes".replace(".", "_")
            found[key] = dataclasses.replace(found[key], media_path=children[names.index("path")])

    for name in table.column_names:
        add(name, table.column(name), features.get(name))
    return found


class _ColumnReader:
    """Reads one field's value from its column, row by row (NumPy views where the layout allows)."""

    def __init__(self, found: _Column, hint: Any, where: str, pyarrow: Any, datasets: Any) -> None:
        self.found = found
        self.hint = hint
        self.where = where
        column = found.column
        self.chunks = list(column.chunks)
        self.starts = list(np.cumsum([0] + [len(c) for c in self.chunks[:-1]]))
        self.paths = list(found.media_path.chunks) if found.media_path is not None else None
        self.names: list[str] | None = (
            list(found.feature.names)
            if isinstance(found.feature, datasets.ClassLabel) and _non_optional(hint) is str
            else None
        )
        self.array_dtype = _array_dtype(hint)
        self.wants_array = hint is np.ndarray or get_origin(hint) is np.ndarray
        # Per chunk: the NumPy view of its values (None where the layout needs Python objects).
        self.views: list[Any] = [self._view(chunk, pyarrow) for chunk in self.chunks]

    def _view(self, chunk: Any, pyarrow: Any) -> Any:
        if chunk.null_count:
            return None
        types_ = pyarrow.types
        if self.wants_array:
            shape, base = _fixed_shape(chunk.type)
            if types_.is_list(base) or types_.is_large_list(base):
                values = chunk.values if not shape else None
                if values is not None and values.null_count == 0:
                    inner_shape, _ = _fixed_shape(values.type)
                    flat = _numpy_view(values)
                    if flat is not None:
                        return ("list", np.asarray(chunk.offsets.to_numpy()), flat, inner_shape)
                return None
            view = _numpy_view(chunk)
            return None if view is None or not shape else ("fixed", view)
        if self.names is None and (types_.is_integer(chunk.type) or types_.is_floating(chunk.type)):
            return ("scalar", chunk.to_numpy(zero_copy_only=True))
        return None

    def __call__(self, index: int) -> Any:
        at = bisect.bisect_right(self.starts, index) - 1
        row = index - self.starts[at]
        view = self.views[at]
        if view is not None:
            kind = view[0]
            if kind == "scalar":
                return convert_value(view[1][row], self.hint, self.where)
            if kind == "fixed":
                return self._array(view[1][row])
            offsets, flat, inner_shape = view[1], view[2], view[3]
            return self._array(flat[offsets[row] : offsets[row + 1]].reshape(-1, *inner_shape))
        value = self.chunks[at][row].as_py()
        if value is None and self.paths is not None:
            value = self._media_bytes(self.paths[at][row].as_py(), index)
        if self.names is not None and isinstance(value, int):
            if not 0 <= value < len(self.names):
                raise ValueError(f"{self.where}: row {index}: label {value} outside {len(self.names)} names")
            return self.names[value]
        return convert_value(value, self.hint, f"{self.where} (row {index})")

    def _array(self, view: npt.NDArray[Any]) -> npt.NDArray[Any]:
        if self.array_dtype is not None and view.dtype != self.array_dtype:
            return view.astype(self.array_dtype)  # a copy: the field asks for another dtype
        return view

    def _media_bytes(self, path: str | None, index: int) -> bytes | None:
        if path is None:
            return None
        try:
            return Path(path).read_bytes()
        except OSError as err:
            raise OSError(
                f"{self.where} (row {index}): the file {path} of column {self.found.name!r} "
                f"cannot be read: {err.strerror or err}"
            ) from err


def _array_dtype(hint: Any) -> np.dtype[Any] | None:
    args = get_args(_non_optional(hint))
    if len(args) == 2 and get_args(args[1]):
        candidate = get_args(args[1])[0]
        if isinstance(candidate, type) and issubclass(candidate, np.generic):
            return np.dtype(candidate)
    return None


def _fixed_shape(arrow_type: Any) -> tuple[tuple[int, ...], Any]:
    """The dimensions of nested fixed-size lists and the type inside them."""
    shape: list[int] = []
    while getattr(arrow_type, "list_size", None) is not None and hasattr(arrow_type, "value_type"):
        shape.append(int(arrow_type.list_size))
        arrow_type = arrow_type.value_type
    return tuple(shape), arrow_type


def _numpy_view(array: Any) -> npt.NDArray[Any] | None:
    """A zero-copy NumPy view of a numeric Arrow array (fixed-size lists reshaped), or ``None``."""
    shape: list[int] = []
    rows = len(array)
    while getattr(array.type, "list_size", None) is not None:
        if array.null_count:
            return None
        shape.append(int(array.type.list_size))
        array = array.flatten()  # the slice's values: zero-copy
    if array.null_count:
        return None
    try:
        flat = array.to_numpy(zero_copy_only=True)
    except Exception:  # pyarrow's ArrowInvalid: strings, booleans, nested lists
        return None
    return np.asarray(flat).reshape(rows, *shape)


def _is_saved(path: Path) -> bool:
    return (path / _SAVED_DICT).is_file() or (path / _SAVED_SPLIT).is_file()


def _from_disk(datasets: Any, path: Path) -> dict[str, Any]:
    try:
        loaded = datasets.load_from_disk(str(path))
    except Exception as err:
        raise HuggingfaceDatasetError(
            f"datasets could not read the saved dataset {path}: {type(err).__name__}: {err}"
        ) from err
    if isinstance(loaded, datasets.Dataset):
        # A single saved Dataset answers to its split's name (train when it was never given one).
        return {str(loaded.split) if loaded.split is not None else "train": loaded}
    return dict(loaded)


def _save(splits: dict[str, Any], target: Path, datasets: Any) -> None:
    """Write ``splits`` to ``target`` as a ``DatasetDict`` folder, whole or not at all."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        datasets.DatasetDict(splits).save_to_disk(str(partial))
        if target.exists():
            shutil.rmtree(target)  # a copy cut short earlier (no dataset_dict.json)
        partial.rename(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _sanitize(name: str) -> str:
    """A file name from a dataset name: path separators and other awkward characters become ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "_"


def _text(setting: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{setting} needs a non-empty string, found {value!r}")
    return value


def _paths(value: object) -> str | list[str]:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, Sequence) and value and all(isinstance(v, (str, os.PathLike)) for v in value):
        return [os.fspath(v) for v in value]
    raise ValueError(f"with_data_files needs a path or a list of paths, found {json.dumps(repr(value))}")
